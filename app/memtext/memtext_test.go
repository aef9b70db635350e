package memtext

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct{ in, want, errField string }{
		{"  hello   world ", "hello world", ""},
		{"line one\t\tx\n\n\n\nline two\r\n", "line one x\n\nline two", ""},
		{"\u00a0 non-breaking\u00a0space ", "non-breaking space", ""},
		{"", "", "text"},
		{" \n\t ", "", "text"},
		{"bell\x07", "", "text"},
		{"bad \xff utf8", "", "text"},
		{strings.Repeat("é", 11), "", "text"},
		{strings.Repeat("é", 10), strings.Repeat("é", 10), ""},
	} {
		got, err := NormalizeText(tc.in, 10+len("non-breaking space"))
		if tc.in == strings.Repeat("é", 11) || tc.in == strings.Repeat("é", 10) {
			got, err = NormalizeText(tc.in, 10)
		}
		var ie *InputError
		if tc.errField != "" {
			if !errors.As(err, &ie) || ie.Field != tc.errField {
				t.Errorf("NormalizeText(%q) err = %v, want an error on %s", tc.in, err, tc.errField)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeText(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseTags(t *testing.T) {
	for _, tc := range []struct {
		raw, want, errField string
	}{
		{`null`, `[]`, ""},
		{`["Food", " coffee beans ", "food"]`, `["food","coffee-beans"]`, ""},
		{`"Food, Coffee_Beans,,  café "`, `["food","coffee-beans","cafe"]`, ""},
		{`["fam","Families","family"]`, `["family"]`, ""},
		{`["--a--b--"]`, `["a-b"]`, ""},
		{`["ok", 3]`, ``, "tags[1]"},
		{`["ok", "x"]`, ``, "tags[1]"},
		{`["!!"]`, ``, "tags[0]"},
		{`42`, ``, "tags"},
		{`"a,bb"`, ``, "tags"},
	} {
		got, err := ParseTags(json.RawMessage(tc.raw))
		if tc.errField != "" {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != tc.errField {
				t.Errorf("ParseTags(%s) err = %v, want an error on %s", tc.raw, err, tc.errField)
			}
			continue
		}
		if got == nil {
			got = []string{}
		}
		b, _ := json.Marshal(got)
		if err != nil || string(b) != tc.want {
			t.Errorf("ParseTags(%s) = %s, %v; want %s", tc.raw, b, err, tc.want)
		}
	}
	many := make([]string, MaxTags+1)
	for i := range many {
		many[i] = "tag" + strings.Repeat("x", i)
	}
	raw, _ := json.Marshal(many)
	if _, err := ParseTags(raw); err == nil {
		t.Errorf("%d tags accepted", len(many))
	}
}

func TestDetectSecret(t *testing.T) {
	// Test keys are assembled from parts so that secret scanners do not flag this file.
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + ".eyJzdWIiOiIxMjM0NTY3ODkwIn0" + ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	for _, tc := range []struct{ text, kind string }{
		{"my aws key is AKIA" + "IOSFODNN7EXAMPLE ok", "aws-access-key"},
		{"openai: sk-" + "proj-" + strings.Repeat("aB3d", 10), "openai-key"},
		{"sk-" + strings.Repeat("A1b2", 12), "openai-key"},
		{"sk-ant-" + "api03-" + strings.Repeat("x", 40), "anthropic-key"},
		{"token ghp_" + strings.Repeat("a1B2", 9), "github-token"},
		{"github_pat_" + strings.Repeat("11AB", 10), "github-token"},
		{"xoxb-" + "123456789012-abcdefghij", "slack-token"},
		{"AIza" + strings.Repeat("Sy3_", 8) + "abc", "google-api-key"},
		{"sk_live_" + strings.Repeat("4eC3", 6), "stripe-key"},
		{"session " + jwt, "jwt"},
		{"-----BEGIN OPENSSH " + "PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "private-key"},
		{"-----BEGIN " + "PRIVATE KEY-----", "private-key"},
		{"card 4111 1111 1111 1111", "card-number"},
		{"card 5555-5555-5555-4444 exp 12/28", "card-number"},
		{"amex 378282246310005", "card-number"},
	} {
		kind, found := DetectSecret(tc.text)
		if !found || kind != tc.kind {
			t.Errorf("DetectSecret(%.30q…) = %q, %v; want %q", tc.text, kind, found, tc.kind)
		}
	}
	for _, text := range []string{
		"order 4111 1111 1111 1112 ships Tuesday", // card-shaped, fails Luhn
		"call me at +1 415 555 0100",
		"ISBN 978-0-306-40615-7",
		"id 123e4567-e89b-12d3-a456-426614174000",
		"commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
		"I told them the AKIA prefix marks AWS keys and sk- marks OpenAI keys",
		"my tracking number is 1Z999AA10123456784",
		"the meeting is at 10:30 on 2026-05-17",
		"eyJ is how base64 JSON starts",
		"0000 0000 0000 0000 is not a card",
		"-----BEGIN PUBLIC KEY-----",
	} {
		if kind, found := DetectSecret(text); found {
			t.Errorf("DetectSecret(%q) = %q, want no secret", text, kind)
		}
	}
}

var tagShape = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{`["Food","coffee beans"]`, `"a, b,c"`, `null`, `["fam"]`, `"ÆØÅ ß"`, `["--x--"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tags, err := ParseTags(json.RawMessage(raw))
		if err != nil {
			return
		}
		for _, tag := range tags {
			if !tagShape.MatchString(tag) || len(tag) < 2 || len(tag) > MaxTagLength {
				t.Fatalf("ParseTags(%q) produced %q", raw, tag)
			}
			again, err := NormalizeTag(tag)
			if err != nil || again != tag {
				t.Fatalf("NormalizeTag(%q) = %q, %v; not idempotent", tag, again, err)
			}
		}
	})
}

func FuzzNormalizeText(f *testing.F) {
	for _, s := range []string{"hello  world", "a\n\n\nb", "\t x \r\n y", "\u2028", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := NormalizeText(s, 1000)
		if err != nil {
			return
		}
		if !utf8.ValidString(out) || out == "" {
			t.Fatalf("NormalizeText(%q) = %q", s, out)
		}
		again, err := NormalizeText(out, 1000)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", s, out, again, err)
		}
	})
}

func FuzzDetectSecret(f *testing.F) {
	f.Add("card 4111 1111 1111 1111")
	f.Add("AKIA" + "IOSFODNN7EXAMPLE")
	f.Fuzz(func(t *testing.T, s string) {
		kind, found := DetectSecret(s)
		if found == (kind == "") {
			t.Fatalf("DetectSecret(%q) = %q, %v", s, kind, found)
		}
	})
}
