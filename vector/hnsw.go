// This file implements Hierarchical Navigable Small World graphs as described by Yu. A. Malkov
// and D. A. Yashunin, "Efficient and robust approximate nearest neighbor search using
// Hierarchical Navigable Small World graphs", IEEE TPAMI 42(4), 2018 (arXiv:1603.09320):
// insertion is Algorithm 1, the layer search Algorithm 2, neighbour selection the heuristic of
// Algorithm 4 and the query Algorithm 5. Where the paper leaves a choice open, it follows
// hnswlib, the authors' C++ implementation.

package vector

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

const (
	hnswDefaultM              = 16
	hnswDefaultEfConstruction = 200
	hnswDefaultEfSearch       = 72  // 64 before the vectors were halves: see half.go
	hnswTopLevel              = 16  // levels are capped here (with M 16, reaching it is a 1 in 2^64 event)
	hnswRepairFraction        = 0.2 // Remove repairs the graph when tombstones exceed this share of its nodes
	hnswSample                = 256 // vectors a filtered search samples to estimate the filter's selectivity
)

// HNSWConfig configures an HNSW index. Every field has a default, so the zero value is a
// usable configuration.
type HNSWConfig struct {
	// Dim is the vectors' length. If zero, the first Add (or Build) fixes it.
	Dim int
	// M is how many links a node keeps on each layer above the ground layer; the ground layer
	// keeps 2·M. More links raise recall and memory. If zero, 16; at least 2.
	M int
	// EfConstruction is how many candidates an insertion weighs when choosing a new node's
	// links. Larger builds a better graph, more slowly. If zero, 200; at least M.
	EfConstruction int
	// EfSearch is how many candidates a search keeps by default (SearchEf sets it per search);
	// larger raises recall and latency. A search keeps at least k. If zero, 72.
	EfSearch int
	// Seed seeds the random draw of each node's level. The same Config given the same Adds in
	// the same order builds the same graph. (A Build with several workers draws the same
	// levels, but its links depend on the workers' timing.)
	Seed uint64
}

// HNSW is an approximate cosine index: a Hierarchical Navigable Small World graph (Malkov &
// Yashunin) over L2-normalized vectors, searched by dot product. It answers what Exact answers,
// in time that grows with the logarithm of the number of vectors rather than linearly, at the
// price of sometimes missing a true neighbour: at the default EfSearch, recall@10 is 0.98 on
// 100k clustered 256-d vectors (0.12 ms a query) and 0.90 on 5k uniformly random 64-d ones,
// the hardest case; EfSearch trades latency for recall. The zero value is not usable; call
// NewHNSW.
//
// HNSW is safe for concurrent use: searches share a read lock, Add, Remove and Build take the
// write lock. Build holds it for the whole build, so at startup serve searches from an Exact
// index until Build returns.
//
// Removal leaves a tombstone: the node keeps routing searches but is never returned. When
// tombstones exceed a fifth of the graph's nodes, the Remove that crosses the line repairs the
// graph (every link to a tombstone is replaced by the best of that tombstone's neighbours,
// chosen with the same heuristic as insertion), and their slots are reused by later Adds.
//
// Storage: the vectors are rows of 16-bit floats (half.go: 2 bytes a component, where hnswlib
// keeps 4; every score is the cosine with the rounded vector, within 2^-11 of the exact one);
// each node's ground-layer links are a fixed block of 2·M+1 int32 (a count, then the links);
// both live in pages (see pageLocked). The few nodes on upper layers keep M+1 int32 per upper
// layer, in a map: a slice header for every slot would cost 24 bytes where one in 16 has
// any. With M 16 that is 2·dim + 132 bytes per vector, plus about 40 for the id, level, flags,
// upper layers and the id map (375 bytes measured at 100-d; about 690 at 256-d, against
// hnswlib's 1,221); Stats reports it. Each search running at once also borrows 8 bytes per
// vector of pooled scratch space (visited marks, filter results).
type HNSW struct {
	mu       sync.RWMutex
	dim      int
	m, m0    int     // links per node above the ground layer, and on it
	efC, efS int     // EfConstruction, EfSearch
	levelMul float64 // 1/ln(M): the paper's m_L
	rng      *rand.Rand

	// The vectors and the ground layer's links are kept in pages of hnswPage slots, so that
	// the graph grows without copying (at 100k × 100-d, a copy was 50 MB, and append's slack
	// 12 MB that stayed).
	vecs   [][]uint16        // slot s is row(s): vecs[s/hnswPage][(s%hnswPage)*dim:], normalized, in halves
	links0 [][]int32         // slot s's ground layer is list(s, 0): a count, then m0 slots
	upper  map[int32][]int32 // slot s's layer l ≥ 1 is upper[s][(l-1)*(m+1):]: a count, then m slots
	levels []uint8           // slot → its top layer
	ids    []uint64          // slot → id
	dead   []bool            // slot → tombstoned or free
	slotOf map[uint64]int32  // live id → slot
	tombs  []int32           // tombstoned slots: still linked, awaiting repair
	free   []int32           // repaired slots, unlinked, for reuse
	entry  int32             // the entry point; -1 when the graph is empty
	top    int               // the entry point's level

	// Set only while Build inserts with several workers: a lock per slot guarding its links,
	// and one guarding entry and top.
	locks   []sync.Mutex
	entryMu sync.Mutex

	writer  *hnswScratch // the writer's scratch space, used under the write lock
	unit    []float32    // a vector being stored, normalized before it is rounded to halves (write lock)
	scratch sync.Pool    // *hnswScratch for searches
}

// NewHNSW returns an empty index configured by cfg.
func NewHNSW(cfg HNSWConfig) *HNSW {
	m := cfg.M
	if m <= 0 {
		m = hnswDefaultM
	}
	m = max(m, 2)
	efC := cfg.EfConstruction
	if efC <= 0 {
		efC = hnswDefaultEfConstruction
	}
	efS := cfg.EfSearch
	if efS <= 0 {
		efS = hnswDefaultEfSearch
	}
	return &HNSW{
		dim:      max(cfg.Dim, 0),
		m:        m,
		m0:       2 * m,
		efC:      max(efC, m),
		efS:      efS,
		levelMul: 1 / math.Log(float64(m)),
		rng:      rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15)),
		slotOf:   map[uint64]int32{},
		upper:    map[int32][]int32{},
		entry:    -1,
	}
}

// Dim is the vectors' length; 0 until fixed.
func (h *HNSW) Dim() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.dim
}

// Len is the number of vectors that searches can return (tombstones are not counted).
func (h *HNSW) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.slotOf)
}

// HNSWStats describes an index's graph and memory.
type HNSWStats struct {
	Len        int // vectors that searches can return
	Tombstones int // removed vectors still in the graph, awaiting repair
	Free       int // repaired slots awaiting reuse
	Layers     int // layers of the graph; 0 when empty
	// Bytes is the memory the index holds: vectors, links, ids, levels, flags, and the id map
	// (estimated at 24 bytes an entry). BytesPerVector is Bytes / Len.
	Bytes          int64
	BytesPerVector float64
}

// Stats reports the graph's shape and memory.
func (h *HNSW) Stats() HNSWStats {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := HNSWStats{Len: len(h.slotOf), Tombstones: len(h.tombs), Free: len(h.free)}
	if h.entry >= 0 {
		st.Layers = h.top + 1
	}
	b := 24*int64(cap(h.vecs)+cap(h.links0)) + 40*int64(len(h.upper)) +
		8*int64(cap(h.ids)) + int64(cap(h.levels)) + int64(cap(h.dead)) +
		4*int64(cap(h.tombs)+cap(h.free)) + 24*int64(len(h.slotOf))
	for _, u := range h.upper {
		b += 4 * int64(cap(u))
	}
	for i := range h.vecs {
		b += 2*int64(cap(h.vecs[i])) + 4*int64(cap(h.links0[i]))
	}
	st.Bytes = b
	if st.Len > 0 {
		st.BytesPerVector = float64(b) / float64(st.Len)
	}
	return st
}

// Add stores a normalized copy of v under id, replacing whatever id held (the old node
// becomes a tombstone). It returns an error wrapping ErrDimension when len(v) differs from
// Dim (and v is not the first vector of an index created with dimension 0), and an error when
// v holds a NaN or an infinity. An all-zero vector is stored as it is and scores 0 against
// everything.
func (h *HNSW) Add(id uint64, v []float32) error {
	if err := checkFinite(id, v); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.fixDimLocked(id, len(v)); err != nil {
		return err
	}
	if old, ok := h.slotOf[id]; ok {
		h.tombstoneLocked(old)
	}
	slot := h.allocLocked(id, h.randomLevel())
	h.setRowLocked(slot, v)
	h.ensureWriter()
	h.insert(h.writer, slot)
	h.maybeRepairLocked()
	return nil
}

// Remove drops id (an unknown id is ignored). Its node stays in the graph as a tombstone that
// searches route through but never return, until the tombstones exceed a fifth of the graph's
// nodes: then this call repairs the graph using every core, which costs about a tenth of a
// full Build (measured on 100k×100: 1.3 s to repair 20k tombstones with 2 cores, against 12 s
// to build; recall@10 at efSearch 64 was 0.995 before and 0.996 after).
func (h *HNSW) Remove(id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	slot, ok := h.slotOf[id]
	if !ok {
		return
	}
	h.tombstoneLocked(slot)
	h.maybeRepairLocked()
}

// Build adds every vecs[i] under ids[i], as Add would one by one (an id already present is
// replaced; an id repeated in ids keeps its last vector), inserting with workers goroutines
// (if workers <= 0, one per CPU). It checks every vector before changing anything and returns
// the error Add would return for the first bad one. It holds the write lock throughout.
func (h *HNSW) Build(ids []uint64, vecs [][]float32, workers int) error {
	if len(ids) != len(vecs) {
		return fmt.Errorf("build: %d ids but %d vectors", len(ids), len(vecs))
	}
	for i, v := range vecs {
		if err := checkFinite(ids[i], v); err != nil {
			return err
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	slots, err := h.stageLocked(ids, vecs)
	if err != nil {
		return err
	}
	h.linkLocked(slots, workers)
	return nil
}

// stageLocked is the first half of Build: it checks the vectors' lengths, gives each id its
// slot and copies its normalized vector in, and returns the slots to link (linkLocked). Once
// it returns, the graph keeps nothing of vecs, so a caller may pass views of storage that it
// changes afterwards. The write lock must be held.
func (h *HNSW) stageLocked(ids []uint64, vecs [][]float32) ([]int32, error) {
	dim := h.dim
	if dim == 0 && len(h.ids) == 0 && len(vecs) > 0 {
		dim = len(vecs[0])
	}
	for i, v := range vecs {
		if len(v) != dim {
			return nil, fmt.Errorf("add vector %d: %w: got %d, want %d", ids[i], ErrDimension, len(v), dim)
		}
	}
	if len(vecs) == 0 {
		return nil, nil
	}
	h.dim = dim

	// The last occurrence of each id wins; ids already present become tombstones.
	last := make(map[uint64]int, len(ids))
	for i, id := range ids {
		last[id] = i
	}
	if grow := len(last) - len(h.free); grow > 0 { // one allocation each, without append's slack
		h.ids = slices.Grow(h.ids, grow)
		h.levels = slices.Grow(h.levels, grow)
		h.dead = slices.Grow(h.dead, grow)
	}
	slots := make([]int32, 0, len(last))
	for i, id := range ids {
		if last[id] != i {
			continue
		}
		if old, ok := h.slotOf[id]; ok {
			h.tombstoneLocked(old)
		}
		slot := h.allocLocked(id, h.randomLevel())
		h.setRowLocked(slot, vecs[i])
		slots = append(slots, slot)
	}
	return slots, nil
}

// linkLocked is the second half of Build: it inserts the staged slots into the graph with
// workers goroutines (at least one). The write lock must be held.
func (h *HNSW) linkLocked(slots []int32, workers int) {
	if len(slots) == 0 {
		return
	}
	h.ensureWriter()
	if h.entry < 0 { // the first node needs no search, and gives the others an entry point
		h.insert(h.writer, slots[0])
		slots = slots[1:]
	}
	workers = min(workers, len(slots)/64+1) // a few insertions are not worth the goroutines
	if workers <= 1 {
		for _, s := range slots {
			h.insert(h.writer, s)
		}
	} else {
		h.locks = make([]sync.Mutex, len(h.ids))
		var next atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				sc := newHNSWScratch(len(h.ids))
				for {
					i := int(next.Add(1)) - 1
					if i >= len(slots) {
						return
					}
					h.insert(sc, slots[i])
				}
			})
		}
		wg.Wait()
		h.locks = nil
	}
	h.maybeRepairLocked()
}

// Get returns id's vector as the graph stores it: normalized, each component rounded to the
// nearest float16 (half.go).
func (h *HNSW) Get(id uint64) ([]float32, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	slot, ok := h.slotOf[id]
	if !ok {
		return nil, false
	}
	v := make([]float32, h.dim)
	fromHalves(v, h.row(slot))
	return v, true
}

// has reports whether searches can return id.
func (h *HNSW) has(id uint64) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	_, ok := h.slotOf[id]
	return ok
}

// SearchExact returns what Exact.Search would over the vectors as the graph stores them (rounded
// to float16): a scan of every live vector, asking filter as Exact does. It is for answers that
// must not be approximate (a near-duplicate threshold), at the cost of a full scan.
func (h *HNSW) SearchExact(q []float32, k int, filter Filter) []Scored {
	if k <= 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(q) != h.dim || h.dim == 0 || len(h.slotOf) == 0 {
		return nil
	}
	sc := h.getScratch()
	defer h.scratch.Put(sc)
	nq := sc.query[:h.dim]
	normalizeInto(nq, q)
	if filter == nil {
		filter = func(uint64) bool { return true }
	}
	sc.newFilterEpoch()
	return h.scan(sc, nq, k, filter)
}

// Search returns the k vectors with (approximately) the highest cosine similarity to q that
// pass filter, best first (ties: higher id first), searching with EfSearch candidates. It
// returns nil when k <= 0 or len(q) differs from Dim.
//
// With a filter, the search keeps ef candidates that pass it, exploring on through those that
// do not, so it looks at about 1/s times as many vectors for a filter that passes a share s of
// them. When a sample of the index says that a full scan would be cheaper (a selective
// filter), or when the graph yields fewer than k results, it scans every vector exactly as
// Exact does. So a filter costs recall nothing: a filtered search finds what an unfiltered
// search over only the passing vectors would. The filter is called at most once per vector:
// about a sample of up to 256 (the estimate), and about the vectors that would enter the kept
// candidates at that point (the graph search walks on through the others without asking) or,
// in a scan, as Exact.Search asks it.
func (h *HNSW) Search(q []float32, k int, filter Filter) []Scored {
	return h.SearchEf(q, k, 0, filter)
}

// SearchEf is Search keeping ef candidates (if ef <= 0, EfSearch; at least k).
func (h *HNSW) SearchEf(q []float32, k, ef int, filter Filter) []Scored {
	if k <= 0 {
		return nil
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	if len(q) != h.dim || h.dim == 0 || len(h.slotOf) == 0 {
		return nil
	}
	if ef <= 0 {
		ef = h.efS
	}
	ef = max(ef, k)
	sc := h.getScratch()
	defer h.scratch.Put(sc)
	nq := sc.query[:h.dim]
	normalizeInto(nq, q)

	if filter != nil {
		sc.newFilterEpoch()
		if h.scanIsCheaper(sc, ef, filter) {
			return h.scan(sc, nq, k, filter)
		}
	}
	h.searchGraph(sc, nq, ef, filter)
	if filter != nil && len(sc.res) < k {
		return h.scan(sc, nq, k, filter)
	}
	res := sc.res
	slices.SortFunc(res, func(a, b hnswCand) int {
		return compareBest(Scored{h.ids[a.slot], a.sim}, Scored{h.ids[b.slot], b.sim})
	})
	out := make([]Scored, min(k, len(res)))
	for i := range out {
		out[i] = Scored{ID: h.ids[res[i].slot], Score: res[i].sim}
	}
	return out
}

// searchGraph is Algorithm 5: a greedy descent through the upper layers, then a search of
// the ground layer keeping ef candidates, which it leaves in sc.res. Unlike the paper, the
// descent searches layer 1 keeping hnswUpperEf candidates rather than one, and enters the
// ground layer from all of them: on 100k×100 clustered vectors this raised recall@10 at
// efSearch 16 from 0.780 to 0.792 for 2% more time.
func (h *HNSW) searchGraph(sc *hnswScratch, q []float32, ef int, filter Filter) {
	const hnswUpperEf = 4
	ep := h.entry
	epSim := dotHalf(q, h.row(ep))
	for lc := h.top; lc > 1; lc-- {
		ep, epSim = h.greedy(sc, q, ep, epSim, lc)
	}
	sc.newEpoch()
	sc.cand, sc.res = sc.cand[:0], sc.res[:0]
	sc.visited[ep] = sc.epoch
	sc.cand.push(hnswCand{epSim, ep})
	sc.res.push(hnswCand{epSim, ep})
	if h.top >= 1 {
		h.searchLayer(sc, q, 1, hnswUpperEf, nil)
	}
	sc.seeds = append(sc.seeds[:0], sc.res...)

	sc.newEpoch()
	sc.cand, sc.res = sc.cand[:0], sc.res[:0]
	for _, c := range sc.seeds {
		sc.visited[c.slot] = sc.epoch
		sc.cand.push(c)
		if h.eligible(sc, c.slot, filter) {
			sc.res.push(c)
		}
	}
	h.searchLayer(sc, q, 0, ef, filter)
}

// scanIsCheaper estimates the share s of live vectors that pass filter from a sample, and
// reports whether scanning them all (a filter call per vector and s·n dot products) costs
// less than the graph search (about hnswDotsPerEf·ef/s dot products). Measured on 100k×256
// at efSearch 64, the graph serves a filter passing 10% in 0.57 ms and the scan one passing
// 5% in 1.3 ms and 1% in 0.43 ms: the scan's dot products cost about twice the graph's,
// whose rows are fetched ahead.
func (h *HNSW) scanIsCheaper(sc *hnswScratch, ef int, filter Filter) bool {
	const hnswDotsPerEf = 16 // measured: a ground-layer search computes 4–20 dot products per unit of ef
	n, live := len(h.ids), len(h.slotOf)
	step := max(1, n/hnswSample)
	seen, passed := 0, 0
	for s := 0; s < n && seen < hnswSample; s += step {
		if h.dead[s] {
			continue
		}
		seen++
		if h.passes(sc, int32(s), filter) {
			passed++
		}
	}
	if passed == 0 {
		return true
	}
	share := float64(passed) / float64(seen)
	scan := 2*share*float64(live) + float64(live)/8 // a filter call costs about an eighth of a dot product
	graph := hnswDotsPerEf * float64(ef) / share
	return scan <= graph
}

// scan is the exact search over every live vector that passes filter (never nil), asking it
// as Exact.Search does: first, until k passed; then, if fewer than the share askFirstBelow of
// the vectors before passed, first again for the rest, else only about a vector that would
// enter the top k.
func (h *HNSW) scan(sc *hnswScratch, q []float32, k int, filter Filter) []Scored {
	top := newTopK(min(k, len(h.slotOf)))
	s, live := 0, 0
	for ; s < len(h.ids) && len(top.items) < top.k; s++ {
		if h.dead[s] {
			continue
		}
		live++
		if h.passes(sc, int32(s), filter) {
			top.offer(Scored{ID: h.ids[s], Score: dotHalf(q, h.row(int32(s)))})
		}
	}
	if float64(top.k) < askFirstBelow*float64(live) {
		for ; s < len(h.ids); s++ {
			if !h.dead[s] && h.passes(sc, int32(s), filter) {
				top.offer(Scored{ID: h.ids[s], Score: dotHalf(q, h.row(int32(s)))})
			}
		}
		return top.sorted()
	}
	for ; s < len(h.ids); s++ {
		if h.dead[s] {
			continue
		}
		c := Scored{ID: h.ids[s], Score: dotHalf(q, h.row(int32(s)))}
		if !top.wants(c) || !h.passes(sc, int32(s), filter) {
			continue
		}
		top.offer(c)
	}
	return top.sorted()
}

// eligible reports whether slot may be a result: live, and passing filter.
func (h *HNSW) eligible(sc *hnswScratch, slot int32, filter Filter) bool {
	return !h.dead[slot] && (filter == nil || h.passes(sc, slot, filter))
}

// passes reports filter(ids[slot]), calling filter at most once per slot and search.
func (h *HNSW) passes(sc *hnswScratch, slot int32, filter Filter) bool {
	if m := sc.memo[slot]; m>>1 == sc.fepoch {
		return m&1 == 1
	}
	ok := filter(h.ids[slot])
	m := sc.fepoch << 1
	if ok {
		m |= 1
	}
	sc.memo[slot] = m
	return ok
}

// greedy walks layer lc from ep to the node nearest q that it can reach by steps that get
// nearer (a search keeping one candidate).
func (h *HNSW) greedy(sc *hnswScratch, q []float32, ep int32, epSim float32, lc int) (int32, float32) {
	for changed := true; changed; {
		changed = false
		for _, e := range h.neighbors(sc, ep, lc) {
			if s := dotHalf(q, h.row(e)); s > epSim {
				ep, epSim, changed = e, s, true
			}
		}
	}
	return ep, epSim
}

// searchLayer is Algorithm 2 on layer lc: from the entry points in sc.cand (with the eligible
// ones also in sc.res, and all of them marked visited), it keeps in sc.res the ef eligible
// nodes nearest q that it finds. Ineligible nodes (tombstones, and those filter rejects) are
// explored but not kept, so the search goes on until it has ef eligible nodes.
func (h *HNSW) searchLayer(sc *hnswScratch, q []float32, lc, ef int, filter Filter) {
	visited, epoch, rs := sc.visited, sc.epoch, h.rows()
	for len(sc.cand) > 0 {
		c := sc.cand.pop()
		if len(sc.res) >= ef && c.sim < sc.res[0].sim {
			break
		}
		batch := sc.batch[:0]
		for _, e := range h.neighbors(sc, c.slot, lc) {
			if visited[e] != epoch {
				visited[e] = epoch
				batch = append(batch, e)
			}
		}
		sc.batch = batch
		// Touch every cache line of the vectors about to be compared (64 bytes, 32 halves),
		// so that their loads from memory overlap instead of stalling one dot product after
		// another: the search is bound by memory latency, and Go has no prefetch
		// instruction. This took a third off a query's time on 100k×256 vectors.
		var t uint16
		for _, e := range batch {
			row := rs.at(e)
			for j := 0; j < len(row); j += 32 {
				t += row[j]
			}
			t += row[len(row)-1]
		}
		sc.touched += t
		for _, e := range batch {
			s := dotHalf(q, rs.at(e))
			if len(sc.res) < ef || s > sc.res[0].sim {
				sc.cand.push(hnswCand{s, e})
				if h.eligible(sc, e, filter) {
					sc.res.push(hnswCand{s, e})
					if len(sc.res) > ef {
						sc.res.pop()
					}
				}
			}
		}
	}
}

// insert is Algorithm 1 for the node in slot, whose vector, id and level are set.
func (h *HNSW) insert(sc *hnswScratch, slot int32) {
	sc.ensure(len(h.ids), h.dim, h.m0)
	q := sc.self[:h.dim]
	fromHalves(q, h.row(slot))
	level := int(h.levels[slot])
	ep, top := h.entryPoint()
	if ep < 0 {
		h.entry, h.top = slot, level
		return
	}
	epSim := dotHalf(q, h.row(ep))
	for lc := top; lc > level; lc-- {
		ep, epSim = h.greedy(sc, q, ep, epSim, lc)
	}
	sc.seeds = append(sc.seeds[:0], hnswCand{epSim, ep})
	for lc := min(level, top); lc >= 0; lc-- {
		sc.newEpoch()
		sc.visited[slot] = sc.epoch
		sc.cand, sc.res = sc.cand[:0], sc.res[:0]
		for _, c := range sc.seeds {
			sc.visited[c.slot] = sc.epoch
			sc.cand.push(c)
			if !h.dead[c.slot] {
				sc.res.push(c)
				if len(sc.res) > h.efC {
					sc.res.pop()
				}
			}
		}
		h.searchLayer(sc, q, lc, h.efC, nil)
		if len(sc.res) == 0 {
			continue // only tombstones nearby: keep routing through the same seeds
		}
		w := append(sc.w[:0], sc.res...)
		slices.SortFunc(w, byNearest)
		sc.w = w
		sc.sel = h.selectNeighbors(sc, sc.sel[:0], w, h.m, false)
		h.setLinks(slot, lc, sc.sel)
		for _, e := range sc.sel {
			h.link(sc, e.slot, hnswCand{e.sim, slot}, lc)
		}
		sc.seeds = append(sc.seeds[:0], w...) // the paper's ep ← W: all of W enters the next layer
	}
	if level > top {
		h.raiseEntry(slot, level)
	}
}

// selectNeighbors is Algorithm 4 (without extending the candidates): from cands, nearest
// first, it keeps a candidate only if it is nearer to the base node than to every candidate
// kept so far, up to m. With keepPruned it then tops up to m with the nearest of the rest.
// It appends the chosen to sel and returns it.
func (h *HNSW) selectNeighbors(sc *hnswScratch, sel, cands []hnswCand, m int, keepPruned bool) []hnswCand {
	if len(cands) < m {
		return append(sel, cands...)
	}
	pruned := sc.pruned[:0]
	rs, vc := h.rows(), sc.other[:h.dim]
	for _, c := range cands {
		if len(sel) == m {
			break
		}
		if len(sel) > 0 {
			fromHalves(vc, rs.at(c.slot))
		}
		good := true
		for _, r := range sel {
			if dotHalf(vc, rs.at(r.slot)) > c.sim {
				good = false
				break
			}
		}
		if good {
			sel = append(sel, c)
		} else if keepPruned {
			pruned = append(pruned, c)
		}
	}
	if keepPruned {
		for _, c := range pruned {
			if len(sel) == m {
				break
			}
			sel = append(sel, c)
		}
	}
	sc.pruned = pruned
	return sel
}

// link adds c to the links of node at layer lc; when they are full, it chooses among them
// and c with the heuristic (dropping tombstones first).
func (h *HNSW) link(sc *hnswScratch, node int32, c hnswCand, lc int) {
	if h.locks != nil {
		h.locks[node].Lock()
		defer h.locks[node].Unlock()
	}
	lst := h.list(node, lc)
	mmax := len(lst) - 1
	if n := int(lst[0]); n < mmax {
		lst[1+n] = c.slot
		lst[0]++
		return
	}
	rs, vn := h.rows(), sc.other[:h.dim]
	fromHalves(vn, rs.at(node))
	cands := append(sc.shrink[:0], c)
	for _, e := range lst[1:] {
		if !h.dead[e] {
			cands = append(cands, hnswCand{dotHalf(vn, rs.at(e)), e})
		}
	}
	slices.SortFunc(cands, byNearest)
	sc.shrink = cands
	sc.shrunk = h.selectNeighbors(sc, sc.shrunk[:0], cands, mmax, false)
	lst[0] = int32(len(sc.shrunk))
	for i, e := range sc.shrunk {
		lst[1+i] = e.slot
	}
}

// setLinks replaces slot's links at layer lc with sel.
func (h *HNSW) setLinks(slot int32, lc int, sel []hnswCand) {
	if h.locks != nil {
		h.locks[slot].Lock()
		defer h.locks[slot].Unlock()
	}
	lst := h.list(slot, lc)
	lst[0] = int32(len(sel))
	for i, e := range sel {
		lst[1+i] = e.slot
	}
}

// neighbors returns slot's links at layer lc: the stored slice, or, while several workers
// build, a copy taken under the slot's lock.
func (h *HNSW) neighbors(sc *hnswScratch, slot int32, lc int) []int32 {
	lst := h.list(slot, lc)
	if h.locks == nil {
		return lst[1 : 1+lst[0]]
	}
	h.locks[slot].Lock()
	n := copy(sc.buf, lst[1:1+lst[0]])
	h.locks[slot].Unlock()
	return sc.buf[:n]
}

// list is slot's link block at layer lc: the count, then the capacity for links.
func (h *HNSW) list(slot int32, lc int) []int32 {
	if lc == 0 {
		off := int(slot&(hnswPage-1)) * (h.m0 + 1)
		return h.links0[slot>>hnswPageShift][off : off+h.m0+1]
	}
	off := (lc - 1) * (h.m + 1)
	return h.upper[slot][off : off+h.m+1]
}

func (h *HNSW) row(slot int32) []uint16 { return h.rows().at(slot) }

// setRowLocked stores v, normalized, as slot's row. The write lock must be held.
func (h *HNSW) setRowLocked(slot int32, v []float32) {
	if len(h.unit) < h.dim {
		h.unit = make([]float32, h.dim)
	}
	normalizeInto(h.unit[:h.dim], v)
	toHalves(h.row(slot), h.unit[:h.dim])
}

// rows is what row reads, for loops to hold in locals: the compiler would load h's fields
// again at every use, since the loops store to memory.
type rows struct {
	vecs [][]uint16
	dim  int
}

func (h *HNSW) rows() rows { return rows{h.vecs, h.dim} }

func (r rows) at(slot int32) []uint16 {
	off := int(slot&(hnswPage-1)) * r.dim
	return r.vecs[slot>>hnswPageShift][off : off+r.dim]
}

// hnswPage is how many slots a page holds: a constant, so that finding a slot's page costs a
// shift and a mask, not a variable shift. A page of vectors is 400 KB at 100-d, 6 MB at
// 1,536-d (a graph exists from 20,000 vectors on, so at most a page of it is slack).
const (
	hnswPageShift = 10
	hnswPage      = 1 << hnswPageShift
)

// pageLocked adds pages until slot has one. The write lock must be held.
func (h *HNSW) pageLocked(slot int32) {
	for int(slot>>hnswPageShift) >= len(h.vecs) {
		h.vecs = append(h.vecs, make([]uint16, h.dim*hnswPage))
		h.links0 = append(h.links0, make([]int32, (h.m0+1)*hnswPage))
	}
}

func (h *HNSW) entryPoint() (int32, int) {
	if h.locks != nil {
		h.entryMu.Lock()
		defer h.entryMu.Unlock()
	}
	return h.entry, h.top
}

func (h *HNSW) raiseEntry(slot int32, level int) {
	if h.locks != nil {
		h.entryMu.Lock()
		defer h.entryMu.Unlock()
	}
	if level > h.top || h.entry < 0 {
		h.entry, h.top = slot, level
	}
}

// randomLevel draws a level with P(level ≥ l) = M^-l.
func (h *HNSW) randomLevel() int {
	l := int(-math.Log(1-h.rng.Float64()) * h.levelMul)
	return min(l, hnswTopLevel)
}

func (h *HNSW) fixDimLocked(id uint64, n int) error {
	if h.dim == 0 && len(h.ids) == 0 && n > 0 {
		h.dim = n
	}
	if n != h.dim {
		return fmt.Errorf("add vector %d: %w: got %d, want %d", id, ErrDimension, n, h.dim)
	}
	return nil
}

// allocLocked gives id a slot (a free one if any) with empty links at level levels, and
// returns it; the caller writes the vector.
func (h *HNSW) allocLocked(id uint64, level int) int32 {
	var slot int32
	if n := len(h.free); n > 0 {
		slot = h.free[n-1]
		h.free = h.free[:n-1]
	} else {
		slot = int32(len(h.ids))
		h.ids = append(h.ids, 0)
		h.levels = append(h.levels, 0)
		h.dead = append(h.dead, false)
		h.pageLocked(slot)
	}
	h.ids[slot] = id
	h.levels[slot] = uint8(level)
	h.dead[slot] = false
	h.list(slot, 0)[0] = 0
	if level == 0 {
		delete(h.upper, slot)
	} else {
		h.upper[slot] = make([]int32, level*(h.m+1)) // counts all zero
	}
	h.slotOf[id] = slot
	return slot
}

func (h *HNSW) tombstoneLocked(slot int32) {
	h.dead[slot] = true
	delete(h.slotOf, h.ids[slot])
	h.tombs = append(h.tombs, slot)
}

func (h *HNSW) maybeRepairLocked() {
	if n := len(h.tombs); n > 0 && float64(n) > hnswRepairFraction*float64(n+len(h.slotOf)) {
		h.repairLocked()
	}
}

// repairLocked unlinks every tombstone: each live node that links to one, on any layer,
// chooses its links again from its live neighbours and the live neighbours of its tombstoned
// ones (the heuristic, topped up with the nearest so that it keeps as many links). Nodes are
// repaired in parallel: each worker writes only its own nodes' links and reads only the
// tombstones' links, which do not change. Then the tombstones' slots are freed.
func (h *HNSW) repairLocked() {
	workers := runtime.GOMAXPROCS(0)
	var next atomic.Int64
	var wg sync.WaitGroup
	const chunk = 256
	for range workers {
		wg.Go(func() {
			sc := newHNSWScratch(len(h.ids))
			sc.ensure(len(h.ids), h.dim, h.m0)
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= len(h.ids) {
					return
				}
				for s := start; s < min(start+chunk, len(h.ids)); s++ {
					if h.dead[s] {
						continue
					}
					for lc := 0; lc <= int(h.levels[s]); lc++ {
						h.repairList(sc, int32(s), lc)
					}
				}
			}
		})
	}
	wg.Wait()

	if h.entry >= 0 && h.dead[h.entry] {
		h.entry, h.top = -1, 0
		for s, lvl := range h.levels {
			if !h.dead[s] && (h.entry < 0 || int(lvl) > h.top) {
				h.entry, h.top = int32(s), int(lvl)
			}
		}
	}
	for _, s := range h.tombs {
		h.list(s, 0)[0] = 0
		delete(h.upper, s)
		h.ids[s] = 0
	}
	h.free = append(h.free, h.tombs...)
	h.tombs = h.tombs[:0]
}

// repairList replaces the tombstones among slot's links at layer lc, if it has any.
func (h *HNSW) repairList(sc *hnswScratch, slot int32, lc int) {
	lst := h.list(slot, lc)
	links := lst[1 : 1+lst[0]]
	if !slices.ContainsFunc(links, func(e int32) bool { return h.dead[e] }) {
		return
	}
	sc.newEpoch()
	sc.visited[slot] = sc.epoch
	vs := sc.other[:h.dim]
	fromHalves(vs, h.row(slot))
	cands := sc.w[:0]
	consider := func(e int32) {
		if h.dead[e] || sc.visited[e] == sc.epoch {
			return
		}
		sc.visited[e] = sc.epoch
		cands = append(cands, hnswCand{dotHalf(vs, h.row(e)), e})
	}
	for _, e := range links {
		consider(e)
	}
	for _, d := range links {
		if h.dead[d] {
			dl := h.list(d, lc)
			for _, e := range dl[1 : 1+dl[0]] {
				consider(e)
			}
		}
	}
	slices.SortFunc(cands, byNearest)
	sc.w = cands
	sc.sel = h.selectNeighbors(sc, sc.sel[:0], cands, len(lst)-1, true)
	lst[0] = int32(len(sc.sel))
	for i, e := range sc.sel {
		lst[1+i] = e.slot
	}
}

func (h *HNSW) ensureWriter() {
	if h.writer == nil {
		h.writer = newHNSWScratch(len(h.ids))
	}
}

func (h *HNSW) getScratch() *hnswScratch {
	sc, _ := h.scratch.Get().(*hnswScratch)
	if sc == nil {
		sc = newHNSWScratch(len(h.ids))
	}
	sc.ensure(len(h.ids), h.dim, h.m0)
	return sc
}

// hnswCand is a node and its similarity to the vector being searched for or linked.
type hnswCand struct {
	sim  float32
	slot int32
}

func byNearest(a, b hnswCand) int {
	switch {
	case a.sim > b.sim:
		return -1
	case a.sim < b.sim:
		return 1
	}
	return 0
}

// hnswScratch is one search's or one inserting worker's working memory, reused so that the
// search loop allocates nothing: visited marks and filter results stamped with a counter
// (so that they need no clearing between searches), and the candidate heaps.
type hnswScratch struct {
	visited []uint32 // slot → epoch of the search that visited it
	epoch   uint32
	memo    []uint32 // slot → fepoch<<1 | filter result
	fepoch  uint32
	query   []float32
	self    []float32 // the vector of the node being inserted, read from its halves
	other   []float32 // the node whose links are being chosen, read from its halves
	cand    candHeap  // to explore, nearest on top
	res     resHeap   // kept, farthest on top
	seeds   []hnswCand
	w       []hnswCand
	sel     []hnswCand
	pruned  []hnswCand
	shrink  []hnswCand
	shrunk  []hnswCand
	buf     []int32
	batch   []int32 // a node's unvisited neighbours
	touched uint16  // the sum of touched halves, kept so that the compiler keeps the loads
}

func newHNSWScratch(n int) *hnswScratch {
	return &hnswScratch{visited: make([]uint32, n+n/4+16)}
}

// ensure sizes the scratch for n slots of dim-long vectors with up to m0 links.
func (sc *hnswScratch) ensure(n, dim, m0 int) {
	if len(sc.visited) < n {
		sc.visited = make([]uint32, n+n/4)
		sc.memo = nil
		sc.epoch, sc.fepoch = 0, 0
	}
	if len(sc.memo) < len(sc.visited) {
		sc.memo = make([]uint32, len(sc.visited))
		sc.fepoch = 0
	}
	if cap(sc.query) < dim {
		sc.query = make([]float32, dim)
		sc.self = make([]float32, dim)
		sc.other = make([]float32, dim)
	}
	if len(sc.buf) < m0 {
		sc.buf = make([]int32, m0)
	}
}

func (sc *hnswScratch) newEpoch() {
	sc.epoch++
	if sc.epoch == 0 { // wrapped: old marks could collide
		clear(sc.visited)
		sc.epoch = 1
	}
}

func (sc *hnswScratch) newFilterEpoch() {
	sc.fepoch++
	if sc.fepoch >= 1<<31 {
		clear(sc.memo)
		sc.fepoch = 1
	}
}

// candHeap is a max-heap by similarity: the nearest candidate on top.
type candHeap []hnswCand

func (hp *candHeap) push(c hnswCand) {
	h := append(*hp, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].sim >= h[i].sim {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	*hp = h
}

func (hp *candHeap) pop() hnswCand {
	h := *hp
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		b := i
		if l := 2*i + 1; l < n && h[l].sim > h[b].sim {
			b = l
		}
		if r := 2*i + 2; r < n && h[r].sim > h[b].sim {
			b = r
		}
		if b == i {
			break
		}
		h[i], h[b] = h[b], h[i]
		i = b
	}
	*hp = h
	return top
}

// resHeap is a min-heap by similarity: the farthest kept node on top.
type resHeap []hnswCand

func (hp *resHeap) push(c hnswCand) {
	h := append(*hp, c)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].sim <= h[i].sim {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	*hp = h
}

func (hp *resHeap) pop() hnswCand {
	h := *hp
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		w := i
		if l := 2*i + 1; l < n && h[l].sim < h[w].sim {
			w = l
		}
		if r := 2*i + 2; r < n && h[r].sim < h[w].sim {
			w = r
		}
		if w == i {
			break
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
	*hp = h
	return top
}

// checkFinite refuses a vector holding a NaN or an infinity, as Exact.Add does.
func checkFinite(id uint64, v []float32) error {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("add vector %d: not a finite vector", id)
		}
	}
	return nil
}

// normalizeInto writes v scaled to unit length into dst (zeros for an all-zero or non-finite
// v), computing exactly what normalized does, so that HNSW and Exact score alike.
func normalizeInto(dst, v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		clear(dst)
		return
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
}
