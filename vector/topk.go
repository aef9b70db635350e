package vector

import "slices"

// better reports whether a ranks before b: higher score first, and on equal scores the higher
// id first, so every ranking is deterministic.
func better(a, b Scored) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID > b.ID
}

// compareBest orders Scored best first, for slices.SortFunc.
func compareBest(a, b Scored) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// topK keeps the k best Scored offered to it in a bounded min-heap whose root is the worst
// kept item. It allocates only its k items, and none per offer.
type topK struct {
	k     int
	items []Scored
}

func newTopK(k int) topK {
	return topK{k: k, items: make([]Scored, 0, min(k, 64))}
}

// wants reports whether offer would keep s now.
func (t *topK) wants(s Scored) bool {
	return t.k > 0 && (len(t.items) < t.k || better(s, t.items[0]))
}

// offer considers s for the top k.
func (t *topK) offer(s Scored) {
	if t.k <= 0 {
		return
	}
	if len(t.items) < t.k {
		t.items = append(t.items, s)
		t.up(len(t.items) - 1)
		return
	}
	if better(s, t.items[0]) {
		t.items[0] = s
		t.down(0)
	}
}

func (t *topK) up(i int) {
	h := t.items
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) { // parent is not better than child: heap order holds
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (t *topK) down(i int) {
	h := t.items
	for {
		w := i // the worst of i and its children
		if l := 2*i + 1; l < len(h) && better(h[w], h[l]) {
			w = l
		}
		if r := 2*i + 2; r < len(h) && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// sorted returns the kept items best first. The topK must not be used afterwards.
func (t *topK) sorted() []Scored {
	if len(t.items) == 0 {
		return nil
	}
	slices.SortFunc(t.items, compareBest)
	return t.items
}
