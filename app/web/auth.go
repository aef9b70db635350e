package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
)

// openAuth opens the OAuth server for publicURL and, on a first start without a configured
// password, shows the generated one once on Stderr.
func (s *Server) openAuth(publicURL string) error {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	cfg := s.cfg.OAuth
	cfg.PublicURL, cfg.ClientIP = publicURL, s.clientIP
	cfg.Compat = oauth.Compat{KOmcp: s.Compat().KOmcp}
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
		// only its hash is kept. The file is named by its absolute path: the notice is read
		// later, from elsewhere, when the password is needed.
		file := cfg.DB.Path()
		if abs, err := filepath.Abs(file); err == nil {
			file = abs
		}
		where := "to authorize clients"
		if s.cfg.Console != nil {
			where = "to the console (" + publicURL + "/console) and to authorize clients"
		}
		fmt.Fprintf(stderr, "\nownsona: no OWNSONA_LOGIN_PASSWORD was set, so one was generated.\n"+
			"  Sign in %s with\n    username:  %s\n    password:  %s\n"+
			"It is shown only this once; only its hash is stored in %s.\n\n", where, auth.Username(), pw, file)
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
// the tools (source_client) and for mcp.Server.Permit, which enforces scopes again for every
// message, batches included. With Config.AllowArgumentTokens or the once mode, a POST without an
// Authorization header may carry its token in its tools/call arguments instead (argumentToken).
func (s *Server) requireAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slot := slotFrom(r.Context())
		p, ref := s.auth.Authenticate(r)
		var release func()
		var call *callSlot // the request's slot of the pool of calls, for Park
		defer func() {
			if release != nil {
				release()
			}
		}()
		switch {
		case ref != nil: // no valid token: the address's rate limit, then the shared pool
			// Before a byte of the body is read (SECURITY.md LA-11): token guessing and
			// anonymous bodies are limited by address.
			if !s.allowKey(w, s.ipKey(r), nil) {
				return
			}
			var ok bool
			if release, ok = s.admitOther(w, r); !ok {
				return
			}
		case isStream(r): // a GET: the streams' gates
			var ok bool
			if release, ok = s.admitStream(w, p.Key()); !ok {
				return
			}
		default: // authenticated calls: a pool no other traffic can take
			var ok bool
			if call, ok = s.admitCall(w, p.Key()); !ok {
				return
			}
			release = call.end
		}
		// The body is read ahead (the mcp server refuses larger ones): refusals echo the
		// request's id, server/discover is told apart, and a call the token's scopes do not
		// cover is refused with a step-up challenge. An unauthenticated body is read only when
		// small: it is not worth more to whoever sent it — unless it may carry its token in
		// its arguments (no Authorization header, AllowArgumentTokens).
		//
		// What is read is looked at only as far as needed (SECURITY.md LA-11): a batch over the
		// limit is refused before any element is decoded, and a body without a valid token is
		// never decoded whole: its id is scanned for, and its argument tokens walked to.
		limit := int64(maxPeek)
		noHeader := ref != nil && ref.Code == ""
		argTokens := s.argumentTokens()
		if ref != nil && !(noHeader && argTokens) {
			limit = maxPeekAnonymous
		}
		var msgs []peekedMessage
		var body []byte
		tooMany := false
		if r.Method == http.MethodPost && r.ContentLength <= limit && (limit == maxPeek || r.ContentLength >= 0) {
			var err error
			body, err = io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, jsonrpc.MessageInvalidRequest, "invalid_request",
					"could not read the request body: "+err.Error())
				return
			}
			// A chunked body longer than the peek goes on whole: the mcp server judges its size.
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			if int64(len(body)) > limit {
				body = nil
			}
			tooMany = batchOver(body, maxBatch)
			if tooMany {
				body = nil
			}
			if ref == nil {
				msgs = peekMessages(body)
			}
		}
		var id json.RawMessage
		switch {
		case len(msgs) == 1:
			id = msgs[0].ID
		case ref != nil:
			id = memberOf(body, "id")
		}
		if tooMany && (ref == nil || noHeader && argTokens) {
			// A client that may be served is told what is wrong; one that may not learns only
			// that it needs a token.
			if ref == nil && !s.allowKey(w, p.Key(), nil) {
				return
			}
			writeBatchTooLarge(w)
			return
		}
		if ref == nil && argTokens && mayCarryToken(body) {
			// The header wins (seed 001's order); a token also sent in the arguments is
			// ignored, and removed so that the tool's schema does not refuse it.
			if _, stripped, problem, found := argumentToken(body); found && problem == "" {
				r.Body = struct {
					io.Reader
					io.Closer
				}{bytes.NewReader(stripped), r.Body}
				r.ContentLength = int64(len(stripped))
			}
		}
		if noHeader && mayCarryToken(body) {
			if tok, stripped, problem, found := argumentToken(body); found {
				switch argRef := s.checkArgumentToken(r, problem, argTokens); {
				case argRef != nil:
					ref = argRef
				default:
					ap, aref := s.auth.AuthenticateToken(tok)
					if aref != nil {
						ref = aref
						break
					}
					// Authenticated: the tool sees its arguments without the token, and the call
					// moves to the authenticated pool; only now is the body read ahead whole.
					release()
					release = nil
					var ok bool
					if call, ok = s.admitCall(w, ap.Key()); !ok {
						return
					}
					release = call.end
					p, ref = ap, nil
					r.Body = struct {
						io.Reader
						io.Closer
					}{bytes.NewReader(stripped), r.Body}
					r.ContentLength = int64(len(stripped))
					if msgs = peekMessages(stripped); len(msgs) == 1 {
						id = msgs[0].ID
					}
				}
			}
		}
		if ref != nil { // the address's rate limit was applied before the body was read
			ev := s.log.Info()
			if ref.Code == "" {
				ev = s.log.Debug() // clients first try without a token to discover the server
			}
			ev.Str("ip", s.clientIP(r)).Str("error", ref.Code).Str("reason", ref.Description).Msg("mcp request refused")
			s.auth.Challenge(w, r, ref)
			if r.Header.Get("Authorization") == "" && wantsHTML(r) { // a person, in a browser
				s.writeMCPPage(w, r)
				return
			}
			s.writeUnauthorized(w, ref.Status, id, ref.Code, ref.Description)
			return
		}
		if slot != nil {
			slot.p = p
		}
		if r.Method == http.MethodPost && listens(msgs) {
			// A long-lived stream by its body, whatever Mcp-Method says (SECURITY.md LA-13): it
			// leaves the pool of calls for the streams' gates. A header that names a listen over
			// another method moves nothing; the mcp server refuses the mismatch, or serves the
			// legacy call in this pool.
			streamRelease, ok := s.admitStream(w, p.Key())
			if !ok {
				return
			}
			release()
			release, call = streamRelease, nil
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
			all := policy.FormatScope(policy.DefaultScopes)
			s.auth.Challenge(w, r, &oauth.Refusal{Code: "insufficient_scope", Scope: all})
			s.writeInsufficientScope(w, id, tool, needed, all)
			return
		}
		ctx := oauth.WithPrincipal(r.Context(), p)
		if call != nil {
			ctx = context.WithValue(ctx, callSlotKey{}, call)
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ---- tokens in tool arguments (seed 001, OWNSONA_ALLOW_ARGUMENT_TOKENS) ----

// Argument tokens serve JSON-RPC clients that cannot set an Authorization header: a tools/call
// sent without one may carry its token as the argument access_token, or accessToken (seed
// 001's order: the header, then access_token, then accessToken). The rules:
//
//   - only with Config.AllowArgumentTokens or the once compatibility mode; otherwise such a
//     call is refused like any call without a header (401), with a description that says why;
//   - only in tools/call arguments: initialize, tools/list and every other method need the
//     header;
//   - a batch is authenticated as a whole: every message in it must be a tools/call carrying
//     the same token, or the whole batch is refused;
//   - never over plain HTTP from another machine (checkArgumentToken);
//   - verified like a header token (AuthenticateToken: audience, scopes, revocation, personal
//     access tokens), limited per client like one, and removed from the arguments before the
//     mcp server sees them, so that schemas with additionalProperties: false accept the call
//     and no tool, log or audit entry ever holds it.

// mayCarryToken is a cheap look for an argument token's name before argumentToken walks the
// body. A name spelled with escapes slips past it, and stays in the arguments: the tool's schema
// refuses it, and without a header the call is refused.
func mayCarryToken(body []byte) bool {
	return bytes.Contains(body, []byte(`"access_token"`)) || bytes.Contains(body, []byte(`"accessToken"`))
}

// argumentTokenKeys are the argument names that may carry a token, in the order they are read.
var argumentTokenKeys = []string{"access_token", "accessToken"}

// argumentToken finds the token that the messages of body carry in their tools/call arguments,
// and returns it with body rewritten without it. found is false when no message carries one;
// problem, when not empty, says which rule the request breaks.
func argumentToken(body []byte) (tok string, stripped []byte, problem string, found bool) {
	objects, err := argumentObjects(body)
	if err != nil {
		return "", nil, "", false
	}
	var tokens []string
	for _, o := range objects {
		switch {
		case o.bad:
			return "", nil, problemMalformed, true
		case o.token != "":
			tokens = append(tokens, o.token)
		}
	}
	switch {
	case len(tokens) == 0:
		return "", nil, "", false
	case len(tokens) != len(objects) || slices.ContainsFunc(tokens, func(t string) bool { return t != tokens[0] }):
		return "", nil, problemBatch, true // every message must be a tools/call carrying the same token
	}
	stripped = slices.Clone(body)
	for i := len(objects) - 1; i >= 0; i-- { // from the end, so that earlier offsets hold
		o := objects[i]
		stripped = slices.Concat(stripped[:o.start], o.rewritten, stripped[o.end:])
	}
	return tokens[0], stripped, "", true
}

// What argumentToken reports of a request that breaks the rules.
const (
	problemMalformed = "the access_token (or accessToken) argument must be a non-empty string and appear once"
	problemBatch     = "a token in tool arguments authenticates only tools/call messages: in a batch, every message must be " +
		"a tools/call carrying the same access_token; initialize, tools/list and other methods need the Authorization header"
)

// checkArgumentToken refuses an argument token when the settings do not allow one (allowed:
// Config.AllowArgumentTokens or the once mode), when the request breaks the rules (problem), or
// when it came over plain HTTP from another machine; nil when the token may be verified.
func (s *Server) checkArgumentToken(r *http.Request, problem string, allowed bool) *oauth.Refusal {
	refuse := func(code, why string) *oauth.Refusal {
		return &oauth.Refusal{Status: http.StatusUnauthorized, Code: code, Scope: policy.FormatScope(policy.DefaultScopes), Description: why}
	}
	switch {
	case !allowed:
		return refuse("", "authorization required: send the token in the Authorization header as \"Bearer <token>\"; "+
			"tokens in tool arguments are accepted only when the server runs with OWNSONA_ALLOW_ARGUMENT_TOKENS=1 or OWNSONA_COMPAT=once")
	case problem != "":
		return refuse("invalid_request", problem)
	case !s.secureTransport(r):
		return refuse("invalid_request", "a token in tool arguments is refused over plain HTTP from another machine: it crossed the network "+
			"unencrypted (revoke it); use the server's https URL, or the Authorization header")
	}
	return nil
}

// secureTransport reports whether r reached this server without crossing a network in clear
// text: over TLS, from this machine (a local client, or a local proxy or tunnel that terminated
// TLS, unless its X-Forwarded-Proto says http), or through a trusted proxy whose
// X-Forwarded-Proto says https.
func (s *Server) secureTransport(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	peer, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		peer = r.RemoteAddr
	}
	proto := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Forwarded-Proto")))
	switch {
	case LoopbackHost(peer):
		return proto == "" || proto == "https"
	case s.trusted(peer):
		return proto == "https"
	}
	return false
}

// argumentObject is the arguments object of one tools/call message: its place in the body, and
// the object again without the token members.
type argumentObject struct {
	start, end int    // the object's bytes in the body
	rewritten  []byte // the object without access_token and accessToken; nil when it had neither
	token      string // the token it carried, by argumentTokenKeys' order; "" if none
	bad        bool   // a token member that is not a string, or appears twice
}

// argumentObjects walks body (one message or a batch) and returns, for each tools/call message
// in order, its arguments object (a message without one counts with a zero argumentObject).
// Everything it does not cut is left byte for byte as it was — duplicate keys included, for the
// mcp server to refuse (SECURITY.md MT-04).
func argumentObjects(body []byte) ([]argumentObject, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil {
		return nil, err
	}
	var out []argumentObject
	message := func() error {
		method, args, err := walkMessage(dec, body)
		if err != nil {
			return err
		}
		if method == "tools/call" {
			out = append(out, args)
		} else {
			out = append(out, argumentObject{})
		}
		return nil
	}
	switch first {
	case json.Delim('{'):
		if err := message(); err != nil {
			return nil, err
		}
	case json.Delim('['):
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return nil, err
			}
			if t != json.Delim('{') {
				return nil, errors.New("a batch element is not an object")
			}
			if err := message(); err != nil {
				return nil, err
			}
		}
	default:
		return nil, errors.New("not a JSON-RPC message")
	}
	return out, nil
}

// walkMessage reads one message object after its '{': its method and its params.arguments.
func walkMessage(dec *json.Decoder, body []byte) (method string, args argumentObject, err error) {
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", args, err
		}
		switch k {
		case "method":
			var raw json.RawMessage // not any: a method that is a huge array is not built
			if err := dec.Decode(&raw); err != nil {
				return "", args, err
			}
			_ = json.Unmarshal(raw, &method) // "" unless a string
		case "params":
			if !nextIs(dec, body, '{') {
				if err := skipValue(dec); err != nil {
					return "", args, err
				}
				continue
			}
			if _, err := dec.Token(); err != nil {
				return "", args, err
			}
			for dec.More() {
				pk, err := dec.Token()
				if err != nil {
					return "", args, err
				}
				if pk == "arguments" && nextIs(dec, body, '{') {
					if args, err = walkArguments(dec, body); err != nil {
						return "", args, err
					}
					continue
				}
				if err := skipValue(dec); err != nil {
					return "", args, err
				}
			}
			if _, err := dec.Token(); err != nil { // '}'
				return "", args, err
			}
		default:
			if err := skipValue(dec); err != nil {
				return "", args, err
			}
		}
	}
	_, err = dec.Token() // '}'
	return method, args, err
}

// walkArguments reads an arguments object and cuts its token members out of a copy.
func walkArguments(dec *json.Decoder, body []byte) (argumentObject, error) {
	o := argumentObject{start: skipSpace(body, int(dec.InputOffset()), ":")}
	if _, err := dec.Token(); err != nil { // '{'
		return o, err
	}
	type member struct{ start, end int }
	var kept []member
	found := map[string]string{}
	cut := false
	for dec.More() {
		start := skipSpace(body, int(dec.InputOffset()), ",")
		k, err := dec.Token()
		if err != nil {
			return o, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return o, err
		}
		key, _ := k.(string)
		if !slices.Contains(argumentTokenKeys, key) {
			kept = append(kept, member{start, int(dec.InputOffset())})
			continue
		}
		cut = true
		var v string
		if _, dup := found[key]; dup || json.Unmarshal(raw, &v) != nil {
			o.bad = true
		}
		found[key] = v
	}
	if _, err := dec.Token(); err != nil { // '}'
		return o, err
	}
	o.end = int(dec.InputOffset())
	if !cut {
		return argumentObject{}, nil
	}
	for _, key := range argumentTokenKeys {
		if v := found[key]; v != "" {
			o.token = v
			break
		}
	}
	if o.token == "" {
		o.bad = true // present, but empty
	}
	o.rewritten = append(o.rewritten, '{')
	for i, m := range kept {
		if i > 0 {
			o.rewritten = append(o.rewritten, ',')
		}
		o.rewritten = append(o.rewritten, body[m.start:m.end]...)
	}
	o.rewritten = append(o.rewritten, '}')
	return o, nil
}

// nextIs reports whether the next value the decoder reads starts with c.
func nextIs(dec *json.Decoder, body []byte, c byte) bool {
	i := skipSpace(body, int(dec.InputOffset()), ":,")
	return i < len(body) && body[i] == c
}

// skipSpace returns the offset of the first byte at or after i that is neither JSON whitespace
// nor one of the separators in seps.
func skipSpace(body []byte, i int, seps string) int {
	for i < len(body) && (strings.IndexByte(" \t\r\n", body[i]) >= 0 || strings.IndexByte(seps, body[i]) >= 0) {
		i++
	}
	return i
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// maxPeek is the largest body requireAuth reads ahead (the mcp server refuses larger ones), and
// maxPeekAnonymous the largest without a valid token.
const (
	maxPeek          = 4 << 20
	maxPeekAnonymous = 64 << 10
)

// peekedMessage is what requireAuth reads of a message ahead of the mcp server.
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
// mcp server, which refuses it.
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
// id, tool and the scope it needs. mcp.Server.Permit refuses the same calls, also in messages
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
		if known && !p.Can(needed) { // unknown tools are the mcp server's to refuse
			return m.ID, m.Params.Name, needed
		}
	}
	return nil, "", ""
}

// writeRPCError answers with a JSON-RPC error whose data carries the OAuth error (DESIGN.md,
// "401 body"): {error, error_description}. It follows mcp's rule for messages (mcp/doc.go,
// "Errors"): JSON-RPC 2.0's five codes carry the specification's own message ("Invalid
// Request" for -32600), whatever message says, and what went wrong is in data; other codes
// keep message, which names what was wrong.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, message, oauthCode, description string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if m, ok := specMessages[code]; ok {
		message = m
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

// specMessages are the messages of JSON-RPC 2.0's own codes, in its words.
var specMessages = map[int]string{
	jsonrpc.CodeParseError:     jsonrpc.MessageParseError,
	jsonrpc.CodeInvalidRequest: jsonrpc.MessageInvalidRequest,
	jsonrpc.CodeMethodNotFound: jsonrpc.MessageMethodNotFound,
	jsonrpc.CodeInvalidParams:  jsonrpc.MessageInvalidParams,
	jsonrpc.CodeInternalError:  jsonrpc.MessageInternalError,
}
