package timewords

import (
	"strconv"
	"strings"
	"time"
)

// A span is the stretch of time one expression names, before a preposition turns it into a
// window: [since, until), both set.
type span struct {
	since, until time.Time
	// period says the span was chosen as the most recent of a repeating kind, so a range whose
	// start came out after its end may move the start back one period: "between November and
	// February" in January, "between Friday and Tuesday".
	period period
}

type period int

const (
	once period = iota
	weekly
	yearly
)

// back moves a span one period earlier.
func (s span) back() (span, bool) {
	switch s.period {
	case weekly:
		return span{since: s.since.AddDate(0, 0, -7), until: s.until.AddDate(0, 0, -7)}, true
	case yearly:
		return span{since: s.since.AddDate(-1, 0, 0), until: s.until.AddDate(-1, 0, 0)}, true
	}
	return s, false
}

// clock is the calendar the parser resolves words against: today's date in loc, and now.
type clock struct {
	now   time.Time // in loc
	loc   *time.Location
	y     int
	m     time.Month
	d     int
	wd    int // today's weekday, Monday = 0
	today time.Time
}

func newClock(now time.Time, loc *time.Location) clock {
	now = now.In(loc)
	y, m, d := now.Date()
	c := clock{now: now, loc: loc, y: y, m: m, d: d}
	c.wd = weekdayIndex(y, m, d)
	c.today = c.date(y, m, d)
	return c
}

// date is the first instant of the day in loc: midnight, or where a time-zone change skips
// midnight (America/Havana in March), the moment of the change. d may be out of range, as for
// time.Date: day 0 is the last day of the month before.
func (c clock) date(y int, m time.Month, d int) time.Time {
	t := time.Date(y, m, d, 0, 0, 0, 0, c.loc)
	want := time.Date(y, m, d, 12, 0, 0, 0, time.UTC)
	if t.Day() != want.Day() {
		// time.Date went back into the day before; the day begins when that zone period ends.
		if _, end := t.ZoneBounds(); !end.IsZero() {
			t = end
		}
	}
	return t
}

// at is the given hour of the day, n days from today.
func (c clock) at(n, hour int) time.Time { return time.Date(c.y, c.m, c.d+n, hour, 0, 0, 0, c.loc) }

// days is the span of n days from today (n = -1: yesterday).
func (c clock) days(from, to int) span {
	return span{since: c.date(c.y, c.m, c.d+from), until: c.date(c.y, c.m, c.d+to+1)}
}

// weeks is the span of ISO weeks from..to relative to this one (0: this week, -1: last week).
func (c clock) weeks(from, to int) span {
	monday := c.d - c.wd
	return span{since: c.date(c.y, c.m, monday+7*from), until: c.date(c.y, c.m, monday+7*to+7)}
}

// weekend is the Saturday and Sunday of the ISO week n weeks from this one.
func (c clock) weekend(n int) span {
	saturday := c.d - c.wd + 5 + 7*n
	return span{since: c.date(c.y, c.m, saturday), until: c.date(c.y, c.m, saturday+2)}
}

// months is the span of calendar months from..to relative to this one.
func (c clock) months(from, to int) span {
	return span{since: c.date(c.y, c.m+time.Month(from), 1), until: c.date(c.y, c.m+time.Month(to+1), 1)}
}

// years is the span of calendar years from..to relative to this one.
func (c clock) years(from, to int) span {
	return span{since: c.date(c.y+from, 1, 1), until: c.date(c.y+to+1, 1, 1)}
}

func (c clock) month(y int, m time.Month) span {
	return span{since: c.date(y, m, 1), until: c.date(y, m+1, 1)}
}

func (c clock) day(y int, m time.Month, d int) span {
	return span{since: c.date(y, m, d), until: c.date(y, m, d+1)}
}

func (c clock) year(y int) span { return span{since: c.date(y, 1, 1), until: c.date(y+1, 1, 1)} }

// recentMonth is the most recent month m that has begun: this month or earlier. With
// strictlyBefore, this month's m is last year's ("last November" in November).
func (c clock) recentMonth(m time.Month, strictlyBefore bool) span {
	y := c.y
	if m > c.m || (strictlyBefore && m == c.m) {
		y--
	}
	s := c.month(y, m)
	s.period = yearly
	return s
}

// recentDate is the most recent day m/d that is not after today; for February 29 the most recent
// leap year's.
func (c clock) recentDate(m time.Month, d int) (span, bool) {
	y := c.y
	if m > c.m || (m == c.m && d > c.d) {
		y--
	}
	for range 8 {
		if d <= daysIn(y, m) {
			s := c.day(y, m, d)
			s.period = yearly
			return s, true
		}
		y--
	}
	return span{}, false
}

// recentWeekday is the most recent day with weekday wd (Monday = 0) before today, or today too
// with orToday.
func (c clock) recentWeekday(wd int, orToday bool) span {
	back := (c.wd - wd + 7) % 7
	if back == 0 && !orToday {
		back = 7
	}
	s := c.days(-back, -back)
	s.period = weekly
	return s
}

// rollingSince is the start of the day n units before today: the lower bound of "the last n
// units". A month back from March 31 is February's last day. Hours and minutes count back from
// now itself.
func (c clock) rollingSince(u unit, n int) time.Time {
	switch u {
	case hour:
		return c.now.Add(-time.Duration(n) * time.Hour)
	case minute:
		return c.now.Add(-time.Duration(n) * time.Minute)
	case week:
		return c.date(c.y, c.m, c.d-7*n)
	case month:
		return c.clamped(c.y, c.m+time.Month(-n), c.d)
	case year:
		return c.clamped(c.y-n, c.m, c.d)
	}
	return c.date(c.y, c.m, c.d-n)
}

func (c clock) clamped(y int, m time.Month, d int) time.Time {
	first := c.date(y, m, 1)
	y, m = first.Year(), first.Month()
	return c.date(y, m, min(d, daysIn(y, m)))
}

// ago is the span of the units lo..hi units before the current one ("3 days ago": the day three
// days before today; "a few weeks ago": the ISO weeks two to five weeks before this one).
func (c clock) ago(u unit, lo, hi int) span {
	switch u {
	case week:
		return c.weeks(-hi, -lo)
	case month:
		return c.months(-hi, -lo)
	case year:
		return c.years(-hi, -lo)
	}
	return c.days(-hi, -lo)
}

func daysIn(y int, m time.Month) int { return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day() }

// weekdayIndex is the weekday of a date, Monday = 0. The date alone decides it, not the zone.
func weekdayIndex(y int, m time.Month, d int) int {
	return (int(time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()) + 6) % 7
}

// minYear is the earliest year a window may reach; "5000 years ago" matches nothing.
const minYear = 1000

type unit int

const (
	day unit = iota
	week
	month
	year
	hour   // only in rolling stretches: "in the last 24 hours"
	minute // only in rolling stretches: "the past 30 minutes"
)

var (
	monthNames = map[string]time.Month{
		"january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
		"august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
		"jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
		"sept": 9, "oct": 10, "nov": 11, "dec": 12,
	}
	weekdayNames = map[string]int{
		"monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5,
		"sunday": 6,
	}
	numberWords = map[string]int{
		"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
		"nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
		"fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
		"twenty": 20, "thirty": 30,
	}
	// partsOfDay may follow a day ("yesterday morning", "on Friday night"); the window stays the
	// whole day.
	partsOfDay = map[string]bool{"morning": true, "afternoon": true, "evening": true, "night": true}
)

// number reads a count of 1 to 9999 written in digits.
func number(w string) (int, bool) {
	if len(w) == 0 || len(w) > 4 || strings.Trim(w, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(w)
	return n, err == nil && n >= 1
}

// dayOfMonth reads "12", "12th", "1st", "2nd", "3rd": 1 to 31.
func dayOfMonth(w string) (int, bool) {
	for _, suffix := range []string{"st", "nd", "rd", "th"} {
		if s, ok := strings.CutSuffix(w, suffix); ok {
			w = s
			break
		}
	}
	if len(w) > 2 {
		return 0, false
	}
	n, ok := number(w)
	return n, ok && n <= 31
}

// yearNumber reads a four-digit year.
func yearNumber(w string) (int, bool) {
	if len(w) != 4 || w[0] == '0' {
		return 0, false
	}
	return number(w)
}

// isoDate reads 2024-03-12 (a day) or 2024-03 (a month); day is 0 for a month.
func isoDate(w string) (y int, m time.Month, d int, ok bool) {
	parts := strings.Split(w, "-")
	if len(parts) < 2 || len(parts) > 3 || len(parts[1]) != 2 {
		return 0, 0, 0, false
	}
	y, ok = yearNumber(parts[0])
	if !ok {
		return 0, 0, 0, false
	}
	mn, ok := number(parts[1])
	if !ok || mn > 12 {
		return 0, 0, 0, false
	}
	m = time.Month(mn)
	if len(parts) == 3 {
		if len(parts[2]) != 2 {
			return 0, 0, 0, false
		}
		d, ok = number(parts[2])
		if !ok || d > daysIn(y, m) {
			return 0, 0, 0, false
		}
	}
	return y, m, d, true
}
