package policy

import (
	"strings"
	"unicode"
)

// Displayable makes text that others chose (client names, scopes, hosts, token names) harmless
// to show to the owner, on top of a template's escaping: control, format (bidi overrides and
// isolates, zero-width characters), private-use and line/paragraph separator characters and
// invalid UTF-8 become U+FFFD, and text beyond max characters is cut with "…". Leading and
// trailing space is trimmed.
func Displayable(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Zl, unicode.Zp) {
			r = unicode.ReplacementChar
		}
		if n == max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		n++
	}
	return strings.TrimSpace(b.String())
}
