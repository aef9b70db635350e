package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func randVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// bruteForce ranks vecs by Cosine to q, best first, ties by higher id.
func bruteForce(vecs map[uint64][]float32, q []float32, k int, filter Filter) []Scored {
	var all []Scored
	for id, v := range vecs {
		if filter == nil || filter(id) {
			all = append(all, Scored{id, Cosine(q, v)})
		}
	}
	slices.SortFunc(all, compareBest)
	return all[:min(k, len(all))]
}

func TestExact_Search(t *testing.T) {
	t.Run("matches brute force after removals and replacements", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		const dim, n = 37, 600 // an odd dimension exercises the unrolled loop's tail
		e := NewExact(dim)
		vecs := map[uint64][]float32{}
		for i := uint64(1); i <= n; i++ {
			vecs[i] = randVec(r, dim)
			if err := e.Add(i, vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
		for i := uint64(1); i <= n; i += 7 {
			e.Remove(i)
			delete(vecs, i)
		}
		for i := uint64(3); i <= n; i += 11 {
			vecs[i] = randVec(r, dim)
			if err := e.Add(i, vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := e.Len(), len(vecs); got != want {
			t.Fatalf("Len = %d, want %d", got, want)
		}
		filters := map[string]Filter{"nil": nil, "even": func(id uint64) bool { return id%2 == 0 }, "rare": func(id uint64) bool { return id%97 == 0 }}
		for name, filter := range filters {
			for q := range 10 {
				qv := randVec(r, dim)
				got, want := e.Search(qv, 10, filter), bruteForce(vecs, qv, 10, filter)
				if len(got) != len(want) {
					t.Fatalf("filter %s query %d: got %d results, want %d", name, q, len(got), len(want))
				}
				for i := range want {
					if got[i].ID != want[i].ID || !near(got[i].Score, want[i].Score) {
						t.Fatalf("filter %s query %d rank %d: got %v, want %v", name, q, i, got[i], want[i])
					}
				}
			}
		}
	})
	t.Run("ties break by higher id first", func(t *testing.T) {
		e := NewExact(2)
		for id := uint64(1); id <= 4; id++ {
			e.Add(id, []float32{1, 1})
		}
		e.Add(5, []float32{-1, 0})
		got := e.Search([]float32{3, 3}, 3, nil)
		if want := []uint64{4, 3, 2}; !slices.Equal(ids(got), want) {
			t.Errorf("Search = %v, want ids %v", got, want)
		}
		if !near(got[0].Score, 1) {
			t.Errorf("cosine of parallel vectors = %v, want 1", got[0].Score)
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		e := NewExact(3)
		e.Add(1, []float32{1, 2, 3})
		if got := e.Search([]float32{1, 2}, 5, nil); got != nil {
			t.Errorf("wrong-length query = %v, want nil", got)
		}
		if got := e.Search([]float32{1, 2, 3}, 0, nil); got != nil {
			t.Errorf("k 0 = %v, want nil", got)
		}
		if got := NewExact(0).Search([]float32{1}, 5, nil); got != nil {
			t.Errorf("empty index = %v, want nil", got)
		}
	})
}

func TestExact_Add(t *testing.T) {
	t.Run("dimension mismatch", func(t *testing.T) {
		e := NewExact(3)
		if err := e.Add(1, []float32{1}); !errors.Is(err, ErrDimension) {
			t.Errorf("err = %v, want ErrDimension", err)
		}
		if e.Len() != 0 {
			t.Errorf("Len = %d after a refused Add", e.Len())
		}
	})
	t.Run("first Add fixes a zero dimension", func(t *testing.T) {
		e := NewExact(0)
		if err := e.Add(1, []float32{3, 4}); err != nil {
			t.Fatal(err)
		}
		if got, want := e.Dim(), 2; got != want {
			t.Errorf("Dim = %d, want %d", got, want)
		}
		if err := e.Add(2, []float32{1, 2, 3}); !errors.Is(err, ErrDimension) {
			t.Errorf("err = %v, want ErrDimension", err)
		}
	})
	t.Run("stores a normalized copy", func(t *testing.T) {
		e := NewExact(2)
		v := []float32{3, 4}
		e.Add(1, v)
		v[0] = 100
		got, ok := e.Get(1)
		if !ok || !near(got[0], 0.6) || !near(got[1], 0.8) {
			t.Errorf("Get = %v, %v; want [0.6 0.8], true", got, ok)
		}
		got[0] = 7
		if again, _ := e.Get(1); !near(again[0], 0.6) {
			t.Errorf("Get returned the stored row, not a copy")
		}
		if _, ok := e.Get(2); ok {
			t.Errorf("Get of an unknown id reported ok")
		}
	})
	t.Run("refuses non-finite values", func(t *testing.T) {
		e := NewExact(2)
		for _, v := range [][]float32{{float32(math.NaN()), 1}, {float32(math.Inf(1)), 0}} {
			if err := e.Add(1, v); err == nil {
				t.Errorf("Add(%v) accepted", v)
			}
		}
	})
	t.Run("replaces an existing id", func(t *testing.T) {
		e := NewExact(2)
		e.Add(1, []float32{1, 0})
		e.Add(1, []float32{0, 1})
		if got := e.Search([]float32{0, 1}, 5, nil); len(got) != 1 || got[0].ID != 1 || !near(got[0].Score, 1) {
			t.Errorf("Search = %v, want [{1 1}]", got)
		}
	})
}

func TestExact_Remove(t *testing.T) {
	e := NewExact(2)
	for id := uint64(1); id <= 3; id++ {
		e.Add(id, []float32{float32(id), 1})
	}
	e.Remove(1) // row 0: the last row (id 3) moves in
	e.Remove(9) // unknown: ignored
	for id := uint64(2); id <= 3; id++ {
		got, ok := e.Get(id)
		if want := normalized([]float32{float32(id), 1}); !ok || !near(got[0], want[0]) || !near(got[1], want[1]) {
			t.Errorf("Get(%d) = %v, %v; want %v", id, got, ok, want)
		}
	}
	if _, ok := e.Get(1); ok || e.Len() != 2 {
		t.Errorf("id 1 still present or Len = %d", e.Len())
	}
	e.Remove(2)
	e.Remove(3)
	if got := e.Search([]float32{1, 1}, 5, nil); got != nil || e.Len() != 0 {
		t.Errorf("emptied index: Search = %v, Len = %d", got, e.Len())
	}
}

func TestExact_Concurrent(t *testing.T) {
	e := NewExact(8)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range 200 {
				id := uint64(w*1000 + i)
				e.Add(id, randVec(r, 8))
				e.Search(randVec(r, 8), 5, func(id uint64) bool { return id%2 == 0 })
				e.Get(id)
				if i%4 == 0 {
					e.Remove(id)
				}
			}
		})
	}
	wg.Wait()
	if got, want := e.Len(), 4*150; got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
}

func TestTopK(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, k := range []int{1, 5, 64, 500} {
		var all []Scored
		top := newTopK(k)
		for i := range 300 {
			s := Scored{ID: uint64(i), Score: float32(r.IntN(40))} // many ties
			all = append(all, s)
			top.offer(s)
		}
		slices.SortFunc(all, compareBest)
		if got, want := top.sorted(), all[:min(k, len(all))]; !slices.Equal(got, want) {
			t.Errorf("k %d: got %v, want %v", k, got, want)
		}
	}
}

// searchEager is Exact.Search as it was before it asked the filter lazily: the filter first,
// for every stored vector, then the score of each that passed. It is the oracle of
// TestExact_SearchFilter and the baseline of BenchmarkExact_SearchLazyFilter.
func searchEager(e *Exact, q []float32, k int, filter Filter) []Scored {
	if k <= 0 {
		return nil
	}
	nq := normalized(q)
	e.mu.RLock()
	defer e.mu.RUnlock()
	if len(nq) != e.dim || e.dim == 0 {
		return nil
	}
	top := newTopK(min(k, len(e.ids)))
	for r, id := range e.ids {
		if filter != nil && !filter(id) {
			continue
		}
		top.offer(Scored{ID: id, Score: dot(nq, e.data[r*e.dim:(r+1)*e.dim])})
	}
	return top.sorted()
}

// sameScored reports whether a and b are the same results bit for bit: ids, scores' bits,
// order, and nil-ness.
func sameScored(a, b []Scored) bool {
	return (a == nil) == (b == nil) && slices.EqualFunc(a, b, func(x, y Scored) bool {
		return x.ID == y.ID && math.Float32bits(x.Score) == math.Float32bits(y.Score)
	})
}

// randomFilters returns filters over ids 0..n-1 that pass a random subset of each share, and
// nil.
func randomFilters(r *rand.Rand, n int) map[string]Filter {
	fs := map[string]Filter{"nil": nil}
	for _, p := range []float64{1, 0.9, 0.5, 0.1, 0.01, 0} {
		pass := make([]bool, n)
		for i := range pass {
			pass[i] = r.Float64() < p
		}
		fs[fmt.Sprintf("pass %g", p)] = func(id uint64) bool { return id < uint64(n) && pass[id] }
	}
	return fs
}

// TestExact_SearchFilter checks that asking the filter lazily gives, bit for bit, what asking
// it about every vector first gave (searchEager), ties included, whichever way the search
// chooses to ask after the first k passed, while asking about each vector at most once and,
// for a filter that passes all, about few of them.
func TestExact_SearchFilter(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 1))
	const n = 3000
	for _, tt := range []struct {
		name string
		dim  int
		vec  func() []float32
	}{
		{"gaussian", 24, func() []float32 { return randVec(r, 24) }},
		// Coordinates in {-1, 0, 1}: 81 distinct vectors (one of them zero), so most scores tie
		// and the order is decided by the ids.
		{"ternary", 4, func() []float32 {
			v := make([]float32, 4)
			for i := range v {
				v[i] = float32(r.IntN(3) - 1)
			}
			return v
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := NewExact(tt.dim)
			for id := range uint64(n) {
				e.Add(id, tt.vec())
			}
			for id := uint64(0); id < n; id += 13 { // rows out of id order
				e.Remove(id)
			}
			for id := uint64(5); id < n; id += 29 {
				e.Add(id, tt.vec())
			}
			queries := [][]float32{make([]float32, tt.dim)} // the zero query: every score ties at 0
			for range 20 {
				queries = append(queries, tt.vec())
			}
			for name, filter := range randomFilters(r, n) {
				for qi, q := range queries {
					for _, k := range []int{1, 3, 10, 50, n + 10} {
						// Never asking first, Search's choice, and always asking first once k passed.
						for _, askFirst := range []float64{0, askFirstBelow, 2} {
							calls := map[uint64]int{}
							counted := filter
							if filter != nil {
								counted = func(id uint64) bool { calls[id]++; return filter(id) }
							}
							got, want := e.search(q, k, counted, askFirst), searchEager(e, q, k, filter)
							if !sameScored(got, want) {
								t.Fatalf("%s query %d k %d askFirst %g:\n got %v\nwant %v", name, qi, k, askFirst, got, want)
							}
							for id, c := range calls {
								if c > 1 {
									t.Fatalf("%s query %d k %d askFirst %g: filter asked %d times about %d", name, qi, k, askFirst, c, id)
								}
							}
							if name == "pass 1" && k == 10 && qi > 0 && askFirst < 1 && len(calls) > e.Len()/4 {
								t.Errorf("query %d askFirst %g: filter passing all asked about %d of %d vectors for k 10", qi, askFirst, len(calls), e.Len())
							}
						}
					}
				}
			}
		})
	}
}
