package oauth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// MustOpenPATs opens the PAT store of a new database file. Its clock is time.Now: in a synctest
// bubble, 2000-01-01 00:00 UTC until the test sleeps.
func MustOpenPATs(tb testing.TB) (*PATs, *kv.DB) {
	tb.Helper()
	db := kvtest.Open(tb)
	p, err := OpenPATs(db, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	return p, db
}

// MustCreatePAT creates a PAT that never expires with the default scopes.
func MustCreatePAT(tb testing.TB, p *PATs, name string) (string, *PAT) {
	tb.Helper()
	tok, rec, err := p.Create(name, policy.DefaultScopes, 0)
	if err != nil {
		tb.Fatalf("Create(%q): %v", name, err)
	}
	return tok, rec
}

func TestPATs_Create(t *testing.T) {
	t.Parallel()
	p, _ := MustOpenPATs(t)
	before := time.Now()
	tok, rec, err := p.Create("backup-script", []string{policy.ScopeRead}, 0)
	after := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	rest, ok := strings.CutPrefix(tok, token.PrefixPAT)
	if !ok || len(rest) != 43 {
		t.Errorf("token %q: want %s and 43 characters", tok, token.PrefixPAT)
	}
	sum := sha256.Sum256([]byte(tok))
	if !strings.HasPrefix(rec.ID, PATIDPrefix) || len(rec.ID) != len(PATIDPrefix)+18 || strings.Contains(tok, rec.ID[len(PATIDPrefix):]) {
		t.Errorf("id %q", rec.ID)
	}
	if rec.Name != "backup-script" || !slices.Equal(rec.Scope, []string{policy.ScopeRead}) || rec.CreatedAt.Before(before) || rec.CreatedAt.After(after) ||
		rec.ExpiresAt != nil || rec.LastUsedAt != nil || rec.Hash != hex.EncodeToString(sum[:]) {
		t.Errorf("record %+v", rec)
	}

	t.Run("names", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			ok   bool
		}{
			{"ci.deploy_1", true},
			{"laptop@home", true},
			{"Gedächtnis", true},
			{strings.Repeat("n", MaxPATNameLen), true},
			{"", false},
			{strings.Repeat("n", MaxPATNameLen+1), false},
			{"two words", false},
			{" leading", false},
			{"tab\there", false},
			{"new\nline", false},
			{"bell\a", false},
			{"nul\x00", false},
			{"del\x7f", false},
			{"rtl\u202eoverride", false},
			{"zero\u200bwidth", false},
			{"nbsp\u00a0", false},
			{"ideographic\u3000space", false},
			{PATIDPrefix + "0123456789abcdef01", false},
			{PATIDPrefix, false},
		} {
			_, _, err := p.Create(tc.name, policy.DefaultScopes, 0)
			if (err == nil) != tc.ok {
				t.Errorf("Create(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		MustCreatePAT(t, p, "dup")
		if _, _, err := p.Create("dup", []string{policy.ScopeRead}, time.Hour); !errors.Is(err, ErrPATExists) {
			t.Errorf("a second %q: %v, want ErrPATExists", "dup", err)
		}
		if _, _, err := p.Create("Dup", policy.DefaultScopes, 0); err != nil {
			t.Errorf("names are case-sensitive: %v", err)
		}
	})
	t.Run("scopes", func(t *testing.T) {
		for i, scope := range [][]string{nil, {}, {"admin"}, {policy.ScopeRead, "memories:delete"}} {
			if _, _, err := p.Create("scope-"+string(rune('a'+i)), scope, 0); err == nil {
				t.Errorf("scope %q accepted", scope)
			}
		}
	})
}

// TestPATs_CreateScopeEntries: every scope entry must be one scope. Create checks each entry with
// policy.ParseScope, which reads "" as the default scopes and splits on spaces, so entries that
// are no scope at all get through; such a PAT is stored with a scope that Principal.Can never
// matches (it fails closed). The command line passes ParseScope's result and is not affected.
func TestPATs_CreateScopeEntries(t *testing.T) {
	t.Parallel()
	p, _ := MustOpenPATs(t)
	for i, scope := range [][]string{{""}, {" "}, {"memories:read memories:write"}} {
		if _, _, err := p.Create("entry-"+string(rune('a'+i)), scope, 0); err == nil {
			t.Errorf("scope %q accepted", scope)
		}
	}
}

// TestPATs_CreateInvalidUTF8: a name that is not UTF-8 is refused, and nothing is stored. (Were
// it stored, JSON would put U+FFFD in place of the bad bytes, and the name the owner typed would
// no longer find the token to revoke it.)
func TestPATs_CreateInvalidUTF8(t *testing.T) {
	t.Parallel()
	p, _ := MustOpenPATs(t)
	for _, name := range []string{"a\xffb", "\xc3", "ok\xed\xa0\x80"} { // a stray byte, a cut sequence, a surrogate
		if _, _, err := p.Create(name, policy.DefaultScopes, 0); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("Create(%q) = %v, want the error that the name is not valid UTF-8", name, err)
		}
	}
	list, err := p.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("List after refused names = %d tokens (first %q), want none", len(list), list[0].Name)
	}
}

// TestPATs_StoredAsHash is SECURITY.md AS-17 for PATs: the token is given out once and only its
// SHA-256 is stored.
func TestPATs_StoredAsHash(t *testing.T) {
	t.Parallel()
	p, db := MustOpenPATs(t)
	tok, rec := MustCreatePAT(t, p, "hashed")
	sum := sha256.Sum256([]byte(tok))
	err := db.View(func(tx *kv.Tx) error {
		for _, bucket := range []string{BucketPATs, BucketPATHashes} {
			err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
				for _, b := range [][]byte{k, v} {
					if bytes.Contains(b, []byte(tok)) || bytes.Contains(b, []byte(tok[len(token.PrefixPAT):])) {
						t.Errorf("bucket %s holds the token", bucket)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if id := tx.Bucket(BucketPATHashes).Get(sum[:]); string(id) != rec.ID {
			t.Errorf("the hash index maps the token's SHA-256 to %q, want %q", id, rec.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.List()
	if err != nil || len(list) != 1 || list[0].Hash != hex.EncodeToString(sum[:]) {
		t.Fatalf("List = %v, %v", list, err)
	}
}

func TestPATs_Lookup(t *testing.T) {
	t.Parallel()
	p, _ := MustOpenPATs(t)
	tok, rec := MustCreatePAT(t, p, "lookup")
	got, err := p.Lookup(tok)
	if err != nil || got.ID != rec.ID || got.Name != "lookup" {
		t.Fatalf("Lookup = %+v, %v", got, err)
	}
	flipped := []byte(tok)
	flipped[len(flipped)-1] ^= 1
	unknown, _ := token.NewOpaque(token.PrefixPAT)
	for _, bad := range []string{"", token.PrefixPAT, unknown, string(flipped), tok[len(token.PrefixPAT):],
		token.PrefixRefresh + tok[len(token.PrefixPAT):], tok + "x", strings.ToUpper(tok), tok + strings.Repeat("a", 100)} {
		if got, err := p.Lookup(bad); !errors.Is(err, ErrPATNotFound) {
			t.Errorf("Lookup(%.12q…) = %v, %v; want ErrPATNotFound", bad, got, err)
		}
	}
}

func TestPATs_Expiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := MustOpenPATs(t)
		tok, rec, err := p.Create("expiring", policy.DefaultScopes, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if rec.ExpiresAt == nil || !rec.ExpiresAt.Equal(time.Now().Add(time.Hour)) {
			t.Fatalf("ExpiresAt = %v", rec.ExpiresAt)
		}
		forever, _, err := p.Create("forever", policy.DefaultScopes, -time.Second)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour - time.Second)
		if _, err := p.Lookup(tok); err != nil {
			t.Errorf("a second before expiry: %v", err)
		}
		time.Sleep(time.Second)
		if _, err := p.Lookup(tok); !errors.Is(err, ErrPATNotFound) {
			t.Errorf("at expiry: %v, want ErrPATNotFound", err)
		}
		time.Sleep(10 * 365 * 24 * time.Hour)
		if _, err := p.Lookup(forever); err != nil {
			t.Errorf("a PAT without expiry after ten years: %v", err)
		}
	})
}

func TestPATs_Revoke(t *testing.T) {
	t.Parallel()
	p, db := MustOpenPATs(t)
	byID, recID := MustCreatePAT(t, p, "by-id")
	byName, _ := MustCreatePAT(t, p, "by-name")
	kept, _ := MustCreatePAT(t, p, "kept")

	if gone, err := p.Revoke(recID.ID); err != nil || gone.ID != recID.ID {
		t.Fatalf("Revoke(id) = %v, %v", gone, err)
	}
	if gone, err := p.Revoke("by-name"); err != nil || gone.Name != "by-name" {
		t.Fatalf("Revoke(name) = %v, %v", gone, err)
	}
	for _, tok := range []string{byID, byName} {
		if _, err := p.Lookup(tok); !errors.Is(err, ErrPATNotFound) {
			t.Errorf("a revoked PAT: %v", err)
		}
	}
	if _, err := p.Lookup(kept); err != nil {
		t.Errorf("another PAT: %v", err)
	}
	for _, again := range []string{recID.ID, "by-name", "", "nope", PATIDPrefix} {
		if _, err := p.Revoke(again); !errors.Is(err, ErrPATNotFound) {
			t.Errorf("Revoke(%q) = %v, want ErrPATNotFound", again, err)
		}
	}
	list, err := p.List()
	if err != nil || len(list) != 1 || list[0].Name != "kept" {
		t.Errorf("List = %v, %v", list, err)
	}
	n := 0
	db.View(func(tx *kv.Tx) error {
		return tx.Bucket(BucketPATHashes).ForEach(func(_, _ []byte) error { n++; return nil })
	})
	if n != 1 {
		t.Errorf("%d hashes left, want 1", n)
	}
	// The name of a revoked PAT may be used again.
	MustCreatePAT(t, p, "by-name")
}

// TestPATs_LastUsed: a use is written back at most once a minute.
func TestPATs_LastUsed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := MustOpenPATs(t)
		tok, _ := MustCreatePAT(t, p, "used")
		t0 := time.Now()
		stored := func() *time.Time {
			t.Helper()
			list, err := p.List()
			if err != nil || len(list) != 1 {
				t.Fatalf("List = %v, %v", list, err)
			}
			return list[0].LastUsedAt
		}
		if stored() != nil {
			t.Fatal("LastUsedAt set before any use")
		}
		for _, step := range []struct {
			after time.Duration
			want  time.Duration // since t0
		}{
			{0, 0},
			{30 * time.Second, 0},
			{29 * time.Second, 0},
			{time.Second, time.Minute},
			{59 * time.Second, time.Minute},
			{time.Hour, time.Hour + 2*time.Minute - time.Second},
		} {
			time.Sleep(step.after)
			got, err := p.Lookup(tok)
			if err != nil {
				t.Fatal(err)
			}
			last := stored()
			if last == nil || !last.Equal(t0.Add(step.want)) || !got.LastUsedAt.Equal(*last) {
				t.Errorf("at %s: stored last use %v (returned %v), want %s", time.Since(t0), last, got.LastUsedAt, step.want)
			}
		}
	})
}

// TestPATs_NoCollisions: 100 PATs have distinct tokens, ids and hashes, and each finds itself.
func TestPATs_NoCollisions(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p, _ := MustOpenPATs(t)
		toks, ids, hashes := map[string]bool{}, map[string]bool{}, map[string]bool{}
		var all []string
		for i := range 100 {
			tok, rec := MustCreatePAT(t, p, "pat-"+strings.Repeat("x", i%5)+string(rune('A'+i%26))+string(rune('a'+i/26)))
			if toks[tok] || ids[rec.ID] || hashes[rec.Hash] {
				t.Fatalf("collision at %d", i)
			}
			toks[tok], ids[rec.ID], hashes[rec.Hash] = true, true, true
			all = append(all, tok)
			time.Sleep(time.Second)
		}
		for _, tok := range all {
			rec, err := p.Lookup(tok)
			if err != nil || token.HashToken(tok) != [32]byte(must(hex.DecodeString(rec.Hash))) {
				t.Fatalf("Lookup: %v, %v", rec, err)
			}
		}
		list, err := p.List()
		if err != nil || len(list) != 100 {
			t.Fatalf("List: %d, %v", len(list), err)
		}
		if !slices.IsSortedFunc(list, func(a, b *PAT) int { return a.CreatedAt.Compare(b.CreatedAt) }) {
			t.Errorf("List is not oldest first")
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPATs_Authenticate: a PAT is a bearer token at /mcp until it is revoked or expires; in a
// synctest bubble, where the hour to its expiry passes at once.
func TestPATs_Authenticate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		tok, rec, err := f.s.PATs().Create("backup", []string{policy.ScopeRead}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		f.keep(tok)
		p := f.wantAuthorized(t, tok)
		if p.Kind != "pat" || p.ClientID != rec.ID || p.Name != "pat:backup" || !slices.Equal(p.Scope, []string{policy.ScopeRead}) ||
			p.GrantID != "" || !p.Can(policy.ScopeRead) || p.Can(policy.ScopeWrite) {
			t.Errorf("principal %+v", p)
		}
		time.Sleep(time.Hour)
		f.wantRefused(t, tok)

		tok2, _, err := f.s.PATs().Create("script", policy.DefaultScopes, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.keep(tok2)
		f.wantAuthorized(t, tok2)
		if _, err := f.s.PATs().Revoke("script"); err != nil {
			t.Fatal(err)
		}
		f.wantRefused(t, tok2)
		if w := f.mcp(tok2[:len(tok2)-1]); w.Code != http.StatusUnauthorized {
			t.Errorf("a truncated PAT: %d", w.Code)
		}
	})
}

// TestPATs_RevokeEndpoint: whoever holds a personal access token can end it at the RFC 7009
// revocation endpoint, as with the other tokens; an unknown one answers 200 and changes nothing.
func TestPATs_RevokeEndpoint(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	tok, _, err := f.s.PATs().Create("leaked", policy.DefaultScopes, 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _, err := f.s.PATs().Create("kept", policy.DefaultScopes, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.keep(tok)
	f.keep(other)
	for _, body := range []string{"token=" + url.QueryEscape(tok[:len(tok)-2]+"AA"), "token=" + url.QueryEscape(tok)} {
		r := httptest.NewRequest(http.MethodPost, "/oauth/revoke", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if w := f.serve(r); w.Code != http.StatusOK {
			t.Fatalf("revoke: %d %s", w.Code, w.Body)
		}
	}
	f.wantRefused(t, tok)
	f.wantAuthorized(t, other)
	if list, _ := f.s.PATs().List(); len(list) != 1 || list[0].Name != "kept" {
		t.Errorf("PATs after revocation: %+v", list)
	}
}
