package vector

import (
	"fmt"
	"math"
	"sync"
)

// Exact is a flat cosine index: L2-normalized vectors in one contiguous slice, searched by dot
// product with a bounded heap. It is the oracle for approximate indexes and serves small
// stores. Safe for concurrent use: many searches, one writer.
type Exact struct {
	mu   sync.RWMutex
	dim  int
	data []float32 // row i is data[i*dim:(i+1)*dim]
	ids  []uint64  // row → id
	rows map[uint64]int
}

// NewExact returns an empty index of vectors of length dim.
func NewExact(dim int) *Exact {
	return &Exact{dim: dim, rows: map[uint64]int{}}
}

// Dim is the vectors' length.
func (e *Exact) Dim() int { return e.dim }

// normalized returns a unit-length copy of v (zero stays zero).
func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// Add stores a normalized copy of v under id, replacing what id held.
func (e *Exact) Add(id uint64, v []float32) error {
	if len(v) != e.dim {
		return fmt.Errorf("add %d: %w: got %d, want %d", id, ErrDimension, len(v), e.dim)
	}
	nv := normalized(v)
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.rows[id]; ok {
		copy(e.data[r*e.dim:], nv)
		return nil
	}
	e.rows[id] = len(e.ids)
	e.ids = append(e.ids, id)
	e.data = append(e.data, nv...)
	return nil
}

// Remove drops id; the last row moves into its place.
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

// Get returns a copy of id's normalized vector.
func (e *Exact) Get(id uint64) ([]float32, bool) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	r, ok := e.rows[id]
	if !ok {
		return nil, false
	}
	return append([]float32(nil), e.data[r*e.dim:(r+1)*e.dim]...), true
}

// Search returns the k vectors most similar to q by cosine that pass filter, best first.
func (e *Exact) Search(q []float32, k int, filter Filter) []Scored {
	if len(q) != e.dim || k <= 0 {
		return nil
	}
	nq := normalized(q)
	e.mu.RLock()
	defer e.mu.RUnlock()
	top := &topK{k: k}
	for r, id := range e.ids {
		if filter != nil && !filter(id) {
			continue
		}
		row := e.data[r*e.dim : (r+1)*e.dim]
		var dot float32
		for i, x := range row {
			dot += x * nq[i]
		}
		top.offer(Scored{ID: id, Score: dot})
	}
	return top.sorted()
}
