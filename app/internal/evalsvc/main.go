// Command evalsvc measures retrieval through the real memory store (app/memory), as the tools
// use it: on a fresh file it remembers every memory of a dataset, asks each question as recall
// does (limit 20, filtered by the conversation's tag) and prints recall@1/5/10/20 and the MRR
// of the first evidence hit, once per embedder.
//
//	go run ./app/internal/evalsvc -data ../shared/eval/locomo-dev [-embedders builtin,none] [-cv=false]
//
// The dataset is a directory with memories.jsonl ({"key","text","tags","created_at"}) and
// queries.jsonl ({"question","evidence":[keys]}); a query searches the conversation (tag) of
// its first evidence, as ../shared/eval/README.md prescribes. A memory's key is
// "<conversation>:<session>:<turn>"; the turns of one session share created_at.
//
// Memories are written as an assistant writes them: the turns of one session in one Remember
// call (remember_batch) at the session's time, so that a memory's context (the memories written
// with it, app/memory's ContextWindow) is its session. Rows show the ranking without context,
// with the shipped context weights, other ways of writing the same turns (with a session_id,
// or all in batches of 200 at once), and a control whose "neighbours" are random turns of the
// same conversation (each conversation's turns shuffled before writing): if the gain came from
// extra words rather than context, the control would gain too.
//
// With -cv (the default) it also chooses the context weights by leave-one-conversation-out
// cross-validation: for each conversation, the weights of a grid that score the best
// recall@10 on the other conversations' questions rank its own questions; the cross-validated
// figures average those held-out rankings, and the weights each fold chose are printed.
//
// Memories the store refuses (text that looks like a secret) are counted and their evidence can
// never be found.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

type evalMemory struct {
	Key       string    `json:"key"`
	Text      string    `json:"text"`
	Tags      []string  `json:"tags"`
	CreatedAt time.Time `json:"created_at"`
	// session is the session the turn is written in: its key's "<conversation>:<session>"
	// part, which stays with the slot when shuffle moves texts.
	session string
}

func (m *evalMemory) tag() string {
	if len(m.Tags) > 0 {
		return m.Tags[0]
	}
	return ""
}

type query struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
}

func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// newEmbedder is the embedder an OWNSONA_EMBEDDER value names, for the two measured here.
func newEmbedder(name string) (vector.Embedder, error) {
	switch name {
	case "builtin":
		return vector.NewBuiltin(), nil
	case "none":
		return nil, nil
	}
	return nil, fmt.Errorf("embedder %q: measure builtin or none", name)
}

// writing is a way of writing the dataset's memories into the store.
type writing int

const (
	bySession     writing = iota // one Remember per session, at the session's time
	withSessionID                // batches of 200 at the time of writing, each turn with its session_id
	inBatches                    // batches of 200 at the time of writing, nothing else (one sitting)
	shuffled                     // as bySession, each conversation's turns shuffled first: random neighbours
)

// clock is the store's clock, set to each session's time while it is written.
type clock struct {
	mu sync.Mutex
	t  time.Time // zero: time.Now
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t.IsZero() {
		return time.Now()
	}
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// corpus is a dataset written to a file: the file, and each key's memory id.
type corpus struct {
	db      *kv.DB
	clk     *clock
	idOf    map[string]uint64
	refused int
	stored  time.Duration
}

// write stores mems into a new file under dir, written as w says.
func write(dir string, emb vector.Embedder, mems []evalMemory, w writing) (*corpus, error) {
	db, err := kv.Open(filepath.Join(dir, fmt.Sprintf("eval-%d.db", w)), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return nil, err
	}
	c := &corpus{db: db, clk: &clock{}, idOf: map[string]uint64{}}
	store, err := memory.Open(db, memory.Config{Embedder: emb, Now: c.clk.now})
	if err != nil {
		db.Close()
		return nil, err
	}
	defer store.Close()
	if w == shuffled {
		mems = shuffle(mems)
	}
	var groups [][]evalMemory // what one Remember call writes
	switch w {
	case bySession, shuffled:
		for i := 0; i < len(mems); {
			j := i + 1
			for j < len(mems) && mems[j].session == mems[i].session {
				j++
			}
			groups = append(groups, mems[i:j])
			i = j
		}
	default:
		for i := 0; i < len(mems); i += 200 {
			groups = append(groups, mems[i:min(i+200, len(mems))])
		}
	}
	ctx := context.Background()
	start := time.Now()
	for _, g := range groups {
		drafts := make([]memory.Draft, len(g))
		for j, m := range g {
			drafts[j] = memory.Draft{Text: m.Text, Tags: m.Tags, Dedup: memory.DedupInsert}
			if w == withSessionID {
				drafts[j].SessionID = m.session
			}
		}
		if w == bySession || w == shuffled {
			c.clk.set(g[0].CreatedAt)
		}
		res, _, err := store.Remember(ctx, drafts, memory.Origin{Provider: "evalsvc", Client: "evalsvc"})
		if err != nil {
			db.Close()
			return nil, err
		}
		for j, r := range res {
			if r.Err != nil {
				c.refused++
				continue
			}
			c.idOf[g[j].Key] = r.ID
		}
	}
	c.clk.set(time.Time{})
	c.stored = time.Since(start)
	// Wait until every memory has its vector, so the figures are the steady state's.
	for store.EmbedderStatus().Pending > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	<-store.IndexReady()
	return c, nil
}

// shuffle returns mems with each conversation's texts shuffled among its turns, with a fixed
// seed: a text keeps its key (so its evidence is still found) but is written in the session
// and at the time of the slot it lands in.
func shuffle(mems []evalMemory) []evalMemory {
	out := slices.Clone(mems)
	r := rand.New(rand.NewPCG(16, 16))
	for i := 0; i < len(out); {
		j := i + 1
		for j < len(out) && out[j].tag() == out[i].tag() {
			j++
		}
		conv := out[i:j]
		r.Shuffle(len(conv), func(a, b int) {
			conv[a].Key, conv[b].Key = conv[b].Key, conv[a].Key
			conv[a].Text, conv[b].Text = conv[b].Text, conv[a].Text
		})
		i = j
	}
	return out
}

// scores are one query's recall@1/5/10/20 and reciprocal rank of its first evidence hit.
type scores [5]float64

var ks = [4]int{1, 5, 10, 20}

// run asks every question of qs over the corpus, with the context weights cw, and returns each
// question's scores and the median search time.
func (c *corpus) run(emb vector.Embedder, cw memory.ContextWeights, qs []query, tagOf map[string]string) ([]scores, time.Duration, error) {
	store, err := memory.Open(c.db, memory.Config{Embedder: emb, Now: c.clk.now, Context: &cw})
	if err != nil {
		return nil, 0, err
	}
	defer store.Close()
	<-store.IndexReady()
	ctx := context.Background()
	out := make([]scores, len(qs))
	lat := make([]time.Duration, len(qs))
	var wg sync.WaitGroup
	const workers = 2
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for qi := w; qi < len(qs); qi += workers {
				q := qs[qi]
				mq := memory.Query{Text: q.Question, Limit: 20}
				if len(q.Evidence) > 0 && tagOf[q.Evidence[0]] != "" {
					mq.Filter.Tags = []string{tagOf[q.Evidence[0]]}
				}
				t := time.Now()
				found := store.Search(ctx, mq)
				lat[qi] = time.Since(t)
				want := map[uint64]bool{}
				for _, k := range q.Evidence {
					if id, ok := c.idOf[k]; ok {
						want[id] = true
					}
				}
				for i, k := range ks {
					hits := 0
					for _, m := range found.Matches[:min(k, len(found.Matches))] {
						if want[m.Memory.ID] {
							hits++
						}
					}
					out[qi][i] = float64(hits) / float64(max(len(q.Evidence), 1))
				}
				for r, m := range found.Matches {
					if want[m.Memory.ID] {
						out[qi][4] = 1 / float64(r+1)
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	return out, lat[len(lat)/2], nil
}

// mean averages the scores of the questions in (nil: all).
func mean(s []scores, in []bool) scores {
	var sum scores
	n := 0
	for i, x := range s {
		if in != nil && !in[i] {
			continue
		}
		for j := range x {
			sum[j] += x[j]
		}
		n++
	}
	for j := range sum {
		sum[j] /= float64(max(n, 1))
	}
	return sum
}

func row(w io.Writer, name string, m scores, extra string) {
	fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", name, m[0], m[1], m[2], m[3], m[4], extra)
}

// grid is the context weights cross-validation chooses among (Lexical, Soft); without the
// builtin embedder only Lexical matters.
func grid(builtin bool) []memory.ContextWeights {
	lex := []float32{0, 0.3, 0.5, 0.7, 0.9}
	soft := []float32{0}
	if builtin {
		soft = []float32{0, 0.5, 0.7, 0.8, 0.9}
	}
	var out []memory.ContextWeights
	for _, l := range lex {
		for _, s := range soft {
			out = append(out, memory.ContextWeights{Lexical: l, Soft: s})
		}
	}
	return out
}

func evaluate(embedder string, mems []evalMemory, qs []query, cv bool, stdout io.Writer) error {
	emb, err := newEmbedder(embedder)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ownsona-evalsvc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	tagOf := map[string]string{}
	for _, m := range mems {
		tagOf[m.Key] = m.tag()
	}
	shipped := memory.ContextWeights{Lexical: vector.ContextLexicalWeight, Soft: vector.ContextSoftWeight}
	if emb == nil {
		shipped.Soft = 0
	}
	corpora := map[writing]*corpus{}
	defer func() {
		for _, c := range corpora {
			c.db.Close()
		}
	}()
	for _, w := range []writing{bySession, withSessionID, inBatches, shuffled} {
		c, err := write(dir, emb, mems, w)
		if err != nil {
			return err
		}
		corpora[w] = c
	}
	fmt.Fprintf(stdout, "\n%s embedder:\n\n", embedder)
	fmt.Fprintln(stdout, "| ranking | R@1 | R@5 | R@10 | R@20 | MRR | store time, search p50, refused |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
	c := corpora[bySession]
	measure := func(name string, c *corpus, cw memory.ContextWeights) ([]scores, error) {
		s, p50, err := c.run(emb, cw, qs, tagOf)
		if err != nil {
			return nil, err
		}
		row(stdout, name, mean(s, nil), fmt.Sprintf("%v, %v, %d", c.stored.Round(time.Millisecond), p50.Round(time.Microsecond), c.refused))
		return s, nil
	}
	steps := []struct {
		name string
		c    *corpus
		cw   memory.ContextWeights
	}{
		{"no context (before issue 16)", c, memory.ContextWeights{}},
		{fmt.Sprintf("context in BM25 only (×%.2g)", shipped.Lexical), c, memory.ContextWeights{Lexical: shipped.Lexical}},
		{fmt.Sprintf("**shipped**: context ×%.2g in BM25, ×%.2g in the soft match; each session one remember_batch", shipped.Lexical, shipped.Soft), c, shipped},
		{"the same, written in batches of 200 with each turn's session_id", corpora[withSessionID], shipped},
		{"the same, written in batches of 200 at once (one sitting: every turn joins the next)", corpora[inBatches], shipped},
		{"control: random neighbours (each conversation's turns shuffled before writing)", corpora[shuffled], shipped},
		{"control without context (the shuffled store)", corpora[shuffled], memory.ContextWeights{}},
	}
	if emb == nil {
		steps = slices.Delete(steps, 1, 2) // BM25 only is the shipped ranking
	}
	for _, st := range steps {
		if _, err := measure(st.name, st.c, st.cw); err != nil {
			return err
		}
	}
	if !cv {
		return nil
	}
	return crossValidate(emb, c, qs, tagOf, stdout)
}

// crossValidate chooses the context weights among grid by leave-one-conversation-out
// cross-validation and prints the held-out figures and each fold's choice.
func crossValidate(emb vector.Embedder, c *corpus, qs []query, tagOf map[string]string, stdout io.Writer) error {
	g := grid(emb != nil)
	all := make([][]scores, len(g))
	for i, cw := range g {
		s, _, err := c.run(emb, cw, qs, tagOf)
		if err != nil {
			return err
		}
		all[i] = s
	}
	convOf := make([]string, len(qs))
	var convs []string
	for i, q := range qs {
		if len(q.Evidence) > 0 {
			convOf[i] = tagOf[q.Evidence[0]]
		}
		if !slices.Contains(convs, convOf[i]) {
			convs = append(convs, convOf[i])
		}
	}
	slices.Sort(convs)
	held := make([]scores, len(qs))
	var chosen []string
	for _, conv := range convs {
		train := make([]bool, len(qs))
		for i := range qs {
			train[i] = convOf[i] != conv
		}
		// The best recall@10 on the other conversations; ties: the better MRR, then the
		// earlier weights of the grid.
		best := 0
		for i := range g {
			a, b := mean(all[i], train), mean(all[best], train)
			if c := cmp.Compare(a[2], b[2]); c > 0 || (c == 0 && a[4] > b[4]) {
				best = i
			}
		}
		for i := range qs {
			if !train[i] {
				held[i] = all[best][i]
			}
		}
		chosen = append(chosen, fmt.Sprintf("%s %.2g/%.2g", conv, g[best].Lexical, g[best].Soft))
	}
	row(stdout, "**cross-validated**: weights chosen on the other four conversations (leave one out)", mean(held, nil), "")
	fmt.Fprintf(stdout, "\nleave-one-conversation-out choices (BM25/soft context weight) over a grid of %d: %s\n", len(g), strings.Join(chosen, ", "))
	// Where the shipped weights stand in the grid, per conversation.
	fmt.Fprintln(stdout, "\n| context weights (BM25/soft) | R@10 all | "+strings.Join(convs, " | ")+" |")
	fmt.Fprintln(stdout, "|---|---|"+strings.Repeat("---|", len(convs)))
	for i, cw := range g {
		var b strings.Builder
		fmt.Fprintf(&b, "| %.2g/%.2g | %.3f |", cw.Lexical, cw.Soft, mean(all[i], nil)[2])
		for _, conv := range convs {
			in := make([]bool, len(qs))
			for j := range qs {
				in[j] = convOf[j] == conv
			}
			fmt.Fprintf(&b, " %.3f |", mean(all[i], in)[2])
		}
		fmt.Fprintln(stdout, b.String())
	}
	return nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evalsvc", flag.ContinueOnError)
	data := fs.String("data", "../shared/eval/locomo-dev", "directory holding memories.jsonl and queries.jsonl")
	embedders := fs.String("embedders", "none,builtin", "comma-separated OWNSONA_EMBEDDER values to measure")
	cv := fs.Bool("cv", true, "choose the context weights by leave-one-conversation-out cross-validation and print the held-out figures")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mems, err := readJSONL[evalMemory](filepath.Join(*data, "memories.jsonl"))
	if err != nil {
		return err
	}
	for i := range mems {
		m := &mems[i]
		m.session = m.Key
		if i := strings.LastIndexByte(m.Key, ':'); i > 0 {
			m.session = m.Key[:i]
		}
	}
	qs, err := readJSONL[query](filepath.Join(*data, "queries.jsonl"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d memories, %d queries, through app/memory (Remember, then Search limit 20 in the question's conversation)\n", *data, len(mems), len(qs))
	for _, e := range strings.Split(*embedders, ",") {
		if err := evaluate(strings.TrimSpace(e), mems, qs, *cv, stdout); err != nil {
			return fmt.Errorf("embedder %s: %w", e, err)
		}
	}
	return nil
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "evalsvc:", err)
		os.Exit(1)
	}
}
