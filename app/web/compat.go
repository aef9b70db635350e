package web

// The opt-in compatibility modes for clients written for the seed systems (issue 27, item 7):
// what each changes on the HTTP side. Off by default: with none on, nothing here changes a
// byte of what the network sees. The tools' side (aliases, KOmcp's and Sophon's tools, seed
// 002's nextCursor) is app/tools' and mcp's, switched by the same setting.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
)

// Compat are the compatibility modes. The zero value is the default: none.
type Compat struct {
	// ONCE serves clients written for ONCE (seed 001): tokens in tool arguments are accepted as
	// with Config.AllowArgumentTokens (same safeguards), and the server card carries ONCE's
	// fields beside its own: transport.type, protocolVersion and capabilities.*.listChanged.
	ONCE bool
	// KOmcp serves clients written for KOmcp (seed 003): its scopes and the bare origin as a
	// resource at the authorization server (oauth.Compat), and refusals on the MCP endpoint in
	// its shape — 401 {error, error_description}, 403 {error: insufficient_scope,
	// error_description, scope}, 429 {error: rate_limit_exceeded, error_description,
	// retry_after} — instead of JSON-RPC errors.
	KOmcp bool
	// Sophon serves clients written for Sophon (seed 004). Its tools have dotted names, which
	// Claude refuses, so the mode is for Sophon's own clients. Nothing on the HTTP side changes
	// but the /docs page.
	Sophon bool
}

// String names the modes that are on, comma-separated as OWNSONA_COMPAT takes them, or "none".
func (c Compat) String() string {
	var on []string
	for _, m := range []struct {
		on   bool
		name string
	}{{c.ONCE, "once"}, {c.KOmcp, "komcp"}, {c.Sophon, "sophon"}} {
		if m.on {
			on = append(on, m.name)
		}
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

// SetCompat switches the compatibility modes, here and in the authorization server. It is safe
// to call at any time after New, also while requests are served: each request sees the modes
// before or after the switch.
func (s *Server) SetCompat(c Compat) {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	s.compat.Store(&c)
	if s.auth != nil {
		s.auth.SetCompat(oauth.Compat{KOmcp: c.KOmcp})
	}
}

// Compat returns the compatibility modes in force.
func (s *Server) Compat() Compat { return *s.compat.Load() }

// argumentTokens reports whether a tools/call may carry its token in its arguments:
// Config.AllowArgumentTokens, or the once mode.
func (s *Server) argumentTokens() bool {
	return s.cfg.AllowArgumentTokens || s.Compat().ONCE
}

// writeSeedError answers an MCP request with a refusal in seed 003's shape: a JSON object with
// error and error_description, and the members of extra.
func writeSeedError(w http.ResponseWriter, status int, code, description string, extra map[string]any) {
	body := map[string]any{"error": code, "error_description": description}
	for k, v := range extra {
		body[k] = v
	}
	buf, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(buf, '\n'))
}

// writeUnauthorized answers a refused token on the MCP endpoint: a JSON-RPC error whose data
// carries the OAuth error, or in the komcp mode seed 003's {"error":"unauthorized",…}.
func (s *Server) writeUnauthorized(w http.ResponseWriter, status int, id json.RawMessage, oauthCode, description string) {
	if s.Compat().KOmcp {
		writeSeedError(w, status, "unauthorized", description, nil)
		return
	}
	writeRPCError(w, status, id, jsonrpc.CodeInvalidRequest, jsonrpc.MessageInvalidRequest, oauthCode, description)
}

// writeInsufficientScope answers a call the token's scopes do not cover (403).
func (s *Server) writeInsufficientScope(w http.ResponseWriter, id json.RawMessage, tool, needed, all string) {
	if s.Compat().KOmcp {
		writeSeedError(w, http.StatusForbidden, "insufficient_scope", "Token lacks required scopes: "+needed,
			map[string]any{"scope": all})
		return
	}
	writeRPCError(w, http.StatusForbidden, id, mcp.CodeAuthorization, "insufficient scope", "insufficient_scope",
		fmt.Sprintf("tool %s needs the scope %s", tool, needed))
}

// writeRateLimited answers an MCP request over its rate limit (429; Retry-After is set): a
// JSON-RPC error -32004, or in the komcp mode seed 003's {"error":"rate_limit_exceeded",…}.
func (s *Server) writeRateLimited(w http.ResponseWriter, retry int, id json.RawMessage) {
	if s.Compat().KOmcp {
		writeSeedError(w, http.StatusTooManyRequests, "rate_limit_exceeded",
			fmt.Sprintf("Too many requests. Please wait %d seconds.", retry), map[string]any{"retry_after": retry})
		return
	}
	writeRateLimited(w, retry, id)
}

// onceCard adds ONCE's fields to the server card: transport.type, protocolVersion and
// capabilities.tools/resources.listChanged. protocolVersion is 2024-11-05, the revision ONCE's
// clients were written for, which this server serves; the card's remotes list every revision.
// listChanged says what initialize says: true where this server announces changes (the
// console's tool allowlist can change at run time), where ONCE says false; a client that
// ignores the notifications loses nothing.
func (s *Server) onceCard(card map[string]any) {
	announces := func(kind string) bool { return slices.Contains(s.cfg.MCP.ListChanged, kind) }
	card["transport"] = map[string]any{"type": "streamable-http"}
	card["protocolVersion"] = onceProtocolVersion
	card["capabilities"] = map[string]any{
		"tools":     map[string]any{"listChanged": announces("tools")},
		"resources": map[string]any{"listChanged": announces("resources")},
	}
}

// onceProtocolVersion is the protocolVersion of the server card in the once mode (seed 001).
const onceProtocolVersion = "2024-11-05"
