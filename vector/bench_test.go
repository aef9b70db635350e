package vector

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
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
}
