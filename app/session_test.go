package app

import (
	"net/http"
	"testing"
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
