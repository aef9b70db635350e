// Command evalsvc measures retrieval through the real memory service, as a client sees it: it
// runs `ownsona stdio` in process on a fresh file, stores every memory of a dataset with
// remember_batch, asks each question with recall (limit 20, filtered by the conversation's tag)
// and prints recall@1/5/10/20 and the MRR of the first evidence hit, once per embedder.
//
//	go run ./app/internal/evalsvc -data ../shared/eval/locomo-dev [-embedders builtin,none]
//
// The dataset is a directory with memories.jsonl ({"key","text","tags"}) and queries.jsonl
// ({"question","evidence":[keys]}); a query searches the conversation (tag) of its first
// evidence, as ../shared/eval/README.md prescribes. Memories the server refuses (text that looks
// like a secret) are counted and their evidence can never be found.
package main

import (
	"bufio"
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

	"github.com/ownsona/ownsona/app"
)

type memory struct {
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

// client speaks newline-delimited JSON-RPC to an in-process `ownsona stdio`.
type client struct {
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (c *client) call(tool string, args any) (map[string]any, error) {
	c.id++
	a, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`+"\n", c.id, tool, a); err != nil {
		return nil, err
	}
	if !c.out.Scan() {
		return nil, fmt.Errorf("%s: no answer: %v", tool, c.out.Err())
	}
	var resp struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(c.out.Bytes(), &resp); err != nil {
		return nil, err
	}
	if resp.Error != nil || resp.Result.StructuredContent["ok"] != true {
		return nil, fmt.Errorf("%s: %s", tool, c.out.Text())
	}
	return resp.Result.StructuredContent, nil
}

func evaluate(embedder string, mems []memory, qs []query, stdout io.Writer) error {
	dir, err := os.MkdirTemp("", "ownsona-evalsvc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := map[string]string{"OWNSONA_EMBEDDER": embedder, "OWNSONA_LOG_LEVEL": "error"}
	done := make(chan error, 1)
	go func() {
		err := app.Run(ctx, []string{"stdio", "--db", filepath.Join(dir, "eval.db")}, func(k string) string { return env[k] }, inR, outW, io.Discard)
		outW.Close()
		done <- err
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	c := &client{in: inW, out: sc}

	start := time.Now()
	idOf := map[string]float64{} // key → memory id
	tagOf := map[string]string{} // key → conversation tag
	refused := 0
	for i := 0; i < len(mems); i += 200 {
		batch := mems[i:min(i+200, len(mems))]
		items := make([]map[string]any, len(batch))
		for j, m := range batch {
			items[j] = map[string]any{"text": m.Text, "tags": m.Tags}
			if len(m.Tags) > 0 {
				tagOf[m.Key] = m.Tags[0]
			}
		}
		p, err := c.call("remember_batch", map[string]any{"items": items, "dedup_policy": "insert"})
		if err != nil {
			return err
		}
		for _, r := range p["results"].([]any) {
			r := r.(map[string]any)
			k := batch[int(r["input_index"].(float64))].Key
			if r["ok"] == true {
				idOf[k] = r["memory_id"].(float64)
			} else {
				refused++
			}
		}
	}
	stored := time.Since(start)
	// Wait until every memory has its vector, so the figures are the steady state's.
	for {
		st, err := c.call("memory_stats", map[string]any{})
		if err != nil {
			return err
		}
		if st["embedder"].(map[string]any)["reembed_progress"].(map[string]any)["pending"] == 0.0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	ks := []int{1, 5, 10, 20}
	recall := make([]float64, len(ks))
	var mrr float64
	var lat []time.Duration
	for _, q := range qs {
		args := map[string]any{"query": q.Question, "limit": 20}
		if len(q.Evidence) > 0 && tagOf[q.Evidence[0]] != "" {
			args["tags"] = []string{tagOf[q.Evidence[0]]}
		}
		t := time.Now()
		p, err := c.call("recall", args)
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
		var got []float64
		for _, m := range p["matches"].([]any) {
			got = append(got, m.(map[string]any)["id"].(float64))
		}
		want := map[float64]bool{}
		for _, k := range q.Evidence {
			if id, ok := idOf[k]; ok {
				want[id] = true
			}
		}
		for i, k := range ks {
			hits := 0
			for _, id := range got[:min(k, len(got))] {
				if want[id] {
					hits++
				}
			}
			recall[i] += float64(hits) / float64(max(len(q.Evidence), 1))
		}
		for r, id := range got {
			if want[id] {
				mrr += 1 / float64(r+1)
				break
			}
		}
	}
	n := float64(len(qs))
	slices.Sort(lat)
	fmt.Fprintf(stdout, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %v | %v | %d |\n", embedder,
		recall[0]/n, recall[1]/n, recall[2]/n, recall[3]/n, mrr/n, stored.Round(time.Millisecond), lat[len(lat)/2].Round(time.Microsecond), refused)
	inW.Close()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("evalsvc", flag.ContinueOnError)
	data := fs.String("data", "../shared/eval/locomo-dev", "directory holding memories.jsonl and queries.jsonl")
	embedders := fs.String("embedders", "none,builtin", "comma-separated OWNSONA_EMBEDDER values to measure")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mems, err := readJSONL[memory](filepath.Join(*data, "memories.jsonl"))
	if err != nil {
		return err
	}
	qs, err := readJSONL[query](filepath.Join(*data, "queries.jsonl"))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d memories, %d queries, through `ownsona stdio` (remember_batch, then recall limit 20 in the question's conversation)\n\n", *data, len(mems), len(qs))
	fmt.Fprintln(stdout, "| embedder | R@1 | R@5 | R@10 | R@20 | MRR | store time | recall p50 (stdio round trip) | refused |")
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
