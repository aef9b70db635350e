package memory

import (
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/ownsona/ownsona/app/timewords"
)

// A question's time words ("last week", "in May 2023", "as of December") never hide a memory:
// an assistant often writes a memory after the fact ("Audrey ate pasta on 24 October 2023",
// stored today), or imports old ones. They select a window that ranks: the memories written in
// it, or whose text mentions a time in it (their mentions, read with the same parser against
// their own creation time), come first (app/rank). Explicit since/until arguments are the
// filters.

// TimeWindow is the window that a question's own time words set (app/timewords): Since
// inclusive, Until exclusive, either nil for an open end, and Phrase the words as the question
// has them. The window ranks, it does not filter (see Found for what the matches are).
type TimeWindow struct {
	Since, Until *time.Time
	Phrase       string
	// Listed: the question was only the window ("what did I do last week?"): the matches are
	// the window's memories, newest first, with score 0. Nearest: the window holds none of the
	// memories the filter admits: the matches are the nearest to it in time, with score 0.
	Listed, Nearest bool
}

// mention is a time a memory's text mentions, [since, until) in Unix seconds.
type mention struct{ since, until int64 }

// mentionsOf reads the times m's text mentions against its creation time in the store's
// calendar; nil when it mentions none.
func mentionsOf(text string, created time.Time, loc *time.Location) []mention {
	if loc == nil {
		loc = time.Local
	}
	ws := timewords.Mentions(text, created, loc)
	if len(ws) == 0 {
		return nil
	}
	out := make([]mention, len(ws))
	for i, w := range ws {
		out[i] = mention{w.Since.Unix(), w.Until.Unix()}
	}
	return out
}

// setMentionsLocked keeps ms, the times memory id's text mentions, in the store's cache of the
// memories that mention a time. s.mu must be held for writing (or the store not yet shared).
func (s *Store) setMentionsLocked(id uint64, ms []mention) {
	if len(ms) > 0 {
		s.mentioning[id] = ms
	} else {
		delete(s.mentioning, id)
	}
}

// timeWindow reads a window from the question text at now in the store's time zone and returns
// it with the text left to rank by: the question without its time words (they say when, not
// what, and would otherwise match any memory that mentions a week or a month). It does
// nothing, and returns nil, when f already has a window of its own (explicit since and until
// are filters, and win) or the text has no time words.
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
		tw.Since = &since
	}
	if !w.Until.IsZero() {
		until := w.Until
		tw.Until = &until
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

// inWindowLocked returns a bit per id (see get) of the memories written in tw or mentioning a
// time in it; nil when there is none. s.mu must be held.
func (s *Store) inWindowLocked(tw *TimeWindow) []uint64 {
	lo, hi := 0, len(s.created)
	if tw.Since != nil {
		lo = sort.Search(len(s.created), func(i int) bool { return !s.created[i].at.Before(*tw.Since) })
	}
	if tw.Until != nil {
		hi = sort.Search(len(s.created), func(i int) bool { return !s.created[i].at.Before(*tw.Until) })
	}
	var bits []uint64
	var a activeSet
	for _, e := range s.created[lo:max(lo, hi)] {
		a.put(&bits, e.id, true)
	}
	since, until := int64(-1<<63), int64(1<<63-1)
	if tw.Since != nil {
		since = tw.Since.Unix()
	}
	if tw.Until != nil {
		until = tw.Until.Unix()
	}
	for id, ms := range s.mentioning {
		for _, mt := range ms {
			if mt.since < until && mt.until > since {
				a.put(&bits, id, true)
				break
			}
		}
	}
	return bits
}

// newestLocked is the memories passing filter whose bit is set in win, newest first, at most
// limit, with score 0. s.mu must be held.
func (s *Store) newestLocked(win []uint64, filter func(id uint64) bool, limit int) []Match {
	var out []Match
	for i := len(s.created) - 1; i >= 0 && len(out) < limit; i-- {
		if id := s.created[i].id; get(win, id) && filter(id) {
			out = append(out, Match{Memory: s.mems[id].Clone()})
		}
	}
	return out
}

// nearestLocked is the memories passing filter written nearest in time to tw (which holds
// none of them), nearest first, at most limit, with score 0. s.mu must be held.
func (s *Store) nearestLocked(tw *TimeWindow, filter func(id uint64) bool, limit int) []Match {
	// Every memory passing filter is before tw or after it: walk out from its edges.
	at := len(s.created)
	if tw.Since != nil {
		at = sort.Search(len(s.created), func(i int) bool { return !s.created[i].at.Before(*tw.Since) })
	}
	before, after := at-1, at
	dist := func(i int) time.Duration {
		t := s.created[i].at
		if tw.Since != nil && t.Before(*tw.Since) {
			return tw.Since.Sub(t)
		}
		if tw.Until != nil {
			return t.Sub(*tw.Until)
		}
		return 0
	}
	var out []Match
	for len(out) < limit && (before >= 0 || after < len(s.created)) {
		i := after
		if after >= len(s.created) || (before >= 0 && dist(before) <= dist(after)) {
			i, before = before, before-1
		} else {
			after++
		}
		if id := s.created[i].id; filter(id) {
			out = append(out, Match{Memory: s.mems[id].Clone()})
		}
	}
	return slices.Clip(out)
}
