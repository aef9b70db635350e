package mcp

// Sessions, the messages a server sends unasked (notifications and its own requests), and
// resource subscriptions (MCP 2025-11-25: basic/transports "Session Management",
// server/resources "Subscriptions", server/utilities/logging, client/sampling and
// client/elicitation for requests to the client).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
)

const (
	// outboxSize and outboxBytes bound what a stream may have waiting: messages, and bytes
	// (a message alone in the queue may be larger). Beyond them notifications are dropped
	// rather than holding the sender, and a subscriptions/listen stream that stays full ends
	// (listenStuckAfter).
	outboxSize  = 64
	outboxBytes = 256 << 10
	// maxSubscriptions bounds the resources one session may subscribe to.
	maxSubscriptions = 1000
	// maxSessionsPerOwner bounds the HTTP sessions of one principal, so that one client
	// cannot push the sessions of others out.
	maxSessionsPerOwner = 64
)

// ErrNoStream is returned by Request when the request in ctx has no way to reach its client:
// a plain JSON-RPC HTTP caller that does not accept text/event-stream, or no request at all.
var ErrNoStream = errors.New("rpc: the client cannot receive requests on this transport")

// outbox queues the messages of one stream (a session's, or a subscriptions/listen's). It is
// closed when the session ends. Its reader takes each message from ch and calls took with it.
type outbox struct {
	ch   chan []byte
	done chan struct{}
	once sync.Once

	size  atomic.Int64  // bytes waiting, counting messages reserved for and being queued
	room  chan struct{} // signalled (without waiting) when a message is taken
	taken atomic.Int64  // messages taken, ever
}

func newOutbox() *outbox {
	return &outbox{ch: make(chan []byte, outboxSize), done: make(chan struct{}), room: make(chan struct{}, 1)}
}

// offer queues a message without waiting; false when the queue is full or closed.
func (o *outbox) offer(b []byte) bool {
	select {
	case <-o.done:
		return false
	default:
	}
	if !o.reserve(len(b)) {
		return false
	}
	select {
	case o.ch <- b:
		return true
	default:
		o.size.Add(-int64(len(b)))
		return false
	}
}

// send queues a message, waiting for room until ctx is done or the outbox closes. Responses on
// the legacy SSE transport use it: they must not be dropped.
func (o *outbox) send(ctx context.Context, b []byte) bool {
	for {
		if o.reserve(len(b)) {
			select {
			case o.ch <- b:
				return true
			case <-o.done:
			case <-ctx.Done():
			}
			o.size.Add(-int64(len(b)))
			return false
		}
		select {
		case <-o.room:
		case <-o.done:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// reserve counts n bytes as waiting, unless that would pass outboxBytes with other messages
// waiting.
func (o *outbox) reserve(n int) bool {
	after := o.size.Add(int64(n))
	if after > outboxBytes && after > int64(n) {
		o.size.Add(-int64(n))
		return false
	}
	return true
}

// took is the reader's receipt for a message taken from ch.
func (o *outbox) took(b []byte) {
	o.size.Add(-int64(len(b)))
	o.taken.Add(1)
	select {
	case o.room <- struct{}{}:
	default:
	}
}

// drain discards the messages waiting, so that a stream that has ended holds none.
func (o *outbox) drain() {
	for {
		select {
		case b := <-o.ch:
			o.took(b)
		default:
			return
		}
	}
}

func (o *outbox) close() { o.once.Do(func() { close(o.done) }) }

// liveState is the server's sessions: those that can be told of changes (stdio connections,
// HTTP sessions, open GET streams) and the HTTP sessions by id.
type liveState struct {
	mu        sync.Mutex
	sessions  map[*session]bool
	byID      map[string]*session
	pending   map[string]*pendingRequest // the server's requests to clients, by id
	owners    map[string]*callSet        // the calls of requests without a session, by owner
	listeners map[*listener]bool         // open subscriptions/listen requests
}

func (s *Server) live() *liveState {
	s.liveOnce.Do(func() {
		s.liveSt = &liveState{sessions: map[*session]bool{}, byID: map[string]*session{}, pending: map[string]*pendingRequest{}}
	})
	return s.liveSt
}

func (l *liveState) add(ss *session) {
	l.mu.Lock()
	l.sessions[ss] = true
	if ss.id != "" {
		l.byID[ss.id] = ss
	}
	l.mu.Unlock()
}

func (l *liveState) remove(ss *session) {
	l.mu.Lock()
	delete(l.sessions, ss)
	if ss.id != "" && l.byID[ss.id] == ss {
		delete(l.byID, ss.id)
	}
	l.mu.Unlock()
}

func (l *liveState) all() []*session {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]*session, 0, len(l.sessions))
	for ss := range l.sessions {
		out = append(out, ss)
	}
	return out
}

func (s *Server) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Server) sessionIdle() time.Duration {
	if s.SessionIdle > 0 {
		return s.SessionIdle
	}
	return 30 * time.Minute
}

func (s *Server) maxSessions() int {
	if s.MaxSessions > 0 {
		return s.MaxSessions
	}
	return 1000
}

// newSessionID is 32 random bytes, base64url: visible ASCII, as the transport requires.
func newSessionID() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// openSession creates an HTTP session for owner, ending expired sessions first and, when the
// owner or the server is at its bound, the least recently used one.
func (s *Server) openSession(transport, owner string) *session {
	l := s.live()
	now := s.now()
	ss := &session{transport: transport, owner: owner, id: newSessionID(), out: newOutbox(), calls: &callSet{}, lastUsed: now}
	var ended []*session
	l.mu.Lock()
	var mine, all []*session
	for _, o := range l.byID {
		o.mu.Lock()
		idle := !o.streaming && now.Sub(o.lastUsed) > s.sessionIdle()
		o.mu.Unlock()
		switch {
		case idle:
			ended = append(ended, o)
			continue
		case o.owner == owner:
			mine = append(mine, o)
		}
		all = append(all, o)
	}
	lru := func(list []*session) *session {
		return slices.MinFunc(list, func(a, b *session) int { return a.lastUsedAt().Compare(b.lastUsedAt()) })
	}
	if len(mine) >= maxSessionsPerOwner {
		ended = append(ended, lru(mine))
	} else if len(all) >= s.maxSessions() {
		ended = append(ended, lru(all))
	}
	for _, o := range ended {
		delete(l.sessions, o)
		delete(l.byID, o.id)
	}
	l.sessions[ss] = true
	l.byID[ss.id] = ss
	l.mu.Unlock()
	for _, o := range ended {
		o.finish()
	}
	return ss
}

func (ss *session) lastUsedAt() time.Time {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.lastUsed
}

// lookup finds the live HTTP session id of owner, marking it used. A session of another
// owner, an expired or an ended one is not found.
func (s *Server) lookup(id, owner string) *session {
	l := s.live()
	l.mu.Lock()
	ss := l.byID[id]
	l.mu.Unlock()
	if ss == nil || ss.owner != owner {
		return nil
	}
	now := s.now()
	ss.mu.Lock()
	expired := !ss.streaming && now.Sub(ss.lastUsed) > s.sessionIdle()
	if !expired {
		ss.lastUsed = now
	}
	gone := ss.ended || expired
	ss.mu.Unlock()
	if expired {
		s.endSession(ss)
	}
	if gone {
		return nil
	}
	return ss
}

// endSession ends a session: it is forgotten, its calls are cancelled and its stream closes.
func (s *Server) endSession(ss *session) {
	s.live().remove(ss)
	ss.finish()
}

func (ss *session) finish() {
	ss.mu.Lock()
	ss.ended = true
	ss.mu.Unlock()
	ss.cancelAll()
	if ss.out != nil {
		ss.out.close()
	}
}

// ---- messages the server sends unasked ----

// NotifyResourceUpdated tells the sessions subscribed to uri (resources/subscribe) and the
// subscriptions/listen streams that opted in to it that it changed
// (notifications/resources/updated). Sessions without a stream to receive it miss it.
func (s *Server) NotifyResourceUpdated(uri string) {
	tell(s.now(), s.live().listenersWhere(func(l *listener) bool { return l.uris[uri] }), "notifications/resources/updated", map[string]any{"uri": uri})
	b, err := notification("notifications/resources/updated", map[string]string{"uri": uri})
	if err != nil {
		return
	}
	for _, ss := range s.live().all() {
		ss.mu.Lock()
		sub := ss.subs[uri]
		ss.mu.Unlock()
		if sub {
			ss.push(b)
		}
	}
}

// NotifyListChanged tells every session with a stream, and the subscriptions/listen streams
// that opted in, that the list of "tools", "resources" or "prompts" changed
// (notifications/<kind>/list_changed).
func (s *Server) NotifyListChanged(kind string) {
	tell(s.now(), s.live().listenersWhere(func(l *listener) bool {
		return kind == "tools" && l.tools || kind == "prompts" && l.prompts || kind == "resources" && l.resources
	}), "notifications/"+kind+"/list_changed", nil)
	b, err := notification("notifications/"+kind+"/list_changed", struct{}{})
	if err != nil {
		return
	}
	for _, ss := range s.live().all() {
		ss.push(b)
	}
}

// Log sends a notifications/message for the request in ctx, on its stream, when level is at
// or above the level the client set with logging/setLevel (all levels until it sets one), or,
// for a 2026-07-28 request, the io.modelcontextprotocol/logLevel of its _meta (nothing without).
// level is one of debug, info, notice, warning, error, critical, alert, emergency; logger may be
// empty; data must marshal to JSON. It does nothing when the request cannot carry it.
func Log(ctx context.Context, level, logger string, data any) {
	ri := infoFrom(ctx)
	rank := slices.Index(logLevels, level)
	if ri == nil || rank < 0 {
		return
	}
	if ri.meta.modern {
		// 2026-07-28: only for a request that asked, at or above the level it named.
		if ri.meta.logLevel == "" || rank < slices.Index(logLevels, ri.meta.logLevel) {
			return
		}
	} else if ri.session != nil {
		ri.session.mu.Lock()
		min := slices.Index(logLevels, ri.session.level)
		ri.session.mu.Unlock()
		if rank < min {
			return
		}
	}
	b, err := notification("notifications/message", struct {
		Level  string `json:"level"`
		Logger string `json:"logger,omitempty"`
		Data   any    `json:"data"`
	}{level, logger, data})
	if err != nil {
		return
	}
	ri.send(b)
}

// pendingRequest is a request of the server waiting for the client's answer.
type pendingRequest struct {
	owner string
	reply chan *jsonrpc.Message
}

// Request sends a request to the client of the request in ctx (sampling/createMessage,
// elicitation/create, roots/list, ping) on that request's stream and waits for its answer: the
// result, an *Error when the client answered an error, ErrNoStream when the transport cannot
// carry it, or ctx's error. The client's answer may arrive on any transport message of the same
// owner (a POST on Streamable HTTP, a line on stdio).
func Request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	ri := infoFrom(ctx)
	if ri == nil || ri.push == nil || ri.server == nil || ri.meta.modern { // 2026-07-28 sends none: see Elicit
		return nil, ErrNoStream
	}
	id := "s-" + newSessionID()[:22]
	b, err := jsonrpc.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      string `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params,omitempty"`
	}{"2.0", id, method, params})
	if err != nil {
		return nil, err
	}
	owner := ""
	if ri.session != nil {
		owner = ri.session.owner
	}
	p := &pendingRequest{owner: owner, reply: make(chan *jsonrpc.Message, 1)}
	l := ri.server.live()
	key := idKey(json.RawMessage(`"` + id + `"`))
	l.mu.Lock()
	l.pending[key] = p
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.pending, key)
		l.mu.Unlock()
	}()
	if !ri.send(b) {
		return nil, ErrNoStream
	}
	select {
	case r := <-p.reply:
		if len(r.RawError) > 0 {
			e := &jsonrpc.Error{}
			if err := json.Unmarshal(r.RawError, e); err != nil || e.Message == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: jsonrpc.MessageInternalError, Data: map[string]string{"reason": "the client answered with a malformed error"}}
			}
			return nil, e
		}
		return r.Result, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// deliver hands a client's response to the server request it answers; false when none of the
// session's owner waits for that id.
func (s *Server) deliver(ss *session, r *jsonrpc.Message) bool {
	l := s.live()
	key := idKey(r.ID)
	l.mu.Lock()
	p := l.pending[key]
	if p != nil && p.owner == ss.owner {
		delete(l.pending, key)
	} else {
		p = nil
	}
	l.mu.Unlock()
	if p == nil {
		return false
	}
	p.reply <- r
	return true
}

// ---- subscriptions ----

func (s *Server) subscribe(ctx context.Context, ss *session, p params) (any, error) {
	uri, err := requiredStr(p, "uri", "uri")
	if err != nil {
		return nil, err
	}
	if ss.notify == nil && ss.out == nil {
		return nil, jsonrpc.InvalidRequest("resources/subscribe needs a session: initialize over Streamable HTTP and send its Mcp-Session-Id, and open the GET stream to receive updates")
	}
	if _, err := s.ReadResource(ctx, uri); err != nil {
		return nil, err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.subs == nil {
		ss.subs = map[string]bool{}
	}
	if !ss.subs[uri] && len(ss.subs) >= maxSubscriptions {
		return nil, jsonrpc.InvalidRequest("too many subscriptions on this session; the limit is 1000")
	}
	ss.subs[uri] = true
	return struct{}{}, nil
}

func (s *Server) unsubscribe(ctx context.Context, ss *session, p params) (any, error) {
	uri, err := requiredStr(p, "uri", "uri")
	if err != nil {
		return nil, err
	}
	ss.mu.Lock()
	delete(ss.subs, uri)
	ss.mu.Unlock()
	return struct{}{}, nil
}
