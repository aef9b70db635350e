package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// claudeMeta is the _meta of Claude's connectors after server/discover (claude-code #93290).
const claudeMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"claude-ai","version":"0.1.0"}}`

// postAs serves one POST of body with hdr (name, value pairs; a repeated name adds a value) as
// owner, and returns the status and body.
func postAs(t *testing.T, s *Server, owner, body string, hdr ...string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r = r.WithContext(context.WithValue(r.Context(), ownerKey{}, owner))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func TestServer_OnWarning(t *testing.T) {
	f := MustOpenFixture(t)
	var mu sync.Mutex
	var got []Warning
	f.Owner = func(ctx context.Context) string { o, _ := ctx.Value(ownerKey{}).(string); return o }
	f.OnWarning = func(_ context.Context, w Warning) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, w)
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + claudeMeta + `}}`
	for _, step := range []struct {
		owner  string
		body   string
		hdr    []string
		status int
	}{
		{"alice", list, []string{"MCP-Protocol-Version", "2025-11-25"}, 200},
		{"alice", list, []string{"MCP-Protocol-Version", "2025-11-25"}, 200},
		{"alice", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"},` + claudeMeta + `}}`, []string{"MCP-Protocol-Version", "2025-06-18"}, 200},
		{"bob", list, []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "prompts/list"}, 400}, // refused: no warning
		{"bob", list, []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/list"}, 200},   // no mix
		{"bob", list, []string{"MCP-Protocol-Version", "2025-11-25"}, 200},
		{"bob", list, []string{"MCP-Protocol-Version", "2025-11-25"}, 200},
	} {
		if status, body := postAs(t, f.Server, step.owner, step.body, step.hdr...); status != step.status {
			t.Fatalf("%s %v: status %d, want %d: %s", step.owner, step.hdr, status, step.status, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 {
		t.Fatalf("%d warnings, want one per owner: %+v", len(got), got)
	}
	for i, owner := range []string{"alice", "bob"} {
		w := got[i]
		if w.Kind != WarnVersionHeader || w.Owner != owner || w.Client == nil || w.Client.Name != "claude-ai" {
			t.Errorf("warning %d = %+v, want kind %q, owner %q, client claude-ai", i, w, WarnVersionHeader, owner)
		}
		if want := `MCP-Protocol-Version "2025-11-25" with _meta protocol version "2026-07-28": served under 2026-07-28`; !strings.Contains(w.Message, want) {
			t.Errorf("warning %d message %q, want it to say %q", i, w.Message, want)
		}
	}
}

func TestWarnSet_Bounded(t *testing.T) {
	var ws warnSet
	if !ws.first("a") || ws.first("a") {
		t.Fatal("a key is new once")
	}
	for i := range 3 * maxWarned {
		ws.first(fmt.Sprint("owner-", i))
		if n := len(ws.warned); n > maxWarned {
			t.Fatalf("%d keys remembered, want at most %d", n, maxWarned)
		}
	}
}

// TestServer_VersionMixParamHeaders: under Claude's older header, an Mcp-Param-* header may be
// absent (its transport mirrors nothing) but one that is sent must match the body (SECURITY.md
// MT-08); under a 2026-07-28 header it stays required.
func TestServer_VersionMixParamHeaders(t *testing.T) {
	s := &Server{
		Info: Implementation{Name: "params", Version: "1"},
		Tools: []*Tool{{
			Name:        "route",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"additionalProperties":false}`),
			Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
				return &ToolResult{Structured: map[string]any{"ok": true}}, nil
			},
		}},
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu"},` + claudeMeta + `}}`
	for _, tc := range []struct {
		name   string
		hdr    []string
		status int
		want   string
	}{
		{"mix without mirrored headers", []string{"MCP-Protocol-Version", "2025-11-25"}, 200, `"structuredContent":{"ok":true}`},
		{"mix with matching headers", []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/call", "Mcp-Name", "route", "Mcp-Param-Region", "eu"}, 200, `"structuredContent":{"ok":true}`},
		{"mix with a disagreeing Mcp-Param", []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Param-Region", "us"}, 400, `"code":-32020`},
		{"mix with a repeated Mcp-Param", []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Param-Region", "eu", "Mcp-Param-Region", "eu"}, 400, `"code":-32020`},
		{"mix with a repeated Mcp-Method", []string{"MCP-Protocol-Version", "2025-11-25", "Mcp-Method", "tools/call", "Mcp-Method", "tools/call"}, 400, `"code":-32020`},
		{"2026-07-28 without Mcp-Param", []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "route"}, 400, `the Mcp-Param-Region header is required`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := postAs(t, s, "", call, tc.hdr...)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s, want %d with %s", status, body, tc.status, tc.want)
			}
		})
	}
}

// TestServer_InitializeAfterDiscover: Claude Code sends a legacy initialize after a successful
// server/discover (anthropics/claude-code #96183); on stdio the connection then runs at the
// revision initialize negotiated, and 2026-07-28 requests still work beside it.
func TestServer_InitializeAfterDiscover(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)
	c.send(t, `{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":{`+claudeMeta+`}}`+"\n")
	if got := c.recv(t); !strings.Contains(got, `"supportedVersions":["2026-07-28","2025-11-25"`) {
		t.Fatalf("server/discover: %s", got)
	}
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"claude-code","version":"2.1.280"}}}`+"\n")
	if got := c.recv(t); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize after server/discover: %s", got)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`+"\n")
	if got := c.recv(t); !strings.Contains(got, `"structuredContent":{"text":"hi","transport":"stdio","version":"2025-11-25"}`) {
		t.Errorf("legacy tools/call after initialize: %s", got)
	}
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`+claudeMeta+`}}`+"\n")
	if got := c.recv(t); !strings.Contains(got, `"resultType":"complete"`) || !strings.Contains(got, `"version":"2026-07-28"`) {
		t.Errorf("2026-07-28 tools/call beside the session: %s", got)
	}
}
