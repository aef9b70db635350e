package mcp

// The Streamable HTTP transport (MCP 2025-11-25, basic/transports "Streamable HTTP"): POST
// answers application/json, or an event stream when the call sends messages before its answer;
// GET opens the server's stream; DELETE ends a session. Sessions are optional: a request without
// Mcp-Session-Id is served on its own.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/jsonrpc"
)

// sessionHeader is the header of the session id (header names are case-insensitive).
const sessionHeader = "Mcp-Session-Id"

// ServeHTTP is the Streamable HTTP endpoint.
//
// POST carries one JSON-RPC message (or a batch, at revisions that have them). It answers:
//
//   - 415 unless Content-Type is application/json (parameters allowed, charset utf-8 only);
//   - 400 for an MCP-Protocol-Version it does not support, with data{requested, supported};
//   - 404 for an Mcp-Session-Id that names no live session of the caller (ended, expired, or
//     another owner's): the client must initialize again;
//   - 413 for a body over 4 MiB;
//   - 400 for a parse error or an invalid request (nothing ran);
//   - 200 with the response, also when that response is a JSON-RPC error: application/json,
//     or text/event-stream when the client accepts it and a call sent messages before its
//     answer (progress, log messages, requests to the client), the answer being the last event;
//   - 202 (when Accept lists text/event-stream, as MCP clients' does) or 204 (plain JSON-RPC
//     callers) with no body when the message held only notifications or responses.
//
// A successful initialize without Mcp-Session-Id starts a session: the response carries its id,
// and requests that send it back share the negotiated revision, client info, log level,
// subscriptions and cancellation.
//
// GET opens the session's stream (or, without Mcp-Session-Id, a stream of list changes only):
// 406 unless Accept lists text/event-stream, 409 when the session already has one. It carries
// notifications/resources/updated for subscribed resources and list changes, with SSE comments
// every KeepAlive. Event ids are not sent, so streams are not resumed with Last-Event-ID.
//
// DELETE with Mcp-Session-Id ends the session (204): its calls are cancelled and its stream
// closes.
//
// The request's context is the handlers' context. It reads no tokens: authentication and
// origin checks are the caller's middleware, and Owner tells sessions apart.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.servePost(w, r)
	case http.MethodGet:
		s.serveStream(w, r)
	case http.MethodDelete:
		s.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.InvalidRequest(fmt.Sprintf("method %s is not allowed; POST JSON-RPC messages to this endpoint", r.Method)))
	}
}

func (s *Server) owner(r *http.Request) string {
	if s.Owner == nil {
		return ""
	}
	return s.Owner(r.Context())
}

// protocolHeader checks MCP-Protocol-Version: "" when absent; false (with the answer written)
// when it is repeated or unsupported.
func protocolHeader(w http.ResponseWriter, r *http.Request) (string, bool) {
	versions := r.Header.Values("MCP-Protocol-Version")
	version := ""
	if len(versions) > 0 {
		version = versions[0]
	}
	if len(versions) > 1 || version != "" && !slices.Contains(SupportedProtocolVersions, version) {
		writeError(w, http.StatusBadRequest, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: jsonrpc.MessageInvalidRequest,
			Data: map[string]any{"reason": "unsupported protocol version", "requested": strings.Join(versions, ", "), "supported": SupportedProtocolVersions}})
		return "", false
	}
	return version, true
}

// httpSession finds the session named by Mcp-Session-Id: (nil, true) when there is none; false
// (with the answer written) when the header is repeated or names no live session of the caller.
func (s *Server) httpSession(w http.ResponseWriter, r *http.Request, transport string) (*session, bool) {
	ids := r.Header.Values(sessionHeader)
	switch {
	case len(ids) == 0:
		return nil, true
	case len(ids) > 1:
		writeError(w, http.StatusBadRequest, jsonrpc.InvalidRequest("Mcp-Session-Id is repeated"))
		return nil, false
	}
	ss := s.lookup(ids[0], s.owner(r))
	if ss == nil || ss.transport != transport {
		writeError(w, http.StatusNotFound, jsonrpc.InvalidRequest("session not found: it ended or expired; send initialize without Mcp-Session-Id to start a new one"))
		return nil, false
	}
	return ss, true
}

// readBody reads a JSON-RPC body of at most 4 MiB; false (with the answer written) otherwise.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	mt, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeError(w, http.StatusUnsupportedMediaType, jsonrpc.InvalidRequest("Content-Type must be application/json"))
		return nil, false
	}
	if cs, ok := mp["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		writeError(w, http.StatusUnsupportedMediaType, jsonrpc.InvalidRequest("the charset must be utf-8"))
		return nil, false
	}
	if r.ContentLength > jsonrpc.MaxMessage {
		writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.TooLarge())
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, jsonrpc.MaxMessage))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.TooLarge())
			return nil, false
		}
		writeError(w, http.StatusBadRequest, jsonrpc.InvalidRequest("could not read the request body"))
		return nil, false
	}
	return body, true
}

// servePost classifies the POST once, from its body first (basic/versioning, "Backward
// Compatibility"): a request whose _meta declares a protocol version, or a body under a 2026-07-28
// MCP-Protocol-Version header, is served statelessly under that revision (serveModern);
// anything else in the legacy way, with optional sessions.
func (s *Server) servePost(w http.ResponseWriter, r *http.Request) {
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	if req, modern, status, e := s.classify(r, body); modern {
		if e != nil {
			var id json.RawMessage
			if req != nil {
				id = req.ID
			}
			writeBody(w, status, (&jsonrpc.Response{ID: id, Err: e}).Encode())
			return
		}
		s.serveModern(w, r, req)
		return
	}
	version, ok := protocolHeader(w, r)
	if !ok {
		return
	}
	ss, ok := s.httpSession(w, r, "http")
	if !ok {
		return
	}
	owner := s.owner(r)
	fresh := ss == nil
	if fresh { // a session of this request only, sharing its owner's calls
		ss = &session{transport: "http", owner: owner, calls: s.ownerCalls(owner)}
	}
	pw := &postWriter{w: w, rc: http.NewResponseController(w), sse: acceptsEventStream(r.Header.Values("Accept"))}
	msg := jsonrpc.GetMessageBuf()
	out, kind := s.handle(r.Context(), ss, version, body, pw.push, msg)
	if fresh && ss.initialized && !pw.started {
		s.promote(ss)
		w.Header().Set(sessionHeader, ss.id)
	}
	pw.finish(out, kind, pw.sse) // written before it returns: nothing keeps out
	jsonrpc.PutMessageBuf(out)
}

// serveModern answers a 2026-07-28 request that classify accepted: no session is looked up or
// started (an Mcp-Session-Id is ignored), and the answer is JSON or, when the call sends
// messages first, an event stream. An error that the transport pins to a status (-32601 is
// 404; -32020, -32021 and -32022 are 400) is sent with it; other errors are in-band, 200.
func (s *Server) serveModern(w http.ResponseWriter, r *http.Request, req *jsonrpc.Message) {
	if req.ID == nil { // 2026-07-28 has no client notifications over HTTP; accepted and ignored
		w.WriteHeader(http.StatusAccepted)
		return
	}
	owner := s.owner(r)
	ss := &session{transport: "http", owner: owner, calls: s.ownerCalls(owner)}
	pw := &postWriter{w: w, rc: http.NewResponseController(w), sse: acceptsEventStream(r.Header.Values("Accept"))}
	resp := s.exec(ss, s.begin(r.Context(), ss, req, r.Header.Get("MCP-Protocol-Version"), pw.push))
	if resp == nil { // the client went, and no one reads an answer
		return
	}
	status := http.StatusOK
	if resp.Err != nil {
		status = modernStatus(resp.Err.Code)
	}
	out := resp.AppendTo(jsonrpc.GetMessageBuf())
	pw.answer(out, status) // written before it returns: nothing keeps out
	jsonrpc.PutMessageBuf(out)
}

// classify decides whether a POST is a 2026-07-28 request and, if it is, validates what the
// transport requires of one before anything runs (basic/transports/streamable-http, "Server
// Validation"). A POST is modern when its _meta declares a protocol version or its
// MCP-Protocol-Version header names a modern one; anything else is left to the legacy path.
//
// The checks, in the order that decides which error a request failing several gets: a JSON-RPC
// shape error, no batches (-32600); the MCP-Protocol-Version header present, single and equal
// to _meta's version (-32020); that version one this server speaks (-32022, listing every
// revision); the method part of 2026-07-28 (-32601, 404); Mcp-Method, and Mcp-Name for the
// methods that mirror a name, present and equal to the body (-32020); the _meta members that
// revision requires (-32602). The method comes right after the version because the version
// alone decides it: initialize or ping under a 2026-07-28 header is a method that revision
// does not have, whatever its headers and params say, and -32601 with 404 is the modern error
// a client recognizes for it (streamable-http, "Backward Compatibility"). Every other error
// is 400. e is the error to answer with status, and req's id whenever it could be read.
//
// One mismatch is served rather than refused, because a real client sends it on every call:
// Claude's connectors negotiate 2026-07-28 with server/discover, then send its _meta under a
// stale "MCP-Protocol-Version: 2025-11-25" (anthropics/claude-code #93290). A single header
// naming a legacy revision this server speaks, under a _meta naming a newer revision it
// speaks, is served under _meta's revision (versionMix); the mirrored headers a transport
// that believes itself legacy leaves out (Mcp-Method, Mcp-Name, Mcp-Param-*) may then be
// absent, but any that is sent must still match the body, and _meta must still hold what its
// revision requires. The spec lets intermediaries trust mirrored headers only under a header
// naming a revision that validates them (streamable-http, "Server Validation"), so none
// routes on this request's. Every other disagreement stays -32020: a header newer than _meta,
// a header naming a revision this server does not speak or another modern one, a repeated
// header. OnWarning is told once per owner.
func (s *Server) classify(r *http.Request, body []byte) (req *jsonrpc.Message, modern bool, status int, e *jsonrpc.Error) {
	versions := r.Header.Values("MCP-Protocol-Version")
	header := ""
	if len(versions) > 0 {
		header = versions[0]
	}
	headerModern := slices.Contains(ModernProtocolVersions, header)
	reqs, batch, fail := jsonrpc.DecodeMessage(body)
	if fail != nil {
		if headerModern {
			return nil, true, http.StatusBadRequest, fail
		}
		return nil, false, 0, nil
	}
	if batch {
		for i := range reqs {
			if headerModern || declaresVersion(&reqs[i]) {
				return nil, true, http.StatusBadRequest, jsonrpc.InvalidRequest("batches are not part of protocol version " + ModernProtocolVersion)
			}
		}
		return nil, false, 0, nil
	}
	req = &reqs[0]
	if !declaresVersion(req) && !headerModern {
		return req, false, 0, nil
	}
	bad := func(status int, e *jsonrpc.Error) (*jsonrpc.Message, bool, int, *jsonrpc.Error) {
		return req, true, status, e
	}
	switch {
	case req.IsResponse:
		return bad(http.StatusBadRequest, jsonrpc.InvalidRequest("a client sends no responses in protocol version "+ModernProtocolVersion))
	case req.Invalid != nil:
		return bad(http.StatusBadRequest, req.Invalid)
	case req.BadParams != nil:
		return bad(http.StatusBadRequest, req.BadParams)
	}
	p, _ := jsonrpc.Members(req.Params)
	rm, _, metaErr := readMeta(p)
	// The version the request claims: _meta's, else (no _meta, or one without a version) the
	// header's, which then must itself be modern.
	version := header
	if rm.modern {
		if rm.version == "" && metaErr != nil { // its protocolVersion is not a string
			return bad(http.StatusBadRequest, asError(metaErr))
		}
		version = rm.version
	}
	mix := false // served under _meta's revision despite an older header (see above)
	switch {
	case len(versions) == 0:
		return bad(http.StatusBadRequest, headerMismatch("the MCP-Protocol-Version header is required"))
	case len(versions) == 1 && rm.modern && versionMix(header, version):
		mix = true
	case len(versions) > 1 || header != version:
		return bad(http.StatusBadRequest, headerMismatch(fmt.Sprintf("MCP-Protocol-Version %q does not match _meta %q", strings.Join(versions, ", "), version)))
	case !slices.Contains(ModernProtocolVersions, version):
		return bad(http.StatusBadRequest, unsupportedVersion(version))
	}
	served := func() (*jsonrpc.Message, bool, int, *jsonrpc.Error) {
		if mix {
			s.warnOnce(r.Context(), WarnVersionHeader, rm.client, fmt.Sprintf(
				"MCP-Protocol-Version %q with _meta protocol version %q: served under %s (a client bug, anthropics/claude-code #93290)", header, version, version))
		}
		return req, true, 0, nil
	}
	if req.ID == nil { // a notification carries no required _meta and needs no Mcp-Method
		return served()
	}
	if !modernMethod(req.Method) || !knownMethod(req.Method) {
		return bad(http.StatusNotFound, jsonrpc.MethodNotFound(req.Method))
	}
	methods := r.Header.Values("Mcp-Method")
	switch {
	case len(methods) == 0 && mix: // mirrored only by a transport that knows its revision
	case len(methods) == 0:
		return bad(http.StatusBadRequest, headerMismatch("the Mcp-Method header is required"))
	case len(methods) > 1 || methods[0] != req.Method:
		return bad(http.StatusBadRequest, headerMismatch(fmt.Sprintf("Mcp-Method %q does not match the body's method %q", strings.Join(methods, ", "), req.Method)))
	}
	if key := nameKey(req.Method); key != "" {
		want, _, _ := str(p, key, key)
		names := r.Header.Values("Mcp-Name")
		switch {
		case len(names) == 0 && mix:
		case len(names) == 0:
			return bad(http.StatusBadRequest, headerMismatch("the Mcp-Name header is required for "+req.Method))
		default:
			got, ok := decodeHeaderValue(names[0])
			if len(names) > 1 || !ok || got != want {
				return bad(http.StatusBadRequest, headerMismatch(fmt.Sprintf("Mcp-Name %q does not match the body's %s %q", names[0], key, want)))
			}
		}
	}
	switch {
	case metaErr != nil:
		return bad(http.StatusBadRequest, asError(metaErr))
	case !rm.modern:
		return bad(http.StatusBadRequest, jsonrpc.InvalidParams("_meta."+metaProtocolVersion, "is required under MCP-Protocol-Version "+header))
	}
	if req.Method == "tools/call" {
		if e := s.checkParamHeaders(r.Header.Values, p, mix); e != nil {
			return bad(http.StatusBadRequest, e)
		}
	}
	return served()
}

// versionMix reports whether a request with MCP-Protocol-Version header and _meta protocol
// version body is served under body's revision: header a legacy revision this server speaks,
// body a newer stateless one it speaks (see classify).
func versionMix(header, body string) bool {
	return slices.Contains(SupportedProtocolVersions, header) && slices.Contains(ModernProtocolVersions, body) && body > header
}

// nameKey is the params member Mcp-Name mirrors for a method; "" when it has none.
func nameKey(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "name"
	case "resources/read":
		return "uri"
	}
	return ""
}

// knownMethod reports whether method is an MCP request method this package serves (whether
// this Server offers it is decided when it runs).
func knownMethod(method string) bool {
	_, ok := methodKeys[method]
	return ok
}

// decodeHeaderValue undoes the Base64 sentinel of Mcp-Name and Mcp-Param-* values
// ("=?base64?…?="); plain values must be visible ASCII, space or tab, without leading or
// trailing space.
func decodeHeaderValue(v string) (string, bool) {
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			// Padded and canonical, as the sentinel's definition (RFC 4648 base64) has it: the
			// conformance suite's table refuses "SGVsbG8" for "Hello".
			b, err := base64.StdEncoding.Strict().DecodeString(inner)
			if err != nil {
				return "", false
			}
			return string(b), utf8.Valid(b)
		}
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != '\t' && (c < 0x20 || c > 0x7e) {
			return "", false
		}
	}
	return v, strings.TrimSpace(v) == v
}

// promote turns the session of an initialize request into an HTTP session.
func (s *Server) promote(ss *session) {
	tmp := s.openSession("http", ss.owner)
	s.live().remove(tmp)
	ss.mu.Lock()
	ss.id, ss.out, ss.calls, ss.lastUsed = tmp.id, tmp.out, &callSet{}, tmp.lastUsed
	ss.mu.Unlock()
	s.live().add(ss)
}

// ownerCalls is the call set shared by an owner's requests without a session. Sets are made
// per request and share nothing when Owner is nil, so that strangers cannot cancel each
// other's calls; with an owner they are kept while the owner has calls in flight.
func (s *Server) ownerCalls(owner string) *callSet {
	if s.Owner == nil {
		return &callSet{}
	}
	l := s.live()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.owners == nil {
		l.owners = map[string]*callSet{}
	}
	for o, cs := range l.owners { // forget idle owners; the map stays as small as the active owners
		if o != owner && cs.idle() {
			delete(l.owners, o)
		}
	}
	cs := l.owners[owner]
	if cs == nil {
		cs = &callSet{}
		l.owners[owner] = cs
	}
	return cs
}

func (cs *callSet) idle() bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m) == 0
}

// postWriter answers a POST: application/json once the answer is known, unless a call pushed a
// message before, which turns the answer into an event stream.
type postWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	sse bool // the client accepts text/event-stream

	mu      sync.Mutex
	started bool // the event stream's header is written
	failed  bool
}

// push sends a message on the event stream, starting it; false when the client does not take
// event streams or the connection failed.
func (p *postWriter) push(b []byte) bool {
	if !p.sse {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.failed {
		return false
	}
	if !p.started {
		p.started = true
		startStream(p.w, p.rc)
	}
	if b == nil { // a keep-alive comment line
		if _, err := io.WriteString(p.w, ": keepalive\n\n"); err != nil || p.rc.Flush() != nil {
			p.failed = true
			return false
		}
		return true
	}
	if err := writeEvent(p.w, p.rc, "message", b); err != nil {
		p.failed = true
		return false
	}
	return true
}

func (p *postWriter) finish(out []byte, kind outcome, sse bool) {
	switch kind {
	case outNone:
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.started {
			return
		}
		if sse {
			p.w.WriteHeader(http.StatusAccepted)
		} else {
			p.w.WriteHeader(http.StatusNoContent)
		}
	case outBad:
		p.answer(out, http.StatusBadRequest)
	default:
		p.answer(out, http.StatusOK)
	}
}

// answer sends the response with status or, when the event stream has started (its status was
// 200), as its last event.
func (p *postWriter) answer(out []byte, status int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.started {
		if out != nil && !p.failed {
			writeEvent(p.w, p.rc, "message", out)
		}
		return
	}
	writeBody(p.w, status, out)
}

// serveStream is GET: the session's stream of messages unrelated to any request.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request) {
	if !acceptsEventStream(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, jsonrpc.InvalidRequest("GET opens an event stream: Accept must list text/event-stream"))
		return
	}
	if _, ok := protocolHeader(w, r); !ok {
		return
	}
	ss, ok := s.httpSession(w, r, "http")
	if !ok {
		return
	}
	if ss == nil { // list changes only, for as long as the stream is open
		ss = &session{transport: "http", owner: s.owner(r), out: newOutbox(), calls: &callSet{}}
		s.live().add(ss)
		defer s.endSession(ss)
	} else {
		ss.mu.Lock()
		busy := ss.streaming
		ss.streaming = true
		ss.mu.Unlock()
		if busy {
			writeError(w, http.StatusConflict, jsonrpc.InvalidRequest("this session already has an open GET stream"))
			return
		}
		defer func() {
			ss.mu.Lock()
			ss.streaming = false
			ss.lastUsed = s.now()
			ss.mu.Unlock()
		}()
	}
	rc := http.NewResponseController(w)
	startStream(w, rc)
	s.pump(w, r, rc, ss.out)
}

// keepAlive ticks every KeepAlive (25 s if unset), for the comment lines of long streams.
func (s *Server) keepAlive() *time.Ticker {
	every := s.KeepAlive
	if every <= 0 {
		every = 25 * time.Second
	}
	return time.NewTicker(every)
}

// pump writes the outbox's messages as events until the outbox closes, the client goes or the
// server shuts down, with a comment line every KeepAlive.
func (s *Server) pump(w http.ResponseWriter, r *http.Request, rc *http.ResponseController, out *outbox) {
	tick := s.keepAlive()
	defer tick.Stop()
	for {
		select {
		case b := <-out.ch:
			out.took(b)
			if writeEvent(w, rc, "message", b) != nil {
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": keepalive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-out.done:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func (s *Server) serveDelete(w http.ResponseWriter, r *http.Request) {
	if len(r.Header.Values(sessionHeader)) == 0 {
		writeError(w, http.StatusBadRequest, jsonrpc.InvalidRequest("DELETE ends a session: send its Mcp-Session-Id"))
		return
	}
	ss, ok := s.httpSession(w, r, "http")
	if !ok {
		return
	}
	s.endSession(ss)
	w.WriteHeader(http.StatusNoContent)
}

// startStream writes the header of an event stream. Streams outlive the server's write
// timeout, so the deadline is lifted.
func startStream(w http.ResponseWriter, rc *http.ResponseController) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	rc.SetWriteDeadline(time.Time{})
	rc.SetReadDeadline(time.Time{}) // the request is read; its deadline must not end the stream
	w.WriteHeader(http.StatusOK)
	rc.Flush()
}

// writeEvent writes one server-sent event, a data line for each line of data.
func writeEvent(w http.ResponseWriter, rc *http.ResponseController, event string, data []byte) error {
	var b strings.Builder
	b.WriteString("event: ")
	b.WriteString(event)
	b.WriteByte('\n')
	for line := range strings.Lines(string(data)) {
		b.WriteString("data: ")
		b.WriteString(strings.TrimRight(line, "\r\n"))
		b.WriteByte('\n')
	}
	b.WriteByte('\n')
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return rc.Flush()
}

func acceptsEventStream(accept []string) bool {
	for _, a := range accept {
		for part := range strings.SplitSeq(a, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/event-stream") {
				return true
			}
		}
	}
	return false
}

func writeError(w http.ResponseWriter, status int, e *jsonrpc.Error) {
	writeBody(w, status, (&jsonrpc.Response{Err: e}).Encode())
}

func writeBody(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}
