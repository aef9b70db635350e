package mcp

// The HTTP+SSE transport of MCP 2024-11-05 (basic/transports "HTTP with SSE"), kept for
// clients that predate Streamable HTTP: the client opens an event stream with GET, whose first
// event, "endpoint", names the URL to POST its messages to; every answer comes on the stream.

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
)

// legacyRunning bounds the requests running at once on one legacy session.
const legacyRunning = 8

// ServeLegacySSE opens a legacy session (GET): an "endpoint" event naming messageURL with
// sessionId=<id> added to its query, then each answer and notification as a "message" event,
// with comments every KeepAlive, until the client goes or the server shuts down, which ends the
// session. The session counts against MaxSessions and belongs to the caller's Owner.
func (s *Server) ServeLegacySSE(w http.ResponseWriter, r *http.Request, messageURL string) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.InvalidRequest("GET opens the event stream; POST messages to the endpoint it names"))
		return
	}
	ss := s.openSession("sse", s.owner(r))
	ss.mu.Lock()
	ss.streaming = true
	ss.mu.Unlock()
	defer s.endSession(ss)
	rc := http.NewResponseController(w)
	startStream(w, rc)
	sep := "?"
	if strings.Contains(messageURL, "?") {
		sep = "&"
	}
	endpoint := messageURL + sep + url.Values{"sessionId": {ss.id}}.Encode()
	if writeEvent(w, rc, "endpoint", []byte(endpoint)) != nil {
		return
	}
	s.pump(w, r, rc, ss.out)
}

// ServeLegacyMessage takes one message (POST ?sessionId=<id>) for a legacy session and answers
// 202 Accepted; the answer goes out on the session's stream. It answers 404 for an unknown
// session (or another owner's), and the same 4xx as ServeHTTP for a bad body. A session runs
// at most 8 requests at once; the POST of a ninth waits for a slot.
func (s *Server) ServeLegacyMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.InvalidRequest("POST JSON-RPC messages to this endpoint"))
		return
	}
	ids := r.URL.Query()["sessionId"]
	var ss *session
	if len(ids) == 1 {
		ss = s.lookup(ids[0], s.owner(r))
	}
	if ss == nil || ss.transport != "sse" {
		writeError(w, http.StatusNotFound, jsonrpc.InvalidRequest("session not found: open the event stream again"))
		return
	}
	body, ok := readBody(w, r)
	if !ok {
		return
	}
	select {
	case ss.legacySlots() <- struct{}{}:
	case <-r.Context().Done():
		return
	case <-ss.out.done:
		writeError(w, http.StatusNotFound, jsonrpc.InvalidRequest("session not found: open the event stream again"))
		return
	}
	// The work outlives this POST: it keeps the request's values (the caller's identity) and
	// ends with the session.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	go func() {
		defer cancel()
		defer func() { <-ss.legacySlots() }()
		go func() {
			select {
			case <-ss.out.done:
				cancel()
			case <-ctx.Done():
			}
		}()
		send := func(b []byte) bool { return ss.out.send(ctx, b) }
		if out, _ := s.handle(ctx, ss, "", body, send, nil); out != nil {
			send(out)
		}
	}()
	w.WriteHeader(http.StatusAccepted)
}

// legacySlots is the semaphore of a legacy session's running requests.
func (ss *session) legacySlots() chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.slots == nil {
		ss.slots = make(chan struct{}, legacyRunning)
	}
	return ss.slots
}
