package memory_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// TestStore_Search_timeWords: a question's own time words filter by when memories were
// written, in the store's calendar; explicit since/until win; a question without time words,
// or a search that does not ask for them (build_context_prompt), is never filtered.
func TestStore_Search_timeWords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock starts on Saturday 2000-01-01 00:00 UTC.
		s := MustOpen(t, nil)
		day := 24 * time.Hour
		old := remember(t, s, memory.Draft{Text: "dentist appointment about my tooth"}) // Sat Jan 1
		time.Sleep(5 * day)
		lastWeek := remember(t, s, memory.Draft{Text: "the dentist said the tooth is fine"}) // Thu Jan 6
		time.Sleep(4*day + 12*time.Hour)
		bike := remember(t, s, memory.Draft{Text: "bought a new bike"}) // Mon Jan 10, noon
		time.Sleep(day)                                                 // now: Tue Jan 11, noon
		date := func(d int) *time.Time { t := time.Date(2000, 1, d, 0, 0, 0, 0, time.UTC); return &t }
		since := date(1)
		for _, tc := range []struct {
			query      string
			timeWords  bool
			since      *time.Time
			want       []uint64
			window     *memory.TimeWindow
			unfiltered bool
		}{
			{query: "dentist", timeWords: true, want: []uint64{lastWeek, old}, unfiltered: true},
			{query: "dentist last week", timeWords: true, want: []uint64{lastWeek},
				window: &memory.TimeWindow{Since: date(3), Until: date(10), Phrase: "last week"}},
			{query: "What did the dentist say on Thursday?", timeWords: true, want: []uint64{lastWeek},
				window: &memory.TimeWindow{Since: date(6), Until: date(7), Phrase: "on Thursday"}},
			// Nothing ranks "what did I buy": the window's memories answer, newest first.
			{query: "what did I buy yesterday?", timeWords: true, want: []uint64{bike},
				window: &memory.TimeWindow{Since: date(10), Until: date(11), Phrase: "yesterday"}},
			{query: "Yesterday", timeWords: true, want: []uint64{bike},
				window: &memory.TimeWindow{Since: date(10), Until: date(11), Phrase: "Yesterday"}},
			{query: "dentist since January 5", timeWords: true, want: []uint64{lastWeek},
				window: &memory.TimeWindow{Since: date(5), Phrase: "since January 5"}},
			{query: "dentist last week", timeWords: true, since: since, want: []uint64{lastWeek, old}, unfiltered: true},
			{query: "dentist last week", timeWords: false, want: []uint64{lastWeek, old}, unfiltered: true},
			{query: "dentist tomorrow", timeWords: true, want: []uint64{lastWeek, old}, unfiltered: true},
		} {
			q := memory.Query{Text: tc.query, Limit: 8, TimeWords: tc.timeWords}
			q.Filter.Since = tc.since
			found := s.Search(context.Background(), q)
			var got []uint64
			for _, m := range found.Matches {
				got = append(got, m.Memory.ID)
			}
			slices.Sort(got)
			want := slices.Clone(tc.want)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%q: found %v, want %v", tc.query, got, want)
			}
			w := found.TimeWindow
			switch {
			case tc.unfiltered && w != nil:
				t.Errorf("%q: window %+v, want none", tc.query, *w)
			case tc.window != nil && (w == nil || w.Phrase != tc.window.Phrase || !sameTime(w.Since, tc.window.Since) || !sameTime(w.Until, tc.window.Until)):
				t.Errorf("%q: window %+v, want %+v", tc.query, w, *tc.window)
			}
		}
	})
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}
