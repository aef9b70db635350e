package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/vector"
)

// MustNewBuiltin is MustNew with the builtin embedder, for searches and near duplicates by
// meaning.
func MustNewBuiltin(tb testing.TB, cfg Config) *Server {
	tb.Helper()
	db := kvtest.Open(tb, memory.Migrations...)
	mem, err := memory.Open(db, memory.Config{Embedder: vector.NewBuiltin()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { mem.Close() })
	cfg.Memories = mem
	s, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// answer is a tools/call result as the client reads it.
type answer struct {
	structured json.RawMessage
	text       string
	isError    bool
	payload    map[string]any
}

// rpcCall sends one request through the mcp server and returns its result, failing on an
// error.
func rpcCall(tb testing.TB, s *Server, ctx context.Context, method string, params any) json.RawMessage {
	tb.Helper()
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		tb.Fatal(err)
	}
	out := s.RPC.Handle(ctx, req)
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		tb.Fatalf("%s: the answer is not JSON (%v): %s", method, err, out)
	}
	if resp.Error != nil {
		tb.Fatalf("%s %v: error %s", method, params, resp.Error)
	}
	return resp.Result
}

// callTool calls a tool and checks what every answer must be: whole JSON, its text the
// structured content.
func callTool(tb testing.TB, s *Server, name string, args any) answer {
	tb.Helper()
	raw := rpcCall(tb, s, context.Background(), "tools/call", map[string]any{"name": name, "arguments": args})
	var res struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
		IsError    bool            `json:"isError"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) != 1 {
		tb.Fatalf("%s: result %s", name, raw)
	}
	a := answer{structured: res.Structured, text: res.Content[0].Text, isError: res.IsError}
	if err := json.Unmarshal(res.Structured, &a.payload); err != nil {
		tb.Fatalf("%s: structuredContent is not a JSON object: %v", name, err)
	}
	if !json.Valid([]byte(a.text)) {
		if !strings.HasPrefix(a.text, "Found ") && !strings.HasPrefix(a.text, "No ") { // recall's text form
			tb.Fatalf("%s: content[0].text is neither JSON nor recall's text: %.200s", name, a.text)
		}
	} else if a.text != string(a.structured) {
		tb.Errorf("%s: content[0].text is not the structured content:\n%.300s\n%.300s", name, a.text, a.structured)
	}
	return a
}

// within checks that what the model reads of an answer fits the budget.
func within(tb testing.TB, what string, a answer, budget int) {
	tb.Helper()
	if n := jsLen(a.structured); n > budget {
		tb.Errorf("%s: structuredContent is %d characters, over the budget of %d", what, n, budget)
	}
	if n := jsLen(a.text); n > budget {
		tb.Errorf("%s: content[0].text is %d characters, over the budget of %d", what, n, budget)
	}
}

// cutSays checks that an answer says it was cut and how many items it left out.
func cutSays(tb testing.TB, what string, a answer, omitted int) {
	tb.Helper()
	if a.payload["truncated"] != true || a.payload["note"] == "" || a.payload["note"] == nil {
		tb.Errorf("%s: truncated %v, note %v; want it to say it was cut", what, a.payload["truncated"], a.payload["note"])
	}
	if omitted >= 0 && a.payload["omitted"] != float64(omitted) {
		tb.Errorf("%s: omitted %v, want %d", what, a.payload["omitted"], omitted)
	}
}

// words is a text of n random words from a vocabulary large enough that two texts share
// few, so that they are no near duplicates of each other.
func words(r *rand.Rand, n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = fmt.Sprintf("w%dx", r.IntN(5000))
	}
	return strings.Join(w, " ")
}

// fill stores n memories of about chars characters, each mentioning "garden" and tagged
// "budget", and returns their ids, oldest first.
func fill(tb testing.TB, s *Server, n, chars int) []uint64 {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, uint64(n)))
	drafts := make([]memory.Draft, n)
	for i := range drafts {
		drafts[i] = memory.Draft{Text: fmt.Sprintf("Memory %d about the garden: %s", i, words(r, chars/7)),
			Tags: []string{"budget"}, Dedup: memory.DedupInsert}
	}
	res, _, err := s.mem.Remember(context.Background(), drafts, memory.Origin{Client: "test"})
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]uint64, n)
	for i, r := range res {
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
		ids[i] = r.ID
	}
	return ids
}

func idsOf(tb testing.TB, list any) []uint64 {
	tb.Helper()
	var out []uint64
	for _, m := range list.([]any) {
		out = append(out, uint64(m.(map[string]any)["id"].(float64)))
	}
	return out
}

func TestJSLen(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int
	}{{"", 0}, {"abc", 3}, {"é", 1}, {"日本", 2}, {"😀", 2}, {"a😀é", 4}} {
		if got := jsLen(tc.s); got != tc.want {
			t.Errorf("jsLen(%q) = %d, want %d", tc.s, got, tc.want)
		}
	}
}

// TestServer_answerBudget (issue 27, item 4): every tool whose answer can grow, filled past the
// budget, answers within it with whole JSON that says it was cut, and where the tool pages its
// cursor continues exactly after the last item returned.
func TestServer_answerBudget(t *testing.T) {
	const budget = 4000
	s := MustNewBuiltin(t, Config{MaxResultChars: budget})
	ids := fill(t, s, 60, 500)

	t.Run("list_memories pages through all", func(t *testing.T) {
		var got []uint64
		cursor, pages := "", 0
		for {
			args := map[string]any{"limit": 50, "tags": "budget"}
			if cursor != "" {
				args["cursor"] = cursor
			}
			a := callTool(t, s, "list_memories", args)
			within(t, "list_memories", a, budget)
			page := idsOf(t, a.payload["memories"])
			if len(page) == 0 {
				t.Fatalf("page %d is empty: %s", pages, a.structured)
			}
			if pages == 0 {
				cutSays(t, "list_memories", a, 50-len(page))
				if note, _ := a.payload["note"].(string); !strings.Contains(note, a.payload["next_cursor"].(string)) {
					t.Errorf("the note does not name the cursor: %v", a.payload["note"])
				}
			}
			got = append(got, page...)
			pages++
			if cursor = a.payload["next_cursor"].(string); cursor == "" || pages > 60 {
				break
			}
		}
		want := slices.Clone(ids)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Errorf("pages gave %v, want %v", got, want)
		}
	})

	t.Run("export_memories continues with next_cursor", func(t *testing.T) {
		var got []uint64
		args := map[string]any{}
		for pages := 0; pages <= 60; pages++ {
			a := callTool(t, s, "export_memories", args)
			within(t, "export_memories", a, budget)
			part := idsOf(t, a.payload["memories"])
			if a.payload["count"] != float64(len(part)) {
				t.Errorf("count %v for %d memories", a.payload["count"], len(part))
			}
			got = append(got, part...)
			next, _ := a.payload["next_cursor"].(string)
			if next == "" {
				if a.payload["truncated"] != nil {
					t.Errorf("the last part says it was cut: %v", a.payload["note"])
				}
				break
			}
			cutSays(t, "export_memories", a, len(ids)-len(got))
			args = map[string]any{"cursor": next}
		}
		if !slices.Equal(got, ids) {
			t.Errorf("parts gave %v, want %v", got, ids)
		}
	})

	for _, tc := range []struct {
		tool string
		args map[string]any
		list string
		want int // items without the budget
	}{
		{"text_search", map[string]any{"text": "garden", "limit": 50}, "memories", 50},
		{"recall", map[string]any{"query": "garden", "limit": 50}, "matches", 50},
		{"search_memory", map[string]any{"query": "garden", "limit": 50}, "matches", 50},
		{"recall", map[string]any{"query": "garden", "limit": 50, "format": "text"}, "matches", 50},
	} {
		name := tc.tool
		if f, ok := tc.args["format"]; ok {
			name += " format " + f.(string)
		}
		t.Run(name, func(t *testing.T) {
			a := callTool(t, s, tc.tool, tc.args)
			within(t, tc.tool, a, budget)
			n := len(a.payload[tc.list].([]any))
			if n == 0 {
				t.Fatalf("no %s: %s", tc.list, a.structured)
			}
			cutSays(t, tc.tool, a, tc.want-n)
			if tc.args["format"] == "text" {
				if strings.Count(a.text, "\n\n") < 1 || !strings.Contains(a.text, "left out to fit the answer budget") {
					t.Errorf("the text does not say it was cut: %s", a.text)
				}
				if got := strings.Count(a.text, "[id "); got != n {
					t.Errorf("the text lists %d memories, the payload %d", got, n)
				}
			}
		})
	}

	t.Run("build_context_prompt", func(t *testing.T) {
		a := callTool(t, s, "build_context_prompt", map[string]any{"user_prompt": "what grows in my garden", "limit": 50})
		within(t, "build_context_prompt", a, budget)
		used := len(a.payload["memory_ids"].([]any))
		if used == 0 || a.payload["omitted"] != float64(50-used) || a.payload["truncated"] != true {
			t.Errorf("used %d, omitted %v, truncated %v", used, a.payload["omitted"], a.payload["truncated"])
		}
		if p := a.payload["prompt"].(string); strings.Count(p, "\n- ") != used || !strings.HasSuffix(p, "what grows in my garden") {
			t.Errorf("prompt of %d facts: %q", used, p)
		}
	})

	t.Run("list_tags", func(t *testing.T) {
		var drafts []memory.Draft
		for i := range 300 {
			drafts = append(drafts, memory.Draft{Text: fmt.Sprintf("Tagged fact number %d", i), Tags: []string{fmt.Sprintf("topic-%03d-with-a-longer-name", i)}, Dedup: memory.DedupInsert})
		}
		if _, _, err := s.mem.Remember(context.Background(), drafts, memory.Origin{Client: "test"}); err != nil {
			t.Fatal(err)
		}
		a := callTool(t, s, "list_tags", map[string]any{"limit": 1000})
		within(t, "list_tags", a, budget)
		tags := a.payload["tags"].([]any)
		cutSays(t, "list_tags", a, 301-len(tags))
		if first := tags[0].(map[string]any)["tag"]; first != "budget" {
			t.Errorf("first tag %v, want the most used, budget", first)
		}
	})

	t.Run("remember_batch", func(t *testing.T) {
		before := s.mem.Count(memory.Filter{})
		items := make([]map[string]any, 200)
		for i := range items {
			items[i] = map[string]any{"text": fmt.Sprintf("Batch fact %d is about something else entirely", i), "dedup_policy": "insert"}
		}
		a := callTool(t, s, "remember_batch", map[string]any{"items": items})
		within(t, "remember_batch", a, budget)
		results := a.payload["results"].([]any)
		cutSays(t, "remember_batch", a, 200-len(results))
		if sum := a.payload["summary"].(map[string]any); sum["total"] != 200.0 || sum["succeeded"] != 200.0 {
			t.Errorf("summary %v", sum)
		}
		if got := s.mem.Count(memory.Filter{}) - before; got != 200 {
			t.Errorf("%d memories stored, want 200", got)
		}
	})

	t.Run("update_memory_batch and forget_batch", func(t *testing.T) {
		var items []map[string]any
		for _, id := range ids[:50] {
			items = append(items, map[string]any{"id": id, "importance": 0.7}, map[string]any{"id": id, "text": "unknown " + fmt.Sprint(id)})
		}
		for _, id := range ids[:50] {
			items = append(items, map[string]any{"id": id, "tags": "a,b"}, map[string]any{"id": id + 100000})
		}
		a := callTool(t, s, "update_memory_batch", map[string]any{"items": items, "dry_run": true})
		within(t, "update_memory_batch", a, budget)
		cutSays(t, "update_memory_batch", a, 200-len(a.payload["results"].([]any)))

		var many []uint64
		for i := range 200 {
			many = append(many, ids[i%len(ids)]+uint64(i/len(ids))*100000)
		}
		a = callTool(t, s, "forget_batch", map[string]any{"ids": many, "dry_run": true})
		within(t, "forget_batch", a, budget)
		cutSays(t, "forget_batch", a, 200-len(a.payload["results"].([]any)))
	})
}

// TestServer_answerBudget_longMemory: a memory longer than the budget comes whole as JSON with
// its text cut, saying so; a list that holds it keeps going after it.
func TestServer_answerBudget_longMemory(t *testing.T) {
	const budget = MinMaxResultChars
	s := MustNew(t, Config{MaxResultChars: budget})
	older := fill(t, s, 3, 300)
	long, _, err := s.mem.Remember(context.Background(), []memory.Draft{{Text: "A very long note: " + strings.Repeat("lorem ipsum 😀 dolor ", 200)}}, memory.Origin{Client: "test"})
	if err != nil || long[0].Err != nil {
		t.Fatal(err, long[0].Err)
	}
	id := long[0].ID

	a := callTool(t, s, "get_memory", map[string]any{"id": id})
	within(t, "get_memory", a, budget)
	cutSays(t, "get_memory", a, -1)
	m, _ := a.payload["memory"].(map[string]any)
	if text, _ := m["text"].(string); !strings.HasPrefix(text, "A very long note: lorem ipsum") || !strings.HasSuffix(text, "…") {
		t.Errorf("text %q", text)
	}
	if got := fmt.Sprint(a.payload["text_cut"]); got != fmt.Sprintf("[%d]", id) {
		t.Errorf("text_cut = %s, want [%d]", got, id)
	}
	if note, _ := a.payload["note"].(string); !strings.Contains(note, fmt.Sprintf("memory %d", id)) {
		t.Errorf("note %q does not name the memory", note)
	}

	first := callTool(t, s, "list_memories", map[string]any{"limit": 10})
	within(t, "list_memories", first, budget)
	if got := idsOf(t, first.payload["memories"]); !slices.Equal(got, []uint64{id}) {
		t.Fatalf("first page %v, want the long memory alone", got)
	}
	cutSays(t, "list_memories", first, 3)
	rest := callTool(t, s, "list_memories", map[string]any{"limit": 10, "cursor": first.payload["next_cursor"]})
	want := slices.Clone(older)
	slices.Reverse(want)
	if got := idsOf(t, rest.payload["memories"]); !slices.Equal(got, want) {
		t.Errorf("next page %v, want %v", got, want)
	}
	if rest.payload["truncated"] != nil {
		t.Errorf("the second page was cut: %s", rest.structured)
	}
}

// TestServer_answerBudget_duplicates: near-duplicate groups are cut at a whole group.
func TestServer_answerBudget_duplicates(t *testing.T) {
	const budget = 4000
	s := MustNewBuiltin(t, Config{MaxResultChars: budget})
	r := rand.New(rand.NewPCG(2, 2))
	var drafts []memory.Draft
	for i := range 20 {
		text := fmt.Sprintf("Duplicate pair %d: %s", i, words(r, 60))
		drafts = append(drafts, memory.Draft{Text: text, Dedup: memory.DedupInsert}, memory.Draft{Text: text + " indeed", Dedup: memory.DedupInsert})
	}
	if _, _, err := s.mem.Remember(context.Background(), drafts, memory.Origin{Client: "test"}); err != nil {
		t.Fatal(err)
	}
	a := callTool(t, s, "find_near_duplicates", map[string]any{"threshold": 0.9})
	within(t, "find_near_duplicates", a, budget)
	groups := len(a.payload["groups"].([]any))
	if sum := a.payload["summary"].(map[string]any); sum["groups"] != 20.0 || groups == 0 {
		t.Fatalf("%d groups shown, summary %v", groups, sum)
	}
	cutSays(t, "find_near_duplicates", a, 20-groups)

	var res struct {
		Messages []struct {
			Content struct{ Text string } `json:"content"`
		} `json:"messages"`
	}
	raw := rpcCall(t, s, context.Background(), "prompts/get", map[string]any{"name": "review-duplicates", "arguments": map[string]string{"threshold": "0.9"}})
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	text := res.Messages[0].Content.Text
	if n := jsLen(text); n > budget || !strings.Contains(text, "more groups were left out to fit the answer budget") || !strings.Contains(text, "Group 1 ") {
		t.Errorf("review-duplicates, %d characters: %s", n, text)
	}
}

// TestServer_answerBudget_resourcesPrompts: memory lists in resources and prompts fit too.
func TestServer_answerBudget_resourcesPrompts(t *testing.T) {
	const budget = 4000
	s := MustNew(t, Config{MaxResultChars: budget})
	ids := fill(t, s, 60, 500)
	var drafts []memory.Draft
	for i := range 400 {
		drafts = append(drafts, memory.Draft{Text: fmt.Sprintf("Tag holder %d", i), Tags: []string{fmt.Sprintf("tag-%03d", i)}, Dedup: memory.DedupInsert})
	}
	if _, _, err := s.mem.Remember(context.Background(), drafts, memory.Origin{Client: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"ownsona://memories/recent", "ownsona://tags", fmt.Sprintf("ownsona://memories/%d", ids[0])} {
		t.Run(uri, func(t *testing.T) {
			var res struct {
				Contents []struct{ Text string } `json:"contents"`
			}
			if err := json.Unmarshal(rpcCall(t, s, context.Background(), "resources/read", map[string]any{"uri": uri}), &res); err != nil {
				t.Fatal(err)
			}
			text := res.Contents[0].Text
			if n := jsLen(text); n > budget {
				t.Errorf("%d characters, over %d", n, budget)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			if strings.Contains(uri, "memories/") && !strings.HasSuffix(uri, "recent") {
				if v["truncated"] != nil || v["id"] != float64(ids[0]) {
					t.Errorf("one short memory: %v", v)
				}
				return
			}
			if note, _ := v["note"].(string); v["truncated"] != true || v["omitted"] == nil || !strings.Contains(note, "left out") {
				t.Errorf("does not say it was cut: truncated %v omitted %v note %v", v["truncated"], v["omitted"], v["note"])
			}
		})
	}
	for _, tc := range []struct {
		name string
		args map[string]string
	}{
		{"recall-context", map[string]string{"topic": "garden"}},
		{"summarize-memories", map[string]string{"tag": "budget"}},
		{"tidy-tags", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var res struct {
				Messages []struct {
					Content struct{ Text string } `json:"content"`
				} `json:"messages"`
			}
			params := map[string]any{"name": tc.name}
			if tc.args != nil {
				params["arguments"] = tc.args
			}
			if err := json.Unmarshal(rpcCall(t, s, context.Background(), "prompts/get", params), &res); err != nil {
				t.Fatal(err)
			}
			text := res.Messages[0].Content.Text
			if n := jsLen(text); n > budget {
				t.Errorf("%d characters, over %d", n, budget)
			}
			if !strings.Contains(text, "left out to fit the answer budget") {
				t.Errorf("the prompt does not say it was cut: %s", text)
			}
		})
	}
}

// fakeUploads reports many imports.
type fakeUploads struct{ jobs []memory.ImportJob }

func (f fakeUploads) PrepareUpload(owner, name, filename, format string) (string, string, time.Time, int64, error) {
	return "", "", time.Time{}, 0, fmt.Errorf("no uploads here")
}
func (f fakeUploads) ImportJobs(string) []memory.ImportJob { return f.jobs }
func (f fakeUploads) ImportJob(_, id string) (memory.ImportJob, bool) {
	return memory.ImportJob{}, false
}

func TestServer_answerBudget_importStatus(t *testing.T) {
	const budget = 4000
	var jobs []memory.ImportJob
	for i := range 40 {
		jobs = append(jobs, memory.ImportJob{ID: fmt.Sprintf("upload-%d", i), Filename: "memories.jsonl", State: memory.ImportDone,
			Errors: []memory.ImportError{{Line: 3, Error: "text: is empty"}}})
	}
	s := MustNew(t, Config{MaxResultChars: budget, Uploads: fakeUploads{jobs}})
	a := callTool(t, s, "import_status", map[string]any{})
	within(t, "import_status", a, budget)
	cutSays(t, "import_status", a, 40-len(a.payload["imports"].([]any)))
}
