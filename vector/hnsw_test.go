package vector

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/internal/anndata"
)

// MustNewHNSW returns an index of set's base vectors under ids 0, 1, … added one by one, and
// the exact index of the same vectors.
func MustNewHNSW(tb testing.TB, cfg HNSWConfig, set anndata.Set) (*HNSW, *Exact) {
	tb.Helper()
	h, e := NewHNSW(cfg), NewExact(set.Dim)
	for i, v := range set.Base {
		if err := h.Add(uint64(i), v); err != nil {
			tb.Fatal(err)
		}
		if err := e.Add(uint64(i), v); err != nil {
			tb.Fatal(err)
		}
	}
	if got, want := h.Len(), len(set.Base); got != want {
		tb.Fatalf("Len = %d, want %d", got, want)
	}
	return h, e
}

// recall is the share of exact's k nearest (passing filter) that h finds for each query.
func recall(tb testing.TB, h *HNSW, exact *Exact, queries [][]float32, k, ef int, filter Filter) float64 {
	tb.Helper()
	hits, total := 0, 0
	for _, q := range queries {
		want := exact.Search(q, k, filter)
		got := h.SearchEf(q, k, ef, filter)
		checkRanked(tb, got, len(want))
		for _, g := range got {
			if slices.ContainsFunc(want, func(w Scored) bool { return w.ID == g.ID }) {
				hits++
			}
		}
		total += len(want)
	}
	if total == 0 {
		return 1
	}
	return float64(hits) / float64(total)
}

// halfErr bounds how far a score the graph computes from its float16 components (half.go) can
// be from the exact cosine: each component of a unit vector is rounded by at most 2^-11 of
// itself, which moves its dot product with a unit query by at most 2^-11 (Cauchy–Schwarz);
// the rest is float32's rounding.
const halfErr = 1.0/2048 + 1e-5

func nearHalf(a, b float32) bool { return math.Abs(float64(a-b)) <= halfErr }

// sameUpToHalves reports whether got, the graph's answer, is one that exact float32 search
// (want) permits once the vectors are rounded to float16: as many results, at each rank a
// score within halfErr of want's (rounding moves every score by at most halfErr, so the k-th
// best by at most that too), and each result's score within halfErr of its exact cosine.
func sameUpToHalves(got, want []Scored, cosine func(id uint64) float32) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !nearHalf(got[i].Score, want[i].Score) || !nearHalf(got[i].Score, cosine(got[i].ID)) {
			return false
		}
	}
	return true
}

// exactCosine returns the exact cosine of q and the vector e holds under an id.
func exactCosine(e *Exact, q []float32) func(uint64) float32 {
	return func(id uint64) float32 {
		v, _ := e.Get(id)
		return ExactCosine(q, v)
	}
}

// checkRanked fails unless results holds n distinct ids, best first.
func checkRanked(tb testing.TB, results []Scored, n int) {
	tb.Helper()
	if len(results) != n {
		tb.Fatalf("got %d results, want %d", len(results), n)
	}
	seen := map[uint64]bool{}
	for i, r := range results {
		if seen[r.ID] {
			tb.Fatalf("id %d returned twice: %v", r.ID, results)
		}
		seen[r.ID] = true
		if i > 0 && better(r, results[i-1]) {
			tb.Fatalf("results not sorted best first at %d: %v", i, results)
		}
	}
}

// The test graphs: 5,000 vectors of 64 dimensions, random and clustered, built once with
// efConstruction 64 so that the tests stay quick under the race detector. (At this size
// a smaller efConstruction costs no recall: at efSearch 128 random gives 0.979 with 50 and
// 0.978 with 200, clustered 1.000 with either.)
var (
	randomSet    = anndata.Random(1, 5000, 100, 64)
	clusteredSet = anndata.Clustered(1, 5000, 100, 64, 50)
	testConfig   = HNSWConfig{Seed: 1, EfConstruction: 64}

	graphsMu sync.Mutex
	graphs   = map[string]*testGraph{}
)

type testGraph struct {
	h *HNSW
	e *Exact
}

// sharedGraph returns the graph of set built on first use, by Add one vector at a time
// (workers 0) or by Build with workers. Tests must not change it.
func sharedGraph(tb testing.TB, set anndata.Set, workers int) (*HNSW, *Exact) {
	tb.Helper()
	graphsMu.Lock()
	defer graphsMu.Unlock()
	key := fmt.Sprint(set.Name, workers)
	g := graphs[key]
	if g == nil {
		var h *HNSW
		var e *Exact
		if workers == 0 {
			h, e = MustNewHNSW(tb, testConfig, set)
		} else {
			h, e = NewHNSW(testConfig), NewExact(set.Dim)
			keys := make([]uint64, len(set.Base))
			for i, v := range set.Base {
				keys[i] = uint64(i)
				e.Add(keys[i], v)
			}
			if err := h.Build(keys, set.Base, workers); err != nil {
				tb.Fatal(err)
			}
			if got, want := h.Len(), len(keys); got != want {
				tb.Fatalf("Len = %d, want %d", got, want)
			}
		}
		g = &testGraph{h, e}
		graphs[key] = g
	}
	return g.h, g.e
}

func TestHNSW_Search(t *testing.T) {
	// Floors that a correct graph clears with a margin (measured: 0.979 and 1.000) and a
	// broken one misses by far (without back links, recall falls under 0.5).
	tests := []struct {
		set     anndata.Set
		workers int // 0: built by Add, else by Build
		ef      int
		floor   float64
	}{
		{randomSet, 0, 128, 0.95}, // nothing is near anything: the hard case
		{clusteredSet, 0, 0, 0.95},
	}
	for _, tt := range tests {
		t.Run(tt.set.Name, func(t *testing.T) {
			h, e := sharedGraph(t, tt.set, tt.workers)
			if got := recall(t, h, e, tt.set.Queries, 10, tt.ef, nil); got < tt.floor {
				t.Errorf("recall@10 = %.3f, want ≥ %.2f", got, tt.floor)
			}
			// Scores are the cosines with the stored float16 vectors: within halfErr of the
			// exact ones.
			for _, r := range h.Search(tt.set.Queries[0], 10, nil) {
				if want := Cosine(tt.set.Queries[0], tt.set.Base[r.ID]); !nearHalf(r.Score, want) {
					t.Errorf("score of %d = %v, want the cosine %v", r.ID, r.Score, want)
				}
			}
		})
	}
	t.Run("ties break by higher id first", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{})
		for id := uint64(1); id <= 4; id++ {
			h.Add(id, []float32{1, 1})
		}
		h.Add(5, []float32{-1, 0})
		got := h.Search([]float32{3, 3}, 3, nil)
		if want := []uint64{4, 3, 2}; !slices.Equal(ids(got), want) {
			t.Errorf("Search = %v, want ids %v", got, want)
		}
	})
	t.Run("bad queries", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{Dim: 3})
		if got := h.Search([]float32{1, 2, 3}, 5, nil); got != nil {
			t.Errorf("empty index = %v, want nil", got)
		}
		h.Add(1, []float32{1, 2, 3})
		if got := h.Search([]float32{1, 2}, 5, nil); got != nil {
			t.Errorf("wrong-length query = %v, want nil", got)
		}
		if got := h.Search([]float32{1, 2, 3}, 0, nil); got != nil {
			t.Errorf("k 0 = %v, want nil", got)
		}
		if got := h.Search([]float32{0, 0, 0}, 5, nil); len(got) != 1 || got[0].Score != 0 {
			t.Errorf("zero query = %v, want [{1 0}]", got)
		}
	})
	t.Run("same seed and adds give the same graph", func(t *testing.T) {
		set := anndata.Random(2, 1000, 20, 16)
		a, _ := MustNewHNSW(t, HNSWConfig{Seed: 7}, set)
		b, _ := MustNewHNSW(t, HNSWConfig{Seed: 7}, set)
		if !slices.EqualFunc(a.links0, b.links0, slices.Equal) || a.Stats() != b.Stats() {
			t.Fatalf("graphs differ: %+v, %+v", a.Stats(), b.Stats())
		}
		for _, q := range set.Queries {
			if got, want := a.SearchEf(q, 10, 16, nil), b.SearchEf(q, 10, 16, nil); !slices.Equal(got, want) {
				t.Fatalf("Search = %v and %v", got, want)
			}
		}
	})
}

// TestHNSW_SearchFilter checks that a filter costs no recall: at efSearch 256 filtered
// searches give exactly what a scan of the graph's vectors gives (SearchExact), and what Exact
// gives up to their rounding to float16, whatever the selectivity (the broad filters through
// the graph, the selective ones through the scan), and at the default efSearch recall stays
// at least that of unfiltered search.
func TestHNSW_SearchFilter(t *testing.T) {
	set := clusteredSet
	h, e := sharedGraph(t, set, 0) // added one by one, so the same graph every run
	// A filter uncorrelated with the vectors that passes about one id in every.
	hash := func(id uint64) uint64 { return (id * 0x9e3779b97f4a7c15) >> 40 }
	for _, every := range []uint64{1, 2, 10, 100, 1000} {
		t.Run(fmt.Sprintf("selectivity %g%%", 100/float64(every)), func(t *testing.T) {
			pass := func(id uint64) bool { return hash(id)%every == 0 }
			for i, q := range set.Queries {
				calls := map[uint64]int{}
				got := h.SearchEf(q, 10, 256, func(id uint64) bool { calls[id]++; return pass(id) })
				if want := h.SearchExact(q, 10, pass); !slices.Equal(got, want) {
					t.Fatalf("query %d:\n got %v\nwant %v (SearchExact)", i, got, want)
				}
				if want := e.Search(q, 10, pass); !sameUpToHalves(got, want, exactCosine(e, q)) {
					t.Fatalf("query %d:\n got %v\nwant %v (Exact)", i, got, want)
				}
				for id, n := range calls {
					if n > 1 {
						t.Fatalf("query %d: filter called %d times for id %d", i, n, id)
					}
				}
			}
			if got := recall(t, h, e, set.Queries, 10, 0, pass); got < 0.99 {
				t.Errorf("recall@10 at the default efSearch = %.3f, want ≥ 0.99", got)
			}
		})
	}
	t.Run("rejecting everything", func(t *testing.T) {
		if got := h.Search(set.Queries[0], 10, func(uint64) bool { return false }); got != nil {
			t.Errorf("Search = %v, want nil", got)
		}
	})
}

func TestHNSW_Add(t *testing.T) {
	t.Run("replaces an existing id", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{})
		h.Add(1, []float32{1, 0})
		h.Add(2, []float32{0.6, 0.8})
		h.Add(1, []float32{0, 1})
		got := h.Search([]float32{0, 1}, 5, nil)
		if len(got) != 2 || got[0].ID != 1 || !near(got[0].Score, 1) {
			t.Errorf("Search = %v, want id 1 first with score 1", got)
		}
		if st := h.Stats(); st.Len != 2 || h.Len() != 2 {
			t.Errorf("Len = %d, Stats = %+v, want 2 vectors", h.Len(), st)
		}
	})
	t.Run("dimension mismatch", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{Dim: 3})
		if err := h.Add(1, []float32{1}); !errors.Is(err, ErrDimension) {
			t.Errorf("err = %v, want ErrDimension", err)
		}
		if h.Len() != 0 {
			t.Errorf("Len = %d after a refused Add", h.Len())
		}
	})
	t.Run("first Add fixes a zero dimension", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{})
		if err := h.Add(1, []float32{3, 4}); err != nil {
			t.Fatal(err)
		}
		if got, want := h.Dim(), 2; got != want {
			t.Errorf("Dim = %d, want %d", got, want)
		}
		if err := h.Add(2, []float32{1, 2, 3}); !errors.Is(err, ErrDimension) {
			t.Errorf("err = %v, want ErrDimension", err)
		}
	})
	t.Run("refuses non-finite values", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{})
		for _, v := range [][]float32{{float32(math.NaN()), 1}, {float32(math.Inf(-1)), 0}} {
			if err := h.Add(1, v); err == nil {
				t.Errorf("Add(%v) accepted", v)
			}
		}
		if h.Len() != 0 || h.Dim() != 0 {
			t.Errorf("Len %d, Dim %d after refused Adds", h.Len(), h.Dim())
		}
	})
	t.Run("keeps a normalized copy", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{})
		v := []float32{3, 4}
		h.Add(1, v)
		v[0] = -100
		if got := h.Search([]float32{3, 4}, 1, nil); len(got) != 1 || !nearHalf(got[0].Score, 1) {
			t.Errorf("Search = %v, want [{1 1}]", got)
		}
	})
}

func TestHNSW_Remove(t *testing.T) {
	set := anndata.Clustered(4, 3000, 100, 32, 30)
	h, e := MustNewHNSW(t, testConfig, set)
	removed := map[uint64]bool{}
	remove := func(id uint64) {
		h.Remove(id)
		e.Remove(id)
		removed[id] = true
	}
	check := func(t *testing.T) {
		t.Helper()
		for _, q := range set.Queries {
			for _, r := range h.SearchEf(q, 20, 64, nil) {
				if removed[r.ID] {
					t.Fatalf("Search returned removed id %d", r.ID)
				}
			}
		}
		if got := recall(t, h, e, set.Queries, 10, 64, nil); got < 0.95 {
			t.Errorf("recall@10 = %.3f, want ≥ 0.95", got)
		}
		if got, want := h.Len(), len(set.Base)-len(removed); got != want {
			t.Errorf("Len = %d, want %d", got, want)
		}
	}

	t.Run("tombstones route but are never returned", func(t *testing.T) {
		for id := uint64(0); id < 3000; id += 7 { // 429 of 3000: under the repair threshold
			remove(id)
		}
		remove(uint64(h.ids[h.entry])) // the entry point too
		h.Remove(99999)                // unknown: ignored
		check(t)
		if st := h.Stats(); st.Tombstones != len(removed) {
			t.Errorf("Stats = %+v, want %d tombstones", st, len(removed))
		}
	})
	t.Run("past a fifth the graph is repaired", func(t *testing.T) {
		for id := uint64(1); id < 3000; id += 5 {
			remove(id)
		}
		st := h.Stats()
		if st.Tombstones >= len(removed) || st.Free == 0 {
			t.Errorf("Stats = %+v after %d removals, want a repair", st, len(removed))
		}
		check(t)
	})
	t.Run("re-adding reuses the freed slots", func(t *testing.T) {
		free := h.Stats().Free
		readd := 0
		for id := range removed {
			if readd == 100 {
				break
			}
			v := set.Base[(id*31)%3000] // another vector: the id must be found by its new one
			h.Add(id, v)
			e.Add(id, v)
			delete(removed, id)
			readd++
			got := h.Search(v, 1, func(x uint64) bool { return x == id })
			if len(got) != 1 || got[0].ID != id || !nearHalf(got[0].Score, 1) {
				t.Fatalf("Search for re-added %d = %v", id, got)
			}
		}
		if got, want := h.Stats().Free, max(0, free-readd); got != want {
			t.Errorf("Free = %d, want %d", got, want)
		}
		check(t)
	})
	t.Run("removing everything", func(t *testing.T) {
		for id := range uint64(3000) {
			remove(id)
		}
		if got := h.Search(set.Queries[0], 10, nil); got != nil || h.Len() != 0 {
			t.Errorf("Search = %v, Len = %d on an emptied index", got, h.Len())
		}
		h.Add(5, set.Base[0])
		if got := h.Search(set.Base[0], 10, nil); len(got) != 1 || got[0].ID != 5 {
			t.Errorf("Search after refilling = %v", got)
		}
	})
}

func TestHNSW_Build(t *testing.T) {
	// On random vectors, where recall at efSearch 64 is about 0.89, a worse graph would show.
	seq, e := sharedGraph(t, randomSet, 0)
	par, _ := sharedGraph(t, randomSet, 2)
	rs, rp := recall(t, seq, e, randomSet.Queries, 10, 64, nil), recall(t, par, e, randomSet.Queries, 10, 64, nil)
	if rp < rs-0.03 {
		t.Errorf("recall@10 at efSearch 64: Build with 2 workers %.3f, sequential Add %.3f", rp, rs)
	}
	t.Logf("recall@10 at efSearch 64: Build with 2 workers %.3f, sequential Add %.3f", rp, rs)

	t.Run("replaces ids, and the last of a repeated id wins", func(t *testing.T) {
		h, _ := MustNewHNSW(t, HNSWConfig{}, anndata.Set{Dim: 2, Base: [][]float32{{1, 0}, {0, 1}}})
		err := h.Build([]uint64{1, 2, 2}, [][]float32{{1, 0}, {-1, 0}, {0, -1}}, 2)
		if err != nil {
			t.Fatal(err)
		}
		got := h.Search([]float32{0, -1}, 5, nil)
		if want := []uint64{2, 1, 0}; !slices.Equal(ids(got), want) || !near(got[0].Score, 1) {
			t.Errorf("Search = %v, want ids %v with 2 at score 1", got, want)
		}
		if h.Len() != 3 {
			t.Errorf("Len = %d, want 3", h.Len())
		}
	})
	t.Run("a bad vector changes nothing", func(t *testing.T) {
		h := NewHNSW(HNSWConfig{Dim: 2})
		err := h.Build([]uint64{1, 2}, [][]float32{{1, 0}, {1, 2, 3}}, 2)
		if !errors.Is(err, ErrDimension) || h.Len() != 0 {
			t.Errorf("err = %v, Len = %d; want ErrDimension and 0", err, h.Len())
		}
		if err := h.Build([]uint64{1}, [][]float32{{float32(math.NaN()), 0}}, 2); err == nil {
			t.Error("Build accepted a NaN")
		}
		if err := h.Build([]uint64{1, 2}, [][]float32{{1, 0}}, 2); err == nil {
			t.Error("Build accepted more ids than vectors")
		}
	})
}

// TestHNSW_Concurrent runs searches (some filtered) against one writer that adds, replaces
// and removes, enough to cross the repair threshold; run it with -race.
func TestHNSW_Concurrent(t *testing.T) {
	set := anndata.Clustered(6, 1500, 50, 16, 20)
	h := NewHNSW(HNSWConfig{Seed: 1, M: 8, EfConstruction: 50})
	var wg sync.WaitGroup
	done := make(chan struct{})
	for r := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				var filter Filter
				if r == 1 {
					filter = func(id uint64) bool { return id%3 == 0 }
				}
				got := h.Search(set.Queries[i%len(set.Queries)], 10, filter)
				for j := 1; j < len(got); j++ {
					if better(got[j], got[j-1]) {
						t.Errorf("unsorted results %v", got)
						return
					}
				}
				h.Len()
			}
		})
	}
	live := map[uint64]bool{}
	for i, v := range set.Base {
		h.Add(uint64(i), v)
		live[uint64(i)] = true
		if i%3 == 2 {
			h.Remove(uint64(i - 1))
			delete(live, uint64(i-1))
		}
		if i%10 == 0 {
			h.Add(uint64(i/2), set.Base[(i*7)%len(set.Base)])
			live[uint64(i/2)] = true
		}
	}
	close(done)
	wg.Wait()
	if got, want := h.Len(), len(live); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
}

// TestHNSW_SearchLazyFilter: a filtered search, through the graph or the scan, on the same
// graph for random filters of every share, several k and ef, tombstones and vectors that tie,
// against Exact over the same vectors as the oracle. Every search answers ranked results that
// the filter passes, as many as Exact does, each scored its exact cosine (up to float16,
// halfErr), and asks the filter at most once per vector and never about a removed one. A
// search the scan serves (the filter passes too few for the graph, or fewer than k) answers
// what Exact answers (sameUpToHalves); the graph finds at least 0.95 of Exact's results.
func TestHNSW_SearchLazyFilter(t *testing.T) {
	set := anndata.Random(5, 4000, 30, 16)
	for i := 0; i < len(set.Base); i += 9 { // exact duplicates: scores that tie
		set.Base[i] = set.Base[i/9]
	}
	h, e := MustNewHNSW(t, testConfig, set)
	removed := map[uint64]bool{}
	for id := uint64(0); id < 4000; id += 11 { // tombstones, under the repair threshold
		h.Remove(id)
		e.Remove(id)
		removed[id] = true
	}
	// scans reports whether SearchEf would serve filter by the scan from the start.
	scans := func(filter Filter, k, ef int) bool {
		if ef <= 0 {
			ef = h.efS
		}
		sc := h.getScratch()
		defer h.scratch.Put(sc)
		sc.newFilterEpoch()
		return h.scanIsCheaper(sc, max(ef, k), filter)
	}
	r := rand.New(rand.NewPCG(5, 5))
	queries := append(slices.Clone(set.Queries), set.Base[0], set.Base[9], make([]float32, 16))
	scanned, searched := 0, 0 // filtered searches served by each path
	hits, total := 0, 0       // Exact's results the graph found, of all it answered
	for name, filter := range randomFilters(r, len(set.Base)) {
		for qi, q := range queries {
			cosine := exactCosine(e, q)
			for _, kef := range [][2]int{{1, 0}, {10, 0}, {10, 16}, {10, 200}, {50, 64}, {5000, 0}} {
				k, ef := kef[0], kef[1]
				calls := map[uint64]int{}
				counted := Filter(nil)
				if filter != nil {
					counted = func(id uint64) bool { calls[id]++; return filter(id) }
				}
				got, want := h.SearchEf(q, k, ef, counted), e.Search(q, k, filter)
				where := fmt.Sprintf("%s query %d k %d ef %d", name, qi, k, ef)
				checkRanked(t, got, len(want))
				for _, g := range got {
					if removed[g.ID] || (filter != nil && !filter(g.ID)) || !nearHalf(g.Score, cosine(g.ID)) {
						t.Fatalf("%s: result %v is removed, filtered out, or not scored its cosine %v", where, g, cosine(g.ID))
					}
				}
				for id, c := range calls {
					if c > 1 || removed[id] {
						t.Fatalf("%s: filter asked %d times about %d (removed %v)", where, c, id, removed[id])
					}
				}
				switch {
				case filter == nil:
				case scans(filter, k, ef) || len(want) < k:
					scanned++
					if !sameUpToHalves(got, want, cosine) {
						t.Fatalf("%s, served by the scan:\n got %v\nwant %v", where, got, want)
					}
				default:
					searched++
				}
				for _, g := range got {
					if slices.ContainsFunc(want, func(w Scored) bool { return w.ID == g.ID }) {
						hits++
					}
				}
				total += len(want)
			}
		}
	}
	if scanned == 0 || searched == 0 {
		t.Errorf("%d searches scanned and %d searched the graph, want both paths exercised", scanned, searched)
	}
	if got := float64(hits) / float64(total); got < 0.95 {
		t.Errorf("recall %.3f of Exact's results, want at least 0.95", got)
	}
}

// TestHNSW_SearchExact: the exact scan answers what Exact does over the same vectors, up to
// their rounding to float16 (sameUpToHalves), whatever the filter, after removals; Get returns
// the stored vector: the normalized one, rounded.
func TestHNSW_SearchExact(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const dim, n = 20, 1500
	h, e := NewHNSW(HNSWConfig{Seed: 1}), NewExact(dim)
	for id := range uint64(n) {
		v := randVec(r, dim)
		h.Add(id, v)
		e.Add(id, v)
	}
	for id := uint64(0); id < n; id += 9 {
		h.Remove(id)
		e.Remove(id)
	}
	for name, filter := range randomFilters(r, n) {
		for range 5 {
			q := randVec(r, dim)
			for _, k := range []int{1, 10, 50} {
				if got, want := h.SearchExact(q, k, filter), e.Search(q, k, filter); !sameUpToHalves(got, want, exactCosine(e, q)) {
					t.Fatalf("%s k %d:\n got %v\nwant %v", name, k, got, want)
				}
			}
		}
	}
	for id := range uint64(n) {
		got, ok := h.Get(id)
		want, wantOK := e.Get(id)
		if wantOK {
			halves := make([]uint16, len(want))
			toHalves(halves, want)
			fromHalves(want, halves)
		}
		if ok != wantOK || !slices.Equal(got, want) {
			t.Fatalf("Get(%d) = %v %v, want %v %v", id, got, ok, want, wantOK)
		}
	}
}

// TestHNSW_pages: vectors and ground-layer links live in pages of hnswPage slots; a graph built
// across several pages, then grown by single adds across more,
// with removals and replacements in between, keeps every vector at its slot and links only to
// live slots, and its search finds what an exact scan finds.
func TestHNSW_pages(t *testing.T) {
	const dim = 16
	rng := rand.New(rand.NewPCG(3, 4))
	h := NewHNSW(HNSWConfig{Seed: 9})
	want := map[uint64][]float32{}
	var ids []uint64
	var vecs [][]float32
	for i := range 2500 {
		v := randomUnit(rng, dim)
		ids, vecs = append(ids, uint64(i+1)), append(vecs, v)
		want[uint64(i+1)] = v
	}
	if err := h.Build(ids, vecs, 2); err != nil {
		t.Fatal(err)
	}
	for i := 2500; i < 5600; i++ {
		id := uint64(i + 1)
		if i%9 == 0 { // a replacement of an earlier vector
			id = uint64(i/9 + 1)
		}
		v := randomUnit(rng, dim)
		if err := h.Add(id, v); err != nil {
			t.Fatal(err)
		}
		want[id] = v
		if i%13 == 0 {
			h.Remove(uint64(i - 50))
			delete(want, uint64(i-50))
		}
	}
	if len(h.vecs) < 5 {
		t.Fatalf("%d pages of %d slots, want at least 5", len(h.vecs), hnswPage)
	}
	h.mu.RLock()
	for id, v := range want {
		slot, ok := h.slotOf[id]
		if !ok {
			t.Fatalf("id %d has no slot", id)
		}
		stored := make([]uint16, len(v))
		toHalves(stored, normalized(v))
		if got := h.row(slot); !slices.Equal(got, stored) {
			t.Fatalf("id %d: slot %d holds another vector", id, slot)
		}
	}
	for s := range h.ids {
		if h.dead[s] {
			continue
		}
		for _, e := range h.list(int32(s), 0)[1 : 1+h.list(int32(s), 0)[0]] {
			if int(e) >= len(h.ids) {
				t.Fatalf("slot %d links to slot %d, beyond the %d allocated", s, e, len(h.ids))
			}
		}
	}
	h.mu.RUnlock()
	hits := 0
	for range 50 {
		q := randomUnit(rng, dim)
		exact := h.SearchExact(q, 10, nil)
		got := h.SearchEf(q, 10, 200, nil)
		for _, e := range exact {
			if slices.ContainsFunc(got, func(g Scored) bool { return g.ID == e.ID }) {
				hits++
			}
		}
	}
	if recall := float64(hits) / 500; recall < 0.95 {
		t.Errorf("recall@10 against an exact scan = %.3f, want at least 0.95", recall)
	}
}
