package memtext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultMaxTextChars is the longest memory text, in characters, when the caller gives no limit.
const DefaultMaxTextChars = 16000

// InputError is an argument that cannot be accepted. Field is a JSON path such as "text",
// "tags" or "tags[3]"; Reason completes the sentence "<field> …" in words a model can act on
// ("is empty", "is 17003 characters; the limit is 16000"). Neither ever holds a secret.
type InputError struct{ Field, Reason string }

// Error returns the field and the reason: "text: is empty".
func (e *InputError) Error() string { return e.Field + ": " + e.Reason }

// NormalizeText returns s with whitespace normalized (see the package doc): runs of whitespace
// within a line become one space, runs of line breaks and blank lines become one "\n", and the
// whole is trimmed. It refuses, with an *InputError on field "text", invalid UTF-8, control
// characters other than tab, CR and LF, an empty result, and a result longer than maxChars
// characters. If maxChars < 1, DefaultMaxTextChars applies.
func NormalizeText(s string, maxChars int) (string, error) {
	if maxChars < 1 {
		maxChars = DefaultMaxTextChars
	}
	if !utf8.ValidString(s) {
		return "", &InputError{"text", "is not valid UTF-8"}
	}
	var b strings.Builder
	b.Grow(len(s))
	var space, newline bool // a separator is pending before the next visible character
	n, pos := 0, 0          // characters written, characters read
	for _, r := range s {
		pos++
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			newline = true
		case r == '\t' || unicode.IsSpace(r) && !unicode.IsControl(r):
			space = true
		case unicode.IsControl(r):
			return "", &InputError{"text", fmt.Sprintf("contains the control character %U at character %d; remove it", r, pos)}
		case r == '\uFEFF':
			// A byte order mark carries nothing.
		default:
			if n > 0 && newline {
				b.WriteByte('\n')
				n++
			} else if n > 0 && space {
				b.WriteByte(' ')
				n++
			}
			space, newline = false, false
			b.WriteRune(r)
			n++
		}
	}
	if n == 0 {
		return "", &InputError{"text", "is empty"}
	}
	if n > maxChars {
		return "", &InputError{"text", fmt.Sprintf("is %d characters; the limit is %d", n, maxChars)}
	}
	return b.String(), nil
}
