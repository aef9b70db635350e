package grant

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Buckets of the database file that the Store owns.
const (
	BucketClients = "oauth_clients" // client_id → client record
	BucketCodes   = "oauth_codes"   // SHA-256 of the code → code record
	BucketGrants  = "oauth_grants"  // grant id → grant (refresh-token family) record
	BucketRefresh = "oauth_refresh" // SHA-256 of the refresh token → token record
	BucketAudit   = "oauth_audit"   // kv.Key(sequence) → Event
)

// Limits and defaults. See Config for the ones that can be changed.
const (
	DefaultCodeTTL     = 60 * time.Second
	MaxCodeTTL         = 10 * time.Minute
	DefaultRefreshIdle = 30 * 24 * time.Hour
	DefaultRefreshMax  = 90 * 24 * time.Hour
	DefaultMaxClients  = 500

	// DefaultGraceWindow is how long a just-rotated refresh token may be
	// replayed for its successor (AS-13). Servers in the field settled on
	// 30 s to 30 min (klai 30 s, Dokploy 5 min, Linear 30 min); Claude.ai
	// refreshes from two egress addresses and Claude Code's sessions each
	// refresh on their own, seconds to minutes apart (fastmcp#4264,
	// claude-code#85236). Five minutes covers those races and keeps the time
	// a stolen rotated token is worth short.
	DefaultGraceWindow = 5 * time.Minute
	// MaxGraceWindow bounds Config.GraceWindow: the longest window in the
	// field (Linear's).
	MaxGraceWindow = 30 * time.Minute

	// MaxReplays is how many replays of one rotation are answered inside
	// its grace window (AS-13): enough for ten racing processes and more.
	// Further replays fail with ErrInvalidGrant and leave the family alone.
	MaxReplays = 20

	// UnauthorizedClientTTL: GC removes a client that has not been authorized
	// this long after its registration (AS-29). A person signs in within
	// minutes of their client registering; registrations that never lead to a
	// sign-in are what a flood leaves behind.
	UnauthorizedClientTTL = 15 * time.Minute
	// UnusedClientTTL: GC removes a client unused for this long (AS-29).
	UnusedClientTTL = 90 * 24 * time.Hour
	// Retention is how long GC keeps records that can no longer be used
	// (expired codes, revoked or expired families) before deleting them: a
	// replayed code is still detected (AS-06) and the file still shows a
	// revoked family for a day. It also outlasts every access token a
	// family's grant id may be in (token.RetireAfter is 24h1m).
	Retention = 25 * time.Hour
	// MaxEvents is how many audit events GC keeps (the newest).
	MaxEvents = 10000
)

// Errors returned by the Store as they are (never wrapped), so errors.Is and
// == both work. Any other error is internal: log it and answer server_error.
var (
	// ErrInvalidGrant: the code is unknown, expired, already used (a replay,
	// which also revokes the family the first exchange created), issued to
	// another client, redirect URI or resource, or the PKCE verifier does not
	// match; or the refresh token is unknown, revoked, expired (idle or family
	// age), issued to another client, or a rotated one presented again outside
	// the grace window or once its successor was used (which revokes its
	// family), or replayed more than MaxReplays times. Answer 400
	// invalid_grant.
	ErrInvalidGrant = errors.New("invalid grant")
	// ErrInvalidScope: a refresh asked for a scope the grant does not hold.
	// Answer 400 invalid_scope.
	ErrInvalidScope = errors.New("scope exceeds the grant")
	// ErrInvalidTarget: a refresh named another resource than the grant's.
	// Answer 400 invalid_target (RFC 8707).
	ErrInvalidTarget = errors.New("resource differs from the grant's")
	// ErrInvalidClient: the client_id names no registered client (never
	// registered, deleted, or removed by GC). Answer 401 invalid_client so
	// that the connector registers again.
	ErrInvalidClient = errors.New("unknown client")
	// ErrTooManyClients: RegisterClient found Config.MaxClients clients
	// registered. Run GC, or answer an error (AS-29).
	ErrTooManyClients = errors.New("too many registered clients")
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// CodeTTL is how long an authorization code can be exchanged. If zero,
	// DefaultCodeTTL (60s); at most MaxCodeTTL (10 min).
	CodeTTL time.Duration
	// RefreshIdle: a refresh token not used for this long after it was issued
	// is refused. If zero, DefaultRefreshIdle (30 days).
	RefreshIdle time.Duration
	// RefreshMax: no refresh token of a family is accepted once the family
	// (the code exchange that created it) is this old. If zero,
	// DefaultRefreshMax (90 days).
	RefreshMax time.Duration
	// GraceWindow is how long after its rotation a refresh token may be
	// presented again, as real clients do when they race a refresh, and get
	// the successor already issued instead of being taken for a stolen one;
	// the window closes early once the successor is used. If zero,
	// DefaultGraceWindow (5 min); at most MaxGraceWindow (30 min); negative
	// disables it (every replay revokes the family).
	GraceWindow time.Duration
	// MaxClients caps the number of registered clients, and separately the
	// number of clients known by their metadata document. When the table is
	// full, a new client takes the place of the oldest one that was never
	// authorized; ErrTooManyClients only when every one was. If zero,
	// DefaultMaxClients (500).
	MaxClients int
	// VerifyPKCE reports whether a code_verifier matches the code_challenge
	// stored with a code. If nil, S256 (RFC 7636 §4.6) compared in constant
	// time, refusing an empty verifier or challenge. The server passes
	// policy.VerifyPKCE, which also checks the verifier's form.
	VerifyPKCE func(verifier, challenge string) bool
}

// withDefaults returns c with its defaults filled in, or an error naming
// the setting that is out of range.
func (c Config) withDefaults() (Config, error) {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.VerifyPKCE == nil {
		c.VerifyPKCE = verifyS256
	}
	switch {
	case c.CodeTTL == 0:
		c.CodeTTL = DefaultCodeTTL
	case c.CodeTTL < 0 || c.CodeTTL > MaxCodeTTL:
		return c, fmt.Errorf("code TTL %v out of range (0, %v]", c.CodeTTL, MaxCodeTTL)
	}
	switch {
	case c.RefreshIdle == 0:
		c.RefreshIdle = DefaultRefreshIdle
	case c.RefreshIdle < 0:
		return c, fmt.Errorf("refresh idle timeout %v is negative", c.RefreshIdle)
	}
	switch {
	case c.RefreshMax == 0:
		c.RefreshMax = DefaultRefreshMax
	case c.RefreshMax < 0:
		return c, fmt.Errorf("refresh max lifetime %v is negative", c.RefreshMax)
	}
	switch {
	case c.GraceWindow == 0:
		c.GraceWindow = DefaultGraceWindow
	case c.GraceWindow < 0:
		c.GraceWindow = 0
	case c.GraceWindow > MaxGraceWindow:
		return c, fmt.Errorf("refresh grace window %v above %v", c.GraceWindow, MaxGraceWindow)
	}
	switch {
	case c.MaxClients == 0:
		c.MaxClients = DefaultMaxClients
	case c.MaxClients < 0:
		return c, fmt.Errorf("max clients %d is negative", c.MaxClients)
	}
	return c, nil
}

// verifyS256 is the default Config.VerifyPKCE: BASE64URL(SHA256(verifier))
// equals challenge, in constant time.
func verifyS256(verifier, challenge string) bool {
	if verifier == "" || challenge == "" {
		return false
	}
	sum := sha256.Sum256([]byte(verifier))
	got := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(got), []byte(challenge)) == 1
}

// Store is the persistent state of the authorization server: clients,
// authorization codes, grants with their refresh-token families, and the
// audit trail, all in the one database file. It is safe for concurrent use.
// Open at most one Store per kv.DB: the set of live grants that GrantActive
// answers from is a cache of the file kept by this Store's writes.
type Store struct {
	db  *kv.DB
	cfg Config

	// wmu serializes this Store's Updates with the cache changes that follow
	// them (bbolt serializes writers anyway), so that the cache always ends
	// in the state of the last commit.
	wmu sync.Mutex

	mu   sync.RWMutex
	live map[string]struct{} // ids of grants not revoked: the cache behind GrantActive

	// Test hooks: updates counts Updates (ST-04: one per operation);
	// failpoint, when set, runs inside each Update after all its writes,
	// and an error from it rolls the operation back.
	updates   atomic.Int64
	failpoint func(op string) error
}

// Open returns the Store kept in db, creating its buckets in one Update, and
// loads the ids of the live grants into memory.
func Open(db *kv.DB, cfg Config) (*Store, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("open grant store: %w", err)
	}
	s := &Store{db: db, cfg: cfg, live: make(map[string]struct{})}
	err = db.Update(func(tx *kv.Tx) error {
		for _, name := range []string{BucketClients, BucketCodes, BucketGrants, BucketRefresh, BucketAudit} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return tx.Bucket(BucketGrants).ForEach(func(k, v []byte) error {
			var g grantRecord
			if err := json.Unmarshal(v, &g); err != nil {
				return fmt.Errorf("grant %q: %w", k, err)
			}
			if g.RevokedAt == nil {
				s.live[string(k)] = struct{}{}
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("open grant store: %w", err)
	}
	return s, nil
}

// changes are what one Update did to the set of live grants.
type changes struct {
	added   []string
	removed []string // revoked or deleted
}

// update runs fn as one Update named op. Grants that fn revoked or deleted
// leave the cache before the commit (so no access token of theirs is
// accepted once the revocation is durable), and are put back from the file
// if the commit fails; grants that fn created join it after the commit (no
// token naming them exists before).
func (s *Store) update(op string, fn func(tx *kv.Tx, ch *changes) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.updates.Add(1)
	var ch changes
	err := s.db.Update(func(tx *kv.Tx) error {
		ch = changes{}
		if err := fn(tx, &ch); err != nil {
			return err
		}
		if s.failpoint != nil {
			if err := s.failpoint(op); err != nil {
				return err
			}
		}
		s.setLive(ch.removed, false)
		return nil
	})
	if err != nil {
		if len(ch.removed) > 0 {
			s.resync(ch.removed)
		}
		if isSentinel(err) {
			return err
		}
		return fmt.Errorf("%s: %w", op, err)
	}
	s.setLive(ch.added, true)
	return nil
}

// isSentinel reports whether err is one of the package's sentinel errors,
// which are returned as they are.
func isSentinel(err error) bool {
	switch err {
	case ErrInvalidGrant, ErrInvalidScope, ErrInvalidTarget, ErrInvalidClient, ErrTooManyClients:
		return true
	}
	return false
}

func (s *Store) setLive(ids []string, live bool) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if live {
			s.live[id] = struct{}{}
		} else {
			delete(s.live, id)
		}
	}
}

// resync sets the cache entries of ids from the file. It runs under wmu, so
// no other write of this Store interleaves. If the file cannot be read, the
// grants stay out of the cache: their tokens are refused, which is safe.
func (s *Store) resync(ids []string) {
	var back []string
	_ = s.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(BucketGrants)
		for _, id := range ids {
			if g, err := getGrant(b, id); err == nil && g != nil && g.RevokedAt == nil {
				back = append(back, id)
			}
		}
		return nil
	})
	s.setLive(back, true)
}

// GrantActive reports whether the grant (the grant_id claim of an access
// token) exists and is not revoked. It answers from memory, without touching
// the file, and is safe to call on every request. Family age and idle time
// are not checked: they limit refreshes, and access tokens carry their own
// expiry.
func (s *Store) GrantActive(grantID string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.live[grantID]
	return ok
}

// randomID returns prefix followed by 144 random bits in base64url.
func randomID(prefix string) string {
	var b [18]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go ≥1.24)
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// put stores v as JSON under key.
func put(b *kv.Bucket, key []byte, v any) error {
	buf, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, buf)
}

// get decodes the JSON record under key into a new T, or returns nil when
// there is none.
func get[T any](b *kv.Bucket, key []byte) (*T, error) {
	buf := b.Get(key)
	if buf == nil {
		return nil, nil
	}
	v := new(T)
	if err := json.Unmarshal(buf, v); err != nil {
		return nil, fmt.Errorf("record %x: %w", key, err)
	}
	return v, nil
}

// timePtr returns a pointer to a copy of t.
func timePtr(t time.Time) *time.Time { return &t }
