// This file implements RFC 9068 (JWT Profile for OAuth 2.0 Access Tokens),
// signed per RFC 7515 and verified per RFC 8725 (JWT Best Current Practices).

package token

import (
	"crypto/elliptic"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// MaxTokenSize is the longest access token Verify looks at, in bytes.
const MaxTokenSize = 8 << 10

// Errors returned by Verify (as is, never wrapped, so errors.Is and == both
// work) and by Mint (wrapped). Every one of them means 401 invalid_token.
var (
	// ErrMalformed: the token is empty, longer than MaxTokenSize, not three
	// base64url segments (strict: no padding, no stray bits), its header or
	// claims are not the JSON we expect, it has a crit header, or a required
	// claim (sub, client_id, iat, jti, grant_id) is missing.
	ErrMalformed = errors.New("malformed token")
	// ErrAlgorithm: the header's alg is not EdDSA or ES256 (none, HS256, RS256,
	// …), or is not the algorithm of the key its kid names.
	ErrAlgorithm = errors.New("token algorithm not allowed")
	// ErrType: the header's typ is missing or is not at+jwt or
	// application/at+jwt (compared case-insensitively).
	ErrType = errors.New("token type is not at+jwt")
	// ErrUnknownKey: the header's kid is missing or names no key we hold, or a
	// key retired more than RetireAfter ago. Nothing is fetched.
	ErrUnknownKey = errors.New("token signed by an unknown key")
	// ErrSignature: the signature does not verify with the key, or is a
	// non-canonical encoding of a valid one.
	ErrSignature = errors.New("token signature invalid")
	// ErrIssuer: iss is missing or not exactly Expect.Issuer.
	ErrIssuer = errors.New("token issuer mismatch")
	// ErrAudience: aud is missing or is not exactly Expect.Audience (a string,
	// or an array holding only it).
	ErrAudience = errors.New("token audience mismatch")
	// ErrExpired: the token is outside its validity window: exp missing, now at
	// or after exp + leeway, nbf after now + leeway, or iat after now + leeway.
	ErrExpired = errors.New("token expired or not yet valid")
	// ErrInvalidClaims: Mint was given claims it will not sign (a required
	// field empty, an expiry in the past or beyond MaxAccessTokenTTL, a scope
	// with a space).
	ErrInvalidClaims = errors.New("invalid access-token claims")
)

// Claims are the claims of an access token.
type Claims struct {
	Issuer   string   // iss: the issuer, the public origin with no path. Required.
	Subject  string   // sub: the resource owner. Required.
	Audience string   // aud: the resource, <public origin>/mcp. Required.
	ClientID string   // client_id: the OAuth client. Required.
	Scope    []string // scope: space-joined in the token; entries must not contain spaces.
	GrantID  string   // grant_id: the grant or refresh-token family, for revocation. Required.

	IssuedAt  time.Time // iat. If zero, Mint uses now.
	NotBefore time.Time // nbf. If zero, omitted.
	Expiry    time.Time // exp. Required: after now, at most MaxAccessTokenTTL from now.
	JTI       string    // jti. If empty, Mint uses 128 random bits.
}

// Expect is what Verify requires of a token.
type Expect struct {
	Issuer   string        // iss must equal it exactly. Required.
	Audience string        // aud must be exactly it. Required.
	Now      time.Time     // the time to check exp/nbf/iat against. If zero, the Keys' clock.
	Leeway   time.Duration // allowed clock skew. If zero, none; more than MaxLeeway is cut to MaxLeeway.
}

// wireClaims is the JSON payload.
type wireClaims struct {
	Iss      string          `json:"iss"`
	Sub      string          `json:"sub"`
	Aud      json.RawMessage `json:"aud"`
	ClientID string          `json:"client_id"`
	Scope    string          `json:"scope,omitempty"`
	GrantID  string          `json:"grant_id"`
	Iat      *int64          `json:"iat"`
	Nbf      *int64          `json:"nbf,omitempty"`
	Exp      *int64          `json:"exp"`
	JTI      string          `json:"jti"`
}

// Mint signs an access token for c with the active key: header alg (EdDSA
// unless RotateTo made an ES256 key active), kid and typ "at+jwt".
func (k *Keys) Mint(c Claims) (string, error) {
	now := k.now()
	if c.IssuedAt.IsZero() {
		c.IssuedAt = now
	}
	if c.JTI == "" {
		c.JTI = newKID()
	}
	if err := checkMint(&c, now); err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	aud, _ := json.Marshal(c.Audience)
	iat, exp := c.IssuedAt.Unix(), c.Expiry.Unix()
	w := wireClaims{
		Iss: c.Issuer, Sub: c.Subject, Aud: aud, ClientID: c.ClientID,
		Scope: strings.Join(c.Scope, " "), GrantID: c.GrantID,
		Iat: &iat, Exp: &exp, JTI: c.JTI,
	}
	if !c.NotBefore.IsZero() {
		nbf := c.NotBefore.Unix()
		w.Nbf = &nbf
	}
	payload, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}

	k.mu.RLock()
	key := k.active
	k.mu.RUnlock()
	signer, err := jose.NewSigner(
		jose.SigningKey{
			Algorithm: jose.SignatureAlgorithm(key.alg),
			Key:       jose.JSONWebKey{Key: key.priv, KeyID: key.kid},
		},
		(&jose.SignerOptions{}).WithType("at+jwt"),
	)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		return "", fmt.Errorf("mint token: %w", err)
	}
	if key.alg == ES256 {
		s = lowS(s)
	}
	return s, nil
}

func checkMint(c *Claims, now time.Time) error {
	for _, f := range []struct{ name, v string }{
		{"issuer", c.Issuer}, {"subject", c.Subject}, {"audience", c.Audience},
		{"client id", c.ClientID}, {"grant id", c.GrantID},
	} {
		if f.v == "" {
			return fmt.Errorf("%w: empty %s", ErrInvalidClaims, f.name)
		}
	}
	for _, s := range c.Scope {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return fmt.Errorf("%w: scope %q", ErrInvalidClaims, s)
		}
	}
	if !c.Expiry.After(now) || c.Expiry.Sub(now) > MaxAccessTokenTTL {
		return fmt.Errorf("%w: expiry must be within %s from now", ErrInvalidClaims, MaxAccessTokenTTL)
	}
	return nil
}

var strict = base64.RawURLEncoding.Strict()

// Verify checks an access token and returns its claims, or one of the
// sentinel errors above (see the package doc for the order of the checks).
// A valid result still needs the revocation check on GrantID.
func (k *Keys) Verify(raw string, want Expect) (*Claims, error) {
	// Shape first, without allocating (RS-12, CVE-2025-30204).
	if len(raw) == 0 || len(raw) > MaxTokenSize {
		return nil, ErrMalformed
	}
	dot1, dot2 := -1, -1
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '.':
			if dot1 < 0 {
				dot1 = i
			} else if dot2 < 0 {
				dot2 = i
			} else {
				return nil, ErrMalformed
			}
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return nil, ErrMalformed
		}
	}
	if dot2 < 0 || dot1 == 0 || dot2 == dot1+1 || dot2 == len(raw)-1 {
		return nil, ErrMalformed
	}

	now := want.Now
	if now.IsZero() {
		now = k.now()
	}
	leeway := min(max(want.Leeway, 0), MaxLeeway)

	// Header.
	hb, err := strict.DecodeString(raw[:dot1])
	if err != nil {
		return nil, ErrMalformed
	}
	var h struct {
		Alg  *string         `json:"alg"`
		Typ  *string         `json:"typ"`
		KID  *string         `json:"kid"`
		Crit json.RawMessage `json:"crit"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, ErrMalformed
	}
	if h.Alg == nil || (*h.Alg != string(EdDSA) && *h.Alg != string(ES256)) {
		return nil, ErrAlgorithm
	}
	if h.Crit != nil {
		return nil, ErrMalformed // we understand no extension
	}
	if h.Typ == nil || !(strings.EqualFold(*h.Typ, "at+jwt") || strings.EqualFold(*h.Typ, "application/at+jwt")) {
		return nil, ErrType
	}
	if h.KID == nil {
		return nil, ErrUnknownKey
	}
	key := k.lookup(*h.KID, now)
	if key == nil {
		return nil, ErrUnknownKey
	}
	if string(key.alg) != *h.Alg {
		return nil, ErrAlgorithm
	}

	// Signature: canonical encodings only, so that no other string than the
	// one we signed verifies (base64 stray bits, ECDSA high-s).
	if _, err := strict.DecodeString(raw[dot1+1 : dot2]); err != nil {
		return nil, ErrMalformed
	}
	sig, err := strict.DecodeString(raw[dot2+1:])
	if err != nil {
		return nil, ErrMalformed
	}
	if key.alg == ES256 && (len(sig) != 64 || !isLowS(sig[32:])) {
		return nil, ErrSignature
	}
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(key.alg)})
	if err != nil {
		return nil, ErrMalformed
	}
	payload, err := jws.Verify(key.pub)
	if err != nil {
		return nil, ErrSignature
	}

	// Claims.
	var w wireClaims
	if err := json.Unmarshal(payload, &w); err != nil {
		return nil, ErrMalformed
	}
	if w.Iss == "" || w.Iss != want.Issuer {
		return nil, ErrIssuer
	}
	if want.Audience == "" || !audienceIs(w.Aud, want.Audience) {
		return nil, ErrAudience
	}
	if w.Exp == nil || !now.Before(time.Unix(*w.Exp, 0).Add(leeway)) {
		return nil, ErrExpired
	}
	if w.Nbf != nil && time.Unix(*w.Nbf, 0).After(now.Add(leeway)) {
		return nil, ErrExpired
	}
	if w.Iat == nil || w.Sub == "" || w.ClientID == "" || w.JTI == "" || w.GrantID == "" {
		return nil, ErrMalformed
	}
	if time.Unix(*w.Iat, 0).After(now.Add(leeway)) {
		return nil, ErrExpired
	}
	c := &Claims{
		Issuer: w.Iss, Subject: w.Sub, Audience: want.Audience, ClientID: w.ClientID,
		Scope: strings.Fields(w.Scope), GrantID: w.GrantID,
		IssuedAt: time.Unix(*w.Iat, 0).UTC(), Expiry: time.Unix(*w.Exp, 0).UTC(), JTI: w.JTI,
	}
	if w.Nbf != nil {
		c.NotBefore = time.Unix(*w.Nbf, 0).UTC()
	}
	return c, nil
}

// audienceIs reports whether aud is the JSON string want or an array holding
// only want.
func audienceIs(aud json.RawMessage, want string) bool {
	if len(aud) == 0 {
		return false
	}
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(aud, &many) == nil {
		return len(many) == 1 && many[0] == want
	}
	return false
}

var (
	p256N     = elliptic.P256().Params().N
	p256HalfN = new(big.Int).Rsh(p256N, 1)
)

// isLowS reports whether the ECDSA s (32 bytes, big-endian) is at most n/2.
func isLowS(s []byte) bool {
	return new(big.Int).SetBytes(s).Cmp(p256HalfN) <= 0
}

// lowS rewrites a compact ES256 JWS so that its signature's s is at most n/2
// ((r, n−s) is the same signature), the only form Verify accepts.
func lowS(compact string) string {
	i := strings.LastIndexByte(compact, '.')
	sig, err := strict.DecodeString(compact[i+1:])
	if err != nil || len(sig) != 64 || isLowS(sig[32:]) {
		return compact
	}
	s := new(big.Int).Sub(p256N, new(big.Int).SetBytes(sig[32:]))
	s.FillBytes(sig[32:])
	return compact[:i+1] + base64.RawURLEncoding.EncodeToString(sig)
}
