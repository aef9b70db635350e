package vector

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return normalized(v)
}

// TestDense_SwitchesToGraph: below the threshold searches are exact; past it the graph is built
// in the background, changes made during the build reach it, and afterwards searches come from
// the graph with the answers of the exact index.
func TestDense_SwitchesToGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim, n = 32, 3000
	d := NewDense(dim, 1000, HNSWConfig{Seed: 1})
	vecs := map[uint64][]float32{}
	for id := uint64(1); id < 1000; id++ {
		vecs[id] = randomUnit(rng, dim)
		if err := d.Add(id, vecs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if d.Graph() || d.Building() {
		t.Fatal("a graph was started below the threshold")
	}
	var wg sync.WaitGroup
	removed := map[uint64]bool{}
	for id := uint64(1000); id <= n; id++ { // the 1000th vector starts the build
		vecs[id] = randomUnit(rng, dim)
		if err := d.Add(id, vecs[id]); err != nil {
			t.Fatal(err)
		}
		if id%7 == 0 {
			d.Remove(id - 500)
			removed[id-500] = true
		}
		if id%100 == 0 { // searches keep answering during the build
			wg.Add(1)
			go func(q []float32) {
				defer wg.Done()
				if got := d.Search(q, 5, nil); len(got) != 5 {
					t.Errorf("a search during the build returned %d results", len(got))
				}
			}(vecs[id])
		}
	}
	wg.Wait()
	<-d.Build()
	if !d.Graph() {
		t.Fatal("the graph does not serve after the build")
	}
	if d.Len() != n-len(removed) {
		t.Errorf("Len = %d, want %d", d.Len(), n-len(removed))
	}
	hits := 0
	for id, v := range vecs {
		got := d.Search(v, 10, nil)
		for _, s := range got {
			if removed[s.ID] {
				t.Fatalf("removed id %d returned", s.ID)
			}
		}
		if !removed[id] && len(got) > 0 && got[0].ID == id {
			hits++
		}
	}
	if want := (n - len(removed)) * 95 / 100; hits < want {
		t.Errorf("each live vector finds itself first %d times of %d, want at least %d", hits, n-len(removed), want)
	}
}

// newGraphDense returns a Dense whose graph serves n random vectors of length dim, and the
// vectors it holds.
func newGraphDense(tb testing.TB, rng *rand.Rand, dim, n int) (*Dense, map[uint64][]float32) {
	tb.Helper()
	d := NewDense(dim, n, HNSWConfig{Seed: 1})
	vecs := map[uint64][]float32{}
	for id := uint64(1); id <= uint64(n); id++ {
		vecs[id] = randVec(rng, dim)
		if err := d.Add(id, vecs[id]); err != nil {
			tb.Fatal(err)
		}
	}
	<-d.Build()
	if !d.Graph() {
		tb.Fatal("the graph does not serve after the build")
	}
	return d, vecs
}

// oracleOf returns an Exact index of vecs.
func oracleOf(tb testing.TB, dim int, vecs map[uint64][]float32) *Exact {
	tb.Helper()
	e := NewExact(dim)
	for id, v := range vecs {
		if err := e.Add(id, v); err != nil {
			tb.Fatal(err)
		}
	}
	return e
}

// checkDense compares d with the vectors it should hold: Len, Get, and ExactSearch (and Search
// with selective filters, which HNSW answers by an exact scan) against an Exact index of them,
// up to the graph's rounding of its vectors to float16 (sameUpToHalves).
func checkDense(t *testing.T, rng *rand.Rand, d *Dense, dim int, vecs map[uint64][]float32) {
	t.Helper()
	if got, want := d.Len(), len(vecs); got != want {
		t.Errorf("Len = %d, want %d", got, want)
	}
	for id, v := range vecs {
		got, ok := d.Get(id)
		if !ok {
			t.Fatalf("Get(%d) found nothing", id)
		}
		if c := Cosine(got, v); c < 0.9999 {
			t.Fatalf("Get(%d) has cosine %g with the vector added", id, c)
		}
	}
	oracle := oracleOf(t, dim, vecs)
	maxID := uint64(0)
	for id := range vecs {
		maxID = max(maxID, id)
	}
	for name, filter := range randomFilters(rng, int(maxID)+1) {
		for range 5 {
			q := randVec(rng, dim)
			want := oracle.Search(q, 10, filter)
			if got := d.ExactSearch(q, 10, filter); !sameUpToHalves(got, want, exactCosine(oracle, q)) {
				t.Fatalf("ExactSearch, filter %s:\n got %v\nwant %v", name, got, want)
			}
			if name == "pass 0.01" || name == "pass 0" {
				if got := d.Search(q, 10, filter); !sameUpToHalves(got, want, exactCosine(oracle, q)) {
					t.Fatalf("Search, selective filter %s:\n got %v\nwant %v", name, got, want)
				}
			}
		}
	}
}

// TestDense_OneCopy: once the graph serves, the exact index is dropped, and the graph answers
// Len, Get, Dim and exact searches as the exact index did.
func TestDense_OneCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const dim = 16
	d, vecs := newGraphDense(t, rng, dim, 1200)
	d.mu.Lock()
	e := d.exact
	d.mu.Unlock()
	if e != nil {
		t.Errorf("the exact index still holds %d vectors after the build", e.Len())
	}
	if got := d.Dim(); got != dim {
		t.Errorf("Dim = %d, want %d", got, dim)
	}
	checkDense(t, rng, d, dim, vecs)
	if got, want := d.Len(), len(vecs); got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

// TestDense_Tail: once the graph serves, an added vector is found as soon as Add returns,
// reaches the graph in the background, and a replaced or removed one is gone at once, wherever
// it was.
func TestDense_Tail(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim, n = 16, 1000
	d, vecs := newGraphDense(t, rng, dim, n)

	t.Run("found at once", func(t *testing.T) {
		for id := uint64(n + 1); id <= n+50; id++ {
			vecs[id] = randVec(rng, dim)
			if err := d.Add(id, vecs[id]); err != nil {
				t.Fatal(err)
			}
			// Whether the drainer moved it already or not: the graph's unfiltered answers are
			// approximate, so ask exactly, and with a filter that makes the graph scan.
			if got := d.ExactSearch(vecs[id], 1, nil); len(got) != 1 || got[0].ID != id {
				t.Fatalf("ExactSearch right after Add(%d) = %v", id, got)
			}
			only := func(x uint64) bool { return x == id }
			if got := d.Search(vecs[id], 1, only); len(got) != 1 || got[0].ID != id {
				t.Fatalf("Search for it alone right after Add(%d) = %v", id, got)
			}
		}
		checkDense(t, rng, d, dim, vecs)
	})
	t.Run("drained into the graph", func(t *testing.T) {
		d.Flush()
		if got := d.tail.Len(); got != 0 {
			t.Fatalf("tail holds %d vectors after Flush", got)
		}
		for id := uint64(n + 1); id <= n+50; id++ {
			if !d.graph.has(id) {
				t.Fatalf("vector %d is not in the graph after Flush", id)
			}
		}
		checkDense(t, rng, d, dim, vecs)
	})
	t.Run("replaced and removed", func(t *testing.T) {
		for id := uint64(1); id <= 40; id++ { // in the graph
			old := vecs[id]
			if id%2 == 0 {
				vecs[id] = randVec(rng, dim)
				if err := d.Add(id, vecs[id]); err != nil {
					t.Fatal(err)
				}
			} else {
				delete(vecs, id)
				d.Remove(id)
			}
			for _, s := range d.Search(old, 10, nil) {
				if s.ID == id && s.Score > 0.9999 {
					t.Fatalf("the old vector of %d is still found", id)
				}
			}
		}
		for id := uint64(n + 51); id <= n+60; id++ { // in the tail, most likely
			if err := d.Add(id, randVec(rng, dim)); err != nil {
				t.Fatal(err)
			}
			d.Remove(id)
			if _, ok := d.Get(id); ok {
				t.Fatalf("Get(%d) after Remove found it", id)
			}
		}
		checkDense(t, rng, d, dim, vecs)
		d.Flush()
		checkDense(t, rng, d, dim, vecs)
	})
	t.Run("wrong dimension", func(t *testing.T) {
		if err := d.Add(1, make([]float32, dim+1)); !errors.Is(err, ErrDimension) {
			t.Fatalf("Add of a longer vector: %v, want ErrDimension", err)
		}
	})
}

// TestDense_TailConcurrent races adds, replacements, removals and searches against the drainer,
// then checks that Dense holds exactly what was left, before and after the tail drains.
func TestDense_TailConcurrent(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const dim, n, writers = 12, 600, 4
	d, vecs := newGraphDense(t, rng, dim, n)
	var mu sync.Mutex // guards vecs
	var wg sync.WaitGroup
	for w := range writers {
		r := rand.New(rand.NewPCG(uint64(w), 99))
		wg.Go(func() {
			for i := range 300 {
				// Each writer owns the ids ≡ w mod writers, so its own order decides them.
				id := uint64(r.IntN(n+200)/writers*writers + w + 1)
				if r.IntN(3) == 0 {
					d.Remove(id)
					mu.Lock()
					delete(vecs, id)
					mu.Unlock()
				} else {
					v := randVec(r, dim)
					if err := d.Add(id, v); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					vecs[id] = v
					mu.Unlock()
				}
				if i%10 == 0 {
					d.Search(randVec(r, dim), 5, nil)
				}
			}
		})
	}
	wg.Go(func() {
		r := rand.New(rand.NewPCG(77, 1))
		for range 200 {
			d.Search(randVec(r, dim), 10, nil)
			d.Len()
		}
	})
	wg.Wait()
	checkDense(t, rng, d, dim, vecs)
	d.Flush()
	checkDense(t, rng, d, dim, vecs)
}

// TestMergeTail: the tail's version of an id wins over the graph's, a cancelled move is left
// out, and the result is the best k.
func TestMergeTail(t *testing.T) {
	graph := []Scored{{1, 0.9}, {2, 0.8}, {3, 0.7}}
	tail := []Scored{{2, 0.5}, {4, 0.75}}
	got := mergeTail(graph, tail, 3, 1, true)
	want := []Scored{{4, 0.75}, {3, 0.7}, {2, 0.5}}
	if !slices.Equal(got, want) {
		t.Errorf("mergeTail = %v, want %v", got, want)
	}
	got = mergeTail(graph, tail, 2, 0, false)
	want = []Scored{{1, 0.9}, {4, 0.75}}
	if !slices.Equal(got, want) {
		t.Errorf("mergeTail without skip = %v, want %v", got, want)
	}
}

func TestBuildWorkers(t *testing.T) {
	if got, want := buildWorkers(), max(1, runtime.GOMAXPROCS(0)-1); got != want {
		t.Errorf("buildWorkers() = %d, want %d", got, want)
	}
}

// TestExact_Grow: after Grow(n), adding n vectors does not move the rows.
func TestExact_Grow(t *testing.T) {
	const dim, n = 8, 1000
	e := NewExact(dim)
	e.Grow(n)
	if err := e.Add(0, randVec(rand.New(rand.NewPCG(1, 1)), dim)); err != nil {
		t.Fatal(err)
	}
	first := &e.data[0]
	for id := uint64(1); id < n; id++ {
		e.Add(id, make([]float32, dim))
	}
	if &e.data[0] != first {
		t.Error("the rows moved while adding the vectors Grow made room for")
	}
}

// TestDense_BuildWaitsForScans: a search that took the exact index before the graph replaced
// it holds it while it scans; the build's collection, which gives the exact index's rows back
// to the operating system, waits for that scan, or it would find the rows in use and leave
// them to a later collection, which a busy server may not reach for a long time. In a synctest
// bubble, synctest.Wait tells when the build has gone as far as it can.
func TestDense_BuildWaitsForScans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 9))
		const dim = 16
		d := NewDense(dim, 1<<30, HNSWConfig{Seed: 1}) // no build until Build
		for id := uint64(1); id <= 2000; id++ {
			if err := d.Add(id, randomUnit(rng, dim)); err != nil {
				t.Fatal(err)
			}
		}
		var released atomic.Bool
		collected := make(chan bool, 1)
		d.collect = func() { collected <- released.Load() }

		q := randomUnit(rng, dim)
		inScan, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
		var once sync.Once
		go func() {
			defer close(done)
			d.Search(q, 5, func(uint64) bool {
				once.Do(func() { close(inScan); <-release })
				return true
			})
		}()
		<-inScan
		<-d.Build() // the graph serves, while the scan still holds the exact index
		synctest.Wait()
		select {
		case <-collected:
			t.Fatal("the build collected while a scan of the exact index was under way")
		default:
		}
		released.Store(true)
		close(release)
		<-done
		synctest.Wait()
		select {
		case afterScan := <-collected:
			if !afterScan {
				t.Fatal("the build collected before the scan of the exact index ended")
			}
		default:
			t.Fatal("the build did not collect once the scan ended")
		}
	})
}
