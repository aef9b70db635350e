package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/oauth"
)

// outputCase is one call of a tool whose payload is checked against its outputSchema.
type outputCase struct {
	name    string
	args    string // the arguments, JSON; {active} is the active memory, {gone} a forgotten one
	isError bool   // the call fails with an isError payload
	modern  bool   // sent in the 2026-07-28 era (argument errors are isError results there)
}

// outputCases are the calls of every tool, by name: successes, and the failures a payload
// reports (the store's errors, per-item errors of batches, argument errors).
var outputCases = map[string][]outputCase{
	"remember": {
		{name: "stored", args: `{"text":"My sister Ana lives in Lisbon","tags":["family"],"idempotency_key":"k1","expires_at":"2099-01-01T00:00:00Z"}`},
		{name: "replayed", args: `{"text":"My sister Ana lives in Lisbon","tags":["family"],"idempotency_key":"k1","expires_at":"2099-01-01T00:00:00Z"}`},
		{name: "near duplicates and contradictions", args: `{"text":"My sister Ana lives in Lisbon now","tags":["family"]}`},
		{name: "secret", args: `{"text":"my key is AKIAIOSFODNN7EXAMPLE"}`, isError: true},
		{name: "supersedes a forgotten memory", args: `{"text":"I work from home","supersedes":[{gone}]}`, isError: true, modern: true},
		{name: "argument error", args: `{"text":""}`, isError: true, modern: true},
	},
	"remember_batch": {
		{name: "items fail alone", args: `{"items":[{"text":"I play the cello","tags":"music"},{"text":""},{"text":"a JWT eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"}]}`},
	},
	"recall":               {{name: "matches", args: `{"query":"where does my sister live","tags":"family"}`}, {name: "time window", args: `{"query":"what happened last week"}`}, {name: "text", args: `{"query":"cello","format":"text"}`}},
	"search_memory":        {{name: "matches", args: `{"query":"sister Lisbon","include_superseded":true}`}},
	"build_context_prompt": {{name: "prompt", args: `{"user_prompt":"plan a trip to see my sister","max_chars":150}`}},
	"list_memories":        {{name: "page", args: `{"limit":1}`}, {name: "with tombstones", args: `{"include_deleted":true}`}},
	"get_memory": {
		{name: "active", args: `{"id":{active}}`},
		{name: "forgotten", args: `{"id":{gone}}`},
		{name: "missing", args: `{"id":999999}`, isError: true},
	},
	"update_memory": {
		{name: "changed", args: `{"id":{active},"tags":["home","work"],"expires_at":null}`},
		{name: "dry run", args: `{"id":{active},"text":"I work from a café","dry_run":true}`},
		{name: "forgotten", args: `{"id":{gone},"text":"again"}`, isError: true},
	},
	"update_memory_batch": {{name: "items fail alone", args: `{"items":[{"id":{active},"importance":0.9},{"id":999999,"importance":0.1},{"id":{active},"text":""}]}`}},
	"confirm":             {{name: "confirmed", args: `{"id":{active}}`}, {name: "missing", args: `{"id":999999}`, isError: true}},
	"forget": {
		{name: "dry run", args: `{"id":{active},"dry_run":true}`},
		{name: "already forgotten", args: `{"id":{gone},"reason":"moved"}`},
		{name: "contradictory arguments", args: `{"id":{active},"hard_delete":true,"replaced_by_id":{gone}}`, isError: true, modern: true},
	},
	"forget_batch":         {{name: "items fail alone", args: `{"ids":[{gone},999999],"dry_run":true}`}},
	"text_search":          {{name: "found", args: `{"text":"lisbon"}`}},
	"find_near_duplicates": {{name: "groups", args: `{"threshold":0.5}`}},
	"count_memories":       {{name: "count", args: `{"tags":"family"}`}},
	"memory_stats":         {{name: "stats", args: `{}`}},
	"list_tags":            {{name: "tags", args: `{}`}},
	"export_memories":      {{name: "all", args: `{}`}, {name: "bad cursor", args: `{"cursor":"zz"}`, isError: true, modern: true}},
	"search":               {{name: "results", args: `{"query":"sister"}`}},
	"fetch": {
		{name: "document", args: `{"id":"{active}"}`},
		{name: "forgotten", args: `{"id":"{gone}"}`, isError: true},
		{name: "not an id", args: `{"id":"twelve"}`, isError: true},
	},
	"prepare_import_upload":     {{name: "url", args: `{"filename":"memories.jsonl","format":"mem0"}`}},
	"import_status":             {{name: "jobs", args: `{}`}, {name: "unknown", args: `{"id":"nope"}`, isError: true}},
	"prepare_local_file_upload": {{name: "url", args: `{"filename":"memories.jsonl"}`}},
	"search_kura_notes":         {{name: "notes", args: `{"query":"sister","min_similarity":0}`}},
	"memory.search":             {{name: "agent scope", args: `{"query":"sister","scope":"agent"}`}, {name: "user scope", args: `{"query":"sister","scope":"user"}`}},
}

// jobUploads reports imports as app/uploads keeps them: one waiting for its file, one done
// with per-line errors.
type jobUploads struct{}

func (jobUploads) PrepareUpload(owner, name, filename, format string) (string, string, time.Time, int64, error) {
	return "https://mem.example/uploads/u1", "tok", time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), 1 << 20, nil
}

func (jobUploads) ImportJobs(string) []memory.ImportJob {
	at := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	return []memory.ImportJob{
		{ID: "u2", Filename: "notes.md", Client: "pat:out", State: memory.ImportWaiting, Format: "markdown", Errors: []memory.ImportError{}, CreatedAt: at, ExpiresAt: &at},
		{ID: "u1", Filename: "m.jsonl", Client: "pat:out", State: memory.ImportDone, Format: "ownsona", Bytes: 900, Read: 3, Imported: 1, Skipped: 1, Failed: 1,
			LinksSkipped: 1, Errors: []memory.ImportError{{Line: 2, Error: "not JSON"}}, CreatedAt: at, StartedAt: &at, FinishedAt: &at},
	}
}

func (u jobUploads) ImportJob(owner, id string) (memory.ImportJob, bool) {
	for _, j := range u.ImportJobs(owner) {
		if j.ID == id {
			return j, true
		}
	}
	return memory.ImportJob{}, false
}

// closedSchema compiles an output schema with every object closed (additionalProperties
// false where the schema leaves it open), so that a payload field the schema does not declare
// fails too: the schemas are open to clients, for fields added later, but must declare every
// field the server sends.
func closedSchema(tb testing.TB, raw json.RawMessage) *jsonschema.Resolved {
	tb.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		tb.Fatal(err)
	}
	var closeAll func(v any)
	closeAll = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["properties"]; ok {
				if _, set := x["additionalProperties"]; !set {
					x["additionalProperties"] = false
				}
			}
			for _, c := range x {
				closeAll(c)
			}
		case []any:
			for _, c := range x {
				closeAll(c)
			}
		}
	}
	closeAll(v)
	b, _ := json.Marshal(v)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		tb.Fatalf("outputSchema does not read as a JSON Schema: %v", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		tb.Fatalf("outputSchema does not resolve: %v", err)
	}
	return r
}

// validPayload checks a payload (JSON) against a resolved output schema.
func validPayload(tb testing.TB, r *jsonschema.Resolved, payload []byte) {
	tb.Helper()
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		tb.Fatalf("payload is not JSON: %v", err)
	}
	if err := r.Validate(v); err != nil {
		tb.Errorf("payload does not match the outputSchema: %v\npayload: %.600s", err, payload)
	}
}

// TestServer_outputSchemas calls every tool tools/list shows, with every compatibility mode on,
// and checks each payload, successes and failures, against the tool's outputSchema; then once
// more with a small answer budget, so that the payloads cut to fit it are checked too. A listed
// tool without cases fails: a new tool cannot be forgotten.
func TestServer_outputSchemas(t *testing.T) {
	s := MustNewBuiltin(t, Config{Compat: Compat{ONCE: true, KOmcp: true, Sophon: true}, Uploads: jobUploads{}})
	ctx := oauth.WithPrincipal(context.Background(), &oauth.Principal{Kind: "pat", ClientID: "out", Name: "pat:out", Scope: []string{"memories:write"}})
	res, e := handle(t, s, ctx, false, "tools/list", map[string]any{})
	if e != nil {
		t.Fatal(e)
	}
	var list struct {
		Tools []struct {
			Name         string          `json:"name"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(res, &list); err != nil {
		t.Fatal(err)
	}

	// The store: an active memory, a forgotten one, one superseded, near duplicates.
	active := callTool(t, s, "remember", map[string]any{"text": "I work from home on Fridays", "tags": "work"})
	gone := callTool(t, s, "remember", map[string]any{"text": "I live in Porto", "tags": "home"})
	activeID, goneID := uint64(active.payload["memory_id"].(float64)), uint64(gone.payload["memory_id"].(float64))
	callTool(t, s, "remember", map[string]any{"text": "I live in Lisbon", "tags": "home", "supersedes": []uint64{goneID}})
	if a := callTool(t, s, "forget", map[string]any{"id": goneID, "reason": "moved"}); a.isError {
		t.Fatalf("forget: %s", a.structured)
	}

	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range list.Tools {
		cases, ok := outputCases[tool.Name]
		if !ok {
			t.Errorf("tool %s has no case in outputCases: add its calls, so that its payloads are checked against its outputSchema", tool.Name)
			continue
		}
		schemas[tool.Name] = closedSchema(t, tool.OutputSchema)
		for _, tc := range cases {
			t.Run(tool.Name+"/"+tc.name, func(t *testing.T) {
				args := json.RawMessage(strings.NewReplacer("{active}", fmt.Sprint(activeID), "{gone}", fmt.Sprint(goneID)).Replace(tc.args))
				res, e := handle(t, s, ctx, tc.modern, "tools/call", map[string]any{"name": tool.Name, "arguments": args})
				if e != nil {
					t.Fatalf("JSON-RPC error %d %s %v, want a result", e.Code, e.Message, e.Data)
				}
				var r struct {
					Structured json.RawMessage `json:"structuredContent"`
					IsError    bool            `json:"isError"`
				}
				if err := json.Unmarshal(res, &r); err != nil {
					t.Fatal(err)
				}
				if r.IsError != tc.isError {
					t.Errorf("isError %v, want %v: %.300s", r.IsError, tc.isError, r.Structured)
				}
				validPayload(t, schemas[tool.Name], r.Structured)
			})
		}
	}
	for name := range outputCases {
		if _, ok := schemas[name]; !ok {
			t.Errorf("outputCases has %s, which tools/list does not show", name)
		}
	}

	// Payloads cut to the answer budget: whole items left out, a memory's text cut, and no
	// item at all when not even one fits.
	small := MustNewBuiltin(t, Config{MaxResultChars: MinMaxResultChars})
	ids := fill(t, small, 12, 600)
	callTool(t, small, "remember", map[string]any{"text": "Long: " + strings.Repeat("garden words ", 400), "dedup_policy": "insert"})
	cut := 0
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_memories", map[string]any{"limit": 50}},
		{"recall", map[string]any{"query": "garden", "limit": 50}},
		{"text_search", map[string]any{"text": "garden", "limit": 50}},
		{"export_memories", map[string]any{}},
		{"get_memory", map[string]any{"id": ids[len(ids)-1] + 1}},
		{"list_tags", map[string]any{}},
		{"build_context_prompt", map[string]any{"user_prompt": "garden", "limit": 50}},
		{"forget_batch", map[string]any{"ids": ids, "dry_run": true}},
	} {
		a := callTool(t, small, c.tool, c.args)
		if a.payload["truncated"] == true {
			cut++
		}
		t.Run("budget/"+c.tool, func(t *testing.T) { validPayload(t, schemas[c.tool], a.structured) })
	}
	if cut < 5 {
		t.Errorf("only %d of the answers were cut to the budget: the check of cut payloads checks little", cut)
	}
	// Not even one item fits: get_memory's memory is null then.
	for _, p := range []trimmable{memoryPayload{OK: true, Memory: &memoryOut{ID: 1, Text: "x", Tags: []string{}}}} {
		b, err := json.Marshal(p.trimmed(0, -1))
		if err != nil {
			t.Fatal(err)
		}
		t.Run("budget/get_memory/none fits", func(t *testing.T) { validPayload(t, schemas["get_memory"], b) })
	}
}

// TestOutputOf_importState: import_status's states are the store's, as its schema declares them.
func TestOutputOf_importState(t *testing.T) {
	got := outputOf[importStatusPayload]()["properties"].(schema)["imports"].(schema)["items"].(schema)["properties"].(schema)["state"].(schema)["enum"]
	want := []string{memory.ImportWaiting, memory.ImportExpired, memory.ImportRunning, memory.ImportDone, memory.ImportFailed}
	if !slices.Equal(got.([]string), want) {
		t.Errorf("state enum %v, want %v", got, want)
	}
}
