package vector

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/internal/anndata"
)

// synthCorpus returns n texts of 8–40 words drawn from a Zipf-distributed vocabulary of 20,000
// pseudo-words, roughly the shape of short notes, and a sampler of query words.
func synthCorpus(n int) (docs []string, word func() string) {
	r := rand.New(rand.NewPCG(1, 1))
	zipf := rand.NewZipf(r, 1.1, 1, 19_999)
	vocab := make([]string, 20_000)
	for i := range vocab {
		var b []byte
		for x := i + 26*26; x > 0; x /= 26 {
			b = append(b, byte('a'+x%26))
		}
		vocab[i] = string(b) + "k" // no stemmer suffix
	}
	word = func() string { return vocab[zipf.Uint64()] }
	docs = make([]string, n)
	for i := range docs {
		var sb strings.Builder
		for range 8 + r.IntN(33) {
			sb.WriteString(word())
			sb.WriteByte(' ')
		}
		docs[i] = sb.String()
	}
	return docs, word
}

func BenchmarkBM25_Search(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		docs, word := synthCorpus(n)
		idx := NewBM25()
		for i, d := range docs {
			idx.Add(uint64(i+1), d)
		}
		queries := make([]string, 256)
		for i := range queries {
			queries[i] = word() + " " + word() + " " + word() + " " + word()
		}
		b.Run(fmt.Sprintf("docs=%dk", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				idx.Search(queries[i%len(queries)], 50, nil)
				i++
			}
		})
		b.Run(fmt.Sprintf("docs=%dk/filter=half", n/1000), func(b *testing.B) {
			b.ReportAllocs()
			even := func(id uint64) bool { return id%2 == 0 }
			i := 0
			for b.Loop() {
				idx.Search(queries[i%len(queries)], 50, even)
				i++
			}
		})
	}
}

func BenchmarkBM25_Add(b *testing.B) {
	docs, _ := synthCorpus(10_000)
	idx := NewBM25()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		idx.Add(uint64(i%len(docs)+1), docs[i%len(docs)])
		i++
	}
}

func BenchmarkExact_Search(b *testing.B) {
	const n, dim = 10_000, 256
	r := rand.New(rand.NewPCG(1, 1))
	e := NewExact(dim)
	for i := range n {
		e.Add(uint64(i+1), randVec(r, dim))
	}
	q := randVec(r, dim)
	b.Run(fmt.Sprintf("n=%dk/dim=%d", n/1000, dim), func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(n * dim * 4)) // the matrix scanned per search
		for b.Loop() {
			e.Search(q, 50, nil)
		}
	})
}

func BenchmarkTokenize(b *testing.B) {
	text := "Melanie: Hey Caroline! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?"
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		terms(text)
	}
}

// BenchmarkBM25_SearchContext measures the cost of context: the same queries on the same index
// without it (Search) and with every document's two neighbours on each side (ids ±1, ±2, as a
// store written in one sitting has them).
func BenchmarkBM25_SearchContext(b *testing.B) {
	const n = 100_000
	docs, word := synthCorpus(n)
	idx := NewBM25()
	for i, d := range docs {
		idx.Add(uint64(i+1), d)
	}
	for id := uint64(1); id <= n; id++ {
		var near []uint64
		for _, j := range []uint64{id - 2, id - 1, id + 1, id + 2} {
			if j >= 1 && j <= n {
				near = append(near, j)
			}
		}
		idx.SetContext(id, near, Speaks)
	}
	queries := make([]string, 256)
	for i := range queries {
		queries[i] = word() + " " + word() + " " + word() + " " + word()
	}
	for _, w := range []float32{0, ContextLexicalWeight} {
		b.Run(fmt.Sprintf("docs=%dk/context=%.2g", n/1000, w), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				idx.SearchContext(queries[i%len(queries)], 50, nil, w, nil)
				i++
			}
		})
	}
	// make bench's store (app's benchText): 6 to 15 words of 72, each in ~14% of the
	// documents, and a number of its own; queries of two of the words.
	common, cq := commonCorpus(n)
	for _, w := range []float32{0, ContextLexicalWeight} {
		b.Run(fmt.Sprintf("docs=%dk/vocab=72/context=%.2g", n/1000, w), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				common.SearchContext(cq[i%len(cq)], 50, nil, w, nil)
				i++
			}
		})
	}
}

// commonCorpus is an index of n documents like make bench's (6 to 15 words drawn uniformly
// from 72, then a number of their own), each with its two neighbours on either side as its
// context, and 256 queries of two of the words.
func commonCorpus(n int) (*BM25, []string) {
	r := rand.New(rand.NewPCG(7, 7))
	vocab := make([]string, 72)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%cz%c", 'a'+i%26, 'a'+i/26)
	}
	idx := NewBM25()
	for i := range n {
		var sb strings.Builder
		fmt.Fprint(&sb, i)
		for range 6 + r.IntN(10) {
			sb.WriteString(" " + vocab[r.IntN(len(vocab))])
		}
		idx.Add(uint64(i+1), sb.String())
	}
	for id := uint64(1); id <= uint64(n); id++ {
		var near []uint64
		for _, j := range []uint64{id - 2, id - 1, id + 1, id + 2} {
			if j >= 1 && j <= uint64(n) {
				near = append(near, j)
			}
		}
		idx.SetContext(id, near, Speaks)
	}
	queries := make([]string, 256)
	for i := range queries {
		queries[i] = vocab[r.IntN(len(vocab))] + " " + vocab[r.IntN(len(vocab))]
	}
	return idx, queries
}

// benchRecord stands for what a caller's filter reads: app/memory's filter looks the id up in
// a map of records and reads their fields, and at 100k records many of those reads miss the
// cache. Its size is about a memory record's.
type benchRecord struct {
	text    string
	_       []string // tags, for the size
	created int64
	_       [24]uint64
	pass    [6]bool // whether each of benchFilters' shares passes it
}

// benchFilter is a filter of a given share and kind for the lazy-filter benchmarks.
type benchFilter struct {
	name   string
	filter Filter
}

// benchFilters returns, for ids 0..n-1, filters passing about every id, 50, 20, 10, 5 and 1%
// of them, each of two kinds: "record" looks the id up in a map of records, as app/memory's filter does (the
// records allocated in id order, each with its text, as the store loads them), and "hash" is
// arithmetic on the id only (about a nanosecond: the case where asking first costs least).
// calls counts the calls of every filter.
func benchFilters(n int, calls *int) []benchFilter {
	recs := make(map[uint64]*benchRecord, n)
	text := strings.Repeat("a memory of about a hundred and fifty bytes ", 4)[:150]
	for i := range n {
		recs[uint64(i)] = &benchRecord{text: strings.Clone(text), created: int64(i)}
	}
	hash := func(id uint64) uint64 { return (id * 0x9e3779b97f4a7c15) >> 40 }
	var out []benchFilter
	for j, every := range []uint64{1, 2, 5, 10, 20, 100} {
		share := fmt.Sprintf("pass=%g%%", 100/float64(every))
		pass := func(id uint64) bool { return hash(id)%every == 0 }
		for id, m := range recs {
			m.pass[j] = pass(id)
		}
		out = append(out,
			benchFilter{"record/" + share, func(id uint64) bool {
				*calls++
				m := recs[id]
				return m != nil && m.created >= 0 && m.pass[j]
			}},
			benchFilter{"hash/" + share, func(id uint64) bool { *calls++; return pass(id) }},
		)
	}
	return out
}

// BenchmarkExact_SearchLazyFilter measures filtered exact searches (k 50, as recall asks) on
// 100k clustered 100-d vectors, in the same run: "new" is Search, "old" asks the filter about
// every vector first (searchEager, Search before it asked lazily), and "lazy-always" never
// asks first (search with askFirst 0). calls/op counts the filter's calls.
//
//	go test ./vector -run '^$' -bench 'Exact_SearchLazyFilter|HNSW_SearchLazyFilter'
func BenchmarkExact_SearchLazyFilter(b *testing.B) {
	const n, dim, k = 100_000, 100, 50
	set := anndata.Clustered(1, n, 1000, dim, 100)
	e := NewExact(dim)
	for i, v := range set.Base {
		e.Add(uint64(i), v)
	}
	var calls int
	for _, f := range benchFilters(n, &calls) {
		for _, impl := range []struct {
			name   string
			search func(q []float32, k int, filter Filter) []Scored
		}{
			{"new", e.Search},
			{"old", func(q []float32, k int, filter Filter) []Scored { return searchEager(e, q, k, filter) }},
			{"lazy-always", func(q []float32, k int, filter Filter) []Scored { return e.search(q, k, filter, 0) }},
		} {
			b.Run(fmt.Sprintf("%s/%s/%s", set.Name, f.name, impl.name), func(b *testing.B) {
				calls = 0
				i := 0
				for b.Loop() {
					impl.search(set.Queries[i%len(set.Queries)], k, f.filter)
					i++
				}
				b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
			})
		}
	}
}
