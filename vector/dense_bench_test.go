package vector

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/ownsona/ownsona/internal/anndata"
)

// The Dense benchmarks compare Dense with the way it worked before, in the same run, on a
// clustered set (default 100k×100, as a store of 100k memories with the builtin embedder):
//
//	go test ./vector -run '^$' -bench 'Dense' -benchtime 1x -timeout 30m
//
// "old" is Dense as it was: an exact index holding every vector and a graph holding them again,
// each Add inserting into both at once (denseOld), built with every core.
var denseBenchSize = flag.String("dense.set", "100000x100", "size (NxDIM) of the clustered set the Dense benchmarks run on")

func denseBenchSet(b *testing.B) anndata.Set {
	b.Helper()
	var n, dim int
	if _, err := fmt.Sscanf(*denseBenchSize, "%dx%d", &n, &dim); err != nil {
		b.Fatalf("-dense.set: %q is not NxDIM", *denseBenchSize)
	}
	return anndata.Clustered(1, n, 1000, dim, 100)
}

// denseOld is Dense's steady state before the exact copy was dropped and inserts were moved
// off the writer's path: both indexes hold every vector, and Add inserts into the graph before
// it returns.
type denseOld struct {
	exact *Exact
	graph *HNSW
}

func newDenseOld(b *testing.B, set anndata.Set, cfg HNSWConfig) *denseOld {
	b.Helper()
	d := &denseOld{exact: NewExact(set.Dim), graph: NewHNSW(cfg)}
	ids := make([]uint64, len(set.Base))
	for i, v := range set.Base {
		ids[i] = uint64(i)
		d.exact.Add(uint64(i), v)
	}
	if err := d.graph.Build(ids, set.Base, runtime.GOMAXPROCS(0)); err != nil {
		b.Fatal(err)
	}
	return d
}

func (d *denseOld) Add(id uint64, v []float32) error {
	if err := d.exact.Add(id, v); err != nil {
		return err
	}
	return d.graph.Add(id, v)
}

// newDenseServing returns a Dense whose graph serves set, built as Dense builds it.
func newDenseServing(b *testing.B, set anndata.Set, cfg HNSWConfig) *Dense {
	b.Helper()
	d := NewDense(set.Dim, -1, cfg)
	d.Grow(len(set.Base))
	for i, v := range set.Base {
		if err := d.Add(uint64(i), v); err != nil {
			b.Fatal(err)
		}
	}
	<-d.Build()
	d.Flush()
	if !d.Graph() {
		b.Fatal("no graph after the build")
	}
	return d
}

// BenchmarkDense_Add measures Add once the graph serves: "old" inserts into the graph before
// returning; "new" puts the vector in the tail and returns, and ns/add-drained is the time per
// Add until the tail has drained into the graph (the same insertions, in the background).
func BenchmarkDense_Add(b *testing.B) {
	set := denseBenchSet(b)
	cfg := HNSWConfig{Seed: 1}
	next := uint64(len(set.Base))
	vec := func(i int) []float32 { return set.Queries[i%len(set.Queries)] }
	b.Run(set.Name+"/old", func(b *testing.B) {
		d := newDenseOld(b, set, cfg)
		i := 0
		for b.Loop() {
			if err := d.Add(next, vec(i)); err != nil {
				b.Fatal(err)
			}
			next++
			i++
		}
	})
	b.Run(set.Name+"/new", func(b *testing.B) {
		d := newDenseServing(b, set, cfg)
		i := 0
		start := time.Now()
		for b.Loop() {
			if err := d.Add(next, vec(i)); err != nil {
				b.Fatal(err)
			}
			next++
			i++
		}
		d.Flush()
		b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/add-drained")
	})
}

// BenchmarkDense_Memory reports the live heap that holding the set takes in steady state
// (after a GC, the graph serving), per vector, and the heap the runtime keeps from the OS
// (HeapSys − HeapReleased, what RSS follows), for the old layout (exact index plus graph) and
// the new (the graph alone, FreeOSMemory after the build). EfConstruction is 40 to build
// faster: the memory does not depend on it.
func BenchmarkDense_Memory(b *testing.B) {
	set := denseBenchSet(b)
	cfg := HNSWConfig{Seed: 1, EfConstruction: 40}
	for _, impl := range []struct {
		name  string
		build func() any
	}{
		{"old", func() any { return newDenseOld(b, set, cfg) }},
		{"new", func() any { return newDenseServing(b, set, cfg) }},
	} {
		b.Run(set.Name+"/"+impl.name, func(b *testing.B) {
			var live, kept float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				d := impl.build()
				runtime.GC()
				runtime.ReadMemStats(&after)
				live = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(set.Base))
				kept = (float64(after.HeapSys-after.HeapReleased) - float64(before.HeapSys-before.HeapReleased)) / (1 << 20)
				runtime.KeepAlive(d)
			}
			b.ReportMetric(live, "B/vector")
			b.ReportMetric(kept, "MiB-kept")
		})
	}
}

// BenchmarkDense_SearchDuringBuild loads the set below the threshold, starts the graph's build
// and searches the exact index (k 50, a filter looking up records as app/memory's does) until
// the build ends, reporting the searches' latency percentiles and the build's time: "old"
// builds with every core, "new" with one fewer (Dense's default).
func BenchmarkDense_SearchDuringBuild(b *testing.B) {
	set := denseBenchSet(b)
	var calls int
	filter := benchFilters(len(set.Base), &calls)[0].filter // records, all passing
	for _, impl := range []struct {
		name    string
		workers int
	}{{"old", runtime.GOMAXPROCS(0)}, {"new", buildWorkers()}} {
		b.Run(fmt.Sprintf("%s/%s/workers=%d", set.Name, impl.name, impl.workers), func(b *testing.B) {
			var lat []time.Duration
			var build time.Duration
			for b.Loop() {
				d := NewDense(set.Dim, -1, HNSWConfig{Seed: 1})
				d.workers = impl.workers
				d.Grow(len(set.Base))
				for i, v := range set.Base {
					d.Add(uint64(i), v)
				}
				start := time.Now()
				done := d.Build()
				for i := 0; ; i++ {
					select {
					case <-done:
					default:
						t := time.Now()
						d.Search(set.Queries[i%len(set.Queries)], 50, filter)
						lat = append(lat, time.Since(t))
						continue
					}
					break
				}
				build += time.Since(start)
			}
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "ms-p95")
			}
			b.ReportMetric(build.Seconds()/float64(b.N), "s-build")
		})
	}
}

// addOld is Exact.Add as it was before it normalized into the row: a normalized copy per
// vector, appended. It is the baseline of BenchmarkDense_Load.
func addOld(e *Exact, id uint64, v []float32) {
	nv := normalized(v)
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.rows[id]; ok {
		copy(e.data[r*e.dim:(r+1)*e.dim], nv)
		return
	}
	e.rows[id] = len(e.ids)
	e.ids = append(e.ids, id)
	e.data = append(e.data, nv...)
}

// BenchmarkDense_Load adds the set's vectors to an empty index below the threshold (where
// Dense.Add is Exact.Add), as a store loads: "old" as Exact.Add was, growing the rows as it
// appends and allocating a normalized copy per vector; "grow" calls Grow first; "new" calls
// Grow and normalizes into the rows.
func BenchmarkDense_Load(b *testing.B) {
	set := denseBenchSet(b)
	for _, impl := range []struct {
		name string
		grow bool
		add  func(e *Exact, id uint64, v []float32)
	}{
		{"old", false, addOld},
		{"grow", true, addOld},
		{"new", true, func(e *Exact, id uint64, v []float32) { e.Add(id, v) }},
	} {
		b.Run(set.Name+"/"+impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d := NewDense(set.Dim, -1, HNSWConfig{})
				if impl.grow {
					d.Grow(len(set.Base))
				}
				for i, v := range set.Base {
					impl.add(d.exact, uint64(i), v)
				}
			}
		})
	}
}

// BenchmarkDense_SearchTail measures an unfiltered search (k 10) once the graph serves, with an
// empty tail and with 1,000 vectors waiting in it (the merge's cost). The drainer is kept from
// running by holding the tail as the drainer would see it: the vectors go straight into the
// tail.
func BenchmarkDense_SearchTail(b *testing.B) {
	set := denseBenchSet(b)
	d := newDenseServing(b, set, HNSWConfig{Seed: 1, EfConstruction: 40})
	r := rand.New(rand.NewPCG(1, 1))
	for _, tail := range []int{0, 1000} {
		b.Run(fmt.Sprintf("%s/tail=%d", set.Name, tail), func(b *testing.B) {
			d.tail = NewExact(set.Dim)
			for i := range tail {
				d.tail.Add(uint64(len(set.Base)+i), set.Queries[r.IntN(len(set.Queries))])
			}
			i := 0
			for b.Loop() {
				d.Search(set.Queries[i%len(set.Queries)], 10, nil)
				i++
			}
		})
	}
}
