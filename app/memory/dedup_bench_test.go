package memory_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

// locomoMemories is the LoCoMo dev set's memories, read at run time; nil when the file is not
// there (it is never copied into the repository).
const locomoMemories = "/work/shared/eval/locomo-dev/memories.jsonl"

// locomoTexts returns the texts of the LoCoMo dev memories, or nil when the file is absent.
func locomoTexts(tb testing.TB) []string {
	tb.Helper()
	f, err := os.Open(locomoMemories)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			tb.Fatal(err)
		}
		out = append(out, rec.Text)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

var benchNames = strings.Fields(`Ana Ben Chloe Dev Elif Farid Greta Hugo Iris Jonas Kemal Lena Mateo Nora Omar Priya
	Quinn Rosa Sami Tara Umar Vera Wim Xena Yusuf Zoe`)

// loadTexts are n memory texts: the LoCoMo dev turns repeated with their speakers renamed in
// each round (so a round is not an exact copy of the last), else synthetic ones.
func loadTexts(tb testing.TB, n int) []string {
	base := locomoTexts(tb)
	out := make([]string, n)
	for i := range out {
		if len(base) == 0 {
			out[i] = fmt.Sprintf("%d %s %s %s", i, benchWords[i%len(benchWords)], benchWords[(i/7)%len(benchWords)], benchWords[(i/49)%len(benchWords)])
			continue
		}
		t, round := base[i%len(base)], i/len(base)
		if round > 0 {
			if speaker, rest, ok := strings.Cut(t, ": "); ok {
				t = benchNames[round%len(benchNames)] + fmt.Sprint(round) + " (was " + speaker + "): " + rest
			}
		}
		out[i] = t
	}
	return out
}

// BenchmarkStore_Remember_dedup measures loading 30k memories through remember in batches of
// 100 with the default dedup policy (near duplicates and possible contradictions are looked up
// for every item), with the builtin embedder: memories/s over the whole load.
func BenchmarkStore_Remember_dedup(b *testing.B) {
	const n, batch = 30_000, 100
	texts := loadTexts(b, n)
	for range b.N {
		s := MustOpen(b, vector.NewBuiltin())
		for i := 0; i < n; i += batch {
			drafts := make([]memory.Draft, 0, batch)
			for _, t := range texts[i:min(i+batch, n)] {
				drafts = append(drafts, memory.Draft{Text: t})
			}
			if _, _, err := s.Remember(context.Background(), drafts, me); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "memories/s")
}
