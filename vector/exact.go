package vector

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Exact is a flat cosine index: every vector L2-normalized and stored as one row of a single
// contiguous []float32, searched by a full scan of dot products into a bounded heap. It is
// exact, so it serves small stores and is the oracle that approximate indexes are tested
// against. The zero value is not usable; call NewExact.
//
// Exact is safe for concurrent use: searches share a read lock, Add and Remove take the
// write lock.
type Exact struct {
	mu   sync.RWMutex
	dim  int
	data []float32 // row r is data[r*dim : (r+1)*dim]
	ids  []uint64  // row → id
	rows map[uint64]int
}

// NewExact returns an empty index of vectors of length dim. If dim is zero (or negative),
// the first Add fixes it.
func NewExact(dim int) *Exact {
	return &Exact{dim: max(dim, 0), rows: map[uint64]int{}}
}

// Dim is the vectors' length; 0 until fixed.
func (e *Exact) Dim() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.dim
}

// Add stores a normalized copy of v under id, replacing whatever id held. It returns an error
// wrapping ErrDimension when len(v) differs from Dim (and v is not the first vector of an
// index created with dimension 0), and an error when v holds a NaN or an infinity. An all-zero
// vector is stored as it is and scores 0 against everything.
func (e *Exact) Add(id uint64, v []float32) error {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("add vector %d: not a finite vector", id)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dim == 0 && len(e.ids) == 0 && len(v) > 0 {
		e.dim = len(v)
	}
	if len(v) != e.dim {
		return fmt.Errorf("add vector %d: %w: got %d, want %d", id, ErrDimension, len(v), e.dim)
	}
	// The vector is normalized straight into its row (normalizeInto computes what normalized
	// does), so that a load allocates nothing per vector beyond the rows' growth.
	if r, ok := e.rows[id]; ok {
		normalizeInto(e.data[r*e.dim:(r+1)*e.dim], v)
		return nil
	}
	e.rows[id] = len(e.ids)
	e.ids = append(e.ids, id)
	n := len(e.data)
	e.data = slices.Grow(e.data, e.dim)[:n+e.dim]
	normalizeInto(e.data[n:], v)
	return nil
}

// Grow makes room for n more vectors, so that loading a store of known size allocates the
// rows once instead of re-growing one large slice (with its copies and their garbage) as Add
// appends. If the dimension is not fixed yet, it reserves only the ids.
func (e *Exact) Grow(n int) {
	if n <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids = slices.Grow(e.ids, n)
	if e.dim > 0 {
		e.data = slices.Grow(e.data, n*e.dim)
	}
	if len(e.rows) == 0 {
		e.rows = make(map[uint64]int, n)
	}
}

// Remove drops id (an unknown id is ignored). The last row moves into its place, so removal
// costs one row copy.
func (e *Exact) Remove(id uint64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.rows[id]
	if !ok {
		return
	}
	last := len(e.ids) - 1
	if r != last {
		copy(e.data[r*e.dim:(r+1)*e.dim], e.data[last*e.dim:])
		e.ids[r] = e.ids[last]
		e.rows[e.ids[r]] = r
	}
	e.ids = e.ids[:last]
	e.data = e.data[:last*e.dim]
	delete(e.rows, id)
}

// Len is the number of vectors.
func (e *Exact) Len() int {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return len(e.ids)
}

// someIDs returns up to n of the stored ids.
func (e *Exact) someIDs(n int) []uint64 {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return slices.Clone(e.ids[:min(n, len(e.ids))])
}

// Get returns a copy of id's stored (normalized) vector.
func (e *Exact) Get(id uint64) ([]float32, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	r, ok := e.rows[id]
	if !ok {
		return nil, false
	}
	return append([]float32(nil), e.data[r*e.dim:(r+1)*e.dim]...), true
}

// Search returns the k vectors with the highest cosine similarity to q that pass filter, best
// first (ties: higher id first). The filter is applied before the top-k cut, at most once per
// vector, and, once k vectors passed, only about a vector whose score would enter the top k
// of those that passed so far: most vectors score below the k-th and never need it. The
// result is the one a filter asked about every vector first would give. It returns nil when
// k <= 0 or len(q) differs from Dim.
func (e *Exact) Search(q []float32, k int, filter Filter) []Scored {
	return e.search(q, k, filter, askFirstBelow)
}

// askFirstBelow is the share of vectors passing a filter below which a scan asks the filter
// about every vector before scoring it, rather than scoring every vector and asking only about
// those that would enter the top k. A filter that passes few sets a low bar (the k-th best of
// those that passed), so the lazy scan ends up asking about many vectors anyway, in an order
// that defeats the cache, and scores the rejected ones too. Measured on 100k clustered 100-d
// vectors with k 50 and a filter that looks records up in a map as app/memory's does
// (BenchmarkExact_SearchLazyFilter, two runs): at 5% asking first takes 4.6 ms and lazily
// 5.1–5.7 ms; at 10% asking first 5.2–6.4 ms and lazily 4.4–4.7 ms. So the line is drawn
// between them. A filter as cheap as a bit test moves it up (the benchmark's "hash" filter:
// asking first wins 2.7× at 10%, lazily 1.5× at 20%), and so do vectors longer than 100-d,
// whose scores cost more: measure again when either changes.
const askFirstBelow = 0.07

// search is Search asking the filter first, for the vectors after the first k that passed,
// when fewer than the share askFirst of the vectors before them passed (0: never).
//
// Both ways give the same heap after each vector. Until k vectors passed, every vector would
// enter the top k, so every one is asked about either way, and first, so that only those that
// pass are scored. After that, a vector that would not enter the top k changes nothing whether
// it passes or not, so skipping the question, or asking it, for such a vector leaves the heap
// as it was.
func (e *Exact) search(q []float32, k int, filter Filter, askFirst float64) []Scored {
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
	dim, data, ids := e.dim, e.data, e.ids
	r := 0
	if filter != nil {
		for ; r < len(ids) && len(top.items) < top.k; r++ {
			if filter(ids[r]) {
				top.offer(Scored{ID: ids[r], Score: dot(nq, data[r*dim:(r+1)*dim])})
			}
		}
		if float64(top.k) < askFirst*float64(r) { // k of the first r passed: a selective filter
			for ; r < len(ids); r++ {
				if filter(ids[r]) {
					top.offer(Scored{ID: ids[r], Score: dot(nq, data[r*dim:(r+1)*dim])})
				}
			}
			return top.sorted()
		}
	}
	// Once the top k is full, a score below its worst is not wanted, which one comparison
	// tells for most vectors.
	floor := float32(math.Inf(-1))
	if top.k > 0 && len(top.items) == top.k {
		floor = top.items[0].Score
	}
	var block [256]float32 // the scores of up to 256 rows at a time, in one call
	for r < len(ids) {
		scores := block[:min(len(block), len(ids)-r)]
		dotRows(nq, data[r*dim:], scores)
		for i, s := range scores {
			if s < floor {
				continue
			}
			c := Scored{ID: ids[r+i], Score: s}
			if !top.wants(c) || (filter != nil && !filter(c.ID)) {
				continue
			}
			top.offer(c)
			if len(top.items) == top.k {
				floor = top.items[0].Score
			}
		}
		r += len(scores)
	}
	return top.sorted()
}

// dot is the dot product of two equally long vectors (b may be longer; a shorter b panics).
// Every score of the package comes from it, so that a search, a scan and ExactCosine agree bit
// for bit on one machine. amd64 and arm64 add in SIMD lanes (dot_amd64.s, dot_arm64.s; arm64
// fuses each multiply with its add), others in dotGo's four sums; the orders and roundings
// differ, so the last bits of a score can differ between machines.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	return dotArch(a, b)
}

// dotRows sets out[r] to dot(q, rows[r·len(q):(r+1)·len(q)]) for every r of out, bit for bit
// (a shorter rows panics). amd64 does it without a call per row (dot_amd64.s), others by
// dotRowsEach.
func dotRows(q, rows, out []float32) {
	rows = rows[:len(out)*len(q)]
	dotRowsArch(q, rows, out)
}

// dotGo is the portable dot product, unrolled by four.
func dotGo(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// ExactCosine is the similarity Exact gives a stored vector v for a query q, computed as it computes
// it (both scaled to length 1, then their dot product), so that a caller scoring a few vectors
// itself agrees with a search bit for bit. q and v must be equally long.
func ExactCosine(q, v []float32) float32 { return dot(normalized(q), normalized(v)) }

// normalized returns a unit-length copy of v; an all-zero v gives zeros.
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}
