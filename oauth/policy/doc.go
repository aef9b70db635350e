// Package policy holds the rules of ownsona's OAuth 2.1 authorization
// server that need no state: which redirect URIs may be registered and
// which requested one matches, PKCE, resource indicators, strict parameter
// parsing, error codes, grant and response types, and scopes. Every
// function is pure and safe for concurrent use; the handlers in package
// oauth call them and turn their errors into responses.
//
// The simplest use, at /authorize:
//
//	form, err := policy.ParseForm(r.URL.RawQuery, policy.AuthorizeParams)
//	if err != nil { … }
//	// look up the client, then, before anything else:
//	if !policy.MatchRedirectURI(registered, form["redirect_uri"]) {
//		// error page, never a redirect
//	}
//	err = policy.CheckResponseType(form["response_type"])
//	err = policy.ValidateChallenge(form["code_challenge"], form["code_challenge_method"])
//	scopes, err := policy.ParseScope(form["scope"])
//
// and at /token:
//
//	form, err := policy.ParseForm(string(body), policy.TokenParams)
//	err = policy.CheckGrantType(form["grant_type"])
//	if !policy.VerifyPKCE(form["code_verifier"], code.Challenge) {
//		// invalid_grant
//	}
//
// # Files and the texts they implement
//
//   - errors.go: error responses, RFC 6749 §4.1.2.1 and §5.2, RFC 7591
//     §3.2.2, RFC 8707 §2, OpenID Connect Core §3.1.2.6.
//   - redirect.go: redirect URI registration and matching, OAuth 2.1 §2.3.1,
//     RFC 9700 §2.1 and §4.1.3, RFC 8252 §7 (private-use schemes must be
//     reverse domain names, §7.1; tlds.txt lists the TLDs that rule reads).
//   - host.go: http and https hosts as browsers read them, the WHATWG URL
//     Standard's host parser (IPv4 shorthand, decimal, octal and hex,
//     IPv6 serialization, percent-decoding); IsLoopbackHost for the consent
//     page's "on this computer".
//   - pkce.go: RFC 7636, S256 only.
//   - resource.go: RFC 8707 and the MCP canonical server URI.
//   - form.go: OAuth 2.1 §3.1 and RFC 6749 §3.1 parameter rules.
//   - scope.go: RFC 6749 §3.3, with the scopes memories:read and
//     memories:write.
//
// # Caveats
//
// Errors are *OAuthError values whose Code is the OAuth "error" field and
// whose Description names the reason; descriptions never carry secrets.
// Redirect matching is by exact bytes except for the port of an http
// loopback URI; nothing is case-folded or normalized, so a client must send
// what it registered. Registration therefore refuses, rather than rewrites,
// a host that a browser would read as another string (https://127.1/ is
// 127.0.0.1 to a browser), naming the form to register. IDNA is partial: the
// standard library has no UTS #46 tables, so non-ASCII hosts are refused and
// A-labels (xn--…) are taken as written. Resource indicators, by contrast, are compared in
// canonical form (CanonicalResource). The package keeps no state: code
// single use, token rotation and client lookups live elsewhere.
package policy
