package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/web"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth/policy"
)

// MustListen opens the fixture with cfg changed by opts, listens on a loopback port, and makes
// its personal access tokens; it returns the fixture and its base URL.
func MustListen(tb testing.TB, opts ...func(*web.Config)) (*fixture, string) {
	tb.Helper()
	f := MustOpenServer(tb, append([]func(*web.Config){func(c *web.Config) {
		c.PublicURL = ""
		c.TrustedProxies = []string{"127.0.0.1/32"}
	}}, opts...)...)
	if err := f.Listen(); err != nil {
		tb.Fatal(err)
	}
	f.read = f.mustPAT(tb, "reader", policy.ScopeRead)
	f.write = f.mustPAT(tb, "writer", policy.ScopeRead, policy.ScopeWrite)
	return f, "http://" + f.Addr()
}

// slowBody opens a connection that sends the headers of a POST to path with Content-Length
// 1000 and one byte of body, as from the address from, and then nothing. The connection is
// closed at cleanup.
func slowBody(tb testing.TB, addr, path, from string) net.Conn {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nX-Forwarded-For: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nx", path, addr, from)
	return c
}

// status reads the status code of the response on c, waiting at most d; 0 if none came (the
// connection closed, or d passed).
func status(c net.Conn, d time.Duration) int {
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// statuses reads the answers on conns at once, each within 30 s (against a hang: the slow
// bodies are cut after 5 s), and sends each connection's index and status on the channel as
// it comes.
func statuses(conns []net.Conn) <-chan [2]int {
	ch := make(chan [2]int, len(conns))
	for i, c := range conns {
		go func() { ch <- [2]int{i, status(c, 30*time.Second)} }()
	}
	return ch
}

// TestServer_SlowBodies (issue 13, item 1): connections that send the headers of an OAuth
// request and then trickle its body hold slots of a pool of their own, at most 8 per
// address, and are cut after 5 s; meanwhile /health and authenticated MCP calls are served.
// Before, 66 such senders held all 64 slots of the one gate and everything answered 503.
func TestServer_SlowBodies(t *testing.T) {
	f, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 16 }) // the shared pool: 8
	addr := strings.TrimPrefix(base, "http://")

	var held []net.Conn
	for i := range 20 { // 20 addresses: 8 fill the shared pool, the rest are refused at once
		held = append(held, slowBody(t, addr, "/oauth/token", fmt.Sprintf("198.51.100.%d", i+1)))
	}
	// A condition, not a duration: the 12 refusals come at once, the 8 others when cut.
	answers := statuses(held)
	for range 12 {
		if a := <-answers; a[1] != http.StatusServiceUnavailable {
			t.Fatalf("slow sender %d answered %d before 12 were refused; want 503 for the 12 beyond the shared pool of 8", a[0], a[1])
		}
	}

	get := func(path, token, body string) int {
		t.Helper()
		method := http.MethodGet
		var r io.Reader
		if body != "" {
			method, r = http.MethodPost, strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, base+path, r)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/health", "", ""); s != http.StatusOK {
		t.Errorf("/health while slow senders hold the shared pool: %d, want 200", s)
	}
	for i := range 20 {
		if s := get("/mcp", f.read, callEcho); s != http.StatusOK {
			t.Fatalf("authenticated call %d while slow senders hold the shared pool: %d, want 200", i, s)
		}
	}

	// The held bodies are cut after 5 s (within the 30 s status waits, half the server's
	// read timeout): the slots come back.
	for range 8 {
		if a := <-answers; a[1] == http.StatusServiceUnavailable {
			t.Errorf("slow sender %d held a slot and then answered 503", a[0])
		}
	}
	if s := get("/oauth/jwks.json", "", ""); s != http.StatusOK {
		t.Errorf("after the slow bodies were cut: GET /oauth/jwks.json %d, want 200", s)
	}
	if s := post(t, t.Context(), base, f.read, callEcho).StatusCode; s != http.StatusOK {
		t.Errorf("after the slow bodies were cut: an authenticated call %d, want 200", s)
	}
	other := slowBody(t, addr, "/oauth/token", "198.51.100.99")
	if s := <-statuses([]net.Conn{other}); s[1] == http.StatusServiceUnavailable || s[1] == http.StatusTooManyRequests {
		t.Errorf("a slow sender after the others were cut: %d, want a slot", s[1])
	}
}

// TestServer_InFlightPerAddress (issue 13, item 1): one address holds at most 8 slots of the
// shared pool; another address is not held back by it.
func TestServer_InFlightPerAddress(t *testing.T) {
	_, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 400 })
	addr := strings.TrimPrefix(base, "http://")
	var conns []net.Conn
	for range 9 {
		conns = append(conns, slowBody(t, addr, "/oauth/token", "203.0.113.7"))
	}
	other := slowBody(t, addr, "/oauth/token", "203.0.113.8")
	// Whichever came ninth is refused at once; the other eight, and the other address, wait
	// for their bodies until they are cut. Counted once all are answered: no timing.
	answers := statuses(append(conns, other))
	counts := map[int]int{}
	for range len(conns) + 1 {
		a := <-answers
		if a[0] == len(conns) {
			if a[1] == http.StatusTooManyRequests || a[1] == http.StatusServiceUnavailable {
				t.Errorf("another address was refused with %d", a[1])
			}
			continue
		}
		counts[a[1]]++
	}
	if counts[http.StatusTooManyRequests] != 1 {
		t.Errorf("9 requests in flight from one address: %v answered, want one 429 and 8 held until cut", counts)
	}
}

// TestServer_StreamsPerPrincipal (issue 13, item 2): one token holds at most 32 event streams
// of any kind (GET streams with or without a session, subscriptions/listen); beyond, 429,
// while another token still opens one.
func TestServer_StreamsPerPrincipal(t *testing.T) {
	f, base := MustListen(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	open := func(token string, listen bool) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
		if listen {
			body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			req, _ = http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "subscriptions/listen")
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp.StatusCode
	}
	for i := range 32 {
		if s := open(f.read, i%2 == 1); s != http.StatusOK {
			t.Fatalf("stream %d of one token: %d, want 200", i+1, s)
		}
	}
	for _, listen := range []bool{false, true} {
		if s := open(f.read, listen); s != http.StatusTooManyRequests {
			t.Errorf("33rd stream of one token (listen %v): %d, want 429", listen, s)
		}
	}
	if s := open(f.write, false); s != http.StatusOK {
		t.Errorf("another token's stream while the first holds 32: %d, want 200", s)
	}
}

// waitTool is a tool, wait, whose calls block until the test lets them go (done, or open for
// the gate its arguments name); each call says so on entered when it starts, after it parked
// its slot (web.Park) if its arguments say park.
type waitTool struct {
	entered chan struct{}
	release chan struct{}

	mu    sync.Mutex
	gates map[string]chan struct{}
}

func newWaitTool(tb testing.TB) *waitTool {
	w := &waitTool{entered: make(chan struct{}, 64), release: make(chan struct{}), gates: map[string]chan struct{}{}}
	tb.Cleanup(w.done)
	return w
}

func (w *waitTool) gate(name string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gates[name] == nil {
		w.gates[name] = make(chan struct{})
	}
	return w.gates[name]
}

// open lets the calls of gate name go.
func (w *waitTool) open(name string) { close(w.gate(name)) }

// add gives the fixture's MCP server the wait tool.
func (w *waitTool) add(c *web.Config) {
	c.MCP.Tools = append(c.MCP.Tools, &mcp.Tool{
		Name: "wait", Description: "Waits for the test.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"park":{"type":"boolean"},"gate":{"type":"string"}}}`),
		Handler: func(ctx context.Context, raw json.RawMessage) (*mcp.ToolResult, error) {
			var args struct {
				Park bool   `json:"park"`
				Gate string `json:"gate"`
			}
			json.Unmarshal(raw, &args)
			resume := func() error { return nil }
			if args.Park {
				resume = web.Park(ctx)
			}
			w.entered <- struct{}{}
			select {
			case <-w.release:
			case <-w.gate(args.Gate):
			case <-ctx.Done():
			}
			if err := resume(); err != nil {
				return nil, err
			}
			return &mcp.ToolResult{Structured: map[string]string{"text": "done"}}, nil
		},
	})
}

// done lets every call of wait go, now and from now on.
func (w *waitTool) done() {
	select {
	case <-w.release:
	default:
		close(w.release)
	}
}

// waitCall is a legacy tools/call of the wait tool with the arguments args.
func waitCall(args string) string {
	return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"wait","arguments":` + args + `}}`
}

// callWait is a legacy tools/call of the wait tool.
var callWait = waitCall(`{}`)

// listenBody is a 2026-07-28 subscriptions/listen.
const listenBody = `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` +
	`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// do sends body to base's /mcp with token and the header pairs kv, and returns the response,
// its body unread.
func do(ctx context.Context, base, token, body string, kv ...string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	return http.DefaultClient.Do(req)
}

// post is do for the test's goroutine: the response's body is closed at cleanup.
func post(tb testing.TB, ctx context.Context, base, token, body string, kv ...string) *http.Response {
	tb.Helper()
	resp, err := do(ctx, base, token, body, kv...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// goPost sends the request of do in a goroutine; its status (0 on an error) comes on the
// channel once the whole answer is read.
func goPost(ctx context.Context, base, token, body string, kv ...string) <-chan int {
	c := make(chan int, 1)
	go func() {
		resp, err := do(ctx, base, token, body, kv...)
		if err != nil {
			c <- 0
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c <- resp.StatusCode
	}()
	return c
}

// TestServer_StreamFollowsBody (SECURITY.md LA-13; issue 28, item 8): whether a POST is a
// long-lived stream, served outside the pool of calls, follows its body in every era. Before,
// it followed Mcp-Method: a legacy tools/call that named subscriptions/listen there left the
// pool (so the pool's bound did not hold it), and a listen under a stale legacy
// MCP-Protocol-Version without Mcp-Method (as Claude's connectors send, anthropics/claude-code
// #93290) held a slot of the pool for as long as it stayed open.
func TestServer_StreamFollowsBody(t *testing.T) {
	t.Run("listen header on a legacy call", func(t *testing.T) {
		wait := newWaitTool(t)
		f, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 1; wait.add(c) })
		first := goPost(t.Context(), base, f.read, callWait, "Mcp-Method", "subscriptions/listen")
		<-wait.entered
		if s := post(t, t.Context(), base, f.write, callEcho).StatusCode; s != http.StatusServiceUnavailable {
			t.Errorf("a call while the one slot serves a call that says it listens: %d, want 503", s)
		}
		wait.done()
		if s := <-first; s != http.StatusOK {
			t.Errorf("the call that said it listens: %d, want 200", s)
		}
	})
	t.Run("listen body under a legacy header", func(t *testing.T) {
		f, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 1 })
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if s := post(t, ctx, base, f.read, listenBody, "MCP-Protocol-Version", "2025-11-25").StatusCode; s != http.StatusOK {
			t.Fatalf("listen under a legacy MCP-Protocol-Version: %d, want 200", s)
		}
		if s := post(t, t.Context(), base, f.write, callEcho).StatusCode; s != http.StatusOK {
			t.Errorf("a call while a listen is open: %d, want 200 (the listen holds no slot of the pool)", s)
		}
	})
}

// TestServer_PrincipalShare (SECURITY.md LA-13; issue 28, item 5): one principal holds at most
// half the pool of calls (2 of 4 here); its next call is 429, while other tokens are served
// until the pool is full. Before, one token could hold every slot, and every other client got
// 503.
func TestServer_PrincipalShare(t *testing.T) {
	wait := newWaitTool(t)
	f, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 4; wait.add(c) })
	other := f.mustPAT(t, "other", policy.ScopeRead)
	var calls []<-chan int
	for range 2 {
		calls = append(calls, goPost(t.Context(), base, f.read, callWait))
		<-wait.entered
	}
	resp := post(t, t.Context(), base, f.read, callEcho)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(body), "too_many_calls") {
		t.Errorf("a third call of a token that holds 2 of 4 slots: %d %s, want 429 too_many_calls", resp.StatusCode, body)
	}
	if s := post(t, t.Context(), base, f.write, callEcho).StatusCode; s != http.StatusOK {
		t.Errorf("another token's call meanwhile: %d, want 200", s)
	}
	for range 2 {
		calls = append(calls, goPost(t.Context(), base, f.write, callWait))
		<-wait.entered
	}
	if s := post(t, t.Context(), base, other, callEcho).StatusCode; s != http.StatusServiceUnavailable {
		t.Errorf("a call while two tokens hold the whole pool: %d, want 503", s)
	}
	wait.done()
	for i, c := range calls {
		if s := <-c; s != http.StatusOK {
			t.Errorf("waiting call %d: %d, want 200", i, s)
		}
	}
}

// TestServer_ParkedCalls (SECURITY.md LA-13; issue 28, item 5): calls that wait for approval
// (web.Park) hold no slot of the pool meanwhile, so their token's share and the pool serve
// others; once let go, they take their slots back (waiting for one when the pool is full) and
// answer.
func TestServer_ParkedCalls(t *testing.T) {
	wait := newWaitTool(t)
	f, base := MustListen(t, func(c *web.Config) { c.MaxConcurrent = 4; wait.add(c) })
	other := f.mustPAT(t, "other", policy.ScopeRead)
	var parked, held []<-chan int
	for range 2 {
		parked = append(parked, goPost(t.Context(), base, f.read, waitCall(`{"park":true,"gate":"approved"}`)))
		<-wait.entered
	}
	// The token's share is free again: two more calls, held in the pool, with another token's.
	for _, tok := range []string{f.read, f.read, f.write, f.write} {
		held = append(held, goPost(t.Context(), base, tok, waitCall(`{"gate":"held"}`)))
		<-wait.entered
	}
	if s := post(t, t.Context(), base, other, callEcho).StatusCode; s != http.StatusServiceUnavailable {
		t.Errorf("a call while 4 calls hold the pool and 2 are parked: %d, want 503", s)
	}
	// Approved while the pool is full: the parked calls wait for slots, then answer.
	wait.open("approved")
	wait.open("held")
	for i, c := range append(parked, held...) {
		if s := <-c; s != http.StatusOK {
			t.Errorf("call %d: %d, want 200", i, s)
		}
	}
	if s := post(t, t.Context(), base, other, callEcho).StatusCode; s != http.StatusOK {
		t.Errorf("a call once all ended: %d, want 200 (every slot given back)", s)
	}
}
