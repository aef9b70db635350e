// This file implements strict parsing of OAuth request parameters in
// application/x-www-form-urlencoded form (the /authorize query and the
// /token and /revoke form bodies), following OAuth 2.1
// §3.1 and RFC 6749 §3.1 and §3.2: "Request and response parameters MUST
// NOT be included more than once", "Parameters sent without a value MUST be
// treated as if they were omitted", and unrecognized parameters are
// ignored.

package policy

import (
	"net/url"
	"strings"
)

// Parameter names that each endpoint reads. Each is single-valued.
var (
	// AuthorizeParams are the parameters of an authorization request.
	AuthorizeParams = []string{
		"response_type", "client_id", "redirect_uri", "scope", "state",
		"code_challenge", "code_challenge_method", "resource", "prompt",
	}
	// TokenParams are the parameters of a token request.
	TokenParams = []string{
		"grant_type", "code", "redirect_uri", "client_id", "client_secret",
		"code_verifier", "refresh_token", "resource", "scope",
	}
	// RevokeParams are the parameters of a revocation request (RFC 7009).
	RevokeParams = []string{"token", "token_type_hint", "client_id", "client_secret"}
)

// ParseForm parses raw, a query string without the '?' or a form body, and
// returns the values of the parameters named in known. Pairs are separated
// by '&' only (a ';' is part of a value); names and values are
// percent-decoded with '+' as a space, and names compare case-sensitively
// after decoding. A known parameter that occurs twice, even with an empty
// value, is an error naming it; a known parameter with an empty value is
// left out of the map; unknown parameters are ignored. Malformed
// percent-encoding anywhere is an error. Errors are *OAuthError with code
// invalid_request.
//
// Callers limit the size of raw (http.MaxBytesReader) before calling.
func ParseForm(raw string, known []string) (map[string]string, error) {
	form := make(map[string]string)
	seen := make(map[string]bool)
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			return nil, Errorf(CodeInvalidRequest, "malformed percent-encoding in a parameter name")
		}
		value, err := url.QueryUnescape(v)
		if err != nil {
			return nil, Errorf(CodeInvalidRequest, "malformed percent-encoding in parameter %q", truncate(name, 64))
		}
		if !contains(known, name) {
			continue
		}
		if seen[name] {
			return nil, Errorf(CodeInvalidRequest, "parameter %s must not be repeated", name)
		}
		seen[name] = true
		if value != "" {
			form[name] = value
		}
	}
	return form, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
