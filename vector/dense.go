package vector

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
)

// DefaultGraphThreshold is the number of vectors from which Dense builds an HNSW graph: below
// it a full scan of the exact index is as fast (about 0.4 ms for 10,000 100-d vectors on a
// Raspberry-Pi-class core) and has no build cost.
const DefaultGraphThreshold = 20000

// drainBatch is how many tail ids the drainer lists at a time (see Dense).
const drainBatch = 256

// Dense is the vector index the memory service uses. It holds one copy of each vector:
//
//   - Below the threshold (and for good if a build failed), an Exact index holds every vector
//     and answers every search.
//   - Once the store reaches the threshold, an HNSW graph is built in the background from the
//     exact index, with one core fewer than the machine has (at least one), so that searches,
//     still served by the exact index, keep a core. Adds and removes made during the build go
//     to the exact index and are replayed onto the graph before it takes over.
//   - Once the graph serves searches, the exact index is dropped and the graph holds the
//     vectors. Add then puts a vector in a small exact "tail" and returns; one background
//     goroutine moves the tail's vectors into the graph, one HNSW insertion at a time, and
//     exits when the tail is empty (the next Add starts it again, so there is nothing to
//     close). Search merges the graph's top k with an exact scan of the tail, so a vector is
//     found as soon as Add returns. Flush waits for the tail to empty.
//
// So the switch is invisible to callers except in speed: the graph's answers are approximate
// (an unfiltered search; a selective filter makes HNSW scan every vector exactly).
//
// Dense is safe for concurrent use.
type Dense struct {
	threshold int
	cfg       HNSWConfig
	workers   int    // goroutines that build the graph; 0: buildWorkers() (benchmarks set it)
	collect   func() // called once the graph serves; nil: debug.FreeOSMemory (tests set it)

	mu    sync.Mutex
	exact *Exact // every vector until the graph serves; nil afterwards
	// Searches of the exact index under way, counted under mu while no graph serves: the
	// build waits for them once it has swapped the graph in, so that its collection finds
	// the exact index unused and frees its rows.
	scans    sync.WaitGroup
	graph    *HNSW  // nil until built
	tail     *Exact // once the graph serves: vectors not yet moved into it
	building bool
	failed   bool      // a build failed: searches stay exact
	log      []denseOp // changes made during a build
	built    chan struct{}

	draining bool          // the drainer runs
	drained  chan struct{} // closed when the running drainer finds the tail empty
	// The tail vector the drainer is inserting into the graph, outside mu. If Add or Remove
	// changes it meanwhile, they set cancelled, and the drainer takes it out of the graph again
	// instead of out of the tail; until then searches leave it out of the graph's answers.
	moving    uint64
	isMoving  bool
	cancelled bool
	// The highest id ever put in the graph: a higher one is not in it, so Add and Remove need
	// not ask the graph (and wait for its lock while the drainer inserts). A store's ids grow
	// with each memory, so a new memory's Add never touches the graph.
	graphMax uint64
}

type denseOp struct {
	id     uint64
	vec    []float32 // nil: a removal
	remove bool
}

// NewDense returns an empty index of vectors of length dim (0: fixed by the first Add) that
// builds an HNSW graph configured by cfg once it holds threshold vectors (if threshold is 0,
// DefaultGraphThreshold; if negative, never until SetThreshold: load a store first, then let
// one parallel build index all of it).
func NewDense(dim, threshold int, cfg HNSWConfig) *Dense {
	if threshold == 0 {
		threshold = DefaultGraphThreshold
	}
	return &Dense{exact: NewExact(dim), threshold: threshold, cfg: cfg}
}

// Grow makes room for n more vectors (see Exact.Grow): call it before loading a store of
// known size. It does nothing once the graph serves.
func (d *Dense) Grow(n int) {
	d.mu.Lock()
	e := d.exact
	d.mu.Unlock()
	if e != nil {
		e.Grow(n)
	}
}

// SetThreshold sets the size from which the graph is built (0: DefaultGraphThreshold) and
// starts the build at once when the index has reached it.
func (d *Dense) SetThreshold(n int) {
	if n <= 0 {
		n = DefaultGraphThreshold
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.threshold = n
	if d.graph == nil && !d.building && !d.failed && d.exact.Len() >= n {
		d.startLocked()
	}
}

// Dim is the vectors' length; 0 until fixed.
func (d *Dense) Dim() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph != nil {
		return d.graph.Dim()
	}
	return d.exact.Dim()
}

// Len is the number of vectors.
func (d *Dense) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph == nil {
		return d.exact.Len()
	}
	// The graph's count and whether it holds the vector being moved are read together: the
	// drainer inserts it without d.mu.
	g := d.graph
	g.mu.RLock()
	n := len(g.slotOf)
	if _, in := g.slotOf[d.moving]; d.isMoving && in {
		n-- // counted in the tail too, or in the graph after a Remove
	}
	g.mu.RUnlock()
	return n + d.tail.Len()
}

// Get returns a copy of id's stored vector: normalized, and once the graph holds it, with its
// components rounded to float16 (HNSW.Get).
func (d *Dense) Get(id uint64) ([]float32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph == nil {
		return d.exact.Get(id)
	}
	if v, ok := d.tail.Get(id); ok {
		return v, true
	}
	if d.isMoving && d.cancelled && d.moving == id {
		return nil, false
	}
	return d.graph.Get(id)
}

// Add stores v under id (see Exact.Add), and starts the background build of the graph when the
// index has grown to the threshold. Once the graph serves, v goes to the tail (see Dense) and
// Add returns without touching the graph, unless id was in it: then its old vector is removed.
func (d *Dense) Add(id uint64, v []float32) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph != nil {
		if err := d.tail.Add(id, v); err != nil {
			return err
		}
		d.forgetLocked(id)
		if !d.draining {
			d.draining = true
			d.drained = make(chan struct{})
			go d.drain(d.graph, d.tail, d.drained)
		}
		return nil
	}
	if err := d.exact.Add(id, v); err != nil {
		return err
	}
	switch {
	case d.building:
		d.log = append(d.log, denseOp{id: id, vec: append([]float32(nil), v...)})
	case !d.failed && d.threshold > 0 && d.exact.Len() >= d.threshold:
		d.startLocked()
	}
	return nil
}

// forgetLocked takes id out of the graph, and cancels its move if the drainer is moving it.
func (d *Dense) forgetLocked(id uint64) {
	if d.isMoving && d.moving == id {
		d.cancelled = true
	}
	if id <= d.graphMax && d.graph.has(id) {
		d.graph.Remove(id)
	}
}

// Remove drops id (an unknown id is ignored). A vector in the graph becomes a tombstone (see
// HNSW.Remove).
func (d *Dense) Remove(id uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph != nil {
		d.tail.Remove(id)
		d.forgetLocked(id)
		return
	}
	d.exact.Remove(id)
	if d.building {
		d.log = append(d.log, denseOp{id: id, remove: true})
	}
}

// Search returns the k nearest vectors that pass filter, best first: once the graph serves,
// its top k (HNSW falls back to an exact scan when the filter is selective) merged with an
// exact scan of the tail; before, from the exact index.
func (d *Dense) Search(q []float32, k int, filter Filter) []Scored {
	return d.search(q, k, filter, false)
}

// ExactSearch is Search without the graph's approximation: the k vectors with the highest
// cosine similarity to q that pass filter, best first (ties: higher id first), as Exact.Search
// answers, whatever holds the vectors. Once the graph serves, it scans every vector in it,
// which costs what an Exact search does, and scores the graph's vectors as it stores them,
// rounded to float16 (within 2^-11 of the exact cosine; half.go). Use it where an answer must
// not depend on the graph's search (a similarity threshold), not for ranking.
func (d *Dense) ExactSearch(q []float32, k int, filter Filter) []Scored {
	return d.search(q, k, filter, true)
}

func (d *Dense) search(q []float32, k int, filter Filter, exact bool) []Scored {
	d.mu.Lock()
	e, g, tail := d.exact, d.graph, d.tail
	skip, skipping := d.moving, d.isMoving && d.cancelled
	if g == nil {
		d.scans.Add(1)
	}
	d.mu.Unlock()
	if g == nil {
		found := e.Search(q, k, filter)
		d.scans.Done() // e is no longer used: the build may collect it
		return found
	}
	// The tail first: the drainer inserts a vector into the graph before it takes it out of
	// the tail, so a vector moved between the two searches is found in the graph.
	fromTail := tail.Search(q, k, filter)
	var fromGraph []Scored
	if exact {
		fromGraph = g.SearchExact(q, k, filter)
	} else {
		fromGraph = g.Search(q, k, filter)
	}
	if len(fromTail) == 0 && !skipping {
		return fromGraph
	}
	return mergeTail(fromGraph, fromTail, k, skip, skipping)
}

// mergeTail merges a graph's and a tail's results, best first, cut to k. An id in both (the
// vector being moved) is kept once, from the tail, which holds the current vector; skip, when
// skipping, is a vector whose move was cancelled and is left out of the graph's results.
func mergeTail(graph, tail []Scored, k int, skip uint64, skipping bool) []Scored {
	inTail := make(map[uint64]bool, len(tail))
	for _, s := range tail {
		inTail[s.ID] = true
	}
	top := newTopK(k)
	for _, s := range tail {
		top.offer(s)
	}
	for _, s := range graph {
		if inTail[s.ID] || (skipping && s.ID == skip) {
			continue
		}
		top.offer(s)
	}
	return top.sorted()
}

// Graph reports whether searches are served by the HNSW graph.
func (d *Dense) Graph() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.graph != nil
}

// Build starts building the graph now, whatever the size (at startup, the service calls it
// when the loaded store is over the threshold), and returns a channel closed when the graph
// serves searches. A build already running or done is not started again.
func (d *Dense) Build() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.graph == nil && !d.building && !d.failed {
		d.startLocked()
	}
	if d.built == nil { // already built before Build was first asked
		d.built = make(chan struct{})
		close(d.built)
	}
	return d.built
}

// Ready returns a channel closed when no build is running: at once when none is, else when the
// running one has finished. Vectors added since may still wait in the tail (see Flush); they
// are searched all the same.
func (d *Dense) Ready() <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.building {
		return d.built
	}
	done := make(chan struct{})
	close(done)
	return done
}

// Flush waits until no build runs and every vector added is in the graph (the tail is empty),
// for tests and benchmarks that measure the graph alone. Without a graph it returns once no
// build runs. Adds made while it waits may keep it waiting.
func (d *Dense) Flush() {
	<-d.Ready()
	for {
		d.mu.Lock()
		ch, running := d.drained, d.draining
		d.mu.Unlock()
		if !running {
			return
		}
		<-ch
	}
}

// Building reports whether a build is running.
func (d *Dense) Building() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.building
}

func (d *Dense) startLocked() {
	d.building = true
	d.built = make(chan struct{})
	go d.build()
}

// buildWorkers is how many goroutines build the graph: one fewer than the cores Go uses, and at
// least one, so that searches, served by the exact index meanwhile, keep a core.
func buildWorkers() int { return max(1, runtime.GOMAXPROCS(0)-1) }

// build copies the exact index's vectors into a new graph (holding the exact index's read lock
// only for the copy, so no snapshot outlives it), links them with buildWorkers goroutines,
// replays what changed meanwhile, swaps the graph in and drops the exact index.
func (d *Dense) build() {
	d.mu.Lock()
	e := d.exact
	d.mu.Unlock()
	cfg := d.cfg
	cfg.Dim = e.Dim()
	g := NewHNSW(cfg)
	g.mu.Lock() // no one else sees g before it serves, so this lock waits for no one
	e.mu.RLock()
	vecs := make([][]float32, len(e.ids))
	for i := range vecs {
		vecs[i] = e.data[i*e.dim : (i+1)*e.dim]
	}
	slots, err := g.stageLocked(e.ids, vecs)
	e.mu.RUnlock()
	vecs, e = nil, nil // the collection after the swap frees the exact index's rows
	if err == nil {
		workers := d.workers
		if workers <= 0 {
			workers = buildWorkers()
		}
		g.linkLocked(slots, workers)
	}
	g.mu.Unlock()
	for {
		d.mu.Lock()
		ops := d.log
		d.log = nil
		if len(ops) == 0 || err != nil {
			if err == nil {
				d.graph = g
				d.tail = NewExact(g.Dim())
				d.exact = nil
				g.mu.RLock()
				for _, id := range g.ids { // tombstones and free slots included: an upper bound
					d.graphMax = max(d.graphMax, id)
				}
				g.mu.RUnlock()
			} else {
				d.failed = true
			}
			d.building = false
			close(d.built)
			d.mu.Unlock()
			if err == nil {
				// The exact index's rows (4·dim bytes a vector) are garbage now: return them,
				// and what the build itself used, to the operating system at once, so that a
				// serving process's RSS falls to what it holds rather than staying at its peak.
				// A search that took the exact index before the swap still holds it while it
				// scans: the collection waits for those scans, or it would find the rows still
				// in use and leave them to the next collection, which a busy server may not
				// reach for minutes (TestDense_BuildWaitsForScans). No scan starts after the
				// swap, so the count only falls.
				d.scans.Wait()
				if d.collect != nil {
					d.collect()
				} else {
					debug.FreeOSMemory()
				}
			}
			return
		}
		d.mu.Unlock()
		for _, op := range ops {
			if op.remove {
				g.Remove(op.id)
			} else if aerr := g.Add(op.id, op.vec); aerr != nil {
				err = fmt.Errorf("replay onto graph: %w", aerr)
			}
		}
	}
}

// drain moves the tail's vectors into the graph, one insertion at a time so that searches,
// which share the graph's read lock, wait for at most one, and exits when the tail is empty
// (closing drained). Add and Remove hold d.mu while they change the tail; the drainer holds it
// only between insertions.
func (d *Dense) drain(g *HNSW, tail *Exact, drained chan struct{}) {
	for {
		ids := tail.someIDs(drainBatch)
		if len(ids) == 0 {
			d.mu.Lock()
			if tail.Len() > 0 { // an Add came in between
				d.mu.Unlock()
				continue
			}
			d.draining = false
			close(drained)
			d.mu.Unlock()
			return
		}
		for _, id := range ids {
			d.mu.Lock()
			v, ok := tail.Get(id)
			if !ok {
				d.mu.Unlock()
				continue
			}
			d.moving, d.isMoving, d.cancelled = id, true, false
			d.graphMax = max(d.graphMax, id)
			d.mu.Unlock()
			// Cannot fail: the tail checked v's length and values, and the graph has the
			// tail's dimension.
			err := g.Add(id, v)
			d.mu.Lock()
			if d.cancelled || err != nil {
				g.Remove(id)
			} else {
				tail.Remove(id)
			}
			d.isMoving, d.cancelled = false, false
			if err != nil { // leave the rest in the tail, searched exactly, until the next Add
				d.draining = false
				close(drained)
				d.mu.Unlock()
				return
			}
			d.mu.Unlock()
		}
	}
}
