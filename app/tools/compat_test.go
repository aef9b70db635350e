package tools

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/oauth"
)

// modernMeta makes a request 2026-07-28's.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

// rpcError is a JSON-RPC error as the client reads it.
type rpcError struct {
	Code    int               `json:"code"`
	Message string            `json:"message"`
	Data    map[string]string `json:"data"`
}

// handle sends one request through Handle, in the 2026-07-28 era when modern, and returns its
// result or its error.
func handle(tb testing.TB, s *Server, ctx context.Context, modern bool, method string, params map[string]any) (json.RawMessage, *rpcError) {
	tb.Helper()
	if modern {
		params = maps(params, map[string]any{"_meta": json.RawMessage(modernMeta)})
	}
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	if err != nil {
		tb.Fatal(err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	out := s.RPC.Handle(ctx, req)
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("%s: %v: %s", method, err, out)
	}
	return resp.Result, resp.Error
}

func maps(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for _, m := range []map[string]any{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// toolNames lists tools/list's names.
func toolNames(tb testing.TB, s *Server, ctx context.Context) []string {
	tb.Helper()
	res, e := handle(tb, s, ctx, false, "tools/list", map[string]any{})
	if e != nil {
		tb.Fatal(e)
	}
	var list struct{ Tools []struct{ Name string } }
	if err := json.Unmarshal(res, &list); err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, t := range list.Tools {
		names = append(names, t.Name)
	}
	return names
}

// uris lists resources/list's and resources/templates/list's URIs.
func uris(tb testing.TB, s *Server) []string {
	tb.Helper()
	var out []string
	res, _ := handle(tb, s, context.Background(), false, "resources/list", map[string]any{})
	var rl struct{ Resources []struct{ URI string } }
	json.Unmarshal(res, &rl)
	for _, r := range rl.Resources {
		out = append(out, r.URI)
	}
	res, _ = handle(tb, s, context.Background(), false, "resources/templates/list", map[string]any{})
	var tl struct {
		ResourceTemplates []struct{ URITemplate string } `json:"resourceTemplates"`
	}
	json.Unmarshal(res, &tl)
	for _, t := range tl.ResourceTemplates {
		out = append(out, t.URITemplate)
	}
	return out
}

// stdioClient is a client of ServeStdio over pipes: it reads every line the server writes.
type stdioClient struct {
	w     io.Writer
	lines chan map[string]json.RawMessage
}

func startStdio(tb testing.TB, s *Server, version string) *stdioClient {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { s.RPC.ServeStdio(ctx, inR, outW); outW.Close(); close(served) }()
	c := &stdioClient{w: inW, lines: make(chan map[string]json.RawMessage, 64)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				c.lines <- m
			}
		}
		close(c.lines)
	}()
	tb.Cleanup(func() { cancel(); inW.Close(); <-served })
	c.send(tb, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`)
	c.next(tb, func(m map[string]json.RawMessage) bool { return string(m["id"]) == "1" })
	c.send(tb, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *stdioClient) send(tb testing.TB, line string) {
	tb.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		tb.Fatal(err)
	}
}

// next returns the first message that match accepts, and what came before it.
func (c *stdioClient) next(tb testing.TB, match func(map[string]json.RawMessage) bool) (map[string]json.RawMessage, []string) {
	tb.Helper()
	var before []string
	timeout := time.After(time.Minute) // a guard against a hang, not a timed assertion
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				tb.Fatalf("the server closed; before: %v", before)
			}
			if match(m) {
				return m, before
			}
			var method string
			json.Unmarshal(m["method"], &method)
			before = append(before, method)
		case <-timeout:
			tb.Fatalf("no answer; before: %v", before)
		}
	}
}

// notificationsUntil pings and returns the methods of the notifications the server sent
// before the pong.
func (c *stdioClient) notificationsUntil(tb testing.TB, id int) []string {
	tb.Helper()
	c.send(tb, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
	_, before := c.next(tb, func(m map[string]json.RawMessage) bool { return string(m["id"]) == fmt.Sprint(id) })
	return before
}

// TestServer_SetCompat (issue 27, item 7): every mode is off by default and the default lists
// are ownsona's alone, its tools unknown tools; switching a mode changes tools/list (and the
// resources for sophon) from the next request and tells a connected client.
func TestServer_SetCompat(t *testing.T) {
	s := MustNew(t, Config{})
	ctx := context.Background()
	if got := toolNames(t, s, ctx); !slices.Equal(got, Names()) {
		t.Errorf("default tools/list = %v, want Names()", got)
	}
	if got := uris(t, s); slices.ContainsFunc(got, func(u string) bool { return strings.HasPrefix(u, "sophon:") }) {
		t.Errorf("default resources %v offer sophon's", got)
	}
	_, unknown := handle(t, s, ctx, false, "tools/call", map[string]any{"name": "frobnicate", "arguments": map[string]any{}})
	for _, name := range compatCatalogue {
		_, e := handle(t, s, ctx, false, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"query": "x"}})
		if e == nil || e.Code != unknown.Code || e.Message != strings.ReplaceAll(unknown.Message, "frobnicate", name) {
			t.Errorf("%s while its mode is off: %+v, want as an unknown tool %+v", name, e, unknown)
		}
	}
	if _, e := handle(t, s, ctx, false, "resources/read", map[string]any{"uri": "sophon://memory/"}); e == nil {
		t.Error("sophon://memory/ is readable with the mode off")
	}

	c := startStdio(t, s, "2025-06-18")
	for i, tc := range []struct {
		compat    Compat
		tools     []string
		notified  []string
		resources bool
	}{
		{Compat{ONCE: true}, []string{"prepare_local_file_upload"}, []string{"notifications/tools/list_changed"}, false},
		{Compat{ONCE: true, KOmcp: true}, []string{"prepare_local_file_upload", "search_kura_notes"}, []string{"notifications/tools/list_changed"}, false},
		{Compat{ONCE: true, KOmcp: true}, []string{"prepare_local_file_upload", "search_kura_notes"}, nil, false},
		{Compat{Sophon: true}, []string{"memory.search"}, []string{"notifications/tools/list_changed", "notifications/resources/list_changed"}, true},
		{Compat{}, nil, []string{"notifications/tools/list_changed", "notifications/resources/list_changed"}, false},
	} {
		t.Run(tc.compat.String(), func(t *testing.T) {
			s.SetCompat(tc.compat)
			if got := s.Compat(); got != tc.compat {
				t.Errorf("Compat() = %+v", got)
			}
			if got := c.notificationsUntil(t, 100+i); !slices.Equal(got, tc.notified) {
				t.Errorf("notified %v, want %v", got, tc.notified)
			}
			if got, want := toolNames(t, s, ctx), slices.Concat(Names(), tc.tools); !slices.Equal(got, want) {
				t.Errorf("tools/list = %v, want %v", got, want)
			}
			var listed []string
			for _, tl := range s.Listed() {
				listed = append(listed, tl.Name)
			}
			if want := slices.Concat(Names(), tc.tools); !slices.Equal(listed, want) {
				t.Errorf("Listed() = %v, want %v", listed, want)
			}
			got := uris(t, s)
			if has := slices.Contains(got, sophonListing) && slices.Contains(got, sophonTemplate); has != tc.resources {
				t.Errorf("resources %v; sophon's offered: %v, want %v", got, has, tc.resources)
			}
		})
	}

	t.Run("the allowlist holds a mode's tool by the tool it stands for", func(t *testing.T) {
		s.SetCompat(Compat{KOmcp: true, Sophon: true})
		defer s.SetCompat(Compat{})
		if err := s.SetAllowlist([]string{"remember"}); err != nil {
			t.Fatal(err)
		}
		if got := toolNames(t, s, ctx); !slices.Equal(got, []string{"remember"}) {
			t.Errorf("tools/list = %v under allowlist remember", got)
		}
		if err := s.SetAllowlist([]string{"recall"}); err != nil {
			t.Fatal(err)
		}
		if got := toolNames(t, s, ctx); !slices.Equal(got, []string{"recall", "search_kura_notes", "memory.search"}) {
			t.Errorf("tools/list = %v under allowlist recall", got)
		}
		if err := s.SetAllowlist([]string{"search_kura_notes"}); err == nil {
			t.Error("an allowlist naming a mode's tool was taken")
		}
		s.SetAllowlist(nil)
	})
}

// TestServer_SetCompat_concurrent: switching modes while requests run is safe (go test -race).
func TestServer_SetCompat_concurrent(t *testing.T) {
	s := MustNew(t, Config{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 50 {
			s.SetCompat(Compat{KOmcp: i%2 == 0, Sophon: i%3 == 0})
		}
	}()
	for range 50 {
		names := toolNames(t, s, context.Background())
		if !slices.Equal(names[:len(Names())], Names()) {
			t.Fatalf("tools/list = %v", names)
		}
		uris(t, s)
	}
	<-done
}

func TestParseCompat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Compat
		err  bool
	}{
		{"", Compat{}, false},
		{"once", Compat{ONCE: true}, false},
		{" Sophon , komcp ", Compat{KOmcp: true, Sophon: true}, false},
		{"once,komcp,sophon", Compat{true, true, true}, false},
		{"once,claude", Compat{}, true},
	} {
		got, err := ParseCompat(tc.in)
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("ParseCompat(%q) = %+v, %v", tc.in, got, err)
		}
		if err == nil {
			if again, _ := ParseCompat(got.String()); again != got {
				t.Errorf("%q: String %q reads back as %+v", tc.in, got.String(), again)
			}
		}
	}
}

// TestCompat_ONCE: prepare_local_file_upload is prepare_import_upload by another name.
func TestCompat_ONCE(t *testing.T) {
	s := MustNew(t, Config{Compat: Compat{ONCE: true}, Uploads: &okUploads{}})
	res, _ := handle(t, s, context.Background(), false, "tools/list", map[string]any{})
	var list struct{ Tools []map[string]json.RawMessage }
	json.Unmarshal(res, &list)
	byName := map[string]map[string]json.RawMessage{}
	for _, tl := range list.Tools {
		var n string
		json.Unmarshal(tl["name"], &n)
		byName[n] = tl
	}
	a, b := byName["prepare_import_upload"], byName["prepare_local_file_upload"]
	for _, k := range []string{"inputSchema", "outputSchema"} {
		if a == nil || b == nil || string(a[k]) != string(b[k]) {
			t.Errorf("%s differs:\n%s\n%s", k, a[k], b[k])
		}
	}
	ctx := oauth.WithPrincipal(context.Background(), &oauth.Principal{Kind: "pat", ClientID: "p1", Name: "pat:once", Scope: []string{"memories:write"}})
	var answers []string
	for _, name := range []string{"prepare_import_upload", "prepare_local_file_upload"} {
		res, e := handle(t, s, ctx, false, "tools/call", map[string]any{"name": name, "arguments": map[string]any{"filename": "m.jsonl", "format": "mem0"}})
		if e != nil {
			t.Fatalf("%s: %+v", name, e)
		}
		answers = append(answers, string(res))
	}
	if answers[0] != answers[1] || !strings.Contains(answers[0], "upload_url") {
		t.Errorf("the answers differ:\n%s\n%s", answers[0], answers[1])
	}
	if want := []string{"pat:p1 pat:once m.jsonl mem0", "pat:p1 pat:once m.jsonl mem0"}; !slices.Equal(s.uploads.(*okUploads).asked, want) {
		t.Errorf("asked %v, want %v", s.uploads.(*okUploads).asked, want)
	}
	if scope, _ := s.Scope("prepare_local_file_upload"); scope != "memories:write" {
		t.Errorf("scope %s", scope)
	}
}

// TestCompat_KOmcp: search_kura_notes as seed 003 specifies it: its schema, its text answers
// and its -32602 errors in every revision.
func TestCompat_KOmcp(t *testing.T) {
	s := MustNewBuiltin(t, Config{Compat: Compat{KOmcp: true}})
	for _, text := range []string{"Machine learning is a subset of artificial intelligence that learns from data",
		"Common machine learning algorithms: decision trees, random forests, neural networks",
		"My sister Ana lives in Lisbon"} {
		if _, _, err := s.mem.Remember(context.Background(), []memory.Draft{{Text: text}}, memory.Origin{Client: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()

	t.Run("tools/list shows KOmcp's schema", func(t *testing.T) {
		res, _ := handle(t, s, ctx, false, "tools/list", map[string]any{})
		var list struct{ Tools []map[string]json.RawMessage }
		json.Unmarshal(res, &list)
		i := slices.IndexFunc(list.Tools, func(tl map[string]json.RawMessage) bool { return string(tl["name"]) == `"search_kura_notes"` })
		if i < 0 {
			t.Fatal("not listed")
		}
		var got, want any
		json.Unmarshal(list.Tools[i]["inputSchema"], &got)
		json.Unmarshal([]byte(`{"type":"object","properties":{"query":{"type":"string","description":"Natural language search query","minLength":1,"maxLength":1000},
			"limit":{"type":"number","description":"Maximum number of results","minimum":1,"maximum":50,"default":10},
			"min_similarity":{"type":"number","description":"Minimum cosine similarity threshold","minimum":0,"maximum":1,"default":0.7}},"required":["query"]}`), &want)
		if !jsonEq(got, want) {
			t.Errorf("inputSchema %s", list.Tools[i]["inputSchema"])
		}
	})

	t.Run("found", func(t *testing.T) {
		a := callTool(t, s, "search_kura_notes", map[string]any{"query": "machine learning algorithms", "limit": 5, "min_similarity": 0.3})
		matches := a.payload["matches"].([]any)
		if len(matches) == 0 || a.isError {
			t.Fatalf("%s", a.structured)
		}
		head := fmt.Sprintf("Found %d notes matching 'machine learning algorithms':\n\n1. **", len(matches))
		if !strings.HasPrefix(a.text, head) || strings.Count(a.text, "(similarity: 0.") != len(matches) {
			t.Errorf("text %q", a.text)
		}
		first := matches[0].(map[string]any)
		if want := fmt.Sprintf("1. **%s** (similarity: %.2f)\n   %s", title(first["text"].(string)), first["score"], first["text"]); !strings.Contains(a.text, want) {
			t.Errorf("text %q lacks %q", a.text, want)
		}
	})

	t.Run("the default floor is 0.7", func(t *testing.T) {
		a := callTool(t, s, "search_kura_notes", map[string]any{"query": "machine learning"})
		for _, m := range a.payload["matches"].([]any) {
			if score := m.(map[string]any)["score"].(float64); score < 0.7 {
				t.Errorf("a match scores %v", score)
			}
		}
	})

	t.Run("none found", func(t *testing.T) {
		a := callTool(t, s, "search_kura_notes", map[string]any{"query": "quantum chromodynamics"})
		want := "No notes found matching 'quantum chromodynamics'. Try:\n- Using different keywords\n- Lowering the similarity threshold\n- Checking if notes exist in your account"
		if a.text != want || a.isError {
			t.Errorf("text %q, isError %v", a.text, a.isError)
		}
	})

	stdio := startStdio(t, s, "2025-11-25")
	for _, tc := range []struct {
		args          string
		field, reason string
	}{
		{`{"query":""}`, "query", "Query cannot be empty"},
		{`{"query":"   "}`, "query", "Query cannot be empty"},
		{`{}`, "query", "Query cannot be empty"},
		{`{"query":7}`, "query", "Query must be a string"},
		{`{"query":"` + strings.Repeat("q", 1001) + `"}`, "query", "Query must be at most 1000 characters"},
		{`{"query":"x","limit":0}`, "limit", "Limit must be between 1 and 50"},
		{`{"query":"x","limit":51}`, "limit", "Limit must be between 1 and 50"},
		{`{"query":"x","limit":"ten"}`, "limit", "Limit must be between 1 and 50"},
		{`{"query":"x","min_similarity":1.5}`, "min_similarity", "Minimum similarity must be between 0 and 1"},
	} {
		want := rpcError{Code: -32602, Message: "Invalid params", Data: map[string]string{"field": tc.field, "reason": tc.reason}}
		params := map[string]any{"name": "search_kura_notes", "arguments": json.RawMessage(tc.args)}
		for _, era := range []string{"legacy", "2026-07-28"} {
			_, e := handle(t, s, ctx, era != "legacy", "tools/call", params)
			if e == nil || e.Code != want.Code || e.Message != want.Message || !jsonEq(e.Data, want.Data) {
				t.Errorf("%s in %s: %+v, want %+v", tc.args, era, e, want)
			}
		}
		stdio.send(t, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"search_kura_notes","arguments":`+tc.args+`}}`)
		m, _ := stdio.next(t, func(m map[string]json.RawMessage) bool { return string(m["id"]) == "9" })
		var e rpcError
		if err := json.Unmarshal(m["error"], &e); err != nil || e.Code != want.Code || e.Message != want.Message || !jsonEq(e.Data, want.Data) {
			t.Errorf("%s in 2025-11-25: %s", tc.args, m["error"])
		}
	}
}

// TestCompat_Sophon: memory.search's scopes from the caller's side, its text, its limit; the
// sophon://memory/ resources.
func TestCompat_Sophon(t *testing.T) {
	s := MustNew(t, Config{Compat: Compat{Sophon: true}})
	write := func(client string, texts ...string) (ids []uint64) {
		for _, text := range texts {
			res, _, err := s.mem.Remember(context.Background(), []memory.Draft{{Text: text}}, memory.Origin{Client: client})
			if err != nil || res[0].Err != nil {
				t.Fatal(err, res[0].Err)
			}
			ids = append(ids, res[0].ID)
		}
		return ids
	}
	write("Gardener", "The roses need pruning in March")
	mine := write("Sophon agent", "The project deadline is Friday", "Deadline notes: the agent drafted the project plan")
	theirs := write("Claude", "The project deadline moved to Monday", "My project deadline worries me")
	ctx := oauth.WithPrincipal(context.Background(), &oauth.Principal{Kind: "oauth", ClientID: "c1", Name: "Sophon agent", Scope: []string{"memories:read", "memories:write"}})

	search := func(args map[string]any) (map[string]any, string) {
		res, e := handle(t, s, ctx, false, "tools/call", map[string]any{"name": "memory.search", "arguments": args})
		if e != nil {
			t.Fatalf("memory.search %v: %+v", args, e)
		}
		var r struct {
			Content    []struct{ Text string }
			Structured map[string]any `json:"structuredContent"`
		}
		json.Unmarshal(res, &r)
		return r.Structured, r.Content[0].Text
	}
	for _, tc := range []struct {
		scope string
		want  []uint64
	}{
		{"agent", mine},
		{"user", theirs},
		{"all", slices.Concat(mine, theirs)},
		{"", slices.Concat(mine, theirs)},
	} {
		t.Run("scope "+tc.scope, func(t *testing.T) {
			args := map[string]any{"query": "project deadline"}
			if tc.scope != "" {
				args["scope"] = tc.scope
			}
			p, text := search(args)
			got := idsOf(t, p["matches"])
			if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(tc.want))) {
				t.Errorf("found %v, want %v", got, tc.want)
			}
			if !strings.HasPrefix(text, fmt.Sprintf("Found %d entries:\n1. ", len(tc.want))) || strings.Count(text, "sophon://memory/") != len(tc.want) {
				t.Errorf("text %q", text)
			}
			if tc.scope == "user" && strings.Contains(text, "agent memory") || tc.scope == "agent" && strings.Contains(text, "user memory") {
				t.Errorf("text %q marks entries of the other scope", text)
			}
		})
	}
	t.Run("limit", func(t *testing.T) {
		if p, _ := search(map[string]any{"query": "project deadline", "limit": 1, "scope": "user"}); len(p["matches"].([]any)) != 1 {
			t.Errorf("limit 1: %v", p["matches"])
		}
		if _, text := search(map[string]any{"query": "zebra"}); text != "Found 0 entries." {
			t.Errorf("nothing found: %q", text)
		}
		_, e := handle(t, s, ctx, false, "tools/call", map[string]any{"name": "memory.search", "arguments": map[string]any{"query": "x", "limit": 101}})
		if e == nil || e.Code != -32602 || e.Data["field"] != "limit" {
			t.Errorf("limit 101: %+v", e)
		}
	})

	t.Run("resources", func(t *testing.T) {
		res, e := handle(t, s, ctx, false, "resources/read", map[string]any{"uri": sophonURI(mine[0])})
		if e != nil {
			t.Fatal(e)
		}
		var r struct {
			Contents []struct{ URI, MIMEType, Text string }
		}
		json.Unmarshal(res, &r)
		if len(r.Contents) != 1 || r.Contents[0].Text != "The project deadline is Friday" || r.Contents[0].MIMEType != "text/plain" {
			t.Errorf("memory resource %s", res)
		}
		res, e = handle(t, s, ctx, false, "resources/read", map[string]any{"uri": sophonListing})
		if e != nil {
			t.Fatal(e)
		}
		json.Unmarshal(res, &r)
		var listing struct {
			Resources []sophonEntry
			Total     int
		}
		if err := json.Unmarshal([]byte(r.Contents[0].Text), &listing); err != nil || listing.Total != 5 || len(listing.Resources) != 5 ||
			listing.Resources[3] != (sophonEntry{URI: sophonURI(mine[0]), Name: "The project deadline is Friday", MIMEType: "text/plain", Description: listing.Resources[3].Description}) {
			t.Errorf("listing %s", r.Contents[0].Text)
		}
		for _, uri := range []string{"sophon://memory/999", "sophon://memory/x", "sophon://memory/01"} {
			if _, e := handle(t, s, ctx, false, "resources/read", map[string]any{"uri": uri}); e == nil {
				t.Errorf("%s was read", uri)
			}
		}
		s.mem.Forget([]uint64{mine[0]}, memory.Forgetting{})
		if _, e := handle(t, s, ctx, false, "resources/read", map[string]any{"uri": sophonURI(mine[0])}); e == nil {
			t.Error("a forgotten memory was read")
		}
	})
}

// TestCompat_SophonApproval: in the sophon mode, the approval gate's outcomes are JSON-RPC
// errors -32001 (rejected) and -32002 (timed out), and nothing changed; off, they stay isError
// payloads.
func TestCompat_SophonApproval(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sophon bool
		reject bool
		code   int
		msg    string
	}{
		{"rejected", true, true, -32001, "Approval rejected"},
		{"timed out", true, false, -32002, "Approval timed out"},
		{"rejected, mode off", false, true, 0, "APPROVAL_REJECTED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := MustNew(t, Config{Approval: approval.HardDelete, ApprovalTimeout: time.Minute, Compat: Compat{Sophon: tc.sophon}})
				res, _, _ := s.mem.Remember(context.Background(), []memory.Draft{{Text: "Keep me"}}, memory.Origin{Client: "test"})
				id := res[0].ID
				type answer struct {
					res json.RawMessage
					err *rpcError
				}
				done := make(chan answer, 1)
				go func() {
					r, e := handle(t, s, context.Background(), false, "tools/call", map[string]any{"name": "forget", "arguments": map[string]any{"id": id, "hard_delete": true}})
					done <- answer{r, e}
				}()
				synctest.Wait()
				pending := s.Approvals().Pending()
				if len(pending) != 1 {
					t.Fatalf("%d pending", len(pending))
				}
				if tc.reject {
					if err := s.Approvals().Decide(pending[0].ID, false, "the owner"); err != nil {
						t.Fatal(err)
					}
				}
				got := <-done
				switch {
				case tc.code != 0 && (got.err == nil || got.err.Code != tc.code || got.err.Message != tc.msg || got.err.Data["tool"] != "forget"):
					t.Errorf("answer %s %+v, want error %d %q", got.res, got.err, tc.code, tc.msg)
				case tc.code == 0 && (got.err != nil || !strings.Contains(string(got.res), tc.msg)):
					t.Errorf("answer %s %+v, want an isError %s", got.res, got.err, tc.msg)
				}
				if _, err := s.mem.Get(id); err != nil {
					t.Errorf("the memory is gone: %v", err)
				}
				s.Approvals().Close()
			})
		})
	}
}

// okUploads mints the same upload for every request and records them.
type okUploads struct{ asked []string }

func (u *okUploads) PrepareUpload(owner, name, filename, format string) (string, string, time.Time, int64, error) {
	u.asked = append(u.asked, strings.Join([]string{owner, name, filename, format}, " "))
	return "https://mem.example/uploads/u1", "tok", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), 1 << 20, nil
}
func (u *okUploads) ImportJobs(string) []memory.ImportJob { return nil }
func (u *okUploads) ImportJob(_, id string) (memory.ImportJob, bool) {
	return memory.ImportJob{}, false
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
