package memory

import (
	"strings"
	"time"
	"unicode"

	"github.com/ownsona/ownsona/app/timewords"
)

// TimeWindow is the window of creation times that a question's own time words set ("last
// week", "in March", "since Monday"; app/timewords): Since inclusive, Until exclusive, either
// nil for an open end, and Phrase the words as the question has them.
type TimeWindow struct {
	Since, Until *time.Time
	Phrase       string
}

// timeWindow reads a window from the question text at now in the store's time zone, applies it
// to f and returns it with the text left to rank by: the question without its time words (they
// say when, not what, and would otherwise match any memory that mentions a week or a month). It
// does nothing, and returns nil, when f already has a window of its own (explicit since and
// until win) or the text has no time words.
func (s *Store) timeWindow(text string, f *Filter, now time.Time) (*TimeWindow, string) {
	if f.Since != nil || f.Until != nil {
		return nil, text
	}
	w, ok := timewords.Parse(text, now, s.loc)
	if !ok {
		return nil, text
	}
	tw := &TimeWindow{Phrase: w.Phrase}
	if !w.Since.IsZero() {
		since := w.Since
		tw.Since, f.Since = &since, &since
	}
	if !w.Until.IsZero() {
		until := w.Until
		last := until.Add(-time.Nanosecond) // Filter.Until is inclusive
		tw.Until, f.Until = &until, &last
	}
	rest := text
	if i := strings.Index(strings.ToLower(text), strings.ToLower(w.Phrase)); i >= 0 && len(w.Phrase) > 0 {
		rest = text[:i] + " " + text[i+len(w.Phrase):]
	}
	return tw, strings.TrimSpace(rest)
}

// hasWords reports whether text has a letter or a digit: something to rank by.
func hasWords(text string) bool {
	return strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// newestLocked is the newest memories passing f, at most limit, for a question whose window
// is all it says ("what did I do last week?"): ranking found nothing, so the window's
// memories are the answer, newest first, with score 0. The caller holds s.mu.
func (s *Store) newestLocked(f *Filter, now time.Time, limit int) []Match {
	var out []Match
	win := s.windowLocked(f)
	for i := len(s.ids) - 1; i >= 0 && len(out) < limit; i-- {
		if win != nil && !get(win, s.ids[i]) {
			continue
		}
		if m := s.mems[s.ids[i]]; m != nil && f.match(m, now) {
			out = append(out, Match{Memory: m.Clone()})
		}
	}
	return out
}
