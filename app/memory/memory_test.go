package memory_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/vector"
)

// MustOpen opens a store over a new file, with the embedder emb (nil for none), and closes
// both at cleanup. Its clock is time.Now: call it inside a synctest bubble, whose time starts
// at 2000-01-01 00:00 UTC and stands still until the test sleeps.
func MustOpen(tb testing.TB, emb vector.Embedder) *memory.Store {
	tb.Helper()
	s, _ := openAt(tb, filepath.Join(tb.TempDir(), "ownsona.db"), memory.Config{Embedder: emb, MaxTextChars: 200})
	tb.Cleanup(func() { s.Close() })
	return s
}

// openAt opens the file at path and the store in it with cfg, for tests that close and reopen
// a file or reach the file itself; the caller closes the store, then the file (kvtest closes
// and checks the file at cleanup in any case).
func openAt(tb testing.TB, path string, cfg memory.Config) (*memory.Store, *kv.DB) {
	tb.Helper()
	db := kvtest.OpenFile(tb, path, kv.Options{Migrations: memory.Migrations})
	s, err := memory.Open(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s, db
}

// importLog imports r into s and writes each line or item not imported to log, as
// "line N: why" (the operator's import command).
func importLog(s *memory.Store, r io.Reader, log io.Writer) (memory.ImportStats, error) {
	return importers.ImportFrom(context.Background(), s, r, importers.ImportOptions{
		OnError: func(e memory.ImportError) { fmt.Fprintln(log, e.String()) },
	})
}

var me = memory.Origin{Provider: "claude", Client: "stdio"}

// remember stores one draft and fails the test on any error.
func remember(tb testing.TB, s *memory.Store, d memory.Draft) uint64 {
	tb.Helper()
	res, _, err := s.Remember(context.Background(), []memory.Draft{d}, me)
	if err != nil {
		tb.Fatal(err)
	}
	if res[0].Err != nil {
		tb.Fatalf("remember %q: %v", d.Text, res[0].Err)
	}
	return res[0].ID
}

func fieldOf(err error) string {
	var ie *memory.InputError
	if errors.As(err, &ie) {
		return ie.Field
	}
	return ""
}

func manyTags(n int) []string {
	tags := make([]string, n)
	for i := range tags {
		tags[i] = fmt.Sprintf("tag-%d", i)
	}
	return tags
}

// TestStore_Remember specifies what a new memory may hold.
func TestStore_Remember(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, nil)
		future, past := t0.Add(time.Hour), t0.Add(-time.Hour)
		for _, tc := range []struct {
			name      string
			draft     memory.Draft
			wantField string // "" for success
			wantErr   any
		}{
			{"plain", memory.Draft{Text: "I prefer dark roast"}, "", nil},
			{"text normalized", memory.Draft{Text: "  two   spaces \n\n\n and lines "}, "", nil},
			{"empty text", memory.Draft{Text: "   "}, "text", nil},
			{"text too long", memory.Draft{Text: strings.Repeat("a", 201)}, "text", nil},
			{"control character", memory.Draft{Text: "bell\x07"}, "text", nil},
			{"32 tags", memory.Draft{Text: "tagged", Tags: manyTags(32)}, "", nil},
			{"33 tags", memory.Draft{Text: "tagged", Tags: manyTags(33)}, "tags", nil},
			{"bad tag", memory.Draft{Text: "tagged", Tags: []string{"ok", "!"}}, "tags[1]", nil},
			{"importance above 1", memory.Draft{Text: "x", Importance: new(1.5)}, "importance", nil},
			{"capture mode", memory.Draft{Text: "x", CaptureMode: "guessed"}, "capture_mode", nil},
			{"import is not a capture mode of remember", memory.Draft{Text: "x", CaptureMode: memory.CaptureImport}, "capture_mode", nil},
			{"session id too long", memory.Draft{Text: "x", SessionID: strings.Repeat("s", 201)}, "session_id", nil},
			{"expiry in the future", memory.Draft{Text: "x", ExpiresAt: &future}, "", nil},
			{"expiry in the past", memory.Draft{Text: "x", ExpiresAt: &past}, "expires_at", nil},
			{"dedup policy", memory.Draft{Text: "x", Dedup: "maybe"}, "dedup_policy", nil},
			{"secret", memory.Draft{Text: "my key is AKIAIOSFODNN7EXAMPLE"}, "", &memory.SecretError{}},
		} {
			// One store across the cases; a bubble cannot hold subtests.
			res, _, err := s.Remember(context.Background(), []memory.Draft{tc.draft}, me)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			got := res[0].Err
			switch {
			case tc.wantErr != nil:
				var se *memory.SecretError
				if !errors.As(got, &se) || se.Kind != "aws-access-key" || strings.Contains(got.Error(), "AKIA") {
					t.Errorf("%s: err = %v, want a SecretError naming the kind and not the secret", tc.name, got)
				}
			case tc.wantField != "":
				if fieldOf(got) != tc.wantField {
					t.Errorf("%s: err = %v, want an InputError on %q", tc.name, got, tc.wantField)
				}
			case got != nil:
				t.Errorf("%s: err = %v", tc.name, got)
			default:
				m, err := s.Get(res[0].ID)
				if err != nil {
					t.Errorf("%s: %v", tc.name, err)
					continue
				}
				if m.SourceProvider != "claude" || m.SourceClient != "stdio" || !m.CreatedAt.Equal(t0) || !m.LastConfirmedAt.Equal(t0) {
					t.Errorf("%s: memory %+v: want origin claude/stdio and times %v", tc.name, m, t0)
				}
				if strings.Contains(m.Text, "  ") {
					t.Errorf("%s: text %q is not normalized", tc.name, m.Text)
				}
			}
		}
	})
}

// TestStore_RememberBatch: each draft succeeds or fails alone, in one transaction.
func TestStore_RememberBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		res, _, err := s.Remember(context.Background(), []memory.Draft{
			{Text: "first"}, {Text: ""}, {Text: "third", Tags: []string{"Kids", "kids"}},
		}, me)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || res[2].Err != nil || fieldOf(memory.Prefix("items[1].", res[1].Err)) != "items[1].text" {
			t.Fatalf("results %+v: want 0 and 2 stored, 1 refused on items[1].text", res)
		}
		if m, _ := s.Get(res[2].ID); !slices.Equal(m.Tags, []string{"child"}) {
			t.Errorf("tags = %v, want [child] (normalized, deduplicated)", m.Tags)
		}
		if got := s.Count(memory.Filter{}); got != 2 {
			t.Errorf("count = %d, want 2", got)
		}
	})
}

// TestStore_Dedup: near duplicates are stored and reported, or skipped, or not looked for.
func TestStore_Dedup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, vector.NewBuiltin())
		first := remember(t, s, memory.Draft{Text: "My sister Ana lives in Lisbon"})
		res, _, _ := s.Remember(context.Background(), []memory.Draft{{Text: "My sister Ana lives in Lisbon."}}, me)
		if res[0].ID == first || len(res[0].NearDuplicates) == 0 || res[0].NearDuplicates[0].ID != first {
			t.Errorf("ask: %+v, want a new memory reporting %d", res[0], first)
		}
		res, _, _ = s.Remember(context.Background(), []memory.Draft{{Text: "my sister ana lives in lisbon", Dedup: memory.DedupSkipIfNear}}, me)
		if !res[0].Existing || res[0].ID != first && res[0].ID == 0 {
			t.Errorf("skip_if_near: %+v, want the existing memory", res[0])
		}
		res, _, _ = s.Remember(context.Background(), []memory.Draft{{Text: "My sister Ana lives in Lisbon", Dedup: memory.DedupInsert}}, me)
		if res[0].Existing || len(res[0].NearDuplicates) > 0 {
			t.Errorf("insert: %+v, want a new memory without a check", res[0])
		}
	})
}

// TestStore_Update specifies patches: the same rules as remember, per item, forgotten
// memories refused.
func TestStore_Update(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, nil)
		id := remember(t, s, memory.Draft{Text: "Lives in Porto", Tags: []string{"home"}})
		gone := remember(t, s, memory.Draft{Text: "Drives a blue car"})
		if _, err := s.Forget([]uint64{gone}, memory.Forgetting{Reason: "sold"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		text, tags40, tags, future, past := "Lives in Lisbon", manyTags(40), []string{"Home", "City"}, t0.Add(48*time.Hour), t0.Add(-time.Hour)
		res, err := s.Update(context.Background(), []memory.Patch{
			{ID: id, Text: &text, Tags: &tags, ExpiresAt: &future},
			{ID: id, Text: &text},            // named twice
			{ID: gone, Text: &text},          // forgotten
			{ID: 999, Text: &text},           // missing
			{ID: id + 100, Tags: &tags40},    // 40 tags: refused before any lookup
			{ID: id + 101, ExpiresAt: &past}, // past expiry
			{ID: id + 102},                   // nothing to change
			{ID: id + 103, Text: new("key sk-ant-api03-" + strings.Repeat("a", 93))}, // a secret
		}, false)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || !slices.Equal(res[0].Changed, []string{"text", "tags", "expires_at"}) {
			t.Errorf("item 0: %+v, want text, tags and expires_at changed", res[0])
		}
		checks := []struct {
			i     int
			field string
			is    error
		}{{1, "id", nil}, {2, "", memory.ErrForgotten}, {3, "", memory.ErrNotFound}, {4, "tags", nil}, {5, "expires_at", nil}, {6, "", nil}}
		for _, ck := range checks {
			err := res[ck.i].Err
			switch {
			case ck.is != nil && !errors.Is(err, ck.is):
				t.Errorf("item %d: %v, want %v", ck.i, err, ck.is)
			case ck.is == nil && (err == nil || fieldOf(err) != ck.field):
				t.Errorf("item %d: %v, want an InputError on %q", ck.i, err, ck.field)
			}
		}
		var se *memory.SecretError
		if !errors.As(res[7].Err, &se) {
			t.Errorf("item 7: %v, want a SecretError", res[7].Err)
		}
		m, _ := s.Get(id)
		if m.Text != text || !slices.Equal(m.Tags, []string{"home", "city"}) || !m.UpdatedAt.Equal(t0.Add(time.Minute)) {
			t.Errorf("memory after update: %+v", m)
		}
		res, _ = s.Update(context.Background(), []memory.Patch{{ID: id, ClearExpiry: true, Text: &text}}, true)
		if !slices.Equal(res[0].Changed, []string{"expires_at"}) {
			t.Errorf("dry run changed %v, want [expires_at]", res[0].Changed)
		}
		if m, _ := s.Get(id); m.ExpiresAt == nil {
			t.Error("a dry run cleared the expiry")
		}
	})
}

// TestStore_ConfirmForgetDelete: the life of a memory after it is written.
func TestStore_ConfirmForgetDelete(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, nil)
		a := remember(t, s, memory.Draft{Text: "Works at Acme"})
		b := remember(t, s, memory.Draft{Text: "Works at Globex"})
		time.Sleep(time.Hour)
		at, err := s.Confirm(a)
		if err != nil || !at.Equal(t0.Add(time.Hour)) {
			t.Fatalf("confirm = %v, %v", at, err)
		}
		if _, err := s.Forget([]uint64{a}, memory.Forgetting{ReplacedBy: &a}); fieldOf(err) != "replaced_by_id" {
			t.Errorf("forget replaced by itself: %v, want an InputError on replaced_by_id", err)
		}
		res, err := s.Forget([]uint64{a, a, 404}, memory.Forgetting{Reason: "moved on", ReplacedBy: &b})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || res[0].Already || fieldOf(res[1].Err) != "ids[1]" || !errors.Is(res[2].Err, memory.ErrNotFound) {
			t.Fatalf("forget results %+v", res)
		}
		m, _ := s.Get(a)
		if m.DeletedAt == nil || m.ForgetReason != "moved on" || m.ReplacedByID == nil || *m.ReplacedByID != b {
			t.Errorf("tombstone %+v", m)
		}
		if _, err := s.Confirm(a); !errors.Is(err, memory.ErrForgotten) || err.Error() != fmt.Sprintf("memory %d was forgotten", a) {
			t.Errorf("confirm of a forgotten memory: %v", err)
		}
		if res, _ := s.Forget([]uint64{a}, memory.Forgetting{}); !res[0].Already {
			t.Errorf("forgetting twice: %+v, want Already", res[0])
		}
		if err := s.Delete(b); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(b); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("get after delete: %v", err)
		}
		next := remember(t, s, memory.Draft{Text: "A new fact"})
		if next <= b {
			t.Errorf("id %d after deleting %d: ids are never reused", next, b)
		}
	})
}

// TestStore_Search: filters apply before the cut, and forgotten or expired memories are not
// found.
func TestStore_Search(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, vector.NewBuiltin())
		soon := t0.Add(time.Hour)
		remember(t, s, memory.Draft{Text: "My son lives in Los Angeles", Tags: []string{"family"}})
		remember(t, s, memory.Draft{Text: "My son plays the violin", Tags: []string{"music"}})
		remember(t, s, memory.Draft{Text: "My son studies in Lisbon this term", ExpiresAt: &soon})
		<-s.IndexReady()
		found := s.Search(context.Background(), memory.Query{Text: "where does my son live?", Limit: 8})
		if len(found.Matches) != 3 || found.Matches[0].Memory.Text != "My son lives in Los Angeles" {
			t.Fatalf("matches %v", texts(found))
		}
		found = s.Search(context.Background(), memory.Query{Text: "my son", Limit: 8, Filter: memory.Filter{Tags: []string{"music"}}})
		if got := texts(found); !slices.Equal(got, []string{"My son plays the violin"}) {
			t.Errorf("tag filter: %v", got)
		}
		time.Sleep(2 * time.Hour)
		if got := texts(s.Search(context.Background(), memory.Query{Text: "lisbon", Limit: 8})); len(got) != 0 {
			t.Errorf("an expired memory was found: %v", got)
		}
	})
}

func texts(f memory.Found) []string {
	var out []string
	for _, m := range f.Matches {
		out = append(out, m.Memory.Text)
	}
	return out
}

// TestStore_OnChange: every writer is heard, with the ids it changed, and a write that
// changes nothing (a dry run, a refused item) is not.
func TestStore_OnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		var heard [][]uint64
		s.OnChange(func(ids []uint64) { heard = append(heard, slices.Clone(ids)) })
		a := remember(t, s, memory.Draft{Text: "one"})
		s.Remember(context.Background(), []memory.Draft{{Text: ""}}, me)
		text := "two"
		s.Update(context.Background(), []memory.Patch{{ID: a, Text: &text}}, true)
		s.Update(context.Background(), []memory.Patch{{ID: a, Text: &text}}, false)
		s.Confirm(a)
		s.Forget([]uint64{a}, memory.Forgetting{})
		st, err := importLog(s, strings.NewReader(`{"type":"entity","name":"Ana","entityType":"person","observations":["Likes tea"]}`), &strings.Builder{})
		if err != nil || st.Imported != 1 {
			t.Fatalf("import: %+v, %v", st, err)
		}
		s.Delete(a)
		// The update keeps the previous text as memory a+1, which erasing a unlinks.
		want := [][]uint64{{a}, {a, a + 1}, {a}, {a}, {a + 2}, {a, a + 1}}
		if fmt.Sprint(heard) != fmt.Sprint(want) {
			t.Errorf("heard %v, want %v", heard, want)
		}
	})
}

// TestStore_Import: the one validator applies to imports too (it once accepted 40 tags), a
// bad line is reported by number, and a re-import adds nothing.
func TestStore_Import(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		tags := `"` + strings.Join(manyTags(40), `","`) + `"`
		in := strings.Join([]string{
			`{"format":"ownsona-export","version":1}`,
			`{"id":7,"text":"Keeps bees","tags":["hobby"],"importance":0.8,"created_at":"2026-01-02T03:04:05Z"}`,
			`{"id":8,"text":"Too many tags","tags":[` + tags + `],"created_at":"2026-01-02T03:04:05Z"}`,
			`{"id":9,"text":"Parks on level 3","created_at":"2026-01-03T03:04:05Z","deleted_at":"2026-02-01T00:00:00Z","replaced_by_id":7}`,
		}, "\n")
		var log strings.Builder
		st, err := importLog(s, strings.NewReader(in), &log)
		if err != nil {
			t.Fatal(err)
		}
		if st.Imported != 2 || st.Bad != 1 || !strings.Contains(log.String(), "line 3: tags: has 40 distinct tags; the limit is 32") {
			t.Fatalf("import %+v, log %q: want 2 imported and line 3 refused for its 40 tags", st, log.String())
		}
		var buf strings.Builder
		if err := s.Export(&buf, true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 3 || !strings.Contains(lines[2], `"replaced_by_id":1`) || !strings.Contains(lines[1], `"created_at":"2026-01-02T03:04:05Z"`) {
			t.Errorf("export after import:\n%s", buf.String())
		}
		st, err = importLog(s, strings.NewReader(buf.String()), &log)
		if err != nil || st.Imported != 0 || st.Skipped != 2 {
			t.Errorf("re-import of the export: %+v, %v; want everything skipped", st, err)
		}
	})
}

// TestCheck reads a file's memories and vectors.
func TestCheck(t *testing.T) {
	s, db := openAt(t, filepath.Join(t.TempDir(), "ownsona.db"), memory.Config{Embedder: vector.NewBuiltin()})
	defer db.Close()
	remember(t, s, memory.Draft{Text: "one"})
	remember(t, s, memory.Draft{Text: "two"})
	s.Close()
	c, err := memory.Check(db)
	if err != nil || len(c.Problems) > 0 || c.Memories != 2 || c.Vectors != 2 || len(c.Embedders) != 1 {
		t.Errorf("check = %+v, %v", c, err)
	}
}
