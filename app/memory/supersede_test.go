package memory_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

// ids lists the ids of memories.
func ids(mems []*memory.Memory) []uint64 {
	out := []uint64{}
	for _, m := range mems {
		out = append(out, m.ID)
	}
	return out
}

func matchIDs(f memory.Found) []uint64 {
	out := []uint64{}
	for _, m := range f.Matches {
		out = append(out, m.Memory.ID)
	}
	return out
}

func mustGet(tb testing.TB, s *memory.Store, id uint64) *memory.Memory {
	tb.Helper()
	m, err := s.Get(id)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func update(tb testing.TB, s *memory.Store, p memory.Patch) memory.Updated {
	tb.Helper()
	res, err := s.Update(context.Background(), []memory.Patch{p}, false)
	if err != nil {
		tb.Fatal(err)
	}
	return res[0]
}

// TestStore_Supersedes specifies that a correction replaces the memories it names in every
// read path, unless asked for, while they stay readable.
func TestStore_Supersedes(t *testing.T) {
	for _, emb := range []struct {
		name string
		e    vector.Embedder
	}{{"lexical", nil}, {"builtin", vector.NewBuiltin()}} {
		t.Run(emb.name, func(t *testing.T) {
			s := MustOpen(t, emb.e)
			old := remember(t, s, memory.Draft{Text: "My dentist is Dr Smith on Elm Street", Tags: []string{"health"}})
			other := remember(t, s, memory.Draft{Text: "I like green tea", Tags: []string{"food"}})
			fix := remember(t, s, memory.Draft{Text: "My dentist is Dr Jones on Oak Avenue", Tags: []string{"health"}, Supersedes: []uint64{old}})

			if got := mustGet(t, s, old); got.SupersededBy == nil || *got.SupersededBy != fix || !got.Superseded() {
				t.Errorf("old memory: superseded_by %v, Superseded %v; want %d, true", got.SupersededBy, got.Superseded(), fix)
			}
			if got := mustGet(t, s, fix); !slices.Equal(got.Supersedes, []uint64{old}) || got.Superseded() {
				t.Errorf("new memory: supersedes %v, Superseded %v; want [%d], false", got.Supersedes, got.Superseded(), old)
			}
			for _, tc := range []struct {
				name   string
				filter memory.Filter
				want   []uint64
			}{
				{"default", memory.Filter{}, []uint64{fix, other}},
				{"include_superseded", memory.Filter{IncludeSuperseded: true}, []uint64{fix, other, old}},
				{"include_deleted", memory.Filter{IncludeDeleted: true}, []uint64{fix, other, old}},
				{"text", memory.Filter{Contains: "dentist"}, []uint64{fix}},
				{"tags", memory.Filter{Tags: []string{"health"}}, []uint64{fix}},
			} {
				t.Run("list/"+tc.name, func(t *testing.T) {
					got, _ := s.List(tc.filter, memory.Page{Limit: 10})
					if !slices.Equal(ids(got), tc.want) {
						t.Errorf("List = %v, want %v", ids(got), tc.want)
					}
					if n := s.Count(tc.filter); n != len(tc.want) {
						t.Errorf("Count = %d, want %d", n, len(tc.want))
					}
				})
			}
			found := s.Search(context.Background(), memory.Query{Text: "who is my dentist", Limit: 8})
			if got := matchIDs(found); slices.Contains(got, old) || !slices.Contains(got, fix) {
				t.Errorf("Search = %v, want %d and not %d", got, fix, old)
			}
			found = s.Search(context.Background(), memory.Query{Text: "who is my dentist", Limit: 8, Filter: memory.Filter{IncludeSuperseded: true}})
			if got := matchIDs(found); !slices.Contains(got, old) {
				t.Errorf("Search with IncludeSuperseded = %v, want %d among them", got, old)
			}
			found = s.Search(context.Background(), memory.Query{Text: "what did I write today", Limit: 8, TimeWords: true})
			if got := matchIDs(found); slices.Contains(got, old) {
				t.Errorf("Search by time words = %v, want no %d", got, old)
			}
			if st := s.Stats(); st.Active != 2 || st.Superseded != 1 || st.Total != 3 {
				t.Errorf("Stats: active %d, superseded %d, total %d; want 2, 1, 3", st.Active, st.Superseded, st.Total)
			}
			if groups := s.NearDuplicates(0.5); slices.ContainsFunc(groups, func(g memory.DuplicateGroup) bool { return slices.Contains(g.IDs, old) }) {
				t.Errorf("NearDuplicates = %v, want no group with the superseded %d", groups, old)
			}
		})
	}
}

// TestStore_Supersedes_refused specifies what a memory may not supersede, with the field at
// fault.
func TestStore_Supersedes_refused(t *testing.T) {
	s := MustOpen(t, nil)
	a := remember(t, s, memory.Draft{Text: "I live in Paris"})
	b := remember(t, s, memory.Draft{Text: "I live in Lyon", Supersedes: []uint64{a}})
	gone := remember(t, s, memory.Draft{Text: "I live in Nice"})
	if _, err := s.Forget([]uint64{gone}, memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	many := make([]uint64, memory.MaxSupersedes+1)
	for i := range many {
		many[i] = uint64(i + 1)
	}
	for _, tc := range []struct {
		name       string
		supersedes []uint64
		field      string
		reason     string
	}{
		{"missing", []uint64{b, 999}, "supersedes[1]", "does not exist"},
		{"forgotten", []uint64{gone}, "supersedes[0]", "was forgotten"},
		{"already superseded", []uint64{a}, "supersedes[0]", "already superseded by memory"},
		{"repeated", []uint64{b, b}, "supersedes[1]", "already listed at supersedes[0]"},
		{"zero", []uint64{0}, "supersedes[0]", "must be a memory id"},
		{"too many", many, "supersedes", "the limit is 50"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, _, err := s.Remember(context.Background(), []memory.Draft{{Text: "I live in Rome", Supersedes: tc.supersedes}}, me)
			if err != nil {
				t.Fatal(err)
			}
			var ie *memory.InputError
			if !errors.As(res[0].Err, &ie) || ie.Field != tc.field || !strings.Contains(ie.Reason, tc.reason) {
				t.Fatalf("err = %v (field %q), want field %q with %q", res[0].Err, fieldOf(res[0].Err), tc.field, tc.reason)
			}
			if n := s.Count(memory.Filter{Contains: "rome"}); n != 0 {
				t.Errorf("a refused draft was stored")
			}
		})
	}
	t.Run("itself", func(t *testing.T) {
		if r := update(t, s, memory.Patch{ID: b, Supersedes: []uint64{b}}); fieldOf(r.Err) != "supersedes[0]" {
			t.Errorf("err = %v, want supersedes[0]", r.Err)
		}
	})
	t.Run("cycle", func(t *testing.T) {
		// a ← b ← c: a may not supersede c (through b); p ← q: p may not supersede q.
		c := remember(t, s, memory.Draft{Text: "I live in Marseille", Supersedes: []uint64{b}})
		p := remember(t, s, memory.Draft{Text: "I work at Acme"})
		q := remember(t, s, memory.Draft{Text: "I work at Globex", Supersedes: []uint64{p}})
		for _, pair := range [][2]uint64{{a, c}, {p, q}} {
			r := update(t, s, memory.Patch{ID: pair[0], Supersedes: []uint64{pair[1]}})
			target := pair[1]
			if fieldOf(r.Err) != "supersedes[0]" || !strings.Contains(r.Err.Error(), "cycle") {
				t.Errorf("a supersedes %d: err = %v, want a cycle refused", target, r.Err)
			}
		}
		if m := mustGet(t, s, a); len(m.Supersedes) != 0 {
			t.Errorf("a refused patch changed the memory: supersedes %v", m.Supersedes)
		}
	})
	t.Run("two items claim one memory", func(t *testing.T) {
		x := remember(t, s, memory.Draft{Text: "My car is red"})
		res, _, err := s.Remember(context.Background(), []memory.Draft{
			{Text: "My car is blue", Supersedes: []uint64{x}},
			{Text: "My car is green", Supersedes: []uint64{x}},
		}, me)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || fieldOf(res[1].Err) != "supersedes[0]" {
			t.Errorf("errs = %v, %v; want nil, supersedes[0]", res[0].Err, res[1].Err)
		}
		if m := mustGet(t, s, x); m.SupersededBy == nil || *m.SupersededBy != res[0].ID {
			t.Errorf("superseded_by = %v, want %d", m.SupersededBy, res[0].ID)
		}
	})
}

// TestStore_Supersedes_chain specifies chains, update_memory's supersedes, and what forgetting,
// restoring and erasing a successor do.
func TestStore_Supersedes_chain(t *testing.T) {
	s := MustOpen(t, nil)
	a := remember(t, s, memory.Draft{Text: "The team meeting is on Monday"})
	b := remember(t, s, memory.Draft{Text: "The team meeting is on Tuesday"})
	if r := update(t, s, memory.Patch{ID: b, Supersedes: []uint64{a}}); r.Err != nil || !slices.Equal(r.Changed, []string{"supersedes"}) {
		t.Fatalf("update: %v, changed %v", r.Err, r.Changed)
	}
	if r := update(t, s, memory.Patch{ID: b, Supersedes: []uint64{a}}); r.Err != nil || len(r.Changed) != 0 {
		t.Errorf("the same supersedes again: %v, changed %v; want no change", r.Err, r.Changed)
	}
	c := remember(t, s, memory.Draft{Text: "The team meeting is on Wednesday", Supersedes: []uint64{b}})
	current := func() []uint64 { got, _ := s.List(memory.Filter{}, memory.Page{Limit: 10}); return ids(got) }
	if got := current(); !slices.Equal(got, []uint64{c}) {
		t.Fatalf("current = %v, want [%d]", got, c)
	}

	if _, err := s.Forget([]uint64{c}, memory.Forgetting{Reason: "wrong"}); err != nil {
		t.Fatal(err)
	}
	if got := current(); !slices.Equal(got, []uint64{b}) {
		t.Errorf("after forgetting the successor: current = %v, want [%d] back", got, b)
	}
	if _, err := s.Restore([]uint64{c}); err != nil {
		t.Fatal(err)
	}
	if got := current(); !slices.Equal(got, []uint64{c}) {
		t.Errorf("after restoring it: current = %v, want [%d]", got, c)
	}

	// b superseded by a forgotten c may be superseded by d: the link moves.
	if _, err := s.Forget([]uint64{c}, memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	d := remember(t, s, memory.Draft{Text: "The team meeting is on Thursday", Supersedes: []uint64{b}})
	if m := mustGet(t, s, b); *m.SupersededBy != d {
		t.Errorf("b superseded_by = %d, want %d", *m.SupersededBy, d)
	}
	if m := mustGet(t, s, c); len(m.Supersedes) != 0 {
		t.Errorf("the forgotten c still lists %v", m.Supersedes)
	}

	// Erasing the successor for good removes the link from both ends.
	if err := s.Delete(d); err != nil {
		t.Fatal(err)
	}
	if m := mustGet(t, s, b); m.SupersededBy != nil || m.Superseded() {
		t.Errorf("after erasing d: b superseded_by %v", m.SupersededBy)
	}
	if err := s.Delete(a); err != nil {
		t.Fatal(err)
	}
	if m := mustGet(t, s, b); len(m.Supersedes) != 0 {
		t.Errorf("after erasing a: b supersedes %v", m.Supersedes)
	}
}

// TestStore_Supersedes_survives specifies that the links are in the file: a reopened store and
// an export imported into another file keep them, with the ids remapped.
func TestStore_Supersedes_survives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		s, db := openAt(t, path, memory.Config{})
		remember(t, s, memory.Draft{Text: "padding so that ids differ after import"})
		a := remember(t, s, memory.Draft{Text: "My gym is FitLife"})
		b := remember(t, s, memory.Draft{Text: "My gym is IronWorks", Supersedes: []uint64{a}})
		s.Close()
		db.Close()

		s, db = openAt(t, path, memory.Config{})
		defer db.Close()
		defer s.Close()
		if m := mustGet(t, s, a); !m.Superseded() || *m.SupersededBy != b {
			t.Errorf("reopened: a superseded %v by %v", m.Superseded(), m.SupersededBy)
		}
		var buf bytes.Buffer
		if err := s.Export(&buf, true); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"superseded_by":`) || !strings.Contains(buf.String(), `"supersedes":[`) {
			t.Errorf("export lacks the links:\n%s", buf.String())
		}

		s2 := MustOpen(t, nil)
		if _, err := importLog(s2, bytes.NewReader(buf.Bytes()), &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		got, _ := s2.List(memory.Filter{IncludeSuperseded: true}, memory.Page{Limit: 10})
		byText := map[string]*memory.Memory{}
		for _, m := range got {
			byText[m.Text] = m
		}
		na, nb := byText["My gym is FitLife"], byText["My gym is IronWorks"]
		if na == nil || nb == nil {
			t.Fatalf("imported %v", got)
		}
		if na.SupersededBy == nil || *na.SupersededBy != nb.ID || !slices.Equal(nb.Supersedes, []uint64{na.ID}) || !na.Superseded() {
			t.Errorf("imported links: a %d superseded_by %v, b %d supersedes %v", na.ID, na.SupersededBy, nb.ID, nb.Supersedes)
		}
		if cur, _ := s2.List(memory.Filter{}, memory.Page{Limit: 10}); slices.Contains(ids(cur), na.ID) {
			t.Errorf("the imported superseded memory is listed: %v", ids(cur))
		}
		// A second import adds nothing and links nothing twice.
		if _, err := importLog(s2, bytes.NewReader(buf.Bytes()), &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if m := mustGet(t, s2, nb.ID); !slices.Equal(m.Supersedes, []uint64{na.ID}) {
			t.Errorf("after a re-import: supersedes %v", m.Supersedes)
		}
	})
}

// TestStore_Supersedes_nearDuplicates specifies that the memories a draft supersedes are not its
// near duplicates: skip_if_near does not answer a correction with the fact it corrects.
func TestStore_Supersedes_nearDuplicates(t *testing.T) {
	s := MustOpen(t, nil)
	a := remember(t, s, memory.Draft{Text: "my favourite colour is blue"})
	res, _, err := s.Remember(context.Background(), []memory.Draft{{Text: "my favourite colour is blue", Supersedes: []uint64{a}, Dedup: memory.DedupSkipIfNear}}, memory.Origin{Client: "other"})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if res[0].ID == a || res[0].Existing || len(res[0].NearDuplicates) != 0 {
		t.Errorf("got %+v, want a new memory without near duplicates", res[0])
	}
}

// TestStore_Update_supersedesBatch specifies that the patches of one call are checked in order
// against each other (no cycle between two of them) and that dry_run links nothing.
func TestStore_Update_supersedesBatch(t *testing.T) {
	s := MustOpen(t, nil)
	a := remember(t, s, memory.Draft{Text: "Lunch is at noon"})
	b := remember(t, s, memory.Draft{Text: "Lunch is at one"})
	res, err := s.Update(context.Background(), []memory.Patch{{ID: b, Supersedes: []uint64{a}}}, true)
	if err != nil || res[0].Err != nil || !slices.Equal(res[0].Changed, []string{"supersedes"}) {
		t.Fatalf("dry run: %v %+v", err, res)
	}
	if m := mustGet(t, s, a); m.SupersededBy != nil || m.Superseded() {
		t.Errorf("a dry run linked: %+v", m)
	}
	res, err = s.Update(context.Background(), []memory.Patch{
		{ID: b, Supersedes: []uint64{a}},
		{ID: a, Supersedes: []uint64{b}},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || fieldOf(res[1].Err) != "supersedes[0]" {
		t.Errorf("errs = %v, %v; want nil, a cycle on supersedes[0]", res[0].Err, res[1].Err)
	}
	if m := mustGet(t, s, a); m.SupersededBy == nil || *m.SupersededBy != b || len(m.Supersedes) != 0 {
		t.Errorf("a = %+v, want superseded by %d and superseding nothing", m, b)
	}
}

// TestStore_ImportSupersedeCycle (SECURITY.md ST-18): an export in which two forgotten memories
// supersede each other is imported without the link that closes the cycle, counted in the
// import's result; restored from the trash, the memories are not both hidden for good.
func TestStore_ImportSupersedeCycle(t *testing.T) {
	s := MustOpen(t, nil)
	in := `{"format":"ownsona-export","version":1}
{"id":1,"text":"The flat is on Rue du Bac","created_at":"2026-01-02T03:04:05Z","updated_at":"2026-01-02T03:04:05Z","last_confirmed_at":"2026-01-02T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[2],"superseded_by":2}
{"id":2,"text":"The flat is on Rue Oberkampf","created_at":"2026-01-03T03:04:05Z","updated_at":"2026-01-03T03:04:05Z","last_confirmed_at":"2026-01-03T03:04:05Z","capture_mode":"explicit","deleted_at":"2026-02-01T00:00:00Z","supersedes":[1],"superseded_by":1}
`
	var errs strings.Builder
	st, err := importLog(s, strings.NewReader(in), &errs)
	if err != nil || st.Imported != 2 || st.LinksSkipped != 1 || errs.Len() != 0 {
		t.Errorf("import %+v, %v, errors %q; want 2 imported and the link that closes the cycle skipped", st, err, errs.String())
	}
	trash := ids(list(s, memory.Filter{OnlyForgotten: true}))
	if _, err := s.Restore(trash); err != nil {
		t.Fatal(err)
	}
	if got := ids(list(s, memory.Filter{})); len(got) == 0 {
		t.Errorf("after restoring %v, nothing is listed: a supersedes cycle hides both", trash)
	}
	for _, id := range trash {
		for at, steps := id, 0; at != 0; steps++ {
			m := mustGet(t, s, at)
			if steps > len(trash) {
				t.Fatalf("memory %d: its successors form a cycle", id)
			}
			at = 0
			if m.SupersededBy != nil {
				at = *m.SupersededBy
			}
		}
	}
}
