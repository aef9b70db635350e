package vector

import (
	"math"
	"sync"
)

// BM25 parameters (Robertson–Zaragoza defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

type posting struct {
	id uint64
	tf uint32
}

type bm25Doc struct {
	length int
	terms  []uint32 // distinct term ids, for removal
}

// BM25 is an in-memory inverted index ranking documents by Okapi BM25 over stemmed,
// stopword-free terms. Safe for concurrent use: many searches, one writer.
type BM25 struct {
	mu       sync.RWMutex
	termIDs  map[string]uint32
	postings [][]posting // by term id
	docs     map[uint64]*bm25Doc
	totalLen int
}

// NewBM25 returns an empty index.
func NewBM25() *BM25 {
	return &BM25{termIDs: map[string]uint32{}, docs: map[uint64]*bm25Doc{}}
}

// Add indexes text under id, replacing what id held before.
func (b *BM25) Add(id uint64, text string) {
	ts := terms(text)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(id)
	counts := map[uint32]uint32{}
	var order []uint32
	for _, t := range ts {
		tid, ok := b.termIDs[t]
		if !ok {
			tid = uint32(len(b.postings))
			b.termIDs[t] = tid
			b.postings = append(b.postings, nil)
		}
		if counts[tid] == 0 {
			order = append(order, tid)
		}
		counts[tid]++
	}
	for _, tid := range order {
		b.postings[tid] = append(b.postings[tid], posting{id, counts[tid]})
	}
	b.docs[id] = &bm25Doc{length: len(ts), terms: order}
	b.totalLen += len(ts)
}

// Remove drops id from the index.
func (b *BM25) Remove(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removeLocked(id)
}

func (b *BM25) removeLocked(id uint64) {
	d, ok := b.docs[id]
	if !ok {
		return
	}
	for _, tid := range d.terms {
		ps := b.postings[tid]
		for i, p := range ps {
			if p.id == id {
				ps[i] = ps[len(ps)-1]
				b.postings[tid] = ps[:len(ps)-1]
				break
			}
		}
	}
	b.totalLen -= d.length
	delete(b.docs, id)
}

// Len is the number of indexed documents.
func (b *BM25) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.docs)
}

// Search returns up to k documents that share a term with query and pass filter, best first;
// every score is positive.
func (b *BM25) Search(query string, k int, filter Filter) []Scored {
	qt := terms(query)
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := len(b.docs)
	if n == 0 || k <= 0 {
		return nil
	}
	avg := float64(b.totalLen) / float64(n)
	if avg == 0 {
		avg = 1
	}
	scores := map[uint64]float64{}
	rejected := map[uint64]bool{}
	seen := map[uint32]bool{}
	for _, t := range qt {
		tid, ok := b.termIDs[t]
		if !ok || seen[tid] {
			continue
		}
		seen[tid] = true
		ps := b.postings[tid]
		df := float64(len(ps))
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		for _, p := range ps {
			if rejected[p.id] {
				continue
			}
			if _, ok := scores[p.id]; !ok && filter != nil && !filter(p.id) {
				rejected[p.id] = true
				continue
			}
			tf := float64(p.tf)
			dl := float64(b.docs[p.id].length)
			scores[p.id] += idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
		}
	}
	top := &topK{k: k}
	for id, s := range scores {
		if s > 0 {
			top.offer(Scored{ID: id, Score: float32(s)})
		}
	}
	return top.sorted()
}
