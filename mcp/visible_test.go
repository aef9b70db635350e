package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestServer_Visible: prompts and resource templates that Visible hides are left out of their
// lists, and prompts/get and completion/complete answer for them as for unknown ones; its
// answers may change between requests (a run-time allowlist), and the capabilities stay.
func TestServer_Visible(t *testing.T) {
	f := MustOpenFixture(t)
	var hidden atomic.Bool
	f.Server.Visible = func(ctx context.Context, kind, name string) bool {
		return !hidden.Load() || kind == "template" && name != "fixture://notes/{id}"
	}
	ctx := context.Background()
	call := func(msg string) string { return string(f.Handle(ctx, []byte(msg))) }
	const (
		prompts   = `{"jsonrpc":"2.0","id":1,"method":"prompts/list"}`
		templates = `{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`
		get       = `{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"ada"}}}`
		complete  = `{"jsonrpc":"2.0","id":4,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"a"}}}`
		tmplDone  = `{"jsonrpc":"2.0","id":5,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"fixture://notes/{id}"},"argument":{"name":"id","value":"1"}}}`
		initMsg   = `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	)
	for _, tc := range []struct {
		msg, shown, hidden string
	}{
		{prompts, `"name":"greet"`, `{"jsonrpc":"2.0","id":1,"result":{"prompts":[]}}`},
		{templates, `"uriTemplate":"fixture://notes/{id}"`, ""},
		{get, `Say hello to ada.`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"field":"name","reason":"unknown prompt \"greet\""}}}`},
		{complete, `"ada"`, `{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"Invalid params","data":{"field":"ref.name","reason":"unknown prompt \"greet\""}}}`},
		{tmplDone, `"values"`, `"code":-32602`},
	} {
		hidden.Store(false)
		if got := call(tc.msg); !strings.Contains(got, tc.shown) {
			t.Errorf("%s while shown: %s, want %s in it", tc.msg, got, tc.shown)
		}
		hidden.Store(true)
		got := call(tc.msg)
		switch {
		case tc.msg == templates:
			if strings.Contains(got, "fixture://notes/{id}") || !strings.Contains(got, "fixture://search{?q,limit}") {
				t.Errorf("templates/list while notes is hidden: %s", got)
			}
		case strings.HasPrefix(tc.hidden, "{"):
			if got != tc.hidden {
				t.Errorf("%s while hidden:\n got %s\nwant %s", tc.msg, got, tc.hidden)
			}
		case !strings.Contains(got, tc.hidden):
			t.Errorf("%s while hidden: %s, want %s in it", tc.msg, got, tc.hidden)
		}
	}
	if got := call(initMsg); !strings.Contains(got, `"prompts":{"listChanged":false}`) {
		t.Errorf("with every prompt hidden the prompts capability went: %s", got)
	}
}

// TestKeepAlive: a handler that waits long keeps its Streamable HTTP request alive with comment
// lines on the POST's event stream, which starts with the first; a client that takes only
// JSON, and the other transports, get none.
func TestKeepAlive(t *testing.T) {
	var sent atomic.Int32
	s := &Server{Info: Implementation{Name: "k", Version: "1"}, Tools: []*Tool{{
		Name: "wait",
		Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
			for range 2 {
				if KeepAlive(ctx) {
					sent.Add(1)
				}
			}
			return &ToolResult{}, nil
		},
	}}}
	const call = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}`
	for _, tc := range []struct {
		name, accept string
		wantSent     int32
		wantType     string
		wantPrefix   string
	}{
		{"event stream", "application/json, text/event-stream", 2, "text/event-stream", ": keepalive\n\n: keepalive\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,"},
		{"JSON only", "application/json", 0, "application/json", `{"jsonrpc":"2.0","id":1,`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sent.Store(0)
			r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(call))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", tc.accept)
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, r)
			if sent.Load() != tc.wantSent || !strings.HasPrefix(rec.Header().Get("Content-Type"), tc.wantType) ||
				!strings.HasPrefix(rec.Body.String(), tc.wantPrefix) {
				t.Errorf("sent %d (want %d), %s:\n%q\nwant it to start %q", sent.Load(), tc.wantSent, rec.Header().Get("Content-Type"), rec.Body.String(), tc.wantPrefix)
			}
		})
	}
	t.Run("Handle", func(t *testing.T) {
		sent.Store(0)
		s.Handle(context.Background(), []byte(call))
		if sent.Load() != 0 {
			t.Errorf("KeepAlive sent %d lines outside HTTP", sent.Load())
		}
	})
	if KeepAlive(context.Background()) {
		t.Error("KeepAlive outside a request sent something")
	}
}
