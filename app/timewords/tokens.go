package timewords

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// A token is one word of the query: a maximal run of letters and digits, so that a word inside
// another word ("Mayday", "yesterdays") is never a separate token. A hyphen between two digits
// stays inside the token, so "2024-03-12" is one token.
type token struct {
	w          string // the word, lowercased
	start, end int    // its bytes in the query
	join       bool   // only spaces or hyphens separate it from the previous token
	comma      bool   // spaces and one comma separate it from the previous token ("March 12, 2024")
	poss       bool   // a possessive 's follows it ("May's", "Friday's")
}

// tokenize splits query into tokens. It never fails: bytes that are not valid UTF-8 and every
// character that is neither a letter nor a digit only separate tokens.
func tokenize(query string) []token {
	var toks []token
	prevEnd := 0
	for i := 0; i < len(query); {
		r, size := utf8.DecodeRuneInString(query[i:])
		if !isWordRune(r) {
			i += size
			continue
		}
		start := i
		for i < len(query) {
			r, size := utf8.DecodeRuneInString(query[i:])
			if isWordRune(r) {
				i += size
				continue
			}
			if r == '-' && isDigitBefore(query, i) && isDigitAt(query, i+1) {
				i++
				continue
			}
			break
		}
		sep := query[prevEnd:start]
		t := token{
			w:     strings.ToLower(query[start:i]),
			start: start,
			end:   i,
			join:  len(toks) > 0 && joins(sep),
			comma: len(toks) > 0 && joinsWithComma(sep),
			poss:  possessive(query[i:]),
		}
		toks = append(toks, t)
		prevEnd = i
	}
	return toks
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func isDigitBefore(s string, i int) bool { return i > 0 && s[i-1] >= '0' && s[i-1] <= '9' }
func isDigitAt(s string, i int) bool     { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// joins reports whether sep may sit inside one time expression: spaces, tabs, line breaks and
// hyphens ("last-week"), but no other punctuation, so "Before, may I ask" and "in. March" stay
// apart.
func joins(sep string) bool {
	for _, r := range sep {
		if r != '-' && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// joinsWithComma reports whether sep is spaces around exactly one comma.
func joinsWithComma(sep string) bool {
	before, after, found := strings.Cut(sep, ",")
	return found && joins(before) && joins(after) && !strings.Contains(after, "-") && !strings.Contains(before, "-")
}

// possessive reports whether rest begins with 's or ’s and then a non-letter.
func possessive(rest string) bool {
	for _, apos := range []string{"'", "\u2019"} {
		if after, ok := strings.CutPrefix(rest, apos); ok {
			if next, ok := strings.CutPrefix(after, "s"); ok {
				r, _ := utf8.DecodeRuneInString(next)
				return next == "" || !isWordRune(r)
			}
			if next, ok := strings.CutPrefix(after, "S"); ok {
				r, _ := utf8.DecodeRuneInString(next)
				return next == "" || !isWordRune(r)
			}
		}
	}
	return false
}
