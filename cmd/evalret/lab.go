package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ownsona/ownsona/vector"
)

// lab is a configurable copy of the builtin embedder, for measuring its choices. With the
// default options it must give the builtin embedder's vectors (main checks that it does), so
// that a variant measured here is a variant of what ships.
type lab struct {
	opt    labOpts
	dim    int
	words  []string
	index  map[string]int
	vecs   []float32 // dequantized, row-major
	pc     []float32
	a      float64
	counts map[string]int // the store's word counts, for the "store" weights
	total  int
	vcount map[int]int // the store's counts of vocabulary rows, as vector.WordCounts counts them
	vtotal int
	unit   []float32 // unit-length rows, for neighbour search; built on demand
	nameC  []float32
	nameS  []float32
}

type labOpts struct {
	N            int     // vocabulary size (a prefix of the asset's); 0: all
	A            float64 // the SIF a; 0: the asset's
	Weights      string  // "zipf" (the vocabulary's rank), "store" (the store's counts), "none"
	PC           string  // "asset", "none", "store" (from the store's text vectors)
	OOV          string  // "ngram" or "skip"
	NoPlural     bool    // no singular fallback
	NoContract   bool    // no contraction table
	Stop         bool    // drop stopwords
	NameWeight   float64 // multiplier for capitalized words inside a sentence; 0: 1
	UnitWords    bool    // normalize word vectors before weighting
	StoreA       float64 // the a for store weights; 0: 1e-3
	OOVNorm      float64 // norm of an unknown word's vector; 0: the builtin's
	Letters      string  // single letters: "skip" (default) or "ngram"
	Numbers      string  // numbers the vocabulary lacks: "skip" (default), "ngram", "words" (spelled out up to 20, else skipped)
	NameLike     float64 // words whose cosine with the first-name centroid is ≥ this get NameLikeW; 0: off
	NameLikeW    float64
	NameSide     string  // "" both, "query", "doc": where NameWeight applies
	Label        bool    // a capitalized first word ending in ':' is a name too
	ZipfScale    float64 // subtlex: Zipf p for words it lacks, times this
	StorePrior   float64 // "store" weights blended with the Zipf prior as vector.WordCounts does, this many words of it; 0: not blended
	Time         bool    // a question's time words are left out, as the builtin does
	pcFromCorpus []float32
}

const (
	zipfH = 13.4764 // as in genassets
)

func loadLab(path string, opt labOpts) (*lab, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := bytes.NewReader(raw)
	var hdr struct {
		Magic   [8]byte
		Version uint32
		N, Dim  uint32
		A       float32
	}
	if err := binary.Read(r, binary.LittleEndian, &hdr); err != nil || string(hdr.Magic[:]) != "OWNGLOVE" {
		return nil, fmt.Errorf("%s: not an asset", path)
	}
	l := &lab{opt: opt, dim: int(hdr.Dim), a: float64(hdr.A), index: map[string]int{}}
	l.pc = make([]float32, l.dim)
	binary.Read(r, binary.LittleEndian, l.pc)
	n := int(hdr.N)
	for range n {
		b, _ := r.ReadByte()
		w := make([]byte, b)
		io.ReadFull(r, w)
		l.words = append(l.words, string(w))
	}
	l.vecs = make([]float32, n*l.dim)
	if hdr.Version == 0 {
		binary.Read(r, binary.LittleEndian, l.vecs)
	} else {
		scales := make([]float32, n)
		binary.Read(r, binary.LittleEndian, scales)
		q := make([]int8, n*l.dim)
		if err := binary.Read(r, binary.LittleEndian, q); err != nil {
			return nil, errors.New("short asset")
		}
		for i := range q {
			l.vecs[i] = scales[i/l.dim] * float32(q[i])
		}
	}
	if opt.N > 0 && opt.N < n {
		n = opt.N
		l.words, l.vecs = l.words[:n], l.vecs[:n*l.dim]
	}
	for i, w := range l.words {
		l.index[w] = i
	}
	if opt.A > 0 {
		l.a = opt.A
	}
	if opt.UnitWords {
		for i := range n {
			normalize(l.vecs[i*l.dim : (i+1)*l.dim])
		}
	}
	return l, nil
}

func (l *lab) clone(opt labOpts) *lab {
	c := *l
	c.opt = opt
	if opt.A > 0 {
		c.a = opt.A
	}
	c.unit, c.nameC, c.nameS = nil, nil, nil
	if opt.N > 0 && opt.N < len(l.words) {
		c.words, c.vecs = l.words[:opt.N], l.vecs[:opt.N*l.dim]
		c.index = make(map[string]int, opt.N)
		for i, w := range c.words {
			c.index[w] = i
		}
	}
	if opt.UnitWords {
		c.vecs = slices.Clone(c.vecs)
		for i := range len(c.words) {
			normalize(c.vecs[i*c.dim : (i+1)*c.dim])
		}
	}
	return &c
}

// setCounts gives the store's texts, for store weights and the store's common component.
func (l *lab) setCounts(texts []string) {
	l.counts = map[string]int{}
	l.total = 0
	l.vcount = map[int]int{}
	l.vtotal = 0
	for _, t := range texts {
		for _, w := range l.tokens(t) {
			l.counts[w.w]++
			l.total++
			if r, _ := l.lookup(w.w); r >= 0 {
				l.vcount[r]++
				l.vtotal++
			}
		}
	}
}

// fitPC sets the common component to the first principal direction of the given texts' vectors
// (before removal), as the SIF paper does.
func (l *lab) fitPC(texts []string) {
	saved := l.opt.PC
	l.opt.PC = "none"
	vs := make([][]float32, len(texts))
	for i, t := range texts {
		vs[i] = l.raw(t)
	}
	l.opt.PC = saved
	x := make([]float64, l.dim)
	for i := range x {
		x[i] = 1
	}
	for range 200 {
		y := make([]float64, l.dim)
		for _, v := range vs {
			var d float64
			for j := range v {
				d += float64(v[j]) * x[j]
			}
			for j := range v {
				y[j] += d * float64(v[j])
			}
		}
		var nrm float64
		for _, t := range y {
			nrm += t * t
		}
		nrm = math.Sqrt(nrm)
		for j := range y {
			y[j] /= nrm
		}
		x = y
	}
	l.opt.pcFromCorpus = make([]float32, l.dim)
	for j := range x {
		l.opt.pcFromCorpus[j] = float32(x[j])
	}
}

// fitVocabPC computes the common component from the vocabulary: "uniform": the principal
// direction of the SIF-weighted vectors, each word counted once; "mean": the direction of
// their p-weighted mean; "top": the principal direction of the 5,000 most frequent words.
func (l *lab) fitVocabPC() {
	x := make([]float64, l.dim)
	switch l.opt.PC {
	case "mean":
		for i := range l.words {
			p := 1 / (float64(i+1) * zipfH)
			w := l.weight(i, l.words[i]) * p
			for j := range x {
				x[j] += w * float64(l.vecs[i*l.dim+j])
			}
		}
	default:
		n := len(l.words)
		if l.opt.PC == "top" {
			n = min(n, 5000)
		}
		for j := range x {
			x[j] = 1
		}
		for range 300 {
			y := make([]float64, l.dim)
			for i := range n {
				v := l.vecs[i*l.dim : (i+1)*l.dim]
				w := l.weight(i, l.words[i])
				var d float64
				for j := range v {
					d += float64(v[j]) * x[j]
				}
				d *= w * w
				for j := range v {
					y[j] += d * float64(v[j])
				}
			}
			var nrm float64
			for _, t := range y {
				nrm += t * t
			}
			nrm = math.Sqrt(nrm)
			for j := range y {
				y[j] /= nrm
			}
			x = y
		}
	}
	var nrm float64
	for _, t := range x {
		nrm += t * t
	}
	nrm = math.Sqrt(nrm)
	l.opt.pcFromCorpus = make([]float32, l.dim)
	for j := range x {
		l.opt.pcFromCorpus[j] = float32(x[j] / nrm)
	}
}

type tok struct {
	w    string
	name bool // capitalized inside a sentence
}

// tokens splits text like vector.Tokenize and marks capitalized words that do not start a
// sentence.
func (l *lab) tokens(text string) []tok {
	var out []tok
	// Re-tokenize word by word to know capitalization: split on spaces, then Tokenize each.
	sentenceStart := true
	for fi, f := range strings.Fields(text) {
		r, _ := utf8.DecodeRuneInString(f)
		capital := unicode.IsUpper(r)
		if fi == 0 && l.opt.Label && capital && strings.HasSuffix(f, ":") {
			sentenceStart = false
		}
		for _, w := range vector.Tokenize(f) {
			if !l.opt.NoContract {
				if ex, ok := vector.Contraction(w); ok {
					for _, e := range ex {
						out = append(out, tok{w: e})
					}
					continue
				}
			}
			out = append(out, tok{w: w, name: capital && !sentenceStart && w != "i"})
			capital = false
		}
		last, _ := utf8.DecodeLastRuneInString(f)
		sentenceStart = last == '.' || last == '!' || last == '?' || last == ':'
	}
	return out
}

// lookup returns the word's row, trying the singular of an unknown plural; -1 if unknown.
func (l *lab) lookup(w string) (int, string) {
	if i, ok := l.index[w]; ok {
		return i, w
	}
	if !l.opt.NoPlural {
		for _, s := range singulars(w) {
			if i, ok := l.index[s]; ok {
				return i, s
			}
		}
	}
	return -1, w
}

func singulars(w string) []string {
	n := len(w)
	var out []string
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		out = append(out, w[:n-3]+"y")
	case n > 3 && strings.HasSuffix(w, "es"):
		out = append(out, w[:n-2], w[:n-1])
	case n > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		out = append(out, w[:n-1])
	}
	return out
}

func (l *lab) weight(rank int, w string) float64 {
	switch l.opt.Weights {
	case "none":
		return 1
	case "subtlex", "max", "geo":
		a := l.opt.StoreA
		if a == 0 {
			a = 1e-3
		}
		pz := 1 / (float64(rank+1) * zipfH)
		c, ok := subtlex[w]
		ps := float64(c) / subtlexTotal
		var p float64
		switch {
		case !ok && l.opt.Weights == "subtlex":
			p = pz * l.opt.ZipfScale
		case !ok:
			p = pz
		case l.opt.Weights == "subtlex":
			p = ps
		case l.opt.Weights == "max":
			p = max(ps, pz)
		default:
			p = math.Sqrt(ps * pz)
		}
		return a / (a + p)
	case "store":
		if l.opt.StorePrior > 0 {
			p := 1 / (float64(rank+1) * zipfH)
			if rank < len(l.words) {
				p = (float64(l.vcount[rank]) + l.opt.StorePrior*p) / (float64(l.vtotal) + l.opt.StorePrior)
			}
			return l.a / (l.a + p)
		}
		a := l.opt.StoreA
		if a == 0 {
			a = 1e-3
		}
		p := float64(l.counts[w]) / float64(max(l.total, 1))
		return a / (a + p)
	}
	p := 1 / (float64(rank+1) * zipfH)
	return l.a / (l.a + p)
}

func (l *lab) raw(text string) []float32 { return l.rawKind(text, vector.Document) }

func (l *lab) rawKind(text string, kind vector.Kind) []float32 {
	v := make([]float32, l.dim)
	toks := l.tokens(text)
	nw := 0
	for _, t := range toks {
		if l.opt.Stop && vector.IsStopword(t.w) || l.opt.Time && kind == vector.Query && vector.IsTimeWord(t.w) {
			continue
		}
		row, w := l.lookup(t.w)
		var wv []float32
		rank := row
		if row < 0 && isNumber(t.w) {
			switch l.opt.Numbers {
			case "ngram":
			case "words":
				if i, err := strconv.Atoi(t.w); err == nil && i <= 20 {
					row, w = l.lookup(numberWords[i])
					rank = row
				} else {
					continue
				}
			default:
				continue
			}
		} else if row < 0 && utf8.RuneCountInString(t.w) == 1 && l.opt.Letters != "ngram" {
			continue
		}
		if row < 0 {
			if l.opt.OOV == "skip" {
				continue
			}
			wv = ngramVector(t.w, l.dim, l.oovNorm())
			rank = len(l.words)
		} else {
			wv = l.vecs[row*l.dim : (row+1)*l.dim]
		}
		s := float32(l.weight(rank, w))
		if l.opt.NameLike > 0 && row >= 0 && l.nameScore(row) >= float32(l.opt.NameLike) {
			s *= float32(l.opt.NameLikeW)
		}
		side := l.opt.NameSide == "" || (l.opt.NameSide == "query") == (kind == vector.Query)
		if t.name && l.opt.NameWeight > 0 && side {
			s *= float32(l.opt.NameWeight)
		}
		for j := range v {
			v[j] += s * wv[j]
		}
		nw++
	}
	if nw > 0 {
		for j := range v {
			v[j] /= float32(nw)
		}
	}
	return v
}

func (l *lab) oovNorm() float32 {
	if l.opt.OOVNorm > 0 {
		return float32(l.opt.OOVNorm)
	}
	if l.opt.UnitWords {
		return 1
	}
	return 5
}

func (l *lab) embedKind(text string, kind vector.Kind) []float32 {
	v := l.rawKind(text, kind)
	var pc []float32
	switch l.opt.PC {
	case "none":
	case "store", "uniform", "mean", "top":
		if l.opt.pcFromCorpus == nil {
			l.fitVocabPC()
		}
		pc = l.opt.pcFromCorpus
	default:
		pc = l.pc
	}
	if pc != nil {
		var d float32
		for j := range v {
			d += v[j] * pc[j]
		}
		for j := range v {
			v[j] -= d * pc[j]
		}
	}
	normalize(v)
	return v
}

func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for j := range v {
		v[j] *= inv
	}
}

// ngramVector is the sum of pseudo-random vectors of the word's character 3-, 4- and 5-grams
// (of "<word>"), scaled to norm.
func ngramVector(w string, dim int, norm float32) []float32 {
	v := make([]float32, dim)
	rs := []rune("<" + w + ">")
	for n := 3; n <= 5; n++ {
		for i := 0; i+n <= len(rs); i++ {
			h := fnv.New64a()
			h.Write([]byte(string(rs[i : i+n])))
			s := h.Sum64()
			for j := range v {
				s += 0x9e3779b97f4a7c15
				z := s
				z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
				z = (z ^ (z >> 27)) * 0x94d049bb133111eb
				z ^= z >> 31
				v[j] += float32(int64(z)) / (1 << 63)
			}
		}
	}
	normalize(v)
	for j := range v {
		v[j] *= norm
	}
	return v
}

// neighbours returns up to m vocabulary words most similar to w (cosine ≥ minSim), among the
// first limit words.
func (l *lab) neighbours(w string, m int, minSim float32, limit int) []string {
	row, _ := l.lookup(w)
	if row < 0 {
		return nil
	}
	if l.unit == nil {
		l.unit = slices.Clone(l.vecs)
		for i := range len(l.words) {
			normalize(l.unit[i*l.dim : (i+1)*l.dim])
		}
	}
	q := l.unit[row*l.dim : (row+1)*l.dim]
	type cand struct {
		i int
		s float32
	}
	var best []cand
	for i := range min(limit, len(l.words)) {
		if i == row {
			continue
		}
		var d float32
		u := l.unit[i*l.dim : (i+1)*l.dim]
		for j := range q {
			d += q[j] * u[j]
		}
		if d < minSim {
			continue
		}
		best = append(best, cand{i, d})
	}
	slices.SortFunc(best, func(a, b cand) int {
		if a.s > b.s {
			return -1
		}
		if a.s < b.s {
			return 1
		}
		return a.i - b.i
	})
	var out []string
	for _, c := range best {
		if len(out) == m {
			break
		}
		out = append(out, l.words[c.i])
	}
	return out
}

var (
	subtlex      = map[string]int{}
	subtlexTotal float64
)

func loadSubtlex(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var list []struct {
		Word  string
		Count int
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return err
	}
	for _, e := range list {
		w := strings.ToLower(e.Word)
		subtlex[w] += e.Count
		subtlexTotal += float64(e.Count)
	}
	return nil
}

func isNumber(w string) bool {
	for _, r := range w {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

var numberWords = strings.Fields("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty")

// seedNames are common English first names, whose centroid is the "person name" direction.
var seedNames = strings.Fields(`james john robert michael william david richard joseph thomas charles
	christopher daniel matthew anthony mark steven paul andrew joshua kevin brian george edward
	mary patricia jennifer linda elizabeth barbara susan jessica sarah karen lisa nancy betty
	margaret sandra ashley emily donna michelle carol amanda melissa deborah stephanie rebecca laura`)

func (l *lab) nameScore(row int) float32 {
	if l.nameC == nil {
		l.nameC = make([]float32, l.dim)
		for _, n := range seedNames {
			r, ok := l.index[n]
			if !ok {
				continue
			}
			u := slices.Clone(l.vecs[r*l.dim : (r+1)*l.dim])
			normalize(u)
			for j := range u {
				l.nameC[j] += u[j]
			}
		}
		normalize(l.nameC)
		l.nameS = make([]float32, len(l.words))
		for i := range l.words {
			u := slices.Clone(l.vecs[i*l.dim : (i+1)*l.dim])
			normalize(u)
			var d float32
			for j := range u {
				d += u[j] * l.nameC[j]
			}
			l.nameS[i] = d
		}
	}
	return l.nameS[row]
}
