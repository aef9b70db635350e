// The compatibility modes that change what the authorization server accepts and advertises, for
// clients written for the seed systems (issue 27, item 7). Off by default; switched at run time.

package oauth

import (
	"slices"
	"strings"

	"github.com/ownsona/ownsona/oauth/policy"
)

// Compat are the compatibility modes the authorization server takes part in. The zero value is
// the default: none.
type Compat struct {
	// KOmcp serves clients written for KOmcp (seed 003): its scopes mcp:tools:read,
	// mcp:tools:execute and kura:notes:search are accepted wherever a scope is (authorize, a
	// refresh's narrowing; registration ignores scope in every mode) and granted as
	// policy.KOmcpScopeMap says (memories:read), they are listed in scopes_supported of the
	// authorization server's and the protected resource's metadata, and the bare public origin
	// is accepted as a resource (seed 003's resource identifier), bound like every resource of
	// this server to Endpoints.Resource.
	KOmcp bool
}

// compatState is a Compat with what it changes, built once per switch.
type compatState struct {
	Compat
	docs    metadataDocs      // the discovery documents
	aliases map[string]string // scope names translated before parsing
}

func (e Endpoints) compatState(c Compat) *compatState {
	st := &compatState{Compat: c}
	asScopes, prScopes := policy.SupportedScopes, policy.DefaultScopes
	if c.KOmcp {
		asScopes = slices.Concat(asScopes, policy.KOmcpScopes)
		prScopes = slices.Concat(prScopes, policy.KOmcpScopes)
		st.aliases = policy.KOmcpScopeMap
	}
	st.docs = e.documents(asScopes, prScopes)
	return st
}

// SetCompat switches the compatibility modes. It is safe to call while requests are served:
// each request sees the modes before or after the switch, never a mix. Discovery documents
// already fetched may be cached by clients for up to an hour.
func (s *Server) SetCompat(c Compat) { s.compat.Store(s.ep.compatState(c)) }

// Compat returns the compatibility modes in force.
func (s *Server) Compat() Compat { return s.compat.Load().Compat }

// parseScope parses the scope parameter of a request under the modes in force: KOmcp's names
// are translated when its mode is on, and named as such when it is off.
func (s *Server) parseScope(raw string) (scopes []string, named bool, err error) {
	st := s.compat.Load()
	scopes, named, err = policy.ParseRequestScope(policy.TranslateScope(raw, st.aliases))
	if err != nil && !st.KOmcp {
		for tok := range strings.SplitSeq(raw, " ") {
			if slices.Contains(policy.KOmcpScopes, tok) {
				return nil, false, policy.Errorf(policy.CodeInvalidScope,
					"scope %q is KOmcp's: it is accepted only with the komcp compatibility mode (OWNSONA_COMPAT=komcp)", tok)
			}
		}
	}
	return scopes, named, err
}
