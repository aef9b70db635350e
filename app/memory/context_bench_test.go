package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

var benchWords = strings.Fields(`coffee tea garden sister brother mother father son daughter birthday
	meeting project deadline allergy doctor dentist holiday flight hotel car bike running marathon
	piano guitar book novel movie series recipe pasta sushi vegetarian peanuts dog cat school
	teacher office manager salary mortgage rent apartment house kitchen paint blue green winter
	summer ski beach lisbon berlin tokyo colby ana prefers likes hates works lives visits plans
	bought sold learning spanish german python go`)

// BenchmarkStore_Search_context measures what context costs a search at 100k memories written
// in batches of 200 in one sitting (so every memory has four neighbours, the most there can
// be), lexical only: the same queries alternate without and with context on one store, and
// the p50 of each and their ratio are reported.
func BenchmarkStore_Search_context(b *testing.B) {
	const n = 100_000
	s, r := benchStore(b, n)
	const queries = 300
	var off, on []time.Duration
	b.ResetTimer()
	for range queries {
		q := memory.Query{Text: benchWords[r.IntN(len(benchWords))] + " " + benchWords[r.IntN(len(benchWords))], Limit: 8}
		for _, w := range [][2]float32{{}, {vector.ContextLexicalWeight, vector.ContextSoftWeight}} {
			s.SetContextWeights(w[0], w[1])
			start := time.Now()
			s.Search(context.Background(), q)
			if w[0] == 0 {
				off = append(off, time.Since(start))
			} else {
				on = append(on, time.Since(start))
			}
		}
	}
	slices.Sort(off)
	slices.Sort(on)
	b.ReportMetric(float64(off[queries/2].Microseconds()), "p50_us_without")
	b.ReportMetric(float64(on[queries/2].Microseconds()), "p50_us_with")
	b.ReportMetric(float64(on[queries/2])/float64(off[queries/2]), "ratio")
}

// benchStore is a store of n memories written in batches of 200 with the insert policy,
// lexical only, and the random source that wrote them.
func benchStore(b *testing.B, n int) (*memory.Store, *rand.Rand) {
	b.Helper()
	s, db := openAt(b, filepath.Join(b.TempDir(), "db"), memory.Config{})
	b.Cleanup(func() { s.Close(); db.Close() })
	r := rand.New(rand.NewPCG(7, 7))
	text := func(i int) string {
		words := make([]string, 6+r.IntN(10))
		for j := range words {
			words[j] = benchWords[r.IntN(len(benchWords))]
		}
		return fmt.Sprintf("%d %s", i, strings.Join(words, " "))
	}
	for i := 0; i < n; i += 200 {
		drafts := make([]memory.Draft, 200)
		for j := range drafts {
			drafts[j] = memory.Draft{Text: text(i + j), Tags: []string{fmt.Sprint("t", r.IntN(20))}, Dedup: memory.DedupInsert}
		}
		if _, _, err := s.Remember(context.Background(), drafts, memory.Origin{Provider: "bench", Client: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	return s, r
}

// BenchmarkStore_Search_default measures a search with the zero Filter (active memories that
// nothing supersedes, what recall asks) at 100k memories, lexical only with context, 2% of
// them forgotten and 1% superseded: the p50 and p90 of 300 two-word queries.
func BenchmarkStore_Search_default(b *testing.B) {
	const n = 100_000
	s, r := benchStore(b, n)
	for id := uint64(1); id <= n; id += 50 {
		if _, err := s.Forget([]uint64{id}, memory.Forgetting{}); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < n/100; i++ {
		old := uint64(r.IntN(n) + 1)
		if m, err := s.Get(old); err != nil || m.Deleted() || m.Superseded() || len(m.Supersedes) > 0 {
			continue
		}
		if _, _, err := s.Remember(context.Background(), []memory.Draft{{Text: fmt.Sprint("correction ", i), Dedup: memory.DedupInsert, Supersedes: []uint64{old}}}, memory.Origin{Provider: "bench", Client: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	const queries = 300
	var took []time.Duration
	b.ResetTimer()
	for range queries {
		q := memory.Query{Text: benchWords[r.IntN(len(benchWords))] + " " + benchWords[r.IntN(len(benchWords))], Limit: 8}
		start := time.Now()
		s.Search(context.Background(), q)
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[queries/2].Microseconds()), "p50_us")
	b.ReportMetric(float64(took[queries*9/10].Microseconds()), "p90_us")
}
