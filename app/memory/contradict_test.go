package memory_test

import (
	"context"
	"slices"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

func TestDetailsDiffer(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"I live in Paris", "I live in Berlin", true},
		{"My son lives in Los Angeles", "My son lives in Denver", true},
		{"I have 2 cats", "I have 3 cats", true},
		{"My dentist appointment is on 2026-05-03", "My dentist appointment is on 2026-05-10", true},
		{"The team meeting is on Monday", "The team meeting is on Tuesday", true},
		{"I like jazz", "I don't like jazz", true},
		{"I like jazz", "I do not like jazz", true},
		{"I never drink coffee", "I drink coffee", true},
		{"My son lives in Los Angeles", "My son lives in Los Angeles with Maria", false}, // adds, drops nothing
		{"I live in Paris", "I live in Paris", false},
		{"I like jazz", "I really like jazz", false},
		{"The cat is asleep", "My cat is asleep", false}, // sentence openers are not names
		{"I'm in Paris", "I am in Paris", false},
		{"Paris is where I live", "Berlin is where I live", true}, // a name opening the sentence counts
	} {
		if got := memory.DetailsDiffer(tc.a, tc.b); got != tc.want {
			t.Errorf("DetailsDiffer(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := memory.DetailsDiffer(tc.b, tc.a); got != tc.want {
			t.Errorf("DetailsDiffer(%q, %q) = %v, want %v (symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestStore_Remember_contradictions specifies when remember reports a stored memory as a
// possible contradiction, with and without an embedder.
func TestStore_Remember_contradictions(t *testing.T) {
	for _, emb := range []struct {
		name string
		e    vector.Embedder
	}{{"lexical", nil}, {"builtin", vector.NewBuiltin()}} {
		t.Run(emb.name, func(t *testing.T) {
			for _, tc := range []struct {
				name, stored, text string
				supersede          bool // the new memory supersedes the stored one
				want               bool
			}{
				{"other place", "I live in Paris", "I live in Berlin", false, true},
				{"other city", "My son lives in Los Angeles", "My son lives in Denver", false, true},
				{"other number", "I have 2 cats at home", "I have 3 cats at home", false, true},
				{"negation", "I like jazz music a lot", "I don't like jazz music a lot", false, true},
				{"added detail", "My son lives in Los Angeles", "My son lives in Los Angeles with Maria", false, false},
				{"same details", "I live in Paris", "I live in Paris now", false, false},
				{"unrelated", "I like green tea", "My dentist is Dr Jones", false, false},
				{"superseded by this call", "I live in Paris", "I live in Berlin", true, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s := MustOpen(t, emb.e)
					old := remember(t, s, memory.Draft{Text: tc.stored})
					d := memory.Draft{Text: tc.text}
					if tc.supersede {
						d.Supersedes = []uint64{old}
					}
					res, _, err := s.Remember(context.Background(), []memory.Draft{d}, me)
					if err != nil || res[0].Err != nil {
						t.Fatal(err, res[0].Err)
					}
					got := slices.ContainsFunc(res[0].Contradictions, func(c memory.NearDuplicate) bool { return c.ID == old })
					if got != tc.want {
						t.Errorf("contradictions = %+v, want %d listed: %v", res[0].Contradictions, old, tc.want)
					}
					if m, _ := s.Get(old); tc.want && m.SupersededBy != nil {
						t.Errorf("a possible contradiction was superseded silently")
					}
				})
			}
		})
	}
}
