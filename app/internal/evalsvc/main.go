// Command evalsvc measures retrieval through the real memory store (app/memory), as the tools
// use it: on a fresh file it remembers every memory of a dataset in batches of 200, asks each
// question as recall does (limit 20, filtered by the conversation's tag) and prints
// recall@1/5/10/20 and the MRR of the first evidence hit, once per embedder.
//
//	go run ./app/internal/evalsvc -data ../shared/eval/locomo-dev [-embedders builtin,none]
//
// The dataset is a directory with memories.jsonl ({"key","text","tags"}) and queries.jsonl
// ({"question","evidence":[keys]}); a query searches the conversation (tag) of its first
// evidence, as ../shared/eval/README.md prescribes. Memories the store refuses (text that looks
// like a secret) are counted and their evidence can never be found.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

type evalMemory struct {
	Key  string   `json:"key"`
	Text string   `json:"text"`
	Tags []string `json:"tags"`
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

func evaluate(embedder string, mems []evalMemory, qs []query, stdout io.Writer) error {
	emb, err := newEmbedder(embedder)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "ownsona-evalsvc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := kv.Open(filepath.Join(dir, "eval.db"), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return err
	}
	defer db.Close()
	store, err := memory.Open(db, memory.Config{Embedder: emb})
	if err != nil {
		return err
	}
	defer store.Close()
	ctx := context.Background()

	start := time.Now()
	idOf := map[string]uint64{}  // key → memory id
	tagOf := map[string]string{} // key → conversation tag
	refused := 0
	for i := 0; i < len(mems); i += 200 {
		batch := mems[i:min(i+200, len(mems))]
		drafts := make([]memory.Draft, len(batch))
		for j, m := range batch {
			drafts[j] = memory.Draft{Text: m.Text, Tags: m.Tags, Dedup: memory.DedupInsert}
			if len(m.Tags) > 0 {
				tagOf[m.Key] = m.Tags[0]
			}
		}
		res, _, err := store.Remember(ctx, drafts, memory.Origin{Provider: "evalsvc", Client: "evalsvc"})
		if err != nil {
			return err
		}
		for j, r := range res {
			if r.Err != nil {
				refused++
				continue
			}
			idOf[batch[j].Key] = r.ID
		}
	}
	stored := time.Since(start)
	// Wait until every memory has its vector and the graph is built, so the figures are the
	// steady state's.
	for store.EmbedderStatus().Pending > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	<-store.IndexReady()

	ks := []int{1, 5, 10, 20}
	recall := make([]float64, len(ks))
	var mrr float64
	var lat []time.Duration
	for _, q := range qs {
		mq := memory.Query{Text: q.Question, Limit: 20}
		if len(q.Evidence) > 0 && tagOf[q.Evidence[0]] != "" {
			mq.Filter.Tags = []string{tagOf[q.Evidence[0]]}
		}
		t := time.Now()
		found := store.Search(ctx, mq)
		lat = append(lat, time.Since(t))
		want := map[uint64]bool{}
		for _, k := range q.Evidence {
			if id, ok := idOf[k]; ok {
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
			recall[i] += float64(hits) / float64(max(len(q.Evidence), 1))
		}
		for r, m := range found.Matches {
			if want[m.Memory.ID] {
				mrr += 1 / float64(r+1)
				break
			}
		}
	}
	n := float64(len(qs))
	slices.Sort(lat)
	fmt.Fprintf(stdout, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %v | %v | %d |\n", embedder,
		recall[0]/n, recall[1]/n, recall[2]/n, recall[3]/n, mrr/n, stored.Round(time.Millisecond), lat[len(lat)/2].Round(time.Microsecond), refused)
	return nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evalsvc", flag.ContinueOnError)
	data := fs.String("data", "../shared/eval/locomo-dev", "directory holding memories.jsonl and queries.jsonl")
	embedders := fs.String("embedders", "none,builtin", "comma-separated OWNSONA_EMBEDDER values to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mems, err := readJSONL[evalMemory](filepath.Join(*data, "memories.jsonl"))
	if err != nil {
		return err
	}
	qs, err := readJSONL[query](filepath.Join(*data, "queries.jsonl"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d memories, %d queries, through app/memory (Remember in batches of 200, then Search limit 20 in the question's conversation)\n\n", *data, len(mems), len(qs))
	fmt.Fprintln(stdout, "| embedder | R@1 | R@5 | R@10 | R@20 | MRR | store time | search p50 | refused |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|---|---|")
	for _, e := range strings.Split(*embedders, ",") {
		if err := evaluate(strings.TrimSpace(e), mems, qs, stdout); err != nil {
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
