package vector

// The word lists behind the tokenizer's choices, for programs that measure them (the
// evaluation lab, cmd/evalret): one copy, so that what is measured is what runs.

// IsStopword reports whether token, a token of Tokenize, is one of the stopwords BM25 drops and
// the soft match skips: a common English function word or an apostrophe-less contraction
// ("dont", "im").
func IsStopword(token string) bool { return stopwords[token] }

// IsTimeWord reports whether token is one of the time words a query's vector leaves out and the
// soft match matches only with themselves ("days", "spring", "sunday").
func IsTimeWord(token string) bool { return timeWords[token] }

// Contraction returns the two words the builtin embedder spells a contraction token out as
// ("dont" is "do", "not"), and whether token is one.
func Contraction(token string) (words [2]string, ok bool) {
	words, ok = contractions[token]
	return words, ok
}
