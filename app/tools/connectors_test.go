package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTitle(t *testing.T) {
	long := "Our family holiday plan for next summer is two weeks in Lisbon, then a slow train along the coast to Porto"
	for _, tc := range []struct{ name, text, want string }{
		{"short", "I prefer dark roast coffee", "I prefer dark roast coffee"},
		{"first line only", "Shopping list\n- eggs\n- milk", "Shopping list"},
		{"trimmed", "  spaced out  ", "spaced out"},
		{"cut at a word", long, "Our family holiday plan for next summer is two weeks in Lisbon, then a slow…"},
		{"one long word", strings.Repeat("é", 100), strings.Repeat("é", 80) + "…"},
		{"a space right after the limit", strings.Repeat("a", 75) + " bcd efgh", strings.Repeat("a", 75) + " bcd…"},
		{"exactly the limit", strings.Repeat("a", 80), strings.Repeat("a", 80)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := title(tc.text)
			if got != tc.want {
				t.Errorf("title(%q) = %q, want %q", tc.text, got, tc.want)
			}
			if n := utf8.RuneCountInString(got); n > titleChars+1 {
				t.Errorf("%d characters", n)
			}
		})
	}
}
