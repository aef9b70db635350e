package memory

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// detailsByMap is details as it was first written, with FieldsFunc and a map: the reading of
// DetailsDiffer's rule that details must keep.
func detailsByMap(text string) textDetails {
	out := map[string]bool{}
	negated := false
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-'
	})
	for _, w := range words {
		w = strings.Trim(w, "'’-")
		if w == "" {
			continue
		}
		lower := strings.ToLower(strings.ReplaceAll(w, "’", "'"))
		switch {
		case negations[lower] || strings.HasSuffix(lower, "n't"):
			negated = true
		case strings.ContainsFunc(w, unicode.IsDigit):
			out[lower] = true
		case unicode.IsUpper([]rune(w)[0]) && !openers[lower] && !strings.HasPrefix(lower, "i'"):
			out[lower] = true
		}
	}
	d := textDetails{negated: negated}
	for w := range out {
		d.words = append(d.words, w)
	}
	slices.Sort(d.words)
	return d
}

var detailsSeeds = []string{
	"", "My son lives in Los Angeles", "My son lives in Denver with Maria", "I have 2 cats",
	"I don’t like jazz", "I DON'T like Jazz", "Isn't it Ada's -birthday- on 2026-05-01 at 5pm?",
	"I'm in Berlin; I’ll be in Paris", "ǅemal met Ǆ in Łódź at ǅ2", "\xff\xfeBerlin\xc3",
	"- ' ’ --x-- 'Y'", "The Ünited Kingdom, ΣΟΦΙΑ and σοφία", "nobody NEVER Nor", "I'd rather I'll",
}

// FuzzDetails: details reads every text as detailsByMap does, and DetailsDiffer compares as
// with the map's details.
func FuzzDetails(f *testing.F) {
	for _, s := range detailsSeeds {
		f.Add(s, "I live in Paris")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		da, want := details(a), detailsByMap(a)
		if da.negated != want.negated || !slices.Equal(da.words, want.words) {
			t.Fatalf("details(%q) = %q %v, want %q %v", a, da.words, da.negated, want.words, want.negated)
		}
		db, wantB := details(b), detailsByMap(b)
		if got, want := da.differ(db), differByMap(want, wantB); got != want {
			t.Fatalf("differ(%q, %q) = %v, want %v", a, b, got, want)
		}
	})
}

// differByMap is DetailsDiffer's rule on detailsByMap's details, written plainly.
func differByMap(a, b textDetails) bool {
	if a.negated != b.negated {
		return true
	}
	other := func(x, y []string) bool {
		for _, w := range x {
			if !slices.Contains(y, w) {
				return true
			}
		}
		return false
	}
	return other(a.words, b.words) && other(b.words, a.words)
}

func BenchmarkDetails(b *testing.B) {
	for b.Loop() {
		for _, s := range detailsSeeds {
			details(s)
		}
	}
}
