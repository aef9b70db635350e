package vector

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// BuiltinSoftWeight is the weight of SoftMatch's score, added as it is (in [0, 1]) to the
// min-max fusion of BM25 and the builtin embedder's cosine (BuiltinLexicalWeight and
// BuiltinDenseWeight, 0.7 and 0.3). It was chosen on the LoCoMo dev split through the pipeline
// the app runs (go run ./cmd/evalret): recall@10 goes from 0.660 without it to 0.684
// (0.682 at 1.2, 0.683 at 2). Fused by FuseN, min-max normalized like the other lists, it
// measures 0.683, but a min-max of the few candidates of a small store stretches tiny
// differences to the whole range, so the app adds it as it is.
const BuiltinSoftWeight float32 = 1.6

// SoftMatch scores each text by how well it covers the query's words, counting a near-synonym
// as a partial match: for each content word w of the query (a word the vocabulary has, not a
// stopword), its best similarity with the text's content words u, weighted by how rare w is:
//
//	Σ_w weight(w) · max_u sim(w, u) / Σ_w weight(w)
//	sim(w, u) = 1 if u is w, else max(0, (cos(w, u) − 0.4) / 0.6)
//
// Only the part of a cosine above 0.4 counts, rescaled to [0, 1]: GloVe gives unrelated common
// words cosines of 0.2–0.4 (they share a direction), which say nothing. (Earlier the cosine was
// cubed for the same reason. On the LoCoMo dev split, with everything else as shipped, the cut
// measures recall@10 0.684, cubing 0.680, squaring 0.682 and the plain cosine 0.686; but the
// plain cosine lifts a small store's unrelated memories to within half the match's score.) A
// time word of the query ("days", "spring", "Sunday"; see timeWords) matches only itself:
// every time expression is near every other in GloVe, and "these days" is no evidence for
// "last spring".
//
// weight(w) is the smooth-inverse-frequency weight a/(a+p(w)) that Embed gives the word, with
// p(w) estimated from counts, the store's own word counts, blended with the vocabulary's Zipf
// prior (see WordCounts); nil counts means the prior alone. A word that most memories share,
// such as the name of the person they are all about, weighs little however rare it is in
// English. On the LoCoMo dev split store counts lift recall@10 from 0.663 to 0.675 with
// everything else as before.
//
// So a text holding every query word scores 1, one sharing no word and nothing near scores
// 0, and "espresso" answers for "coffee" in part. Scores are in [0, 1], one per text, in
// order; a query with no content words scores 0 everywhere. Words are read as Embed reads them
// (Tokenize; a contraction is its stopwords; an unknown plural is its singular); words the
// vocabulary lacks are skipped on both sides. Unlike Embed's Query, names in the query keep
// their full weight: matched word for word they are good evidence, and on the LoCoMo dev split
// dropping them cost recall (evalret -variants soft: recall@10 0.668 kept, 0.662 dropped).
//
// It is a re-ranking signal for a few candidates, not an index: it compares every query word
// with every distinct word of the texts and keeps nothing between calls. For 80 texts of 15
// words (BenchmarkBuiltin_SoftMatch) that takes about 80 µs when the texts share words, as
// candidates for one query do, and about 0.5 ms when nearly every word is new. Give it the
// union of the lexical and dense candidates and add its scores, weighted BuiltinSoftWeight, to
// their fusion (FuseBonus).
//
// The first call decodes the asset if no Builtin has yet and computes the vocabulary's vector
// norms (200 KiB, a few milliseconds, once per process). SoftMatch is safe for concurrent use,
// also with changes to counts. If the asset is corrupt (a build error, which Load reports)
// every score is 0.
func (b *Builtin) SoftMatch(query string, texts []string, counts *WordCounts) []float32 {
	return b.SoftMatchContext(query, texts, nil, 0, counts)
}

// ContextSoftWeight is the discount of a match found in a text's context in SoftMatchContext:
// a query word scores max(own, ContextSoftWeight × its best among the neighbours' texts).
// Chosen with ContextLexicalWeight (see there) by leave-one-conversation-out cross-validation
// on the LoCoMo dev split.
const ContextSoftWeight float32 = 0.8

// SoftMatchContext is SoftMatch where a text is also read with its context, the texts written
// with it: context[i] lists the indices in texts of text i's neighbours (i past the end of
// context, or an empty list, means none), and each query word scores its best over the text's
// own words or, discounted by w, over its neighbours' words, whichever is higher:
//
//	Σ_q weight(q) · max(best_own(q), w · max_{n ∈ context(i)} best_n(q)) / Σ_q weight(q)
//
// So a text that shares no word with the question while its neighbour does ("I've always had a
// great respect for our military" after "What inspired you to join it?") scores up to w of
// what the neighbour does, and its own words still count in full. Give each text once, the
// candidates' and their neighbours' together: each is read once however many candidates it is
// context for. Scores are one per text, in order (a text given only as context is scored too).
// w = 0 or no context is SoftMatch.
func (*Builtin) SoftMatchContext(query string, texts []string, context [][]int, w float32, counts *WordCounts) []float32 {
	out := make([]float32, len(texts))
	st, err := loadSoft()
	if err != nil || len(texts) == 0 {
		return out
	}
	q := st.query(query, counts)
	n := len(q.rows)
	if n == 0 {
		return out
	}
	// Candidates share many words (a speaker's name, the topic), so each distinct
	// whitespace-separated field is tokenized once, and each distinct word's scores against the
	// query's words are computed once: field f's words' scores start at scores[offs[i]] for i
	// in fields[f]; a word's scores start at scores[rows[r]].
	fields := make(map[string][2]int32, 256)
	rows := make(map[int32]int32, 128)
	var offs []int32
	scores := make([]float32, 0, 128*n)
	// best[i*n+j] is query word j's best score among text i's words.
	best := make([]float32, len(texts)*n)
	for i, t := range texts {
		bi := best[i*n : (i+1)*n]
		// Tokenize splits at every space, so a text's words are its fields' words.
		for f := range strings.FieldsSeq(t) {
			span, ok := fields[f]
			if !ok {
				span[0] = int32(len(offs))
				for _, w := range Tokenize(f) {
					r, ok := st.contentRow(w)
					if !ok {
						continue
					}
					at, ok := rows[r]
					if !ok {
						at = int32(len(scores))
						rows[r] = at
						scores = st.appendScores(scores, q, r)
					}
					offs = append(offs, at)
				}
				span[1] = int32(len(offs))
				fields[f] = span
			}
			for _, at := range offs[span[0]:span[1]] {
				for j, c := range scores[at : int(at)+n] {
					bi[j] = max(bi[j], c)
				}
			}
		}
	}
	q.score(best, context, w, out)
	return out
}

// score writes into out[i] text i's score from best[i*n+j], query word j's best score among
// text i's words (n = len(q.rows)), read with context discounted by w (see SoftMatchContext).
func (q *softQuery) score(best []float32, context [][]int, w float32, out []float32) {
	n := len(q.rows)
	var den float64
	for _, w := range q.weight {
		den += float64(w)
	}
	for i := range out {
		bi := best[i*n : (i+1)*n]
		var num float64
		for j, c := range bi {
			if w > 0 && i < len(context) {
				for _, nb := range context[i] {
					c = max(c, w*best[nb*n+j])
				}
			}
			num += float64(q.weight[j]) * float64(c)
		}
		out[i] = float32(num / den)
	}
}

// softTable is what SoftMatch reads besides the asset: each row's inverse norm (an int8 row is
// its word's vector times a positive scale, so cosines can be computed on the rows directly),
// which rows are stopwords, and the asset's SIF a. It is read-only once built.
type softTable struct {
	g    *glove
	a    float64
	inv  []float32 // per row: 1/|row|, 0 for a zero row
	stop []bool    // per row: a stopword, or a contraction (whose words are all stopwords)
}

var loadSoft = sync.OnceValues(func() (*softTable, error) {
	g, err := loadBuiltin()
	if err != nil {
		return nil, err
	}
	st := &softTable{g: g, a: g.a, inv: make([]float32, g.numRows), stop: make([]bool, g.numRows)}
	for r := range st.inv {
		row := st.row(int32(r))
		var n int32
		for _, x := range row {
			n += int32(x) * int32(x)
		}
		if n > 0 {
			st.inv[r] = float32(1 / math.Sqrt(float64(n)))
		}
	}
	for w := range stopwords {
		if r, ok := g.rows[w]; ok {
			st.stop[r] = true
		}
	}
	for w := range contractions {
		if r, ok := g.rows[w]; ok {
			st.stop[r] = true
		}
	}
	return st, nil
})

func (st *softTable) row(r int32) *[builtinDim]int8 {
	return (*[builtinDim]int8)(st.g.q[int(r)*builtinDim:])
}

// contentRow is the row of a token that counts in a soft match: one the vocabulary knows
// (directly or by its singular) whose row is not a stopword's.
func (st *softTable) contentRow(w string) (int32, bool) {
	r, ok := st.g.row(w)
	return r, ok && !st.stop[r]
}

// softQuery is a query's distinct content words, in the order they first occur.
type softQuery struct {
	rows   []int32
	weight []float32 // the word's SIF weight times the number of times it occurs
	inv    []float32 // 1/|row|
	exact  []bool    // a time word, which matches only itself
	// pairs holds the words' rows two by two, word 2k in the low 32 bits of each component and
	// word 2k+1 in the high ones, so that one pass over a text word's row gives two dot
	// products (each at most 100·128², well inside 32 bits).
	pairs [][builtinDim]int64
}

func (st *softTable) query(text string, counts *WordCounts) *softQuery {
	q := &softQuery{}
	st.fillQuery(q, text, counts)
	return q
}

// fillQuery makes q the query of text, reusing its arrays.
func (st *softTable) fillQuery(q *softQuery, text string, counts *WordCounts) {
	q.rows, q.weight, q.inv, q.exact = q.rows[:0], q.weight[:0], q.inv[:0], q.exact[:0]
	weight := func(r int32) float32 { return float32(sif(st.a, int(r)+1)) }
	if counts != nil {
		var done func()
		weight, done = counts.weigher()
		defer done()
	}
	for _, w := range Tokenize(text) {
		r, ok := st.contentRow(w)
		if !ok || st.inv[r] == 0 {
			continue
		}
		wt := weight(r)
		if i := slices.Index(q.rows, r); i >= 0 {
			q.weight[i] += wt
			continue
		}
		q.rows = append(q.rows, r)
		q.weight = append(q.weight, wt)
		q.inv = append(q.inv, st.inv[r])
		q.exact = append(q.exact, timeWords[w])
	}
	np := (len(q.rows) + 1) / 2
	q.pairs = slices.Grow(q.pairs[:0], np)[:np]
	clear(q.pairs)
	for i, r := range q.rows {
		shift := 32 * (i % 2)
		for j, x := range st.row(r) {
			q.pairs[i/2][j] += int64(x) << shift
		}
	}
}

// softFloor is the cosine below which two words count as unrelated in SoftMatch.
const softFloor = 0.4

// appendScores appends to dst, for each of q's words, its similarity with the word of row r:
// 1 for the same word, else 0 for a time word, else max(0, (cos − softFloor)/(1 − softFloor)).
func (st *softTable) appendScores(dst []float32, q *softQuery, r int32) []float32 {
	row := st.row(r)
	for k := range q.pairs {
		lo, hi := dotPair(&q.pairs[k], row)
		for i, d := range [2]int32{lo, hi} {
			i += 2 * k
			if i == len(q.rows) {
				break
			}
			c := float32(1)
			if q.rows[i] != r {
				c = 0
				if !q.exact[i] {
					c = max(0, (float32(d)*q.inv[i]*st.inv[r]-softFloor)/(1-softFloor))
				}
			}
			dst = append(dst, c)
		}
	}
	return dst
}

// dotPair returns the dot products of row with the two rows packed in p (see softQuery).
func dotPair(p *[builtinDim]int64, row *[builtinDim]int8) (lo, hi int32) {
	var s0, s1, s2, s3 int64
	for j := 0; j < builtinDim; j += 4 {
		s0 += p[j] * int64(row[j])
		s1 += p[j+1] * int64(row[j+1])
		s2 += p[j+2] * int64(row[j+2])
		s3 += p[j+3] * int64(row[j+3])
	}
	s := s0 + s1 + s2 + s3
	lo = int32(s)
	return lo, int32((s - int64(lo)) >> 32)
}

// FuseN is Fuse over any number of lists: each list's scores are min-max normalized to [0, 1]
// (a list whose scores are all equal scores 1 throughout), multiplied by the list's weight and
// summed per id; an id missing from a list gets 0 from it. Every id of every list is kept; the
// result is sorted best first (ties: higher id first) and cut to k; k <= 0 returns nil. Each
// list is expected to hold an id at most once. FuseN(lists of lexical and dense, their weights,
// k) equals Fuse(lexical, dense, wLexical, wDense, k). The best possible score is the sum of
// the weights: weights divided by their sum keep scores in [0, 1] without changing the order.
// It panics if weights and lists differ in length.
func FuseN(lists [][]Scored, weights []float32, k int) []Scored {
	if len(weights) != len(lists) {
		panic(fmt.Sprintf("vector: FuseN with %d lists and %d weights", len(lists), len(weights)))
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	if k <= 0 || n == 0 {
		return nil
	}
	pos := make(map[uint64]int, n)
	out := make([]Scored, 0, n)
	for li, list := range lists {
		if len(list) == 0 {
			continue
		}
		lo, hi := list[0].Score, list[0].Score
		for _, s := range list[1:] {
			lo, hi = min(lo, s.Score), max(hi, s.Score)
		}
		w := weights[li]
		for _, s := range list {
			norm := float32(1)
			if hi > lo {
				norm = (s.Score - lo) / (hi - lo)
			}
			i, ok := pos[s.ID]
			if !ok {
				i = len(out)
				pos[s.ID] = i
				out = append(out, Scored{ID: s.ID})
			}
			out[i].Score += w * norm
		}
	}
	slices.SortFunc(out, compareBest)
	if len(out) > k {
		out = out[:k]
	}
	return out
}
