package vector

import (
	"slices"
	"sync"
)

// Analysis is a text read once for every index that reads its words: its BM25 terms, the
// vocabulary rows WordCounts counts, and the content words that the soft match compares
// (Words). A store that keeps BM25, WordCounts and the builtin soft match analyzes each text
// once (Builtin.Analyze), feeds BM25.AddAnalysis and WordCounts.AddAnalysis from the result,
// and keeps only its Words, for SoftMatchWords. Each gives what its text-based counterpart
// gives for the same text: BM25.Add, WordCounts.Add and SoftMatchContext.
//
// An Analysis is read-only once made, so it may be shared; it is transient (it holds a string
// per term), unlike its Words.
type Analysis struct {
	terms   []string // terms(text): BM25's view
	counted []int32  // the rows WordCounts counts, in order, with repeats
	// Words are the text's content words for SoftMatchWords: keep them with the text.
	Words Words
}

// Words are a text's distinct content words as the soft match reads them (see SoftMatch): the
// builtin vocabulary's rows of its words that are not stopwords, sorted, without repeats. They
// take 2 bytes a distinct content word (the vocabulary's 50,000 rows fit in 16 bits) plus a
// 24-byte slice header, about 40 bytes for a 10-word sentence, and no strings: a store keeps
// one per memory. The zero value is a text with no content words.
type Words struct {
	rows []uint16
}

// A row must fit in Words.rows: this does not compile if the vocabulary outgrows 16 bits.
const _ = uint16(builtinWords - 1)

// Len is the number of distinct content words.
func (w Words) Len() int { return len(w.rows) }

// Analyze reads text once, as Tokenize splits it, for BM25, WordCounts and the soft match (see
// Analysis). It loads the builtin embedder's asset if no Builtin has yet; if that is corrupt
// (a build error, which Load reports), the Analysis has BM25's terms and no words, as
// SoftMatch then scores 0 and NewWordCounts fails. It is safe for concurrent use.
func (*Builtin) Analyze(text string) Analysis {
	// The lists grow in a scratch kept for the next call and are then copied out at their
	// length: a store's load analyzes every text, and the arrays that growing them leaves
	// behind would be scattered among those that live on (Words), leaving spans half empty.
	sc := analyzeScratches.Get().(*analyzeScratch)
	defer analyzeScratches.Put(sc)
	a := Analysis{terms: sc.terms[:0], counted: sc.counted[:0]}
	rows := sc.rows[:0]
	defer func() {
		clear(a.terms) // the scratch must not keep the terms alive (past len: cleared before)
		sc.terms, sc.counted, sc.rows = a.terms, a.counted, rows
	}()
	st, err := loadSoft()
	var vw []vocabWord
	if err == nil {
		vw = loadVocabWords()
	}
	var buf [64]byte
	eachToken(text, buf[:0], func(tok []byte) {
		if err == nil {
			// Indexing a map by string(tok) does not allocate.
			if r, ok := st.g.rows[string(tok)]; ok { // most tokens: one lookup, no allocation
				w := &vw[r]
				if w.term != "" {
					a.terms = append(a.terms, w.term)
				}
				for _, c := range w.counted {
					if c >= 0 {
						a.counted = append(a.counted, c)
					}
				}
				if w.content {
					rows = append(rows, uint16(r))
				}
				return
			}
		}
		if !stopwords[string(tok)] {
			a.terms = append(a.terms, stem(string(tok)))
		}
		if err != nil {
			return
		}
		g := st.g
		if c, ok := contractions[string(tok)]; ok {
			for _, w := range c {
				if r, ok := g.row(w); ok {
					a.counted = append(a.counted, r)
				}
			}
			if r, ok := st.contentRow(string(tok)); ok { // a contraction's row is a stopword's
				rows = append(rows, uint16(r))
			}
			return
		}
		if r, ok := g.row(string(tok)); ok { // perhaps an unknown plural
			a.counted = append(a.counted, r)
			if !st.stop[r] {
				rows = append(rows, uint16(r))
			}
		}
	})
	out := Analysis{terms: slices.Clone(a.terms), counted: slices.Clone(a.counted)}
	if len(rows) > 0 { // sorted and compacted into an array of their own, as long as they are
		slices.Sort(rows)
		out.Words.rows = slices.Clone(slices.Compact(rows))
	}
	return out
}

// analyzeScratch is where Analyze's lists grow.
type analyzeScratch struct {
	terms   []string
	counted []int32
	rows    []uint16
}

var analyzeScratches = sync.Pool{New: func() any { return new(analyzeScratch) }}

// vocabWord is what Analyze makes of a token that is a vocabulary word, worked out once per
// word (loadVocabWords) so that such a token costs one map lookup and no allocation.
type vocabWord struct {
	term    string   // BM25's term: the word stemmed; "" for a stopword
	counted [2]int32 // the rows WordCounts counts: the word's, or a contraction's words' (-1: none)
	content bool     // the soft match reads it (not a stopword's row)
}

// loadVocabWords returns the vocabulary's vocabWords by row, computed on first use (50,000
// words, about 1.6 MB and a few milliseconds, once per process). Call it only once loadSoft
// has succeeded.
var loadVocabWords = sync.OnceValue(func() []vocabWord {
	st, _ := loadSoft()
	g := st.g
	vw := make([]vocabWord, g.numRows)
	for w, r := range g.rows {
		v := vocabWord{counted: [2]int32{r, -1}, content: !st.stop[r]}
		if !stopwords[w] {
			v.term = stem(w)
		}
		if c, ok := contractions[w]; ok {
			v.counted = [2]int32{-1, -1}
			n := 0
			for _, cw := range c {
				if cr, ok := g.row(cw); ok {
					v.counted[n] = cr
					n++
				}
			}
		}
		vw[r] = v
	}
	return vw
})

// AddAnalysis indexes the text a was made of under id, as Add(id, text) does, without reading
// the text again.
func (b *BM25) AddAnalysis(id uint64, a Analysis) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addLocked(id, a.terms)
}

// AddAnalysis counts the words of the text a was made of, as Add does.
func (c *WordCounts) AddAnalysis(a Analysis) { c.updateRows(a.counted, 1) }

// RemoveAnalysis uncounts the words of the text a was made of, which must have been added, as
// Remove does.
func (c *WordCounts) RemoveAnalysis(a Analysis) { c.updateRows(a.counted, -1) }

// softScratch is what a SoftMatchWords call works in, kept for the next one (a recall left ~35
// KB of it as garbage).
type softScratch struct {
	q      softQuery       // the query's words
	at     map[int32]int32 // a word's row → where its scores start
	scores []float32       // per distinct word, its score against each query word
	best   []float32       // per document and query word, the best score
}

var softScratches = sync.Pool{New: func() any { return &softScratch{at: make(map[int32]int32, 128)} }}

// SoftMatchWords is SoftMatchContext over texts analyzed beforehand: docs[i] is
// Analyze(texts[i]).Words, and the scores are those SoftMatchContext(query, texts, context, w,
// counts) returns, bit for bit, without reading the texts again.
func (b *Builtin) SoftMatchWords(query string, docs []Words, context [][]int, w float32, counts *WordCounts) []float32 {
	return b.AppendSoftMatchWords(nil, query, docs, context, w, counts)
}

// AppendSoftMatchWords is SoftMatchWords appending the scores to dst, one per doc.
func (*Builtin) AppendSoftMatchWords(dst []float32, query string, docs []Words, context [][]int, w float32, counts *WordCounts) []float32 {
	dst = slices.Grow(dst, len(docs))
	out := dst[len(dst) : len(dst)+len(docs)]
	clear(out)
	dst = dst[:len(dst)+len(docs)]
	st, err := loadSoft()
	if err != nil || len(docs) == 0 {
		return dst
	}
	sc := softScratches.Get().(*softScratch)
	defer softScratches.Put(sc)
	q := &sc.q
	st.fillQuery(q, query, counts)
	n := len(q.rows)
	if n == 0 {
		return dst
	}
	// Each distinct word's scores against the query's words are computed once: a word's
	// scores start at scores[at[r]].
	at := sc.at
	clear(at)
	scores := sc.scores[:0]
	best := slices.Grow(sc.best[:0], len(docs)*n)[:len(docs)*n]
	clear(best)
	defer func() { sc.scores, sc.best = scores, best }()
	for i, d := range docs {
		bi := best[i*n : (i+1)*n]
		for _, r16 := range d.rows {
			r := int32(r16)
			o, ok := at[r]
			if !ok {
				o = int32(len(scores))
				at[r] = o
				scores = st.appendScores(scores, q, r)
			}
			for j, c := range scores[o : int(o)+n] {
				bi[j] = max(bi[j], c)
			}
		}
	}
	q.score(best, context, w, out)
	return dst
}
