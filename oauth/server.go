// The authorization server assembled: keys, grants, client metadata documents, login pages and
// personal access tokens behind the endpoints of DESIGN.md ("Protocol surface").

package oauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/cimd"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/login"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// Defaults of Config.
const (
	DefaultAccessTokenTTL       = time.Hour
	DefaultRegistrationsPerHour = 20
	DefaultUsername             = "owner"
	// maxRegistrationBody bounds a registration request (SECURITY.md AS-29).
	maxRegistrationBody = 16 << 10
	// maxTokenBody bounds a token or revocation request.
	maxTokenBody = 16 << 10
	// MinPlainPassword is the shortest plain-text Config.Password New accepts.
	MinPlainPassword = 12
	// gcEvery is how often abandoned clients, expired codes and dead families are removed.
	gcEvery = time.Hour
	// closeEvery is how often sealed refresh-token successors whose grace window has passed
	// are dropped from the file (grant.Store.CloseWindows; a read when there is none).
	closeEvery = time.Minute
)

// BucketOwner holds the owner's generated password hash when none is configured, and the login
// throttling state.
const BucketOwner = "oauth_owner"

var (
	keyPasswordHash = []byte("password_hash")
	keyThrottle     = []byte("login_throttle")
)

// Config configures a Server.
type Config struct {
	// PublicURL is the origin clients reach the server at, e.g. https://mem.example.com: the
	// issuer, and with /mcp the resource. Required.
	PublicURL string
	// DB is the one file. Required.
	DB *kv.DB
	// Username is the owner's login name. If empty, DefaultUsername.
	Username string
	// Password is the owner's password: an argon2id PHC string (ownsona hash-password), a bcrypt
	// hash, or plain text of at least MinPlainPassword characters. If empty, the hash stored in the file is used; on a first start
	// without one a password is generated, its hash stored, and GeneratedPassword returns it.
	Password string
	// AccessTokenTTL is the lifetime of access tokens. If zero, DefaultAccessTokenTTL; at most
	// token.MaxAccessTokenTTL.
	AccessTokenTTL time.Duration
	// CustomSchemes are the private-use redirect URI schemes without a dot that registration
	// accepts. If nil, policy.DefaultCustomSchemes.
	CustomSchemes []string
	// RedirectHosts, when not empty, is an allowlist of https redirect hosts for registration
	// (SECURITY.md AS-04, opt-in); loopback and custom-scheme redirects are not affected.
	RedirectHosts []string
	// MetadataHosts are the hosts whose client ID metadata documents are fetched. If nil,
	// cimd.DefaultAllowedHosts.
	MetadataHosts []string
	// Resolver resolves metadata document hosts (tests). If nil, net.DefaultResolver.
	Resolver cimd.Resolver
	// RegistrationsPerHour limits registrations per client IP. If zero,
	// DefaultRegistrationsPerHour; negative turns the limit off.
	RegistrationsPerHour int
	// MaxClients caps registered clients. If zero, grant.DefaultMaxClients.
	MaxClients int
	// RefreshGrace is the grace window of refresh-token rotation: a rotated refresh token
	// presented again this soon after its rotation, while its successor is unused, gets that
	// same successor (and a fresh access token) rather than revoking the family, so clients
	// that race a refresh (two egress addresses, several processes) all keep a working token
	// (SECURITY.md AS-12, AS-13; package grant). If zero, grant.DefaultGraceWindow (5 min); at
	// most grant.MaxGraceWindow (30 min); negative turns it off (every replay revokes).
	RefreshGrace time.Duration
	// ClientIP is the address a request is throttled by. If nil, the host of RemoteAddr.
	ClientIP func(r *http.Request) string
	// Compat are the compatibility modes at start; SetCompat changes them. The zero value is
	// none.
	Compat Compat
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Log receives one line per notable event; never a token, code, password or cookie.
	Log zerolog.Logger
	// OnSignIn, when set, is told how each check of the owner's password ended, at the login
	// page or through CheckOwner: "ok", "wrong_credentials", "throttled" or "busy" (package
	// login's SignIn words). For metrics; it must not block.
	OnSignIn func(result string)
}

// documentFetcher fetches and checks client ID metadata documents: a *cimd.Fetcher (tests put a
// stand-in here to sign in as a metadata-document client without a network).
type documentFetcher interface {
	Fetch(ctx context.Context, clientID string) (*cimd.Document, error)
}

// Server is ownsona's OAuth 2.1 authorization server and the bearer check of its resource
// server. It is safe for concurrent use.
type Server struct {
	cfg       Config
	ep        Endpoints
	now       func() time.Time
	log       zerolog.Logger
	ttl       time.Duration
	username  string
	generated string

	keys     *token.Keys
	grants   *grant.Store
	pats     *PATs
	docs     documentFetcher
	pages    *login.Handler
	verifier *login.Verifier // the owner's password, for the login pages and CheckOwner
	throttle *login.Throttle // its state is saved in the file (gc, Close) and restored by New
	regs     *rateLimiter

	names    sync.Map      // client_id → display name, for Principal.Name
	verified verifiedCache // access tokens already verified
	compat   atomic.Pointer[compatState]

	stop chan struct{}
	done chan struct{}
}

// New opens the authorization server's state in cfg.DB (generating signing keys, and the owner's
// password when none is configured, on a first start).
func New(cfg Config) (*Server, error) {
	ep, err := NewEndpoints(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	if cfg.DB == nil {
		return nil, errors.New("oauth: no database")
	}
	s := &Server{cfg: cfg, ep: ep, now: cfg.Now, log: cfg.Log, ttl: cfg.AccessTokenTTL, username: cfg.Username}
	s.SetCompat(cfg.Compat)
	if s.now == nil {
		s.now = time.Now
	}
	if s.username == "" {
		s.username = DefaultUsername
	}
	switch {
	case s.ttl == 0:
		s.ttl = DefaultAccessTokenTTL
	case s.ttl < time.Minute || s.ttl > token.MaxAccessTokenTTL:
		return nil, fmt.Errorf("access token lifetime %s is outside 1m..%s", s.ttl, token.MaxAccessTokenTTL)
	}
	if s.cfg.CustomSchemes == nil {
		s.cfg.CustomSchemes = policy.DefaultCustomSchemes
	}
	if s.cfg.ClientIP == nil {
		s.cfg.ClientIP = remoteIP
	}
	if s.keys, err = token.OpenKeys(cfg.DB, s.now); err != nil {
		return nil, err
	}
	if s.grants, err = grant.Open(cfg.DB, grant.Config{Now: s.now, MaxClients: cfg.MaxClients,
		GraceWindow: cfg.RefreshGrace, VerifyPKCE: policy.VerifyPKCE}); err != nil {
		return nil, err
	}
	if s.pats, err = OpenPATs(cfg.DB, s.now); err != nil {
		return nil, err
	}
	if s.docs, err = cimd.NewFetcher(cimd.Config{AllowedHosts: cfg.MetadataHosts, Resolver: cfg.Resolver, Now: s.now, CustomSchemes: s.cfg.CustomSchemes}); err != nil {
		return nil, err
	}
	secret := cfg.Password
	if secret == "" {
		if secret, s.generated, err = ownerPassword(cfg.DB); err != nil {
			return nil, err
		}
	}
	v, warn, err := login.NewVerifier(s.username, secret)
	if err != nil {
		return nil, fmt.Errorf("login password: %w", err)
	}
	if n := utf8.RuneCountInString(secret); warn == login.PlainTextWarning && n < MinPlainPassword {
		// A short password in plain text is one an attacker can try from anywhere: refuse to
		// start rather than warn (a hash is the owner's deliberate choice and stays accepted).
		return nil, fmt.Errorf("login password: OWNSONA_LOGIN_PASSWORD is plain text of %d characters; use at least %d, or the argon2id hash of a password from 'ownsona hash-password'", n, MinPlainPassword)
	}
	if warn != "" {
		s.log.Warn().Msg(warn)
	}
	s.throttle = login.NewThrottle(s.now)
	s.loadThrottle()
	s.verifier = v
	s.pages, err = login.New(login.Config{Verifier: v, Complete: s.complete, Secure: strings.HasPrefix(ep.Issuer, "https://"),
		DB: cfg.DB, Throttle: s.throttle, ClientIP: s.cfg.ClientIP, Now: s.now, Log: s.log, OnSignIn: cfg.OnSignIn})
	if err != nil {
		return nil, err
	}
	perHour := cfg.RegistrationsPerHour
	if perHour == 0 {
		perHour = DefaultRegistrationsPerHour
	}
	s.regs = newRateLimiter(perHour, time.Hour, s.now)
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go s.gcLoop()
	return s, nil
}

// Close stops the background garbage collection. The database stays open (it is the caller's).
func (s *Server) Close() {
	if s == nil || s.stop == nil {
		return
	}
	select {
	case <-s.stop:
	default:
		close(s.stop)
		<-s.done
		s.saveThrottle()
	}
}

// loadThrottle restores the login throttling state a previous run saved; a damaged record is
// logged and ignored (it only ever makes logins easier).
func (s *Server) loadThrottle() {
	var saved []byte
	_ = s.cfg.DB.View(func(tx *kv.Tx) error {
		if b := tx.Bucket(BucketOwner); b != nil {
			saved = bytes.Clone(b.Get(keyThrottle))
		}
		return nil
	})
	if saved == nil {
		return
	}
	if err := s.throttle.UnmarshalJSON(saved); err != nil {
		s.log.Warn().Err(err).Msg("saved login throttling state ignored")
	}
}

// saveThrottle keeps the login throttling state in the file, so a restart does not reset it.
func (s *Server) saveThrottle() {
	buf, err := s.throttle.MarshalJSON()
	if err == nil {
		err = s.cfg.DB.Update(func(tx *kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(BucketOwner)
			if err != nil {
				return err
			}
			return b.Put(keyThrottle, buf)
		})
	}
	if err != nil {
		s.log.Error().Err(err).Msg("saving the login throttling state failed")
	}
}

// Endpoints are the server's public URLs.
func (s *Server) Endpoints() Endpoints { return s.ep }

// Username is the owner's login name.
func (s *Server) Username() string { return s.username }

// GeneratedPassword is the password generated on this start because none was configured or
// stored, or "" when none was. Show it to the owner once; only its hash is kept.
func (s *Server) GeneratedPassword() string { return s.generated }

// Keys are the signing keys (for `ownsona keys rotate` and tests).
func (s *Server) Keys() *token.Keys { return s.keys }

// Grants are the clients, codes and grants (for the command line and tests).
func (s *Server) Grants() *grant.Store { return s.grants }

// PATs are the personal access tokens.
func (s *Server) PATs() *PATs { return s.pats }

// Routes mounts the authorization server's endpoints, its pages and the discovery documents.
func (s *Server) Routes(mux *http.ServeMux) {
	meta := serveMetadata(func() metadataDocs { return s.compat.Load().docs })
	for _, p := range MetadataPaths() {
		mux.Handle(p, meta)
	}
	mux.HandleFunc("/oauth/register", s.register)
	mux.HandleFunc("/oauth/authorize", s.authorize)
	mux.HandleFunc("/oauth/token", s.token)
	mux.HandleFunc("/oauth/revoke", s.revoke)
	mux.HandleFunc("/oauth/jwks.json", s.jwks)
	for _, p := range []string{login.PathLogin, login.PathConsent, login.PathContinue, login.PathLogout} {
		mux.Handle(p, s.pages)
	}
}

func (s *Server) gcLoop() {
	defer close(s.done)
	t := time.NewTicker(gcEvery)
	defer t.Stop()
	windows := time.NewTicker(closeEvery)
	defer windows.Stop()
	s.gc()
	for {
		select {
		case <-s.stop:
			return
		case <-windows.C:
			if _, err := s.grants.CloseWindows(s.now()); err != nil {
				s.log.Error().Err(err).Msg("closing refresh grace windows failed")
			}
		case <-t.C:
			s.gc()
		}
	}
}

func (s *Server) gc() {
	s.saveThrottle()
	st, err := s.grants.GC(s.now())
	if err != nil {
		s.log.Error().Err(err).Msg("oauth garbage collection failed")
		return
	}
	if st.Windows = 0; st != (grant.GCStats{}) { // closed windows are routine, not news
		s.log.Info().Int("clients", st.Clients).Int("codes", st.Codes).Int("grants", st.Grants).
			Int("refresh_tokens", st.RefreshTokens).Int("events", st.Events).Msg("oauth records removed")
	}
}

// ownerPassword returns the stored password hash, or generates a password, stores its hash and
// returns both.
func ownerPassword(db *kv.DB) (hash, generated string, err error) {
	err = db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(BucketOwner)
		if err != nil {
			return err
		}
		if v := b.Get(keyPasswordHash); v != nil {
			hash = string(v)
			return nil
		}
		generated = login.GeneratePassword()
		if hash, err = login.HashPassword(generated); err != nil {
			return err
		}
		return b.Put(keyPasswordHash, []byte(hash))
	})
	if err != nil {
		return "", "", fmt.Errorf("owner password: %w", err)
	}
	return hash, generated, nil
}

// ResetOwnerPassword removes the stored generated password hash, so that the next start without
// OWNSONA_LOGIN_PASSWORD generates a new one.
func ResetOwnerPassword(db *kv.DB) error {
	return db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(BucketOwner)
		if err != nil {
			return err
		}
		return b.Delete(keyPasswordHash)
	})
}

// SetOwnerPassword stores hash (an argon2id PHC string from login.HashPassword, or a bcrypt
// hash) as the owner's password in place of the stored or generated one, for `ownsona password
// set`. A plain-text password or a malformed hash is refused. New reads it once: a running
// Server keeps the password it started with until it is started again (or told through
// ReplaceOwnerPassword), and Config.Password (OWNSONA_LOGIN_PASSWORD), when set, wins over it.
func SetOwnerPassword(db *kv.DB, hash string) error {
	if _, warn, err := login.NewVerifier(DefaultUsername, hash); err != nil || warn != "" {
		return errors.New("set owner password: not an argon2id or bcrypt hash")
	}
	return db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(BucketOwner)
		if err != nil {
			return err
		}
		return b.Put(keyPasswordHash, []byte(hash))
	})
}

// ErrPasswordConfigured is ReplaceOwnerPassword's answer when Config.Password
// (OWNSONA_LOGIN_PASSWORD) was set: the new hash is kept in the file, but the
// configured password stays in force.
var ErrPasswordConfigured = errors.New("OWNSONA_LOGIN_PASSWORD is set for this server and wins over the stored password")

// ReplaceOwnerPassword stores hash (as SetOwnerPassword does) and makes this
// running server check sign-ins — its login page and CheckOwner (the
// console's) — against it at once, for `ownsona password set` through the
// admin socket. Sign-ins already being checked finish against the old one.
// With Config.Password set, it stores the hash and returns
// ErrPasswordConfigured. It is safe for concurrent use.
func (s *Server) ReplaceOwnerPassword(hash string) error {
	if err := SetOwnerPassword(s.cfg.DB, hash); err != nil {
		return err
	}
	if s.cfg.Password != "" {
		return ErrPasswordConfigured
	}
	if err := s.verifier.SetHash(hash); err != nil {
		return fmt.Errorf("replace owner password: %w", err)
	}
	s.log.Info().Msg("the owner's password was changed; sign-ins use the new one")
	return nil
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// rateLimiter is a fixed-window counter per key, bounded in size.
type rateLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	now    func() time.Time
	seen   map[string]*window
}

type window struct {
	start time.Time
	n     int
}

const maxLimiterKeys = 10000

func newRateLimiter(limit int, per time.Duration, now func() time.Time) *rateLimiter {
	return &rateLimiter{limit: limit, window: per, now: now, seen: map[string]*window{}}
}

// allow counts one event for the address ip and reports whether it is within the limit, and if
// not, how long until it would be. An IPv6 address counts by its /64, which one host commonly
// holds whole. When the table is full of live windows the oldest one is dropped, so that a flood
// of addresses can only ever make the limit looser, never refuse everyone else.
func (l *rateLimiter) allow(ip string) (bool, time.Duration) {
	if l.limit < 0 {
		return true, 0
	}
	key := limiterKey(ip)
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	w := l.seen[key]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.seen) >= maxLimiterKeys {
			l.evict(now)
		}
		w = &window{start: now}
		l.seen[key] = w
	}
	if w.n >= l.limit {
		return false, w.start.Add(l.window).Sub(now)
	}
	w.n++
	return true, 0
}

// evict removes the windows that have ended, or else the oldest one.
func (l *rateLimiter) evict(now time.Time) {
	var oldest string
	for k, w := range l.seen {
		if now.Sub(w.start) >= l.window {
			delete(l.seen, k)
		} else if oldest == "" || w.start.Before(l.seen[oldest].start) {
			oldest = k
		}
	}
	if len(l.seen) >= maxLimiterKeys {
		delete(l.seen, oldest)
	}
}

// limiterKey is an address's key: IPv4 as is, IPv6 by its /64.
func limiterKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	if a = a.Unmap().WithZone(""); a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// contextKey is unexported so that no other package can set a Principal.
type contextKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// PrincipalFrom returns the Principal of an authenticated request, if any.
func PrincipalFrom(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(contextKey{}).(*Principal)
	return p, ok && p != nil
}
