package login

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"sync"
	"time"
)

// Request is an authorization request that the authorization server has
// validated (client, redirect URI, PKCE, scope, resource) and that waits for
// the owner's login and consent. It lives server-side under a transaction
// id; the forms carry only that id and a CSRF token.
type Request struct {
	ClientID string
	// ClientName is the client's self-declared name, shown escaped and
	// stripped of control and bidi characters. If empty, the page says "An
	// unnamed app".
	ClientName    string
	RedirectURI   string   // the redirect URI of this request, already matched against the registration
	Scope         []string // the granted scopes if the owner allows
	State         string
	CodeChallenge string
	Resource      string
}

// Limits of the in-memory store.
const (
	maxTxns     = 1000 // pending transactions; beyond, the soonest to expire is dropped
	maxSessions = 100  // login sessions (one owner, a few browsers)
)

// txn is a pending authorization transaction.
type txn struct {
	req     Request
	csrf    string
	expires time.Time
	session string // digest of the session it belongs to; "" until the owner logs in or is seen logged in
	flash   string // a message for the next rendering of the login page
}

// store keeps transactions and sessions in memory, both with a TTL. A
// restart forgets them: pending logins start again from the client, and the
// owner logs in again. Session ids are kept only as SHA-256 digests.
type store struct {
	now        func() time.Time
	txnTTL     time.Duration
	sessionTTL time.Duration

	mu       sync.Mutex
	txns     map[string]*txn
	sessions map[string]time.Time // digest → expiry
}

func newStore(now func() time.Time, txnTTL, sessionTTL time.Duration) *store {
	return &store{now: now, txnTTL: txnTTL, sessionTTL: sessionTTL,
		txns: make(map[string]*txn), sessions: make(map[string]time.Time)}
}

// newSecret returns 256 random bits, base64url-encoded.
func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func digest(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

// create stores req under a new transaction id.
func (s *store) create(req Request) (id string) {
	now := s.now()
	t := &txn{req: req, csrf: newSecret(), expires: now.Add(s.txnTTL)}
	t.req.Scope = slices.Clone(req.Scope)
	id = newSecret()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.txns) >= maxTxns {
		evict(s.txns, now, func(t *txn) time.Time { return t.expires })
	}
	s.txns[id] = t
	return id
}

// get returns a copy of the live transaction id, or false.
func (s *store) get(id string) (txn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txns[id]
	if !ok || !s.now().Before(t.expires) {
		delete(s.txns, id)
		return txn{}, false
	}
	return *t, true
}

// checkCSRF reports whether id is a live transaction whose CSRF token is
// token, and returns it.
func (s *store) checkCSRF(id, token string) (txn, bool) {
	t, ok := s.get(id)
	if !ok || token == "" || subtle.ConstantTimeCompare([]byte(t.csrf), []byte(token)) != 1 {
		return txn{}, false
	}
	return t, true
}

// bind ties transaction id to the session with digest sess and gives it a
// fresh CSRF token, unless it is already tied to that session. It reports
// false when the transaction is gone or, unless force (a login has just
// proved the owner), belongs to another session.
func (s *store) bind(id, sess string, force bool) (txn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txns[id]
	if !ok || !s.now().Before(t.expires) {
		delete(s.txns, id)
		return txn{}, false
	}
	switch {
	case t.session == sess:
	case t.session == "" || force:
		t.session = sess
		t.csrf = newSecret()
	default:
		return txn{}, false
	}
	return *t, true
}

// setFlash sets the message the next login page of id shows.
func (s *store) setFlash(id, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.txns[id]; ok {
		t.flash = msg
	}
}

// takeFlash returns and clears the flash message of id.
func (s *store) takeFlash(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txns[id]
	if !ok {
		return ""
	}
	msg := t.flash
	t.flash = ""
	return msg
}

// take removes transaction id if it is live, carries the CSRF token token
// and belongs to the session with digest sess, and returns it. A
// transaction is decided at most once.
func (s *store) take(id, token, sess string) (Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.txns[id]
	if !ok || !s.now().Before(t.expires) {
		delete(s.txns, id)
		return Request{}, false
	}
	if token == "" || subtle.ConstantTimeCompare([]byte(t.csrf), []byte(token)) != 1 ||
		sess == "" || t.session != sess {
		return Request{}, false
	}
	delete(s.txns, id)
	return t.req, true
}

// newSession starts a session, ending old (a session id from the request's
// cookie, possibly ""), and returns the new session id.
func (s *store) newSession(old string) string {
	now := s.now()
	id := newSecret()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old != "" {
		delete(s.sessions, digest(old))
	}
	if len(s.sessions) >= maxSessions {
		evict(s.sessions, now, func(exp time.Time) time.Time { return exp })
	}
	s.sessions[digest(id)] = now.Add(s.sessionTTL)
	return id
}

// session returns the digest of session id if it is live, or "".
func (s *store) session(id string) string {
	if id == "" {
		return ""
	}
	d := digest(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.sessions[d]
	if !ok {
		return ""
	}
	if !s.now().Before(exp) {
		delete(s.sessions, d)
		return ""
	}
	return d
}

// evict removes the expired entries of m and, if none had expired, the one
// that expires soonest.
func evict[V any](m map[string]V, now time.Time, expires func(V) time.Time) {
	var soonest string
	var first time.Time
	removed := false
	for k, v := range m {
		exp := expires(v)
		if !now.Before(exp) {
			delete(m, k)
			removed = true
			continue
		}
		if soonest == "" || exp.Before(first) {
			soonest, first = k, exp
		}
	}
	if !removed && soonest != "" {
		delete(m, soonest)
	}
}
