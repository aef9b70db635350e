package console

// The console's own session: a cookie of 256 random bits, kept server-side (in memory) by its
// SHA-256 digest, with an idle and an absolute timeout, and a CSRF token of its own that every
// POST must carry.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Cookie names: with the __Host- prefix when the public URL is https (the browser then holds
// them only for this host, path /, over https), without it on plain-http loopback, where a
// browser refuses a __Host- cookie.
const (
	CookieSecure       = "__Host-ownsona_console"
	CookiePlain        = "ownsona_console"
	signinCookieSecure = "__Host-ownsona_console_signin"
	signinCookiePlain  = "ownsona_console_signin"
)

// maxSessions bounds the sessions kept; past it, signing in ends the least recently used.
// Only a right password adds one.
const maxSessions = 20

// signinTTL is how long a sign-in form may stay open.
const signinTTL = time.Hour

// session is one signed-in browser. id and csrf never change; the other fields are guarded by
// sessions.mu.
type session struct {
	digest  string // hex SHA-256 of the cookie value: the map key
	csrf    string
	created time.Time
	seen    time.Time
	flash   []flash
	token   *newToken // a personal access token just created, shown once
}

// newToken is a personal access token to show once, with its name.
type newToken struct{ Name, Token string }

type sessions struct {
	now          func() time.Time
	idle, maxAge time.Duration

	mu sync.Mutex
	m  map[string]*session
}

func newSessions(now func() time.Time, idle, maxAge time.Duration) *sessions {
	return &sessions{now: now, idle: idle, maxAge: maxAge, m: map[string]*session{}}
}

// start begins a session after a right password, ending the one whose cookie value is old (a
// new id at every sign-in: no fixation), and returns the new cookie value.
func (s *sessions) start(old string) (string, *session) {
	value := base64.RawURLEncoding.EncodeToString(randomBytes(32))
	now := s.now()
	sess := &session{digest: digest(value), csrf: base64.RawURLEncoding.EncodeToString(randomBytes(32)), created: now, seen: now}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, digest(old))
	for k, v := range s.m {
		if s.expired(v, now) {
			delete(s.m, k)
		}
	}
	for len(s.m) >= maxSessions {
		var oldest *session
		for _, v := range s.m {
			if oldest == nil || v.seen.Before(oldest.seen) {
				oldest = v
			}
		}
		delete(s.m, oldest.digest)
	}
	s.m[sess.digest] = sess
	return value, sess
}

// get returns the live session of the cookie value and marks it used now; nil when there is
// none, it ended or it timed out (an expired one is forgotten).
func (s *sessions) get(value string) *session {
	if value == "" {
		return nil
	}
	d := digest(value)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	sess := s.m[d]
	if sess == nil {
		return nil
	}
	if s.expired(sess, now) {
		delete(s.m, d)
		return nil
	}
	sess.seen = now
	return sess
}

func (s *sessions) expired(sess *session, now time.Time) bool {
	return now.Sub(sess.seen) >= s.idle || now.Sub(sess.created) >= s.maxAge
}

// end forgets the session of the cookie value.
func (s *sessions) end(value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, digest(value))
}

// maxFlash bounds the messages kept for a session's next page: forms posted without a page
// between them (scripts) keep only the latest.
const maxFlash = 8

// addFlash keeps a message for the session's next page.
func (s *sessions) addFlash(sess *session, f flash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(sess.flash) >= maxFlash {
		sess.flash = sess.flash[1:]
	}
	sess.flash = append(sess.flash, f)
}

// takeFlash returns and forgets the session's messages.
func (s *sessions) takeFlash(sess *session) []flash {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := sess.flash
	sess.flash = nil
	return f
}

// takeToken returns and forgets the personal access token created last, if any: it is shown
// once.
func (s *sessions) takeToken(sess *session) *newToken {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := sess.token
	sess.token = nil
	return t
}

func (s *sessions) setToken(sess *session, t *newToken) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess.token = t
}

func digest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return b
}

// secure reports whether the public URL is https: the cookies are then Secure and __Host-.
func (c *Console) secure() bool {
	return strings.HasPrefix(c.cfg.Auth().Endpoints().Issuer, "https://")
}

func (c *Console) cookieName() string {
	if c.secure() {
		return CookieSecure
	}
	return CookiePlain
}

func (c *Console) signinCookieName() string {
	if c.secure() {
		return signinCookieSecure
	}
	return signinCookiePlain
}

// cookie is a console cookie: host-only, path /, HttpOnly, SameSite=Strict, Secure over https.
// A negative ttl deletes it.
func (c *Console) cookie(name, value string, ttl time.Duration) *http.Cookie {
	maxAge := -1
	if ttl >= 0 {
		maxAge = int(ttl / time.Second)
	}
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, Secure: c.secure(),
		HttpOnly: true, SameSite: http.SameSiteStrictMode}
}

// session returns r's live session, and whether r carried a session cookie at all (to tell a
// session that ended from none).
func (c *Console) session(r *http.Request) (sess *session, hadCookie bool) {
	ck, err := r.Cookie(c.cookieName())
	if err != nil || ck.Value == "" {
		return nil, false
	}
	return c.sessions.get(ck.Value), true
}

// signinToken is the sign-in form's CSRF token for the nonce in the browser's sign-in cookie:
// the form and the cookie must come together, and only this process can make the pair.
func (c *Console) signinToken(nonce string) string {
	m := hmac.New(sha256.New, c.signKey)
	m.Write([]byte("console signin\x00" + nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkSigninToken reports whether tok is the sign-in token of r's sign-in cookie.
func (c *Console) checkSigninToken(r *http.Request, tok string) bool {
	ck, err := r.Cookie(c.signinCookieName())
	if err != nil || ck.Value == "" || tok == "" {
		return false
	}
	return hmac.Equal([]byte(tok), []byte(c.signinToken(ck.Value)))
}

// checkCSRF reports whether tok is the session's CSRF token.
func checkCSRF(sess *session, tok string) bool {
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(sess.csrf)) == 1
}
