// This file implements the scope parameter of RFC 6749 §3.3 for ownsona's
// two scopes.

package policy

import "strings"

// Scopes. Write implies read.
const (
	// ScopeRead lets a client list, search and read memories, and use
	// resources and prompts.
	ScopeRead = "memories:read"
	// ScopeWrite lets a client also create, change and delete memories.
	ScopeWrite = "memories:write"
)

// ScopeOfflineAccess is OpenID Connect Core §11's request for a refresh
// token. Clients that follow OIDC send it; ownsona issues a refresh token
// with every grant anyway, so the scope changes nothing but the granted
// scope string: it never widens the memories scopes and is never in an
// access token (ResourceScopes).
const ScopeOfflineAccess = "offline_access"

// DefaultScopes are granted when a request names no scope.
var DefaultScopes = []string{ScopeRead, ScopeWrite}

// SupportedScopes are the scopes the authorization server accepts in a
// request, as its metadata lists them (scopes_supported): the memories
// scopes and offline_access.
var SupportedScopes = []string{ScopeRead, ScopeWrite, ScopeOfflineAccess}

// ParseScope parses a space-separated scope parameter. Runs of spaces are
// allowed; any other whitespace is part of a scope token. An empty or
// all-space value means DefaultScopes. Each token must be ScopeRead or
// ScopeWrite, else the error is an *OAuthError with code invalid_scope
// naming it. The result is deduplicated and in the order read, write; it is
// a new slice each time.
func ParseScope(s string) ([]string, error) {
	var read, write bool
	for _, tok := range strings.Split(s, " ") {
		switch tok {
		case "":
		case ScopeRead:
			read = true
		case ScopeWrite:
			write = true
		default:
			return nil, Errorf(CodeInvalidScope, "unknown scope %q; known scopes are %s and %s", truncate(tok, 64), ScopeRead, ScopeWrite)
		}
	}
	var out []string
	if read {
		out = append(out, ScopeRead)
	}
	if write {
		out = append(out, ScopeWrite)
	}
	if out == nil {
		out = append(out, DefaultScopes...)
	}
	return out, nil
}

// ParseRequestScope parses the scope parameter of an OAuth request
// (authorization, token, registration) as ParseScope does, and also accepts
// ScopeOfflineAccess. named reports whether a memories scope was named: a
// scope of offline_access alone names none and, like an empty one, means
// DefaultScopes, so offline_access never widens what a request gets. The
// result is in the order read, write, offline_access; offline_access is in it
// only when requested.
func ParseRequestScope(s string) (scopes []string, named bool, err error) {
	var offline bool
	var rest []string
	for _, tok := range strings.Split(s, " ") {
		switch tok {
		case "":
		case ScopeOfflineAccess:
			offline = true
		case ScopeRead, ScopeWrite:
			rest = append(rest, tok)
		default:
			return nil, false, Errorf(CodeInvalidScope, "unknown scope %q; known scopes are %s, %s and %s",
				truncate(tok, 64), ScopeRead, ScopeWrite, ScopeOfflineAccess)
		}
	}
	named = len(rest) > 0
	if scopes, err = ParseScope(strings.Join(rest, " ")); err != nil {
		return nil, false, err
	}
	if offline {
		scopes = append(scopes, ScopeOfflineAccess)
	}
	return scopes, named, nil
}

// ResourceScopes returns the scopes of granted that the resource server
// checks (the memories scopes), without offline_access: what an access
// token carries. It is a new slice.
func ResourceScopes(granted []string) []string {
	out := make([]string, 0, len(granted))
	for _, g := range granted {
		if g != ScopeOfflineAccess {
			out = append(out, g)
		}
	}
	return out
}

// FormatScope joins scopes with single spaces, as the scope parameter and
// the scope claim carry them.
func FormatScope(scopes []string) string {
	return strings.Join(scopes, " ")
}

// Covers reports whether granted scopes allow an action that needs the
// scope needed: needed is among them, or needed is ScopeRead and
// ScopeWrite is among them. An empty needed is covered by nothing.
func Covers(granted []string, needed string) bool {
	if needed == "" {
		return false
	}
	for _, g := range granted {
		if g == needed || g == ScopeWrite && needed == ScopeRead {
			return true
		}
	}
	return false
}

// KOmcp's scopes (seed 003), accepted in requests when the komcp compatibility mode is on and
// translated onto ownsona's by TranslateScope. KOmcp's only tool searches notes, so a client
// written for it needs to read and nothing more: all three grant ScopeRead, never ScopeWrite
// ("execute" there means calling that search tool). A client that wants to write asks for
// ScopeWrite by its own name.
const (
	ScopeKOmcpToolsRead    = "mcp:tools:read"
	ScopeKOmcpToolsExecute = "mcp:tools:execute"
	ScopeKOmcpNotesSearch  = "kura:notes:search"
)

// KOmcpScopes are KOmcp's scopes in its documents' order, and KOmcpScopeMap what each grants.
var (
	KOmcpScopes   = []string{ScopeKOmcpToolsRead, ScopeKOmcpToolsExecute, ScopeKOmcpNotesSearch}
	KOmcpScopeMap = map[string]string{
		ScopeKOmcpToolsRead:    ScopeRead,
		ScopeKOmcpToolsExecute: ScopeRead,
		ScopeKOmcpNotesSearch:  ScopeRead,
	}
)

// TranslateScope rewrites each space-separated token of the scope parameter s that aliases
// names into the scope it maps to, leaving the others (and the spacing) as they are, for
// ParseRequestScope to check.
func TranslateScope(s string, aliases map[string]string) string {
	if len(aliases) == 0 {
		return s
	}
	toks := strings.Split(s, " ")
	for i, tok := range toks {
		if to, ok := aliases[tok]; ok {
			toks[i] = to
		}
	}
	return strings.Join(toks, " ")
}
