package memory_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/rank"
	"github.com/ownsona/ownsona/vector"
)

// rememberAll stores drafts in one call by o and returns their ids.
func rememberAll(tb testing.TB, s *memory.Store, o memory.Origin, drafts ...memory.Draft) []uint64 {
	tb.Helper()
	res, _, err := s.Remember(context.Background(), drafts, o)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]uint64, len(res))
	for i, r := range res {
		if r.Err != nil {
			tb.Fatalf("remember %q: %v", drafts[i].Text, r.Err)
		}
		ids[i] = r.ID
	}
	return ids
}

func drafts(ss ...string) []memory.Draft {
	out := make([]memory.Draft, len(ss))
	for i, s := range ss {
		out[i] = memory.Draft{Text: s}
	}
	return out
}

func wantNeighbours(tb testing.TB, s *memory.Store, id uint64, want ...uint64) {
	tb.Helper()
	if got := s.Neighbours(id); !slices.Equal(got, want) {
		tb.Errorf("Neighbours(%d) = %v, want %v", id, got, want)
	}
}

// TestStore_Neighbours specifies which memories are each other's context.
func TestStore_Neighbours(t *testing.T) {
	other := memory.Origin{Provider: "chatgpt", Client: "chatgpt-connector"}
	t.Run("a batch, two on each side, nearest first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			ids := rememberAll(t, s, me, drafts("one", "two", "three", "four", "five", "six")...)
			wantNeighbours(t, s, ids[0], ids[1], ids[2])
			wantNeighbours(t, s, ids[2], ids[1], ids[0], ids[3], ids[4])
			wantNeighbours(t, s, ids[5], ids[4], ids[3])
		})
	})
	t.Run("the same client within the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			a := remember(t, s, memory.Draft{Text: "a"})
			time.Sleep(memory.ContextWindow) // exactly the window: still one sitting
			b := remember(t, s, memory.Draft{Text: "b"})
			time.Sleep(memory.ContextWindow + time.Second)
			c := remember(t, s, memory.Draft{Text: "c"})
			wantNeighbours(t, s, a, b)
			wantNeighbours(t, s, b, a)
			wantNeighbours(t, s, c)
		})
	})
	t.Run("never hours apart", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			a := remember(t, s, memory.Draft{Text: "my sister lives in Lisbon"})
			time.Sleep(3 * time.Hour)
			b := remember(t, s, memory.Draft{Text: "the dentist is on Friday"})
			wantNeighbours(t, s, a)
			wantNeighbours(t, s, b)
		})
	})
	t.Run("not across clients", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			a1 := rememberAll(t, s, me, drafts("a1")...)[0]
			b1 := rememberAll(t, s, other, drafts("b1")...)[0]
			a2 := rememberAll(t, s, me, drafts("a2")...)[0]
			b2 := rememberAll(t, s, other, drafts("b2")...)[0]
			wantNeighbours(t, s, a1, a2)
			wantNeighbours(t, s, b1, b2)
			wantNeighbours(t, s, a2, a1)
		})
	})
	t.Run("nor across providers of one client", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			a := rememberAll(t, s, me, memory.Draft{Text: "a"}, memory.Draft{Text: "b", SourceProvider: "cursor"})
			wantNeighbours(t, s, a[0])
			wantNeighbours(t, s, a[1])
		})
	})
	t.Run("a session, however long, and only its own memories", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			x1 := remember(t, s, memory.Draft{Text: "x1", SessionID: "trip"})
			y1 := remember(t, s, memory.Draft{Text: "y1", SessionID: "work"})
			time.Sleep(5 * time.Hour)
			x2 := remember(t, s, memory.Draft{Text: "x2", SessionID: "trip"})
			plain := remember(t, s, memory.Draft{Text: "no session"})
			x3 := remember(t, s, memory.Draft{Text: "x3", SessionID: "trip"})
			wantNeighbours(t, s, x1, x2, x3)
			wantNeighbours(t, s, x2, x1, x3)
			wantNeighbours(t, s, y1)
			wantNeighbours(t, s, plain)
			// Another client's session of the same name is another conversation.
			z := rememberAll(t, s, other, memory.Draft{Text: "z", SessionID: "trip"})[0]
			wantNeighbours(t, s, z)
		})
	})
	t.Run("a hard delete closes the gap as a restart would", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpen(t, nil)
			ids := rememberAll(t, s, me, drafts("one", "two", "three", "four", "five")...)
			if err := s.Delete(ids[2]); err != nil {
				t.Fatal(err)
			}
			wantNeighbours(t, s, ids[1], ids[0], ids[3], ids[4])
			if err := s.Delete(ids[4]); err != nil {
				t.Fatal(err)
			}
			wantNeighbours(t, s, ids[3], ids[1], ids[0])
			// The next memory continues the group from its new tail.
			next := remember(t, s, memory.Draft{Text: "six"})
			wantNeighbours(t, s, next, ids[3], ids[1])
		})
	})
}

// TestStore_Neighbours_derived: neighbours are not stored but derived when the file is opened,
// the same as they were while it was written (so older files get them too).
func TestStore_Neighbours_derived(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		open := func() (*memory.Store, func()) {
			s, db := openAt(t, path, memory.Config{})
			return s, func() { s.Close(); db.Close() }
		}
		s, closeStore := open()
		var ids []uint64
		ids = append(ids, rememberAll(t, s, me, drafts("a", "b", "c")...)...)
		time.Sleep(time.Hour)
		ids = append(ids, rememberAll(t, s, me, drafts("d", "e")...)...)
		ids = append(ids, remember(t, s, memory.Draft{Text: "f", SessionID: "s"}))
		if err := s.Delete(ids[1]); err != nil {
			t.Fatal(err)
		}
		live := map[uint64][]uint64{}
		for _, id := range ids {
			live[id] = s.Neighbours(id)
		}
		closeStore()
		s, closeStore = open()
		defer closeStore()
		for _, id := range ids {
			if got := s.Neighbours(id); !slices.Equal(got, live[id]) {
				t.Errorf("after reopening, Neighbours(%d) = %v, want %v as before", id, got, live[id])
			}
		}
		wantNeighbours(t, s, ids[0], ids[2])
		wantNeighbours(t, s, ids[3], ids[4])
	})
}

// TestStore_Search_context: a memory that shares no word with the question is found through
// the memory written just before it, and forgotten words count for nobody.
func TestStore_Search_context(t *testing.T) {
	for _, emb := range []vector.Embedder{nil, vector.NewBuiltin()} {
		name := "lexical"
		if emb != nil {
			name = "builtin"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := MustOpen(t, emb)
				ids := rememberAll(t, s, me, drafts(
					"Melanie: What inspired you to join the marching band?",
					"I've always had a great respect for our military.",
				)...)
				time.Sleep(3 * time.Hour)
				later := remember(t, s, memory.Draft{Text: "John: the garage door squeaks again."})
				found := func() []uint64 {
					var out []uint64
					for _, m := range s.Search(context.Background(), memory.Query{Text: "What inspired John to join the marching band?", Limit: 8}).Matches {
						out = append(out, m.Memory.ID)
					}
					return out
				}
				got := found()
				if !slices.Contains(got, ids[1]) {
					t.Errorf("Search = %v, want the answer %d found through its neighbour %d", got, ids[1], ids[0])
				}
				if len(got) > 0 && got[0] != ids[0] {
					t.Errorf("Search = %v, want the memory holding the words (%d) first", got, ids[0])
				}
				if i, j := slices.Index(got, later), slices.Index(got, ids[1]); i >= 0 && i < j {
					t.Errorf("Search = %v: a memory written hours later (%d) outranks the context's answer", got, later)
				}
				if _, err := s.Forget([]uint64{ids[0]}, memory.Forgetting{Reason: "test"}); err != nil {
					t.Fatal(err)
				}
				if got := found(); slices.Contains(got, ids[1]) && emb == nil {
					t.Errorf("after forgetting %d, Search = %v: its words still find %d", ids[0], got, ids[1])
				}
				// Measured without context, the answer is not found by lexical search at all.
				if emb == nil {
					plain, db := openAt(t, filepath.Join(t.TempDir(), "plain.db"), memory.Config{Rank: &rank.Params{}})
					defer db.Close()
					defer plain.Close()
					pids := rememberAll(t, plain, me, drafts(
						"Melanie: What inspired you to join the marching band?",
						"I've always had a great respect for our military.",
					)...)
					for _, m := range plain.Search(context.Background(), memory.Query{Text: "What inspired John to join the marching band?", Limit: 8}).Matches {
						if m.Memory.ID == pids[1] {
							t.Errorf("without context the answer %d was found; the test proves nothing", pids[1])
						}
					}
				}
			})
		})
	}
}
