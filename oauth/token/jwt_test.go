package token

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var b64 = base64.RawURLEncoding

// craft builds a compact JWS by hand: header and payload are marshalled as
// given, and sign (nil: no signature) signs "header.payload".
func craft(tb testing.TB, header, payload any, sign func(input []byte) []byte) string {
	tb.Helper()
	seg := func(v any) string {
		if s, ok := v.(string); ok { // raw JSON
			return b64.EncodeToString([]byte(s))
		}
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return b64.EncodeToString(b)
	}
	input := seg(header) + "." + seg(payload)
	if sign == nil {
		return input + "."
	}
	return input + "." + b64.EncodeToString(sign([]byte(input)))
}

func signEd(priv ed25519.PrivateKey) func([]byte) []byte {
	return func(in []byte) []byte { return ed25519.Sign(priv, in) }
}

func signHS256(secret []byte) func([]byte) []byte {
	return func(in []byte) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write(in)
		return m.Sum(nil)
	}
}

func headerOf(tb testing.TB, tok string) map[string]any {
	tb.Helper()
	b, err := b64.DecodeString(strings.SplitN(tok, ".", 2)[0])
	if err != nil {
		tb.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(b, &h); err != nil {
		tb.Fatal(err)
	}
	return h
}

// highS returns tok with its ES256 signature's s replaced by n−s.
func highS(tb testing.TB, tok string) string {
	tb.Helper()
	i := strings.LastIndexByte(tok, '.')
	sig, err := b64.DecodeString(tok[i+1:])
	if err != nil || len(sig) != 64 {
		tb.Fatalf("signature: %v", err)
	}
	s := new(big.Int).Sub(p256N, new(big.Int).SetBytes(sig[32:]))
	s.FillBytes(sig[32:])
	return tok[:i+1] + b64.EncodeToString(sig)
}

// payloadOf is the payload of a token minted with validClaims at now, as a map
// tests can change.
func payloadOf(now time.Time) map[string]any {
	return map[string]any{
		"iss": testIssuer, "sub": "owner", "aud": testAudience, "client_id": "client-1",
		"scope": "memories:read", "grant_id": "grant-1", "jti": "jti-1",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func with(m map[string]any, kv ...any) map[string]any {
	c := map[string]any{}
	for k, v := range m {
		c[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

func TestKeys_Mint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, _ := MustOpenKeys(t)
		now := time.Now() // a whole second, as iat is
		in := validClaims(now)
		in.NotBefore = now
		tok := MustMint(t, k, in)

		h := headerOf(t, tok)
		for name, want := range map[string]string{"alg": "EdDSA", "typ": "at+jwt", "kid": k.ActiveKID()} {
			if got := h[name]; got != want {
				t.Errorf("header %s: got %v, want %v", name, got, want)
			}
		}
		got, err := k.Verify(tok, expect(now))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.JTI) < 22 {
			t.Errorf("jti: got %q, want ≥128 random bits", got.JTI)
		}
		want := in
		want.IssuedAt, want.NotBefore, want.Expiry = now.UTC(), now.UTC(), in.Expiry.UTC()
		want.JTI = got.JTI
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("claims:\ngot  %+v\nwant %+v", *got, want)
		}

		bad := map[string]Claims{
			"no issuer":      with2(in, func(c *Claims) { c.Issuer = "" }),
			"no audience":    with2(in, func(c *Claims) { c.Audience = "" }),
			"no grant":       with2(in, func(c *Claims) { c.GrantID = "" }),
			"no expiry":      with2(in, func(c *Claims) { c.Expiry = time.Time{} }),
			"expired":        with2(in, func(c *Claims) { c.Expiry = now.Add(-time.Second) }),
			"beyond max TTL": with2(in, func(c *Claims) { c.Expiry = now.Add(MaxAccessTokenTTL + time.Second) }),
			"spaced scope":   with2(in, func(c *Claims) { c.Scope = []string{"a b"} }),
		}
		for name, cl := range bad { // a bubble cannot hold subtests
			if _, err := k.Mint(cl); !errors.Is(err, ErrInvalidClaims) {
				t.Errorf("%s: got %v, want %v", name, err, ErrInvalidClaims)
			}
		}
	})
}

func with2(c Claims, f func(*Claims)) Claims {
	f(&c)
	return c
}

// TestKeys_Verify runs on the real clock, outside a synctest bubble (it serves a jku target
// on a real socket): every check is against now, passed in Expect.
func TestKeys_Verify(t *testing.T) {
	k, _ := MustOpenKeys(t)
	now := time.Now()
	kid := k.ActiveKID()
	priv := k.active.priv.(ed25519.PrivateKey)
	pub := priv.Public().(ed25519.PublicKey)
	hdr := map[string]any{"alg": "EdDSA", "typ": "at+jwt", "kid": kid}
	pl := payloadOf(now)
	_, attacker, _ := ed25519.GenerateKey(rand.Reader)

	// A jku/x5u target that must never be fetched.
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
	}))
	defer srv.Close()

	valid := craft(t, hdr, pl, signEd(priv))
	tampered := func() string {
		parts := strings.Split(valid, ".")
		b, _ := json.Marshal(with(pl, "scope", "memories:write"))
		return parts[0] + "." + b64.EncodeToString(b) + "." + parts[2]
	}()
	lastBits := func() string { // same signature bytes with stray bits in the last character
		i := len(valid) - 1
		alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		j := strings.IndexByte(alphabet, valid[i])
		return valid[:i] + string(alphabet[j^1])
	}()

	tests := []struct {
		name string
		tok  string
		want error
	}{
		{"alg none unsigned", craft(t, with(hdr, "alg", "none"), pl, nil), ErrMalformed},
		{"alg none signed", craft(t, with(hdr, "alg", "none"), pl, signEd(priv)), ErrAlgorithm},
		{"alg None", craft(t, with(hdr, "alg", "None"), pl, signEd(priv)), ErrAlgorithm},
		{"alg NONE", craft(t, with(hdr, "alg", "NONE"), pl, signEd(priv)), ErrAlgorithm},
		{"alg missing", craft(t, with(hdr, "alg", nil), pl, signEd(priv)), ErrAlgorithm},
		{"alg eddsa lowercase", craft(t, with(hdr, "alg", "eddsa"), pl, signEd(priv)), ErrAlgorithm},
		{"HS256 with the public key as secret", craft(t, with(hdr, "alg", "HS256"), pl, signHS256(pub)), ErrAlgorithm},
		{"HS256 with the JWKS as secret", craft(t, with(hdr, "alg", "HS256"), pl, signHS256(k.JWKS())), ErrAlgorithm},
		{"RS256", craft(t, with(hdr, "alg", "RS256"), pl, signHS256([]byte("x"))), ErrAlgorithm},
		{"ES256 header on an EdDSA key", craft(t, with(hdr, "alg", "ES256"), pl, signEd(priv)), ErrAlgorithm},
		{"typ missing", craft(t, with(hdr, "typ", nil), pl, signEd(priv)), ErrType},
		{"typ JWT", craft(t, with(hdr, "typ", "JWT"), pl, signEd(priv)), ErrType},
		{"typ at+jwt2", craft(t, with(hdr, "typ", "at+jwt2"), pl, signEd(priv)), ErrType},
		{"typ not a string", craft(t, with(hdr, "typ", 1), pl, signEd(priv)), ErrMalformed},
		{"kid unknown", craft(t, with(hdr, "kid", "nope"), pl, signEd(priv)), ErrUnknownKey},
		{"kid missing", craft(t, with(hdr, "kid", nil), pl, signEd(priv)), ErrUnknownKey},
		{"kid path", craft(t, with(hdr, "kid", "../../etc/passwd"), pl, signEd(priv)), ErrUnknownKey},
		{"kid SQL", craft(t, with(hdr, "kid", "' OR 1=1 --"), pl, signEd(priv)), ErrUnknownKey},
		{"kid 100 KB", craft(t, with(hdr, "kid", strings.Repeat("k", 100<<10)), pl, signEd(priv)), ErrMalformed},
		{"jku to attacker", craft(t, map[string]any{"alg": "EdDSA", "typ": "at+jwt", "kid": "evil", "jku": srv.URL}, pl, signEd(attacker)), ErrUnknownKey},
		{"x5u to attacker", craft(t, with(hdr, "x5u", srv.URL), pl, signEd(attacker)), ErrSignature},
		{"jwk embedded attacker key", craft(t, with(hdr, "jwk", map[string]any{"kty": "OKP", "crv": "Ed25519", "x": b64.EncodeToString(attacker.Public().(ed25519.PublicKey))}), pl, signEd(attacker)), ErrSignature},
		{"crit unknown", craft(t, with(hdr, "crit", []string{"exp"}), pl, signEd(priv)), ErrMalformed},
		{"signed by another key", craft(t, hdr, pl, signEd(attacker)), ErrSignature},
		{"tampered payload", tampered, ErrSignature},
		{"stray bits in signature", lastBits, ErrMalformed},
		{"aud foreign", craft(t, hdr, with(pl, "aud", "https://other.example"), signEd(priv)), ErrAudience},
		{"aud missing", craft(t, hdr, with(pl, "aud", nil), signEd(priv)), ErrAudience},
		{"aud trailing slash", craft(t, hdr, with(pl, "aud", testAudience+"/"), signEd(priv)), ErrAudience},
		{"aud issuer", craft(t, hdr, with(pl, "aud", testIssuer), signEd(priv)), ErrAudience},
		{"aud array with another", craft(t, hdr, with(pl, "aud", []string{testAudience, "https://other.example"}), signEd(priv)), ErrAudience},
		{"aud empty array", craft(t, hdr, with(pl, "aud", []string{}), signEd(priv)), ErrAudience},
		{"iss trailing slash", craft(t, hdr, with(pl, "iss", testIssuer+"/"), signEd(priv)), ErrIssuer},
		{"iss http", craft(t, hdr, with(pl, "iss", "http://mem.example.com"), signEd(priv)), ErrIssuer},
		{"iss other host", craft(t, hdr, with(pl, "iss", "https://evil.example"), signEd(priv)), ErrIssuer},
		{"iss missing", craft(t, hdr, with(pl, "iss", nil), signEd(priv)), ErrIssuer},
		{"exp missing", craft(t, hdr, with(pl, "exp", nil), signEd(priv)), ErrExpired},
		{"exp beyond leeway", craft(t, hdr, with(pl, "exp", now.Add(-MaxLeeway).Unix()), signEd(priv)), ErrExpired},
		{"exp float", craft(t, hdr, with(pl, "exp", float64(now.Unix())+0.5), signEd(priv)), ErrMalformed},
		{"nbf in the future", craft(t, hdr, with(pl, "nbf", now.Add(MaxLeeway+time.Second).Unix()), signEd(priv)), ErrExpired},
		{"iat in the future", craft(t, hdr, with(pl, "iat", now.Add(MaxLeeway+time.Second).Unix()), signEd(priv)), ErrExpired},
		{"iat missing", craft(t, hdr, with(pl, "iat", nil), signEd(priv)), ErrMalformed},
		{"sub missing", craft(t, hdr, with(pl, "sub", nil), signEd(priv)), ErrMalformed},
		{"client_id missing", craft(t, hdr, with(pl, "client_id", nil), signEd(priv)), ErrMalformed},
		{"grant_id missing", craft(t, hdr, with(pl, "grant_id", nil), signEd(priv)), ErrMalformed},
		{"jti missing", craft(t, hdr, with(pl, "jti", nil), signEd(priv)), ErrMalformed},
		{"payload not JSON", craft(t, hdr, "not json", signEd(priv)), ErrMalformed},
		{"header not JSON", craft(t, "{", pl, signEd(priv)), ErrMalformed},
		{"JSON serialization", `{"payload":"e30","signatures":[]}`, ErrMalformed},
		{"padding", valid + "==", ErrMalformed},
		{"space", " " + valid, ErrMalformed},
		{"two segments", valid[:strings.LastIndexByte(valid, '.')], ErrMalformed},
		{"four segments", valid + ".x", ErrMalformed},
		{"empty", "", ErrMalformed},
		{"refresh token", func() string { s, _ := NewOpaque(PrefixRefresh); return s }(), ErrMalformed},
		{"authorization code", func() string { s, _ := NewOpaque(PrefixCode); return s }(), ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			claims, err := k.Verify(tt.tok, expect(now))
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
			if claims != nil {
				t.Errorf("got claims %+v with an error", claims)
			}
		})
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("jku/x5u fetched %d times, want 0", n)
	}

	accepted := []struct {
		name string
		tok  string
	}{
		{"valid", valid},
		{"typ AT+JWT", craft(t, with(hdr, "typ", "AT+JWT"), pl, signEd(priv))},
		{"typ application/at+jwt", craft(t, with(hdr, "typ", "application/at+jwt"), pl, signEd(priv))},
		{"aud array of ours", craft(t, hdr, with(pl, "aud", []string{testAudience}), signEd(priv))},
		{"exp within leeway", craft(t, hdr, with(pl, "exp", now.Add(-MaxLeeway+time.Second).Unix()), signEd(priv))},
		{"nbf within leeway", craft(t, hdr, with(pl, "nbf", now.Add(MaxLeeway).Unix()), signEd(priv))},
		{"standby ES256 key", func() string {
			var sb *key
			for _, key := range k.order {
				if key.alg == ES256 {
					sb = key
				}
			}
			return lowS(craft(t, map[string]any{"alg": "ES256", "typ": "at+jwt", "kid": sb.kid}, pl, func(in []byte) []byte {
				h := sha256.Sum256(in)
				r, s, err := ecdsa.Sign(rand.Reader, sb.priv.(*ecdsa.PrivateKey), h[:])
				if err != nil {
					t.Fatal(err)
				}
				sig := make([]byte, 64)
				r.FillBytes(sig[:32])
				s.FillBytes(sig[32:])
				return sig
			}))
		}()},
	}
	for _, tt := range accepted {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := k.Verify(tt.tok, expect(now)); err != nil {
				t.Errorf("got %v, want nil", err)
			}
		})
	}
}

func TestKeys_VerifyExpect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k, _ := MustOpenKeys(t)
		now := time.Now()
		cl := validClaims(now)
		cl.Expiry = now.Add(time.Minute)
		tok := MustMint(t, k, cl)

		tests := []struct {
			name string
			exp  Expect
			want error
		}{
			{"ok", expect(now), nil},
			{"no issuer expected", Expect{Audience: testAudience, Now: now}, ErrIssuer},
			{"no audience expected", Expect{Issuer: testIssuer, Now: now}, ErrAudience},
			{"zero Now uses the Keys clock", Expect{Issuer: testIssuer, Audience: testAudience}, nil},
			{"at exp, no leeway", Expect{Issuer: testIssuer, Audience: testAudience, Now: now.Add(time.Minute)}, ErrExpired},
			{"leeway above the maximum is cut", Expect{Issuer: testIssuer, Audience: testAudience, Now: now.Add(time.Minute + MaxLeeway), Leeway: time.Hour}, ErrExpired},
			{"negative leeway is none", Expect{Issuer: testIssuer, Audience: testAudience, Now: now.Add(time.Minute), Leeway: -time.Hour}, ErrExpired},
		}
		for _, tt := range tests { // a bubble cannot hold subtests
			if _, err := k.Verify(tok, tt.exp); !errors.Is(err, tt.want) {
				t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
			}
		}
	})
}

// RS-12: hostile bearer values fail at the first check, without allocating. No check here
// reads the clock, so the test runs on the real one.
func TestKeys_VerifyBounded(t *testing.T) {
	k, _ := MustOpenKeys(t)
	now := time.Now()
	tests := map[string]string{
		"1 MB of dots":              strings.Repeat(".", 1<<20),
		"10k segments":              strings.Repeat("eyJhIjoxfQ.", 10_000),
		"8 KiB + 1":                 strings.Repeat("A", MaxTokenSize+1),
		"dots within the size":      strings.Repeat(".", MaxTokenSize),
		"many segments within size": strings.Repeat("a.", 1000),
	}
	for name, tok := range tests {
		t.Run(name, func(t *testing.T) {
			var err error
			allocs := testing.AllocsPerRun(10, func() { _, err = k.Verify(tok, expect(now)) })
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("got %v, want %v", err, ErrMalformed)
			}
			if allocs != 0 {
				t.Errorf("allocations: got %v, want 0", allocs)
			}
		})
	}
}
