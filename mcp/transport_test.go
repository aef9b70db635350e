package mcp

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
)

// The transports with sessions, over real HTTP on loopback: Streamable HTTP sessions, event
// streams, the GET stream, cancellation, requests to the client, log levels, legacy HTTP+SSE,
// and requests to the client over stdio.

// wait bounds every wait for something the server should do at once.
const wait = 10 * time.Second

type ownerKey struct{}

// transportFixture is a Server whose callers are told apart by an X-Owner header, whose clock
// the test moves, and whose tools push messages before they answer.
type transportFixture struct {
	*Server
	srv     *httptest.Server
	started chan context.Context // the wait tool sends its context when it starts

	mu  sync.Mutex
	now time.Time
}

// MustOpenTransport serves a fresh transport fixture on loopback, with SessionIdle an hour;
// configure may change the Server before it is checked.
func MustOpenTransport(tb testing.TB, configure func(*Server)) *transportFixture {
	tb.Helper()
	f := MustNewTransport(tb, configure)
	mux := http.NewServeMux()
	mux.Handle("/mcp", f.Server)
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) { f.ServeLegacySSE(w, r, "/message") })
	mux.HandleFunc("/message", f.ServeLegacyMessage)
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ownerKey{}, r.Header.Get("X-Owner"))))
	}))
	tb.Cleanup(f.srv.Close)
	return f
}

// MustNewTransport is the fixture without its HTTP server (for stdio in a synctest bubble,
// where a listener would keep the clock from moving).
func MustNewTransport(tb testing.TB, configure func(*Server)) *transportFixture {
	tb.Helper()
	f := &transportFixture{started: make(chan context.Context, 4), now: time.Date(2026, 5, 17, 14, 0, 0, 0, time.UTC)}
	f.Server = &Server{
		Info:        Implementation{Name: "transport", Version: "1.0.0"},
		SessionIdle: time.Hour,
		Now: func() time.Time {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.now
		},
		Owner: func(ctx context.Context) string { o, _ := ctx.Value(ownerKey{}).(string); return o },
		Tools: []*Tool{
			{Name: "who", Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
				client, _ := ClientInfoFrom(ctx)
				return &ToolResult{Structured: map[string]any{"transport": TransportFrom(ctx), "version": ProtocolVersionFrom(ctx), "client": client.Name}}, nil
			}},
			{Name: "wait", Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
				f.started <- ctx
				<-ctx.Done()
				return nil, ctx.Err()
			}},
			{Name: "progress", Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
				Progress(ctx, 1, 3, "first")
				Progress(ctx, 2, 3, "")
				return &ToolResult{Structured: map[string]bool{"done": true}}, nil
			}},
			{Name: "log", Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
				for _, level := range []string{"debug", "info", "warning", "error"} {
					Log(ctx, level, "test", map[string]string{"level": level})
				}
				Log(ctx, "loud", "test", "an unknown level is not sent")
				return &ToolResult{Structured: map[string]bool{"logged": true}}, nil
			}},
			{
				Name:        "ask",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"timeout":{"type":"string"}},"additionalProperties":false}`),
				Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
					var a struct {
						Timeout string `json:"timeout"`
					}
					json.Unmarshal(args, &a)
					if a.Timeout != "" {
						d, err := time.ParseDuration(a.Timeout)
						if err != nil {
							return nil, InvalidArgument("timeout", err.Error())
						}
						var cancel context.CancelFunc
						ctx, cancel = context.WithTimeout(ctx, d)
						defer cancel()
					}
					res, err := Request(ctx, "sampling/createMessage", map[string]any{
						"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": "hello?"}}},
						"maxTokens": 10,
					})
					var re *jsonrpc.Error
					switch {
					case errors.As(err, &re):
						return &ToolResult{Structured: map[string]any{"code": re.Code, "message": re.Message, "data": re.Data}}, nil
					case err != nil:
						return &ToolResult{Structured: map[string]any{"err": err.Error()}}, nil
					}
					return &ToolResult{Structured: map[string]any{"sampled": res}}, nil
				},
			},
		},
		ListResources: func(context.Context) ([]Resource, error) {
			return []Resource{{URI: "test://a", Name: "a"}, {URI: "test://b", Name: "b"}, {URI: "test://c", Name: "c"}}, nil
		},
		ReadResource: func(_ context.Context, uri string) ([]ResourceContents, error) {
			switch uri {
			case "test://a", "test://b", "test://c":
				return []ResourceContents{{URI: uri, Text: uri}}, nil
			}
			return nil, ErrResourceNotFound
		},
	}
	if configure != nil {
		configure(f.Server)
	}
	if err := f.Check(); err != nil {
		tb.Fatal(err)
	}
	return f
}

func (f *transportFixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

// open sends a request and returns the response with its body unread; the caller closes it.
// The default headers are Content-Type: application/json, Accept: application/json,
// text/event-stream and X-Owner: alice; hdr are name, value pairs, an empty value removing one.
// The request ends when the test does.
func (f *transportFixture) open(t testing.TB, method, path, body string, hdr ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Owner", "alice")
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// do sends a request and reads the whole response, within the bounded wait.
func (f *transportFixture) do(t testing.TB, method, path, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	resp := f.open(t, method, path, body, hdr...)
	defer resp.Body.Close()
	type read struct {
		b   []byte
		err error
	}
	done := make(chan read, 1)
	go func() { b, err := io.ReadAll(resp.Body); done <- read{b, err} }()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return resp.StatusCode, resp.Header, string(r.b)
	case <-time.After(wait):
		t.Fatalf("%s %s %s: no complete answer within %v", method, path, body, wait)
	}
	return 0, nil, ""
}

// initialize starts a session of owner at revision 2025-11-25 and returns its id.
func (f *transportFixture) initialize(t testing.TB, owner string) string {
	t.Helper()
	status, h, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"client-of-`+owner+`","version":"1"}}}`, "X-Owner", owner)
	id := h.Get("Mcp-Session-Id")
	if status != 200 || id == "" || !strings.Contains(body, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %d, session %q, %s", status, id, body)
	}
	return id
}

// ping reports the status of a ping in session id as owner.
func (f *transportFixture) ping(t testing.TB, id, owner string) int {
	t.Helper()
	status, _, _ := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, "Mcp-Session-Id", id, "X-Owner", owner)
	return status
}

// event is one server-sent event, or a comment line (keepalive).
type event struct {
	name, data string
	comment    bool
}

// events parses an event stream until it ends, when the channel closes.
func events(body io.ReadCloser) <-chan event {
	ch := make(chan event, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 1<<20)
		var ev event
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" || data != nil {
					ev.data = strings.Join(data, "\n")
					ch <- ev
				}
				ev, data = event{}, nil
			case strings.HasPrefix(line, ":"):
				ch <- event{comment: true, data: line}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data = append(data, strings.TrimPrefix(line, "data: "))
			}
		}
	}()
	return ch
}

// next returns the next event that is not a comment, failing when the stream ends or nothing
// comes within the bounded wait.
func next(t testing.TB, ch <-chan event) event {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-ch:
			switch {
			case !ok:
				t.Fatal("the event stream ended")
			case !ev.comment:
				return ev
			}
		case <-timeout:
			t.Fatalf("no event within %v", wait)
		}
	}
}

// ended waits for the stream to end, failing on any event but comments.
func ended(t testing.TB, ch <-chan event) {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if !ev.comment {
				t.Fatalf("event %s %s, want the stream to end", ev.name, ev.data)
			}
		case <-timeout:
			t.Fatalf("the stream did not end within %v", wait)
		}
	}
}

// message decodes the JSON of a "message" event.
func message(t testing.TB, ev event) map[string]json.RawMessage {
	t.Helper()
	if ev.name != "message" {
		t.Fatalf("event %q, want message", ev.name)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
		t.Fatalf("event data %s: %v", ev.data, err)
	}
	return m
}

func TestServer_Session(t *testing.T) {
	f := MustOpenTransport(t, nil)

	t.Run("initialize starts a session with an unguessable visible-ASCII id", func(t *testing.T) {
		seen := map[string]bool{}
		for range 8 {
			id := f.initialize(t, "alice")
			for _, c := range []byte(id) {
				if c < 0x21 || c > 0x7e {
					t.Fatalf("session id %q has byte %#x", id, c)
				}
			}
			if b, err := base64.RawURLEncoding.DecodeString(id); err != nil || len(b) < 16 {
				t.Errorf("session id %q carries %d bytes (%v), want at least 128 bits", id, len(b), err)
			}
			if seen[id] {
				t.Fatalf("session id %q repeated", id)
			}
			seen[id] = true
		}
	})

	t.Run("a failed initialize starts none", func(t *testing.T) {
		_, h, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
		if got := h.Get("Mcp-Session-Id"); got != "" || !strings.Contains(body, `"code":-32602`) {
			t.Errorf("session %q, body %s", got, body)
		}
	})

	t.Run("requests in the session share the revision and the client", func(t *testing.T) {
		id := f.initialize(t, "alice")
		_, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who"}}`, "Mcp-Session-Id", id)
		if want := `"structuredContent":{"client":"client-of-alice","transport":"http","version":"2025-06-18"}`; !strings.Contains(body, want) {
			t.Errorf("got %s, want %s", body, want)
		}
		_, _, body = f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who"}}`)
		if want := `"structuredContent":{"client":"","transport":"http","version":"2025-03-26"}`; !strings.Contains(body, want) {
			t.Errorf("without the session: got %s, want %s", body, want)
		}
	})

	t.Run("DELETE ends it", func(t *testing.T) {
		id := f.initialize(t, "alice")
		stream := f.open(t, "GET", "/mcp", "", "Mcp-Session-Id", id)
		defer stream.Body.Close()
		evs := events(stream.Body)
		if status, _, _ := f.do(t, "DELETE", "/mcp", "", "Mcp-Session-Id", id, "X-Owner", "bob"); status != 404 {
			t.Errorf("DELETE by another owner: %d, want 404", status)
		}
		if got := f.ping(t, id, "alice"); got != 200 {
			t.Fatalf("ping after another owner's DELETE: %d", got)
		}
		if status, _, body := f.do(t, "DELETE", "/mcp", "", "Mcp-Session-Id", id); status != 204 || body != "" {
			t.Errorf("DELETE: %d %q, want 204 and no body", status, body)
		}
		ended(t, evs)
		if got := f.ping(t, id, "alice"); got != 404 {
			t.Errorf("ping after DELETE: %d, want 404", got)
		}
		if status, _, _ := f.do(t, "DELETE", "/mcp", "", "Mcp-Session-Id", id); status != 404 {
			t.Errorf("second DELETE: %d, want 404", status)
		}
	})

	t.Run("DELETE cancels its calls, which get no result", func(t *testing.T) {
		id := f.initialize(t, "alice")
		type answer struct {
			status int
			body   string
		}
		done := make(chan answer, 1)
		go func() {
			status, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"wait"}}`, "Mcp-Session-Id", id)
			done <- answer{status, body}
		}()
		ctx := started(t, f)
		f.do(t, "DELETE", "/mcp", "", "Mcp-Session-Id", id)
		if ctx.Err() != context.Canceled {
			t.Errorf("the call's context: %v, want canceled", ctx.Err())
		}
		if a := <-done; a.status != 202 || a.body != "" {
			t.Errorf("the call's POST: %d %q, want 202 and no body", a.status, a.body)
		}
	})

	t.Run("it expires after SessionIdle without use", func(t *testing.T) {
		id := f.initialize(t, "alice")
		f.advance(time.Hour - time.Second)
		if got := f.ping(t, id, "alice"); got != 200 {
			t.Fatalf("ping just before expiry: %d", got)
		}
		f.advance(time.Hour - time.Second) // the ping counted as use
		if got := f.ping(t, id, "alice"); got != 200 {
			t.Fatalf("ping an hour after the last use but one: %d", got)
		}
		f.advance(time.Hour + time.Second)
		if got := f.ping(t, id, "alice"); got != 404 {
			t.Errorf("ping after expiry: %d, want 404", got)
		}
	})

	t.Run("an open GET stream keeps it alive", func(t *testing.T) {
		id := f.initialize(t, "alice")
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("X-Owner", "alice")
		resp, err := f.srv.Client().Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		f.advance(3 * time.Hour)
		if got := f.ping(t, id, "alice"); got != 200 {
			t.Errorf("ping with the stream open: %d, want 200", got)
		}
		cancel()
		resp.Body.Close()
		// The stream's end counts as use: it expires an hour after it.
		deadline := time.Now().Add(wait)
		for !f.sessionIdle(id) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		f.advance(time.Hour + time.Second)
		if got := f.ping(t, id, "alice"); got != 404 {
			t.Errorf("ping an hour after the stream closed: %d, want 404", got)
		}
	})

	t.Run("another owner cannot use it", func(t *testing.T) {
		id := f.initialize(t, "alice")
		if got := f.ping(t, id, "bob"); got != 404 {
			t.Errorf("POST by bob: %d, want 404", got)
		}
		if status, _, _ := f.do(t, "GET", "/mcp", "", "Mcp-Session-Id", id, "X-Owner", "bob"); status != 404 {
			t.Errorf("GET by bob: %d, want 404", status)
		}
		if got := f.ping(t, id, ""); got != 404 {
			t.Errorf("POST without an owner: %d, want 404", got)
		}
		if got := f.ping(t, id, "alice"); got != 200 {
			t.Errorf("POST by alice: %d, want 200", got)
		}
	})
}

// sessionIdle reports whether the session has no GET stream attached.
func (f *transportFixture) sessionIdle(id string) bool {
	l := f.live()
	l.mu.Lock()
	ss := l.byID[id]
	l.mu.Unlock()
	if ss == nil {
		return true
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return !ss.streaming
}

func started(t testing.TB, f *transportFixture) context.Context {
	t.Helper()
	select {
	case ctx := <-f.started:
		return ctx
	case <-time.After(wait):
		t.Fatalf("the tool did not start within %v", wait)
	}
	return nil
}

func TestServer_SessionLimits(t *testing.T) {
	t.Run("an owner's 65th session ends its least recently used", func(t *testing.T) {
		f := MustOpenTransport(t, nil)
		bobs := f.initialize(t, "bob")
		var ids []string
		for range maxSessionsPerOwner {
			f.advance(time.Second)
			ids = append(ids, f.initialize(t, "alice"))
		}
		f.advance(time.Second)
		if got := f.ping(t, ids[1], "alice"); got != 200 { // now the most recently used
			t.Fatalf("ping: %d", got)
		}
		f.advance(time.Second)
		ids = append(ids, f.initialize(t, "alice"))
		f.advance(time.Second)
		ids = append(ids, f.initialize(t, "alice"))
		for i, want := range map[int]int{0: 404, 1: 200, 2: 404, 3: 200, 64: 200, 65: 200} {
			if got := f.ping(t, ids[i], "alice"); got != want {
				t.Errorf("session %d: %d, want %d", i, got, want)
			}
		}
		if got := f.ping(t, bobs, "bob"); got != 200 {
			t.Errorf("bob's older session: %d, want 200", got)
		}
	})

	t.Run("at MaxSessions a new session ends the least recently used", func(t *testing.T) {
		f := MustOpenTransport(t, func(s *Server) { s.MaxSessions = 3 })
		a1 := f.initialize(t, "alice")
		f.advance(time.Second)
		b1 := f.initialize(t, "bob")
		f.advance(time.Second)
		b2 := f.initialize(t, "bob")
		f.advance(time.Second)
		c1 := f.initialize(t, "carol")
		if got := f.ping(t, a1, "alice"); got != 404 {
			t.Errorf("the oldest session: %d, want 404", got)
		}
		f.advance(time.Second)
		if got := f.ping(t, b1, "bob"); got != 200 {
			t.Fatalf("b1: %d", got)
		}
		f.advance(time.Second)
		d1 := f.initialize(t, "dave")
		for _, tc := range []struct {
			name, id, owner string
			want            int
		}{{"b1", b1, "bob", 200}, {"b2", b2, "bob", 404}, {"c1", c1, "carol", 200}, {"d1", d1, "dave", 200}} {
			if got := f.ping(t, tc.id, tc.owner); got != tc.want {
				t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
			}
		}
	})

	t.Run("expired sessions make room first", func(t *testing.T) {
		f := MustOpenTransport(t, func(s *Server) { s.MaxSessions = 2 })
		old := f.initialize(t, "alice")
		f.advance(2 * time.Hour)
		a := f.initialize(t, "alice")
		b := f.initialize(t, "bob")
		for _, tc := range []struct {
			id, owner string
			want      int
		}{{old, "alice", 404}, {a, "alice", 200}, {b, "bob", 200}} {
			if got := f.ping(t, tc.id, tc.owner); got != tc.want {
				t.Errorf("%s's session: %d, want %d", tc.owner, got, tc.want)
			}
		}
	})
}

func TestServer_ServeHTTPEventStream(t *testing.T) {
	f := MustOpenTransport(t, nil)
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"p-1"}}}`

	t.Run("progress, then the answer last", func(t *testing.T) {
		resp := f.open(t, "POST", "/mcp", call)
		defer resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || got != "text/event-stream" {
			t.Fatalf("%d %q, want 200 text/event-stream", resp.StatusCode, got)
		}
		evs := events(resp.Body)
		for _, want := range []string{
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":1,"total":3,"message":"first"}}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":2,"total":3}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"done\":true}"}],"structuredContent":{"done":true},"isError":false}}`,
		} {
			if ev := next(t, evs); ev.name != "message" || ev.data != want {
				t.Errorf("event %s %s, want message %s", ev.name, ev.data, want)
			}
		}
		ended(t, evs)
	})

	t.Run("in a session too", func(t *testing.T) {
		id := f.initialize(t, "alice")
		resp := f.open(t, "POST", "/mcp", call, "Mcp-Session-Id", id)
		defer resp.Body.Close()
		evs := events(resp.Body)
		for _, want := range []string{`"progress":1`, `"progress":2`, `"result":`} {
			if ev := next(t, evs); !strings.Contains(ev.data, want) {
				t.Errorf("event %s, want %s in it", ev.data, want)
			}
		}
		ended(t, evs)
	})

	for _, tc := range []struct{ name, accept, body string }{
		{"a client that takes only JSON gets JSON and no progress", "application/json", call},
		{"no Accept at all", "", call},
		{"nothing pushed, so JSON", "application/json, text/event-stream", strings.Replace(call, `,"_meta":{"progressToken":"p-1"}`, "", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := f.do(t, "POST", "/mcp", tc.body, "Accept", tc.accept)
			want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"done\":true}"}],"structuredContent":{"done":true},"isError":false}}`
			if status != 200 || h.Get("Content-Type") != "application/json" || body != want {
				t.Errorf("%d %s %s, want 200 application/json %s", status, h.Get("Content-Type"), body, want)
			}
		})
	}
}

func TestServer_ServeHTTPGetStream(t *testing.T) {
	f := MustOpenTransport(t, nil)
	rpcCall := func(t *testing.T, id, method, uri string) string {
		t.Helper()
		_, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":5,"method":"`+method+`","params":{"uri":"`+uri+`"}}`, "Mcp-Session-Id", id)
		return body
	}

	t.Run("resource updates reach the subscribed session only", func(t *testing.T) {
		id := f.initialize(t, "alice")
		other := f.initialize(t, "alice")
		resp := f.open(t, "GET", "/mcp", "", "Mcp-Session-Id", id, "Accept", "text/event-stream")
		defer resp.Body.Close()
		if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || got != "text/event-stream" {
			t.Fatalf("GET: %d %q", resp.StatusCode, got)
		}
		evs := events(resp.Body)
		if status, _, body := f.do(t, "GET", "/mcp", "", "Mcp-Session-Id", id, "Accept", "text/event-stream"); status != 409 || !strings.Contains(body, "already has an open GET stream") {
			t.Errorf("second GET: %d %s, want 409", status, body)
		}
		if got := rpcCall(t, id, "resources/subscribe", "test://a"); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
			t.Fatalf("subscribe: %s", got)
		}
		rpcCall(t, other, "resources/subscribe", "test://b")
		f.NotifyResourceUpdated("test://a")
		if ev := next(t, evs); ev.data != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://a"}}` {
			t.Errorf("event %s %s", ev.name, ev.data)
		}
		f.NotifyResourceUpdated("test://b") // another session's subscription
		if got := rpcCall(t, id, "resources/unsubscribe", "test://a"); got != `{"jsonrpc":"2.0","id":5,"result":{}}` {
			t.Fatalf("unsubscribe: %s", got)
		}
		f.NotifyResourceUpdated("test://a") // unsubscribed
		rpcCall(t, id, "resources/subscribe", "test://c")
		f.NotifyResourceUpdated("test://c")
		// The stream is in order: had b or the second a been sent, it would come first.
		if ev := next(t, evs); !strings.Contains(ev.data, `"uri":"test://c"`) {
			t.Errorf("event %s, want the update of test://c and nothing before", ev.data)
		}
	})

	t.Run("a closed stream can be opened again", func(t *testing.T) {
		id := f.initialize(t, "alice")
		ctx, cancel := context.WithCancel(t.Context())
		req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("X-Owner", "alice")
		resp, err := f.srv.Client().Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		cancel()
		resp.Body.Close()
		deadline := time.Now().Add(wait)
		for !f.sessionIdle(id) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		again := f.open(t, "GET", "/mcp", "", "Mcp-Session-Id", id, "Accept", "text/event-stream")
		defer again.Body.Close()
		if again.StatusCode != 200 {
			t.Errorf("GET again: %d, want 200", again.StatusCode)
		}
	})

	t.Run("subscribing needs a session", func(t *testing.T) {
		_, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":5,"method":"resources/subscribe","params":{"uri":"test://a"}}`)
		if !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "needs a session") {
			t.Errorf("got %s, want -32600 needs a session", body)
		}
	})

	t.Run("subscribing to an unknown resource", func(t *testing.T) {
		id := f.initialize(t, "alice")
		if got := rpcCall(t, id, "resources/subscribe", "test://nope"); !strings.Contains(got, `"code":-32002`) {
			t.Errorf("got %s, want -32002", got)
		}
	})

	t.Run("without a session, list changes only", func(t *testing.T) {
		resp := f.open(t, "GET", "/mcp", "", "Accept", "text/event-stream")
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET: %d", resp.StatusCode)
		}
		evs := events(resp.Body)
		f.NotifyResourceUpdated("test://a")
		f.NotifyListChanged("tools")
		if ev := next(t, evs); ev.data != `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}` {
			t.Errorf("event %s", ev.data)
		}
	})
}

func TestServer_ServeHTTPKeepAlive(t *testing.T) {
	f := MustOpenTransport(t, func(s *Server) { s.KeepAlive = 5 * time.Millisecond })
	id := f.initialize(t, "alice")
	resp := f.open(t, "GET", "/mcp", "", "Mcp-Session-Id", id, "Accept", "text/event-stream")
	defer resp.Body.Close()
	evs := events(resp.Body)
	select {
	case ev := <-evs:
		if !ev.comment || ev.data != ": keepalive" {
			t.Errorf("got %+v, want a keepalive comment", ev)
		}
	case <-time.After(wait):
		t.Fatal("no keepalive")
	}
}

func TestServer_ServeHTTPCancel(t *testing.T) {
	f := MustOpenTransport(t, nil)
	id := f.initialize(t, "alice")
	other := f.initialize(t, "alice")
	type answer struct {
		status int
		body   string
	}
	done := make(chan answer, 1)
	go func() {
		status, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"wait"}}`, "Mcp-Session-Id", id)
		done <- answer{status, body}
	}()
	ctx := started(t, f)
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-7","reason":"changed my mind"}}`
	if status, _, _ := f.do(t, "POST", "/mcp", cancel, "Mcp-Session-Id", other); status != 202 {
		t.Fatalf("cancel in another session: %d", status)
	}
	if status, _, _ := f.do(t, "POST", "/mcp", cancel); status != 202 {
		t.Fatalf("cancel without a session: %d", status)
	}
	if err := ctx.Err(); err != nil {
		t.Fatalf("a cancellation from another session reached the call: %v", err)
	}
	if status, _, body := f.do(t, "POST", "/mcp", cancel, "Mcp-Session-Id", id); status != 202 || body != "" {
		t.Fatalf("cancel: %d %q", status, body)
	}
	if err := ctx.Err(); err != context.Canceled {
		t.Errorf("the handler's context: %v, want canceled", err)
	}
	select {
	case a := <-done:
		if a.status != 202 || a.body != "" {
			t.Errorf("the cancelled POST: %d %q, want 202 and no result", a.status, a.body)
		}
	case <-time.After(wait):
		t.Fatal("the cancelled POST did not end")
	}
	if got := f.ping(t, id, "alice"); got != 200 {
		t.Errorf("the session after the cancellation: %d", got)
	}
}

func TestRequest_HTTP(t *testing.T) {
	f := MustOpenTransport(t, nil)
	const call = `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}}`

	// ask calls the ask tool in session id and returns its stream and the server's request.
	ask := func(t *testing.T, id string) (<-chan event, map[string]json.RawMessage) {
		t.Helper()
		resp := f.open(t, "POST", "/mcp", call, "Mcp-Session-Id", id)
		t.Cleanup(func() { resp.Body.Close() })
		if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
			t.Fatalf("Content-Type %q, want text/event-stream", got)
		}
		evs := events(resp.Body)
		req := message(t, next(t, evs))
		if got := string(req["method"]); got != `"sampling/createMessage"` {
			t.Fatalf("request %v", req)
		}
		if got, want := string(req["params"]), `{"maxTokens":10,"messages":[{"content":{"text":"hello?","type":"text"},"role":"user"}]}`; got != want {
			t.Errorf("params %s, want %s", got, want)
		}
		return evs, req
	}
	answer := func(id json.RawMessage, rest string) string {
		return `{"jsonrpc":"2.0","id":` + string(id) + `,` + rest + `}`
	}

	t.Run("the client answers in a later POST", func(t *testing.T) {
		id := f.initialize(t, "alice")
		evs, req := ask(t, id)
		reply := answer(req["id"], `"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}`)
		if status, _, body := f.do(t, "POST", "/mcp", reply, "X-Owner", "bob"); status != 400 || !strings.Contains(body, `"code":-32600`) {
			t.Errorf("bob's answer: %d %s, want 400 -32600", status, body)
		}
		if status, _, _ := f.do(t, "POST", "/mcp", reply, "Mcp-Session-Id", id, "X-Owner", "bob"); status != 404 {
			t.Errorf("bob's answer in alice's session: %d, want 404", status)
		}
		if status, _, body := f.do(t, "POST", "/mcp", reply, "Mcp-Session-Id", id); status != 202 || body != "" {
			t.Fatalf("alice's answer: %d %q, want 202", status, body)
		}
		res := message(t, next(t, evs))
		if got, want := string(res["result"]), `"structuredContent":{"sampled":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`; !strings.Contains(got, want) {
			t.Errorf("result %s, want %s in it", got, want)
		}
		ended(t, evs)
		if status, _, _ := f.do(t, "POST", "/mcp", reply, "Mcp-Session-Id", id); status != 400 {
			t.Errorf("a second answer: %d, want 400", status)
		}
	})

	t.Run("an error answer is an *Error", func(t *testing.T) {
		id := f.initialize(t, "alice")
		evs, req := ask(t, id)
		f.do(t, "POST", "/mcp", answer(req["id"], `"error":{"code":-1,"message":"User rejected sampling request"}`), "Mcp-Session-Id", id)
		res := message(t, next(t, evs))
		if got, want := string(res["result"]), `"structuredContent":{"code":-1,"data":null,"message":"User rejected sampling request"}`; !strings.Contains(got, want) {
			t.Errorf("result %s, want %s in it", got, want)
		}
	})

	t.Run("a malformed error answer", func(t *testing.T) {
		id := f.initialize(t, "alice")
		evs, req := ask(t, id)
		f.do(t, "POST", "/mcp", answer(req["id"], `"error":{"code":-1}`), "Mcp-Session-Id", id)
		res := message(t, next(t, evs))
		if got, want := string(res["result"]), `"code":-32603,"data":{"reason":"the client answered with a malformed error"},"message":"Internal error"`; !strings.Contains(got, want) {
			t.Errorf("result %s, want %s in it", got, want)
		}
	})

	t.Run("without a session the owner answers", func(t *testing.T) {
		resp := f.open(t, "POST", "/mcp", call)
		defer resp.Body.Close()
		evs := events(resp.Body)
		req := message(t, next(t, evs))
		if status, _, _ := f.do(t, "POST", "/mcp", answer(req["id"], `"result":{"model":"m"}`)); status != 202 {
			t.Fatalf("answer: %d", status)
		}
		if res := message(t, next(t, evs)); !strings.Contains(string(res["result"]), `"sampled":{"model":"m"}`) {
			t.Errorf("result %s", res["result"])
		}
	})

	t.Run("a client that takes only JSON cannot be asked", func(t *testing.T) {
		_, h, body := f.do(t, "POST", "/mcp", call, "Accept", "application/json")
		if want := `"structuredContent":{"err":"` + ErrNoStream.Error() + `"}`; h.Get("Content-Type") != "application/json" || !strings.Contains(body, want) {
			t.Errorf("got %s, want %s in it", body, want)
		}
	})

	t.Run("nor outside a transport", func(t *testing.T) {
		if _, err := Request(t.Context(), "ping", nil); err != ErrNoStream {
			t.Errorf("Request outside a request: %v, want ErrNoStream", err)
		}
		out := f.Handle(t.Context(), []byte(call))
		if want := `"err":"` + ErrNoStream.Error() + `"`; !strings.Contains(string(out), want) {
			t.Errorf("Handle: %s, want %s in it", out, want)
		}
	})

	t.Run("an answer nobody waits for", func(t *testing.T) {
		status, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":"s-unknown","result":{}}`)
		if status != 400 || !strings.Contains(body, "no request of this server with its id is waiting") {
			t.Errorf("%d %s", status, body)
		}
	})
}

func TestLog_SetLevel(t *testing.T) {
	f := MustOpenTransport(t, nil)
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"log"}}`
	levels := func(t *testing.T, id string) []string {
		t.Helper()
		resp := f.open(t, "POST", "/mcp", call, "Mcp-Session-Id", id)
		defer resp.Body.Close()
		evs := events(resp.Body)
		var got []string
		for {
			m := message(t, next(t, evs))
			if _, ok := m["result"]; ok {
				break
			}
			var p struct {
				Level  string
				Logger string
				Data   map[string]string
			}
			if err := json.Unmarshal(m["params"], &p); err != nil || string(m["method"]) != `"notifications/message"` || p.Logger != "test" || p.Data["level"] != p.Level {
				t.Fatalf("message %v", m)
			}
			got = append(got, p.Level)
		}
		ended(t, evs)
		return got
	}
	setLevel := func(t *testing.T, id, level string) string {
		_, _, body := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"`+level+`"}}`, "Mcp-Session-Id", id)
		return body
	}

	id := f.initialize(t, "alice")
	if got, want := fmt.Sprint(levels(t, id)), "[debug info warning error]"; got != want {
		t.Errorf("before setLevel: %s, want %s", got, want)
	}
	if got := setLevel(t, id, "warning"); got != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Fatalf("setLevel: %s", got)
	}
	if got, want := fmt.Sprint(levels(t, id)), "[warning error]"; got != want {
		t.Errorf("at warning: %s, want %s", got, want)
	}
	if got := setLevel(t, id, "loud"); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("setLevel loud: %s, want -32602", got)
	}
	if got, want := fmt.Sprint(levels(t, f.initialize(t, "alice"))), "[debug info warning error]"; got != want {
		t.Errorf("another session: %s, want %s", got, want)
	}
	if got := setLevel(t, id, "emergency"); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("setLevel: %s", got)
	}
	_, h, body := f.do(t, "POST", "/mcp", call, "Mcp-Session-Id", id)
	if h.Get("Content-Type") != "application/json" || !strings.Contains(body, `"logged":true`) {
		t.Errorf("with nothing to log, JSON: %s %s", h.Get("Content-Type"), body)
	}
}

func TestServer_ServeLegacySSE(t *testing.T) {
	f := MustOpenTransport(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/sse", nil)
	req.Header.Set("X-Owner", "alice")
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || got != "text/event-stream" {
		t.Fatalf("GET /sse: %d %q", resp.StatusCode, got)
	}
	evs := events(resp.Body)
	ev := next(t, evs)
	endpoint, ok := strings.CutPrefix(ev.data, "/message?sessionId=")
	if ev.name != "endpoint" || !ok || endpoint == "" {
		t.Fatalf("first event %s %s, want endpoint /message?sessionId=…", ev.name, ev.data)
	}
	post := func(t *testing.T, body string, hdr ...string) int {
		t.Helper()
		status, _, _ := f.do(t, "POST", ev.data, body, hdr...)
		return status
	}

	if got := post(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","clientInfo":{"name":"old","version":"1"}}}`); got != 202 {
		t.Fatalf("initialize: %d, want 202", got)
	}
	if m := message(t, next(t, evs)); !strings.Contains(string(m["result"]), `"protocolVersion":"2024-11-05"`) {
		t.Errorf("initialize answer %v", m)
	}
	post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"who"}}`)
	if m := message(t, next(t, evs)); !strings.Contains(string(m["result"]), `"structuredContent":{"client":"old","transport":"sse","version":"2024-11-05"}`) {
		t.Errorf("who: %s", m["result"])
	}
	post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7}}}`)
	for _, want := range []string{`"progressToken":7,"progress":1`, `"progressToken":7,"progress":2`, `"id":3,"result"`} {
		if ev := next(t, evs); !strings.Contains(ev.data, want) {
			t.Errorf("event %s, want %s in it", ev.data, want)
		}
	}

	t.Run("requests to the client", func(t *testing.T) {
		post(t, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask"}}`)
		req := message(t, next(t, evs))
		if got := post(t, `{"jsonrpc":"2.0","id":`+string(req["id"])+`,"result":{"model":"legacy"}}`); got != 202 {
			t.Fatalf("answer: %d", got)
		}
		if m := message(t, next(t, evs)); !strings.Contains(string(m["result"]), `"sampled":{"model":"legacy"}`) {
			t.Errorf("result %s", m["result"])
		}
	})

	for _, tc := range []struct {
		name, method, path string
		hdr                []string
		want               int
	}{
		{"another owner", "POST", ev.data, []string{"X-Owner", "bob"}, 404},
		{"unknown session", "POST", "/message?sessionId=nope", nil, 404},
		{"no session", "POST", "/message", nil, 404},
		{"a Streamable HTTP session id", "POST", "/message?sessionId=" + f.initialize(t, "alice"), nil, 404},
		{"GET", "GET", ev.data, nil, 405},
		{"not JSON", "POST", ev.data, []string{"Content-Type", "text/plain"}, 415},
		{"POST /sse", "POST", "/sse", nil, 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if status, _, _ := f.do(t, tc.method, tc.path, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, tc.hdr...); status != tc.want {
				t.Errorf("%s %s: %d, want %d", tc.method, tc.path, status, tc.want)
			}
		})
	}
	if status, _, _ := f.do(t, "POST", "/mcp", `{"jsonrpc":"2.0","id":9,"method":"ping"}`, "Mcp-Session-Id", endpoint); status != 404 {
		t.Errorf("the legacy session id on /mcp: %d, want 404", status)
	}

	t.Run("closing the stream ends the session", func(t *testing.T) {
		cancel()
		deadline := time.Now().Add(wait)
		for post(t, `{"jsonrpc":"2.0","id":9,"method":"ping"}`) != 404 {
			if time.Now().After(deadline) {
				t.Fatal("the session outlived its stream")
			}
			time.Sleep(time.Millisecond)
		}
	})
}

// TestRequest_Stdio asks the client over stdio, in a bubble whose clock jumps when everything
// waits: a client that never answers makes the tool's one-hour timeout pass at once.
func TestRequest_Stdio(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := MustNewTransport(t, nil)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		served := make(chan error, 1)
		go func() { served <- f.ServeStdio(t.Context(), inR, outW) }()
		lines := bufio.NewScanner(outR)
		send := func(line string) {
			if _, err := io.WriteString(inW, line+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		read := func() map[string]json.RawMessage {
			if !lines.Scan() {
				t.Fatalf("stdout ended: %v", lines.Err())
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
				t.Fatalf("%s: %v", lines.Bytes(), err)
			}
			return m
		}

		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
		read()

		send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask"}}`)
		req := read()
		if string(req["method"]) != `"sampling/createMessage"` {
			t.Fatalf("request %v", req)
		}
		send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":{"model":"stdio"}}`)
		if res := read(); string(res["id"]) != "2" || !strings.Contains(string(res["result"]), `"sampled":{"model":"stdio"}`) {
			t.Errorf("result %v", res)
		}

		send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask"}}`)
		req = read()
		send(`{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"error":{"code":-32601,"message":"sampling not supported"}}`)
		if res := read(); !strings.Contains(string(res["result"]), `"code":-32601,"data":null,"message":"sampling not supported"`) {
			t.Errorf("result %s", res["result"])
		}

		start := time.Now()
		send(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{"timeout":"1h"}}}`)
		read() // the request, never answered
		if res := read(); !strings.Contains(string(res["result"]), `"err":"context deadline exceeded"`) {
			t.Errorf("result %s", res["result"])
		}
		if got := time.Since(start); got != time.Hour {
			t.Errorf("the unanswered request waited %v, want 1h", got)
		}

		inW.Close()
		if err := <-served; err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	})
}

func TestServer_ServeLegacySSEEndpoint(t *testing.T) {
	f := MustNewTransport(t, nil)
	for _, tc := range []struct{ messageURL, want string }{
		{"/message", "/message?sessionId="},
		{"/mcp/sse/message?v=1", "/mcp/sse/message?v=1&sessionId="},
	} {
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // the client is gone once the endpoint is written
		w := httptest.NewRecorder()
		f.ServeLegacySSE(w, httptest.NewRequestWithContext(ctx, "GET", "/sse", nil), tc.messageURL)
		ev := next(t, events(io.NopCloser(w.Body)))
		if ev.name != "endpoint" || !strings.HasPrefix(ev.data, tc.want) || len(ev.data) <= len(tc.want) {
			t.Errorf("messageURL %s: event %s %s, want endpoint %s<id>", tc.messageURL, ev.name, ev.data, tc.want)
		}
	}
}
