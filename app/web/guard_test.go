package web_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/web"
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

// status reads the status code of the response on c, waiting at most d; 0 if none came.
func status(c net.Conn, d time.Duration) int {
	c.SetReadDeadline(time.Now().Add(d))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
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
	refused := 0
	for _, c := range held {
		if s := status(c, 300*time.Millisecond); s == http.StatusServiceUnavailable {
			refused++
		}
	}
	if refused != 12 {
		t.Errorf("%d of 20 slow senders were refused with 503, want 12 (the shared pool holds 8)", refused)
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

	// The held bodies are cut after 5 s: the slots come back.
	start := time.Now()
	for _, c := range held {
		status(c, 10*time.Second)
	}
	if waited := time.Since(start); waited > 9*time.Second {
		t.Errorf("the slow bodies were cut after %v, want about 5 s", waited)
	}
	if s := get("/oauth/jwks.json", "", ""); s != http.StatusOK {
		t.Errorf("after the slow bodies were cut: GET /oauth/jwks.json %d, want 200", s)
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
	// Whichever came ninth is refused at once; the other eight wait for their bodies.
	statuses := make(chan int, len(conns))
	for _, c := range conns {
		go func() { statuses <- status(c, time.Second) }()
	}
	counts := map[int]int{}
	for range conns {
		counts[<-statuses]++
	}
	if counts[http.StatusTooManyRequests] != 1 || counts[0] != 8 {
		t.Errorf("9 requests in flight from one address: %v answered, want one 429 and 8 still reading (0)", counts)
	}
	other := slowBody(t, addr, "/oauth/token", "203.0.113.8")
	if s := status(other, 300*time.Millisecond); s != 0 {
		t.Errorf("another address was refused with %d", s)
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
