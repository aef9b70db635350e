package memory

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestStore_windowLocked: the creation-time order answers a window as Filter.match does, for
// every id and every window, with memories imported out of creation order, a hard delete,
// and after a reopen; and a search whose window holds nothing lists nothing.
func TestStore_windowLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	s, db := openFile(t, path, Config{})
	ctx := context.Background()
	o := Origin{Provider: "claude", Client: "stdio"}
	for i := range 5 {
		if _, _, err := s.Remember(ctx, []Draft{{Text: fmt.Sprintf("written now, note %d about the garden", i)}}, o); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	im := s.NewImport(ctx, ImportConfig{})
	for i, d := range []int{40, 3, 17, 3, 0, 25} { // out of order, one day twice
		rec := &ImportRecord{Memory: Memory{Text: fmt.Sprintf("imported note %d from day %d about the garden", i, d), CreatedAt: base.AddDate(0, 0, d)}}
		if err := im.Add(ImportPos{Line: i + 1}, []*ImportRecord{rec}); err != nil {
			t.Fatal(err)
		}
	}
	if st, err := im.Finish(); err != nil || st.Imported != 6 {
		t.Fatalf("import: %+v, %v", st, err)
	}
	if err := s.Delete(6); err != nil { // the memory of day 40
		t.Fatal(err)
	}
	day := func(d int) *time.Time { t := base.AddDate(0, 0, d); return &t }
	windows := []Filter{
		{Since: day(3)}, {Until: day(3)}, {Since: day(3), Until: day(17)}, {Since: day(4), Until: day(16)},
		{Since: day(-10), Until: day(-1)}, {Since: day(41)}, {Since: day(17), Until: day(3)}, {Until: day(100)},
		{Since: day(-1000)}, // every memory
	}
	check := func(step string) {
		t.Helper()
		now := s.now()
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, f := range windows {
			win := s.windowLocked(&f)
			for id := uint64(0); id <= s.seq+65; id++ {
				m := s.mems[id]
				want := m != nil && f.match(m, now)
				if win == nil { // every memory is in the window
					if m != nil && !want {
						t.Errorf("%s: window %v–%v: no bits, but memory %d is outside it", step, f.Since, f.Until, id)
					}
					continue
				}
				if got := get(win, id); got != want {
					t.Errorf("%s: window %v–%v: memory %d in it: %v, Filter.match: %v", step, f.Since, f.Until, id, got, want)
				}
			}
		}
	}
	check("after imports and a delete")
	if got := s.Search(ctx, Query{Text: "garden", Filter: Filter{Since: day(-10), Until: day(-1)}, Limit: 5}); len(got.Matches) != 0 {
		t.Errorf("a search in an empty window found %d memories", len(got.Matches))
	}
	got := s.Search(ctx, Query{Text: "garden", Filter: Filter{Since: day(3), Until: day(17)}, Limit: 10})
	if len(got.Matches) != 3 {
		t.Errorf("a search from day 3 to day 17 found %d memories, want the 3 created then", len(got.Matches))
	}
	s.Close()
	db.Close()
	s, db = openFile(t, path, Config{})
	defer db.Close()
	defer s.Close()
	check("after a reopen")
}

// TestStore_addCreatedLocked: commits of memories newer than all, a little out of order (as
// concurrent writers' are), and far older (imports) keep the creation-time order sorted.
func TestStore_addCreatedLocked(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Store
	var want []createdID
	id := uint64(0)
	for commit := range 300 {
		var mems []queuedMemory
		for range 1 + r.IntN(8) {
			id++
			at := base.Add(time.Duration(id) * time.Second) // newer than all
			switch commit % 3 {
			case 1: // a few seconds out of order
				at = at.Add(-time.Duration(r.IntN(20)) * time.Second)
			case 2: // anywhere in the past
				at = base.Add(time.Duration(r.Int64N(int64(id)+1)) * time.Second)
			}
			mems = append(mems, queuedMemory{m: &Memory{ID: id, CreatedAt: at}})
			want = append(want, createdID{at, id})
		}
		s.addCreatedLocked(mems)
		slices.SortFunc(want, compareCreated)
		if !slices.Equal(s.created, want) {
			t.Fatalf("commit %d: the order is\n%v\nwant\n%v", commit, s.created, want)
		}
	}
}

// BenchmarkStore_addCreatedLocked: one commit of 8 memories, a second out of order, into a
// creation-time order of 100k (16 writers over HTTP make such commits).
func BenchmarkStore_addCreatedLocked(b *testing.B) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s Store
	for i := range 100_000 {
		s.created = append(s.created, createdID{base.Add(time.Duration(i) * time.Millisecond), uint64(i + 1)})
	}
	id := uint64(100_000)
	b.ReportAllocs()
	for b.Loop() {
		mems := make([]queuedMemory, 8)
		for j := range mems {
			id++
			mems[j] = queuedMemory{m: &Memory{ID: id, CreatedAt: base.Add(time.Duration(id)*time.Millisecond - time.Second)}}
		}
		s.addCreatedLocked(mems)
	}
}
