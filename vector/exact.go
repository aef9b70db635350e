package vector

import (
	"fmt"
	"math"
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
	nv := normalized(v)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.dim == 0 && len(e.ids) == 0 && len(v) > 0 {
		e.dim = len(v)
	}
	if len(v) != e.dim {
		return fmt.Errorf("add vector %d: %w: got %d, want %d", id, ErrDimension, len(v), e.dim)
	}
	if r, ok := e.rows[id]; ok {
		copy(e.data[r*e.dim:(r+1)*e.dim], nv)
		return nil
	}
	e.rows[id] = len(e.ids)
	e.ids = append(e.ids, id)
	e.data = append(e.data, nv...)
	return nil
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
// first (ties: higher id first). The filter is consulted once per stored vector, before the
// top-k cut. It returns nil when k <= 0 or len(q) differs from Dim.
func (e *Exact) Search(q []float32, k int, filter Filter) []Scored {
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

// dot is the dot product of two equally long vectors, unrolled by four.
func dot(a, b []float32) float32 {
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
