package importers_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
)

// fixture reads a file of testdata/import (see its README for the formats' sources).
func fixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "import", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// importAll imports in into s and returns the stats and the errors reported.
func importAll(tb testing.TB, s *memory.Store, in []byte, opt importers.ImportOptions) (memory.ImportStats, []string) {
	tb.Helper()
	var errs []string
	opt.OnError = func(e memory.ImportError) { errs = append(errs, e.String()) }
	st, err := importers.ImportFrom(context.Background(), s, bytes.NewReader(in), opt)
	if err != nil {
		tb.Fatalf("import: %v (errors %q)", err, errs)
	}
	return st, errs
}

// storedByText are the stored memories by their text.
func storedByText(s *memory.Store) map[string]*memory.Memory {
	out := map[string]*memory.Memory{}
	s.Each(memory.Filter{IncludeDeleted: true}, func(m *memory.Memory) bool {
		out[m.Text] = m
		return true
	})
	return out
}

// TestStore_ImportFormats: each fixture is detected, read with its per-line errors, and
// imported with the fields its format has; a re-import adds nothing.
func TestStore_ImportFormats(t *testing.T) {
	tests := []struct {
		file, format        string
		read, imported, bad int
		errs                []string // prefixes of the reported errors, in order
		check               func(t *testing.T, got map[string]*memory.Memory)
	}{
		{file: "ownsona.jsonl", format: "ownsona", read: 3, imported: 3, bad: 1,
			errs: []string{"line 5: text looks like a secret (aws-access-key)"},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				old, new := got["The old flat was on Rue du Bac"], got["The new flat is on Rue Oberkampf"]
				if old == nil || new == nil || old.ReplacedByID == nil || *old.ReplacedByID != new.ID || old.DeletedAt == nil {
					t.Errorf("the tombstone does not point at its replacement: %+v", old)
				}
				if m := got["Emile likes crepes with strawberries"]; m == nil || m.SourceClient != "Claude" || m.Importance != 0.9 {
					t.Errorf("an ownsona record lost its fields: %+v", m)
				}
			}},
		{file: "server-memory.jsonl", format: "server-memory", read: 4, imported: 4, bad: 2,
			errs: []string{"line 4: a relation needs from, to and relationType", "line 5: not JSON"},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				if m := got["John_Smith: Speaks fluent Spanish"]; m == nil || !slices.Equal(m.Tags, []string{"person", "john-smith"}) {
					t.Errorf("observation: %+v", m)
				}
				if m := got["John_Smith works at Anthropic"]; m == nil || m.SourceProvider != "server-memory" {
					t.Errorf("relation: %+v", m)
				}
			}},
		{file: "mcp-memory-service.json", format: "mcp-memory-service", read: 3, imported: 3, bad: 1,
			errs: []string{`item 3: an mcp-memory-service memory needs a non-empty "content"`},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				m := got["Remember that the project deadline is next Friday."]
				if m == nil || m.CreatedAt.Format("2006-01-02T15:04:05Z") != "2024-01-15T10:30:00Z" ||
					!slices.Equal(m.Tags, []string{"project", "deadline", "source-laptop", "reminder"}) || m.SourceProvider != "mcp-memory-service" {
					t.Errorf("memory: %+v", m)
				}
				if m := got["Prefers dark roast coffee, no sugar."]; m == nil || !slices.Equal(m.Tags, []string{"preference", "coffee"}) || m.CreatedAt.Unix() != 1705401000 {
					t.Errorf("comma-separated tags, Unix time: %+v", m)
				}
			}},
		{file: "mem0.json", format: "mem0", read: 2, imported: 2, bad: 1,
			errs: []string{`item 3: a Mem0 memory needs a non-empty "memory" or "content"`},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				m := got["Dev works at TechCorp as a senior engineer"]
				if m == nil || m.CreatedAt.Format("2006-01-02T15:04:05Z") != "2025-03-10T16:15:42Z" || !slices.Equal(m.Tags, []string{"professional-details"}) || m.SourceProvider != "mem0" {
					t.Errorf("memory: %+v", m)
				}
			}},
		{file: "openmemory-memories.json", format: "mem0", read: 2, imported: 2, bad: 1,
			errs: []string{"item 3: text looks like a secret"},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				if m := got["Prefers Go for command-line tools"]; m == nil || m.SourceProvider != "cursor" || !slices.Equal(m.Tags, []string{"programming", "preference"}) {
					t.Errorf("app and categories by id: %+v", m)
				}
				if m := got["Used to write Python 2"]; m == nil || m.DeletedAt == nil || m.ForgetReason != "deleted in cursor" {
					t.Errorf("a deleted memory is a tombstone: %+v", m)
				}
			}},
		{file: "openmemory.jsonl", format: "mem0", read: 3, imported: 3, bad: 1,
			errs: []string{`line 4: a Mem0 memory needs`},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				if m := got["Keeps meeting notes in Obsidian"]; m == nil || !slices.Equal(m.Tags, []string{"tools", "archived"}) || m.SourceProvider != "mem0" {
					t.Errorf("archived: %+v", m)
				}
			}},
		{file: "notes.md", format: "markdown", read: 7, imported: 7, bad: 1,
			errs: []string{"line 22: text looks like a secret"},
			check: func(t *testing.T, got map[string]*memory.Memory) {
				want := map[string][]string{
					"My sister Ana lives in Lisbon and visits every August.": {"family"},
					"Mum prefers tea to coffee":                              {"family"},
					"Rio the dog is afraid of thunder":                       {"family", "pet"},
					"[ ] book the vet for Rio's vaccine":                     {"family", "pet"},
					"Standup is at 9:30 on weekdays.":                        {"work"},
					"make build && make test":                                {"work"},
				}
				for text, tags := range want {
					if m := got[text]; m == nil || !slices.Equal(m.Tags, tags) {
						t.Errorf("%q: %+v, want tags %v", text, m, tags)
					}
				}
				if _, ok := got["title: Notes about me"]; ok {
					t.Error("front matter imported")
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			in := fixture(t, tt.file)
			if got, err := importers.DetectImportFormat(in); err != nil || got != tt.format {
				t.Errorf("detected %q (%v), want %q", got, err, tt.format)
			}
			s := MustOpen(t, nil)
			st, errs := importAll(t, s, in, importers.ImportOptions{})
			if st.Format != tt.format || st.Read != tt.read || st.Imported != tt.imported || st.Bad != tt.bad || len(errs) != len(tt.errs) {
				t.Fatalf("import %+v, errors %q; want %d read, %d imported, %d bad", st, errs, tt.read, tt.imported, tt.bad)
			}
			for i, want := range tt.errs {
				if !strings.HasPrefix(errs[i], want) {
					t.Errorf("error %d = %q, want %q…", i, errs[i], want)
				}
			}
			tt.check(t, storedByText(s))
			st, _ = importAll(t, s, in, importers.ImportOptions{})
			if st.Imported != 0 || st.Skipped != tt.read {
				t.Errorf("re-import %+v: want all %d skipped", st, tt.read)
			}
		})
	}
}

// TestStore_ImportCompressed: gzip input, and OpenMemory's zip (whose memories.jsonl.gz is
// preferred to its memories.json).
func TestStore_ImportCompressed(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, b := range map[string][]byte{"memories.json": fixture(t, "openmemory-memories.json"), "memories.jsonl.gz": gz(fixture(t, "openmemory.jsonl"))} {
		f, _ := zw.Create(name)
		f.Write(b)
	}
	zw.Close()
	for _, tt := range []struct {
		name     string
		in       []byte
		imported int
	}{
		{"gzip", gz(fixture(t, "server-memory.jsonl")), 4},
		{"zip", zbuf.Bytes(), 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st, _ := importAll(t, MustOpen(t, nil), tt.in, importers.ImportOptions{})
			if st.Imported != tt.imported {
				t.Errorf("import %+v, want %d imported", st, tt.imported)
			}
		})
	}
}

// TestStore_ImportOptions: the format named overrides detection, the client named is every
// memory's source_client, and progress is reported as batches are stored.
func TestStore_ImportOptions(t *testing.T) {
	s := MustOpen(t, nil)
	var lines []string
	for i := range 450 {
		lines = append(lines, fmt.Sprintf(`{"text":"fact number %d","created_at":"2026-01-02T03:04:05Z"}`, i))
	}
	var progress []int
	st, _ := importAll(t, s, []byte(strings.Join(lines, "\n")), importers.ImportOptions{Client: "Claude",
		Progress: func(st memory.ImportStats) { progress = append(progress, st.Imported) }})
	if st.Imported != 450 || !slices.Contains(progress, 200) || !slices.Contains(progress, 400) || progress[len(progress)-1] != 450 {
		t.Errorf("import %+v, progress %v", st, progress)
	}
	for _, m := range storedByText(s) {
		if m.SourceClient != "Claude" {
			t.Fatalf("source_client %q, want the uploader's", m.SourceClient)
		}
	}
	st, _ = importAll(t, s, fixture(t, "ownsona.jsonl"), importers.ImportOptions{Format: "text"})
	if st.Format != "markdown" || st.Read != 0 || st.Bad != 1 {
		t.Errorf("JSON read as text: %+v; want its lines one paragraph, refused for the secret in it", st)
	}
	if _, err := importers.ImportFrom(context.Background(), s, strings.NewReader("x"), importers.ImportOptions{Format: "csv"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

// TestDetectImportFormat: shapes each format may take, and inputs no format has.
func TestDetectImportFormat(t *testing.T) {
	for _, tt := range []struct{ in, want, err string }{
		{`{"memories":[{"id":1,"text":"x"}]}`, "ownsona", ""},
		{`{"ok":true,"structuredContent":{"memories":[]}}`, "ownsona", ""},
		{"{\n  \"entities\": [{\"name\":\"A\"}],\n  \"relations\": []\n}", "server-memory", ""},
		{`[{"memory":"x","created_at":"2025-01-01T00:00:00Z"}]`, "mem0", ""},
		{`{"memory":"x"}`, "mem0", ""},
		{`[{"content":"x","content_hash":"ab"}]`, "mcp-memory-service", ""},
		{"[ ] a task\n", "markdown", ""},
		{"Just a sentence.", "markdown", ""},
		{"", "", "empty"},
		{"\x00\x01binary", "", "not text"},
		{`{"colour":"red"}`, "", "unknown kind"},
	} {
		got, err := importers.DetectImportFormat([]byte(tt.in))
		if got != tt.want || (tt.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("DetectImportFormat(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// FuzzImport: no input makes an import panic or store half an item, and every item read is
// either imported or skipped, every refusal reported once.
func FuzzImport(f *testing.F) {
	for _, name := range []string{"ownsona.jsonl", "server-memory.jsonl", "mcp-memory-service.json", "mem0.json", "openmemory-memories.json", "openmemory.jsonl", "notes.md"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"memories":[{"text":"x"},`))
	f.Add([]byte("\x1f\x8b\x08\x00"))
	f.Add([]byte("PK\x03\x04"))
	s := MustOpen(f, nil)
	f.Fuzz(func(t *testing.T, in []byte) {
		_, _ = importers.DetectImportFormat(in)
		errs := 0
		st, _ := importers.ImportFrom(context.Background(), s, bytes.NewReader(in), importers.ImportOptions{OnError: func(memory.ImportError) { errs++ }})
		if st.Read != st.Imported+st.Skipped || st.Bad != errs { // a batch read before an unreadable part is stored
			t.Errorf("stats %+v with %d errors reported", st, errs)
		}
	})
}

// TestStore_ImportBounds (SECURITY.md UP-01): what one import may hold, expand to, read and
// take, each refused with an error that names the unit and the limit.
func TestStore_ImportBounds(t *testing.T) {
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(b)
		w.Close()
		return buf.Bytes()
	}
	zipped := func(files map[string][]byte) []byte {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		for name, b := range files {
			f, _ := zw.Create(name)
			f.Write(b)
		}
		zw.Close()
		return buf.Bytes()
	}
	limit := func(t *testing.T, err error, name, want string) {
		t.Helper()
		var le *memory.LimitError
		if !errors.As(err, &le) || le.Limit != name || !strings.Contains(le.Message, want) {
			t.Errorf("err %v, want a *LimitError on %s saying %q", err, name, want)
		}
	}
	huge := strings.Repeat("a", importers.MaxItemBytes+1)

	t.Run("a JSON item past the item limit stops the import", func(t *testing.T) {
		s := MustOpen(t, nil)
		in := `{"memories":[{"text":"first"},{"text":"` + huge + `"},{"text":"third"}]}`
		st, err := importers.ImportFrom(context.Background(), s, strings.NewReader(in), importers.ImportOptions{})
		limit(t, err, "import-item-bytes", "item 2 is larger than 4 MiB, the most one item may be")
		if st.Imported != 1 {
			t.Errorf("stats %+v, want the item before it stored", st)
		}
	})
	t.Run("any other value of the document too", func(t *testing.T) {
		in := `{"export_metadata":"` + huge + `","memories":[]}`
		_, err := importers.ImportFrom(context.Background(), MustOpen(t, nil), strings.NewReader(in), importers.ImportOptions{})
		limit(t, err, "import-item-bytes", `the value of "export_metadata" is larger than 4 MiB`)
	})
	t.Run("structuredContent is read item by item", func(t *testing.T) {
		var items []string
		for i := range 2000 {
			items = append(items, fmt.Sprintf(`{"text":"fact %d %s"}`, i, strings.Repeat("x", 150)))
		}
		in := `{"content":[{"type":"text","text":"…"}],"structuredContent":{"ok":true,"memories":[` + strings.Join(items, ",") + `]}}`
		if len(in) < importers.MaxItemBytes/16 {
			t.Fatalf("the document is %d bytes", len(in))
		}
		st, _ := importAll(t, MustOpen(t, nil), []byte(in), importers.ImportOptions{})
		if st.Imported != 2000 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("a JSON line past the item limit is skipped and reported", func(t *testing.T) {
		in := `{"text":"first"}` + "\n" + `{"text":"` + huge + `"}` + "\n" + `{"text":"third"}` + "\n"
		st, errs := importAll(t, MustOpen(t, nil), []byte(in), importers.ImportOptions{})
		if st.Imported != 2 || st.Bad != 1 || len(errs) != 1 || errs[0] != "line 2: the line is longer than 4 MiB, the most one item may be; split it" {
			t.Errorf("stats %+v, errors %q", st, errs)
		}
	})
	t.Run("a paragraph or list item past the text limit is skipped and reported", func(t *testing.T) {
		// The store's text limit is 200 characters: 4 bytes each and 4 KiB, 4.8 KiB.
		long := strings.Repeat("a long line of words\n", 300)
		in := "First.\n\n" + long + "\nSecond.\n\n- " + strings.Repeat("b", 6000) + "\n- Third.\n"
		st, errs := importAll(t, MustOpen(t, nil), []byte(in), importers.ImportOptions{})
		want := []string{
			"line 3: the paragraph is longer than 4.8 KiB, more than a memory may hold (200 characters); split it",
			"line 306: the paragraph is longer than 4.8 KiB, more than a memory may hold (200 characters); split it",
		}
		if st.Imported != 3 || st.Bad != 2 || !slices.Equal(errs, want) {
			t.Errorf("stats %+v, errors %q", st, errs)
		}
	})
	t.Run("the expansion of every layer together is capped", func(t *testing.T) {
		text := []byte(strings.Repeat("Likes tea.\n\n", 100_000)) // 1.1 MiB
		for name, in := range map[string][]byte{"gzip": gz(text), "zip of a gzip": zipped(map[string][]byte{"memories.jsonl.gz": gz(text)})} {
			_, err := importers.ImportFrom(context.Background(), MustOpen(t, nil), bytes.NewReader(in), importers.ImportOptions{MaxExpanded: 1 << 20, MaxExpandedLimit: "max-upload-mb"})
			limit(t, err, "max-upload-mb", "the compressed input expands past 1 MiB, the most one import may read (max-upload-mb)")
			t.Logf("%s: %v", name, err)
		}
	})
	t.Run("nothing compressed inside a compressed file but OpenMemory's gzip", func(t *testing.T) {
		for _, tt := range []struct {
			name, want string
			in         []byte
		}{
			{"a zip in a zip", "a zip inside a zip is not read", zipped(map[string][]byte{"inner.zip": zipped(map[string][]byte{"memories.json": []byte("[]")})})},
			{"a gzip in a gzip", "a compressed file inside a gzip is not read", gz(gz([]byte("Likes tea.")))},
			{"a zip in a gzip", "a compressed file inside a gzip is not read", gz(zipped(map[string][]byte{"memories.json": []byte("[]")}))},
			{"a gzip in a zip's gzip", "a compressed file inside a gzip is not read", zipped(map[string][]byte{"memories.jsonl.gz": gz(gz([]byte("Likes tea.")))})},
		} {
			_, err := importers.ImportFrom(context.Background(), MustOpen(t, nil), bytes.NewReader(tt.in), importers.ImportOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
			}
		}
	})
	t.Run("a zip's directory is read only when small", func(t *testing.T) {
		files := map[string][]byte{}
		for i := range 15_000 {
			files[fmt.Sprintf("notes/%060d.md", i)] = nil
		}
		_, err := importers.ImportFrom(context.Background(), MustOpen(t, nil), bytes.NewReader(zipped(files)), importers.ImportOptions{})
		if err == nil || !strings.Contains(err.Error(), "its directory is larger than 1 MiB") {
			t.Errorf("import: %v", err)
		}
	})
	t.Run("the items one import reads are capped", func(t *testing.T) {
		s := MustOpen(t, nil)
		in := strings.Repeat("- Likes tea.\n", 30)
		st, err := importers.ImportFrom(context.Background(), s, strings.NewReader(in), importers.ImportOptions{MaxItems: 20})
		limit(t, err, "import-items", "the input has more than 20 items, the most one import reads")
		if st.Read != 20 {
			t.Errorf("stats %+v, want 20 read", st)
		}
	})
	t.Run("the time one import takes is capped", func(t *testing.T) {
		// The store's clock moves a second each time it is read: a minute is 60 reads.
		var now atomic.Int64
		now.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Unix())
		clock := func() time.Time { return time.Unix(now.Add(1), 0) }
		s, db := openAt(t, filepath.Join(t.TempDir(), "ownsona.db"), memory.Config{Now: clock})
		defer db.Close()
		defer s.Close()
		var lines []string
		for i := range 2000 {
			lines = append(lines, fmt.Sprintf("- fact %d", i))
		}
		st, err := importers.ImportFrom(context.Background(), s, strings.NewReader(strings.Join(lines, "\n")), importers.ImportOptions{MaxDuration: time.Minute})
		limit(t, err, "import-time", "the import ran longer than 1m0s, the most one import may take")
		if st.Read == 0 || st.Read >= 2000 {
			t.Errorf("stats %+v", st)
		}
	})
}
