package token

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

const (
	testIssuer   = "https://mem.example.com"
	testAudience = "https://mem.example.com/mcp"
)

// MustOpenKeys opens Keys on a new database file, with the clock time.Now. Inside a synctest
// bubble that clock starts at 2000-01-01 00:00 UTC and stands still until the test sleeps.
func MustOpenKeys(tb testing.TB) (*Keys, *kv.DB) {
	tb.Helper()
	db := kvtest.Open(tb)
	k, err := OpenKeys(db, time.Now)
	if err != nil {
		tb.Fatal(err)
	}
	return k, db
}

func validClaims(now time.Time) Claims {
	return Claims{
		Issuer: testIssuer, Subject: "owner", Audience: testAudience, ClientID: "client-1",
		Scope: []string{"memories:read", "memories:write"}, GrantID: "grant-1",
		Expiry: now.Add(time.Hour),
	}
}

func expect(now time.Time) Expect {
	return Expect{Issuer: testIssuer, Audience: testAudience, Now: now, Leeway: MaxLeeway}
}

func MustMint(tb testing.TB, k *Keys, c Claims) string {
	tb.Helper()
	s, err := k.Mint(c)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// fileRecords reads the key records straight from the file.
func fileRecords(tb testing.TB, db *kv.DB) []*record {
	tb.Helper()
	var recs []*record
	err := db.View(func(tx *kv.Tx) error {
		var err error
		recs, err = readRecords(tx.Bucket(Bucket))
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

func activeKIDs(recs []*record) []string {
	var kids []string
	for _, r := range recs {
		if r.State == stateActive {
			kids = append(kids, r.KID)
		}
	}
	return kids
}

type jwks struct {
	Keys []map[string]any `json:"keys"`
}

func parseJWKS(tb testing.TB, b []byte) map[string]map[string]any {
	tb.Helper()
	var set jwks
	if err := json.Unmarshal(b, &set); err != nil {
		tb.Fatalf("JWKS %s: %v", b, err)
	}
	m := map[string]map[string]any{}
	for _, k := range set.Keys {
		m[k["kid"].(string)] = k
	}
	return m
}

func TestOpenKeys_FirstStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, db := MustOpenKeys(t)
		recs := fileRecords(t, db)
		if got, want := len(recs), 2; got != want {
			t.Fatalf("records: got %d, want %d", got, want)
		}
		states := map[Algorithm]string{}
		for _, r := range recs {
			states[r.Alg] = r.State
			raw, err := base64.RawURLEncoding.Strict().DecodeString(r.KID)
			if err != nil || len(raw) < 16 {
				t.Errorf("kid %q: %d random bytes, err %v; want ≥16", r.KID, len(raw), err)
			}
			if _, err := parseRecord(r); err != nil {
				t.Errorf("kid %q: %v", r.KID, err)
			}
		}
		if got, want := states[EdDSA], stateActive; got != want {
			t.Errorf("EdDSA key state: got %q, want %q", got, want)
		}
		if got, want := states[ES256], stateStandby; got != want {
			t.Errorf("ES256 key state: got %q, want %q", got, want)
		}
		if got := activeKIDs(recs); len(got) != 1 || got[0] != k.ActiveKID() {
			t.Errorf("active kids in file: got %v, want [%s]", got, k.ActiveKID())
		}

		set := parseJWKS(t, k.JWKS())
		if got, want := len(set), 2; got != want {
			t.Fatalf("JWKS keys: got %d, want %d", got, want)
		}
		for kid, jwk := range set {
			if jwk["use"] != "sig" {
				t.Errorf("kid %s: use %v, want sig", kid, jwk["use"])
			}
			if _, ok := jwk["d"]; ok {
				t.Errorf("kid %s: JWKS holds private key material", kid)
			}
		}
		if got, want := set[k.ActiveKID()]["alg"], "EdDSA"; got != want {
			t.Errorf("active alg: got %v, want %v", got, want)
		}
	})
}

func TestOpenKeys_Reopen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "db")
		db := kvtest.OpenFile(t, path, kv.Options{})
		k, err := OpenKeys(db, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		tok := MustMint(t, k, validClaims(time.Now()))
		kid, set := k.ActiveKID(), k.JWKS()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		db2 := kvtest.OpenFile(t, path, kv.Options{})
		k2, err := OpenKeys(db2, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := k2.ActiveKID(), kid; got != want {
			t.Errorf("active kid after reopen: got %s, want %s", got, want)
		}
		if got, want := k2.JWKS(), set; !bytes.Equal(got, want) {
			t.Errorf("JWKS after reopen:\ngot  %s\nwant %s", got, want)
		}
		if _, err := k2.Verify(tok, expect(time.Now())); err != nil {
			t.Errorf("token from before reopen: %v", err)
		}
	})
}

func TestKeys_Rotate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, db := MustOpenKeys(t)
		oldKID := k.ActiveKID()
		// The longest-lived token the old key can sign, just before rotation.
		cl := validClaims(time.Now())
		cl.Expiry = time.Now().Add(MaxAccessTokenTTL)
		old := MustMint(t, k, cl)

		if err := k.Rotate(); err != nil {
			t.Fatal(err)
		}
		newKID := k.ActiveKID()
		if newKID == oldKID {
			t.Fatal("Rotate kept the active kid")
		}
		if got := activeKIDs(fileRecords(t, db)); len(got) != 1 || got[0] != newKID {
			t.Errorf("active kids in file: got %v, want [%s]", got, newKID)
		}

		fresh := MustMint(t, k, validClaims(time.Now()))
		if got, want := headerOf(t, fresh)["kid"], newKID; got != want {
			t.Errorf("new token kid: got %v, want %v", got, want)
		}
		if got, want := headerOf(t, fresh)["alg"], "EdDSA"; got != want {
			t.Errorf("new token alg: got %v, want %v", got, want)
		}
		for name, tok := range map[string]string{"old": old, "new": fresh} {
			if _, err := k.Verify(tok, expect(time.Now())); err != nil {
				t.Errorf("%s token after rotation: %v", name, err)
			}
		}
		set := parseJWKS(t, k.JWKS())
		if got, want := len(set), 4; got != want {
			t.Errorf("JWKS during overlap: got %d keys, want %d", got, want)
		}
		for _, kid := range []string{oldKID, newKID} {
			if set[kid] == nil {
				t.Errorf("JWKS during overlap lacks %s", kid)
			}
		}

		// Last second of the overlap: the old token is at exp + 59 s, inside the leeway.
		time.Sleep(RetireAfter - time.Second)
		if _, err := k.Verify(old, expect(time.Now())); err != nil {
			t.Errorf("old token at the end of the overlap: %v", err)
		}
		time.Sleep(time.Second)
		if _, err := k.Verify(old, expect(time.Now())); !errors.Is(err, ErrUnknownKey) {
			t.Errorf("old token after retirement: got %v, want %v", err, ErrUnknownKey)
		}
		set = parseJWKS(t, k.JWKS())
		if set[oldKID] != nil || set[newKID] == nil || len(set) != 2 {
			t.Errorf("JWKS after retirement: got %v, want only the new generation", set)
		}

		// The next open deletes the retired keys from the file.
		if _, err := OpenKeys(db, time.Now); err != nil {
			t.Fatal(err)
		}
		if got, want := len(fileRecords(t, db)), 2; got != want {
			t.Errorf("records after pruning: got %d, want %d", got, want)
		}
	})
}

func TestKeys_RotateTo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, _ := MustOpenKeys(t)
		if err := k.RotateTo(ES256); err != nil {
			t.Fatal(err)
		}
		for i := range 20 { // enough for both halves of s to come up before lowS
			tok := MustMint(t, k, validClaims(time.Now()))
			if got, want := headerOf(t, tok)["alg"], "ES256"; got != want {
				t.Fatalf("alg: got %v, want %v", got, want)
			}
			if _, err := k.Verify(tok, expect(time.Now())); err != nil {
				t.Fatalf("token %d: %v", i, err)
			}
			// (r, n−s) is also a valid ECDSA signature; it must not verify.
			if _, err := k.Verify(highS(t, tok), expect(time.Now())); !errors.Is(err, ErrSignature) {
				t.Fatalf("high-s twin of token %d: got %v, want %v", i, err, ErrSignature)
			}
		}
		if err := k.Rotate(); err != nil { // keeps ES256
			t.Fatal(err)
		}
		if got, want := headerOf(t, MustMint(t, k, validClaims(time.Now())))["alg"], "ES256"; got != want {
			t.Errorf("alg after Rotate: got %v, want %v", got, want)
		}
		if err := k.RotateTo("HS256"); !errors.Is(err, ErrAlgorithm) {
			t.Errorf("RotateTo(HS256): got %v, want %v", err, ErrAlgorithm)
		}
	})
}

func TestKeys_RotateFailpoint(t *testing.T) {
	for name, fail := range map[string]func() error{
		"error": func() error { return errors.New("injected") },
		"panic": func() error { panic("injected crash") },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				k, db := MustOpenKeys(t)
				if err := k.Rotate(); err != nil { // a retiring generation too
					t.Fatal(err)
				}
				before, kid, set := fileRecords(t, db), k.ActiveKID(), k.JWKS()
				tok := MustMint(t, k, validClaims(time.Now()))

				k.failpoint = fail
				func() {
					defer func() { _ = recover() }()
					if err := k.Rotate(); err == nil {
						t.Error("Rotate with a failing Update: got nil error")
					}
				}()
				k.failpoint = nil

				after := fileRecords(t, db)
				if got := activeKIDs(after); len(got) != 1 || got[0] != kid {
					t.Errorf("active kids in file: got %v, want [%s]", got, kid)
				}
				if got, want := len(after), len(before); got != want {
					t.Errorf("records: got %d, want %d", got, want)
				}
				if got := k.JWKS(); !bytes.Equal(got, set) {
					t.Errorf("JWKS changed:\ngot  %s\nwant %s", got, set)
				}
				if _, err := k.Verify(tok, expect(time.Now())); err != nil {
					t.Errorf("token after failed rotation: %v", err)
				}
				k2, err := OpenKeys(db, time.Now)
				if err != nil {
					t.Fatal(err)
				}
				if got, want := k2.ActiveKID(), kid; got != want {
					t.Errorf("reopened active kid: got %s, want %s", got, want)
				}
				if err := k.Rotate(); err != nil {
					t.Errorf("Rotate after the failure: %v", err)
				}
			})
		})
	}
}

func TestOpenKeys_TwoActive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, db := MustOpenKeys(t)
		err := db.Update(func(tx *kv.Tx) error {
			b := tx.Bucket(Bucket)
			for _, r := range fileRecordsTx(t, b) {
				r.State = stateActive
				if err := putRecord(b, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := OpenKeys(db, time.Now); err == nil {
			t.Error("OpenKeys with two active keys: got nil error")
		}
	})
}

func fileRecordsTx(tb testing.TB, b *kv.Bucket) []*record {
	tb.Helper()
	recs, err := readRecords(b)
	if err != nil {
		tb.Fatal(err)
	}
	return recs
}

func TestKeys_Concurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, _ := MustOpenKeys(t)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 50 {
					tok, err := k.Mint(validClaims(time.Now()))
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := k.Verify(tok, expect(time.Now())); err != nil {
						t.Error(err)
					}
					_ = k.JWKS()
				}
			})
		}
		for range 3 {
			if err := k.Rotate(); err != nil {
				t.Error(err)
			}
		}
		wg.Wait()
	})
}
