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
// refresh token); a refresh (rotate and seal the child, or a grace replay,
// or a reuse that revokes the family); each revocation; closing windows; GC.
// A failure leaves the file as it was.
//
// # Families
//
// A grant is what the owner approved for one client: subject, scopes and
// resource. Its id goes into every access token minted for it (grant_id) so
// that revoking the grant stops those tokens at once. Its refresh tokens form
// a family with at most one active token: a refresh rotates it (the old token
// becomes rotated, its child active). Presenting a token that is no longer
// active is reuse, which revokes the family and is recorded in the audit
// trail (RFC 9700 §4.14.2, SECURITY.md AS-11) — except inside the grace
// window of the family's last rotation.
//
// # The grace window
//
// Real clients race their refreshes: Claude.ai refreshes from two egress
// addresses, Claude Code's sessions each refresh on their own, seconds to
// minutes apart. So a rotated token presented again within
// Config.GraceWindow (default 5 min, at most 30 min) of its rotation, while
// its child is still unused, answers with that same child (and the caller
// mints a fresh access token): every racer ends up holding the family's one
// working token, and nothing is superseded or revoked (AS-12, AS-13). The
// window closes early once the child is used — a refresh with it, by any
// racer — and from then a replay of the parent is reuse again. Chains work:
// A rotates P to C, B replays P and gets C, A rotates C to C2, B presents C
// within C's window and gets C2. At most MaxReplays replays of one rotation
// are answered; further ones are refused without revoking anything.
//
// The price is that a thief who presents a rotated token inside the window
// gets its successor too. The family is revoked as soon as either side
// presents a token whose child was already used, or after its window: at
// their next refreshes, unless the two keep refreshing within a window of
// each other. Configure a shorter window, or a negative one (none), for
// stricter reuse detection.
//
// Handing the same child out twice needs it at hand, and only hashes of
// usable tokens are kept at rest (AS-17). So the child of the last rotation
// is kept sealed (seal.go): AES-256-GCM under a key derived with HKDF from
// the rotated token's plaintext, which the file does not hold, so only a
// presenter of that token can open it. The sealed copy lives in the grant's
// record and is dropped when the window closes: when the child is used, when
// the family is revoked, and, once the time has passed, by CloseWindows
// (the server runs it every minute) or GC.
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
// after the other: the first rotates, the others are replays that get its
// child, and a family never has two active tokens (AS-12).
//
// GrantActive answers from an in-memory set of live grant ids, loaded by Open
// and changed by the Store's own writes: a revoked grant leaves the set before
// its revocation commits (and returns to it if the commit fails), a new one
// joins after its commit. The file is the truth, so open only one Store per
// kv.DB and change grants only through it.
package grant
