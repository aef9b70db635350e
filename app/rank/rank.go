package rank

import (
	"slices"
	"sync"

	"github.com/ownsona/ownsona/vector"
)

// Corpus is what a ranking reads of the store: its indexes and each memory's words and
// context. The store implements it over its caches and holds its read lock while Rank runs;
// every method answers about the store at one moment (now), and the filters it is given run
// under the index's lock (vector.Filter).
type Corpus interface {
	// Lexical is BM25 over the memories that pass f, each memory's context counting for it at
	// the share context (vector.BM25.SearchContext): at most k, best first.
	Lexical(text string, k int, f vector.Filter, context float32) []vector.Scored
	// Dense is the embedder's nearest neighbours of vec among the memories that pass f, at
	// most k, best first; nil when the store holds no vectors of vec's dimension.
	Dense(vec []float32, k int, f vector.Filter) []vector.Scored
	// Words is memory id's content words as the soft match reads them.
	Words(id uint64) vector.Words
	// Neighbours appends to dst memory id's context that is active now.
	Neighbours(dst []uint64, id uint64) []uint64
	// Counts is the store's word counts, which weigh the soft match; nil: English at large.
	Counts() *vector.WordCounts
	// Text is memory id's text.
	Text(id uint64) string
}

// Query is one question to rank the corpus for.
type Query struct {
	// Text is the question's words to rank by: its time words taken out (they say when, not
	// what).
	Text string
	// Vec is the question's vector; nil ranks by BM25 alone.
	Vec []float32
	// Filter admits the memories the answer may hold (nil: all): applied before every cut.
	Filter vector.Filter
	// Window, if set, admits the memories of the question's time window (written in it, or
	// mentioning a time in it): they come first, best first, then the others, best first.
	Window vector.Filter
	// Limit is how many to return at most.
	Limit int
}

// Ranker ranks memories for a question: the fusion of BM25 and the embedder's cosine, with
// the builtin embedder the soft term match added as it is, each memory's context counting for
// it at a discount, and the question's time window first. It is immutable once made and safe
// for concurrent use.
type Ranker struct {
	p              Params
	soft           *vector.Builtin // re-ranks candidates by soft term match; nil for other embedders
	wLex, wDense   float32         // Fuse weights of BM25 and of the embedder's cosine
	wSoft          float32
	minCos, margin float32 // dense hits below this cosine, or this far below the best, are dropped
}

// New returns the ranking for a store whose embedder is emb (nil: BM25 alone) with the knobs
// p.
func New(emb vector.Embedder, p Params) *Ranker {
	r := &Ranker{p: p, wLex: 0.5, wDense: 0.5, minCos: -1}
	if b, ok := emb.(*vector.Builtin); ok {
		r.wLex, r.wDense = vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight
		r.soft, r.wSoft = b, vector.BuiltinSoftWeight
		r.minCos, r.margin = vector.BuiltinMinCosine, vector.BuiltinCosineMargin
	}
	if emb == nil {
		r.p.ContextSoft = 0
	}
	return r
}

// Params returns the ranker's knobs.
func (r *Ranker) Params() Params { return r.p }

// Rank returns at most q.Limit memories of c for q, best first: with q.Window, the memories
// of the window first, each part best first. Scores are the fused relevance in [0, 1]; a
// memory scoring less than Params.Floor times the best is left out (the relevance floor).
func (r *Ranker) Rank(c Corpus, q Query) []vector.Scored {
	return r.floor(r.rankWindow(c, q))
}

// floor keeps the matches that score at least Params.Floor times the best one.
func (r *Ranker) floor(ranked []vector.Scored) []vector.Scored {
	var best float32
	for _, s := range ranked {
		best = max(best, s.Score)
	}
	return slices.DeleteFunc(ranked, func(s vector.Scored) bool { return s.Score < r.p.Floor*best })
}

// rankWindow ranks q's window first, if it has one.
func (r *Ranker) rankWindow(c Corpus, q Query) []vector.Scored {
	if q.Window == nil {
		return r.rank(c, q, q.Filter, q.Limit)
	}
	in := q.Window
	if q.Filter != nil {
		in = func(id uint64) bool { return q.Window(id) && q.Filter(id) }
	}
	first := r.rank(c, q, in, q.Limit)
	if len(first) == q.Limit {
		return first
	}
	rest := r.rank(c, q, q.Filter, q.Limit+len(first))
	out := first
	for _, s := range rest {
		if len(out) == q.Limit {
			break
		}
		if !slices.ContainsFunc(first, func(f vector.Scored) bool { return f.ID == s.ID }) {
			out = append(out, s)
		}
	}
	return out
}

// rank ranks the memories that pass f.
func (r *Ranker) rank(c Corpus, q Query, f vector.Filter, limit int) []vector.Scored {
	k := max(4*limit, 50)
	lexical := c.Lexical(q.Text, k, f, r.p.ContextLexical)
	var ranked []vector.Scored
	if q.Vec != nil {
		if dense := c.Dense(q.Vec, k, f); dense != nil {
			dense = vector.AtLeast(dense, r.minCos, r.margin)
			ranked = r.fuse(c, q.Text, lexical, dense, 2*k)
		}
	}
	if ranked == nil {
		// BM25 alone: each score as a share of the best, so that the last is not 0 as a
		// min-max would make it, and the floor reads how far it is from the best.
		ranked = slices.Clone(lexical)
		for i := range ranked {
			ranked[i].Score /= lexical[0].Score
		}
	}
	a := askedOf(q.Text)
	penalty := r.p.Who
	if a.self {
		penalty = r.p.WhoSelf
	}
	if penalty > 0 && (a.self || len(a.people) > 0) {
		for i, s := range ranked {
			if a.elsewhere(c.Text(s.ID)) {
				ranked[i].Score *= 1 - penalty
			}
		}
		slices.SortFunc(ranked, compareBest)
	}
	return ranked[:min(limit, len(ranked))]
}

// compareBest orders best first, ties by the higher id first, as vector's rankings are.
func compareBest(a, b vector.Scored) int {
	switch {
	case a.Score > b.Score:
		return -1
	case a.Score < b.Score:
		return 1
	case a.ID > b.ID:
		return -1
	case a.ID < b.ID:
		return 1
	}
	return 0
}

// fuse ranks the lexical and dense candidates: with the builtin embedder, each candidate also
// gets its soft term match (every question word's closest word in the memory, the words
// weighted by how rare they are in this store; in [0, 1]) added as it is, not min-max
// normalized like the two lists, so that a handful of candidates in a small store are not
// stretched apart. On the LoCoMo dev split this lifts recall@10 from 0.660 to 0.684 (min-max
// soft scores: 0.683, and worse on small stores). A candidate's soft match also reads its
// context's words (SoftMatchWords, over each memory's words read when it was indexed). The
// weights are divided by their sum so that scores stay in [0, 1].
func (r *Ranker) fuse(c Corpus, query string, lexical, dense []vector.Scored, limit int) []vector.Scored {
	if r.soft == nil {
		return vector.Fuse(lexical, dense, r.wLex, r.wDense, limit)
	}
	sc := fuseScratches.Get().(*fuseScratch)
	defer fuseScratches.Put(sc)
	ids := vector.AppendCandidates(sc.ids[:0], lexical, dense)
	docs := sc.docs[:0]
	for _, id := range ids {
		docs = append(docs, c.Words(id))
	}
	var near [][]int // near[i]: the indices in docs of candidate i's context, which follow the candidates
	if r.p.ContextSoft > 0 {
		near = slices.Grow(sc.near[:0], len(ids))[:len(ids)]
		for i := range near {
			near[i] = near[i][:0]
		}
		at := sc.at
		clear(at)
		for i, id := range ids {
			at[id] = i
		}
		nb := sc.nb[:0]
		for i, id := range ids {
			nb = c.Neighbours(nb[:0], id)
			for _, n := range nb {
				j, ok := at[n]
				if !ok {
					j = len(docs)
					at[n] = j
					docs = append(docs, c.Words(n))
				}
				near[i] = append(near[i], j)
			}
		}
		sc.near, sc.nb = near, nb
	}
	sum := r.wLex + r.wDense + r.wSoft
	soft := r.soft.AppendSoftMatchWords(sc.soft[:0], query, docs, near, r.p.ContextSoft, c.Counts())
	clear(docs) // the scratch outlives this search: it must not keep memories' words alive
	sc.docs, sc.ids, sc.soft = docs, ids, soft
	soft = soft[:len(ids)]
	return vector.FuseBonus(lexical, dense, r.wLex/sum, r.wDense/sum, ids, soft, r.wSoft/sum, limit)
}

// fuseScratch is what fuse works in, kept for the next search (a recall left ~45 KB of it as
// garbage).
type fuseScratch struct {
	ids  []uint64       // the candidates
	docs []vector.Words // the candidates' words, then their neighbours'
	near [][]int        // per candidate, the indices in docs of its neighbours
	at   map[uint64]int // a memory → its index in docs
	nb   []uint64       // one candidate's active neighbours
	soft []float32      // the soft match of each of docs
}

var fuseScratches = sync.Pool{New: func() any { return &fuseScratch{at: make(map[uint64]int)} }}
