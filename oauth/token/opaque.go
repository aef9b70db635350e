package token

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// Prefixes of opaque tokens, so that a token says what it is (and a scanner
// for leaked secrets can find it). None contains a dot, so Verify refuses
// any of them as an access token at the first check.
const (
	PrefixRefresh = "osr_" // refresh token
	PrefixPAT     = "osk_" // personal access token
	PrefixCode    = "osc_" // authorization code
)

// NewOpaque returns a new opaque token, prefix followed by 256 random bits in
// base64url without padding (43 characters), and its HashToken. Give the token
// out once and store only the hash.
func NewOpaque(prefix string) (token string, hash [32]byte) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go ≥1.24)
	token = prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, HashToken(token)
}

// HashToken is the SHA-256 of the whole token string, prefix included: the
// form in which opaque tokens are stored and looked up. (The token carries 256
// random bits, so a fast unsalted hash is enough.)
func HashToken(s string) [32]byte {
	return sha256.Sum256([]byte(s))
}

// HashEqual compares two hashes in constant time.
func HashEqual(a, b [32]byte) bool {
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}
