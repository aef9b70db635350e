package mcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

func TestServer_ServeHTTP(t *testing.T) {
	f := MustOpenFixture(t)
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	note := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, tc := range []struct {
		name, method, body string
		hdr                map[string]string
		status             int
		allow, ctype       string
		body2              string // substring of the response body; "" = empty body
	}{
		{"ping", "POST", ping, nil, 200, "", "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"GET without an event stream", "GET", "", map[string]string{"Accept": "application/json"}, 406, "", "application/json", `Accept must list text/event-stream`},
		{"GET of an unknown session", "GET", "", map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": "x"}, 404, "", "application/json", `session not found`},
		{"DELETE without a session", "DELETE", "", nil, 400, "", "application/json", `send its Mcp-Session-Id`},
		{"DELETE of an unknown session", "DELETE", "", map[string]string{"Mcp-Session-Id": "x"}, 404, "", "application/json", `session not found`},
		{"POST in an unknown session", "POST", ping, map[string]string{"Mcp-Session-Id": "x"}, 404, "", "application/json", `session not found`},
		{"repeated session id", "POST", ping, map[string]string{"Mcp-Session-Id": "x\x00y"}, 400, "", "application/json", `Mcp-Session-Id is repeated`},
		{"PUT", "PUT", ping, nil, 405, "GET, POST, DELETE", "application/json", `"code":-32600`},
		{"PATCH", "PATCH", ping, nil, 405, "GET, POST, DELETE", "application/json", `"code":-32600`},
		{"no Content-Type", "POST", ping, map[string]string{"Content-Type": ""}, 415, "", "application/json", `Content-Type must be application/json`},
		{"text/plain", "POST", ping, map[string]string{"Content-Type": "text/plain"}, 415, "", "application/json", `Content-Type must be application/json`},
		{"form", "POST", ping, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "", "application/json", `Content-Type must be application/json`},
		{"malformed Content-Type", "POST", ping, map[string]string{"Content-Type": "application/json; charset"}, 415, "", "application/json", `Content-Type must be application/json`},
		{"Content-Type with charset", "POST", ping, map[string]string{"Content-Type": "application/json; charset=utf-8"}, 200, "", "application/json", `"result":{}`},
		{"Content-Type upper case", "POST", ping, map[string]string{"Content-Type": "Application/JSON"}, 200, "", "application/json", `"result":{}`},
		{"other charset", "POST", ping, map[string]string{"Content-Type": "application/json; charset=utf-16"}, 415, "", "application/json", `the charset must be utf-8`},
		{"unsupported revision", "POST", ping, map[string]string{"MCP-Protocol-Version": "1999-01-01"}, 400, "", "application/json", `"data":{"reason":"unsupported protocol version","requested":"1999-01-01","supported":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"]}`},
		{"2026-07-28 header on a method it removed", "POST", ping, map[string]string{"MCP-Protocol-Version": "2026-07-28"}, 404, "", "application/json", `"code":-32601`},
		{"every supported revision", "POST", ping, map[string]string{"MCP-Protocol-Version": "2024-11-05"}, 200, "", "application/json", `"result":{}`},
		{"empty body", "POST", "", nil, 400, "", "application/json", `"code":-32700`},
		{"parse error", "POST", `{"jsonrpc":`, nil, 400, "", "application/json", `"code":-32700`},
		{"invalid request", "POST", `{"jsonrpc":"2.0","id":1,"method":"ping","x":1}`, nil, 400, "", "application/json", `"code":-32600`},
		{"client response", "POST", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil, 400, "", "application/json", `"code":-32600`},
		{"method not found is 200", "POST", `{"jsonrpc":"2.0","id":1,"method":"x"}`, nil, 200, "", "application/json", `"code":-32601`},
		{"invalid params is 200", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, nil, 200, "", "application/json", `"code":-32602`},
		{"internal error is 200", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fail","arguments":{"mode":"internal"}}}`, nil, 200, "", "application/json", `"code":-32603`},
		{"notification, MCP client", "POST", note, map[string]string{"Accept": "application/json, text/event-stream"}, 202, "", "", ""},
		{"notification, Accept with parameters", "POST", note, map[string]string{"Accept": "application/json;q=1, TEXT/EVENT-STREAM;q=0.5"}, 202, "", "", ""},
		{"notification, plain caller", "POST", note, map[string]string{"Accept": "application/json"}, 204, "", "", ""},
		{"notification, no Accept", "POST", note, nil, 204, "", "", ""},
		{"notification, lookalike media type", "POST", note, map[string]string{"Accept": "text/event-streams"}, 204, "", "", ""},
		{"batch of notifications", "POST", `[` + note + `,` + note + `]`, map[string]string{"Accept": "text/event-stream"}, 202, "", "", ""},
		{"batch refused on 2025-06-18", "POST", `[` + ping + `]`, map[string]string{"MCP-Protocol-Version": "2025-06-18"}, 400, "", "application/json", `batches are not supported in protocol version 2025-06-18`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/mcp", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/json")
			for k, v := range tc.hdr {
				r.Header.Del(k)
				for part := range strings.SplitSeq(v, "\x00") { // NUL separates repeated headers
					if part != "" {
						r.Header.Add(k, part)
					}
				}
			}
			w := httptest.NewRecorder()
			f.ServeHTTP(w, r)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d (%s)", w.Code, tc.status, w.Body)
			}
			if got := w.Header().Get("Allow"); got != tc.allow {
				t.Errorf("Allow %q, want %q", got, tc.allow)
			}
			if got := w.Header().Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			switch {
			case tc.body2 == "" && w.Body.Len() != 0:
				t.Errorf("body %q, want none", w.Body)
			case tc.body2 != "" && !strings.Contains(w.Body.String(), tc.body2):
				t.Errorf("body %s, want it to contain %s", w.Body, tc.body2)
			}
		})
	}
}

func TestServer_ServeHTTPBodyLimit(t *testing.T) {
	f := MustOpenFixture(t)
	head, tail := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`, `"}}`
	exact := head + strings.Repeat("a", jsonrpc.MaxMessage-len(head)-len(tail)) + tail
	srv := httptest.NewServer(f.Server)
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		body    string
		chunked bool // no Content-Length: the limit is found while reading
		status  int
	}{
		{"exactly 4 MiB", exact, false, 200},
		{"exactly 4 MiB, chunked", exact, true, 200},
		{"one byte over", exact + " ", false, 413},
		{"one byte over, chunked", exact + " ", true, 413},
		{"10 MiB (SECURITY LA-01)", strings.Repeat(" ", 10<<20), false, 413},
		{"10 MiB, chunked", strings.Repeat(" ", 10<<20), true, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // hides the length
			}
			req, err := http.NewRequest(http.MethodPost, srv.URL, body)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Errorf("status %d, want %d: %.200s", resp.StatusCode, tc.status, got)
			}
			if tc.status == 413 {
				want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message too large: a message is limited to 4194304 bytes (4 MiB)"}}}`
				if string(got) != want {
					t.Errorf("body %s, want %s", got, want)
				}
			}
		})
	}
}

// TestServer_ServeHTTPContext checks that handlers see the request's context and HTTP facts.
func TestServer_ServeHTTPContext(t *testing.T) {
	f := MustOpenFixture(t)
	for _, tc := range []struct{ header, want string }{
		{"", "2025-03-26"}, {"2025-06-18", "2025-06-18"}, {"2025-11-25", "2025-11-25"},
	} {
		_, body := post(t, f.Server, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`, "MCP-Protocol-Version", tc.header)
		if !strings.Contains(body, `"transport":"http","version":"`+tc.want+`"`) {
			t.Errorf("header %q: %s", tc.header, body)
		}
	}
	t.Run("no session survives a request", func(t *testing.T) {
		post(t, f.Server, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
		_, body := post(t, f.Server, `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
		if body != `[{"jsonrpc":"2.0","id":2,"result":{}}]` {
			t.Errorf("a later batch without a header saw the earlier initialize: %s", body)
		}
	})
}

// FuzzServer_ClassifyPost drives a POST's classification and validation (headers × _meta × body)
// through ServeHTTP. Whatever arrives: no panic; a status of the transport's (200, 202 or 204
// for a notification, 400, 404, 413, 415); every body a JSON-RPC response with exactly one of result and error; an error
// echoes the id of a request whose envelope could be read; a result under a 2026-07-28 header
// carries resultType; and a request refused for its headers, version or method runs no tool
// (a missing client capability, -32021, is refused from inside the tool, also with 400).
func FuzzServer_ClassifyPost(f *testing.F) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []struct{ version, method, name, body string }{
		{"2026-07-28", "tools/call", "echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},` + meta + `}}`},
		{"2026-07-28", "tools/call", "=?base64?ZWNobw==?=", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},` + meta + `}}`},
		{"2026-07-28", "tools/call", "fail", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},` + meta + `}}`},
		{"2026-07-28", "server/discover", "", `{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{` + meta + `}}`},
		{"2026-07-28", "resources/read", "fixture://readme", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"fixture://readme",` + meta + `}}`},
		{"2026-07-28", "tools/list", "", `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`},
		{"2099-01-01", "tools/list", "", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`},
		{"2026-07-28", "initialize", "", `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{` + meta + `}}`},
		{"2026-07-28", "tools/call", "ask", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask","requestState":"e30.AAAA","inputResponses":{},` + meta + `}}`},
		{"", "", "", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},` + meta + `}}`},
		{"2025-11-25", "", "", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"}}}`},
		{"2026-07-28", "tools/list", "", `[{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{` + meta + `}}]`},
		{"2026-07-28", "", "", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{` + meta + `}}`},
	} {
		f.Add(seed.version, seed.method, seed.name, []byte(seed.body))
	}
	fx := MustOpenFixture(f)
	close(fx.release) // the slow tool returns at once
	f.Fuzz(func(t *testing.T, version, method, name string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json") // no stream: nothing waits on the client
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" { // net/http would refuse some values before us; accepting them is stricter
				r.Header.Set(k, v)
			}
		}
		before := fx.calls.Load()
		w := httptest.NewRecorder()
		fx.ServeHTTP(w, r)
		switch w.Code {
		case 200, 202, 204, 400, 404, 413, 415:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if w.Body.Len() == 0 {
			return
		}
		var resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  map[string]json.RawMessage
			Error   *struct {
				Code int `json:"code"`
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || resp.JSONRPC != "2.0" || (resp.Result == nil) == (resp.Error == nil) {
			t.Fatalf("not one JSON-RPC response (%v): %s", err, w.Body)
		}
		var req struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  *string         `json:"method"`
		}
		readable := json.Unmarshal(body, &req) == nil && req.JSONRPC == "2.0" && req.Method != nil && len(req.ID) > 0 &&
			(req.ID[0] == '"' || req.ID[0] == '-' || req.ID[0] >= '0' && req.ID[0] <= '9') && !bytes.ContainsAny(req.ID, ".eE")
		if resp.Error != nil && readable && !bytes.Equal(resp.ID, req.ID) && resp.Error.Code != jsonrpc.CodeParseError && resp.Error.Code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("the error answers id %s, not the request's %s: %s", resp.ID, req.ID, w.Body)
		}
		if resp.Result != nil && r.Header.Get("MCP-Protocol-Version") == ModernProtocolVersion && resp.Result["resultType"] == nil {
			t.Fatalf("a 2026-07-28 result without resultType: %s", w.Body)
		}
		// -32021 is the one 400 a handler decides (Input), after it started.
		if resp.Error != nil && (w.Code == 400 || w.Code == 404) && resp.Error.Code != CodeMissingCapability && fx.calls.Load() != before {
			t.Fatalf("a request refused with %d (%d) ran a tool: %s", w.Code, resp.Error.Code, body)
		}
	})
}
