package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

// post sends body to s over HTTP with the given headers (name, value pairs) on top of
// Content-Type: application/json, and returns the status and the raw body.
func post(tb testing.TB, s *Server, body string, hdr ...string) (int, string) {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

func TestServer_Handle(t *testing.T) {
	f := MustOpenFixture(t)
	for _, tc := range []struct{ name, in, want string }{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, ``},
		{"transport and default revision", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"text\":\"a\",\"transport\":\"test\",\"version\":\"2025-03-26\"}"}],"structuredContent":{"text":"a","transport":"test","version":"2025-03-26"},"isError":false}}`},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`},
		{"client response", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"the message is a response, but no request of this server with its id is waiting"}}}`},
		{"parse error", `{`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"expected a string key at byte 1"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(f.Handle(context.Background(), []byte(tc.in))); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestServer_IDEcho checks the raw bytes: the id comes back exactly as sent, whatever its
// spelling, HTML-looking characters included (SECURITY MT-07).
func TestServer_IDEcho(t *testing.T) {
	f := MustOpenFixture(t)
	for _, id := range []string{
		`0`, `-0`, `7`, `9223372036854775807`, `9223372036854775808`, `18446744073709551616`, `1e400`,
		`-1.5E-3`, `1.0`, `""`, `"abc"`, `"\u0041"`, `"<script>&amp;"`, `"\ud83d\ude00"`, `"😀"`,
		`"\"\\\/\b\f\n\r\t"`, `"\u2028"`, `null`,
	} {
		t.Run(id, func(t *testing.T) {
			status, body := post(t, f.Server, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
			if want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`; status != 200 || body != want {
				t.Errorf("got %d %s\nwant 200 %s", status, body, want)
			}
		})
	}
}

// TestServer_SmugglingNotExecuted sends the payloads of SECURITY MT-04 and checks that no
// tool ran.
func TestServer_SmugglingNotExecuted(t *testing.T) {
	call := `"params":{"name":"echo","arguments":{"text":"a"}}`
	for _, tc := range []struct {
		name, body string
		code       int
	}{
		{"method twice", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call",` + call + `}`, jsonrpc.CodeParseError},
		{"method twice, escaped", `{"jsonrpc":"2.0","id":1,"method":"ping","\u006dethod":"tools/call",` + call + `}`, jsonrpc.CodeParseError},
		{"Method", `{"jsonrpc":"2.0","id":1,"Method":"tools/call",` + call + `}`, jsonrpc.CodeInvalidRequest},
		{"METHOD beside method", `{"jsonrpc":"2.0","id":1,"method":"tools/call","METHOD":"ping",` + call + `}`, jsonrpc.CodeInvalidRequest},
		{"PARAMS", `{"jsonrpc":"2.0","id":1,"method":"tools/call","PARAMS":{"name":"echo","arguments":{"text":"a"}}}`, jsonrpc.CodeInvalidRequest},
		{"paramſ", `{"jsonrpc":"2.0","id":1,"method":"tools/call","paramſ":{"name":"echo","arguments":{"text":"a"}}}`, jsonrpc.CodeInvalidRequest},
		{"Kelvin sign", `{"jsonrpc":"2.0","id":1,"method":"tools/call",` + call + `,"\u212A":1}`, jsonrpc.CodeInvalidRequest},
		{"NUL-suffixed method", `{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call",` + call + `}`, jsonrpc.CodeInvalidRequest},
		{"NUL-suffixed params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params\u0000":{"name":"echo","arguments":{"text":"a"}}}`, jsonrpc.CodeInvalidRequest},
		{"arguments twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"arguments":{"text":"b"}}}`, jsonrpc.CodeParseError},
		{"argument key twice", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`, jsonrpc.CodeParseError},
		{"Name beside name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"fail","arguments":{"text":"a"}}}`, jsonrpc.CodeInvalidParams},
		{"ARGUMENTS beside arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},"ARGUMENTS":{"text":"b"}}}`, jsonrpc.CodeInvalidParams},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"a\xff\"}}}", jsonrpc.CodeParseError},
		{"lone surrogate", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\udc00"}}}`, jsonrpc.CodeParseError},
		{"batch with a smuggled element", `[{"jsonrpc":"2.0","id":1,"Method":"tools/call",` + call + `}]`, jsonrpc.CodeInvalidRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustOpenFixture(t)
			status, body := post(t, f.Server, tc.body, "MCP-Protocol-Version", "")
			if !strings.Contains(body, fmt.Sprintf(`"code":%d`, tc.code)) {
				t.Errorf("got %d %s, want code %d", status, body, tc.code)
			}
			if tc.code != jsonrpc.CodeInvalidParams && status != http.StatusBadRequest {
				t.Errorf("status %d, want 400", status)
			}
			if n := f.calls.Load(); n != 0 {
				t.Errorf("a tool ran %d times", n)
			}
		})
	}
}

func TestServer_OnError(t *testing.T) {
	f := MustOpenFixture(t)
	for _, mode := range []string{"internal", "panic", "nil", "array", "unmarshalable"} {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{"mode":"` + mode + `"}}}`
		if _, got := post(t, f.Server, body); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}` {
			t.Errorf("%s: got %s", mode, got)
		}
	}
	post(t, f.Server, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"fixture://broken"}}`)
	post(t, f.Server, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{"mode":"storage"}}}`) // an *Error: not internal
	want := []string{
		"tools/call: disk on fire at /secret/path",
		"tools/call: panic: kaboom",
		"tools/call: tool fail returned no result",
		"tools/call: tool fail: structured content is not a JSON object",
		"tools/call: tool fail: marshal structured content: json: unsupported type: chan int",
		"resources/read: cannot read the disk",
	}
	if got := f.onErrors(); !equal(got, want) {
		t.Errorf("OnError saw\n%q\nwant\n%q", got, want)
	}
	t.Run("a nil OnError is fine", func(t *testing.T) {
		s := &Server{Tools: []*Tool{{Name: "p", Handler: func(context.Context, json.RawMessage) (*ToolResult, error) { panic("x") }}}}
		if _, got := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"p"}}`); !strings.Contains(got, "-32603") {
			t.Errorf("got %s", got)
		}
	})
}

func TestServer_Check(t *testing.T) {
	handler := func(context.Context, json.RawMessage) (*ToolResult, error) { return &ToolResult{}, nil }
	get := func(context.Context, map[string]string) (*PromptResult, error) { return &PromptResult{}, nil }
	for _, tc := range []struct {
		name string
		s    *Server
		want string
	}{
		{"fine", &Server{Tools: []*Tool{{Name: "a", Handler: handler}}}, ""},
		{"nil tool", &Server{Tools: []*Tool{nil}}, "tool 0 has no name"},
		{"no name", &Server{Tools: []*Tool{{Handler: handler}}}, "tool 0 has no name"},
		{"no handler", &Server{Tools: []*Tool{{Name: "a"}}}, "tool a has no handler"},
		{"duplicate tool", &Server{Tools: []*Tool{{Name: "a", Handler: handler}, {Name: "a", Handler: handler}}}, "two tools named a"},
		{"bad schema", &Server{Tools: []*Tool{{Name: "a", Handler: handler, InputSchema: json.RawMessage(`{"type":"object","patternProperties":{}}`)}}}, `tool a: schema: unsupported keyword "patternProperties"`},
		{"bad argument schema", &Server{Tools: []*Tool{{Name: "a", Handler: handler, ArgumentSchema: json.RawMessage(`{"type":"thing"}`)}}}, `tool a: schema: unknown type "thing"`},
		{"input schema not an object", &Server{Tools: []*Tool{{Name: "a", Handler: handler, InputSchema: json.RawMessage(`true`)}}}, "inputSchema must be a JSON object"},
		{"input schema not JSON", &Server{Tools: []*Tool{{Name: "a", Handler: handler, InputSchema: json.RawMessage(`{`)}}}, "inputSchema must be a JSON object"},
		{"no prompt name", &Server{Prompts: []*Prompt{{Get: get}}}, "prompt 0 has no name"},
		{"no Get", &Server{Prompts: []*Prompt{{Name: "p"}}}, "prompt p has no Get"},
		{"duplicate prompt", &Server{Prompts: []*Prompt{{Name: "p", Get: get}, {Name: "p", Get: get}}}, "two prompts named p"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var told []string
			tc.s.OnError = func(ctx context.Context, method string, err error) { told = append(told, method+": "+err.Error()) }
			err := tc.s.Check()
			if tc.want == "" {
				if err != nil {
					t.Errorf("Check = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v, want an error with %q", err, tc.want)
			}
			if again := tc.s.Check(); again != err {
				t.Errorf("second Check = %v, want the same error", again)
			}
			if _, got := post(t, tc.s, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}}` {
				t.Errorf("a request to a broken server got %s", got)
			}
			if len(told) != 1 || !strings.Contains(told[0], tc.want) {
				t.Errorf("OnError told %q", told)
			}
		})
	}
}

// TestServer_Capabilities checks that a server without resources, prompts or completions
// neither advertises them nor answers their methods.
func TestServer_Capabilities(t *testing.T) {
	s := &Server{Info: Implementation{Name: "bare", Version: "0"}}
	_, got := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":false}},"serverInfo":{"name":"bare","version":"0"}}}`
	if got != want {
		t.Errorf("initialize:\ngot  %s\nwant %s", got, want)
	}
	_, got = post(t, s, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`; got != want {
		t.Errorf("tools/list:\ngot  %s\nwant %s", got, want)
	}
	for _, m := range []string{"resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get", "completion/complete"} {
		_, got := post(t, s, `{"jsonrpc":"2.0","id":3,"method":"`+m+`","params":{}}`)
		if want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"method":"` + m + `"}}}`; got != want {
			t.Errorf("%s:\ngot  %s\nwant %s", m, got, want)
		}
	}
	t.Run("resources without templates", func(t *testing.T) {
		s := &Server{ListResources: func(context.Context) ([]Resource, error) { return nil, nil }}
		_, got := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"resources/templates/list"}`)
		if want := `{"jsonrpc":"2.0","id":1,"result":{"resourceTemplates":[]}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		_, got = post(t, s, `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`)
		if want := `{"jsonrpc":"2.0","id":2,"result":{"resources":[]}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		_, got = post(t, s, `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x:"}}`)
		if !strings.Contains(got, "-32601") {
			t.Errorf("resources/read without ReadResource: %s", got)
		}
	})
}

// TestServer_Extensions checks that Extensions are capabilities.extensions in both eras: the
// initialize result and server/discover.
func TestServer_Extensions(t *testing.T) {
	s := &Server{Info: Implementation{Name: "ext", Version: "0"},
		Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}}}
	const ext = `"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}`
	_, got := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"logging":{},"tools":{"listChanged":false},` + ext + `},"serverInfo":{"name":"ext","version":"0"}}}`; got != want {
		t.Errorf("initialize:\ngot  %s\nwant %s", got, want)
	}
	_, got = post(t, s, `{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover")
	if !strings.Contains(got, `"capabilities":{"logging":{},"tools":{"listChanged":false},`+ext+`}`) {
		t.Errorf("server/discover has no extensions: %s", got)
	}
	_, got = post(t, &Server{}, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
	if strings.Contains(got, "extensions") {
		t.Errorf("without Extensions: %s", got)
	}
}

// TestServer_Meta checks that _meta travels on tools, resources and read contents, and is
// left out when nil.
func TestServer_Meta(t *testing.T) {
	handler := func(context.Context, json.RawMessage) (*ToolResult, error) { return &ToolResult{}, nil }
	ui := map[string]any{"ui": map[string]any{"resourceUri": "ui://x/app.html"}}
	csp := map[string]any{"ui": map[string]any{"csp": map[string]any{}, "prefersBorder": true}}
	s := &Server{
		Tools: []*Tool{{Name: "app", Handler: handler, Meta: ui}, {Name: "plain", Handler: handler}},
		ListResources: func(context.Context) ([]Resource, error) {
			return []Resource{{URI: "ui://x/app.html", Name: "app", MIMEType: "text/html;profile=mcp-app", Meta: csp}, {URI: "x:plain", Name: "plain"}}, nil
		},
		ReadResource: func(_ context.Context, uri string) ([]ResourceContents, error) {
			return []ResourceContents{{URI: uri, MIMEType: "text/html;profile=mcp-app", Text: "<p>", Meta: csp}}, nil
		},
	}
	for _, tc := range []struct{ name, body, want string }{
		{"tools/list", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"app","inputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://x/app.html"}}},{"name":"plain","inputSchema":{"type":"object"}}]}}`},
		{"resources/list", `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`,
			`{"jsonrpc":"2.0","id":2,"result":{"resources":[{"uri":"ui://x/app.html","name":"app","mimeType":"text/html;profile=mcp-app","_meta":{"ui":{"csp":{},"prefersBorder":true}}},{"uri":"x:plain","name":"plain"}]}}`},
		{"resources/read", `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ui://x/app.html"}}`,
			`{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"ui://x/app.html","mimeType":"text/html;profile=mcp-app","text":"<p>","_meta":{"ui":{"csp":{},"prefersBorder":true}}}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, got := post(t, s, tc.body); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestServer_Pagination(t *testing.T) {
	handler := func(context.Context, json.RawMessage) (*ToolResult, error) { return &ToolResult{}, nil }
	s := &Server{}
	for i := range 120 {
		s.Tools = append(s.Tools, &Tool{Name: fmt.Sprintf("t%03d", i), Handler: handler})
	}
	var names []string
	cursor, pages := "", 0
	for {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		_, body := post(t, s, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+params+`}`)
		var resp struct {
			Result struct {
				Tools      []struct{ Name string }
				NextCursor *string
			}
		}
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Fatalf("bad page %s", body)
		}
		pages++
		if n := len(resp.Result.Tools); n != 50 && resp.Result.NextCursor != nil {
			t.Errorf("page %d has %d tools, want the default 50", pages, n)
		}
		for _, tl := range resp.Result.Tools {
			names = append(names, tl.Name)
		}
		if resp.Result.NextCursor != nil && *resp.Result.NextCursor == "" {
			t.Fatalf("page %d carries nextCursor \"\", which 2026-07-28 clients take for a cursor", pages)
		}
		if resp.Result.NextCursor == nil {
			break
		}
		if cursor = *resp.Result.NextCursor; cursor == "" {
			break
		}
	}
	if pages != 3 || len(names) != 120 || names[0] != "t000" || names[119] != "t119" {
		t.Errorf("%d pages, %d names (%s … %s)", pages, len(names), names[0], names[len(names)-1])
	}
}

func TestServer_ToolErrorResult(t *testing.T) {
	f := MustOpenFixture(t)
	f.ToolErrorResult = func(field, reason string) any {
		return map[string]any{"ok": false, "error": map[string]string{"code": "INVALID_INPUT", "message": field + ": " + reason}}
	}
	_, got := post(t, f.Server, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":""}}}`, "MCP-Protocol-Version", "2025-11-25")
	want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\":{\"code\":\"INVALID_INPUT\",\"message\":\"text: must not be empty\"},\"ok\":false}"}],"structuredContent":{"error":{"code":"INVALID_INPUT","message":"text: must not be empty"},"ok":false},"isError":true}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	f.ToolErrorResult = func(field, reason string) any { return "not an object" }
	_, got = post(t, f.Server, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":""}}}`, "MCP-Protocol-Version", "2025-11-25")
	if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestContent_MarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Content
		want string
	}{
		{"text", TextContent("<a & b>"), `{"type":"text","text":"<a & b>"}`},
		{"empty text keeps text", TextContent(""), `{"type":"text","text":""}`},
		{"image", Content{Type: "image", MIMEType: "image/png", Data: "AAA="}, `{"type":"image","mimeType":"image/png","data":"AAA="}`},
		{"resource", Content{Type: "resource", Resource: &ResourceContents{URI: "x://a", Text: ""}}, `{"type":"resource","resource":{"uri":"x://a","text":""}}`},
		{"binary resource", Content{Type: "resource", Resource: &ResourceContents{URI: "x://b", MIMEType: "image/png", Text: "ignored", Blob: "iVBORw0KGgo="}}, `{"type":"resource","resource":{"uri":"x://b","mimeType":"image/png","blob":"iVBORw0KGgo="}}`},
		{"audio", Content{Type: "audio", MIMEType: "audio/wav", Data: "UklGRg=="}, `{"type":"audio","mimeType":"audio/wav","data":"UklGRg=="}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonrpc.Marshal(tc.c)
			if err != nil || string(got) != tc.want {
				t.Errorf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestRequestContext(t *testing.T) {
	ctx := context.Background()
	if TransportFrom(ctx) != "" || ProtocolVersionFrom(ctx) != "" {
		t.Error("a plain context has request facts")
	}
	if _, ok := ClientInfoFrom(ctx); ok {
		t.Error("a plain context has client info")
	}
	Progress(ctx, 1, 2, "nothing to send to") // must not panic

	var sent [][]byte
	ri := &reqInfo{progressToken: json.RawMessage(`"t"`), push: func(b []byte) bool { sent = append(sent, b); return true }}
	ctx = context.WithValue(ctx, ctxKey{}, ri)
	Progress(ctx, 1, 0, "")
	Progress(ctx, 1.5, 3, "half")
	ri.done = true
	Progress(ctx, 3, 3, "after the response")
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1.5,"total":3,"message":"half"}}`,
	}
	var got []string
	for _, b := range sent {
		got = append(got, string(b))
	}
	if !equal(got, want) {
		t.Errorf("sent %q\nwant %q", got, want)
	}
}

func TestTemplateVariables(t *testing.T) {
	for tmpl, want := range map[string]string{
		"x://notes/{id}":              "id",
		"x://search{?q,limit}":        "q limit",
		"x://{+path}/{name:3}{/a,b*}": "path name a b",
		"x://plain":                   "",
		"x://{unclosed":               "",
	} {
		if got := strings.Join(templateVariables(tmpl), " "); got != want {
			t.Errorf("templateVariables(%q) = %q, want %q", tmpl, got, want)
		}
	}
}

// TestServer_Concurrent runs many requests at once through one Server (run with -race).
func TestServer_Concurrent(t *testing.T) {
	f := MustOpenFixture(t)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"c%d"}}}`, i, i%10)
			if status, got := post(t, f.Server, body); status != 200 || !strings.Contains(got, fmt.Sprintf(`"id":%d,"result"`, i)) {
				t.Errorf("%d %s", status, got)
			}
			if out := f.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)); !bytes.Contains(out, []byte(`"tools":[`)) {
				t.Errorf("tools/list: %s", out)
			}
		})
	}
	wg.Wait()
}

// FuzzServer_Handle drives the whole server (Handle, every method and the echo tool's argument
// checks) with any message: a parse error is answered with -32700, every answer is JSON, a
// request with an id that is not part of a batch is answered with that id byte for byte, and
// nothing panics. jsonrpc's FuzzDecodeMessage checks the decoder itself against encoding/json.
func FuzzServer_Handle(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"tools/call","method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","PARAMS":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","paramſ":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212A":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u212Aey":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","method\u0000":"tools/call"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","text":"b"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","Name":"fail","arguments":{"text":"a"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a","Text":"b"}}}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00<&>","method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`,
		`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffing\"}",
		strings.Repeat("[", 70) + strings.Repeat("]", 70),
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},"a":1}}`,
		`[{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0},{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0,"\u0071":0}]`,
	} {
		f.Add([]byte(seed))
	}
	fx := MustOpenFixture(f)
	close(fx.release) // the slow tool returns at once
	f.Fuzz(func(t *testing.T, data []byte) {
		reqs, batch, fail := jsonrpc.DecodeMessage(data)
		out := fx.Handle(context.Background(), data)
		if fail != nil && fail.Code == jsonrpc.CodeParseError {
			if !bytes.Contains(out, []byte(`"code":-32700`)) {
				t.Fatalf("Handle answered a parse error with %s", out)
			}
			return
		}
		if out != nil && !json.Valid(out) {
			t.Fatalf("Handle answered invalid JSON: %s", out)
		}
		if fail == nil && !batch && reqs[0].ID != nil && !reqs[0].IsResponse {
			if want := append([]byte(`{"jsonrpc":"2.0","id":`), reqs[0].ID...); !bytes.HasPrefix(out, want) {
				t.Fatalf("request with id %s answered with %s", reqs[0].ID, out)
			}
		}
	})
}
