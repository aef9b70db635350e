package app

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
)

// TestSDK_SupersedesAndRetries drives corrections and retries over Streamable HTTP with the
// official Go SDK, as a connector would: supersedes hides the old fact from recall and lists
// while get_memory still shows both ends; possible_contradictions reports a fact with other
// details; an idempotency key answers a retry without storing.
func TestSDK_SupersedesAndRetries(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			_, s := connectSDKWith(t, testConfig(t, nil), era.pin)
			call := func(name string, args map[string]any) map[string]any { return sdkPayload(t, s, name, args) }
			id := func(p map[string]any) float64 {
				t.Helper()
				if p["ok"] != true {
					t.Fatalf("payload %v", p)
				}
				return p["memory_id"].(float64)
			}

			old := id(call("remember", map[string]any{"text": "I live in Paris", "tags": "home"}))
			second := call("remember", map[string]any{"text": "I live in Berlin", "tags": "home"})
			contra, _ := second["possible_contradictions"].([]any)
			if len(contra) != 1 || contra[0].(map[string]any)["id"] != old {
				t.Errorf("possible_contradictions = %v, want memory %v", second["possible_contradictions"], old)
			}
			berlin := id(second)
			if p := call("update_memory", map[string]any{"id": berlin, "supersedes": []any{old}}); p["ok"] != true || !slices.Contains(p["changed_fields"].([]any), any("supersedes")) {
				t.Errorf("update_memory supersedes: %v", p)
			}

			ids := func(list []any) []float64 {
				var out []float64
				for _, m := range list {
					out = append(out, m.(map[string]any)["id"].(float64))
				}
				return out
			}
			recall := call("recall", map[string]any{"query": "where do I live"})
			if got := ids(recall["matches"].([]any)); slices.Contains(got, old) || !slices.Contains(got, berlin) {
				t.Errorf("recall = %v, want %v and not %v", got, berlin, old)
			}
			recall = call("recall", map[string]any{"query": "where do I live", "include_superseded": true})
			if got := ids(recall["matches"].([]any)); !slices.Contains(got, old) {
				t.Errorf("recall with include_superseded = %v, want %v", got, old)
			}
			if got := ids(call("list_memories", nil)["memories"].([]any)); slices.Contains(got, old) {
				t.Errorf("list_memories = %v, want no %v", got, old)
			}
			if got := call("get_memory", map[string]any{"id": old})["memory"].(map[string]any); got["superseded_by"] != berlin {
				t.Errorf("get_memory(old).superseded_by = %v, want %v", got["superseded_by"], berlin)
			}
			if got := call("get_memory", map[string]any{"id": berlin})["memory"].(map[string]any); !slices.Equal(got["supersedes"].([]any), []any{old}) {
				t.Errorf("get_memory(new).supersedes = %v, want [%v]", got["supersedes"], old)
			}
			if p := call("remember", map[string]any{"text": "I live in Rome", "supersedes": []any{old}}); p["ok"] != false ||
				p["error"].(map[string]any)["field"] != "supersedes[0]" {
				t.Errorf("superseding a superseded memory: %v, want refused on supersedes[0]", p)
			}

			key := map[string]any{"text": "My dog is called Rex", "idempotency_key": "call-7"}
			first := call("remember", key)
			retry := call("remember", key)
			if retry["replayed"] != true || retry["memory_id"] != first["memory_id"] || retry["message"] != first["message"] {
				t.Errorf("retry = %v, want first %v replayed", retry, first)
			}
			if _, ok := first["replayed"]; ok {
				t.Errorf("first call says replayed: %v", first)
			}
			other := call("remember", map[string]any{"text": "My dog is called Max", "idempotency_key": "call-7"})
			if e, _ := other["error"].(map[string]any); other["ok"] != false || e["code"] != "INVALID_INPUT" || e["field"] != "idempotency_key" {
				t.Errorf("same key, other text: %v", other)
			}
			batch := call("remember_batch", map[string]any{"items": []any{
				map[string]any{"text": "My dog is called Rex", "idempotency_key": "call-7"},
				map[string]any{"text": "My cat is called Tom", "idempotency_key": "call-8"},
			}})
			results := batch["results"].([]any)
			if r := results[0].(map[string]any); r["replayed"] != true || r["memory_id"] != first["memory_id"] {
				t.Errorf("batch item 0 = %v, want replayed %v", r, first["memory_id"])
			}
			if n := call("count_memories", nil)["count"]; n != float64(3) {
				t.Errorf("count_memories = %v, want 3 (Berlin, Rex, Tom: Paris is superseded, Rex stored once)", n)
			}
			if n := call("count_memories", map[string]any{"include_superseded": true})["count"]; n != float64(4) {
				t.Errorf("count_memories with include_superseded = %v, want 4", n)
			}
		})
	}
}

// TestTools_UpdateKeepsPreviousText (SECURITY.md AG-01): update_memory and update_memory_batch
// over the real handler, under the default approval policy, keep the memory's id and keep each
// text they replace: get_memory shows the chain, export_memories the old text, and the trash
// gives it back.
func TestTools_UpdateKeepsPreviousText(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	lisbon := mustOK(t, a, "remember", map[string]any{"text": "My sister lives in Lisbon", "tags": "family"})["memory_id"].(float64)
	dentist := mustOK(t, a, "remember", map[string]any{"text": "The dentist is on Rua Augusta"})["memory_id"].(float64)
	if p := mustOK(t, a, "update_memory", map[string]any{"id": lisbon, "text": "My sister lives in Porto"}); p["memory_id"] != lisbon {
		t.Errorf("update_memory: %v, want memory %v kept", p, lisbon)
	}
	mustOK(t, a, "update_memory_batch", map[string]any{"items": []any{map[string]any{"id": dentist, "text": "The dentist is on Rua do Ouro"}}})

	for _, tt := range []struct {
		id       float64
		old, now string
	}{{lisbon, "My sister lives in Lisbon", "My sister lives in Porto"}, {dentist, "The dentist is on Rua Augusta", "The dentist is on Rua do Ouro"}} {
		m := mustOK(t, a, "get_memory", map[string]any{"id": tt.id})["memory"].(map[string]any)
		sup, _ := m["supersedes"].([]any)
		if m["text"] != tt.now || len(sup) != 1 {
			t.Fatalf("get_memory(%v) = %v, want the new text and the version it supersedes", tt.id, m)
		}
		v := mustOK(t, a, "get_memory", map[string]any{"id": sup[0]})["memory"].(map[string]any)
		if v["text"] != tt.old || v["superseded_by"] != tt.id || v["replaced_by_id"] != tt.id || v["deleted_at"] == nil {
			t.Errorf("get_memory(%v) = %v, want the old text, forgotten, superseded by %v", sup[0], v, tt.id)
		}
	}
	export, _ := json.Marshal(mustOK(t, a, "export_memories", map[string]any{}))
	if !strings.Contains(string(export), "My sister lives in Lisbon") {
		t.Errorf("export_memories lacks the previous text: %s", export)
	}
	list, _ := json.Marshal(mustOK(t, a, "list_memories", map[string]any{}))
	if strings.Contains(string(list), "Lisbon") || strings.Contains(string(list), "Rua Augusta") {
		t.Errorf("list_memories shows a previous text: %s", list)
	}
}

// TestUpload_SupersedeCycle (SECURITY.md ST-18): an uploaded export in which two forgotten
// memories supersede each other imports without the link that closes the cycle, and says so in
// import_status; restored from the trash, one of them is listed again.
func TestUpload_SupersedeCycle(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	tok := patFor(t, a)
	tk := prepareAs(t, a, tok, "export.jsonl")
	file := `{"format":"ownsona-export","version":1}
{"id":1,"text":"The flat is on Rue du Bac","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","last_confirmed_at":"2026-01-02T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[2],"superseded_by":2}
{"id":2,"text":"The flat is on Rue Oberkampf","created_at":"2026-01-03T03:04:05Z","updated_at":"2026-01-03T03:04:05Z","last_confirmed_at":"2026-01-03T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[1],"superseded_by":1}
`
	if rec := upload(a, tk.url, tk.token, strings.NewReader(file)); rec.Code != 202 {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	if job := waitImport(t, a, tok, tk.id); job["state"] != "done" || job["imported"] != 2.0 || job["links_skipped"] != 1.0 {
		t.Errorf("job %v, want 2 imported and 1 link skipped", job)
	}
	trash, _ := a.mem.List(memory.Filter{OnlyForgotten: true}, memory.Page{Limit: 10})
	var ids []uint64
	for _, m := range trash {
		ids = append(ids, m.ID)
	}
	if _, err := a.mem.Restore(ids); err != nil {
		t.Fatal(err)
	}
	if list := mustOK(t, a, "list_memories", map[string]any{})["memories"].([]any); len(list) != 1 {
		t.Errorf("after restoring %v: list_memories %v, want the successor", ids, list)
	}
}
