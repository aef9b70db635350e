package memory_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// rememberAs stores one draft for o and returns its outcome, failing the test on a storage error.
func rememberAs(tb testing.TB, s *memory.Store, d memory.Draft, o memory.Origin) memory.Remembered {
	tb.Helper()
	res, _, err := s.Remember(context.Background(), []memory.Draft{d}, o)
	if err != nil {
		tb.Fatal(err)
	}
	return res[0]
}

var (
	alice = memory.Origin{Provider: "claude", Client: "Claude", Principal: "oauth:alice"}
	bob   = memory.Origin{Provider: "chatgpt", Client: "ChatGPT", Principal: "oauth:bob"}
)

// TestStore_Remember_idempotencyKey specifies that a key answers a retry with the first result
// for a day, per principal, across restarts, and refuses other text.
func TestStore_Remember_idempotencyKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		open := func() (*memory.Store, func()) {
			s, db := openAt(t, path, memory.Config{})
			return s, func() { s.Close(); db.Close() }
		}
		s, closeS := open()
		first := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, alice)
		if first.Err != nil || first.Replayed {
			t.Fatalf("first = %+v", first)
		}
		time.Sleep(2 * time.Minute) // past the exact-duplicate window: only the key answers
		again := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, alice)
		if again.Err != nil || !again.Replayed || again.ID != first.ID {
			t.Errorf("retry = %+v, want replayed %d", again, first.ID)
		}
		other := rememberAs(t, s, memory.Draft{Text: "I moved to Munich", IdempotencyKey: "k1"}, alice)
		if fieldOf(other.Err) != "idempotency_key" {
			t.Errorf("other text with the key: %+v, want an idempotency_key refusal", other)
		}
		theirs := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, bob)
		if theirs.Err != nil || theirs.Replayed || theirs.ID == first.ID {
			t.Errorf("another principal's key: %+v, want a new memory", theirs)
		}
		if n := s.Count(memory.Filter{IncludeDeleted: true}); n != 2 {
			t.Errorf("stored %d memories, want 2", n)
		}

		closeS() // keys survive a restart
		s, closeS = open()
		defer func() { closeS() }()
		if r := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, alice); !r.Replayed || r.ID != first.ID {
			t.Errorf("after a restart: %+v, want replayed %d", r, first.ID)
		}

		time.Sleep(memory.IdempotencyTTL) // a day after the first write the key is free again
		r := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, alice)
		if r.Err != nil || r.Replayed || r.ID == first.ID {
			t.Errorf("after %v: %+v, want a new memory", memory.IdempotencyTTL, r)
		}
		// and names the new write from then on
		if r2 := rememberAs(t, s, memory.Draft{Text: "I moved to Berlin", IdempotencyKey: "k1"}, alice); r2.ID != r.ID || !r2.Replayed {
			t.Errorf("then: %+v, want replayed %d", r2, r.ID)
		}
	})
}

// TestStore_Remember_idempotencyKeyBatch specifies a key repeated inside one call.
func TestStore_Remember_idempotencyKeyBatch(t *testing.T) {
	s := MustOpen(t, nil)
	res, _, err := s.Remember(context.Background(), []memory.Draft{
		{Text: "I play chess", IdempotencyKey: "a"},
		{Text: "I play chess", IdempotencyKey: "a"},
		{Text: "I play go", IdempotencyKey: "a"},
	}, alice)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[1].Err != nil || !res[1].Replayed || res[1].ID != res[0].ID {
		t.Errorf("repeated key, same text: %+v, %+v", res[0], res[1])
	}
	if fieldOf(res[2].Err) != "idempotency_key" {
		t.Errorf("repeated key, other text: %+v", res[2])
	}
	if n := s.Count(memory.Filter{}); n != 1 {
		t.Errorf("stored %d, want 1", n)
	}
}

// TestStore_Remember_idempotencyConcurrent specifies that identical keyed calls at once store
// once.
func TestStore_Remember_idempotencyConcurrent(t *testing.T) {
	s := MustOpen(t, nil)
	const n = 16
	got := make([]memory.Remembered, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			res, _, err := s.Remember(context.Background(), []memory.Draft{{Text: "I ride a bike to work", IdempotencyKey: "same"}}, alice)
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = res[0]
		})
	}
	wg.Wait()
	replayed := 0
	for _, r := range got {
		if r.ID != got[0].ID {
			t.Errorf("ids differ: %d and %d", r.ID, got[0].ID)
		}
		if r.Replayed {
			replayed++
		}
	}
	if replayed != n-1 {
		t.Errorf("%d replayed, want %d", replayed, n-1)
	}
	if c := s.Count(memory.Filter{}); c != 1 {
		t.Errorf("stored %d, want 1", c)
	}
}

// TestStore_Remember_recentDuplicate specifies that, without a key, the same text and tags
// from the same client within a minute is answered with the memory it wrote.
func TestStore_Remember_recentDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		d := memory.Draft{Text: "My flight leaves at 9", Tags: []string{"travel"}}
		first := rememberAs(t, s, d, alice)
		for _, tc := range []struct {
			name     string
			wait     time.Duration
			draft    memory.Draft
			o        memory.Origin
			replayed bool
		}{
			{"retry", 10 * time.Second, d, alice, true},
			{"other client", 0, d, bob, false},
			{"other tags", 0, memory.Draft{Text: d.Text, Tags: []string{"work"}}, alice, false},
			{"insert policy", 0, memory.Draft{Text: d.Text, Tags: d.Tags, Dedup: memory.DedupInsert}, alice, false},
			{"after a minute", memory.RecentDuplicateWindow + time.Second, d, alice, false},
		} {
			time.Sleep(tc.wait)
			r := rememberAs(t, s, tc.draft, tc.o)
			if r.Err != nil || r.Replayed != tc.replayed || (r.ID == first.ID) != tc.replayed {
				t.Errorf("%s: %+v (first %d), want replayed %v", tc.name, r, first.ID, tc.replayed)
			}
		}
	})
}

// TestStore_Remember_recentDuplicateReopen: a retry within the minute is answered with the
// memory it wrote across a restart too, and only the newest memories count.
func TestStore_Remember_recentDuplicateReopen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		s, db := openAt(t, path, memory.Config{})
		defer db.Close()
		d := memory.Draft{Text: "My flight leaves at 9"}
		first := rememberAs(t, s, d, alice)
		s.Close()
		time.Sleep(10 * time.Second)
		s, err := memory.Open(db, memory.Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if r := rememberAs(t, s, d, alice); !r.Replayed || r.ID != first.ID {
			t.Errorf("retry after a restart: %+v, want memory %d replayed", r, first.ID)
		}
		for i := range 1000 {
			rememberAs(t, s, memory.Draft{Text: fmt.Sprint("filler ", i), Dedup: memory.DedupInsert}, alice)
		}
		if r := rememberAs(t, s, d, alice); r.Replayed {
			t.Errorf("retry after 1000 newer memories: %+v, want stored anew", r)
		}
	})
}
