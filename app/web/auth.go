package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"

	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/rpc"
)

// openAuth opens the OAuth server for publicURL and, on a first start without a configured
// password, shows the generated one once on Stderr.
func (s *Server) openAuth(publicURL string) error {
	cfg := s.cfg.OAuth
	cfg.PublicURL, cfg.ClientIP = publicURL, s.clientIP
	if cfg.Now == nil {
		cfg.Now = s.now
	}
	auth, err := oauth.New(cfg)
	if err != nil {
		return &SettingError{Setting: "oauth", Err: err}
	}
	s.auth = auth
	if pw := auth.GeneratedPassword(); pw != "" {
		stderr := s.cfg.Stderr
		if stderr == nil {
			stderr = os.Stderr
		}
		// Deliberately not a log line: it is shown once, to the person starting the server, and
		// only its hash is kept.
		fmt.Fprintf(stderr, "\nownsona: no OWNSONA_LOGIN_PASSWORD was set, so one was generated.\n"+
			"  Log in to authorize clients as:  %s\n  with the password:              %s\n"+
			"It is shown only this once; only its hash is stored in %s.\n\n", auth.Username(), pw, cfg.DB.Path())
	}
	return nil
}

// clientIP is the address a request comes from: RemoteAddr, or, when that is a trusted proxy,
// the nearest X-Forwarded-For address that is not one.
func (s *Server) clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if !s.trusted(host) {
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
		if !s.trusted(ip.String()) {
			return ip.String()
		}
	}
	return host
}

func (s *Server) trusted(ip string) bool {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	for _, c := range s.cfg.TrustedProxies {
		if p, err := netip.ParsePrefix(c); err == nil && p.Contains(addr.Unmap()) {
			return true
		}
	}
	return false
}

// requireAuth guards the MCP endpoint: a valid bearer token, and for a tools/call the scope the
// tool needs (403 with a step-up challenge). The principal goes into the request's context for
// the tools (source_client) and for rpc.Server.Permit, which enforces scopes again for every
// message, batches included.
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slot := slotFrom(r.Context())
		p, ref := s.auth.Authenticate(r)
		switch {
		case ref != nil: // no valid token: the shared pool, behind its address's share
			release, ok := s.admitOther(w, r)
			if !ok {
				return
			}
			defer release()
		case isStream(r):
			if !s.pools.perOwner.TryAcquire(p.Key()) {
				w.Header().Set("Retry-After", "10")
				writeRPCError(w, http.StatusTooManyRequests, nil, rpc.CodeRateLimited, "too many event streams",
					"too_many_streams", fmt.Sprintf("this client has %d event streams open, the most one client may; close one", maxStreamsPerPrincipal))
				return
			}
			defer s.pools.perOwner.Release(p.Key())
		default: // authenticated calls: a pool no other traffic can take
			if !s.pools.mcp.TryAcquire() {
				writeBusy(w, "the server is at its limit of concurrent requests")
				return
			}
			defer s.pools.mcp.Release()
		}
		// The body is read ahead (the rpc server refuses larger ones): refusals echo the
		// request's id, server/discover is told apart, and a call the token's scopes do not
		// cover is refused with a step-up challenge. An unauthenticated body is read only when
		// small: it is not worth more to whoever sent it.
		limit := int64(maxPeek)
		if ref != nil {
			limit = maxPeekAnonymous
		}
		var msgs []peekedMessage
		if r.Method == http.MethodPost && r.ContentLength <= limit && (ref == nil || r.ContentLength >= 0) {
			body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				writeRPCError(w, http.StatusBadRequest, nil, rpc.CodeInvalidRequest, "could not read the request body", "invalid_request", err.Error())
				return
			}
			// A chunked body longer than the peek goes on whole: the rpc server judges its size.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			if int64(len(body)) <= limit {
				msgs = peekMessages(body)
			}
		}
		var id json.RawMessage
		if len(msgs) == 1 {
			id = msgs[0].ID
		}
		if ref != nil {
			if !s.allowKey(w, s.ipKey(r), id) { // token guessing is limited by address
				return
			}
			ev := s.log.Info()
			if ref.Code == "" {
				ev = s.log.Debug() // clients first try without a token to discover the server
			}
			ev.Str("ip", s.clientIP(r)).Str("error", ref.Code).Str("reason", ref.Description).Msg("mcp request refused")
			s.auth.Challenge(w, ref)
			writeRPCError(w, ref.Status, id, rpc.CodeInvalidRequest, "unauthorized", ref.Code, ref.Description)
			return
		}
		if slot != nil {
			slot.p = p
		}
		// server/discover is a client's probe of the protocol era: a 429 there makes it settle
		// on the legacy era for good, so it is not rate limited. It is cheap and reveals nothing
		// a token does not already see.
		discover := len(msgs) == 1 && msgs[0].Method == "server/discover"
		if !discover && !s.allowKey(w, p.Key(), id) {
			return
		}
		if slot != nil && len(msgs) > 0 {
			slot.method, slot.tool, slot.agent = msgs[0].Method, msgs[0].Params.Name, msgs[0].agent()
			if len(msgs) > 1 {
				slot.method, slot.tool = fmt.Sprintf("batch:%d", len(msgs)), ""
			}
		}
		if id, tool, needed := s.firstRefusedCall(p, msgs); needed != "" {
			s.log.Info().Str("client_id", p.ClientID).Str("tool", tool).Msg("tool call refused: insufficient scope")
			s.auth.Challenge(w, &oauth.Refusal{Code: "insufficient_scope", Scope: policy.FormatScope(policy.DefaultScopes)})
			writeRPCError(w, http.StatusForbidden, id, rpc.CodeAuthorization, "insufficient scope", "insufficient_scope",
				fmt.Sprintf("tool %s needs the scope %s", tool, needed))
			return
		}
		next.ServeHTTP(w, r.WithContext(oauth.WithPrincipal(r.Context(), p)))
	})
}

// maxPeek is the largest body requireAuth reads ahead (the rpc server refuses larger ones), and
// maxPeekAnonymous the largest without a valid token.
const (
	maxPeek          = 4 << 20
	maxPeekAnonymous = 64 << 10
)

// peekedMessage is what requireAuth reads of a message ahead of the rpc server.
type peekedMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
		// Raw, so that a malformed one does not hide the rest of the message.
		ClientInfo json.RawMessage `json:"clientInfo"` // of initialize
		Meta       json.RawMessage `json:"_meta"`      // of 2026-07-28 requests: io.modelcontextprotocol/clientInfo
	} `json:"params"`
}

// agent is the client software as the message names itself: "name version", or "".
func (m peekedMessage) agent() string {
	var ci struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	var meta struct {
		ClientInfo json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
	}
	_ = json.Unmarshal(m.Params.Meta, &meta)
	if json.Unmarshal(meta.ClientInfo, &ci) != nil || ci.Name == "" {
		ci.Name, ci.Version = "", ""
		if json.Unmarshal(m.Params.ClientInfo, &ci) != nil {
			return ""
		}
	}
	return strings.TrimSpace(ci.Name + " " + ci.Version)
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
func (s *Server) firstRefusedCall(p *oauth.Principal, msgs []peekedMessage) (json.RawMessage, string, string) {
	if s.cfg.Scope == nil {
		return nil, "", ""
	}
	for _, m := range msgs {
		if m.Method != "tools/call" {
			continue
		}
		needed, known := s.cfg.Scope(m.Params.Name)
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
