// Package grant is the persistent state machine of ownsona's OAuth 2.1
// authorization server: registered public clients (RFC 7591), authorization
// codes with PKCE (RFC 7636) and resource binding (RFC 8707), grants and
// their rotating refresh-token families with reuse detection (RFC 9700
// §4.14.2), revocation (RFC 7009) and an audit trail of revocations. It
// speaks no HTTP: the handlers in package oauth validate requests (package
// policy), call the Store, mint access tokens (package token) and answer.
//
// The simplest use:
//
//	s, err := grant.Open(db, grant.Config{VerifyPKCE: policy.VerifyPKCE})
//	c, err := s.RegisterClient(grant.ClientMeta{Name: "Claude", RedirectURIs: uris})
//	// …the owner logs in and approves…
//	code, err := s.IssueCode(grant.CodeRequest{ClientID: c.ID, RedirectURI: uri,
//		Challenge: challenge, Resource: resource, Scope: scopes, Subject: "owner"})
//	// …at /token…
//	t, err := s.ExchangeCode(code, c.ID, uri, verifier, resource)
//	at, err := keys.Mint(token.Claims{…, GrantID: t.GrantID, Scope: t.Scope})
//	// answer at and t.RefreshToken; later:
//	t, err = s.Refresh(t.RefreshToken, c.ID, nil, "")
//	// and on every request to /mcp, after keys.Verify:
//	if !s.GrantActive(claims.GrantID) { /* 401 invalid_token */ }
//
// Errors are the package's sentinels (ErrInvalidGrant, ErrInvalidScope,
// ErrInvalidTarget, ErrInvalidClient, ErrTooManyClients), returned as they
// are, each naming the OAuth error to answer; any other error is internal.
//
// # The file
//
// Everything lives in five buckets of the one database file, created by Open:
// BucketClients (client_id → JSON), BucketCodes (SHA-256 of the code →
// JSON), BucketGrants (grant id → JSON, one per refresh-token family),
// BucketRefresh (SHA-256 of the refresh token → JSON) and BucketAudit
// (kv.Key(sequence) → Event as JSON). Codes and refresh tokens are opaque
// strings with 256 random bits (token.NewOpaque) that are handed out once and
// never written: only their hashes are (SECURITY.md AS-17, ST-14). Public
// clients have no secret.
//
// Every operation that changes state is exactly one Update (ST-04): issuing a
// code; a code exchange (consume the code, create the family and its first
// refresh token); a refresh (rotate, or a grace replay, or a reuse that
// revokes the family); each revocation; GC. A failure leaves the file as it
// was.
//
// # Families
//
// A grant is what the owner approved for one client: subject, scopes and
// resource. Its id goes into every access token minted for it (grant_id) so
// that revoking the grant stops those tokens at once. Its refresh tokens form
// a family with at most one active token: a refresh rotates it (the old token
// becomes rotated, its child active). Presenting a token that is no longer
// active is reuse, which revokes the family and is recorded in the audit
// trail — except that a rotated token presented again within
// Config.GraceWindow (default 2s) of its rotation, while its child is still
// unused, is taken for one of the parallel refreshes real connectors make:
// it gets a fresh child, and the child from the earlier refresh is
// superseded. So parallel refreshes all succeed (up to MaxReplays each), but
// only the newest refresh token they returned stays valid: a client that
// later presents a superseded one revokes its family. Codes and refresh
// tokens are stored hashed, so the same pair cannot be handed out twice.
//
// A code presented again after its exchange revokes the family that exchange
// created — but only when the replay passes every binding check (client,
// redirect URI, resource, PKCE verifier): a wrong guess changes nothing, so
// someone who saw a code but lacks its verifier cannot end the rightful
// client's session (AS-07).
//
// Scopes are compared as sets of strings: a refresh may ask for a subset of
// the grant's scopes, never another one. Normalize them (write implies read)
// before IssueCode.
//
// # Concurrency and the cache
//
// A Store is safe for concurrent use. Its writes are serialized (bbolt has
// one writer), so parallel refreshes with the same token are decided one
// after the other and a family never has two active tokens (AS-12).
//
// GrantActive answers from an in-memory set of live grant ids, loaded by Open
// and changed by the Store's own writes: a revoked grant leaves the set before
// its revocation commits (and returns to it if the commit fails), a new one
// joins after its commit. The file is the truth, so open only one Store per
// kv.DB and change grants only through it.
package grant
