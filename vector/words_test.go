package vector

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// analysisTexts returns texts of every kind the analysis must read as the text-based functions
// do: everyday sentences, rare vocabulary words, and words mixed with case, apostrophes,
// contractions, plurals, numbers, accents and punctuation.
func analysisTexts(tb testing.TB) []string {
	texts := []string{
		"", "the of and", "I don't like Colby's puppies, Zxqwvblorp!", "It’s O'Brien’s café — ÉCOLE?",
		"Caroline went to the LGBTQ support group yesterday; it was so powerful.",
		"We're painting the kids' rooms: puppies, studies, boxes & 1990s posters.",
		"what's up?? I'm   off to   Rome\tnext week\n(really!)", "naïve coöperation's résumé",
		"Melanie's 3 cats' toys... she'd've said \"won't\"", "classes bakes baked baking running",
	}
	texts = append(texts, softBenchTexts(150, 15)...)
	texts = append(texts, softRandomTexts(tb, 150, 12)...)
	g, err := loadBuiltin()
	if err != nil {
		tb.Fatal(err)
	}
	vocab := make([]string, g.numRows)
	for w, r := range g.rows {
		vocab[r] = w
	}
	for w := range contractions {
		vocab = append(vocab, w)
	}
	r := rand.New(rand.NewPCG(11, 12))
	seps := []string{" ", " ", " ", ", ", ". ", "'s ", "’s ", "' ", "s ", "es ", "ies ", "-", "!? ", "\n"}
	for range 300 {
		var sb strings.Builder
		for range 1 + r.IntN(25) {
			w := vocab[r.IntN(len(vocab))]
			if r.IntN(3) == 0 {
				w = vocab[r.IntN(2000)] // common words, stopwords among them
			}
			if r.IntN(5) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			sb.WriteString(w)
			sb.WriteString(seps[r.IntN(len(seps))])
		}
		texts = append(texts, sb.String())
	}
	return texts
}

// TestBuiltin_Analyze checks that what is fed from one analysis equals what the text-based
// functions compute from the text: BM25's terms and rankings, WordCounts' counts, and the soft
// match's scores, bit for bit, with and without context and counts.
func TestBuiltin_Analyze(t *testing.T) {
	b := NewBuiltin()
	texts := analysisTexts(t)
	as := make([]Analysis, len(texts))
	for i, text := range texts {
		as[i] = b.Analyze(text)
	}
	t.Run("BM25", func(t *testing.T) {
		byText, byAnalysis := NewBM25(), NewBM25()
		for i, text := range texts {
			if got, want := as[i].terms, terms(text); !slices.Equal(got, want) && len(got)+len(want) > 0 {
				t.Fatalf("terms of %q = %q, want %q", text, got, want)
			}
			byText.Add(uint64(i), text)
			byAnalysis.AddAnalysis(uint64(i), as[i])
		}
		for i := 0; i < len(texts); i += 7 {
			q := texts[i]
			if got, want := byAnalysis.Search(q, 20, nil), byText.Search(q, 20, nil); !sameScored(got, want) {
				t.Fatalf("Search(%q):\n got %v\nwant %v", q, got, want)
			}
		}
	})
	t.Run("WordCounts", func(t *testing.T) {
		byText, err := NewWordCounts()
		if err != nil {
			t.Fatal(err)
		}
		byAnalysis, _ := NewWordCounts()
		for i, text := range texts {
			byText.Add(text)
			byAnalysis.AddAnalysis(as[i])
		}
		for i := 0; i < len(texts); i += 3 {
			byText.Remove(texts[i])
			byAnalysis.RemoveAnalysis(as[i])
		}
		if byText.Total() != byAnalysis.Total() || !slices.Equal(byText.count, byAnalysis.count) {
			t.Fatalf("counts differ: totals %d and %d", byText.Total(), byAnalysis.Total())
		}
	})
	t.Run("SoftMatchWords", func(t *testing.T) {
		counts, _ := NewWordCounts()
		for _, a := range as {
			counts.AddAnalysis(a)
		}
		r := rand.New(rand.NewPCG(13, 14))
		var appended []float32
		for qi := 0; qi < len(texts); qi += 11 {
			query := texts[qi]
			// 60 candidates, each with up to 4 neighbours among the texts.
			idx := r.Perm(len(texts))[:60+4*60]
			docTexts := make([]string, len(idx))
			docs := make([]Words, len(idx))
			for i, x := range idx {
				docTexts[i], docs[i] = texts[x], as[x].Words
			}
			context := make([][]int, 60)
			for i := range context {
				for range r.IntN(5) {
					context[i] = append(context[i], 60+r.IntN(4*60))
				}
			}
			for _, c := range []struct {
				name   string
				w      float32
				counts *WordCounts
			}{{"plain", 0, nil}, {"context", ContextSoftWeight, nil}, {"context and counts", ContextSoftWeight, counts}} {
				got := b.SoftMatchWords(query, docs, context, c.w, c.counts)
				want := b.SoftMatchContext(query, docTexts, context, c.w, c.counts)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, query %q:\n got %v\nwant %v", c.name, query, got, want)
				}
				// Appending to a slice used by the calls before: the scores after what it holds.
				prefix := []float32{-1, -2}
				appended = b.AppendSoftMatchWords(append(appended[:0], prefix...), query, docs, context, c.w, c.counts)
				if !slices.Equal(appended[:2], prefix) || !slices.Equal(appended[2:], want) {
					t.Fatalf("%s, query %q: AppendSoftMatchWords gave %v", c.name, query, appended)
				}
			}
		}
		// A query without content words scores every text 0, whatever the slice held before.
		if slices.Max(appended) <= 0 {
			t.Fatal("no text scored above 0: the check below would prove nothing")
		}
		n := len(appended)
		docs := make([]Words, n)
		for i := range docs {
			docs[i] = as[i%len(as)].Words
		}
		if got := b.AppendSoftMatchWords(appended[:0], "the of and", docs, nil, 0, nil); len(got) != n || slices.Max(got) != 0 {
			t.Fatalf("a query of stopwords scored %v", got)
		}
	})
	t.Run("Words are sorted and distinct", func(t *testing.T) {
		for i, a := range as {
			if !slices.IsSorted(a.Words.rows) || len(slices.Compact(slices.Clone(a.Words.rows))) != a.Words.Len() {
				t.Fatalf("Words of %q are %v", texts[i], a.Words.rows)
			}
		}
	})
}

// BenchmarkBuiltin_SoftMatchWords compares the soft match over candidates with context, as the
// memory store runs it for a query (80 candidates with 4 neighbours each, every text given once),
// reading the texts (SoftMatchContext, the old path) and reading their words analyzed
// beforehand (SoftMatchWords).
func BenchmarkBuiltin_SoftMatchWords(b *testing.B) {
	e := NewBuiltin()
	query := "What did Melanie paint after her trip to the beach with the kids?"
	counts, _ := NewWordCounts()
	for _, c := range []struct {
		name  string
		texts []string
	}{
		{"everyday", softBenchTexts(80*5, 15)},
		{"distinct", softRandomTexts(b, 80*5, 15)},
	} {
		docs := make([]Words, len(c.texts))
		for i, t := range c.texts {
			a := e.Analyze(t)
			docs[i] = a.Words
			counts.AddAnalysis(a)
		}
		context := make([][]int, 80)
		for i := range context {
			context[i] = []int{80 + 4*i, 80 + 4*i + 1, 80 + 4*i + 2, 80 + 4*i + 3}
		}
		b.Run(c.name+"/texts", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.SoftMatchContext(query, c.texts, context, ContextSoftWeight, counts)
			}
		})
		b.Run(c.name+"/words", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.SoftMatchWords(query, docs, context, ContextSoftWeight, counts)
			}
		})
	}
}

// BenchmarkBuiltin_Analyze measures a store's load of texts into BM25 and WordCounts: each
// reading the text (the old path: two tokenizations), and one Analyze feeding both. It reports
// the heap that keeping every text's Words takes, per text ("B/words"), for texts of 15 words.
func BenchmarkBuiltin_Analyze(b *testing.B) {
	e := NewBuiltin()
	const n = 20_000
	texts := softBenchTexts(n, 15)
	e.Analyze("") // load
	b.Run("texts", func(b *testing.B) {
		for b.Loop() {
			lex, counts := NewBM25(), must(NewWordCounts())
			for i, t := range texts {
				lex.Add(uint64(i), t)
				counts.Add(t)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/text")
	})
	b.Run("analysis", func(b *testing.B) {
		for b.Loop() {
			lex, counts := NewBM25(), must(NewWordCounts())
			for i, t := range texts {
				a := e.Analyze(t)
				lex.AddAnalysis(uint64(i), a)
				counts.AddAnalysis(a)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/text")
	})
	b.Run("words kept", func(b *testing.B) {
		var perText float64
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			kept := make([]Words, n)
			for i, t := range texts {
				kept[i] = e.Analyze(t).Words
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			perText = float64(after.HeapAlloc-before.HeapAlloc) / n
			runtime.KeepAlive(kept)
		}
		b.ReportMetric(perText, "B/words")
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprintf("must: %v", err))
	}
	return v
}
