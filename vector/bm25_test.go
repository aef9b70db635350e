package vector

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// MustNewBM25 returns an index holding texts under ids 1, 2, ….
func MustNewBM25(tb testing.TB, texts ...string) *BM25 {
	tb.Helper()
	b := NewBM25()
	for i, text := range texts {
		b.Add(uint64(i+1), text)
	}
	if got, want := b.Len(), len(texts); got != want {
		tb.Fatalf("Len = %d, want %d", got, want)
	}
	return b
}

func ids(results []Scored) []uint64 {
	out := make([]uint64, len(results))
	for i, r := range results {
		out[i] = r.ID
	}
	return out
}

func TestBM25_Search(t *testing.T) {
	b := MustNewBM25(t,
		"I prefer dark roast coffee",                        // 1
		"My son Colby lives in Los Angeles",                 // 2
		"Coffee with oat milk, never dairy; coffee is life", // 3
		"The dentist appointment is in March",               // 4
		"Melanie painted a sunrise over the lake",           // 5
		"We adopted two puppies last spring",                // 6
	)
	tests := []struct {
		name  string
		query string
		k     int
		want  []uint64
	}{
		{"more occurrences rank higher", "coffee", 10, []uint64{3, 1}},
		{"rarer term outweighs a common one", "dark coffee", 10, []uint64{1, 3}},
		{"possessive query", "Where does Colby's family live?", 10, []uint64{2}},
		{"stemmed inflections meet", "When did Melanie paint?", 10, []uint64{5}},
		{"plural meets singular", "puppy", 10, []uint64{6}},
		{"stopwords alone match nothing", "the and of is in", 10, nil},
		{"unknown words match nothing", "zebra quantum", 10, nil},
		{"empty query", "", 10, nil},
		{"k cuts", "coffee", 1, []uint64{3}},
		{"k zero", "coffee", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := b.Search(tt.query, tt.k, nil)
			if !slices.Equal(ids(got), tt.want) {
				t.Errorf("Search(%q) = %v, want ids %v", tt.query, got, tt.want)
			}
			for i, r := range got {
				if r.Score <= 0 || (i > 0 && r.Score > got[i-1].Score) {
					t.Errorf("scores not positive and descending: %v", got)
				}
			}
		})
	}
	t.Run("ties break by higher id first", func(t *testing.T) {
		b := MustNewBM25(t, "red apple", "red apple", "green pear", "red apple")
		got := b.Search("apple", 10, nil)
		if want := []uint64{4, 2, 1}; !slices.Equal(ids(got), want) {
			t.Errorf("Search = %v, want ids %v", got, want)
		}
		if got[0].Score != got[2].Score {
			t.Errorf("equal documents scored differently: %v", got)
		}
	})
}

func TestBM25_SearchFilter(t *testing.T) {
	t.Run("applied before the top-k cut", func(t *testing.T) {
		// 490 strong matches fail the filter; the 10 weak ones that pass must still fill k.
		b := NewBM25()
		for i := uint64(1); i <= 500; i++ {
			text := "garden tomato garden tomato"
			if i%50 == 0 {
				text = "a tomato recipe with many other words in it to lower its score " + strings.Repeat("x", int(i))
			}
			b.Add(i, text)
		}
		calls := 0
		got := b.Search("garden tomato", 5, func(id uint64) bool { calls++; return id%50 == 0 })
		if len(got) != 5 {
			t.Fatalf("got %d results, want 5: %v", len(got), got)
		}
		for _, r := range got {
			if r.ID%50 != 0 {
				t.Errorf("result %d does not pass the filter", r.ID)
			}
		}
		if calls > 500 {
			t.Errorf("filter called %d times, want at most once per matching document (500)", calls)
		}
	})
	t.Run("rejecting everything", func(t *testing.T) {
		b := MustNewBM25(t, "coffee", "coffee beans")
		if got := b.Search("coffee", 5, func(uint64) bool { return false }); len(got) != 0 {
			t.Errorf("Search = %v, want none", got)
		}
		// The pooled accumulator must come back clean after a search that rejected all.
		if got := b.Search("beans", 5, nil); !slices.Equal(ids(got), []uint64{2}) {
			t.Errorf("next Search = %v, want [2]", got)
		}
	})
}

func TestBM25_Add(t *testing.T) {
	b := MustNewBM25(t, "I prefer dark roast coffee", "coffee with oat milk")
	b.Add(1, "I prefer green tea")
	if got, want := b.Len(), 2; got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	if got := b.Search("coffee", 10, nil); !slices.Equal(ids(got), []uint64{2}) {
		t.Errorf("coffee after replace = %v, want [2]", got)
	}
	if got := b.Search("tea", 10, nil); !slices.Equal(ids(got), []uint64{1}) {
		t.Errorf("tea after replace = %v, want [1]", got)
	}
	b.Add(3, "the and of")
	if got, want := b.Len(), 3; got != want {
		t.Errorf("Len with a stopword-only text = %d, want %d", got, want)
	}
}

func TestBM25_Remove(t *testing.T) {
	t.Run("removed ids no longer match", func(t *testing.T) {
		b := MustNewBM25(t, "coffee", "coffee beans", "tea")
		b.Remove(2)
		b.Remove(42) // unknown: ignored
		if got := b.Search("coffee beans", 10, nil); !slices.Equal(ids(got), []uint64{1}) {
			t.Errorf("Search = %v, want [1]", got)
		}
		if got, want := b.Len(), 2; got != want {
			t.Errorf("Len = %d, want %d", got, want)
		}
		b.Remove(1)
		b.Remove(3)
		if got := b.Search("coffee tea", 10, nil); got != nil {
			t.Errorf("Search on emptied index = %v", got)
		}
	})
	t.Run("same scores as a fresh index after churn", func(t *testing.T) {
		r := rand.New(rand.NewPCG(7, 7))
		words := strings.Fields("coffee tea garden sister brother paint painting puppies dog hiking lisbon berlin piano guitar salary rent")
		text := func() string {
			var sb strings.Builder
			for range 1 + r.IntN(10) {
				sb.WriteString(words[r.IntN(len(words))] + " ")
			}
			return sb.String()
		}
		b := NewBM25()
		live := map[uint64]string{}
		for range 3000 {
			id := uint64(1 + r.IntN(300))
			if r.IntN(3) == 0 {
				b.Remove(id)
				delete(live, id)
				continue
			}
			s := text()
			b.Add(id, s)
			live[id] = s
		}
		fresh := NewBM25()
		for id, s := range live {
			fresh.Add(id, s)
		}
		if b.Len() != fresh.Len() {
			t.Fatalf("Len = %d, want %d", b.Len(), fresh.Len())
		}
		for _, q := range words {
			q += " " + words[r.IntN(len(words))]
			got, want := b.Search(q, 20, nil), fresh.Search(q, 20, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("Search(%q):\n got %v\nwant %v", q, got, want)
			}
		}
	})
}

func TestBM25_Concurrent(t *testing.T) {
	b := NewBM25()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := uint64(w*1000 + i)
				b.Add(id, fmt.Sprintf("note %d about coffee and tea", i))
				b.Search("coffee note", 5, func(id uint64) bool { return id%2 == 0 })
				if i%3 == 0 {
					b.Remove(id)
				}
				b.Len()
			}
		})
	}
	wg.Wait()
	if got, want := b.Len(), 4*(200-67); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
}

// TestBM25_Compact: after Compact no term's postings have more capacity than the allocator's
// rounding to a size class adds (at most an eighth, and a few for short lists), and the index
// answers as before, also once documents are added and removed.
func TestBM25_Compact(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	text := func() string {
		var sb strings.Builder
		for range 1 + r.IntN(10) {
			fmt.Fprintf(&sb, "w%dx ", r.IntN(300))
		}
		return sb.String()
	}
	plain, compact := NewBM25(), NewBM25()
	for id := uint64(1); id <= 3000; id++ {
		t := text()
		plain.Add(id, t)
		compact.Add(id, t)
	}
	compact.Compact()
	for tid, ps := range compact.postings {
		if cap(ps) > len(ps)+len(ps)/8+2 {
			t.Fatalf("term %q: %d postings in a capacity of %d after Compact", compact.termStr[tid], len(ps), cap(ps))
		}
	}
	same := func(when string) {
		t.Helper()
		for range 100 {
			q := fmt.Sprintf("w%dx w%dx", r.IntN(300), r.IntN(300))
			if got, want := compact.Search(q, 10, nil), plain.Search(q, 10, nil); !slices.Equal(got, want) {
				t.Fatalf("%s: Search(%q) = %v, want %v", when, q, got, want)
			}
		}
	}
	same("after Compact")
	for range 500 {
		id := 1 + uint64(r.IntN(4000))
		if r.IntN(2) == 0 {
			plain.Remove(id)
			compact.Remove(id)
		} else {
			t := text()
			plain.Add(id, t)
			compact.Add(id, t)
		}
	}
	same("after adds and removals")
}
