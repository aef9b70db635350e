package memory_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// TestStore_Search_timeWords: a question's own time words rank, never filter: the memories
// written in the window, or mentioning a time in it, come first, then the others; explicit
// since/until filter and win; a question that is only a window lists it newest first, or says
// it holds nothing and shows the nearest in time; a question without time words, or a search
// that does not ask for them (build_context_prompt), has no window.
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
		// Written today about a day long past: its mention ranks it for that day.
		pasta := remember(t, s, memory.Draft{Text: "Audrey ate pasta at the dentist's party on 24 October 1999"})
		date := func(y, m, d int) *time.Time { t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC); return &t }
		since := date(2000, 1, 1)
		for _, tc := range []struct {
			query     string
			timeWords bool
			since     *time.Time
			want      [][]uint64 // groups in order, each in any order
			window    *memory.TimeWindow
		}{
			{query: "dentist", timeWords: true, want: [][]uint64{{lastWeek, old, pasta}}},
			{query: "dentist last week", timeWords: true, want: [][]uint64{{lastWeek, pasta}, {old}},
				window: &memory.TimeWindow{Since: date(2000, 1, 3), Until: date(2000, 1, 12), Phrase: "last week"}},
			{query: "What did the dentist say on Thursday?", timeWords: true, want: [][]uint64{{lastWeek}, {old, pasta}},
				window: &memory.TimeWindow{Since: date(2000, 1, 6), Until: date(2000, 1, 7), Phrase: "on Thursday"}},
			{query: "dentist on Saturday", timeWords: true, want: [][]uint64{{lastWeek, old, pasta}},
				window: &memory.TimeWindow{Since: date(2000, 1, 8), Until: date(2000, 1, 9), Phrase: "on Saturday"}},
			{query: "dentist on 1 January 2000", timeWords: true, want: [][]uint64{{old}, {lastWeek, pasta}},
				window: &memory.TimeWindow{Since: date(2000, 1, 1), Until: date(2000, 1, 2), Phrase: "on 1 January 2000"}},
			{query: "what did the dentist do in October 1999?", timeWords: true, want: [][]uint64{{pasta}, {lastWeek, old}},
				window: &memory.TimeWindow{Since: date(1999, 10, 1), Until: date(1999, 11, 1), Phrase: "in October 1999"}},
			{query: "dentist as of January 5, 2000", timeWords: true, want: [][]uint64{{old, pasta}, {lastWeek}},
				window: &memory.TimeWindow{Until: date(2000, 1, 6), Phrase: "as of January 5, 2000"}},
			// Nothing ranks "what did I buy": the window's memories answer, newest first.
			{query: "what did I buy yesterday?", timeWords: true, want: [][]uint64{{bike}},
				window: &memory.TimeWindow{Since: date(2000, 1, 10), Until: date(2000, 1, 11), Phrase: "yesterday", Listed: true}},
			{query: "Yesterday", timeWords: true, want: [][]uint64{{bike}},
				window: &memory.TimeWindow{Since: date(2000, 1, 10), Until: date(2000, 1, 11), Phrase: "Yesterday", Listed: true}},
			{query: "last week?", timeWords: true, want: [][]uint64{{pasta}, {bike}, {lastWeek}},
				window: &memory.TimeWindow{Since: date(2000, 1, 3), Until: date(2000, 1, 12), Phrase: "last week", Listed: true}},
			// A window that holds nothing says so, and the nearest in time answer.
			{query: "in December 1999", timeWords: true, want: [][]uint64{{old}, {lastWeek}, {bike}, {pasta}},
				window: &memory.TimeWindow{Since: date(1999, 12, 1), Until: date(2000, 1, 1), Phrase: "in December 1999", Listed: true, Nearest: true}},
			{query: "dentist last week", timeWords: true, since: since, want: [][]uint64{{lastWeek, old, pasta}}},
			{query: "dentist last week", timeWords: false, want: [][]uint64{{lastWeek, old, pasta}}},
			{query: "dentist tomorrow", timeWords: true, want: [][]uint64{{lastWeek, old, pasta}}},
		} {
			q := memory.Query{Text: tc.query, Limit: 8, TimeWords: tc.timeWords}
			q.Filter.Since = tc.since
			found := s.Search(context.Background(), q)
			var got []uint64
			for _, m := range found.Matches {
				got = append(got, m.Memory.ID)
			}
			var want []uint64 // got's groups sorted as want's
			for _, g := range tc.want {
				g = slices.Clone(g)
				slices.Sort(g)
				want = append(want, g...)
			}
			for i := 0; i < len(got); {
				n := 0
				for _, g := range tc.want {
					if n += len(g); n > i {
						break
					}
				}
				n = min(n, len(got))
				slices.Sort(got[i:n])
				i = max(n, i+1)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: found %v, want %v", tc.query, got, tc.want)
			}
			w := found.TimeWindow
			switch {
			case tc.window == nil && w != nil:
				t.Errorf("%q: window %+v, want none", tc.query, *w)
			case tc.window != nil && (w == nil || w.Phrase != tc.window.Phrase || !sameTime(w.Since, tc.window.Since) || !sameTime(w.Until, tc.window.Until) ||
				w.Listed != tc.window.Listed || w.Nearest != tc.window.Nearest):
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
