package vector

import (
	"math"
	"slices"
	"sync"
)

// BM25 parameters: Okapi's usual k1, and less length normalization than its usual b (0.75).
// Memories are short, and a longer one is more often one that says more than one that rambles:
// on the LoCoMo dev split b 0.4 lifts BM25's recall@10 from 0.626 to 0.640 and its MRR from
// 0.458 to 0.490, and the builtin hybrid's recall@10 by about 0.005 (b 0.3 and 0.5 measure
// the same; k1 0.9 or 1.5 no better).
const (
	bm25K1 = 1.2
	bm25B  = 0.4
)

// posting is one document's occurrences of a term. Documents are named by slot, a dense
// internal number, so that scores accumulate in a slice rather than a map.
type posting struct {
	slot uint32
	tf   uint32
}

// BM25 is an in-memory inverted index that ranks documents by Okapi BM25 (k1 1.2, b 0.4) over
// their terms: Tokenize's tokens without English stopwords, through a small suffix stemmer
// (plurals, -ing, -ed). The zero value is not usable; call NewBM25.
//
// BM25 is safe for concurrent use: searches share a read lock, Add and Remove take the write
// lock. A search allocates its query's terms and its k results; the per-document score
// accumulator is pooled and reused.
type BM25 struct {
	k1, b float64 // the BM25 parameters

	mu       sync.RWMutex
	termIDs  map[string]uint32 // term → term id
	termStr  []string          // term id → term ("" when free)
	postings [][]posting       // term id → postings, in no particular order
	freeTerm []uint32          // term ids whose postings emptied, for reuse

	slotOf   map[uint64]uint32 // document id → slot
	ids      []uint64          // slot → document id
	lens     []uint32          // slot → length in terms
	docTerms [][]uint32        // slot → its distinct term ids (nil when free)
	near     []nearSlots       // slot → its context's slots (SetContext)
	voice    []Voice           // slot → whether its words count for its context (SetContext)
	freeSlot []uint32
	totalLen int      // sum of lens over live documents
	tids     []uint32 // fillLocked's buffer

	acc sync.Pool // *accumulator
}

// accumulator is a search's scratch space: a score per slot (all zero between uses) and the
// slots it touched.
type accumulator struct {
	scores  []float32
	touched []uint32
	// SearchContext's, per slot for the current query word (zero between uses), and the slots
	// it touched.
	word        []wordScore
	wordTouched []uint32
}

// wordScore is a document's score for one query word in SearchContext: its own, and the best of
// its neighbours' times the context weight.
type wordScore struct{ own, near float32 }

// NewBM25 returns an empty index.
func NewBM25() *BM25 { return NewBM25With(bm25K1, bm25B) }

// NewBM25With returns an empty index that scores with BM25 parameters k1 and b instead of
// NewBM25's 1.2 and 0.4, for measuring them.
func NewBM25With(k1, b float64) *BM25 {
	return &BM25{k1: k1, b: b, termIDs: map[string]uint32{}, slotOf: map[uint64]uint32{}}
}

// Add indexes text under id, replacing whatever text id held (its context, SetContext, stays).
// A text with no terms (empty, or only stopwords) is still counted by Len but never matches.
func (b *BM25) Add(id uint64, text string) {
	ts := terms(text)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addLocked(id, ts)
}

// addLocked is Add of the terms ts.
func (b *BM25) addLocked(id uint64, ts []string) {
	if slot, ok := b.slotOf[id]; ok {
		b.clearTermsLocked(slot)
		b.fillLocked(slot, ts)
		return
	}
	var slot uint32
	if n := len(b.freeSlot); n > 0 {
		slot = b.freeSlot[n-1]
		b.freeSlot = b.freeSlot[:n-1]
	} else {
		slot = uint32(len(b.ids))
		b.ids = append(b.ids, 0)
		b.lens = append(b.lens, 0)
		b.docTerms = append(b.docTerms, nil)
		b.near = append(b.near, nearSlots{})
		b.voice = append(b.voice, Speaks)
	}
	b.slotOf[id] = slot
	b.ids[slot] = id
	b.fillLocked(slot, ts)
}

// fillLocked indexes terms ts under an empty slot.
func (b *BM25) fillLocked(slot uint32, ts []string) {
	b.lens[slot] = uint32(len(ts))
	b.totalLen += len(ts)
	// Count term frequencies: sort the term ids and measure the runs. The ids are sorted in
	// a buffer kept for the next document: one allocation each would die beside the distinct
	// ids that live on, in the same size classes, and leave their spans half empty.
	tids := b.tids[:0]
	for _, t := range ts {
		tids = append(tids, b.termLocked(t))
	}
	b.tids = tids
	slices.Sort(tids)
	distinct := tids[:0] // compacted in place; the write index never passes the read index
	for i := 0; i < len(tids); {
		j := i + 1
		for j < len(tids) && tids[j] == tids[i] {
			j++
		}
		tid := tids[i]
		b.postings[tid] = append(b.postings[tid], posting{slot: slot, tf: uint32(j - i)})
		distinct = append(distinct, tid)
		i = j
	}
	b.docTerms[slot] = slices.Clone(distinct)
}

// termLocked returns t's term id, creating it.
func (b *BM25) termLocked(t string) uint32 {
	if tid, ok := b.termIDs[t]; ok {
		return tid
	}
	var tid uint32
	if n := len(b.freeTerm); n > 0 {
		tid = b.freeTerm[n-1]
		b.freeTerm = b.freeTerm[:n-1]
		b.termStr[tid] = t
	} else {
		tid = uint32(len(b.postings))
		b.postings = append(b.postings, nil)
		b.termStr = append(b.termStr, t)
	}
	b.termIDs[t] = tid
	return tid
}

// Remove drops id from the index, and from its neighbours' context; an unknown id is ignored.
// It costs a scan of the postings of each of the document's terms.
func (b *BM25) Remove(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	slot, ok := b.slotOf[id]
	if !ok {
		return
	}
	b.clearTermsLocked(slot)
	b.ids[slot] = 0
	b.setNearLocked(slot, nearSlots{})
	b.voice[slot] = Speaks
	b.freeSlot = append(b.freeSlot, slot)
	delete(b.slotOf, id)
}

// Compact reallocates every term's postings at their length. Postings grow by append, which
// leaves up to half of each list's capacity unused and, while a store loads, the outgrown
// arrays as holes between the lists that live on. Called once a load is done, it packs the
// lists into arrays of their own size and leaves the old ones to be freed whole.
func (b *BM25) Compact() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for tid, ps := range b.postings {
		if ps != nil {
			b.postings[tid] = slices.Clone(ps)
		}
	}
}

// clearTermsLocked removes slot's postings and length.
func (b *BM25) clearTermsLocked(slot uint32) {
	for _, tid := range b.docTerms[slot] {
		ps := b.postings[tid]
		for i := range ps {
			if ps[i].slot == slot {
				ps[i] = ps[len(ps)-1]
				ps = ps[:len(ps)-1]
				break
			}
		}
		if len(ps) == 0 {
			delete(b.termIDs, b.termStr[tid])
			b.termStr[tid] = ""
			b.freeTerm = append(b.freeTerm, tid)
			ps = nil
		}
		b.postings[tid] = ps
	}
	b.totalLen -= int(b.lens[slot])
	b.lens[slot] = 0
	b.docTerms[slot] = nil
}

// MaxContext is how many neighbours a document's context holds at most (SetContext): two on
// each side.
const MaxContext = 4

// nearSlots are a document's context: slot+1 of each neighbour, 0 for none, packed first. A
// fixed array keeps them in one cache line with no pointer to chase during a search.
type nearSlots [MaxContext]uint32

func (n *nearSlots) has(slot uint32) bool { return slices.Contains(n[:], slot+1) }

// add adds slot if there is room and it is not there yet.
func (n *nearSlots) add(slot uint32) {
	if n.has(slot) {
		return
	}
	if i := slices.Index(n[:], 0); i >= 0 {
		n[i] = slot + 1
	}
}

// del removes slot, keeping the rest packed first.
func (n *nearSlots) del(slot uint32) {
	i := slices.Index(n[:], slot+1)
	if i < 0 {
		return
	}
	copy(n[i:], n[i+1:])
	n[MaxContext-1] = 0
}

// SetContext makes neighbours the context of document id (see SearchContext), replacing what
// it had. The relation is symmetric: id also joins each neighbour's context, and leaves the
// context of those it had before and not now. At most MaxContext neighbours are kept, the first
// given, and a neighbour whose context is full does not take id into it. v says whether id's
// own words count for its neighbours (it always receives theirs). Ids the index does not hold,
// and id itself, are skipped; an unknown id sets nothing. Remove takes a document out of every
// context.
func (b *BM25) SetContext(id uint64, neighbours []uint64, v Voice) {
	b.mu.Lock()
	defer b.mu.Unlock()
	slot, ok := b.slotOf[id]
	if !ok {
		return
	}
	var to nearSlots
	for _, n := range neighbours {
		if s, ok := b.slotOf[n]; ok && s != slot {
			to.add(s)
		}
	}
	b.setNearLocked(slot, to)
	b.voice[slot] = v
}

// Voice says whether a document's words count for its context in SearchContext.
type Voice uint8

const (
	// Speaks: its words count for its neighbours (the default).
	Speaks Voice = iota
	// Quiet: they count for none, though it keeps its links (ownsona: a forgotten memory, whose
	// words must not influence any result).
	Quiet
	// Ask: SearchContext's speaks filter decides, per search (ownsona: a memory that expires).
	// Keep it for the few documents that need it: it costs a call per posting.
	Ask
)

// setNearLocked replaces slot's neighbours by to, keeping the relation symmetric.
func (b *BM25) setNearLocked(slot uint32, to nearSlots) {
	for _, n := range b.near[slot] {
		if n != 0 && !to.has(n-1) {
			b.near[n-1].del(slot)
		}
	}
	for _, n := range to {
		if n != 0 {
			b.near[n-1].add(slot)
		}
	}
	b.near[slot] = to
}

// Len is the number of indexed documents.
func (b *BM25) Len() int {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return len(b.slotOf)
}

// Search returns up to k documents that share at least one term with query and pass filter,
// best first (ties: higher id first). Every score is positive. The filter is consulted at most
// once per matching document, before the top-k cut, and only for a document that would make
// the cut. k <= 0 returns nil.
func (b *BM25) Search(query string, k int, filter Filter) []Scored {
	return b.SearchContext(query, k, filter, 0, nil)
}

// ContextLexicalWeight is the discount of a query word found in a document's context in
// SearchContext: the word scores max(own, ContextLexicalWeight × its best score among the
// neighbours). Chosen with ContextSoftWeight on the LoCoMo dev split by leave-one-conversation-
// out cross-validation over a grid (go run ./cmd/evalsvc): four of the five folds chose
// 0.5 and 0.8 (the fifth 0.7 and 0.5), and the held-out recall@10 is 0.785 with the builtin
// embedder (0.789 at these weights on all of dev; 0.684 without context). Lexical search alone
// chooses 0.5 or 0.6 (recall@10 0.765 at 0.5, 0.640 without context).
const ContextLexicalWeight float32 = 0.5

// SearchContext is Search where a document also scores by its context (SetContext): each
// query word scores a document by its own BM25 term score or, if higher, w times the best term
// score of that word among the document's neighbours whose words count (their Voice: Speaks,
// or Ask and speaks admits them; a nil speaks admits none):
//
//	Σ_t max(bm25_t(d), w · max_{n ∈ context(d)} bm25_t(n))
//
// A document that shares no word with the question while the one written before it does
// ("I've always had a great respect for our military" after "What inspired you to join it?")
// is found through it. The context is read from the postings the query touches, at query time:
// the index does not grow, and a search costs a few array reads more per posting. Taking the
// better of the two per word, rather than their sum, keeps a document whose neighbours all
// repeat a word from outranking the one that says it (on the LoCoMo dev split, BM25 alone at
// weight 0.7: recall@10 0.640 without context, 0.720 summing, 0.758 taking the better;
// counting the neighbours' occurrences into the document's term frequency, 0.726). A document
// reached only through a neighbour is a match too, and the filter is consulted for it like for
// any other. w = 0 is Search.
func (b *BM25) SearchContext(query string, k int, filter Filter, w float32, speaks Filter) []Scored {
	if k <= 0 {
		return nil
	}
	qt := terms(query)
	if len(qt) == 0 {
		return nil
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	n := len(b.slotOf)
	if n == 0 {
		return nil
	}
	avgLen := float64(b.totalLen) / float64(n)
	if avgLen == 0 {
		avgLen = 1
	}

	acc, _ := b.acc.Get().(*accumulator)
	if acc == nil {
		acc = &accumulator{}
	}
	if len(acc.scores) < len(b.ids) {
		acc.scores = make([]float32, len(b.ids)+len(b.ids)/4)
	}
	scores, touched := acc.scores, acc.touched[:0]
	withContext := w > 0
	dense := false       // whether a word was scored without listing its slots in touched
	var word []wordScore // per slot, for the current query word
	var wordTouched []uint32
	if withContext {
		if len(acc.word) < len(scores) {
			acc.word = make([]wordScore, len(scores))
		}
		word, wordTouched = acc.word, acc.wordTouched[:0]
	}

	// BM25 with Lucene's non-negative idf: log(1 + (N - df + 0.5) / (df + 0.5)).
	norm0, norm1 := b.k1*(1-b.b), b.k1*b.b/avgLen
	for i, t := range qt {
		if slices.Contains(qt[:i], t) { // a repeated query word counts once
			continue
		}
		tid, ok := b.termIDs[t]
		if !ok {
			continue
		}
		ps := b.postings[tid]
		df := float64(len(ps))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		wt := idf * (b.k1 + 1)
		if withContext && len(ps)*(1+MaxContext)*denseShare >= len(b.ids) {
			// A common word: with their contexts its postings reach much of the index, and
			// a pass over the slots they span beats keeping a list of them.
			if !dense && len(touched) == 0 {
				b.addFirstWordDense(ps, wt, norm0, norm1, w, speaks, scores) // every score is zero
			} else {
				b.addWordDense(ps, wt, norm0, norm1, w, speaks, word, scores)
			}
			dense = true
			continue
		}
		for _, p := range ps {
			s := termScore(wt, p.tf, norm0, norm1, b.lens[p.slot])
			if !withContext {
				if scores[p.slot] == 0 {
					touched = append(touched, p.slot)
				}
				scores[p.slot] += s
				continue
			}
			ws := &word[p.slot]
			if *ws == (wordScore{}) {
				wordTouched = append(wordTouched, p.slot)
			}
			ws.own = s
			if !b.speaksLocked(p.slot, speaks) {
				continue
			}
			c := w * s
			for _, to := range b.near[p.slot] {
				if to == 0 {
					break
				}
				ws := &word[to-1]
				if *ws == (wordScore{}) {
					wordTouched = append(wordTouched, to-1)
				}
				ws.near = max(ws.near, c)
			}
		}
		for _, slot := range wordTouched {
			if scores[slot] == 0 {
				touched = append(touched, slot)
			}
			scores[slot] += max(word[slot].own, word[slot].near)
			word[slot] = wordScore{} // zeroed for the next word and search
		}
		wordTouched = wordTouched[:0]
	}
	if withContext {
		acc.wordTouched = wordTouched
	}

	if dense {
		// Every slot: scores are positive, and zero where nothing was scored. Once the top
		// k is full, a score below its worst is not wanted, which one comparison tells for
		// nearly every slot.
		top := newTopK(k)
		var floor float32
		for slot, s := range scores[:len(b.ids)] {
			if s < floor || s == 0 {
				continue
			}
			c := Scored{ID: b.ids[slot], Score: s}
			if top.wants(c) && (filter == nil || filter(c.ID)) {
				top.offer(c)
				if len(top.items) == k {
					floor = top.items[0].Score
				}
			}
		}
		clear(scores[:len(b.ids)])
		acc.touched = touched[:0]
		b.acc.Put(acc)
		return top.sorted()
	}
	top := newTopK(min(k, len(touched)))
	for _, slot := range touched {
		s := scores[slot]
		scores[slot] = 0 // leave the accumulator zeroed for the next search
		c := Scored{ID: b.ids[slot], Score: s}
		// The filter is asked only about a document that would enter the top k: once k
		// documents passed, most matches of a common word never need it.
		if !top.wants(c) || (filter != nil && !filter(c.ID)) {
			continue
		}
		top.offer(c)
	}
	acc.touched = touched[:0]
	b.acc.Put(acc)
	return top.sorted()
}

// termScore is a term's BM25 score in a document that holds it tf times and is length terms
// long: wt is its idf·(k1+1), norm0 and norm1 the search's length normalization. Both ways of
// scoring a word with context call it, so their sums agree bit for bit.
func termScore(wt float64, tf uint32, norm0, norm1 float64, length uint32) float32 {
	f := float64(tf)
	return float32(wt * f / (f + norm0 + norm1*float64(length)))
}

// speaksLocked reports whether slot's words count for its neighbours in SearchContext: its
// Voice, and for Ask the search's speaks filter (nil admits none).
func (b *BM25) speaksLocked(slot uint32, speaks Filter) bool {
	v := b.voice[slot]
	return v == Speaks || (v == Ask && speaks != nil && speaks(b.ids[slot]))
}

// denseShare: SearchContext scores a word by a pass over the slots its postings span when its
// postings with their contexts number at least 1/denseShare of the slots. A variable for
// TestBM25_SearchContextDense.
var denseShare = 4

// addWordDense adds one query word's scores with context as SearchContext's list-keeping loop
// does, the same sums in the same order, but keeps no list of the slots scored (the search
// then reads every slot): the own and context scores are written in word, then one pass over
// the span of slots they reach adds them up and zeroes word for the next word and search.
func (b *BM25) addWordDense(ps []posting, wt, norm0, norm1 float64, w float32, speaks Filter,
	word []wordScore, scores []float32) {
	lo, hi := uint32(len(word)), uint32(0)
	for _, p := range ps {
		s := termScore(wt, p.tf, norm0, norm1, b.lens[p.slot])
		word[p.slot].own = s
		lo, hi = min(lo, p.slot), max(hi, p.slot)
		if !b.speaksLocked(p.slot, speaks) {
			continue
		}
		c := w * s
		for _, to := range b.near[p.slot] {
			if to == 0 {
				break
			}
			ws := &word[to-1]
			ws.near = max(ws.near, c)
			lo, hi = min(lo, to-1), max(hi, to-1)
		}
	}
	// No branch per slot: about half the slots are reached, at random, and a mispredicted
	// branch costs more than adding a zero.
	for slot := lo; slot <= hi; slot++ {
		scores[slot] += max(word[slot].own, word[slot].near)
		word[slot] = wordScore{}
	}
}

// addFirstWordDense is addWordDense for a word scored while every score is still zero. A
// slot's score is then the word's, the largest of its own and its context's, and the largest
// is the same whatever the order it is taken in: each is taken straight into scores, without
// word and without the pass over the span. A recall at 100k of two common words spent a fifth
// of its time in that pass.
func (b *BM25) addFirstWordDense(ps []posting, wt, norm0, norm1 float64, w float32, speaks Filter,
	scores []float32) {
	for _, p := range ps {
		s := termScore(wt, p.tf, norm0, norm1, b.lens[p.slot])
		scores[p.slot] = max(scores[p.slot], s)
		if !b.speaksLocked(p.slot, speaks) {
			continue
		}
		c := w * s
		for _, to := range b.near[p.slot] {
			if to == 0 {
				break
			}
			scores[to-1] = max(scores[to-1], c)
		}
	}
}
