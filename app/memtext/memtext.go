// Package memtext checks what a memory may hold: its text (whitespace, length, encoding), its
// tags (normalized to lowercase [a-z0-9-]) and whether the text looks like a secret that must
// never be stored. Every function is pure and safe for concurrent use.
package memtext

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// InputError is an argument that cannot be accepted, with the field at fault and a reason a
// model can act on.
type InputError struct{ Field, Reason string }

func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// NormalizeText collapses runs of spaces and tabs within a line to one space, trims every line,
// keeps at most one blank line between paragraphs, and trims the whole. It refuses invalid
// UTF-8, control characters other than newline and tab, an empty result and more than maxChars
// characters.
func NormalizeText(s string, maxChars int) (string, error) {
	if !utf8.ValidString(s) {
		return "", &InputError{"text", "is not valid UTF-8"}
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	for _, r := range s {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) {
			return "", &InputError{"text", fmt.Sprintf("contains the control character %U", r)}
		}
	}
	var paras []string
	blank := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || (unicode.IsSpace(r) && r != '\n') }), " ")
		if line == "" {
			blank = len(paras) > 0
			continue
		}
		if blank {
			paras = append(paras, "")
			blank = false
		}
		paras = append(paras, line)
	}
	out := strings.Join(paras, "\n")
	if out == "" {
		return "", &InputError{"text", "is empty"}
	}
	if n := utf8.RuneCountInString(out); n > maxChars {
		return "", &InputError{"text", fmt.Sprintf("is %d characters; the limit is %d", n, maxChars)}
	}
	return out, nil
}

// Tag limits.
const (
	MaxTags      = 32
	MaxTagLength = 64
)

// synonyms folds a few common variants onto one tag.
var synonyms = map[string]string{
	"fam":        "family",
	"families":   "family",
	"kids":       "children",
	"child":      "children",
	"work-stuff": "work",
	"job":        "work",
	"meds":       "health",
	"medical":    "health",
	"todo":       "todos",
	"to-do":      "todos",
	"prefs":      "preferences",
	"preference": "preferences",
}

// accents folds common Latin letters with diacritics to ASCII.
var accents = strings.NewReplacer(
	"à", "a", "á", "a", "â", "a", "ã", "a", "ä", "a", "å", "a", "æ", "ae", "ç", "c",
	"è", "e", "é", "e", "ê", "e", "ë", "e", "ì", "i", "í", "i", "î", "i", "ï", "i",
	"ñ", "n", "ò", "o", "ó", "o", "ô", "o", "õ", "o", "ö", "o", "ø", "o", "œ", "oe",
	"ù", "u", "ú", "u", "û", "u", "ü", "u", "ý", "y", "ÿ", "y", "ß", "ss",
)

// NormalizeTag trims and lowercases one tag, folds accents, turns runs of whitespace, underscores
// and hyphens into one hyphen, drops other characters outside [a-z0-9-], and applies the synonym
// map. The result has 2 to 64 characters.
func NormalizeTag(s string) (string, error) {
	s = accents.Replace(strings.ToLower(strings.TrimSpace(s)))
	var b strings.Builder
	hyphen := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		case r == '-' || r == '_' || unicode.IsSpace(r):
			hyphen = true
		}
	}
	t := b.String()
	if len(t) > MaxTagLength {
		t = strings.TrimRight(t[:MaxTagLength], "-")
	}
	if s, ok := synonyms[t]; ok {
		t = s
	}
	if len(t) < 2 {
		return "", fmt.Errorf("tag %q has fewer than 2 letters or digits", s)
	}
	return t, nil
}

// ParseTags reads a "tags" argument: absent or null → nil; an array of strings; or one
// comma-separated string. Tags are normalized and deduplicated in first-seen order.
func ParseTags(raw json.RawMessage) ([]string, error) {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var items []string
	var fields []string
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &InputError{"tags", "is not a string"}
		}
		for _, p := range strings.Split(s, ",") {
			if strings.TrimSpace(p) != "" {
				items = append(items, p)
				fields = append(fields, "tags")
			}
		}
	case '[':
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err != nil {
			return nil, &InputError{"tags", "is not an array of strings"}
		}
		for i, el := range arr {
			var s string
			if err := json.Unmarshal(el, &s); err != nil {
				return nil, &InputError{fmt.Sprintf("tags[%d]", i), "is not a string"}
			}
			items = append(items, s)
			fields = append(fields, fmt.Sprintf("tags[%d]", i))
		}
	default:
		return nil, &InputError{"tags", "must be an array of strings or a comma-separated string"}
	}
	var out []string
	seen := map[string]bool{}
	for i, s := range items {
		t, err := NormalizeTag(s)
		if err != nil {
			return nil, &InputError{fields[i], err.Error()}
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTags {
		return nil, &InputError{"tags", fmt.Sprintf("has %d tags; the limit is %d", len(out), MaxTags)}
	}
	return out, nil
}
