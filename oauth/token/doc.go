// Package token holds ownsona's OAuth signing keys and its tokens: JWT access
// tokens (RFC 9068, "JSON Web Token (JWT) Profile for OAuth 2.0 Access
// Tokens", verified per RFC 8725, "JSON Web Token Best Current Practices")
// and opaque tokens (refresh tokens, authorization codes, personal access
// tokens) that are stored only as hashes.
//
// The simplest use:
//
//	keys, err := token.OpenKeys(db, time.Now) // first start: generates the keys
//	if err != nil {
//		return err
//	}
//	at, err := keys.Mint(token.Claims{
//		Issuer:   "https://mem.example.com",
//		Subject:  "owner",
//		Audience: "https://mem.example.com/mcp",
//		ClientID: clientID,
//		Scope:    []string{"memories:read"},
//		GrantID:  grantID,
//		Expiry:   time.Now().Add(time.Hour),
//	})
//	…
//	claims, err := keys.Verify(bearer, token.Expect{
//		Issuer:   "https://mem.example.com",
//		Audience: "https://mem.example.com/mcp",
//	})
//	if err != nil { // one of the Err… sentinels: answer 401 invalid_token
//	}
//	// Then check claims.GrantID against the revocation state (RS-07): a valid
//	// signature does not mean the grant is still alive.
//
//	rt, hash := token.NewOpaque(token.PrefixRefresh) // give rt out, store hash
//
// # Keys in the file
//
// The signing keys live in the bucket "oauth_keys" of the one database file,
// one record per key (kid → JSON with the PKCS#8 private key). The first
// OpenKeys generates an Ed25519 key (alg EdDSA), which becomes the active
// signing key, and a P-256 key (alg ES256) kept on standby, in one Update.
// Exactly one key is active at any time: Rotate writes the new keys and
// retires the old ones in one Update, so a failure or crash mid-rotation
// leaves the previous set, with its one active key, untouched.
//
// A retiring key no longer signs, but its public key stays in JWKS and keeps
// verifying tokens for RetireAfter (the longest access-token lifetime Mint
// allows plus the largest leeway), so no token it signed is cut short. Then
// it is ignored, and deleted from the file on the next OpenKeys or Rotate.
//
// Caveat (SECURITY.md ST-14): the private keys are stored unencrypted, so
// anyone who can read the database file or one of its backups can mint
// access tokens that this server accepts. Keep the file and its backups mode
// 0600 and treat them like a password. Rotate after a copy may have leaked:
// tokens from the old keys then stop working after RetireAfter.
//
// Keys caches the key set in memory; the file is the truth. The cache is
// loaded by OpenKeys and refreshed by Rotate, so a rotation must go through
// the Keys that serves requests (another process cannot open the file while
// the server holds its lock). A Keys is safe for concurrent use.
//
// # Verification
//
// Verify checks, in order, and fails with the first sentinel error that
// applies: the token's size and shape (at most MaxTokenSize bytes, exactly
// three base64url segments, checked before any allocation, so a bearer of
// 1 MB of dots fails fast), the header (alg pinned to EdDSA and ES256 — none,
// HS256 and RS256 are refused whatever the key; typ at+jwt; no crit; kid
// naming a key we hold — jku, x5u, jwk and x5c are never used and nothing
// is ever fetched), the signature (strict base64url, canonical signatures
// only, so a modified token never verifies), then the claims (iss exact, aud
// exactly our resource, exp required, exp/nbf/iat with at most MaxLeeway,
// and sub, client_id, iat, jti and grant_id present).
//
// # Opaque tokens
//
// NewOpaque returns 256 random bits, base64url, behind a prefix that says
// what the token is ("osr_" refresh token, "osk_" personal access token,
// "osc_" authorization code), and the SHA-256 of the whole string. Store the
// hash only; look a presented token up by HashToken and compare hashes with
// HashEqual.
package token
