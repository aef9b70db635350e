package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Issue 15: hosted connectors. OpenAI's search and fetch, every tool's annotations, schemas of
// one type at a time, and the MCP App (io.modelcontextprotocol/ui), through the real HTTP
// server and the official Go SDK client in both protocol eras.

// connectSDK starts the app on a loopback port and connects the Go SDK client to it with a
// personal access token, pinned to pin ("" for the SDK's default, 2026-07-28).
func connectSDK(t *testing.T, pin string) (*App, *mcp.ClientSession) {
	t.Helper()
	return connectSDKWith(t, testConfig(t, nil), pin)
}

// connectSDKWith is connectSDK over a server with cfg.
func connectSDKWith(t *testing.T, cfg Config, pin string) (*App, *mcp.ClientSession) {
	t.Helper()
	cfg.PublicURL = "" // taken from the bound address
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hc := &http.Client{Transport: bearerTransport{patFor(t, a)}}
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + a.Addr() + "/mcp", HTTPClient: hc}, sdkOptions(pin))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return a, s
}

// callRaw calls a tool and returns its result as the client got it.
func callRaw(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// openAIText checks OpenAI's rule for search and fetch: exactly one content item, of type text,
// whose JSON equals structuredContent; it returns that JSON.
func openAIText(t *testing.T, name string, res *mcp.CallToolResult) []byte {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items, want exactly 1", name, len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content[0] is %T, want text", name, res.Content[0])
	}
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal([]byte(text.Text), &a) != nil || json.Unmarshal(sc, &b) != nil || !jsonEq(a, b) {
		t.Fatalf("%s: text %s and structuredContent %s differ", name, text.Text, sc)
	}
	return []byte(text.Text)
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// keys returns the sorted member names of a JSON object.
func keys(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestConnectors_SearchFetch(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			a, s := connectSDK(t, era.pin)
			origin := "http://" + a.Addr()
			long := "My daughter Ada plays the violin in the city youth orchestra every Saturday morning, and she practises scales before school"
			coffee := sdkPayload(t, s, "remember", map[string]any{"text": "I prefer dark roast coffee", "tags": []string{"food", "coffee"}, "importance": 0.7})
			ada := sdkPayload(t, s, "remember", map[string]any{"text": long, "tags": "family", "session_id": "s-1"})
			sdkPayload(t, s, "remember", map[string]any{"text": "The car is due for service in May"})
			cid := fmt.Sprint(int64(coffee["memory_id"].(float64)))
			aid := fmt.Sprint(int64(ada["memory_id"].(float64)))

			// search: {"results":[{"id","title","url"}]}, ranked as recall ranks.
			raw := openAIText(t, "search", callRaw(t, s, "search", map[string]any{"query": "coffee roast"}))
			var found struct {
				Results []map[string]json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal(raw, &found); err != nil || !slices.Equal(keys(t, raw), []string{"results"}) {
				t.Fatalf("search payload %s: %v", raw, err)
			}
			if len(found.Results) == 0 {
				t.Fatalf("search found nothing: %s", raw)
			}
			for _, r := range found.Results {
				b, _ := json.Marshal(r)
				if got := keys(t, b); !slices.Equal(got, []string{"id", "title", "url"}) {
					t.Errorf("result members %v, want id, title, url", got)
				}
				var id string
				if err := json.Unmarshal(r["id"], &id); err != nil {
					t.Errorf("id %s is not a string", r["id"])
				}
			}
			var first struct{ ID, Title, URL string }
			b, _ := json.Marshal(found.Results[0])
			json.Unmarshal(b, &first)
			if first.ID != cid || first.Title != "I prefer dark roast coffee" || first.URL != origin+"/console/memories/"+cid {
				t.Errorf("first result = %+v, want id %s, its text as title, %s/console/memories/%s", first, cid, origin, cid)
			}
			recall := sdkPayload(t, s, "recall", map[string]any{"query": "coffee roast"})
			var recallIDs, searchIDs []string
			for _, m := range recall["matches"].([]any) {
				recallIDs = append(recallIDs, fmt.Sprint(int64(m.(map[string]any)["id"].(float64))))
			}
			for _, r := range found.Results {
				var id string
				json.Unmarshal(r["id"], &id)
				searchIDs = append(searchIDs, id)
			}
			if !slices.Equal(recallIDs, searchIDs) {
				t.Errorf("search ranks %v, recall %v", searchIDs, recallIDs)
			}

			// A long first line is cut at a word, with an ellipsis.
			raw = openAIText(t, "search", callRaw(t, s, "search", map[string]any{"query": "violin orchestra"}))
			json.Unmarshal(raw, &found)
			var adaTitle string
			json.Unmarshal(found.Results[0]["title"], &adaTitle)
			if !strings.HasSuffix(adaTitle, "…") || len([]rune(adaTitle)) > 81 || !strings.HasPrefix(long, strings.TrimSuffix(adaTitle, "…")) ||
				strings.HasSuffix(strings.TrimSuffix(adaTitle, "…"), " ") || long[len(strings.TrimSuffix(adaTitle, "…"))] != ' ' {
				t.Errorf("title of a long memory = %q", adaTitle)
			}

			// fetch: {"id","title","text","url","metadata"}.
			raw = openAIText(t, "fetch", callRaw(t, s, "fetch", map[string]any{"id": aid}))
			if got := keys(t, raw); !slices.Equal(got, []string{"id", "metadata", "text", "title", "url"}) {
				t.Fatalf("fetch members %v", got)
			}
			var doc struct {
				ID, Title, Text, URL string
				Metadata             map[string]any
			}
			json.Unmarshal(raw, &doc)
			if doc.ID != aid || doc.Text != long || doc.Title != adaTitle || doc.URL != origin+"/console/memories/"+aid {
				t.Errorf("fetch = %+v", doc)
			}
			for _, k := range []string{"tags", "importance", "created_at", "updated_at", "last_confirmed_at", "source_provider", "source_client", "session_id"} {
				if _, ok := doc.Metadata[k]; !ok {
					t.Errorf("metadata lacks %s: %v", k, doc.Metadata)
				}
			}
			if !jsonEq(doc.Metadata["tags"], []any{"family"}) || doc.Metadata["session_id"] != "s-1" || doc.Metadata["source_client"] != "pat:test" {
				t.Errorf("metadata = %v", doc.Metadata)
			}
			if _, err := time.Parse(time.RFC3339, doc.Metadata["created_at"].(string)); err != nil {
				t.Errorf("created_at: %v", err)
			}

			// Failures are like every tool's: isError with ok:false.
			sdkPayload(t, s, "forget", map[string]any{"id": coffee["memory_id"]})
			for _, tc := range []struct{ id, code string }{{cid, "NOT_FOUND"}, {"424242", "NOT_FOUND"}, {"abc", "INVALID_INPUT"}, {"-1", "INVALID_INPUT"}, {"0", "INVALID_INPUT"}} {
				p := sdkPayload(t, s, "fetch", map[string]any{"id": tc.id})
				if p["ok"] != false || p["error"].(map[string]any)["code"] != tc.code {
					t.Errorf("fetch %q = %v, want %s", tc.id, p, tc.code)
				}
			}
			if res := callRaw(t, s, "search", map[string]any{"query": "nothing like this at all zzzq"}); res.IsError {
				t.Errorf("search without matches: %v", res)
			}
		})
	}
}

// TestConnectors_ReadScope: search and fetch are read-only, so a memories:read token sees and
// calls them.
func TestConnectors_ReadScope(t *testing.T) {
	a := MustOpen(t, testConfig(t, nil))
	tok, _, err := a.Auth().PATs().Create("reader", []string{"memories:read"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	rec := mcpRequest(a.Handler(), "Bearer "+tok, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	result, rerr, _ := rpcResponse(t, rec.Body.Bytes())
	if rerr != nil {
		t.Fatal(rerr)
	}
	var list struct{ Tools []struct{ Name string } }
	json.Unmarshal(result, &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if !slices.Contains(names, "search") || !slices.Contains(names, "fetch") || slices.Contains(names, "remember") {
		t.Errorf("a read token sees %v", names)
	}
	rec = mcpRequest(a.Handler(), "Bearer "+tok, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`)
	if _, rerr, _ := rpcResponse(t, rec.Body.Bytes()); rerr != nil {
		t.Errorf("search with a read token: %v", rerr)
	}
}

// rawTools is tools/list as JSON, one page (ownsona's tools fit on one).
func rawTools(t *testing.T, a *App) []map[string]json.RawMessage {
	t.Helper()
	_, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "MCP-Protocol-Version", "2025-11-25")
	result, rerr, _ := rpcResponse(t, body)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var list struct {
		Tools      []map[string]json.RawMessage `json:"tools"`
		NextCursor string                       `json:"nextCursor"`
	}
	if err := json.Unmarshal(result, &list); err != nil || list.NextCursor != "" {
		t.Fatalf("tools/list: %s (%v)", result, err)
	}
	return list.Tools
}

// TestTools_Annotations: every tool's annotations carry its title and all four hints, each an
// explicit boolean, openWorldHint false.
func TestTools_Annotations(t *testing.T) {
	a := MustOpen(t, testConfig(t, nil))
	tools := rawTools(t, a)
	if len(tools) != len(allTools) {
		t.Errorf("%d tools, want %d", len(tools), len(allTools))
	}
	for _, tl := range tools {
		var name, title string
		json.Unmarshal(tl["name"], &name)
		json.Unmarshal(tl["title"], &title)
		var ann map[string]any
		if err := json.Unmarshal(tl["annotations"], &ann); err != nil {
			t.Errorf("%s: annotations %s", name, tl["annotations"])
			continue
		}
		if title == "" || ann["title"] != title {
			t.Errorf("%s: annotations.title %v, tool title %q", name, ann["title"], title)
		}
		for _, h := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := ann[h].(bool); !ok {
				t.Errorf("%s: %s is %v, want a boolean", name, h, ann[h])
			}
		}
		if ann["openWorldHint"] != false {
			t.Errorf("%s: openWorldHint %v", name, ann["openWorldHint"])
		}
		if ann["readOnlyHint"] == true && ann["destructiveHint"] == true {
			t.Errorf("%s: read-only and destructive", name)
		}
	}
}

// typeLists walks a JSON Schema and reports every "type" that is not a single name.
func typeLists(path string, v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if ty, ok := x["type"]; ok {
			if _, one := ty.(string); !one {
				*out = append(*out, fmt.Sprintf("%s.type = %v", path, ty))
			}
		}
		for k, sub := range x {
			typeLists(path+"."+k, sub, out)
		}
	case []any:
		for i, sub := range x {
			typeLists(fmt.Sprintf("%s[%d]", path, i), sub, out)
		}
	}
}

// TestTools_SchemasOneType: no input or output schema of any tool says "type": [...] (MCP
// Inspector's portability warning); a value of several types is anyOf branches.
func TestTools_SchemasOneType(t *testing.T) {
	a := MustOpen(t, testConfig(t, nil))
	anyOfs := 0
	for _, tl := range rawTools(t, a) {
		var name string
		json.Unmarshal(tl["name"], &name)
		for _, key := range []string{"inputSchema", "outputSchema"} {
			var s any
			if err := json.Unmarshal(tl[key], &s); err != nil {
				t.Fatalf("%s.%s: %v", name, key, err)
			}
			var bad []string
			typeLists(name+"."+key, s, &bad)
			for _, b := range bad {
				t.Error(b)
			}
			anyOfs += strings.Count(string(tl[key]), `"anyOf"`)
		}
	}
	if anyOfs < 13 {
		t.Errorf("%d anyOf keywords, want at least the 13 former type lists", anyOfs)
	}
	// Validation reads them as before: an array or a string for tags, a date-time or null for
	// expires_at, and the messages name the field.
	for _, tc := range []struct{ name, args, want string }{
		{"tags array", `{"text":"Likes tea","tags":["drinks"]}`, ""},
		{"tags string", `{"text":"Likes green tea","tags":"drinks,tea"}`, ""},
		{"tags number", `{"text":"Likes black tea","tags":5}`, "tags: must be an array or a string"},
		{"tags item", `{"text":"Likes white tea","tags":["ok",7]}`, "tags[1]: must be a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":`+tc.args+`}}`, "MCP-Protocol-Version", "2025-11-25")
			var res struct {
				Result toolResult `json:"result"`
			}
			json.Unmarshal(body, &res)
			msg, _ := res.Result.StructuredContent["error"].(map[string]any)
			switch {
			case tc.want == "" && res.Result.IsError:
				t.Errorf("refused: %s", body)
			case tc.want != "" && (msg == nil || msg["message"] != tc.want):
				t.Errorf("got %s, want %q", body, tc.want)
			}
		})
	}
	for _, tc := range []struct{ args, want string }{
		{`{"id":1,"expires_at":null,"dry_run":true}`, ""},
		{`{"id":1,"expires_at":"2030-01-01T00:00:00Z","dry_run":true}`, ""},
		{`{"id":1,"expires_at":5}`, "expires_at: must be a string or null"},
		{`{"id":1,"expires_at":"soon"}`, `expires_at: "soon" is not an RFC 3339 date-time such as 2026-05-17T14:00:00Z`},
	} {
		_, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"update_memory","arguments":`+tc.args+`}}`, "MCP-Protocol-Version", "2025-11-25")
		var res struct {
			Result toolResult `json:"result"`
		}
		json.Unmarshal(body, &res)
		msg, _ := res.Result.StructuredContent["error"].(map[string]any)
		if tc.want != "" && (msg == nil || msg["message"] != tc.want) {
			t.Errorf("update_memory %s: got %s, want %q", tc.args, body, tc.want)
		}
		if tc.want == "" && msg != nil && msg["code"] == "INVALID_INPUT" {
			t.Errorf("update_memory %s refused: %s", tc.args, body)
		}
	}
}

// TestMCPApp: recall, search_memory and list_memories name the app in _meta.ui.resourceUri (and
// the flat legacy key); the app is listed and read as text/html;profile=mcp-app with a CSP that
// allows no other origin; the extension is in the capabilities of both eras.
func TestMCPApp(t *testing.T) {
	const uri = "ui://ownsona/memories.html"
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			_, s := connectSDK(t, era.pin)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()

			caps := s.InitializeResult().Capabilities
			ext, ok := caps.Extensions["io.modelcontextprotocol/ui"].(map[string]any)
			if !ok || !jsonEq(ext["mimeTypes"], []any{"text/html;profile=mcp-app"}) {
				t.Errorf("capabilities.extensions = %v", caps.Extensions)
			}

			withApp := map[string]bool{}
			for tool, err := range s.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				ui, _ := tool.Meta["ui"].(map[string]any)
				if ui == nil {
					continue
				}
				withApp[tool.Name] = true
				if ui["resourceUri"] != uri || tool.Meta["ui/resourceUri"] != uri || !jsonEq(ui["visibility"], []any{"model", "app"}) {
					t.Errorf("%s: _meta = %v", tool.Name, tool.Meta)
				}
			}
			if want := map[string]bool{"recall": true, "search_memory": true, "list_memories": true}; !jsonEq(withApp, want) {
				t.Errorf("tools with the app: %v, want %v", withApp, want)
			}

			res, err := s.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var listed *mcp.Resource
			for _, r := range res.Resources {
				if r.URI == uri {
					listed = r
				}
			}
			if listed == nil || listed.MIMEType != "text/html;profile=mcp-app" {
				t.Fatalf("resources/list: %v", res.Resources)
			}
			wantCSP := map[string]any{"connectDomains": []any{}, "resourceDomains": []any{}, "frameDomains": []any{}, "baseUriDomains": []any{}}
			if ui, _ := listed.Meta["ui"].(map[string]any); ui == nil || !jsonEq(ui["csp"], wantCSP) || ui["prefersBorder"] != true {
				t.Errorf("listed _meta = %v", listed.Meta)
			}

			read, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(read.Contents) != 1 {
				t.Fatalf("%d contents", len(read.Contents))
			}
			c := read.Contents[0]
			if c.URI != uri || c.MIMEType != "text/html;profile=mcp-app" || !strings.Contains(strings.ToLower(c.Text), "<html") {
				t.Errorf("contents: %s %s %.80q", c.URI, c.MIMEType, c.Text)
			}
			if ui, _ := c.Meta["ui"].(map[string]any); ui == nil || !jsonEq(ui["csp"], wantCSP) {
				t.Errorf("contents _meta = %v", c.Meta)
			}
			// Self-contained: nothing from another origin.
			for _, bad := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "@import"} {
				if strings.Contains(c.Text, bad) {
					t.Errorf("the app refers to another origin: %s", bad)
				}
			}
		})
	}
}

// TestMCPApp_Allowlist: the app is offered while one of the tools it shows is allowed.
func TestMCPApp_Allowlist(t *testing.T) {
	for _, tc := range []struct {
		tools []string
		want  bool
	}{
		{[]string{"remember"}, false},
		{[]string{"list_memories"}, true},
		{[]string{"search_memory"}, true},
		{[]string{"recall", "remember"}, true},
	} {
		t.Run(strings.Join(tc.tools, ","), func(t *testing.T) {
			cfg := testConfig(t, nil)
			cfg.Tools = tc.tools
			a := MustOpen(t, cfg)
			_, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
			if got := strings.Contains(string(body), "ui://ownsona/memories.html"); got != tc.want {
				t.Errorf("listed %v, want %v: %s", got, tc.want, body)
			}
			_, body = rpcPost(t, a, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"ui://ownsona/memories.html"}}`)
			if got := strings.Contains(string(body), `"contents"`); got != tc.want {
				t.Errorf("read %v, want %v: %s", got, tc.want, body)
			}
		})
	}
}
