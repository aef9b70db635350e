package rank

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ownsona/ownsona/vector"
)

// Who a question and a memory are about. "What coffee should I buy?" asks about the user;
// "My partner Sam likes green tea, not coffee" is about Sam, and shares the question's topic
// word all the same; "what does Sam like to drink?" asks about Sam, not "I drink my coffee
// black". Ranking by words alone cannot tell them apart: Params.Who lowers the memories about
// someone else.

// asked is who a question asks about: the user (it says I, me, my, we or our and names no
// one), or the people it names (its capitalized words past the first, and a relative after my
// or our: "my son", "our dog"); neither when it is unclear.
type asked struct {
	self   bool
	people []string // lowercased as vector.Tokenize has them
}

func askedOf(q string) asked {
	var a asked
	first, firstPerson := true, false
	prev := ""
	for f := range strings.FieldsSeq(q) {
		toks := vector.Tokenize(f)
		if len(toks) == 0 {
			continue
		}
		w := toks[0]
		r, _ := utf8.DecodeRuneInString(f)
		switch {
		case selfWords[w]:
			firstPerson = true
		case relatives[w] && (prev == "my" || prev == "our"):
			a.people = appendNew(a.people, w)
		case !first && unicode.IsUpper(r):
			a.people = appendNew(a.people, w)
		}
		prev, first = w, strings.ContainsAny(f[len(f)-1:], ".?!:")
	}
	a.self = firstPerson && len(a.people) == 0
	return a
}

func appendNew(list []string, w string) []string {
	if !slices.Contains(list, w) {
		list = append(list, w)
	}
	return list
}

// elsewhere reports whether memory text is about someone other than a asks about: for a
// question about the user, a text whose subject is another person ("My partner Sam likes…",
// "Colby works…", "Sam's birthday…"); for a question naming people, a text that names none of
// them.
func (a asked) elsewhere(text string) bool {
	if len(a.people) > 0 {
		for _, p := range a.people {
			if hasWord(text, p) {
				return false
			}
		}
		return true
	}
	if !a.self {
		return false
	}
	fs := strings.Fields(text)
	if len(fs) < 2 {
		return false
	}
	w0, w1 := strings.ToLower(fs[0]), strings.ToLower(strings.Trim(fs[1], ",.;:"))
	if (w0 == "my" || w0 == "our") && relatives[w1] {
		return true // "My partner Sam…", "Our dog Pepper…"
	}
	r, _ := utf8.DecodeRuneInString(fs[0])
	if !unicode.IsUpper(r) || selfWords[w0] {
		return false
	}
	// A capitalized first word that is a name: possessive ("Sam's birthday") or the subject of
	// a verb in the third person ("Colby works", "Sam is").
	if strings.HasSuffix(w0, "'s") || strings.HasSuffix(w0, "’s") {
		return true
	}
	return w1 == "is" || w1 == "was" || w1 == "has" || (len(w1) > 3 && strings.HasSuffix(w1, "s") && !strings.HasSuffix(w1, "ss"))
}

var (
	selfWords = map[string]bool{"i": true, "me": true, "my": true, "mine": true, "myself": true, "we": true, "us": true, "our": true, "ours": true, "im": true, "ive": true, "id": true}
	relatives = map[string]bool{
		"partner": true, "wife": true, "husband": true, "spouse": true, "boyfriend": true, "girlfriend": true,
		"son": true, "daughter": true, "child": true, "children": true, "kid": true, "kids": true, "baby": true,
		"mother": true, "mom": true, "mum": true, "father": true, "dad": true, "parents": true,
		"sister": true, "brother": true, "grandmother": true, "grandfather": true, "grandma": true, "grandpa": true,
		"aunt": true, "uncle": true, "cousin": true, "niece": true, "nephew": true, "friend": true,
		"boss": true, "colleague": true, "neighbour": true, "neighbor": true, "dog": true, "cat": true,
	}
)

// hasWord reports whether text has the word w (lowercase, as vector.Tokenize gives it) as a
// whole word, ignoring case, without allocating: a search reads every candidate's text.
func hasWord(text, w string) bool {
	for i := 0; i+len(w) <= len(text); i++ {
		if !strings.EqualFold(text[i:i+len(w)], w) {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+len(w):])
		if !isWordRune(before) && !isWordRune(after) {
			return true
		}
	}
	return false
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}
