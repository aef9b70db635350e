package app

import (
	"net"
	"net/http"
	"testing"
	"time"
)

// TestSession_BoundToPrincipal (SECURITY.md MT-03): a session started with one token answers
// only to that token's principal; another valid token gets 404, no token gets 401, and DELETE
// by another principal ends nothing.
func TestSession_BoundToPrincipal(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	h := a.Handler()
	tokA, tokB := testPAT(t, a), testPAT(t, a)
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"a","version":"1"}}}`
	const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	rec := serveReq(h, http.MethodPost, "/mcp", initialize, withBearer(tokA))
	sid := rec.Header().Get("Mcp-Session-Id")
	if rec.Code != http.StatusOK || len(sid) < 22 {
		t.Fatalf("initialize: %d, session id %q", rec.Code, sid)
	}
	for _, tc := range []struct {
		name   string
		method string
		opts   []reqOpt
		want   int
	}{
		{"its own principal", http.MethodPost, []reqOpt{withBearer(tokA)}, http.StatusOK},
		{"another principal", http.MethodPost, []reqOpt{withBearer(tokB)}, http.StatusNotFound},
		{"no token", http.MethodPost, nil, http.StatusUnauthorized},
		{"a bad token", http.MethodPost, []reqOpt{withBearer("osk_nope")}, http.StatusUnauthorized},
		{"DELETE by another principal", http.MethodDelete, []reqOpt{withBearer(tokB)}, http.StatusNotFound},
		{"still alive for its own", http.MethodPost, []reqOpt{withBearer(tokA)}, http.StatusOK},
		{"DELETE by its own", http.MethodDelete, []reqOpt{withBearer(tokA)}, http.StatusNoContent},
		{"ended", http.MethodPost, []reqOpt{withBearer(tokA)}, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == http.MethodPost {
				body = ping
			}
			rec := serveReq(h, tc.method, "/mcp", body, append(tc.opts, withHeader("Mcp-Session-Id", sid))...)
			if rec.Code != tc.want {
				t.Errorf("status %d, want %d: %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}

// TestApp_CloseWithStuckClient: a client that never finishes its request does not make Close
// fail (or hang): after 5 s its connection is cut.
func TestApp_CloseWithStuckClient(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", a.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Half a request: once the server has read its headers the connection is active, not
	// idle, so Shutdown waits for it.
	if _, err := c.Write([]byte("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); a.web.ActiveConns() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) { // against a hang only
			t.Fatalf("the server holds %d requests, want the half one", a.web.ActiveConns())
		}
	}
	if err := a.Close(); err != nil { // a hang ends at the test binary's timeout
		t.Fatalf("Close with a stuck client: %v", err)
	}
}
