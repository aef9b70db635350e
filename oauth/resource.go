// The resource server's check of a bearer token (MCP 2025-11-25 "Authorization", RFC 6750,
// RFC 9068), before any request reaches /mcp.

package oauth

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// Principal is who an authenticated request acts for.
type Principal struct {
	// Kind is "oauth" for an access token, "pat" for a personal access token.
	Kind string
	// ClientID is the OAuth client_id, or the PAT's id.
	ClientID string
	// Name is what memories written by this principal record as their source_client: the
	// client's registered name (its client_id when it has none), or "pat:" and the PAT's name.
	Name string
	// Scope is what the token allows.
	Scope []string
	// GrantID is the access token's grant, empty for a PAT.
	GrantID string
}

// Key names the principal for per-client state (rate limits, session ownership): its kind and
// client id, e.g. "oauth:abc" or "pat:pat_123".
func (p *Principal) Key() string { return p.Kind + ":" + p.ClientID }

// Can reports whether the principal's scopes cover needed.
func (p *Principal) Can(needed string) bool { return policy.Covers(p.Scope, needed) }

// Refusal is why a request to the resource server was refused, ready to be answered with
// Challenge and Status.
type Refusal struct {
	Status      int    // 401, or 403 for insufficient_scope
	Code        string // "" (no token sent), invalid_token, invalid_request or insufficient_scope
	Description string
	Scope       string // the scopes to ask for, for WWW-Authenticate
}

// Error is the refusal's description, for logs.
func (r *Refusal) Error() string { return r.Description }

// Authenticate checks r's bearer token: an ownsona access token (signature, type, issuer,
// audience, lifetime, and a grant that is not revoked) or a live personal access token.
func (s *Server) Authenticate(r *http.Request) (*Principal, *Refusal) {
	all := policy.FormatScope(policy.DefaultScopes)
	raw, ok, err := BearerToken(r)
	switch {
	case err != nil:
		return nil, &Refusal{Status: http.StatusUnauthorized, Code: "invalid_token", Scope: all,
			Description: "the Authorization header must be exactly one \"Bearer <token>\""}
	case !ok:
		return nil, &Refusal{Status: http.StatusUnauthorized, Scope: all,
			Description: "authorization required: sign in through this server's OAuth flow, or send a personal access token"}
	}
	return s.authenticate(raw)
}

// AuthenticateToken checks a token that arrived other than in the Authorization header (the
// access_token tool argument of OWNSONA_ALLOW_ARGUMENT_TOKENS) exactly as Authenticate checks a
// header's: the same form (RFC 7235 token68, at most 8 KiB), and the same checks of an access
// token or a personal access token. The caller decides whether such a token may be used at all.
func (s *Server) AuthenticateToken(raw string) (*Principal, *Refusal) {
	if raw == "" || len(raw) > maxBearer || !isToken68(raw) {
		return nil, &Refusal{Status: http.StatusUnauthorized, Code: "invalid_token", Scope: policy.FormatScope(policy.DefaultScopes),
			Description: "the access_token argument is not a well-formed token"}
	}
	return s.authenticate(raw)
}

// authenticate checks a bearer token of the right form.
func (s *Server) authenticate(raw string) (*Principal, *Refusal) {
	all := policy.FormatScope(policy.DefaultScopes)
	if strings.HasPrefix(raw, token.PrefixPAT) {
		pat, err := s.pats.Lookup(raw)
		if err != nil {
			if !errors.Is(err, ErrPATNotFound) {
				s.log.Error().Err(err).Msg("personal access token lookup failed")
			}
			return nil, &Refusal{Status: http.StatusUnauthorized, Code: "invalid_token", Scope: all,
				Description: "the personal access token is unknown, revoked or expired"}
		}
		return &Principal{Kind: "pat", ClientID: pat.ID, Name: "pat:" + pat.Name, Scope: pat.Scope}, nil
	}
	claims, err := s.verified.verify(raw, s.now(), func() (*token.Claims, error) {
		return s.keys.Verify(raw, token.Expect{Issuer: s.ep.Issuer, Audience: s.ep.Resource, Leeway: token.MaxLeeway})
	})
	if err != nil {
		return nil, &Refusal{Status: http.StatusUnauthorized, Code: "invalid_token", Scope: all,
			Description: "the access token is invalid: " + err.Error()}
	}
	if !s.grants.GrantActive(claims.GrantID) {
		return nil, &Refusal{Status: http.StatusUnauthorized, Code: "invalid_token", Scope: all,
			Description: "the access token's grant was revoked"}
	}
	return &Principal{Kind: "oauth", ClientID: claims.ClientID, Name: s.clientName(claims.ClientID),
		Scope: claims.Scope, GrantID: claims.GrantID}, nil
}

// clientName is the registered name of a client, cached.
func (s *Server) clientName(id string) string {
	if v, ok := s.names.Load(id); ok {
		return v.(string)
	}
	name := id
	if c, err := s.grants.Client(id); err == nil && c.Name != "" {
		name = c.Name
	}
	s.names.Store(id, name)
	return name
}

// Challenge writes the WWW-Authenticate header of a refusal of r (RFC 6750 §3, RFC 9728 §5.1),
// pointing at the protected-resource metadata of the path r was sent to (Endpoints.ChallengeAt).
func (s *Server) Challenge(w http.ResponseWriter, r *http.Request, ref *Refusal) {
	s.ep.ChallengeAt(w, r.URL.Path, ref.Code, ref.Scope)
}

// maxVerified bounds the cache of verified access tokens.
const maxVerified = 4096

// verifiedCache remembers the claims of access tokens whose signature and claims were verified,
// keyed by the token's SHA-256, until they expire: an Ed25519 verification costs about 60 µs,
// a lookup about 2. Only what Verify checked once is cached; the grant's revocation is still
// checked on every request.
type verifiedCache struct {
	mu sync.Mutex
	m  map[[32]byte]*token.Claims
}

func (c *verifiedCache) verify(raw string, now time.Time, slow func() (*token.Claims, error)) (*token.Claims, error) {
	if len(raw) > token.MaxTokenSize {
		return slow() // refused at once, without hashing a megabyte
	}
	key := token.HashToken(raw)
	c.mu.Lock()
	claims := c.m[key]
	c.mu.Unlock()
	if claims != nil && now.Before(claims.Expiry.Add(token.MaxLeeway)) {
		return claims, nil
	}
	claims, err := slow()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxVerified {
		c.m = make(map[[32]byte]*token.Claims) // a rare, cheap reset: the next requests verify again
	}
	c.m[key] = claims
	c.mu.Unlock()
	return claims, nil
}
