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

// DefaultScopes are granted when a request names no scope.
var DefaultScopes = []string{ScopeRead, ScopeWrite}

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
