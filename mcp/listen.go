package mcp

// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions): one long-lived request
// whose answer stream (the POST's event stream, or the stdio connection) carries the change
// notifications the client opted in to, each tagged with the request's id as its
// subscriptionId. It replaces the GET stream and resources/subscribe of the legacy era.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
)

const (
	// listenStuckAfter is how long a subscriptions/listen stream's queue may stay full, its
	// client taking nothing, before the server ends the subscription.
	listenStuckAfter = 30 * time.Second
	// maxListensPerOwner bounds the open subscriptions of one principal, so that one token
	// cannot hold every stream; maxListens bounds them all.
	maxListensPerOwner = 16
	maxListens         = 1000
)

func errListenNoStream() *jsonrpc.Error {
	return jsonrpc.InvalidRequest("subscriptions/listen needs a stream to answer on: over HTTP, Accept must list text/event-stream")
}

// listener is one open subscriptions/listen.
type listener struct {
	id        json.RawMessage // the request's id: its subscriptionId
	owner     string
	transport string
	session   *session
	tools     bool
	prompts   bool
	resources bool
	uris      map[string]bool
	out       *outbox
	end       chan struct{} // closed when the server ends the subscription gracefully
	once      sync.Once

	// written counts the messages of out the stream has written: its client's reads. Not
	// out.taken: the stream takes the next message before it blocks writing it, so a take
	// says nothing of the client, and counting it would let a client that reads nothing
	// restart the clock (it did, depending on when the stream ran against a burst).
	written     atomic.Int64
	fullMu      sync.Mutex
	fullSince   time.Time     // when a notification was refused with nothing written since; zero before
	fullWritten int64         // written then
	stuck       chan struct{} // closed when the queue stayed full (refused): the subscription ends
	stuckOnce   sync.Once
}

func (l *listener) close() { l.once.Do(func() { close(l.end) }) }

// refused records a notification refused at now for want of room, and ends the subscription
// when the queue has stayed full, its stream writing nothing, for listenStuckAfter: what waits in
// it is dropped at once, nothing more is queued, and listen ends the request when its stream
// next can (a burst that fills the queue of a client that reads ends nothing).
func (l *listener) refused(now time.Time) {
	l.fullMu.Lock()
	defer l.fullMu.Unlock()
	if w := l.written.Load(); l.fullSince.IsZero() || w != l.fullWritten {
		l.fullSince, l.fullWritten = now, w
		return
	}
	if now.Sub(l.fullSince) >= listenStuckAfter {
		l.stuckOnce.Do(func() { close(l.stuck) })
		l.out.drain()
	}
}

func (l *listener) ended() bool {
	select {
	case <-l.stuck:
		return true
	default:
		return false
	}
}

// filter is the client's opt-in, and what the server acknowledges of it.
type filter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// readFilter reads params.notifications: booleans and a list of at most maxSubscriptions URIs.
func readFilter(p params) (filter, error) {
	var f filter
	m, ok, err := object(p, "notifications", "notifications")
	if err == nil && !ok {
		err = jsonrpc.InvalidParams("notifications", "is required: say which notifications to receive")
	}
	if err != nil {
		return f, err
	}
	known := []string{"toolsListChanged", "promptsListChanged", "resourcesListChanged", "resourceSubscriptions"}
	if err := checkKeys(m, "notifications", known...); err != nil {
		return f, err
	}
	for _, b := range []struct {
		key string
		dst *bool
	}{{"toolsListChanged", &f.ToolsListChanged}, {"promptsListChanged", &f.PromptsListChanged}, {"resourcesListChanged", &f.ResourcesListChanged}} {
		raw, ok := m[b.key]
		if !ok || string(raw) == "null" {
			continue
		}
		if string(raw) != "true" && string(raw) != "false" {
			return f, jsonrpc.InvalidParams("notifications."+b.key, "must be a boolean")
		}
		*b.dst = string(raw) == "true"
	}
	if raw, ok := m["resourceSubscriptions"]; ok && string(raw) != "null" {
		var uris []json.RawMessage
		if raw[0] != '[' || json.Unmarshal(raw, &uris) != nil {
			return f, jsonrpc.InvalidParams("notifications.resourceSubscriptions", "must be an array of resource URIs")
		}
		if len(uris) > maxSubscriptions {
			return f, jsonrpc.InvalidParams("notifications.resourceSubscriptions", fmt.Sprintf("has %d URIs; the limit is %d", len(uris), maxSubscriptions))
		}
		for i, u := range uris {
			var s string
			if u[0] != '"' || json.Unmarshal(u, &s) != nil || s == "" {
				return f, jsonrpc.InvalidParams(fmt.Sprintf("notifications.resourceSubscriptions[%d]", i), "must be a resource URI")
			}
			if !slices.Contains(f.ResourceSubscriptions, s) {
				f.ResourceSubscriptions = append(f.ResourceSubscriptions, s)
			}
		}
	}
	return f, nil
}

// listen serves subscriptions/listen: it acknowledges what it will send, then relays the
// subscribed notifications until the client goes (the stream closes, or notifications/cancelled
// on stdio), which ends it without an answer, or the server ends it (EndSubscriptions, or the
// end of the stdio input), which answers it.
func (s *Server) listen(ctx context.Context, ss *session, p params) (any, error) {
	ri := infoFrom(ctx)
	if ri == nil || ri.push == nil {
		return nil, errListenNoStream()
	}
	f, err := readFilter(p)
	if err != nil {
		return nil, err
	}
	ack := filter{ToolsListChanged: f.ToolsListChanged}
	if len(s.Prompts) > 0 {
		ack.PromptsListChanged = f.PromptsListChanged
	}
	if s.ListResources != nil {
		ack.ResourcesListChanged = f.ResourcesListChanged
		if s.ReadResource != nil {
			for _, uri := range f.ResourceSubscriptions {
				if _, err := s.ReadResource(ctx, uri); err == nil {
					ack.ResourceSubscriptions = append(ack.ResourceSubscriptions, uri)
				}
			}
		}
	}
	l := &listener{id: ri.id, owner: ss.owner, transport: ss.transport, session: ss, tools: ack.ToolsListChanged,
		prompts: ack.PromptsListChanged, resources: ack.ResourcesListChanged, uris: map[string]bool{},
		out: newOutbox(), end: make(chan struct{}), stuck: make(chan struct{})}
	for _, u := range ack.ResourceSubscriptions {
		l.uris[u] = true
	}
	if err := s.live().addListener(l); err != nil {
		return nil, err
	}
	defer s.live().removeListener(l)
	b, err := notification("notifications/subscriptions/acknowledged", struct {
		Meta          map[string]json.RawMessage `json:"_meta"`
		Notifications filter                     `json:"notifications"`
	}{map[string]json.RawMessage{metaSubscriptionID: l.id}, ack})
	if err != nil {
		return nil, err
	}
	if !ri.send(b) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errListenNoStream() // an HTTP client that takes only application/json
	}
	tick := s.keepAlive()
	defer tick.Stop()
	for {
		select {
		case b := <-l.out.ch:
			l.out.took(b)
			if !ri.send(b) {
				<-ctx.Done() // the stream is gone: wait for the transport to end the call
				return nil, ctx.Err()
			}
			l.written.Add(1)
		case <-tick.C:
			if l.transport == "http" {
				ri.send(nil) // a comment line, so that proxies keep the stream open
			}
		case <-l.stuck:
			// The client read nothing while its queue stayed full (refused has dropped what
			// waited). The server ends the subscription as the spec has it end one it tears
			// down (basic/patterns/cancellation): notifications/cancelled naming the listen
			// request, and no result, which would say the end was graceful (subscriptions,
			// "Graceful Closure"): notifications were lost, and the client should listen again.
			b, err := notification("notifications/cancelled", map[string]any{
				"_meta":     map[string]json.RawMessage{metaSubscriptionID: l.id},
				"requestId": l.id,
				"reason":    fmt.Sprintf("the subscription's notifications went unread: its queue (%d messages or %d KiB) stayed full for %s; listen again", outboxSize, outboxBytes>>10, listenStuckAfter),
			})
			if err == nil {
				ri.send(b)
			}
			return nil, errNoAnswer
		case <-l.end:
			return struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}{map[string]json.RawMessage{metaSubscriptionID: l.id}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (l *liveState) addListener(ln *listener) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.listeners == nil {
		l.listeners = map[*listener]bool{}
	}
	n := 0
	for o := range l.listeners {
		if o.owner == ln.owner {
			n++
		}
	}
	switch {
	case n >= maxListensPerOwner:
		return jsonrpc.InvalidRequest(fmt.Sprintf("this client has %d open subscriptions/listen streams; the limit is %d", n, maxListensPerOwner))
	case len(l.listeners) >= maxListens:
		return jsonrpc.InvalidRequest("the server has as many open subscriptions/listen streams as it takes; retry later")
	}
	l.listeners[ln] = true
	return nil
}

func (l *liveState) removeListener(ln *listener) {
	l.mu.Lock()
	delete(l.listeners, ln)
	l.mu.Unlock()
}

// listenersWhere returns the open listeners that match.
func (l *liveState) listenersWhere(match func(*listener) bool) []*listener {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*listener
	for ln := range l.listeners {
		if match(ln) {
			out = append(out, ln)
		}
	}
	return out
}

// tell queues a notification for each listener, tagged with its subscriptionId; a listener
// whose queue is full misses it rather than holding the sender (and may be ended: refused).
func tell(now time.Time, lns []*listener, method string, params map[string]any) {
	for _, ln := range lns {
		if ln.ended() {
			continue
		}
		p := map[string]any{"_meta": map[string]json.RawMessage{metaSubscriptionID: ln.id}}
		for k, v := range params {
			p[k] = v
		}
		if b, err := notification(method, p); err == nil && !ln.out.offer(b) {
			ln.refused(now)
		}
	}
}

// EndSubscriptions ends every open subscriptions/listen gracefully: each is answered (the
// answer tells its client the end was intended) and its stream closes. Call it before shutting
// the transports down.
func (s *Server) EndSubscriptions() {
	for _, ln := range s.live().listenersWhere(func(*listener) bool { return true }) {
		ln.close()
	}
}

// endSessionListeners ends the subscriptions opened on one connection (stdio at end of input).
func (s *Server) endSessionListeners(ss *session) {
	for _, ln := range s.live().listenersWhere(func(l *listener) bool { return l.session == ss }) {
		ln.close()
	}
}
