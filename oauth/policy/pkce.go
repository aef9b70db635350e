// This file implements Proof Key for Code Exchange, RFC 7636, with the S256
// method only, as OAuth 2.1 §4.1.1 and RFC 9700 §2.1.1 require of a server
// that refuses "plain".

package policy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
)

// MethodS256 is the only code_challenge_method accepted.
const MethodS256 = "S256"

// ValidateChallenge checks the code_challenge and code_challenge_method of an
// authorization request. The method must be "S256": a missing method would
// default to "plain" (RFC 7636 §4.3) and is refused like "plain". The
// challenge must be exactly 43 characters of unpadded base64url that decode
// to 32 bytes, the length of a SHA-256 digest. Errors are *OAuthError with
// code invalid_request.
func ValidateChallenge(challenge, method string) error {
	switch {
	case challenge == "":
		return Errorf(CodeInvalidRequest, "code_challenge is required (PKCE with S256)")
	case method == "":
		return Errorf(CodeInvalidRequest, "code_challenge_method is required and must be S256")
	case method != MethodS256:
		return Errorf(CodeInvalidRequest, "code_challenge_method %q is not supported; use S256", method)
	case len(challenge) != 43:
		return Errorf(CodeInvalidRequest, "code_challenge must be 43 characters of base64url")
	}
	if b, err := base64.RawURLEncoding.Strict().DecodeString(challenge); err != nil || len(b) != sha256.Size {
		return Errorf(CodeInvalidRequest, "code_challenge must be 43 characters of base64url")
	}
	return nil
}

// ValidVerifier reports whether v is a well-formed code_verifier: 43 to 128
// characters of [A-Za-z0-9-._~] (RFC 7636 §4.1).
func ValidVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// ChallengeS256 returns BASE64URL(SHA256(verifier)) without padding
// (RFC 7636 §4.2).
func ChallengeS256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// VerifyPKCE reports whether verifier is well formed (ValidVerifier) and
// its S256 transform equals challenge, compared in constant time. An empty
// challenge never verifies, so a code stored without one cannot be redeemed
// with a verifier (a downgrade). A false result is invalid_grant at /token.
func VerifyPKCE(verifier, challenge string) bool {
	if challenge == "" || !ValidVerifier(verifier) {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(ChallengeS256(verifier)), []byte(challenge)) == 1
}
