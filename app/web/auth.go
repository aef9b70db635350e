package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/rpc"
)

// codeAuthorization is DESIGN.md's JSON-RPC error code for authorization errors.
const codeAuthorization = -32003

// codeToolHidden is DESIGN.md's code for a tool left out by the OWNSONA_TOOLS allowlist.
const codeToolHidden = -32000

// owner is rpc.Server.Owner: an HTTP session belongs to the principal that started it (the
// OAuth client or the personal access token; SECURITY.md MT-03), so another client's token
// gets 404 for it. A hosted connector that re-registers starts a new session, as the spec asks
// of a client that meets 404.
func owner(ctx context.Context) string {
	if p, ok := oauth.PrincipalFrom(ctx); ok {
		return principalKey(p)
	}
	return ""
}

// openAuth opens the OAuth server for publicURL and, on a first start without a configured
// password, shows the generated one once on stderr.
func (a *App) openAuth(publicURL string, stderr io.Writer) error {
	s, err := oauth.New(oauth.Config{
		PublicURL: publicURL, DB: a.db, Username: a.cfg.LoginUsername, Password: a.cfg.LoginPassword,
		AccessTokenTTL: a.cfg.AccessTokenTTL, CustomSchemes: a.cfg.RedirectSchemes, RedirectHosts: a.cfg.RedirectHosts,
		MetadataHosts: a.cfg.MetadataHosts, ClientIP: a.clientIP, Now: a.now, Log: a.log,
	})
	if err != nil {
		return usageErr("oauth: %v", err)
	}
	a.auth = s
	if pw := s.GeneratedPassword(); pw != "" {
		// Deliberately not a log line: it is shown once, to the person starting the server, and
		// only its hash is kept.
		fmt.Fprintf(stderr, "\nownsona: no OWNSONA_LOGIN_PASSWORD was set, so one was generated.\n"+
			"  Log in to authorize clients as:  %s\n  with the password:              %s\n"+
			"It is shown only this once; only its hash is stored in %s.\n\n", s.Username(), pw, a.cfg.DB)
	}
	return nil
}

// clientIP is the address a request comes from: RemoteAddr, or, when that is a trusted proxy,
// the nearest X-Forwarded-For address that is not one.
func (a *App) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if !a.trusted(host) {
		return host
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for part := range strings.SplitSeq(v, ",") {
			hops = append(hops, strings.TrimSpace(part))
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		ip, err := netip.ParseAddr(hops[i])
		if err != nil {
			return host // a garbled chain: fall back to the proxy itself
		}
		if !a.trusted(ip.String()) {
			return ip.String()
		}
	}
	return host
}

func (a *App) trusted(ip string) bool {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, c := range a.cfg.TrustedProxies {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// toolScope is the scope a tool needs: read-only tools need memories:read, the rest
// memories:write.
func toolScope(t *rpc.Tool) string {
	if t.Annotations != nil && t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint {
		return policy.ScopeRead
	}
	return policy.ScopeWrite
}

// neededScope is the scope the tool called name needs, and whether there is such a tool (an
// unknown one needs memories:write, the most a token can hold).
func (a *App) neededScope(name string) (string, bool) {
	if t := a.tool(name); t != nil {
		return toolScope(t), true
	}
	return policy.ScopeWrite, false
}

// permit is rpc.Server.Permit: a token sees and calls only the tools its scopes cover. Calls
// without a principal come from stdio, whose client started the process.
func (a *App) permit(ctx context.Context, name string) error {
	if len(a.cfg.Tools) > 0 && !slices.Contains(a.cfg.Tools, name) {
		return &rpc.Error{Code: codeToolHidden, Message: "tool not in allowlist",
			Data: map[string]string{"tool": name, "reason": "this server exposes only the tools in OWNSONA_TOOLS"}}
	}
	p, ok := oauth.PrincipalFrom(ctx)
	if !ok {
		return nil
	}
	needed, _ := a.neededScope(name)
	if p.Can(needed) {
		return nil
	}
	return &rpc.Error{Code: codeAuthorization, Message: "insufficient scope",
		Data: map[string]string{"error": "insufficient_scope", "error_description": fmt.Sprintf("tool %s needs the scope %s", name, needed), "scope": needed}}
}

func (a *App) tool(name string) *rpc.Tool {
	for _, t := range a.mcp.Tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// requireAuth guards the MCP endpoint: a valid bearer token, and for a tools/call the scope the
// tool needs (403 with a step-up challenge). The principal goes into the request's context for
// the tools (source_client) and for rpc.Server.Permit, which enforces scopes again for every
// message, batches included.
func (a *App) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slot := slotFrom(r.Context())
		p, ref := a.auth.Authenticate(r)
		if ref != nil {
			if !a.allowKey(w, a.ipKey(r)) { // token guessing is limited by address
				return
			}
			ev := a.log.Info()
			if ref.Code == "" {
				ev = a.log.Debug() // clients first try without a token to discover the server
			}
			ev.Str("ip", a.clientIP(r)).Str("error", ref.Code).Str("reason", ref.Description).Msg("mcp request refused")
			a.auth.Challenge(w, ref)
			writeRPCError(w, ref.Status, nil, rpc.CodeInvalidRequest, "unauthorized", ref.Code, ref.Description)
			return
		}
		if slot != nil {
			slot.p = p
		}
		if !a.allowKey(w, principalKey(p)) {
			return
		}
		if r.Method == http.MethodPost && r.ContentLength <= maxPeek {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
			if err != nil {
				writeRPCError(w, http.StatusBadRequest, nil, rpc.CodeInvalidRequest, "could not read the request body", "invalid_request", err.Error())
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			msgs := peekMessages(body)
			if slot != nil && len(msgs) > 0 {
				slot.method, slot.tool = msgs[0].Method, msgs[0].Params.Name
				if len(msgs) > 1 {
					slot.method, slot.tool = fmt.Sprintf("batch:%d", len(msgs)), ""
				}
			}
			if id, tool, needed := a.firstRefusedCall(p, msgs); needed != "" {
				a.log.Info().Str("client_id", p.ClientID).Str("tool", tool).Msg("tool call refused: insufficient scope")
				a.auth.Challenge(w, &oauth.Refusal{Code: "insufficient_scope", Scope: policy.FormatScope(policy.DefaultScopes)})
				writeRPCError(w, http.StatusForbidden, id, codeAuthorization, "insufficient scope", "insufficient_scope",
					fmt.Sprintf("tool %s needs the scope %s", tool, needed))
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(oauth.WithPrincipal(r.Context(), p)))
	})
}

// maxPeek is the largest body requireAuth reads ahead (the rpc server refuses larger ones).
const maxPeek = 4 << 20

// peekedMessage is what requireAuth reads of a message ahead of the rpc server.
type peekedMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

// peekMessages reads the messages of a body leniently: whatever it cannot parse is left to the
// rpc server, which refuses it.
func peekMessages(body []byte) []peekedMessage {
	var msgs []peekedMessage
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		_ = json.Unmarshal(trimmed, &msgs)
	} else {
		var m peekedMessage
		if json.Unmarshal(trimmed, &m) == nil {
			msgs = []peekedMessage{m}
		}
	}
	return msgs
}

// firstRefusedCall finds a tools/call among msgs that p's scopes do not cover and returns its
// id, tool and the scope it needs. rpc.Server.Permit refuses the same calls, also in messages
// this lenient reading missed.
func (a *App) firstRefusedCall(p *oauth.Principal, msgs []peekedMessage) (json.RawMessage, string, string) {
	for _, m := range msgs {
		if m.Method != "tools/call" {
			continue
		}
		needed, known := a.neededScope(m.Params.Name)
		if known && !p.Can(needed) { // unknown tools are the rpc server's to refuse
			return m.ID, m.Params.Name, needed
		}
	}
	return nil, "", ""
}

// writeRPCError answers with a JSON-RPC error whose data carries the OAuth error (DESIGN.md,
// "401 body").
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message, oauthCode, description string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data := map[string]string{"error_description": description}
	if oauthCode != "" {
		data["error"] = oauthCode
	} else {
		data["error"] = "unauthorized"
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": message, "data": data}})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
