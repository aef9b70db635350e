package vector

import (
	"math"
	"strings"
	"unicode"
)

// Tokenize lowercases text and splits it into runs of Unicode letters and digits; a
// possessive or contracted "'s" is dropped ("Colby's" → "colby").
func Tokenize(text string) []string {
	var out []string
	rs := []rune(strings.ToLower(text))
	start := -1
	for i := 0; i <= len(rs); i++ {
		word := i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
		if word {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, string(rs[start:i]))
			start = -1
		}
		// Skip 's after an apostrophe at the end of a word.
		if i < len(rs) && (rs[i] == '\'' || rs[i] == '’') && i+1 < len(rs) && rs[i+1] == 's' &&
			(i+2 == len(rs) || !(unicode.IsLetter(rs[i+2]) || unicode.IsDigit(rs[i+2]))) {
			i++
		}
	}
	return out
}

// stopwords are common English words that carry little meaning for search.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers herself him himself his how i if in into is it its itself just me
		more most my myself no nor not now of off on once only or other our ours ourselves out over own same she
		should so some such than that the their theirs them themselves then there these they this those through
		to too under until up very was we were what when where which while who whom why will with would you your
		yours yourself yourselves also get got im ive id dont doesnt didnt`) {
		m[w] = true
	}
	return m
}()

// stem is a light English suffix stripper: plurals, -ing and -ed. Measured on the LoCoMo dev
// split it lifts BM25 recall@10 by about a point; it is deliberately crude and never applied
// to words of four letters or fewer.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		return w[:n-2]
	}
	return w
}

// terms is the BM25 view of a text: tokens without stopwords, stemmed.
func terms(text string) []string {
	toks := Tokenize(text)
	out := toks[:0]
	for _, t := range toks {
		if !stopwords[t] {
			out = append(out, stem(t))
		}
	}
	return out
}

// Cosine is the cosine similarity of a and b (not assumed normalized); 0 when either is zero or
// their lengths differ.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(dot / math.Sqrt(na*nb))
}

// LexicalSimilarity is the cosine of the term-frequency vectors of a's and b's tokens (every
// token, stopwords included): 1 for the same words in any order and case. It stands in for
// vector similarity in near-duplicate detection when no embedder is configured.
func LexicalSimilarity(a, b string) float32 {
	ta, tb := Tokenize(a), Tokenize(b)
	if len(ta) == 0 || len(tb) == 0 {
		return 0
	}
	ca := map[string]int{}
	for _, t := range ta {
		ca[t]++
	}
	cb := map[string]int{}
	for _, t := range tb {
		cb[t]++
	}
	var dot, na, nb float64
	for t, x := range ca {
		na += float64(x * x)
		dot += float64(x * cb[t])
	}
	for _, y := range cb {
		nb += float64(y * y)
	}
	return float32(dot / math.Sqrt(na*nb))
}
