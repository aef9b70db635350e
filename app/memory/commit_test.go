package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

// TestStore_Remember_groupCommit: writers at once share commits, and every acknowledged memory
// is in the file after a reopen, under an id of its own, each writer's ids ascending.
func TestStore_Remember_groupCommit(t *testing.T) {
	const writers, each = 16, 50
	path := filepath.Join(t.TempDir(), "ownsona.db")
	s, db := openAt(t, path, memory.Config{Embedder: vector.NewBuiltin()})
	before := db.Commits()
	ids := make([][]uint64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				text := fmt.Sprintf("writer %d wrote note %d", w, i)
				res, _, err := s.Remember(context.Background(), []memory.Draft{{Text: text}}, me)
				if err != nil || res[0].Err != nil || res[0].Replayed || res[0].Existing {
					t.Errorf("remember %q: %+v, %v", text, res, err)
					return
				}
				ids[w] = append(ids[w], res[0].ID)
			}
		})
	}
	wg.Wait()
	commits := db.Commits() - before
	s.Close()
	db.Close()
	if t.Failed() {
		return
	}
	t.Logf("%d memories in %d commits", writers*each, commits)
	if commits >= writers*each {
		t.Errorf("%d memories took %d commits; want writers at once to share them", writers*each, commits)
	}

	s, db = openAt(t, path, memory.Config{})
	defer db.Close()
	defer s.Close()
	seen := map[uint64]bool{}
	for w, got := range ids {
		if !slices.IsSorted(got) {
			t.Errorf("writer %d got ids out of order: %v", w, got)
		}
		for i, id := range got {
			if seen[id] {
				t.Errorf("id %d handed out twice", id)
			}
			seen[id] = true
			m, err := s.Get(id)
			if want := fmt.Sprintf("writer %d wrote note %d", w, i); err != nil || m.Text != want {
				t.Errorf("after reopen, memory %d = %v, %v; want %q", id, m, err, want)
			}
		}
	}
	if n := s.Count(memory.Filter{}); n != writers*each {
		t.Errorf("after reopen, %d memories, want %d", n, writers*each)
	}
	// The sequence went on from the file's: a new memory takes the next id.
	if id := remember(t, s, memory.Draft{Text: "after the reopen"}); id != writers*each+1 {
		t.Errorf("first id after reopen = %d, want %d", id, writers*each+1)
	}
}

// TestStore_Remember_concurrentChecks: the checks of writers at once see the writes queued
// before theirs. Identical keyed calls store once; a key reused for another text is refused for
// all but one; near duplicates from other clients with skip_if_near store once.
func TestStore_Remember_concurrentChecks(t *testing.T) {
	const n = 16
	s := MustOpen(t, vector.NewBuiltin())
	run := func(draft func(i int) (memory.Draft, memory.Origin)) []memory.Remembered {
		got := make([]memory.Remembered, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				d, o := draft(i)
				res, _, err := s.Remember(context.Background(), []memory.Draft{d}, o)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = res[0]
			})
		}
		wg.Wait()
		return got
	}
	count := func() int { return s.Count(memory.Filter{}) }

	t.Run("same key other texts", func(t *testing.T) {
		before := count()
		got := run(func(i int) (memory.Draft, memory.Origin) {
			return memory.Draft{Text: fmt.Sprintf("my locker code is %d", 100+i), IdempotencyKey: "locker"}, me
		})
		stored := 0
		for _, r := range got {
			switch {
			case r.Err == nil:
				stored++
			case fieldOf(r.Err) != "idempotency_key":
				t.Errorf("refused with %v, want idempotency_key", r.Err)
			}
		}
		if stored != 1 || count()-before != 1 {
			t.Errorf("%d accepted, %d stored; want 1", stored, count()-before)
		}
	})
	t.Run("skip_if_near from many clients", func(t *testing.T) {
		before := count()
		got := run(func(i int) (memory.Draft, memory.Origin) {
			return memory.Draft{Text: "My sister Ana lives in Lisbon", Dedup: memory.DedupSkipIfNear},
				memory.Origin{Provider: "claude", Client: fmt.Sprint("client-", i)}
		})
		existing := 0
		for _, r := range got {
			if r.Err != nil {
				t.Error(r.Err)
			}
			if r.Existing {
				existing++
			}
			if r.ID != got[0].ID {
				t.Errorf("ids differ: %d and %d", r.ID, got[0].ID)
			}
		}
		if existing != n-1 || count()-before != 1 {
			t.Errorf("%d answered with the existing memory, %d stored; want %d and 1", existing, count()-before, n-1)
		}
	})
}

// BenchmarkStore_Remember_writers measures remember, one memory per call, from 1, 4 and 16
// writers at once on a file with real fsyncs, with the builtin embedder and the default dedup
// policy: memories/s.
func BenchmarkStore_Remember_writers(b *testing.B) {
	for _, writers := range []int{1, 4, 16} {
		b.Run(fmt.Sprint("writers=", writers), func(b *testing.B) {
			s := MustOpen(b, vector.NewBuiltin())
			var next sync.Mutex
			i := 0
			b.ResetTimer()
			var wg sync.WaitGroup
			for range writers {
				wg.Go(func() {
					for {
						next.Lock()
						if i >= b.N {
							next.Unlock()
							return
						}
						i++
						text := fmt.Sprintf("note %d about %s and %s", i, benchWords[i%len(benchWords)], benchWords[(i*7)%len(benchWords)])
						next.Unlock()
						res, _, err := s.Remember(context.Background(), []memory.Draft{{Text: text}}, me)
						if err != nil || res[0].Err != nil {
							b.Error(err, res)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "memories/s")
		})
	}
}

// TestStore_Remember_commitFails: when the commit fails, every writer in it is told so and
// nothing of theirs reaches the cache.
func TestStore_Remember_commitFails(t *testing.T) {
	const writers = 16
	path := filepath.Join(t.TempDir(), "ownsona.db")
	s, db := openAt(t, path, memory.Config{})
	defer s.Close()
	kept := remember(t, s, memory.Draft{Text: "written before the file closed"})
	db.Close() // every commit from now on fails
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			_, _, err := s.Remember(context.Background(), []memory.Draft{{Text: fmt.Sprint("lost note ", w)}}, me)
			if err == nil {
				t.Errorf("writer %d: remember succeeded on a closed file", w)
			}
		})
	}
	wg.Wait()
	if n := s.Count(memory.Filter{IncludeDeleted: true}); n != 1 {
		t.Errorf("%d memories in the cache after failed commits, want 1", n)
	}
	if m, err := s.Get(kept); err != nil || m.Text != "written before the file closed" {
		t.Errorf("Get(%d) = %v, %v", kept, m, err)
	}
}
