package memtext

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestInputError_Error(t *testing.T) {
	err := error(&InputError{Field: "tags[3]", Reason: "must be a string"})
	if got, want := err.Error(), "tags[3]: must be a string"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"trims and collapses spaces", "  hello   world ", 100, "hello world"},
		{"tabs are spaces", "a\t\tb\t", 100, "a b"},
		{"unicode spaces", "\u00a0x\u3000y\u2009\u202fz ", 100, "x y z"},
		{"blank lines collapse to one newline", "line one  \r\n\r\n\r\n  line two\r\n", 100, "line one\nline two"},
		{"lone carriage return", "a\rb", 100, "a\nb"},
		{"line and paragraph separators", "a\u2028b\u2029c", 100, "a\nb\nc"},
		{"lists keep their lines", "Groceries:\n- milk\n- eggs", 100, "Groceries:\n- milk\n- eggs"},
		{"leading newlines and spaces", "\n\n \t x", 100, "x"},
		{"byte order mark dropped", "\uFEFFhello", 100, "hello"},
		{"unicode kept", "Grüße, 世界 🌍 \uFFFD", 100, "Grüße, 世界 🌍 \uFFFD"},
		{"limit counts characters not bytes", strings.Repeat("é", 10), 10, strings.Repeat("é", 10)},
		{"limit counts after normalization", "a" + strings.Repeat(" ", 100) + "b", 3, "a b"},
		{"zero limit means default", strings.Repeat("a", DefaultMaxTextChars), 0, strings.Repeat("a", DefaultMaxTextChars)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeText(tc.in, tc.max)
			if err != nil {
				t.Fatalf("NormalizeText(%q) error: %v", tc.in, err)
			}
			if got != tc.want {
				t.Errorf("NormalizeText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizeText_Errors(t *testing.T) {
	for _, tc := range []struct {
		name, in   string
		max        int
		wantReason string
	}{
		{"empty", "", 100, "is empty"},
		{"only whitespace", " \n\t\r\n\u00a0 ", 100, "is empty"},
		{"only a byte order mark", "\uFEFF", 100, "is empty"},
		{"NUL", "a\x00b", 100, "contains the control character U+0000 at character 2; remove it"},
		{"bell", "ding\x07", 100, "contains the control character U+0007 at character 5; remove it"},
		{"form feed", "page\fbreak", 100, "contains the control character U+000C at character 5; remove it"},
		{"vertical tab", "a\vb", 100, "contains the control character U+000B at character 2; remove it"},
		{"C1 control", "é\u0085", 100, "contains the control character U+0085 at character 2; remove it"},
		{"invalid UTF-8", "bad \xff byte", 100, "is not valid UTF-8"},
		{"too long", strings.Repeat("é", 11), 10, "is 11 characters; the limit is 10"},
		{"too long for the default", strings.Repeat("a", 17003), 0, "is 17003 characters; the limit is 16000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeText(tc.in, tc.max)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("NormalizeText(%.20q) = %q, %v; want an *InputError", tc.in, got, err)
			}
			if ie.Field != "text" || ie.Reason != tc.wantReason {
				t.Errorf("error = %q on %q, want %q on %q", ie.Reason, ie.Field, tc.wantReason, "text")
			}
		})
	}
}

func FuzzNormalizeText(f *testing.F) {
	for _, s := range []string{
		"hello  world", "a\n\n\nb", "\t x \r\n y", "\u2028", "é", " \u00a0\u3000 ", "\uFEFF\uFEFFa",
		"a \n b", "x\r", "\x00", "\xff", "Groceries:\n- milk\n- eggs",
	} {
		f.Add(s, 20)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		max = max%50 + 1
		if max < 1 {
			max += 50
		}
		out, err := NormalizeText(s, max)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != "text" || ie.Reason == "" {
				t.Fatalf("NormalizeText(%q) error %v is not an *InputError on text", s, err)
			}
			return
		}
		if !utf8.ValidString(out) || out == "" || utf8.RuneCountInString(out) > max {
			t.Fatalf("NormalizeText(%q, %d) = %q", s, max, out)
		}
		if strings.TrimSpace(out) != out || strings.Contains(out, "  ") || strings.Contains(out, "\n\n") ||
			strings.Contains(out, " \n") || strings.Contains(out, "\n ") {
			t.Fatalf("NormalizeText(%q) = %q: whitespace not normalized", s, out)
		}
		for _, r := range out {
			if r != '\n' && r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r)) || r == '\uFEFF' {
				t.Fatalf("NormalizeText(%q) = %q: holds %U", s, out, r)
			}
		}
		again, err := NormalizeText(out, max)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", s, out, again, err)
		}
	})
}
