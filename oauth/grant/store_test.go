package grant

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth/token"
)

const (
	testResource = "https://mem.example.com/mcp"
	testRedirect = "https://claude.ai/api/mcp/auth_callback"
	scopeRead    = "memories:read"
	scopeWrite   = "memories:write"
)

// MustOpenStore opens a Store on a new database file with cfg. Unless cfg.Now says otherwise
// its clock is time.Now, which inside a synctest bubble stands still until the test sleeps.
func MustOpenStore(tb testing.TB, cfg Config) *Store {
	tb.Helper()
	db := kvtest.Open(tb)
	s, err := Open(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// pkce returns a new code verifier and its S256 challenge.
func pkce() (verifier, challenge string) {
	verifier = rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:])
}

func MustRegister(tb testing.TB, s *Store) *Client {
	tb.Helper()
	c, err := s.RegisterClient(ClientMeta{Name: "Claude", RedirectURIs: []string{testRedirect}})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// MustCode issues a code to client with the test defaults and returns it
// with its verifier.
func MustCode(tb testing.TB, s *Store, clientID string) (code, verifier string) {
	tb.Helper()
	verifier, challenge := pkce()
	code, err := s.IssueCode(CodeRequest{
		ClientID:    clientID,
		RedirectURI: testRedirect,
		Challenge:   challenge,
		Resource:    testResource,
		Scope:       []string{scopeRead, scopeWrite},
		Subject:     "owner",
	})
	if err != nil {
		tb.Fatal(err)
	}
	return code, verifier
}

// MustTokens issues a code to clientID and exchanges it.
func MustTokens(tb testing.TB, s *Store, clientID string) *Tokens {
	tb.Helper()
	code, verifier := MustCode(tb, s, clientID)
	t, err := s.ExchangeCode(code, clientID, testRedirect, verifier, testResource)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

// checkInvariants fails tb unless every family has at most one active
// refresh token, a live family's is its ActiveRT, a revoked one has none, and
// the GrantActive cache equals the set of live grants in the file.
func checkInvariants(tb testing.TB, s *Store) {
	tb.Helper()
	live := map[string]bool{}
	err := s.db.View(func(tx *kv.Tx) error {
		grants := map[string]*grantRecord{}
		err := tx.Bucket(BucketGrants).ForEach(func(k, v []byte) error {
			g := new(grantRecord)
			if err := json.Unmarshal(v, g); err != nil {
				return err
			}
			grants[string(k)] = g
			if g.RevokedAt == nil {
				live[string(k)] = true
			}
			return nil
		})
		if err != nil {
			return err
		}
		active := map[string][][]byte{}
		err = tx.Bucket(BucketRefresh).ForEach(func(k, v []byte) error {
			var r refreshRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.State == rtActive {
				active[r.GrantID] = append(active[r.GrantID], bytes.Clone(k))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for id, g := range grants {
			a := active[id]
			switch {
			case len(a) > 1:
				tb.Errorf("family %s has %d active refresh tokens", id, len(a))
			case g.RevokedAt != nil && len(a) != 0:
				tb.Errorf("revoked family %s has an active refresh token", id)
			case g.RevokedAt == nil && (len(a) != 1 || !bytes.Equal(a[0], g.ActiveRT)):
				tb.Errorf("live family %s: active tokens %x, ActiveRT %x", id, a, g.ActiveRT)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for id := range live {
		if _, ok := s.live[id]; !ok {
			tb.Errorf("grant %s is live in the file but not in the cache", id)
		}
	}
	for id := range s.live {
		if !live[id] {
			tb.Errorf("grant %s is in the cache but not live in the file", id)
		}
	}
}

func TestOpen_Config(t *testing.T) {
	db := kvtest.Open(t)
	bad := []struct {
		name string
		cfg  Config
	}{
		{"code TTL above 10 min", Config{CodeTTL: 10*time.Minute + time.Second}},
		{"negative code TTL", Config{CodeTTL: -time.Second}},
		{"grace above 30 min", Config{GraceWindow: 30*time.Minute + time.Second}},
		{"negative idle", Config{RefreshIdle: -1}},
		{"negative max", Config{RefreshMax: -1}},
		{"negative max clients", Config{MaxClients: -1}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Open(db, tt.cfg); err == nil {
				t.Fatal("Open accepted an out-of-range config")
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		s, err := Open(db, Config{})
		if err != nil {
			t.Fatal(err)
		}
		got := s.cfg
		if got.CodeTTL != 60*time.Second || got.RefreshIdle != 30*24*time.Hour ||
			got.RefreshMax != 90*24*time.Hour || got.GraceWindow != 5*time.Minute ||
			got.MaxClients != 500 || got.Now == nil || got.VerifyPKCE == nil {
			t.Fatalf("defaults: %+v", got)
		}
	})
	t.Run("negative grace disables it", func(t *testing.T) {
		s, err := Open(db, Config{GraceWindow: -1})
		if err != nil {
			t.Fatal(err)
		}
		if s.cfg.GraceWindow != 0 {
			t.Fatalf("GraceWindow = %v, want 0", s.cfg.GraceWindow)
		}
	})
}

func TestVerifyS256(t *testing.T) {
	// RFC 7636 Appendix B.
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	tests := []struct {
		name                string
		verifier, challenge string
		want                bool
	}{
		{"RFC 7636 example", verifier, challenge, true},
		{"wrong verifier", verifier + "x", challenge, false},
		{"challenge as verifier", challenge, challenge, false},
		{"empty verifier", "", challenge, false},
		{"empty challenge", verifier, "", false},
		{"both empty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := verifyS256(tt.verifier, tt.challenge); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestStore_Reopen: the file is the truth; the cache is rebuilt from it.
func TestStore_Reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := kvtest.OpenFile(t, path, kv.Options{})
	s, err := Open(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := MustRegister(t, s)
	kept := MustTokens(t, s, c.ID)
	gone := MustTokens(t, s, c.ID)
	if err := s.RevokeGrant(gone.GrantID); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = kvtest.OpenFile(t, path, kv.Options{})
	s, err = Open(db, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.GrantActive(kept.GrantID) {
		t.Error("live grant inactive after reopen")
	}
	if s.GrantActive(gone.GrantID) {
		t.Error("revoked grant active after reopen")
	}
	if _, err := s.Refresh(kept.RefreshToken, c.ID, nil, ""); err != nil {
		t.Errorf("refresh after reopen: %v", err)
	}
	checkInvariants(t, s)
}

// TestStore_SecretsAtRest scans the raw file for every code and refresh token
// handed out: none is there (AS-17, ST-14), also while the successor of the
// last rotation is kept, sealed, for the grace window (AS-13).
func TestStore_SecretsAtRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		c := MustRegister(t, s)
		var secrets []string
		pending, _ := MustCode(t, s, c.ID) // never exchanged
		secrets = append(secrets, pending)
		code, verifier := MustCode(t, s, c.ID)
		secrets = append(secrets, code)
		tok, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource)
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok.RefreshToken)
		for range 3 {
			time.Sleep(time.Minute)
			tok, err = s.Refresh(tok.RefreshToken, c.ID, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			secrets = append(secrets, tok.RefreshToken)
		}
		// The last rotation's window is open: its successor is in the file, sealed.
		var g *grantRecord
		_ = s.db.View(func(tx *kv.Tx) error {
			g, _ = getGrant(tx.Bucket(BucketGrants), tok.GrantID)
			return nil
		})
		if g == nil || g.Pending == nil || len(g.Pending.Sealed) == 0 {
			t.Fatal("no sealed successor while the grace window is open")
		}
		scan(t, s, secrets)
		if err := s.RevokeToken(tok.RefreshToken); err != nil {
			t.Fatal(err)
		}
		scan(t, s, secrets)
	})
}

// scan fails tb if the database file holds any of secrets, whole, without
// its prefix, or as the raw bytes of its random part.
func scan(tb testing.TB, s *Store, secrets []string) {
	tb.Helper()
	raw, err := os.ReadFile(s.db.Path())
	if err != nil {
		tb.Fatal(err)
	}
	for _, sec := range secrets {
		_, random, _ := strings.Cut(sec, "_")
		for _, needle := range []string{sec, random} {
			if bytes.Contains(raw, []byte(needle)) {
				tb.Errorf("database file contains a secret %.8s…", needle)
			}
		}
		b, err := base64.RawURLEncoding.DecodeString(random)
		if err != nil {
			tb.Fatal(err)
		}
		if bytes.Contains(raw, b) {
			tb.Errorf("database file contains the raw bytes of a secret %.8s…", random)
		}
	}
}

// TestStore_Entropy: client ids, grant ids, codes and refresh tokens carry at
// least 128 random bits and never collide (AS-10, AS-29).
func TestStore_Entropy(t *testing.T) {
	seen := map[string]bool{}
	add := func(kind, v string, minLen int) {
		t.Helper()
		if len(v) < minLen {
			t.Fatalf("%s %q shorter than %d", kind, v, minLen)
		}
		if seen[v] {
			t.Fatalf("%s %q repeated", kind, v)
		}
		seen[v] = true
	}
	// 22 base64url characters are 132 bits.
	for range 100_000 {
		add("random id", randomID(ClientIDPrefix), len(ClientIDPrefix)+22)
	}

	const n = 300
	s := MustOpenStore(t, Config{MaxClients: n})
	c := MustRegister(t, s)
	for range n - 1 {
		c2, err := s.RegisterClient(ClientMeta{Name: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(c2.ID, "https://") || strings.Contains(c2.ID, ":") {
			t.Fatalf("client id %q looks like a URL", c2.ID)
		}
		add("client id", c2.ID, len(ClientIDPrefix)+22)
	}
	for range n {
		code, verifier := MustCode(t, s, c.ID)
		add("code", code, 4+43)
		tok, err := s.ExchangeCode(code, c.ID, "", verifier, "")
		if err != nil {
			t.Fatal(err)
		}
		add("grant id", tok.GrantID, len(GrantIDPrefix)+22)
		add("refresh token", tok.RefreshToken, 4+43)
	}
}

// TestStore_OneUpdate: each operation is exactly one Update, and a failure
// inside it (after all its writes) leaves no partial state (ST-04).
func TestStore_OneUpdate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{GraceWindow: -1})
		c := MustRegister(t, s)
		code, verifier := MustCode(t, s, c.ID)
		fail := errors.New("failpoint")
		s.failpoint = func(string) error { return fail }

		// Code exchange: the failed one consumed nothing.
		if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); !errors.Is(err, fail) {
			t.Fatalf("exchange with failpoint: %v", err)
		}
		s.failpoint = nil
		before := s.updates.Load()
		tok, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource)
		if err != nil {
			t.Fatalf("exchange after failed one: %v", err)
		}
		if got := s.updates.Load() - before; got != 1 {
			t.Errorf("exchange ran %d Updates, want 1", got)
		}
		checkInvariants(t, s)

		// Refresh rotation: the failed one rotated nothing.
		s.failpoint = func(string) error { return fail }
		if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); !errors.Is(err, fail) {
			t.Fatalf("refresh with failpoint: %v", err)
		}
		checkInvariants(t, s)
		s.failpoint = nil
		before = s.updates.Load()
		tok2, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
		if err != nil {
			t.Fatalf("refresh after failed one: %v", err)
		}
		if got := s.updates.Load() - before; got != 1 {
			t.Errorf("refresh ran %d Updates, want 1", got)
		}

		// Reuse revocation: the failed one revoked nothing, and the cache, which
		// dropped the grant before the commit, has it back.
		s.failpoint = func(string) error { return fail }
		if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); !errors.Is(err, fail) {
			t.Fatalf("reuse with failpoint: %v", err)
		}
		if !s.GrantActive(tok.GrantID) {
			t.Fatal("grant inactive after a failed revocation")
		}
		checkInvariants(t, s)
		s.failpoint = nil
		before = s.updates.Load()
		if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Fatalf("reuse: %v, want ErrInvalidGrant", err)
		}
		if got := s.updates.Load() - before; got != 1 {
			t.Errorf("reuse ran %d Updates, want 1", got)
		}
		if s.GrantActive(tok.GrantID) {
			t.Error("grant active after reuse")
		}
		if _, err := s.Refresh(tok2.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Errorf("child after reuse: %v, want ErrInvalidGrant", err)
		}
		checkInvariants(t, s)
	})
}

// hashOf is the stored key of an opaque token.
func hashOf(s string) []byte {
	h := token.HashToken(s)
	return h[:]
}
