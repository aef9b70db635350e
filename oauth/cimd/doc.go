// Package cimd fetches OAuth client ID metadata documents
// (draft-ietf-oauth-client-id-metadata-document, "OAuth Client ID Metadata
// Document"): a client such as Claude uses an https URL as its client_id,
// and the authorization server GETs that URL to learn the client's name and
// redirect URIs instead of looking up a registration.
//
// The simplest use, at /authorize and /token:
//
//	f, err := cimd.NewFetcher(cimd.Config{}) // claude.ai, claude.com, chatgpt.com
//	…
//	if cimd.IsMetadataURL(clientID) {
//		doc, err := f.Fetch(ctx, clientID)
//		if err != nil {
//			// log err; show policy.CodeOf(err) (invalid_client) and the
//			// *policy.OAuthError in its chain; never redirect
//		}
//		if !slices.ContainsFunc(doc.RedirectURIs, func(r string) bool {
//			return policy.MatchRedirectURI(r, redirectURI)
//		}) { … }
//	} else {
//		// look the client up among dynamically registered clients
//	}
//
// # Files and the texts they implement
//
//   - url.go: the draft's "Client Identifier URL".
//   - fetch.go: "Client Information Discovery" (no redirects, 200 only,
//     caching) and the "Server-Side Request Forgery" and "Maximum Response
//     Size" considerations.
//   - addr.go: which resolved addresses count as public.
//   - document.go: "Client ID Metadata Document": client_id equal to the
//     URL, RFC 7591 fields, no shared secrets.
//
// # Caveats
//
// Only hosts on Config.AllowedHosts are fetched; the check is made before
// any DNS lookup. A fetch resolves the host once, refuses it if any of its
// addresses is loopback, private, link-local, CGNAT, multicast, unspecified
// or reserved (IPv4-mapped forms included), and connects to a vetted
// address itself, so DNS rebinding cannot steer the connection elsewhere.
//
// The Fetcher's cache holds successes only, for the response's max-age
// clamped to [MinTTL, MaxTTL]; it is per process and not the truth, and a
// document that changes is seen when its copy expires. Returned Documents
// are copies the caller owns. Errors (*Error) carry a *policy.OAuthError
// with code invalid_client for the client; their Error text, which may name
// addresses and network failures, is for logs only.
package cimd
