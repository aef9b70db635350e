package login

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"sync"
	"time"
)

// Request is an authorization request that the authorization server has
// validated (client, redirect URI, PKCE, scope, resource) and that waits for
// the owner's login and consent. The pages carry it in a signed transaction
// token (see txn); the forms cannot change it.
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

// Limits of the in-memory store. Both grow only after a right password.
const (
	maxSessions = 100  // login sessions (one owner, a few browsers)
	maxDecided  = 1000 // transactions decided within their lifetime
)

// store keeps the login sessions and the ids of the transactions already
// decided, both in memory with an expiry. A restart forgets them: the owner
// logs in again, and a decided transaction cannot be replayed since its
// consent token names a session that no longer exists. Session ids are kept
// only as SHA-256 digests. Nothing is stored for a transaction until its
// consent POST, which only a live session can make, so an anonymous flood of
// sign-in starts cannot fill the store.
type store struct {
	now        func() time.Time
	sessionTTL time.Duration

	mu       sync.Mutex
	sessions map[string]time.Time // digest → expiry
	decided  map[string]time.Time // transaction id → the transaction's expiry
}

func newStore(now func() time.Time, sessionTTL time.Duration) *store {
	return &store{now: now, sessionTTL: sessionTTL,
		sessions: make(map[string]time.Time), decided: make(map[string]time.Time)}
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

// isDecided reports whether transaction id has been decided.
func (s *store) isDecided(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.decided[id]
	return ok
}

// decide records transaction id, which lives until expires, as decided. It
// reports false when it already was (a replay, or two POSTs at once), and
// full when the store holds maxDecided live transactions (then nothing is
// recorded: forgetting one would let it be replayed).
func (s *store) decide(id string, expires time.Time) (ok, full bool) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.decided[id]; dup {
		return false, false
	}
	if len(s.decided) >= maxDecided {
		for k, exp := range s.decided {
			if !now.Before(exp) {
				delete(s.decided, k)
			}
		}
		if len(s.decided) >= maxDecided {
			return false, true
		}
	}
	s.decided[id] = expires
	return true, false
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

// endSession ends the session with digest d.
func (s *store) endSession(d string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sessions, d)
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
