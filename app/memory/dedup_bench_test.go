package memory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

var benchNames = strings.Fields(`Ana Ben Chloe Dev Elif Farid Greta Hugo Iris Jonas Kemal Lena Mateo Nora Omar Priya
	Quinn Rosa Sami Tara Umar Vera Wim Xena Yusuf Zoe`)

// loadTexts are n memory texts: the LoCoMo dev turns repeated with their speakers renamed in
// each round (so a round is not an exact copy of the last), else synthetic ones.
func loadTexts(tb testing.TB, n int) []string {
	base := memory.LocomoTexts(tb)
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
