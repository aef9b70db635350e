package memtext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tag limits.
const (
	MinTagLength = 2  // characters in a normalized tag, at least
	MaxTagLength = 64 // characters in a normalized tag, at most
	MaxTags      = 32 // distinct tags on one memory or in one filter, at most
)

// synonyms folds common variants onto one tag, mostly plurals and abbreviations onto the
// singular. Keys and values are normalized tags, and no value is a key, so normalization stays
// idempotent. The package doc lists the same map for users; keep the two in step.
var synonyms = map[string]string{
	"fam":         "family",
	"families":    "family",
	"kid":         "child",
	"kids":        "child",
	"children":    "child",
	"friends":     "friend",
	"pets":        "pet",
	"hobbies":     "hobby",
	"pref":        "preference",
	"prefs":       "preference",
	"preferences": "preference",
	"bday":        "birthday",
	"birthdays":   "birthday",
	"job":         "work",
	"jobs":        "work",
	"medical":     "health",
	"to-do":       "todo",
	"todos":       "todo",
	"trips":       "travel",
	"travels":     "travel",
	"traveling":   "travel",
	"travelling":  "travel",
	"recipes":     "recipe",
	"goals":       "goal",
}

// folds maps lowercase Latin letters with diacritics, and ligatures, to ASCII.
var folds = func() map[rune]string {
	m := map[rune]string{'æ': "ae", 'œ': "oe", 'ß': "ss", 'þ': "th", 'ĳ': "ij"}
	for base, letters := range map[string]string{
		"a": "àáâãäåāăąǎ",
		"c": "çćĉċč",
		"d": "ďđð",
		"e": "èéêëēĕėęě",
		"g": "ĝğġģ",
		"h": "ĥħ",
		"i": "ìíîïĩīĭįıǐ",
		"j": "ĵ",
		"k": "ķĸ",
		"l": "ĺļľŀł",
		"n": "ñńņňŉŋ",
		"o": "òóôõöøōŏőơǒ",
		"r": "ŕŗř",
		"s": "śŝşšſș",
		"t": "ţťŧț",
		"u": "ùúûüũūŭůűųưǔ",
		"w": "ŵ",
		"y": "ýÿŷ",
		"z": "źżž",
	} {
		for _, r := range letters {
			m[r] = base
		}
	}
	return m
}()

// NormalizeTag normalizes one tag (see the package doc): lowercase, accents folded, runs of
// whitespace, underscores and hyphens to one hyphen, other characters outside [a-z0-9] removed,
// hyphens trimmed, synonyms applied. The result matches ^[a-z0-9]+(-[a-z0-9]+)*$ and has 2 to 64
// characters; otherwise the error is an *InputError on field "tag" whose reason quotes s.
func NormalizeTag(s string) (string, error) {
	var b strings.Builder
	hyphen := false // a separator is pending before the next letter or digit
	for _, r := range s {
		r = unicode.ToLower(r)
		if r >= '！' && r <= '～' { // full-width ASCII
			r = unicode.ToLower(r - '！' + '!')
		}
		var word string
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			word = string(r)
		case r == '-' || r == '_' || unicode.IsSpace(r):
			hyphen = true
			continue
		default:
			if word = folds[r]; word == "" {
				continue
			}
		}
		if hyphen && b.Len() > 0 {
			b.WriteByte('-')
		}
		hyphen = false
		b.WriteString(word)
	}
	t := b.String()
	if len(t) > MaxTagLength {
		return "", &InputError{"tag", fmt.Sprintf("%s is %d characters after normalization; the limit is %d", quote(s), len(t), MaxTagLength)}
	}
	if syn, ok := synonyms[t]; ok {
		t = syn
	}
	if len(t) < MinTagLength {
		return "", &InputError{"tag", fmt.Sprintf("%s keeps fewer than %d letters or digits; tags use a-z, 0-9 and hyphens", quote(s), MinTagLength)}
	}
	return t, nil
}

// quote returns s as a Go string literal, shortened to 40 characters.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) <= max {
		return fmt.Sprintf("%q", s)
	}
	i := 0
	for n := 0; n < max; n++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return fmt.Sprintf("%q…", s[:i])
}

// ParseTags reads the raw JSON value of a "tags" argument: absent or null → nil; an array of
// strings; or one comma-separated string. The strings then go through NormalizeTags. Errors are
// *InputError on field "tags[i]" (an array element) or "tags" (the whole, or an item of a
// comma-separated string).
func ParseTags(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &InputError{"tags", "is not a valid JSON string"}
		}
		return normalizeTags([]string{s}, false)
	case '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil, &InputError{"tags", "is not a valid JSON array"}
		}
		tags := make([]string, len(elems))
		for i, el := range elems {
			if el = bytes.TrimSpace(el); len(el) == 0 || el[0] != '"' || json.Unmarshal(el, &tags[i]) != nil {
				return nil, &InputError{fmt.Sprintf("tags[%d]", i), `must be a string such as "family"`}
			}
		}
		return NormalizeTags(tags)
	}
	return nil, &InputError{"tags", `must be an array of strings such as ["family", "health"] or a comma-separated string`}
}

// NormalizeTags normalizes a list of tags as every writer of memories must: commas separate
// tags inside an element too, blank items are skipped, each tag goes through NormalizeTag, and
// the result is deduplicated in first-seen order and holds at most MaxTags tags, or is nil when
// there are none. Errors are *InputError on field "tags[i]" or, for too many tags, "tags".
func NormalizeTags(tags []string) ([]string, error) { return normalizeTags(tags, true) }

func normalizeTags(tags []string, indexed bool) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for i, s := range tags {
		field := "tags"
		if indexed {
			field = fmt.Sprintf("tags[%d]", i)
		}
		for item := range strings.SplitSeq(s, ",") {
			if strings.TrimSpace(item) == "" {
				continue
			}
			t, err := NormalizeTag(item)
			if err != nil {
				return nil, &InputError{field, err.(*InputError).Reason}
			}
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	if len(out) > MaxTags {
		return nil, &InputError{"tags", fmt.Sprintf("has %d distinct tags; the limit is %d", len(out), MaxTags)}
	}
	return out, nil
}
