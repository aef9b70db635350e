package timewords

import (
	"slices"
	"strings"
	"time"
)

// A Window is the stretch of time a query's time words name: the half-open interval
// [Since, Until) in the location Parse was given. A zero Since means no lower bound ("before
// March"); a zero Until means no upper bound ("since Monday", "in the last 3 days"). Parse never
// returns a Window with both zero.
type Window struct {
	Since time.Time // inclusive; zero: unbounded
	Until time.Time // exclusive; zero: unbounded
	// Phrase is the matched words exactly as they appear in the query ("last Tuesday",
	// "In March 2024"), for a payload to report.
	Phrase string
}

// Contains reports whether t falls inside the window: Since <= t < Until, ignoring an unset bound.
func (w Window) Contains(t time.Time) bool {
	if !w.Since.IsZero() && t.Before(w.Since) {
		return false
	}
	if !w.Until.IsZero() && !t.Before(w.Until) {
		return false
	}
	return true
}

// Parse finds the first time expression in query and returns its window, resolved against now in
// loc (calendar days, weeks, months and years are loc's; now is converted to loc first). A nil loc
// means now's own location. It returns false when the query holds no expression it recognises, or
// only ones that name the future ("tomorrow", "this Friday" said on a Wednesday, "in 2030"): the
// caller then filters nothing. Parse is safe for concurrent use and never panics, whatever the
// query.
func Parse(query string, now time.Time, loc *time.Location) (Window, bool) {
	if loc == nil {
		loc = now.Location()
	}
	p := parser{clock: newClock(now, loc), toks: tokenize(query)}
	for i := range p.toks {
		p.head = i
		if w, end, ok := p.expr(i); ok {
			w.Phrase = query[p.toks[i].start:p.toks[end-1].end]
			return w, true
		}
	}
	return Window{}, false
}

// Mentions finds every time expression in text, a memory written at ref ("on 24 October
// 2023", "in May", "last Tuesday", "yesterday"), as Parse reads a question's, left to right,
// none inside another. Each window is bounded on both sides: one open after (since Monday, in
// the last 3 days) ends at ref, and one open before (before March) is left out, as it names no
// time in particular. Phrase is the words as text has them. It returns nil when text mentions
// no time, and never panics.
func Mentions(text string, ref time.Time, loc *time.Location) []Window {
	if !mayMention(text) {
		return nil
	}
	if loc == nil {
		loc = ref.Location()
	}
	p := parser{clock: newClock(ref, loc), toks: tokenize(text)}
	var out []Window
	for i := 0; i < len(p.toks); i++ {
		p.head = i
		w, end, ok := p.expr(i)
		if !ok {
			continue
		}
		if w.Until.IsZero() {
			w.Until = p.now
		}
		if !w.Since.IsZero() && w.Since.Before(w.Until) {
			w.Phrase = text[p.toks[i].start:p.toks[end-1].end]
			out = append(out, w)
		}
		i = end - 1
	}
	return out
}

// mayMention reports whether text has a digit or one of the words every expression Parse
// reads contains (a cheap test that spares reading most memories word by word).
func mayMention(text string) bool {
	for i := 0; i < len(text); i++ {
		if c := text[i]; c >= '0' && c <= '9' {
			return true
		}
	}
	lower := strings.ToLower(text)
	for _, w := range mentionCues {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// mentionCues are substrings of which every time expression without a digit holds one: the
// day words, the units, the months' and weekdays' names (their abbreviations start them).
var mentionCues = []string{
	"today", "yesterday", "tonight", "night", "morning", "afternoon", "evening",
	"day", "week", "month", "year", "fortnight", "hour", "minute",
	"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
}

type parser struct {
	clock
	toks []token
	head int // the first token of the expression being read
}

// w is the word at i, or "" past the end or where punctuation separates it from the expression
// that began at head.
func (p *parser) w(i int) string {
	if i >= len(p.toks) || (i > p.head && !p.toks[i].join) {
		return ""
	}
	return p.toks[i].w
}

func (p *parser) is(i int, words ...string) bool {
	w := p.w(i)
	return w != "" && slices.Contains(words, w)
}

// expr reads one time expression starting at token i and returns its window and the index after
// its last token.
func (p *parser) expr(i int) (Window, int, bool) {
	switch p.w(i) {
	case "between":
		if a, j, ok := p.span(i+1, "between"); ok && p.is(j, "and") {
			if b, k, ok := p.rangeEnd(j+1, "and"); ok {
				return p.between(a, b, k)
			}
		}
		return Window{}, 0, false
	case "from":
		a, j, ok := p.span(i+1, "from")
		if !ok {
			return Window{}, 0, false
		}
		if p.is(j, "to", "until", "till", "through", "thru") {
			if b, k, ok := p.rangeEnd(j+1, p.w(j)); ok {
				return p.between(a, b, k)
			}
		}
		a = p.lastWeek(i+1, j, a)
		return p.window(a.since, a.until, j)
	case "since":
		if s, j, ok := p.span(i+1, "since"); ok {
			return p.window(s.since, time.Time{}, j)
		}
		return Window{}, 0, false
	case "after":
		if s, j, ok := p.span(i+1, "after"); ok {
			return p.window(s.until, time.Time{}, j)
		}
		return Window{}, 0, false
	case "before":
		if s, j, ok := p.span(i+1, "before"); ok {
			return p.window(time.Time{}, s.since, j)
		}
		return Window{}, 0, false
	case "until", "till":
		if s, j, ok := p.span(i+1, "until"); ok {
			return p.window(time.Time{}, s.until, j)
		}
		return Window{}, 0, false
	case "as":
		if p.is(i+1, "of") {
			if s, j, ok := p.span(i+2, "until"); ok {
				return p.window(time.Time{}, s.until, j)
			}
		}
		return Window{}, 0, false
	case "in", "during", "throughout", "within", "over", "on":
		if since, j, ok := p.rolling(i + 1); ok {
			return p.window(since, time.Time{}, j)
		}
		if p.w(i) == "over" && p.is(i+1, "the") && p.is(i+2, "weekend") && !p.is(i+3, "of") {
			s := p.latestWeekend()
			return p.window(s.since, s.until, i+3)
		}
		if s, j, ok := p.span(i+1, p.w(i)); ok {
			s = p.lastWeek(i+1, j, s)
			return p.window(s.since, s.until, j)
		}
		return Window{}, 0, false
	case "earlier":
		if p.is(i+1, "today") {
			return p.window(p.today, p.now, i+2)
		}
		if p.is(i+1, "this") && !p.is(i+3, "of") {
			var s span
			switch p.w(i + 2) {
			case "week":
				s = p.weeks(0, 0)
			case "month":
				s = p.months(0, 0)
			case "year":
				s = p.years(0, 0)
			default:
				return Window{}, 0, false
			}
			return p.window(s.since, p.now, i+3)
		}
		return Window{}, 0, false
	}
	if since, j, ok := p.rolling(i); ok {
		return p.window(since, time.Time{}, j)
	}
	if s, j, ok := p.span(i, ""); ok {
		s = p.lastWeek(i, j, s)
		return p.window(s.since, s.until, j)
	}
	return Window{}, 0, false
}

// lastWeek widens s when the tokens from i to j are "last week" alone (or after in, during,
// over, on, from): a person who says it means the previous calendar week or the last seven
// days, so it covers both: from the previous week's Monday (never after the day a week ago)
// to the end of today. As a bound ("since last week", "until last week") it stays the
// calendar week.
func (p *parser) lastWeek(i, j int, s span) span {
	if j != i+2 || !p.is(i, "last") || !p.is(i+1, "week") {
		return s
	}
	return span{since: s.since, until: p.date(p.y, p.m, p.d+1)}
}

// window checks a window before Parse returns it: one that starts after now or ends before it
// starts names the future or nothing, and "before" a moment after now filters nothing; none of
// them is a match.
func (p *parser) window(since, until time.Time, end int) (Window, int, bool) {
	switch {
	case !since.IsZero() && since.Year() < minYear, !until.IsZero() && until.Year() < minYear:
		return Window{}, 0, false
	case !since.IsZero() && since.After(p.now):
		return Window{}, 0, false
	case !since.IsZero() && !until.IsZero() && until.Before(since):
		return Window{}, 0, false
	case since.IsZero() && (until.IsZero() || until.After(p.now)):
		return Window{}, 0, false
	}
	return Window{Since: since, Until: until}, end, true
}

// rangeEnd reads the second half of "between A and B" / "from A to B": a span, or "now".
func (p *parser) rangeEnd(i int, prep string) (span, int, bool) {
	if p.is(i, "now") {
		return span{since: p.now, until: p.now}, i + 1, true
	}
	return p.span(i, prep)
}

// between joins A and B into [A's start, B's end). If A came out after B and A is the most recent
// of a repeating kind (a month or date without a year, a weekday), A moves back one period.
func (p *parser) between(a, b span, end int) (Window, int, bool) {
	if !a.since.Before(b.until) {
		var ok bool
		if a, ok = a.back(); !ok || !a.since.Before(b.until) {
			return Window{}, 0, false
		}
	}
	return p.window(a.since, b.until, end)
}

// rolling reads a stretch that ends now: "the last 3 days", "past two weeks", "last few months",
// "the past year", "this past week". It returns the start of the day that many units ago. Plain
// "last week" (no "the", no count) is the calendar week, read by span.
func (p *parser) rolling(i int) (time.Time, int, bool) {
	j, the := i, false
	switch {
	case p.is(j, "the"):
		j, the = j+1, true
	case p.is(j, "this") && p.is(j+1, "past"):
		j, the = j+1, true
	}
	if !p.is(j, "last", "past") {
		return time.Time{}, 0, false
	}
	kw := p.w(j)
	j++
	n, counted := 1, false
	if _, hi, k, ok := p.quantity(j); ok {
		n, counted, j = hi, true, k
	}
	if !counted && !the && kw == "last" {
		return time.Time{}, 0, false
	}
	u, mult, ok := p.unit(j)
	if !ok || (u == day && !counted) || p.is(j+1, "of", "ago") {
		return time.Time{}, 0, false
	}
	since := p.rollingSince(u, n*mult)
	return since, j + 1, since.Year() >= minYear
}

// quantity reads a count: 3, "three", "a", "an", "a couple of", "a few", "several". A vague count
// is a range: a couple is 2 to 3, a few 2 to 5, several 3 to 7.
func (p *parser) quantity(i int) (lo, hi, next int, ok bool) {
	w := p.w(i)
	if n, ok := number(w); ok {
		return n, n, i + 1, true
	}
	if n, ok := numberWords[w]; ok {
		return n, n, i + 1, true
	}
	if w == "a" || w == "an" {
		if lo, hi, next, ok := p.vague(i + 1); ok {
			return lo, hi, next, true
		}
		return 1, 1, i + 1, true
	}
	return p.vague(i)
}

func (p *parser) vague(i int) (lo, hi, next int, ok bool) {
	switch p.w(i) {
	case "couple":
		if p.is(i+1, "of") {
			return 2, 3, i + 2, true
		}
		return 2, 3, i + 1, true
	case "few":
		return 2, 5, i + 1, true
	case "several":
		return 3, 7, i + 1, true
	}
	return 0, 0, 0, false
}

// unit reads day(s), week(s), fortnight(s), month(s), year(s), hour(s), minute(s); a fortnight
// is two weeks.
func (p *parser) unit(i int) (unit, int, bool) {
	switch p.w(i) {
	case "day", "days":
		return day, 1, true
	case "week", "weeks":
		return week, 1, true
	case "fortnight", "fortnights":
		return week, 2, true
	case "month", "months":
		return month, 1, true
	case "year", "years":
		return year, 1, true
	case "hour", "hours":
		return hour, 1, true
	case "minute", "minutes":
		return minute, 1, true
	}
	return 0, 0, false
}

// span reads an expression that names a stretch of time by itself. prep is the preposition
// before it ("" for none): a month, a year or a weekday alone counts only after one.
func (p *parser) span(i int, prep string) (span, int, bool) {
	w := p.w(i)
	switch w {
	case "":
		return span{}, 0, false
	case "yesterday":
		return p.days(-1, -1), p.partOfDay(i + 1), true
	case "today":
		return p.days(0, 0), i + 1, true
	case "the", "day":
		j := i
		if w == "the" {
			j++
		}
		if p.is(j, "day") && p.is(j+1, "before") && p.is(j+2, "yesterday") {
			return p.days(-2, -2), p.partOfDay(j + 3), true
		}
		if w == "the" {
			return p.dayFirst(i+1, true)
		}
		return span{}, 0, false
	case "tonight":
		return p.partOfToday(18, i+1)
	case "last":
		return p.last(i)
	case "this":
		return p.this(i)
	}
	if wd, ok := weekdayNames[w]; ok && prep != "" {
		return p.recentWeekday(wd, endsRange(prep)), p.partOfDay(i + 1), true
	}
	if lo, hi, j, ok := p.quantity(i); ok {
		if u, mult, ok := p.unit(j); ok && u < hour && p.is(j+1, "ago") {
			s := p.ago(u, lo*mult, hi*mult)
			return s, j + 2, s.since.Year() >= minYear
		}
	}
	switch w {
	case "early", "mid", "late":
		if prep != "" {
			if m, ok := monthNames[p.w(i+1)]; ok {
				return p.monthFirst(i+1, m, prep)
			}
		}
		return span{}, 0, false
	}
	if m, ok := monthNames[w]; ok {
		return p.monthFirst(i, m, prep)
	}
	if y, m, d, ok := isoDate(w); ok {
		if d == 0 {
			return p.month(y, m), i + 1, true
		}
		return p.day(y, m, d), p.partOfDay(i + 1), true
	}
	if s, j, ok := p.dayFirst(i, false); ok {
		return s, j, true
	}
	if y, ok := yearNumber(w); ok && prep != "" && prep != "on" && !countNouns[p.w(i+1)] {
		return p.year(y), i + 1, true
	}
	return span{}, 0, false
}

// endsRange reports whether prep ends a range, where a weekday may be today ("from Monday to
// Wednesday", said on a Wednesday, includes today).
func endsRange(prep string) bool {
	switch prep {
	case "and", "to", "until", "till", "through", "thru":
		return true
	}
	return false
}

// last reads "last night", "last week/month/year/weekend", "last Monday", "last March".
func (p *parser) last(i int) (span, int, bool) {
	w := p.w(i + 1)
	if p.is(i+2, "of") {
		return span{}, 0, false // "the last week of March", "last year of school"
	}
	switch w {
	case "night":
		return span{since: p.at(-1, 0), until: p.at(0, 12)}, i + 2, true
	case "week":
		return p.weeks(-1, -1), i + 2, true
	case "weekend":
		return p.weekend(-1), i + 2, true
	case "month":
		return p.months(-1, -1), i + 2, true
	case "year":
		return p.years(-1, -1), i + 2, true
	}
	if wd, ok := weekdayNames[w]; ok {
		return p.recentWeekday(wd, false), p.partOfDay(i + 2), true
	}
	if m, ok := monthNames[w]; ok && !p.toks[i+1].poss && (w != "may" || !modalFollowers[p.w(i+2)]) {
		return p.recentMonth(m, true), i + 2, true
	}
	return span{}, 0, false
}

// this reads "this morning/afternoon/evening", "this week/month/year/weekend", "this past
// weekend", "this Monday".
func (p *parser) this(i int) (span, int, bool) {
	w := p.w(i + 1)
	if p.is(i+2, "of") {
		return span{}, 0, false
	}
	switch w {
	case "morning":
		return p.partOfToday(0, i+2)
	case "afternoon":
		return p.partOfToday(12, i+2)
	case "evening":
		return p.partOfToday(18, i+2)
	case "week":
		return p.weeks(0, 0), i + 2, true
	case "weekend":
		return p.weekend(0), i + 2, true
	case "month":
		return p.months(0, 0), i + 2, true
	case "year":
		return p.years(0, 0), i + 2, true
	case "past":
		if p.is(i+2, "weekend") && !p.is(i+3, "of") {
			return p.latestWeekend(), i + 3, true
		}
		return span{}, 0, false
	}
	if wd, ok := weekdayNames[w]; ok {
		return p.days(wd-p.wd, wd-p.wd), p.partOfDay(i + 2), true
	}
	return span{}, 0, false
}

// latestWeekend is the weekend we are in, or else the one before: "over the weekend", "this past
// weekend".
func (p *parser) latestWeekend() span {
	if p.wd >= 5 {
		return p.weekend(0)
	}
	return p.weekend(-1)
}

// partOfToday is today's span when the part of the day that starts at hour has begun; before
// then, "this evening" or "tonight" names the future and matches nothing.
func (p *parser) partOfToday(hour, end int) (span, int, bool) {
	if p.now.Before(p.at(0, hour)) {
		return span{}, 0, false
	}
	return p.days(0, 0), end, true
}

// partOfDay skips a "morning", "afternoon", "evening" or "night" after a day.
func (p *parser) partOfDay(i int) int {
	if partsOfDay[p.w(i)] {
		return i + 1
	}
	return i
}

// monthFirst reads what starts with a month name at i: "March 12", "March 12th, 2024",
// "March 2024", or, after a preposition, "March" alone.
func (p *parser) monthFirst(i int, m time.Month, prep string) (span, int, bool) {
	name := p.w(i)
	if p.toks[i].poss || (prep == "" && p.verbBefore(i)) {
		return span{}, 0, false
	}
	if d, ok := dayOfMonth(p.w(i + 1)); ok && !p.toks[i+1].poss && !countNouns[p.w(i+2)] {
		j := i + 2
		if j < len(p.toks) && (p.toks[j].join || p.toks[j].comma) {
			if y, ok := yearNumber(p.toks[j].w); ok {
				if d > daysIn(y, m) {
					return span{}, 0, false
				}
				return p.day(y, m, d), p.partOfDay(j + 1), true
			}
		}
		s, ok := p.recentDate(m, d)
		return s, p.partOfDay(j), ok
	}
	if y, ok := yearNumber(p.w(i + 1)); ok {
		return p.month(y, m), i + 2, true
	}
	if prep == "" || (name == "may" && modalFollowers[p.w(i+1)] && !slices.Contains(monthPreps, prep)) {
		return span{}, 0, false
	}
	return p.recentMonth(m, false), i + 1, true
}

// dayFirst reads "12 March", "12th of March 2024", and after "the", "the 12th of March".
func (p *parser) dayFirst(i int, the bool) (span, int, bool) {
	d, ok := dayOfMonth(p.w(i))
	if !ok {
		return span{}, 0, false
	}
	j := i + 1
	if p.is(j, "of") {
		j++
	} else if the {
		return span{}, 0, false
	}
	m, ok := monthNames[p.w(j)]
	if !ok || p.toks[j].poss {
		return span{}, 0, false
	}
	if y, ok := yearNumber(p.w(j + 1)); ok {
		if d > daysIn(y, m) {
			return span{}, 0, false
		}
		return p.day(y, m, d), p.partOfDay(j + 2), true
	}
	if p.w(j) == "may" && modalFollowers[p.w(j+1)] {
		return span{}, 0, false // "12 may be enough"
	}
	s, ok := p.recentDate(m, d)
	return s, p.partOfDay(j + 1), ok
}

// verbBefore reports whether the word before the month name at i makes "march", "may" or "mar"
// a verb: "we march 12 miles", "what may 3 people".
func (p *parser) verbBefore(i int) bool {
	switch p.toks[i].w {
	case "march", "may", "mar":
	default:
		return false
	}
	if i == 0 || !p.toks[i].join {
		return false
	}
	return verbCues[p.toks[i-1].w]
}

var (
	// monthPreps are the prepositions after which "May" is the month even when a pronoun
	// follows: "in May I moved".
	monthPreps = []string{"in", "during", "throughout", "between", "from", "early", "mid", "late"}
	// modalFollowers are words that make "may" the verb: "since may be", "before may I".
	modalFollowers = map[string]bool{
		"i": true, "we": true, "you": true, "he": true, "she": true, "it": true, "they": true,
		"be": true, "have": true, "not": true, "also": true, "well": true, "still": true,
		"need": true, "want": true, "come": true, "go": true, "get": true, "this": true,
		"that": true, "the": true, "a": true, "an": true, "one": true, "someone": true,
	}
	// verbCues are words before "march" or "may" that make it a verb.
	verbCues = map[string]bool{
		"i": true, "we": true, "you": true, "they": true, "he": true, "she": true, "it": true,
		"to": true, "will": true, "would": true, "did": true, "do": true, "does": true,
		"can": true, "could": true, "should": true, "must": true, "might": true, "shall": true,
		"lets": true, "let": true, "not": true, "what": true, "who": true, "how": true,
		"which": true, "where": true, "when": true, "why": true, "that": true, "this": true,
		"there": true, "people": true, "soldiers": true, "bands": true,
	}
	// countNouns after a four-digit number make it a count, not a year: "in 2000 words".
	countNouns = map[string]bool{
		"words": true, "characters": true, "chars": true, "tokens": true, "lines": true,
		"items": true, "bullets": true, "points": true, "sentences": true, "steps": true,
		"pages": true, "people": true, "times": true, "rows": true, "results": true,
		"memories": true, "notes": true, "bytes": true, "kb": true, "mb": true, "entries": true,
		"ms": true, "seconds": true, "minutes": true, "hours": true, "days": true, "weeks": true,
		"months": true, "years": true, "euros": true, "dollars": true, "units": true,
		"meters": true, "metres": true, "km": true, "miles": true,
	}
)
