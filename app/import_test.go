package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// exportLines runs `ownsona export` on db in-process and returns its memory lines with ids
// replaced by their rank, so that files with re-assigned ids compare equal.
func exportLines(t *testing.T, db string) []string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := Run(context.Background(), []string{"export", "--db", db}, Getenv, nil, &out, &errb); err != nil {
		t.Fatalf("export: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")[1:]
	rank := map[string]string{}
	idRe := regexp.MustCompile(`"id":(\d+)`)
	for i, l := range lines {
		if m := idRe.FindStringSubmatch(l); m != nil {
			rank[m[1]] = string(rune('A' + i))
		}
	}
	ref := regexp.MustCompile(`"(id|replaced_by_id)":(\d+)`)
	for i, l := range lines {
		lines[i] = ref.ReplaceAllStringFunc(l, func(s string) string {
			m := ref.FindStringSubmatch(s)
			return `"` + m[1] + `":"` + rank[m[2]] + `"`
		})
	}
	return lines
}

func runImport(t *testing.T, db, file string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	var errb syncBuffer // the command's progress and the store's background log write it at once
	err := Run(context.Background(), []string{"import", "--db", db, "--log-level", "error", file}, Getenv, nil, &out, &errb)
	return out.String() + errb.String(), err
}

// TestImport_RoundTrip: export → import into an empty file → export gives the same lines, ids
// aside (tombstones, replacements, expiries, batch writes, unicode); a re-import adds nothing.
func TestImport_RoundTrip(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	cfg := testConfig(t, newFakeClock())
	cfg.DB = src
	a := MustOpen(t, cfg)
	mustOK(t, a, "remember_batch", map[string]any{"items": []any{
		map[string]any{"text": "Émile likes crêpes with 🍓", "tags": []string{"food", "family"}, "importance": 0.9},
		map[string]any{"text": "The old flat was on Rue du Bac"},
		map[string]any{"text": "The new flat is on Rue Oberkampf", "tags": []string{"home"}},
	}})
	mustOK(t, a, "remember", map[string]any{"text": "Passport renewal is due", "expires_at": "2027-01-01T00:00:00Z"})
	mustOK(t, a, "forget", map[string]any{"id": 2, "reason": "moved", "replaced_by_id": 3})
	mustOK(t, a, "update_memory", map[string]any{"id": 1, "tags": []string{"food"}})
	a.Close()
	want := exportLines(t, src)
	if len(want) != 4 || !strings.Contains(strings.Join(want, "\n"), `"deleted_at"`) || !strings.Contains(strings.Join(want, "\n"), `"expires_at"`) {
		t.Fatalf("the source export lacks a tombstone or an expiry:\n%s", strings.Join(want, "\n"))
	}

	var exp bytes.Buffer
	if err := Run(context.Background(), []string{"export", "--db", src}, Getenv, nil, &exp, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "memories.jsonl")
	os.WriteFile(file, exp.Bytes(), 0o600)
	dst := filepath.Join(dir, "dst.db")
	if out, err := runImport(t, dst, file); err != nil || !strings.Contains(out, "imported 4 of 4") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	if got := exportLines(t, dst); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("export after import differs:\n got %s\nwant %s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if out, err := runImport(t, dst, file); err != nil || !strings.Contains(out, "imported 0 of 4") || !strings.Contains(out, "4 already stored") {
		t.Errorf("re-import: %v\n%s", err, out)
	}
	if got := exportLines(t, dst); len(got) != 4 {
		t.Errorf("after a re-import: %d memories, want 4", len(got))
	}
}

// TestImport_Formats: export_memories output and a server-memory knowledge graph (written from
// its documented format) import; a bad line is reported with its number and the rest goes in.
func TestImport_Formats(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")

	doc, _ := json.MarshalIndent(map[string]any{"ok": true, "count": 2, "memories": []any{
		map[string]any{"id": 7, "text": "Likes jazz on Sunday mornings", "tags": []string{"music"}, "importance": 0.6,
			"created_at": "2026-01-02T03:04:05Z", "updated_at": "2026-01-02T03:04:05Z", "last_confirmed_at": "2026-01-02T03:04:05Z",
			"source_provider": "claude", "source_client": "http", "capture_mode": "explicit"},
		map[string]any{"id": 8, "text": "Allergic to cats", "tags": []string{}, "importance": 0.8,
			"created_at": "2026-01-03T03:04:05Z", "updated_at": "2026-01-03T03:04:05Z", "last_confirmed_at": "2026-01-03T03:04:05Z",
			"source_provider": "claude", "source_client": "http", "capture_mode": "explicit"},
	}}, "", "  ")
	docFile := filepath.Join(dir, "export_memories.json")
	os.WriteFile(docFile, doc, 0o600)
	if out, err := runImport(t, db, docFile); err != nil || !strings.Contains(out, "imported 2 of 2") {
		t.Fatalf("export_memories document: %v\n%s", err, out)
	}

	graph := strings.Join([]string{
		`{"type":"entity","name":"John_Smith","entityType":"person","observations":["Speaks fluent Spanish","Graduated in 2019"]}`,
		`{"type":"entity","name":"Anthropic","entityType":"organization","observations":["Based in San Francisco"]}`,
		`not json at all`,
		`{"type":"relation","from":"John_Smith","to":"Anthropic","relationType":"works_at"}`,
		`{"type":"entity","name":"Leak","entityType":"secret","observations":["key AKIAIOSFODNN7EXAMPLE"]}`,
	}, "\n")
	graphFile := filepath.Join(dir, "memory.jsonl")
	os.WriteFile(graphFile, []byte(graph), 0o600)
	out, err := runImport(t, db, graphFile)
	if err == nil || !strings.Contains(out, "line 3: not JSON") || !strings.Contains(out, "line 5: text looks like a secret (aws-access-key)") || !strings.Contains(out, "imported 4 of 4") {
		t.Fatalf("graph import: err %v, want the bad lines reported and the rest imported:\n%s", err, out)
	}
	lines := strings.Join(exportLines(t, db), "\n")
	for _, want := range []string{`"text":"John_Smith: Speaks fluent Spanish","tags":["person","john-smith"]`,
		`"text":"John_Smith works at Anthropic","tags":["john-smith","anthropic"]`,
		`"text":"Likes jazz on Sunday mornings","tags":["music"],"importance":0.6,"created_at":"2026-01-02T03:04:05Z"`} {
		if !strings.Contains(lines, want) {
			t.Errorf("the export lacks %s:\n%s", want, lines)
		}
	}
	if strings.Contains(lines, "AKIA") {
		t.Error("a secret from the graph was imported")
	}
	if out, _ := runImport(t, db, graphFile); !strings.Contains(out, "imported 0 of 4") {
		t.Errorf("re-import of the graph: %s", out)
	}
}

// TestImport_Bombs (SECURITY.md UP-01): `ownsona import` of each decompression bomb fails with
// an error that names the unit and the limit, and grows the heap by less than 128 MiB.
func TestImport_Bombs(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	if out, err := runImport(t, db, writeFile(t, dir, "warm.md", []byte("The store and its embedder are open.\n"))); err != nil {
		t.Fatalf("import: %v\n%s", err, out)
	}
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			file := writeFile(t, dir, b.file, b.body)
			var out string
			var err error
			peak, alloc := heapGrowth(func() { out, err = runImport(t, db, file) })
			t.Logf("%d-byte file: heap in use up to %+.1f MiB, %.1f MiB allocated in all; %v", len(b.body), float64(peak)/(1<<20), float64(alloc)/(1<<20), err)
			if err == nil || !strings.Contains(err.Error()+out, b.want) {
				t.Errorf("import: %v\n%s\nwant an error and %q", err, out, b.want)
			}
			if peak > maxBombGrowth {
				t.Errorf("the heap grew by %d MiB, past the bound of %d MiB", peak>>20, maxBombGrowth>>20)
			}
		})
	}
}

// writeFile writes b to dir/name and returns its path.
func writeFile(tb testing.TB, dir, name string, b []byte) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}
