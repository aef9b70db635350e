package memory

// Possible contradictions. When a new memory says nearly what a stored one says but with other
// details ("I live in Berlin" after "I live in Paris"), remember lists the stored one under
// possible_contradictions, so that the assistant can ask the user whether the new one
// supersedes it. The store never decides: it links nothing by itself.
//
// The rule, for an active memory that nothing supersedes and that this write does not
// supersede:
//
//  1. it is similar: at least ContradictionThreshold (0.7) by the embedder's cosine (or, without
//     vectors, vector.LexicalSimilarity, the cosine of the word counts), and
//  2. its details differ (DetailsDiffer): one text is negated and the other not, or each text
//     has a detail the other lacks. Details are the words with a digit (numbers, dates, times:
//     "3", "2026-05-01", "5pm") and the capitalized words that are not a common sentence
//     opener (names and places: "Berlin", "Maria"; "I", "My", "The" … are not).
//
// So "My son lives in Los Angeles" and "My son lives in Denver" are possible contradictions,
// as are "I have 2 cats" and "I have 3 cats", and "I like jazz" and "I don't like jazz"; "My
// son lives in Los Angeles" and "My son lives in Los Angeles with Maria" are not (the second
// adds a detail and drops none), nor are two texts with the same details.

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ContradictionThreshold is the similarity from which a stored memory with other details is a
// possible contradiction of a new one. It is below the near-duplicate threshold (0.9 by
// default) because a change of place or name moves the texts apart: "I live in Paris" and "I
// live in Berlin" score 0.79 with the builtin embedder and 0.75 lexically, "My son lives in
// Los Angeles" and "My son lives in Denver" 0.89 and 0.73, while "I like green tea" and "My
// dentist is Dr Jones" score 0.39 and 0.
const ContradictionThreshold = 0.7

// DetailsDiffer reports whether a and b differ in their details: one is negated ("not",
// "never", "no", "n't" …) and the other not, or each has a detail (a word with a digit, or a
// capitalized word that is not a common sentence opener) that the other lacks.
func DetailsDiffer(a, b string) bool { return details(a).differ(details(b)) }

// textDetails are a text's details, lowercased, distinct and sorted, and whether it is
// negated. A write compares one new text with each of its near duplicates: it reads the new
// text's once.
type textDetails struct {
	words   []string
	negated bool
}

// differ is DetailsDiffer of the texts of a and b.
func (a textDetails) differ(b textDetails) bool {
	if a.negated != b.negated {
		return true
	}
	return hasOther(a.words, b.words) && hasOther(b.words, a.words)
}

// hasOther reports whether sorted x has a word that sorted y lacks.
func hasOther(x, y []string) bool {
	j := 0
	for _, w := range x {
		for j < len(y) && y[j] < w {
			j++
		}
		if j == len(y) || y[j] != w {
			return true
		}
	}
	return false
}

// details are text's details. Its words are the runs of letters, digits, apostrophes and
// hyphens, with the apostrophes and hyphens at their ends trimmed; only a word with a capital or
// a typographic apostrophe is copied (to lowercase it).
func details(text string) textDetails {
	var d textDetails
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		if !inWord(r) {
			i += n
			continue
		}
		j := i + n
		for j < len(text) {
			r, n := utf8.DecodeRuneInString(text[j:])
			if !inWord(r) {
				break
			}
			j += n
		}
		w := strings.Trim(text[i:j], "'’-")
		i = j
		if w == "" {
			continue
		}
		lower := w
		if strings.ContainsFunc(w, func(r rune) bool { return r == '’' || unicode.ToLower(r) != r }) {
			lower = strings.ToLower(strings.ReplaceAll(w, "’", "'"))
		}
		first, _ := utf8.DecodeRuneInString(w)
		switch {
		case negations[lower] || strings.HasSuffix(lower, "n't"):
			d.negated = true
		case strings.ContainsFunc(w, unicode.IsDigit),
			unicode.IsUpper(first) && !openers[lower] && !strings.HasPrefix(lower, "i'"):
			d.words = append(d.words, lower)
		}
	}
	slices.Sort(d.words)
	d.words = slices.Compact(d.words)
	return d
}

// inWord reports whether r belongs to a word of details.
func inWord(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’' || r == '-'
}

var negations = setOf("not no never nobody nothing none neither nor cannot nowhere")

// openers are words written with a capital only because a sentence starts with them (or, for
// the days and months' neighbours, never names): pronouns, articles, and the common openers.
var openers = setOf(`i a an the my our your his her their its this that these those there here
	we you he she they it me us them mine yours ours theirs
	and but or so yet if when while since because although though after before then also
	today yesterday tomorrow now currently recently usually always sometimes often
	in on at for from to with by of about as into over under near
	is are was were be been am has have had do does did will would should can could may might must
	what who where why how which please remember note yes ok okay`)

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
