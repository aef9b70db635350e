package memtext

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var tagShape = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func TestNormalizeTag(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Food", "food"},
		{"  coffee beans ", "coffee-beans"},
		{"Coffee_Beans", "coffee-beans"},
		{"--a--b--", "a-b"},
		{"a \t_-_ b", "a-b"},
		{"node.js", "nodejs"},
		{"C++ dev", "c-dev"},
		{"R&D", "rd"},
		{"don't", "dont"},
		{"café", "cafe"},
		{"cafe\u0301", "cafe"}, // decomposed: the combining accent is removed
		{"ÉCOLE", "ecole"},
		{"Straße", "strasse"},
		{"Łódź", "lodz"},
		{"Ærø", "aero"},
		{"İstanbul", "istanbul"},
		{"Şişli", "sisli"},
		{"Ｆｕｌｌ Ｗｉｄｔｈ", "full-width"},
		{"2026", "2026"},
		{"q3 2026 goals", "q3-2026-goals"},
		{"家族 family", "family"},
		{strings.Repeat("x", MaxTagLength), strings.Repeat("x", MaxTagLength)},
		// Synonyms apply to whole tags, after normalization.
		{"Fam", "family"},
		{"FAMILIES", "family"},
		{"kids", "child"},
		{"Children", "child"},
		{"To Do", "todo"},
		{"to_do", "todo"},
		{"prefs", "preference"},
		{"kids school", "kids-school"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := NormalizeTag(tc.in)
			if err != nil || got != tc.want {
				t.Errorf("NormalizeTag(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestNormalizeTag_Errors(t *testing.T) {
	for _, tc := range []struct{ name, in, wantReason string }{
		{"empty", "", `"" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"one letter", " x ", `" x " keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"punctuation", "!!", `"!!" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"other script", "家族", `"家族" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"hyphens only", "- _ -", `"- _ -" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"too long", strings.Repeat("x", MaxTagLength+1), `"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"… is 65 characters after normalization; the limit is 64`},
		{"too long with hyphens", strings.Repeat("ab ", 22), `"ab ab ab ab ab ab ab ab ab ab ab ab ab a"… is 65 characters after normalization; the limit is 64`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NormalizeTag(tc.in)
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("NormalizeTag(%q) = %q, %v; want an *InputError", tc.in, got, err)
			}
			if ie.Field != "tag" || ie.Reason != tc.wantReason {
				t.Errorf("error = %q on %q,\nwant %q on %q", ie.Reason, ie.Field, tc.wantReason, "tag")
			}
		})
	}
}

// TestSynonyms checks that the map keeps normalization idempotent: keys and values are
// normalized tags, and no value is itself a key.
func TestSynonyms(t *testing.T) {
	for from, to := range synonyms {
		if !tagShape.MatchString(from) || !tagShape.MatchString(to) || len(to) < MinTagLength {
			t.Errorf("synonym %q → %q is not between normalized tags", from, to)
		}
		if next, ok := synonyms[to]; ok {
			t.Errorf("synonym %q → %q → %q: a target is itself a synonym", from, to, next)
		}
	}
}

func TestParseTags(t *testing.T) {
	many := distinctTags(MaxTags)
	var manyDup []string
	for range MaxTags {
		manyDup = append(manyDup, "Same Tag", "same_tag")
	}
	for _, tc := range []struct {
		name string
		raw  string
		want []string
	}{
		{"absent", ``, nil},
		{"null", ` null `, nil},
		{"empty array", `[]`, nil},
		{"empty string", `""`, nil},
		{"blank items", `["", "  "]`, nil},
		{"only commas", `" , ,"`, nil},
		{"array", `["Food", " coffee beans ", "food"]`, []string{"food", "coffee-beans"}},
		{"comma string", `"Food, Coffee_Beans,,  café "`, []string{"food", "coffee-beans", "cafe"}},
		{"commas inside elements", `["food, coffee", "tea", "", "coffee"]`, []string{"food", "coffee", "tea"}},
		{"unicode", `["Straße", "Łódź", "naïve Café", "\u0045\u0301cole"]`, []string{"strasse", "lodz", "naive-cafe", "ecole"}},
		{"synonyms", `["fam", "Families", "family", "Kids", "children", "kids-school"]`, []string{"family", "child", "kids-school"}},
		{"dedup keeps first-seen order", `["b-tag", "a-tag", "B tag", "A_TAG"]`, []string{"b-tag", "a-tag"}},
		{"whitespace around JSON", "\n\t[\"x1\"]\n", []string{"x1"}},
		{"exactly the limit", mustJSON(t, many), many},
		{"duplicates do not count", mustJSON(t, manyDup), []string{"same-tag"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTags(json.RawMessage(tc.raw))
			if err != nil {
				t.Fatalf("ParseTags(%s) error: %v", tc.raw, err)
			}
			if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("ParseTags(%s) = %#v, want %#v", tc.raw, got, tc.want)
			}
		})
	}
}

func TestParseTags_Errors(t *testing.T) {
	tooMany := append(distinctTags(MaxTags), "one-more")
	for _, tc := range []struct {
		name, raw, wantField, wantReason string
	}{
		{"number element", `["ok", 3]`, "tags[1]", `must be a string such as "family"`},
		{"null element", `["ok", "fine", null]`, "tags[2]", `must be a string such as "family"`},
		{"nested array", `[["ok"]]`, "tags[0]", `must be a string such as "family"`},
		{"short element", `["ok", "x"]`, "tags[1]", `"x" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"short piece of an element", `["ok", "fine, !"]`, "tags[1]", `" !" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"other script", `["家族"]`, "tags[0]", `"家族" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"long element", `["ok", "` + strings.Repeat("y", 70) + `"]`, "tags[1]", `"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy"… is 70 characters after normalization; the limit is 64`},
		{"short item of a comma string", `"a,bb"`, "tags", `"a" keeps fewer than 2 letters or digits; tags use a-z, 0-9 and hyphens`},
		{"number", `42`, "tags", `must be an array of strings such as ["family", "health"] or a comma-separated string`},
		{"object", `{"a": 1}`, "tags", `must be an array of strings such as ["family", "health"] or a comma-separated string`},
		{"boolean", `true`, "tags", `must be an array of strings such as ["family", "health"] or a comma-separated string`},
		{"broken array", `["a"`, "tags", "is not a valid JSON array"},
		{"broken string", `"abc`, "tags", "is not a valid JSON string"},
		{"too many", mustJSON(t, tooMany), "tags", "has 33 distinct tags; the limit is 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTags(json.RawMessage(tc.raw))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseTags(%s) = %q, %v; want an *InputError", tc.raw, got, err)
			}
			if ie.Field != tc.wantField || ie.Reason != tc.wantReason {
				t.Errorf("error = %q on %q,\nwant %q on %q", ie.Reason, ie.Field, tc.wantReason, tc.wantField)
			}
		})
	}
}

// distinctTags returns n distinct normalized tags.
func distinctTags(n int) []string {
	var tags []string
	for i := range n {
		tags = append(tags, fmt.Sprintf("tag-%d", i))
	}
	return tags
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

func FuzzParseTags(f *testing.F) {
	for _, s := range []string{
		`["Food","coffee beans"]`, `"a, b,c"`, `null`, `["fam", "kids"]`, `"ÆØÅ ß"`, `["--x--"]`,
		`["Ｆｕｌｌ"]`, `["café", "cafe\u0301"]`, `[1]`, `"to do, to-do"`, `["a_b-c d"]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tags, err := ParseTags(json.RawMessage(raw))
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Reason == "" || ie.Field != "tags" && !strings.HasPrefix(ie.Field, "tags[") {
				t.Fatalf("ParseTags(%q) error %v is not an *InputError on tags", raw, err)
			}
			return
		}
		if len(tags) > MaxTags {
			t.Fatalf("ParseTags(%q) returned %d tags", raw, len(tags))
		}
		seen := map[string]bool{}
		for _, tag := range tags {
			checkTag(t, raw, tag)
			if seen[tag] {
				t.Fatalf("ParseTags(%q) = %q: %q twice", raw, tags, tag)
			}
			seen[tag] = true
		}
	})
}

func FuzzNormalizeTag(f *testing.F) {
	for _, s := range []string{"Food", "coffee beans", "ÆØÅ ß", "--x--", "Ｆｕｌｌ", "cafe\u0301", "to do", "İ", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tag, err := NormalizeTag(s)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field != "tag" || ie.Reason == "" {
				t.Fatalf("NormalizeTag(%q) error %v is not an *InputError on tag", s, err)
			}
			return
		}
		checkTag(t, s, tag)
	})
}

// checkTag fails t unless tag is a normalized tag and normalizes to itself.
func checkTag(t *testing.T, in, tag string) {
	t.Helper()
	if !tagShape.MatchString(tag) || len(tag) < MinTagLength || len(tag) > MaxTagLength {
		t.Fatalf("from %q: tag %q is not normalized", in, tag)
	}
	if again, err := NormalizeTag(tag); err != nil || again != tag {
		t.Fatalf("from %q: NormalizeTag(%q) = %q, %v; not idempotent", in, tag, again, err)
	}
}
