package app

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTools_Remember(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, testConfig(t, clock))

	t.Run("stores normalized text and tags with its origin", func(t *testing.T) {
		p := mustOK(t, a, "remember", map[string]any{"text": "  I prefer   dark roast  ", "tags": "Food, Coffee Beans,food", "source_provider": "claude"})
		if got, want := p["message"], "Ok"; got != want {
			t.Errorf("message = %v, want %v", got, want)
		}
		m := mustOK(t, a, "get_memory", map[string]any{"id": id(p)})["memory"].(map[string]any)
		if got, want := m["text"], "I prefer dark roast"; got != want {
			t.Errorf("text = %q, want %q", got, want)
		}
		if got, want := fmt.Sprint(m["tags"]), "[food coffee-beans]"; got != want {
			t.Errorf("tags = %v, want %v", got, want)
		}
		if got, want := m["source_provider"], "claude"; got != want {
			t.Errorf("source_provider = %v, want %v", got, want)
		}
		if got, want := m["source_client"], "pat:test"; got != want {
			t.Errorf("source_client = %v, want %v", got, want)
		}
		if got, want := m["importance"], 0.5; got != want {
			t.Errorf("importance = %v, want %v", got, want)
		}
		if got, want := m["created_at"], "2026-11-22T09:30:00Z"; got != want {
			t.Errorf("created_at = %v, want %v", got, want)
		}
	})

	t.Run("near duplicate is stored and reported", func(t *testing.T) {
		first := mustOK(t, a, "remember", map[string]any{"text": "My sister Ana lives in Lisbon"})
		second := mustOK(t, a, "remember", map[string]any{"text": "My sister Ana lives in Lisbon."})
		if id(second) == id(first) {
			t.Fatal("the near duplicate was not stored")
		}
		dups, _ := second["near_duplicates"].([]any)
		if len(dups) == 0 || uint64(dups[0].(map[string]any)["id"].(float64)) != id(first) {
			t.Fatalf("near_duplicates = %v, want memory %d first", second["near_duplicates"], id(first))
		}
		skip := mustOK(t, a, "remember", map[string]any{"text": "my sister ana lives in lisbon", "dedup_policy": "skip_if_near"})
		if got, want := skip["message"], "Already remembered"; got != want {
			t.Errorf("message = %v, want %v", got, want)
		}
		ins := mustOK(t, a, "remember", map[string]any{"text": "My sister Ana lives in Lisbon", "dedup_policy": "insert"})
		if _, ok := ins["near_duplicates"]; ok {
			t.Errorf("insert policy reported near duplicates: %v", ins)
		}
	})

	t.Run("secrets are refused", func(t *testing.T) {
		for _, text := range []string{
			"aws key AKIA" + "IOSFODNN7EXAMPLE",
			"card 4111 1111 1111 1111 expires soon",
			"-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
		} {
			if code, _ := errCode(t, a, "remember", map[string]any{"text": text}); code != "SECRET_REJECTED" {
				t.Errorf("%q: code = %s, want SECRET_REJECTED", text, code)
			}
		}
		// An order number shaped like a card but failing Luhn is an ordinary fact.
		mustOK(t, a, "remember", map[string]any{"text": "order 4111 1111 1111 1112 ships Tuesday"})
	})

	t.Run("bad input names the field", func(t *testing.T) {
		for _, tc := range []struct {
			args  map[string]any
			field string
		}{
			{map[string]any{"text": ""}, "text"},
			{map[string]any{"text": "   "}, "text"},
			{map[string]any{"text": "x", "importance": 2}, "importance"},
			{map[string]any{"text": "x", "tags": []any{"ok", 3}}, "tags[1]"},
			{map[string]any{"text": "x", "expires_at": "tomorrow"}, "expires_at"},
			{map[string]any{"text": "x", "expires_at": "2020-01-01T00:00:00Z"}, "expires_at"},
			{map[string]any{"text": "x", "colour": "red"}, "colour"},
			{map[string]any{"text": strings.Repeat("a", 16001)}, "text"},
		} {
			code, field := errCode(t, a, "remember", tc.args)
			if code != "INVALID_INPUT" || field != tc.field {
				t.Errorf("%v: got %s on %q, want INVALID_INPUT on %q", tc.args, code, field, tc.field)
			}
		}
	})
}

func TestTools_IDsNeverReused(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	p := mustOK(t, a, "remember", map[string]any{"text": "first"})
	mustOK(t, a, "forget", map[string]any{"id": id(p), "hard_delete": true})
	if code, _ := errCode(t, a, "get_memory", map[string]any{"id": id(p)}); code != "NOT_FOUND" {
		t.Errorf("get after hard delete: code %s, want NOT_FOUND", code)
	}
	q := mustOK(t, a, "remember", map[string]any{"text": "second"})
	if id(q) <= id(p) {
		t.Errorf("id %d reused or went backwards after hard delete of %d", id(q), id(p))
	}
}

// TestTools_IDRange (issue 13, item 13): an id past 2^63-1 is refused as invalid input naming
// the field, never looked up, wrapped or answered with a Go type name.
func TestTools_IDRange(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	for _, tc := range []struct {
		name, tool, args, field string
	}{
		{"2^63", "get_memory", `{"id":9223372036854775808}`, "id"},
		{"2^64", "get_memory", `{"id":18446744073709551616}`, "id"},
		{"2^64-1 in a batch", "forget_batch", `{"ids":[1,18446744073709551615]}`, "ids[1]"},
		{"replaced_by_id", "forget", `{"id":1,"replaced_by_id":9223372036854775808}`, "replaced_by_id"},
		{"update", "update_memory", `{"id":1e30,"importance":0.5}`, "id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var args json.RawMessage = []byte(tc.args)
			code, field := errCode(t, a, tc.tool, args)
			if code != "INVALID_INPUT" || field != tc.field {
				t.Errorf("%s %s: code %s field %q, want INVALID_INPUT on %q", tc.tool, tc.args, code, field, tc.field)
			}
			p, _ := callTool(t, a, tc.tool, args)
			if msg := fmt.Sprint(p); strings.Contains(msg, "uint64") || strings.Contains(msg, "Go struct") {
				t.Errorf("the error names Go types: %s", msg)
			}
		})
	}
}

func TestTools_RememberBatch(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	items := []any{
		map[string]any{"text": "Likes hiking", "tags": []string{"hobby"}},
		map[string]any{"text": ""},
		map[string]any{"text": "token ghp_" + strings.Repeat("a1B2", 9)},
		map[string]any{"text": "Plays chess"},
	}
	p := mustOK(t, a, "remember_batch", map[string]any{"items": items, "source_provider": "script"})
	s := p["summary"].(map[string]any)
	if s["total"] != 4.0 || s["succeeded"] != 2.0 || s["failed"] != 2.0 {
		t.Fatalf("summary = %v", s)
	}
	results := p["results"].([]any)
	for i, want := range []string{"", "INVALID_INPUT", "SECRET_REJECTED", ""} {
		r := results[i].(map[string]any)
		if r["input_index"] != float64(i) {
			t.Errorf("results[%d].input_index = %v", i, r["input_index"])
		}
		if want == "" {
			if r["ok"] != true {
				t.Errorf("results[%d] = %v, want ok", i, r)
			}
			continue
		}
		if got := r["error"].(map[string]any)["code"]; got != want {
			t.Errorf("results[%d] code = %v, want %v", i, got, want)
		}
	}
	if got := mustOK(t, a, "count_memories", map[string]any{"source_provider": "script"})["count"]; got != 2.0 {
		t.Errorf("count by provider = %v, want 2", got)
	}

	t.Run("whole-batch problems fail the call", func(t *testing.T) {
		many := make([]any, 201)
		for i := range many {
			many[i] = map[string]any{"text": fmt.Sprint("fact ", i)}
		}
		for _, items := range [][]any{{}, many} {
			if code, field := errCode(t, a, "remember_batch", map[string]any{"items": items}); code != "INVALID_INPUT" || field != "items" {
				t.Errorf("%d items: got %s %s", len(items), code, field)
			}
		}
	})
}

func TestTools_RecallFiltersBeforeTopK(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, testConfig(t, clock))
	// Many strong matches without the tag, one weak match with it: the tagged one must come back.
	for i := range 60 {
		mustOK(t, a, "remember", map[string]any{"text": fmt.Sprintf("garden tomato garden tomato note %d", i), "dedup_policy": "insert"})
	}
	clock.Advance(time.Hour) // a later conversation: the notes are not its context
	weak := mustOK(t, a, "remember", map[string]any{"text": "an old tomato recipe from grandma", "tags": "family"})
	p := mustOK(t, a, "recall", map[string]any{"query": "garden tomato", "tags": []string{"family"}})
	matches := p["matches"].([]any)
	if len(matches) != 1 || uint64(matches[0].(map[string]any)["id"].(float64)) != id(weak) {
		t.Fatalf("matches = %v, want only memory %d", matches, id(weak))
	}

	t.Run("since and until", func(t *testing.T) {
		clock.Advance(48 * time.Hour)
		late := mustOK(t, a, "remember", map[string]any{"text": "tomato seedlings planted"})
		p := mustOK(t, a, "recall", map[string]any{"query": "tomato", "since": clock.Now().Add(-time.Hour).Format(time.RFC3339)})
		if m := p["matches"].([]any); len(m) != 1 || uint64(m[0].(map[string]any)["id"].(float64)) != id(late) {
			t.Errorf("since: matches = %v", m)
		}
		if code, field := errCode(t, a, "recall", map[string]any{"query": "tomato", "since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"}); code != "INVALID_INPUT" || field != "until" {
			t.Errorf("until before since: %s %s", code, field)
		}
	})

	t.Run("expired and forgotten memories leave recall", func(t *testing.T) {
		exp := mustOK(t, a, "remember", map[string]any{"text": "parking ticket expires", "expires_at": clock.Now().Add(time.Hour).Format(time.RFC3339)})
		gone := mustOK(t, a, "remember", map[string]any{"text": "parking spot 42"})
		mustOK(t, a, "forget", map[string]any{"id": id(gone)})
		clock.Advance(2 * time.Hour)
		if m := mustOK(t, a, "recall", map[string]any{"query": "parking"})["matches"].([]any); len(m) != 0 {
			t.Errorf("matches = %v, want none", m)
		}
		st := mustOK(t, a, "memory_stats", map[string]any{})
		if st["expired"] != 1.0 || st["soft_deleted"] != 1.0 {
			t.Errorf("stats expired=%v soft_deleted=%v, want 1 and 1", st["expired"], st["soft_deleted"])
		}
		all := mustOK(t, a, "list_memories", map[string]any{"include_deleted": true, "limit": 2})["memories"].([]any)
		if uint64(all[0].(map[string]any)["id"].(float64)) != id(gone) || uint64(all[1].(map[string]any)["id"].(float64)) != id(exp) {
			t.Errorf("include_deleted list = %v", all)
		}
	})

	t.Run("text format", func(t *testing.T) {
		_, body := rpcPost(t, a, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"query":"grandma","format":"text"}}}`)
		if !strings.Contains(string(body), `Found 1 memories matching \"grandma\"`) {
			t.Errorf("text format body = %s", body)
		}
	})
}

func TestTools_ListPagination(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	var ids []uint64
	for i := range 7 {
		ids = append(ids, id(mustOK(t, a, "remember", map[string]any{"text": fmt.Sprintf("fact number %d about things", i), "dedup_policy": "insert"})))
	}
	var got []uint64
	cursor := ""
	for page := 0; page < 10; page++ {
		args := map[string]any{"limit": 3}
		if cursor != "" {
			args["cursor"] = cursor
		}
		p := mustOK(t, a, "list_memories", args)
		for _, m := range p["memories"].([]any) {
			got = append(got, uint64(m.(map[string]any)["id"].(float64)))
		}
		cursor = p["next_cursor"].(string)
		if cursor == "" {
			break
		}
	}
	want := fmt.Sprint([]uint64{ids[6], ids[5], ids[4], ids[3], ids[2], ids[1], ids[0]})
	if fmt.Sprint(got) != want {
		t.Errorf("pages = %v, want %v", got, want)
	}
	if code, field := errCode(t, a, "list_memories", map[string]any{"cursor": "bogus"}); code != "INVALID_INPUT" || field != "cursor" {
		t.Errorf("bad cursor: %s %s", code, field)
	}
	off := mustOK(t, a, "list_memories", map[string]any{"limit": 2, "offset": 5})["memories"].([]any)
	if len(off) != 2 || uint64(off[0].(map[string]any)["id"].(float64)) != ids[1] {
		t.Errorf("offset page = %v", off)
	}
}

func TestTools_UpdateConfirmForget(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, testConfig(t, clock))
	p := mustOK(t, a, "remember", map[string]any{"text": "Works at Acme", "tags": "work"})
	mid := id(p)

	t.Run("update reports changed fields and re-indexes text", func(t *testing.T) {
		dry := mustOK(t, a, "update_memory", map[string]any{"id": mid, "text": "Works at Globex", "tags": "work", "dry_run": true})
		if fmt.Sprint(dry["changed_fields"]) != "[text]" || dry["message"] != "Would update" {
			t.Errorf("dry run = %v", dry)
		}
		if m := mustOK(t, a, "recall", map[string]any{"query": "Globex"})["matches"].([]any); len(m) != 0 {
			t.Errorf("dry run changed the index: %v", m)
		}
		mustOK(t, a, "update_memory", map[string]any{"id": mid, "text": "Works at Globex", "expires_at": clock.Now().Add(24 * time.Hour).Format(time.RFC3339)})
		if m := mustOK(t, a, "recall", map[string]any{"query": "Globex"})["matches"].([]any); len(m) != 1 {
			t.Errorf("recall after text change = %v", m)
		}
		if m := mustOK(t, a, "recall", map[string]any{"query": "Acme"})["matches"].([]any); len(m) != 0 {
			t.Errorf("old text still indexed: %v", m)
		}
		cleared := mustOK(t, a, "update_memory", map[string]any{"id": mid, "expires_at": nil})
		if fmt.Sprint(cleared["changed_fields"]) != "[expires_at]" {
			t.Errorf("clearing expiry: %v", cleared)
		}
		if code, _ := errCode(t, a, "update_memory", map[string]any{"id": 999}); code != "INVALID_INPUT" {
			t.Errorf("no fields: code %s", code)
		}
		if code, _ := errCode(t, a, "update_memory", map[string]any{"id": 999, "importance": 1}); code != "NOT_FOUND" {
			t.Errorf("unknown id: code %s", code)
		}
	})

	t.Run("confirm", func(t *testing.T) {
		clock.Advance(time.Hour)
		c := mustOK(t, a, "confirm", map[string]any{"id": mid})
		if got, want := c["last_confirmed_at"], "2026-11-22T10:30:00Z"; got != want {
			t.Errorf("last_confirmed_at = %v, want %v", got, want)
		}
		n := mustOK(t, a, "count_memories", map[string]any{"not_confirmed_since": clock.Now().Format(time.RFC3339)})
		if n["count"] != 0.0 {
			t.Errorf("not_confirmed_since count = %v, want 0", n["count"])
		}
	})

	t.Run("forget soft, then again, then hard", func(t *testing.T) {
		repl := id(mustOK(t, a, "remember", map[string]any{"text": "Works at Initech"}))
		if code, field := errCode(t, a, "forget", map[string]any{"id": mid, "hard_delete": true, "replaced_by_id": repl}); code != "INVALID_INPUT" || field != "replaced_by_id" {
			t.Errorf("hard+replaced: %s %s", code, field)
		}
		dry := mustOK(t, a, "forget", map[string]any{"id": mid, "dry_run": true})
		if dry["message"] != "Would soft-delete" {
			t.Errorf("dry forget = %v", dry)
		}
		f := mustOK(t, a, "forget", map[string]any{"id": mid, "reason": "changed jobs", "replaced_by_id": repl})
		if f["message"] != "Forgotten" || f["already_deleted"] != false {
			t.Errorf("forget = %v", f)
		}
		again := mustOK(t, a, "forget", map[string]any{"id": mid})
		if again["already_deleted"] != true {
			t.Errorf("second forget = %v", again)
		}
		if code, _ := errCode(t, a, "update_memory", map[string]any{"id": mid, "importance": 1}); code != "NOT_FOUND" {
			t.Errorf("update of forgotten: %s", code)
		}
		m := mustOK(t, a, "get_memory", map[string]any{"id": mid})["memory"].(map[string]any)
		if m["forget_reason"] != "changed jobs" || m["replaced_by_id"] != float64(repl) || m["deleted_at"] == nil {
			t.Errorf("tombstone = %v", m)
		}
		h := mustOK(t, a, "forget", map[string]any{"id": mid, "hard_delete": true})
		if h["message"] != "Hard deleted" {
			t.Errorf("hard = %v", h)
		}
	})

	t.Run("batches report per item", func(t *testing.T) {
		x := id(mustOK(t, a, "remember", map[string]any{"text": "Has a cat"}))
		y := id(mustOK(t, a, "remember", map[string]any{"text": "Has a dog"}))
		u := mustOK(t, a, "update_memory_batch", map[string]any{"items": []any{
			map[string]any{"id": x, "tags": "pets"}, map[string]any{"id": 12345, "tags": "pets"}, map[string]any{"id": y, "importance": 2},
		}})
		s := u["summary"].(map[string]any)
		if s["updated"] != 1.0 || s["errors"] != 2.0 {
			t.Errorf("update batch summary = %v", s)
		}
		f := mustOK(t, a, "forget_batch", map[string]any{"ids": []uint64{x, x, 777}, "reason": "moved"})
		fs := f["summary"].(map[string]any)
		if fs["deleted"] != 1.0 || fs["errors"] != 2.0 {
			t.Errorf("forget batch summary = %v", fs)
		}
	})
}

func TestTools_TagsStatsExport(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	mustOK(t, a, "remember", map[string]any{"text": "Mother's birthday is in May", "tags": "family,birthdays", "importance": 0.9})
	mustOK(t, a, "remember", map[string]any{"text": "Father likes jazz", "tags": []string{"family"}, "importance": 0.5})
	mustOK(t, a, "remember", map[string]any{"text": "Untagged note about nothing"})
	tags := mustOK(t, a, "list_tags", map[string]any{})["tags"].([]any)
	if got, want := fmt.Sprint(tags), "[map[count:2 tag:family] map[count:1 tag:birthday]]"; got != want {
		t.Errorf("tags = %v, want %v", got, want)
	}
	if n := mustOK(t, a, "count_memories", map[string]any{"untagged_only": true})["count"]; n != 1.0 {
		t.Errorf("untagged count = %v", n)
	}
	st := mustOK(t, a, "memory_stats", map[string]any{})
	if st["total"] != 3.0 || st["active"] != 3.0 || st["avg_importance"] != 0.633 {
		t.Errorf("stats = %v", st)
	}
	if e := st["embedder"].(map[string]any); e["name"] != "builtin" || e["dimensions"] != 100.0 {
		t.Errorf("embedder = %v", e)
	}
	ex := mustOK(t, a, "export_memories", map[string]any{})
	mems := ex["memories"].([]any)
	if ex["count"] != 3.0 || mems[0].(map[string]any)["text"] != "Mother's birthday is in May" {
		t.Errorf("export = %v", ex)
	}
	dups := mustOK(t, a, "find_near_duplicates", map[string]any{})
	if dups["summary"].(map[string]any)["groups"] != 0.0 {
		t.Errorf("near duplicates = %v", dups)
	}
	text := mustOK(t, a, "text_search", map[string]any{"text": "JAZZ"})["memories"].([]any)
	if len(text) != 1 {
		t.Errorf("text_search = %v", text)
	}
	bp := mustOK(t, a, "build_context_prompt", map[string]any{"user_prompt": "plan a gift for my father who likes jazz", "max_chars": 150})
	if p := bp["prompt"].(string); len([]rune(p)) > 150 || !strings.Contains(p, "- Father likes jazz") {
		t.Errorf("prompt (%d chars) = %q", len([]rune(p)), p)
	}
}

func TestApp_RestartKeepsEverything(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	a := MustOpen(t, cfg)
	p := mustOK(t, a, "remember", map[string]any{"text": "Keeps bees in the back garden", "tags": "hobby"})
	mustOK(t, a, "forget", map[string]any{"id": id(mustOK(t, a, "remember", map[string]any{"text": "temporary"}))})
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b := MustOpen(t, cfg)
	m := mustOK(t, b, "recall", map[string]any{"query": "bees"})["matches"].([]any)
	if len(m) != 1 || uint64(m[0].(map[string]any)["id"].(float64)) != id(p) {
		t.Errorf("after restart recall = %v", m)
	}
	if st := mustOK(t, b, "memory_stats", map[string]any{}); st["soft_deleted"] != 1.0 || st["active"] != 1.0 {
		t.Errorf("after restart stats = %v", st)
	}
}
