// Package oauth is ownsona's OAuth 2.1 authorization server and the resource-server check in
// front of /mcp. Subpackages hold its parts: policy (stateless rules: redirect URIs, PKCE,
// resource indicators, forms, scopes), token (signing keys in the file, access-token JWTs,
// opaque hashed tokens) and the stores and pages that the server wires together.
//
// This file set starts with what every client reads first: the discovery documents of RFC 8414
// (authorization server metadata) and RFC 9728 (protected resource metadata, for /mcp and for
// each of its aliases), and the bearer challenge of RFC 6750 §3. Every URL in them derives from the configured public origin, never
// from a request's Host or X-Forwarded-Host header, so a forged header cannot point a client
// at another server (SECURITY.md AS-31, RS-10; mcp-remote CVE-2025-6514).
//
// The simplest use:
//
//	ep, err := oauth.NewEndpoints("https://mem.example.com")
//	mux.Handle("/.well-known/", ep.MetadataHandler())
//	tok, ok, err := oauth.BearerToken(r)
//	if !ok {
//		ep.ChallengeAt(w, r.URL.Path, "", "memories:read memories:write") // then 401
//	}
package oauth
