package memory_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

// BenchmarkStore_Open measures opening a file of 100k memories with their vectors (the LoCoMo
// dev memories repeated with the speakers renamed, else synthetic texts), written once per run
// through remember in batches of 1000 with the insert policy and the builtin embedder. It
// reports the milliseconds to open (the graph build is left out: it runs after Open returns),
// the file's size, and the heap in use after the load and a GC, with the store open.
func BenchmarkStore_Open(b *testing.B) {
	const n, batch = 100_000, 1000
	path := filepath.Join(b.TempDir(), "ownsona.db")
	func() {
		s, db := openAt(b, path, memory.Config{Embedder: vector.NewBuiltin(), GraphThreshold: 1 << 30})
		defer db.Close()
		defer s.Close()
		texts := loadTexts(b, n)
		for i := 0; i < n; i += batch {
			drafts := make([]memory.Draft, 0, batch)
			for _, t := range texts[i : i+batch] {
				drafts = append(drafts, memory.Draft{Text: t, Dedup: memory.DedupInsert})
			}
			if _, _, err := s.Remember(context.Background(), drafts, me); err != nil {
				b.Fatal(err)
			}
		}
	}()
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	emb := vector.NewBuiltin()
	var total time.Duration
	var heap uint64
	runs := 0
	for b.Loop() {
		runtime.GC()
		start := time.Now()
		s, db := openAt(b, path, memory.Config{Embedder: emb, GraphThreshold: 1 << 30})
		total += time.Since(start)
		runs++
		b.StopTimer()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		heap = ms.HeapInuse
		if got := s.Count(memory.Filter{}); got != n {
			b.Fatalf("opened %d memories, want %d", got, n)
		}
		s.Close()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(runs), "ms/open")
	b.ReportMetric(float64(fi.Size())/(1<<20), "file_MiB")
	b.ReportMetric(float64(heap)/(1<<20), "heap_MiB")
}
