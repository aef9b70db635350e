package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestBM25_SearchContext: a document is found through its neighbours' words, at a discount, and
// each query word counts the better of its own score and its context's, never their sum.
func TestBM25_SearchContext(t *testing.T) {
	b := MustNewBM25(t,
		"What inspired you to join the marching band?",         // 1
		"I have always had a great respect for our military",   // 2
		"The garage door squeaks again",                        // 3
		"marching band practice is on Tuesday, marching again", // 4
	)
	b.SetContext(2, []uint64{1}, Speaks)
	const q = "What inspired John to join the marching band?"
	t.Run("found through a neighbour", func(t *testing.T) {
		if got := b.Search(q, 10, nil); slices.Contains(ids(got), 2) {
			t.Fatalf("Search = %v: 2 shares a word with the question; the test proves nothing", got)
		}
		got := b.SearchContext(q, 10, nil, 0.5, nil)
		if !slices.Equal(ids(got)[:1], []uint64{1}) || !slices.Contains(ids(got), 2) {
			t.Fatalf("SearchContext = %v, want 1 first and 2 found through it", got)
		}
		own := b.Search(q, 10, nil)
		s1 := own[slices.Index(ids(own), 1)].Score
		s2 := got[slices.Index(ids(got), 2)].Score
		if math.Abs(float64(s2-0.5*s1)) > 1e-5 {
			t.Errorf("score of 2 = %v, want half of its neighbour's %v", s2, s1)
		}
	})
	t.Run("the relation is symmetric", func(t *testing.T) {
		got := b.SearchContext("military respect", 10, nil, 0.5, nil)
		if !slices.Equal(ids(got), []uint64{2, 1}) {
			t.Errorf("SearchContext = %v, want 2 then 1 through it", got)
		}
	})
	t.Run("per word the better of own and context, not the sum", func(t *testing.T) {
		b := MustNewBM25(t, "marching band", "marching band", "a parade")
		b.SetContext(1, []uint64{2}, Speaks)
		plain := b.Search("marching", 10, nil)
		got := b.SearchContext("marching", 10, nil, 0.9, nil)
		for _, r := range got {
			if r.ID != 3 && r.Score != plain[slices.Index(ids(plain), r.ID)].Score {
				t.Errorf("SearchContext = %v, want the own scores %v: the neighbour's match is worth less", got, plain)
			}
		}
	})
	t.Run("weight zero is Search", func(t *testing.T) {
		if got, want := b.SearchContext(q, 10, nil, 0, nil), b.Search(q, 10, nil); !slices.Equal(got, want) {
			t.Errorf("SearchContext(w 0) = %v, want %v", got, want)
		}
	})
	t.Run("the filter applies to documents found through context", func(t *testing.T) {
		got := b.SearchContext(q, 10, func(id uint64) bool { return id != 2 }, 0.5, nil)
		if slices.Contains(ids(got), 2) {
			t.Errorf("SearchContext = %v, want 2 filtered out", got)
		}
	})
	t.Run("quiet and asked voices", func(t *testing.T) {
		b := MustNewBM25(t, "What inspired you to join?", "respect for our military")
		b.SetContext(1, []uint64{2}, Quiet)
		if got := b.SearchContext("inspired", 10, nil, 0.5, nil); !slices.Equal(ids(got), []uint64{1}) {
			t.Errorf("quiet: SearchContext = %v, want only 1: its words count for nobody", got)
		}
		b.SetContext(1, []uint64{2}, Ask)
		if got := b.SearchContext("inspired", 10, nil, 0.5, func(uint64) bool { return false }); !slices.Equal(ids(got), []uint64{1}) {
			t.Errorf("ask, refused: SearchContext = %v, want only 1", got)
		}
		if got := b.SearchContext("inspired", 10, nil, 0.5, func(uint64) bool { return true }); !slices.Equal(ids(got), []uint64{1, 2}) {
			t.Errorf("ask, admitted: SearchContext = %v, want 1 and 2", got)
		}
		// Quiet silences 1's words only: it still receives 2's.
		if got := b.SearchContext("military", 10, nil, 0.5, nil); !slices.Equal(ids(got), []uint64{2, 1}) {
			t.Errorf("SearchContext = %v, want 2, then 1 through it (1 still receives)", got)
		}
	})
	t.Run("remove leaves every context, and a reused slot inherits none", func(t *testing.T) {
		b := MustNewBM25(t, "alpha", "beta", "gamma")
		b.SetContext(2, []uint64{1, 3}, Speaks)
		b.Remove(2)
		b.Add(4, "delta") // takes 2's slot
		if got := b.SearchContext("alpha", 10, nil, 0.5, nil); !slices.Equal(ids(got), []uint64{1}) {
			t.Errorf("SearchContext = %v, want only 1", got)
		}
		if got := b.SearchContext("delta", 10, nil, 0.5, nil); !slices.Equal(ids(got), []uint64{4}) {
			t.Errorf("SearchContext = %v, want only 4", got)
		}
	})
	t.Run("a new text keeps the context", func(t *testing.T) {
		b := MustNewBM25(t, "alpha", "beta")
		b.SetContext(1, []uint64{2}, Speaks)
		b.Add(2, "gamma")
		if got := b.SearchContext("gamma", 10, nil, 0.5, nil); !slices.Equal(ids(got), []uint64{2, 1}) {
			t.Errorf("SearchContext = %v, want 2 then 1", got)
		}
	})
}

// TestBuiltin_SoftMatchContext: each query word scores max(own, w × its best among the
// neighbours' texts).
func TestBuiltin_SoftMatchContext(t *testing.T) {
	emb := NewBuiltin()
	const q = "coffee garden"
	texts := []string{"I love coffee", "my garden is green", "a red bicycle", "coffee in the garden"}
	plain := emb.SoftMatch(q, texts, nil)
	t.Run("no context is SoftMatch", func(t *testing.T) {
		if got := emb.SoftMatchContext(q, texts, nil, 0.8, nil); !slices.Equal(got, plain) {
			t.Errorf("SoftMatchContext = %v, want %v", got, plain)
		}
		if got := emb.SoftMatchContext(q, texts, [][]int{{1}}, 0, nil); !slices.Equal(got, plain) {
			t.Errorf("SoftMatchContext(w 0) = %v, want %v", got, plain)
		}
	})
	t.Run("the better of own and discounted context, per word", func(t *testing.T) {
		const w = 0.8
		got := emb.SoftMatchContext(q, texts, [][]int{{1}, nil, {0, 1}, {0}}, w, nil)
		if got[0] <= plain[0] {
			t.Errorf("coffee with garden as context = %v, want more than alone (%v)", got[0], plain[0])
		}
		if got[0] >= plain[3] {
			t.Errorf("coffee with garden as context = %v, want less than a text with both words (%v)", got[0], plain[3])
		}
		if got[1] != plain[1] {
			t.Errorf("a text without context = %v, want %v", got[1], plain[1])
		}
		if want := w * plain[3]; math.Abs(float64(got[2]-want)) > 1e-3 && got[2] < want-1e-3 {
			t.Errorf("a text unrelated to the query with both words in context = %v, want about %v", got[2], want)
		}
		if got[3] != plain[3] {
			t.Errorf("a text holding every word = %v, want %v: context never lowers nor adds to a full match", got[3], plain[3])
		}
	})
}

// TestBM25_SearchContextDense: scoring a common word by a pass over the slots (addWordDense,
// or addFirstWordDense when it is the first word scored) ranks as keeping a list of them does,
// scores bit for bit, on random indexes with removals, reused slots, contexts that fill up,
// every voice, filters and speaks filters.
func TestBM25_SearchContextDense(t *testing.T) {
	defer func(d int) { denseShare = d }(denseShare)
	r := rand.New(rand.NewPCG(17, 4))
	vocab := make([]string, 200)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%dx", i)
	}
	zipf := rand.NewZipf(r, 1.2, 2, uint64(len(vocab)-1))
	text := func() string {
		var sb strings.Builder
		for range 1 + r.IntN(12) {
			sb.WriteString(vocab[zipf.Uint64()] + " ")
		}
		return sb.String()
	}
	for round := range 6 {
		idx := NewBM25()
		const n = 2000
		for id := uint64(1); id <= n; id++ {
			idx.Add(id, text())
		}
		contexts := func() {
			for range n {
				id := 1 + uint64(r.IntN(n))
				near := []uint64{id - 2, id - 1, id + 1, id + 2}
				if round%2 == 1 { // anywhere, so that contexts fill up
					near = near[:0]
					for range r.IntN(6) {
						near = append(near, 1+uint64(r.IntN(n)))
					}
				}
				idx.SetContext(id, near, Voice(r.IntN(3)))
			}
		}
		contexts()
		for range 200 { // removals, and new documents in the freed slots
			if id := 1 + uint64(r.IntN(n)); r.IntN(2) == 0 {
				idx.Remove(id)
			} else {
				idx.Add(n+id, text())
			}
		}
		contexts()
		filters := []Filter{nil, func(id uint64) bool { return id%3 != 0 }, func(id uint64) bool { return id%11 == 0 }}
		speaks := []Filter{nil, func(id uint64) bool { return id%2 == 0 }}
		for i := range 150 {
			var q []string
			for range 1 + r.IntN(5) {
				q = append(q, vocab[zipf.Uint64()])
			}
			query, k, w := strings.Join(q, " "), []int{1, 7, 50}[i%3], []float32{ContextLexicalWeight, 0.9}[i%2]
			f, sp := filters[i%len(filters)], speaks[i%len(speaks)]
			denseShare = 0 // every word keeps a list
			want := idx.SearchContext(query, k, f, w, sp)
			for _, share := range []int{4, n * 10} { // the default; every word dense
				denseShare = share
				if got := idx.SearchContext(query, k, f, w, sp); !slices.Equal(got, want) {
					t.Fatalf("round %d, %q k %d w %g, denseShare %d: got\n%v\nwant\n%v", round, query, k, w, share, got, want)
				}
			}
		}
	}
}
