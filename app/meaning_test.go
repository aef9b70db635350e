package app

import (
	"testing"
	"time"
)

// TestRecall_ByMeaningOutOfTheBox: with nothing configured and no network, recall finds
// memories that share no word with the question, through the builtin embedder (issue 4), and
// leaves unrelated memories out.
func TestRecall_ByMeaningOutOfTheBox(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, testConfig(t, clock))
	// Unrelated facts told on different days: none is another's context (a memory written
	// just before or after, which recall also credits).
	for _, text := range []string{
		"my son lives in Los Angeles",
		"I prefer dark roast",
		"my dog is called Rex",
		"I play the cello on Sundays",
		"allergic to peanuts",
		"my wife works as a nurse",
		"we went to Tokyo last spring",
	} {
		mustOK(t, a, "remember", map[string]any{"text": text})
		clock.Advance(24 * time.Hour)
	}
	for _, tc := range []struct {
		query, want string
		rank        int     // the rank it must reach at least
		lead        float32 // at rank 1: how many times the next memory's score it must score
	}{
		{"what coffee should I buy?", "I prefer dark roast", 1, 2},
		{"what is the name of my pet?", "my dog is called Rex", 1, 2},
		{"which foods should I avoid?", "allergic to peanuts", 1, 2},
		// The son's name is in no memory: only "where" and a person carry the question, so
		// the wife comes next, closer than an unrelated memory would. "these days" says when,
		// not what: time words do not match other time words by meaning, or "we went to Tokyo
		// last spring" would come first.
		{"where is Colby these days?", "my son lives in Los Angeles", 1, 1.5},
	} {
		p := mustOK(t, a, "recall", map[string]any{"query": tc.query})
		matches := p["matches"].([]any)
		rank := 0
		for i, m := range matches {
			if m.(map[string]any)["text"] == tc.want {
				rank = i + 1
				break
			}
		}
		if rank == 0 || rank > tc.rank {
			t.Errorf("recall(%q): %q at rank %d, want %d or better: %v", tc.query, tc.want, rank, tc.rank, matches)
			continue
		}
		if tc.rank == 1 && len(matches) > 1 {
			first, second := matches[0].(map[string]any)["score"].(float64), matches[1].(map[string]any)["score"].(float64)
			if first < float64(tc.lead)*second {
				t.Errorf("recall(%q): the match scores %v, the next memory %v; want at least %v times that", tc.query, first, second, tc.lead)
			}
		}
	}
}
