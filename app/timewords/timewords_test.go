package timewords_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the tests' zones, whatever the host has installed

	"github.com/ownsona/ownsona/app/timewords"
)

// A parseCase is one query and the window it should give. since and until are "" for an open
// bound, else "2006-01-02" or "2006-01-02 15:04" in the clock's zone, or "now".
type parseCase struct {
	query, since, until, phrase string
}

// A clock is a fixed "now" to resolve queries against.
type clock struct {
	name string
	now  time.Time
	loc  *time.Location
}

func mustZone(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatal(err)
	}
	return loc
}

func (c clock) at(tb testing.TB, s string) time.Time {
	tb.Helper()
	switch s {
	case "":
		return time.Time{}
	case "now":
		return c.now
	}
	layout := "2006-01-02"
	if len(s) > len(layout) {
		layout = "2006-01-02 15:04"
	}
	t, err := time.ParseInLocation(layout, s, c.loc)
	if err != nil {
		tb.Fatal(err)
	}
	return t
}

func runParseCases(t *testing.T, c clock, cases []parseCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.query, func(t *testing.T) {
			got, ok := timewords.Parse(tc.query, c.now, c.loc)
			if !ok {
				t.Fatalf("Parse(%q) found nothing, want %q [%s, %s)", tc.query, tc.phrase, tc.since, tc.until)
			}
			want := timewords.Window{Since: c.at(t, tc.since), Until: c.at(t, tc.until), Phrase: tc.phrase}
			if !got.Since.Equal(want.Since) || !got.Until.Equal(want.Until) || got.Phrase != want.Phrase {
				t.Errorf("Parse(%q)\n got %s\nwant %s", tc.query, show(got), show(want))
			}
			for _, b := range []time.Time{got.Since, got.Until} {
				if !b.IsZero() && b.Location() != c.loc {
					t.Errorf("bound %v is in %v, want %v", b, b.Location(), c.loc)
				}
			}
		})
	}
}

func show(w timewords.Window) string {
	f := func(t time.Time) string {
		if t.IsZero() {
			return "open"
		}
		return t.Format("2006-01-02 15:04 MST")
	}
	return fmt.Sprintf("[%s, %s) %q", f(w.Since), f(w.Until), w.Phrase)
}

// berlin is a Wednesday afternoon: 2026-11-25 15:04 in Europe/Berlin.
func berlin(tb testing.TB) clock {
	loc := mustZone(tb, "Europe/Berlin")
	return clock{"berlin", time.Date(2026, 11, 25, 15, 4, 0, 0, loc), loc}
}

func TestParse(t *testing.T) {
	c := berlin(t)
	runParseCases(t, c, []parseCase{
		// Days.
		{"what did I do today?", "2026-11-25", "2026-11-26", "today"},
		{"What did I say yesterday?", "2026-11-24", "2026-11-25", "yesterday"},
		{"yesterday morning at the gym", "2026-11-24", "2026-11-25", "yesterday morning"},
		{"YESTERDAY'S meeting", "2026-11-24", "2026-11-25", "YESTERDAY"},
		{"the day before yesterday", "2026-11-23", "2026-11-24", "the day before yesterday"},
		{"what happened day before yesterday", "2026-11-23", "2026-11-24", "day before yesterday"},
		{"what did I eat last night", "2026-11-24", "2026-11-25 12:00", "last night"},
		{"what did I tell you this morning", "2026-11-25", "2026-11-26", "this morning"},
		{"this afternoon's call", "2026-11-25", "2026-11-26", "this afternoon"},
		{"what did I do earlier today", "2026-11-25", "now", "earlier today"},

		// N units ago: the calendar unit that many units back.
		{"3 days ago", "2026-11-22", "2026-11-23", "3 days ago"},
		{"what did I buy two days ago", "2026-11-23", "2026-11-24", "two days ago"},
		{"a day ago", "2026-11-24", "2026-11-25", "a day ago"},
		{"a couple of days ago", "2026-11-22", "2026-11-24", "a couple of days ago"},
		{"a couple days ago", "2026-11-22", "2026-11-24", "a couple days ago"},
		{"a few days ago", "2026-11-20", "2026-11-24", "a few days ago"},
		{"a week ago", "2026-11-16", "2026-11-23", "a week ago"},
		{"2 weeks ago", "2026-11-09", "2026-11-16", "2 weeks ago"},
		{"a fortnight ago", "2026-11-09", "2026-11-16", "a fortnight ago"},
		{"several weeks ago", "2026-10-05", "2026-11-09", "several weeks ago"},
		{"a month ago", "2026-10-01", "2026-11-01", "a month ago"},
		{"three months ago", "2026-08-01", "2026-09-01", "three months ago"},
		{"a year ago", "2025-01-01", "2026-01-01", "a year ago"},
		{"twelve years ago", "2014-01-01", "2015-01-01", "twelve years ago"},

		// Calendar weeks (ISO: Monday to Sunday), months and years.
		{"What did I do last week?", "2026-11-16", "2026-11-26", "last week"},
		{"last week's notes", "2026-11-16", "2026-11-26", "last week"},
		{"this week", "2026-11-23", "2026-11-30", "this week"},
		{"earlier this week", "2026-11-23", "now", "earlier this week"},
		{"last month", "2026-10-01", "2026-11-01", "last month"},
		{"this month", "2026-11-01", "2026-12-01", "this month"},
		{"earlier this month", "2026-11-01", "now", "earlier this month"},
		{"last year", "2025-01-01", "2026-01-01", "last year"},
		{"this year", "2026-01-01", "2027-01-01", "this year"},
		{"earlier this year", "2026-01-01", "now", "earlier this year"},
		{"last weekend", "2026-11-21", "2026-11-23", "last weekend"},
		{"this past weekend", "2026-11-21", "2026-11-23", "this past weekend"},
		{"what did we do over the weekend", "2026-11-21", "2026-11-23", "over the weekend"},

		// Rolling stretches up to now: from the start of the day that many units back.
		{"in the last 3 days", "2026-11-22", "", "in the last 3 days"},
		{"over the past two weeks", "2026-11-11", "", "over the past two weeks"},
		{"the past week", "2026-11-18", "", "the past week"},
		{"in the last week", "2026-11-18", "", "in the last week"},
		{"this past week", "2026-11-18", "", "this past week"},
		{"past month", "2026-10-25", "", "past month"},
		{"last few days", "2026-11-20", "", "last few days"},
		{"in the last couple of weeks", "2026-11-04", "", "in the last couple of weeks"},
		{"last 6 months", "2026-05-25", "", "last 6 months"},
		{"within the last 10 days", "2026-11-15", "", "within the last 10 days"},
		{"in the past year", "2025-11-25", "", "in the past year"},
		{"in the last 24 hours", "2026-11-24 15:04", "", "in the last 24 hours"},
		{"the past hour", "2026-11-25 14:04", "", "the past hour"},
		{"over the past 30 minutes", "2026-11-25 14:34", "", "over the past 30 minutes"},

		// Weekdays: the most recent one before today.
		{"what did I do on Monday", "2026-11-23", "2026-11-24", "on Monday"},
		{"last Monday", "2026-11-23", "2026-11-24", "last Monday"},
		{"last Tuesday", "2026-11-24", "2026-11-25", "last Tuesday"},
		{"on Wednesday", "2026-11-18", "2026-11-19", "on Wednesday"},
		{"on Friday night", "2026-11-20", "2026-11-21", "on Friday night"},
		{"last Sunday evening", "2026-11-22", "2026-11-23", "last Sunday evening"},
		{"this Monday", "2026-11-23", "2026-11-24", "this Monday"},
		{"this Wednesday", "2026-11-25", "2026-11-26", "this Wednesday"},
		{"notes from Friday's meeting", "2026-11-20", "2026-11-21", "from Friday"},

		// Since, after, before, until.
		{"since Monday", "2026-11-23", "", "since Monday"},
		{"since last Tuesday", "2026-11-24", "", "since last Tuesday"},
		{"since Wednesday", "2026-11-18", "", "since Wednesday"},
		{"since March", "2026-03-01", "", "since March"},
		{"since 2024-03-01", "2024-03-01", "", "since 2024-03-01"},
		{"since yesterday", "2026-11-24", "", "since yesterday"},
		{"since last week", "2026-11-16", "", "since last week"},
		{"since 2023", "2023-01-01", "", "since 2023"},
		{"since May", "2026-05-01", "", "since May"},
		{"after March", "2026-04-01", "", "after March"},
		{"after Monday", "2026-11-24", "", "after Monday"},
		{"before March", "", "2026-03-01", "before March"},
		{"before 2024-03-12", "", "2024-03-12", "before 2024-03-12"},
		{"before yesterday", "", "2026-11-24", "before yesterday"},
		{"until last week", "", "2026-11-23", "until last week"},
		{"till 2025", "", "2026-01-01", "till 2025"},
		{"as of December 2023", "", "2024-01-01", "as of December 2023"},
		{"what did I own as of March 12, 2024?", "", "2024-03-13", "as of March 12, 2024"},
		{"as of last week", "", "2026-11-23", "as of last week"},

		// Months and years: a month without a year is the most recent one that has begun.
		{"where was I in March?", "2026-03-01", "2026-04-01", "in March"},
		{"in march 2024", "2024-03-01", "2024-04-01", "in march 2024"},
		{"during March", "2026-03-01", "2026-04-01", "during March"},
		{"in November", "2026-11-01", "2026-12-01", "in November"},
		{"in December", "2025-12-01", "2026-01-01", "in December"},
		{"in early March", "2026-03-01", "2026-04-01", "in early March"},
		{"in late Sept.", "2026-09-01", "2026-10-01", "in late Sept"},
		{"in May", "2026-05-01", "2026-06-01", "in May"},
		{"In May I moved to Lisbon", "2026-05-01", "2026-06-01", "In May"},
		{"May 2024", "2024-05-01", "2024-06-01", "May 2024"},
		{"in Jan", "2026-01-01", "2026-02-01", "in Jan"},
		{"last March", "2026-03-01", "2026-04-01", "last March"},
		{"last November", "2025-11-01", "2025-12-01", "last November"},
		{"in 2023", "2023-01-01", "2024-01-01", "in 2023"},
		{"during 2023", "2023-01-01", "2024-01-01", "during 2023"},
		{"in 2024-03", "2024-03-01", "2024-04-01", "in 2024-03"},

		// Dates: without a year, the most recent one not after today.
		{"on 12 March", "2026-03-12", "2026-03-13", "on 12 March"},
		{"March 12", "2026-03-12", "2026-03-13", "March 12"},
		{"what happened on March 12th?", "2026-03-12", "2026-03-13", "on March 12th"},
		{"May 3", "2026-05-03", "2026-05-04", "May 3"},
		{"2024-03-12", "2024-03-12", "2024-03-13", "2024-03-12"},
		{"the 12th of March 2024", "2024-03-12", "2024-03-13", "the 12th of March 2024"},
		{"12th of March", "2026-03-12", "2026-03-13", "12th of March"},
		{"March 12, 2024", "2024-03-12", "2024-03-13", "March 12, 2024"},
		{"12 March 2024", "2024-03-12", "2024-03-13", "12 March 2024"},
		{"Dec 24", "2025-12-24", "2025-12-25", "Dec 24"},
		{"Nov 25", "2026-11-25", "2026-11-26", "Nov 25"},
		{"Feb 29", "2024-02-29", "2024-03-01", "Feb 29"},

		// Ranges.
		{"between March and May", "2026-03-01", "2026-06-01", "between March and May"},
		{"from March to May", "2026-03-01", "2026-06-01", "from March to May"},
		{"between November and February", "2025-11-01", "2026-03-01", "between November and February"},
		{"between 2024-03-01 and 2024-03-15", "2024-03-01", "2024-03-16", "between 2024-03-01 and 2024-03-15"},
		{"between Monday and now", "2026-11-23", "now", "between Monday and now"},
		{"from Monday to Wednesday", "2026-11-23", "2026-11-26", "from Monday to Wednesday"},
		{"between Thursday and Monday", "2026-11-19", "2026-11-24", "between Thursday and Monday"},
		{"from 2022 until 2023", "2022-01-01", "2024-01-01", "from 2022 until 2023"},
		{"from last week", "2026-11-16", "2026-11-26", "from last week"},

		// Punctuation, case, and the first of several expressions.
		{"(last week)", "2026-11-16", "2026-11-26", "last week"},
		{"LAST-WEEK", "2026-11-16", "2026-11-26", "LAST-WEEK"},
		{"last\n  week", "2026-11-16", "2026-11-26", "last\n  week"},
		{"yesterday, or maybe last week", "2026-11-24", "2026-11-25", "yesterday"},
		{"Was hast du — gestern? no: yesterday", "2026-11-24", "2026-11-25", "yesterday"},
		{"before, may I ask, what did I do in March", "2026-03-01", "2026-04-01", "in March"},
		{"we march 12 miles every March 3", "2026-03-03", "2026-03-04", "March 3"},
	})
}

// TestParse_none holds queries with no time window: no time words, words that only look like
// them, and expressions that name the future (memories are written in the past, so a question
// about tomorrow is answered by memories from before it, and filtering would hide them).
func TestParse_none(t *testing.T) {
	c := berlin(t)
	for _, query := range []string{
		"",
		"   ",
		"what is my favourite colour",
		"what do you know about my sister",
		// Modal "may", verb "march", and "second" the ordinal.
		"may I ask what my dog is called",
		"what may I have told you about Paris",
		"Before, may I ask something",
		"since may be wrong, check the list",
		"12 may be enough",
		"what may 3 people need",
		"did we march in the parade",
		"we march 12 miles",
		"I want to march with them",
		"get a second opinion on my diet",
		"the second week",
		"May's garden",
		"in May's garden",
		"Jan's birthday",
		// Numbers that are not dates.
		"give me 12 results",
		"my PIN is 2024",
		"summarize in 2000 words",
		"room 1203",
		"3 days",
		"version 2.0.1",
		"in 12.03.2024",
		// A bare weekday or month is not enough.
		"Friday's meeting notes",
		"what did I do Monday",
		"Sat on the bench in the sun",
		"Sunday roast recipe",
		"March",
		// Words inside other words.
		"Mayday",
		"yesterdays",
		"todays",
		"marching band",
		"lastweek",
		"xyesterday",
		// Vague or unsupported.
		"what have I been doing recently",
		"lately I feel tired",
		"in the past, I said",
		"my last day at work",
		"the last time we spoke",
		"the last week of March",
		"last year of school",
		"the other day",
		"an hour ago",
		// Impossible dates.
		"February 30",
		"2024-02-30",
		"2024-13-01",
		"on 32 March",
		// The future.
		"tomorrow",
		"next week",
		"next month",
		"this weekend",
		"this evening",
		"tonight",
		"this Friday",
		"in 2030",
		"after November",
		"since next Tuesday",
		"until tomorrow",
		"before 2030",
		"5000 years ago",
	} {
		t.Run(query, func(t *testing.T) {
			if got, ok := timewords.Parse(query, c.now, c.loc); ok {
				t.Errorf("Parse(%q) = %s, want no window", query, show(got))
			}
		})
	}
}

// TestParse_yearBoundary resolves against a Saturday morning just after New Year, in UTC.
func TestParse_yearBoundary(t *testing.T) {
	c := clock{"utc", time.Date(2027, 1, 2, 9, 0, 0, 0, time.UTC), time.UTC}
	runParseCases(t, c, []parseCase{
		{"yesterday", "2027-01-01", "2027-01-02", "yesterday"},
		{"last month", "2026-12-01", "2027-01-01", "last month"},
		{"last year", "2026-01-01", "2027-01-01", "last year"},
		{"this year", "2027-01-01", "2028-01-01", "this year"},
		{"in 2027", "2027-01-01", "2028-01-01", "in 2027"},
		{"this week", "2026-12-28", "2027-01-04", "this week"},
		{"last week", "2026-12-21", "2027-01-03", "last week"},
		{"this weekend", "2027-01-02", "2027-01-04", "this weekend"},
		{"over the weekend", "2027-01-02", "2027-01-04", "over the weekend"},
		{"last weekend", "2026-12-26", "2026-12-28", "last weekend"},
		{"on Saturday", "2026-12-26", "2026-12-27", "on Saturday"},
		{"this Friday", "2027-01-01", "2027-01-02", "this Friday"},
		{"in December", "2026-12-01", "2027-01-01", "in December"},
		{"since January", "2027-01-01", "", "since January"},
		{"Dec 31", "2026-12-31", "2027-01-01", "Dec 31"},
		{"March 12", "2026-03-12", "2026-03-13", "March 12"},
		{"between November and January", "2026-11-01", "2027-02-01", "between November and January"},
		{"between December and March", "2025-12-01", "2026-04-01", "between December and March"},
		{"in the last 3 months", "2026-10-02", "", "in the last 3 months"},
		{"2 weeks ago", "2026-12-14", "2026-12-21", "2 weeks ago"},
		{"a month ago", "2026-12-01", "2027-01-01", "a month ago"},
		{"3 days ago", "2026-12-30", "2026-12-31", "3 days ago"},
	})
	if _, ok := timewords.Parse("this evening", c.now, c.loc); ok {
		t.Error(`"this evening" at 09:00 matched`)
	}
}

// TestParse_rollingClamp: a month back from March 31 is the last day of February.
func TestParse_rollingClamp(t *testing.T) {
	c := clock{"utc", time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC), time.UTC}
	runParseCases(t, c, []parseCase{
		{"in the past month", "2026-02-28", "", "in the past month"},
		{"the last 13 months", "2025-02-28", "", "the last 13 months"},
		{"the past year", "2025-03-31", "", "the past year"},
	})
	leap := clock{"utc", time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), time.UTC}
	runParseCases(t, leap, []parseCase{
		{"the past year", "2027-02-28", "", "the past year"},
		{"Feb 29", "2028-02-29", "2028-03-01", "Feb 29"},
	})
}

// TestParse_dst resolves across daylight-saving changes: days are calendar days in the zone, so
// the Sunday the clocks went back lasts 25 hours.
func TestParse_dst(t *testing.T) {
	loc := mustZone(t, "Europe/Berlin")
	c := clock{"berlin-dst", time.Date(2026, 10, 26, 10, 0, 0, 0, loc), loc}
	runParseCases(t, c, []parseCase{
		{"yesterday", "2026-10-25", "2026-10-26", "yesterday"},
		{"last weekend", "2026-10-24", "2026-10-26", "last weekend"},
		{"last week", "2026-10-19", "2026-10-27", "last week"},
		{"in the last 2 days", "2026-10-24", "", "in the last 2 days"},
		{"a week ago", "2026-10-19", "2026-10-26", "a week ago"},
	})
	got, _ := timewords.Parse("yesterday", c.now, c.loc)
	if d := got.Until.Sub(got.Since); d != 25*time.Hour {
		t.Errorf("yesterday lasts %v, want 25h", d)
	}
	if _, off := got.Since.Zone(); off != 2*3600 {
		t.Errorf("yesterday starts at offset %d, want +02:00", off)
	}

	// In America/Havana the clocks jump from 00:00 to 01:00: the day begins at 01:00.
	havana := mustZone(t, "America/Havana")
	h := clock{"havana", time.Date(2026, 3, 9, 10, 0, 0, 0, havana), havana}
	got, ok := timewords.Parse("yesterday", h.now, h.loc)
	wantSince := time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC) // 01:00 CDT
	wantUntil := time.Date(2026, 3, 9, 4, 0, 0, 0, time.UTC) // 00:00 CDT
	if !ok || !got.Since.Equal(wantSince) || !got.Until.Equal(wantUntil) {
		t.Errorf("Havana yesterday = %s, want [%v, %v)", show(got), wantSince.In(havana), wantUntil.In(havana))
	}
	got, _ = timewords.Parse("the day before yesterday", h.now, h.loc)
	if !got.Until.Equal(wantSince) {
		t.Errorf("Havana day before yesterday ends %v, want %v (no gap, no overlap)", got.Until, wantSince.In(havana))
	}
}

// TestParse_location: the window is in loc, whatever now's location; a nil loc is now's.
func TestParse_location(t *testing.T) {
	tokyo := mustZone(t, "Asia/Tokyo")
	now := time.Date(2026, 11, 25, 20, 0, 0, 0, time.UTC) // already Thursday in Tokyo
	got, ok := timewords.Parse("yesterday", now, tokyo)
	want := time.Date(2026, 11, 25, 0, 0, 0, 0, tokyo)
	if !ok || !got.Since.Equal(want) || got.Since.Location() != tokyo {
		t.Errorf("Tokyo yesterday = %s, want from %v", show(got), want)
	}
	got, ok = timewords.Parse("yesterday", now, nil)
	want = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	if !ok || !got.Since.Equal(want) || got.Since.Location() != time.UTC {
		t.Errorf("nil loc yesterday = %s, want from %v", show(got), want)
	}
}

func TestWindow_Contains(t *testing.T) {
	c := berlin(t)
	w, _ := timewords.Parse("yesterday", c.now, c.loc)
	for _, tc := range []struct {
		at   string
		want bool
	}{
		{"2026-11-23 23:59", false},
		{"2026-11-24 00:00", true},
		{"2026-11-24 23:59", true},
		{"2026-11-25 00:00", false},
	} {
		if got := w.Contains(c.at(t, tc.at)); got != tc.want {
			t.Errorf("yesterday.Contains(%s) = %v, want %v", tc.at, got, tc.want)
		}
	}
	since, _ := timewords.Parse("since Monday", c.now, c.loc)
	if !since.Contains(c.now.AddDate(1, 0, 0)) || since.Contains(c.at(t, "2026-11-22 23:00")) {
		t.Error("since Monday: an open upper bound admits any later time, and nothing before Monday")
	}
	before, _ := timewords.Parse("before March", c.now, c.loc)
	if !before.Contains(time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)) || before.Contains(c.at(t, "2026-03-01")) {
		t.Error("before March: an open lower bound admits any earlier time, and nothing from March 1")
	}
}

func ExampleParse() {
	loc, _ := time.LoadLocation("Europe/Berlin")
	now := time.Date(2026, 11, 25, 15, 4, 0, 0, loc) // a Wednesday
	for _, q := range []string{
		"What did I do last week?",
		"where was I in March?",
		"anything since Monday",
		"may I ask about my sister",
	} {
		w, ok := timewords.Parse(q, now, loc)
		if !ok {
			fmt.Printf("%q: no time window\n", q)
			continue
		}
		until := "open"
		if !w.Until.IsZero() {
			until = w.Until.Format(time.DateOnly)
		}
		fmt.Printf("%q: %q = [%s, %s)\n", q, w.Phrase, w.Since.Format(time.DateOnly), until)
	}
	// Output:
	// "What did I do last week?": "last week" = [2026-11-16, 2026-11-26)
	// "where was I in March?": "in March" = [2026-03-01, 2026-04-01)
	// "anything since Monday": "since Monday" = [2026-11-23, open)
	// "may I ask about my sister": no time window
}

// FuzzParse checks Parse's promises on any query, clock and zone: it never panics; a window has a
// bound, its bounds are in loc and in order, it does not start after now, and its Phrase is
// words of the query that parse alone to the same window.
func FuzzParse(f *testing.F) {
	for _, q := range []string{
		"what did I do last week?", "since Monday", "in March 2024", "between November and February",
		"the 12th of March", "a couple of days ago", "over the past two weeks", "May 3", "may I",
		"March 12, 2024", "2024-03-12", "before 2024-03-01", "from Monday to now", "earlier this year",
		"LAST-WEEK's", "yesterday\u2019s", "in 2000 words", "\xff\xfe yesterday", "on Friday night",
	} {
		f.Add(q, int64(1795619040), uint8(0))
	}
	zones := []*time.Location{time.UTC, mustZone(f, "Europe/Berlin"), mustZone(f, "America/Havana"),
		mustZone(f, "Asia/Kathmandu"), mustZone(f, "Pacific/Kiritimati"), mustZone(f, "America/Santiago")}
	f.Fuzz(func(t *testing.T, query string, unix int64, zone uint8) {
		// Any moment from 1900 to 2200.
		const lo, hi = -2208988800, 7258118400
		unix = lo + ((unix%(hi-lo))+(hi-lo))%(hi-lo)
		loc := zones[int(zone)%len(zones)]
		now := time.Unix(unix, 0)
		w, ok := timewords.Parse(query, now, loc)
		if !ok {
			if w != (timewords.Window{}) {
				t.Fatalf("no match but a window %s", show(w))
			}
			return
		}
		if w.Since.IsZero() && w.Until.IsZero() {
			t.Fatalf("window with no bound: %s", show(w))
		}
		if !w.Since.IsZero() && !w.Until.IsZero() && w.Until.Before(w.Since) {
			t.Fatalf("Until before Since: %s", show(w))
		}
		for _, b := range []time.Time{w.Since, w.Until} {
			if !b.IsZero() && b.Location() != loc {
				t.Fatalf("bound %v in %v, want %v", b, b.Location(), loc)
			}
		}
		if !w.Since.IsZero() && w.Since.After(now) {
			t.Fatalf("window starts after now %v: %s", now, show(w))
		}
		if w.Phrase == "" || !strings.Contains(strings.ToLower(query), strings.ToLower(w.Phrase)) {
			t.Fatalf("phrase %q not in query %q", w.Phrase, query)
		}
		again, ok := timewords.Parse(w.Phrase, now, loc)
		if !ok || !again.Since.Equal(w.Since) || !again.Until.Equal(w.Until) || again.Phrase != w.Phrase {
			t.Fatalf("phrase %q alone parses to %s (ok %v), in the query to %s", w.Phrase, show(again), ok, show(w))
		}
	})
}

// TestParse_lastWeekOnSunday: said on a Sunday, "last week" still holds Thursday, four days
// ago (issue 29: the previous ISO week alone skipped it), and the previous calendar week.
func TestParse_lastWeekOnSunday(t *testing.T) {
	c := clock{"utc-sunday", time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC), time.UTC}
	runParseCases(t, c, []parseCase{
		{"what did I do last week?", "2026-11-16", "2026-11-30", "last week"},
		{"since last week", "2026-11-16", "", "since last week"},
	})
	w, _ := timewords.Parse("what did I do last week?", c.now, c.loc)
	for _, at := range []string{"2026-11-26 12:00", "2026-11-16", "2026-11-29 17:00"} {
		if !w.Contains(c.at(t, at)) {
			t.Errorf("last week, said on Sunday 2026-11-29, does not hold %s", at)
		}
	}
}

func TestMentions(t *testing.T) {
	loc := mustZone(t, "Europe/Berlin")
	c := clock{"berlin", time.Date(2023, 10, 25, 15, 4, 0, 0, loc), loc} // a Wednesday
	for _, tc := range []struct {
		text string
		want []parseCase // the phrase, since and until of each mention
	}{
		{"Audrey ate pasta on 24 October 2023", []parseCase{{"", "2023-10-24", "2023-10-25", "on 24 October 2023"}}},
		{"I went to a support group yesterday and loved it", []parseCase{{"", "2023-10-24", "2023-10-25", "yesterday"}}},
		{"In May I moved to Lisbon; last Tuesday I started a job", []parseCase{
			{"", "2023-05-01", "2023-06-01", "In May"},
			{"", "2023-10-24", "2023-10-25", "last Tuesday"},
		}},
		{"I have been running since Monday", []parseCase{{"", "2023-10-23", "now", "since Monday"}}},
		{"Over the past two weeks I slept badly", []parseCase{{"", "2023-10-11", "now", "Over the past two weeks"}}},
		{"I prefer dark roast coffee", nil},
		{"I finished it before March", nil}, // no time in particular
		{"See you tomorrow", nil},
	} {
		t.Run(tc.text, func(t *testing.T) {
			got := timewords.Mentions(tc.text, c.now, loc)
			if len(got) != len(tc.want) {
				t.Fatalf("Mentions(%q) = %d windows %v, want %d", tc.text, len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				if !got[i].Since.Equal(c.at(t, w.since)) || !got[i].Until.Equal(c.at(t, w.until)) || got[i].Phrase != w.phrase {
					t.Errorf("mention %d: got %s, want %q [%s, %s)", i, show(got[i]), w.phrase, w.since, w.until)
				}
			}
		})
	}
}

func BenchmarkMentions(b *testing.B) {
	now := time.Date(2023, 10, 25, 15, 4, 0, 0, time.UTC)
	texts := []string{
		"Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
		"Melanie: Wow, love that painting! So cool you found such a helpful group.",
		"Audrey got new collars and tags for her dogs on 24 October 2023.",
		"My partner Sam likes green tea, not coffee",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		timewords.Mentions(texts[i%len(texts)], now, time.UTC)
	}
}
