// RFC 6750 (Bearer Token Usage) §2.1 and §3, with the RFC 9728 §5.1 resource_metadata
// parameter and the MCP 2025-11-25 scope challenge.
package oauth

import (
	"errors"
	"net/http"
	"strings"
)

// maxBearer caps the Authorization header's token before anything parses it (SECURITY RS-12).
const maxBearer = 8 << 10

// ErrBadAuthorization is an Authorization header that is not one well-formed Bearer token.
var ErrBadAuthorization = errors.New("malformed Authorization header")

// BearerToken returns the request's bearer token from the Authorization header only (never
// from the query string or the body). ok is false when no Authorization header was sent; err
// reports a header that is present but not exactly one "Bearer <token68>".
func BearerToken(r *http.Request) (token string, ok bool, err error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", false, nil
	}
	if len(values) > 1 {
		return "", true, ErrBadAuthorization
	}
	scheme, tok, found := strings.Cut(values[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", true, ErrBadAuthorization
	}
	tok = strings.TrimLeft(tok, " ")
	if tok == "" || len(tok) > maxBearer || !isToken68(tok) {
		return "", true, ErrBadAuthorization
	}
	return tok, true, nil
}

// isToken68 checks RFC 7235's token68: ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/",
// then optional "=" padding.
func isToken68(s string) bool {
	i := 0
	for ; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0) {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(s); i++ {
		if s[i] != '=' {
			return false
		}
	}
	return true
}

// Challenge writes the WWW-Authenticate header of a request to MCPPath that was refused: see
// ChallengeAt.
func (e Endpoints) Challenge(w http.ResponseWriter, errCode, scope string) {
	e.ChallengeAt(w, MCPPath, errCode, scope)
}

// Realm is the realm of the bearer challenge (RFC 6750 §3), the first of its parameters.
const Realm = "ownsona"

// ChallengeAt writes the WWW-Authenticate header of a refused request to path: realm (Realm),
// then always the absolute resource_metadata URL of the resource as reached at path (ResourceMetadataAt, so that
// an alias's client finds metadata naming the alias); scope when given (the scopes that would
// succeed, for step-up); error when given ("invalid_token" when a token was sent,
// "insufficient_scope" with 403). The caller writes the status and body.
func (e Endpoints) ChallengeAt(w http.ResponseWriter, path, errCode, scope string) {
	var b strings.Builder
	b.WriteString(`Bearer realm="` + Realm + `", resource_metadata="` + e.ResourceMetadataAt(path) + `"`)
	if scope != "" {
		b.WriteString(`, scope="` + scope + `"`)
	}
	if errCode != "" {
		b.WriteString(`, error="` + errCode + `"`)
	}
	w.Header().Set("WWW-Authenticate", b.String())
}
