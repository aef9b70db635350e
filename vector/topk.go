package vector

import (
	"container/heap"
	"sort"
)

// topK keeps the k best Scored seen, in a min-heap on score (ties: lower id is worse).
type topK struct {
	k     int
	items []Scored
}

func worse(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score < b.Score
	}
	return a.ID < b.ID
}

func (t *topK) Len() int           { return len(t.items) }
func (t *topK) Less(i, j int) bool { return worse(t.items[i], t.items[j]) }
func (t *topK) Swap(i, j int)      { t.items[i], t.items[j] = t.items[j], t.items[i] }
func (t *topK) Push(x any)         { t.items = append(t.items, x.(Scored)) }
func (t *topK) Pop() any {
	x := t.items[len(t.items)-1]
	t.items = t.items[:len(t.items)-1]
	return x
}

// offer considers s for the top k.
func (t *topK) offer(s Scored) {
	if t.k <= 0 {
		return
	}
	if len(t.items) < t.k {
		heap.Push(t, s)
		return
	}
	if worse(t.items[0], s) {
		t.items[0] = s
		heap.Fix(t, 0)
	}
}

// sorted returns the kept items best first.
func (t *topK) sorted() []Scored {
	out := append([]Scored(nil), t.items...)
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	return out
}
