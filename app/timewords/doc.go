// Package timewords finds the time words in a recall question ("what did I do last week?",
// "where was I in March?", "since Monday") and turns them into a window of time, so recall can
// rank first the memories written inside it; Mentions finds the same expressions in a
// memory's text, read against when it was written ("on 24 October 2023", "last Tuesday"). It
// imports only the standard library.
//
// The simplest use, as recall does it when no explicit since/until arguments were given:
//
//	w, ok := timewords.Parse(query, time.Now(), loc) // loc: OWNSONA_TIMEZONE, default the host's
//	if ok {
//		// rank first the memories with w.Contains(m.CreatedAt) or a mention in w; report
//		// time_window: {since: w.Since, until: w.Until, phrase: w.Phrase}, a zero bound as null
//	}
//
// A query with no expression below has no window: Parse returns false.
//
// # Windows
//
// A Window is the half-open interval [Since, Until): Since inclusive, Until exclusive. A zero
// Since or Until is an open side ("since March" has no Until, "before March" no Since). Days,
// weeks, months and years are calendar ones in the given location, so a day across a
// daylight-saving change lasts 23 or 25 hours, and a day whose midnight the change skips begins
// at the change. Weeks are ISO weeks, Monday to Sunday; a weekend is that week's Saturday and
// Sunday. Both bounds are in the given location.
//
// Phrase is the matched words exactly as the query has them, including the preposition ("since
// Monday", "In March 2024"): a substring of the query.
//
// # Expressions
//
// Examples resolve against Wednesday 2026-11-25 15:04. Matching ignores case and treats spaces,
// line breaks and hyphens between words alike ("last-week"); other punctuation ends an
// expression, except the comma in "March 12, 2024". A word never matches inside another word
// ("Mayday", "yesterdays"); a possessive is fine ("yesterday's meeting").
//
//	today                                  [Nov 25, Nov 26)
//	yesterday [morning|afternoon|evening|night]   [Nov 24, Nov 25)
//	[the] day before yesterday             [Nov 23, Nov 24)
//	last night                             [Nov 24 00:00, Nov 25 12:00)
//	this morning / this afternoon / this evening / tonight
//	                                       today, once that part of the day has begun (morning
//	                                       00:00, afternoon 12:00, evening and tonight 18:00);
//	                                       before then it names the future and matches nothing
//	earlier today                          [Nov 25 00:00, now)
//
//	N days/weeks/months/years ago          the calendar unit N units back:
//	                                       3 days ago [Nov 22, Nov 23); 2 weeks ago [Nov 9,
//	                                       Nov 16); a month ago [Oct 1, Nov 1); a year ago the
//	                                       whole of 2025
//	  N is digits (1–9999), one…twenty, thirty, "a"/"an" (1), or vague: "a couple [of]" 2–3,
//	  "a few" 2–5, "several" 3–7, which span those units: a few days ago [Nov 20, Nov 24).
//	  "a fortnight" is 2 weeks.
//
//	last week                              the previous calendar week and the last seven
//	                                       days: [Nov 16, Nov 26) (also after in, during,
//	                                       over, on, from; as a bound, "since last week",
//	                                       the calendar week alone)
//	this week                              [Nov 23, Nov 30)
//	last month / this month                [Oct 1, Nov 1) / [Nov 1, Dec 1)
//	last year / this year                  [2025-01-01, 2026-01-01) / [2026-01-01, 2027-01-01)
//	earlier this week/month/year           from the unit's start to now
//	last weekend                           the previous ISO week's weekend: [Nov 21, Nov 23)
//	this weekend                           this ISO week's weekend, once it has begun (a
//	                                       Saturday or Sunday); on a weekday nothing
//	this past weekend, over the weekend    the weekend we are in, else the one before
//
//	[in|over|within|during] the last/past N units, past/last N units, the past unit, past unit,
//	this past week
//	                                       from the start of the day N units back, open-ended:
//	                                       in the last 3 days [Nov 22, ∞); over the past two
//	                                       weeks [Nov 11, ∞); the past month [Oct 25, ∞) (a month
//	                                       back from March 31 is February's last day); a vague
//	                                       count takes its largest value. Hours and minutes
//	                                       count from now: in the last 24 hours [Nov 24 15:04, ∞).
//	                                       "last week" with neither "the" nor a count is the
//	                                       calendar week above.
//
//	on|since|before|after|until|from|… Monday   the most recent Monday before today: on Monday
//	                                       [Nov 23, Nov 24); on Wednesday [Nov 18, Nov 19). At the
//	                                       end of a range ("to Wednesday", "and Wednesday") and
//	                                       after until/till, today counts. A part of the day may follow ("on Friday
//	                                       night"); the window stays the whole day.
//	last Monday                            the same: the most recent Monday before today
//	this Monday                            the Monday of this ISO week; this Friday (future)
//	                                       matches nothing
//
//	in|during|since|… March [2024]          the month; without a year the most recent March
//	                                       that has begun: in March [2026-03-01, 2026-04-01),
//	                                       in December [2025-12-01, 2026-01-01). "early", "mid",
//	                                       "late" may come before the month and give the whole
//	                                       month. Abbreviations: Jan Feb Mar Apr Jun Jul Aug Sep
//	                                       Sept Oct Nov Dec.
//	March 2024                             the month, no preposition needed
//	last March                             the most recent March before this month
//	in|during|since|… 2023                 the year (four digits, 1000–9999)
//	2024-03                                the month
//
//	March 12, March 12th, 12 March, 12th of March, the 12th of March, [on] …, with an optional
//	year ("March 12, 2024", "12 March 2024"), 2024-03-12
//	                                       that day; without a year the most recent March 12
//	                                       not after today (Feb 29: the last leap year's)
//
//	since X                                [start of X, ∞)
//	after X                                [end of X, ∞)
//	before X                               [−∞, start of X)
//	until X, till X, as of X               [−∞, end of X)
//	between X and Y, from X to|until|till|through Y
//	                                       [start of X, end of Y); Y may be "now". If X comes
//	                                       out after Y and X is a yearless month or date or a
//	                                       weekday, X moves back a year or a week: between
//	                                       November and February [2025-11-01, 2026-03-01)
//	from X                                 X ("notes from last week")
//	in|during|throughout|within|over|on X  X
//
// X and Y are any expression above that names a stretch of time.
//
// # What is not a time window
//
// Parse is conservative: a window that names the wrong time ranks the wrong memories first.
// So these match nothing:
//
//   - The future: tomorrow, next week/month/year, "in 2 days", and any window that would start
//     after now ("this Friday" on a Wednesday, "in 2030", "after November" in November), or a
//     "before"/"until" bound after now ("until tomorrow"). Memories are written in the past; a
//     question about next week is answered by memories written before it.
//   - Vague time: recently, lately, the other day, a while ago, in the past, "an hour ago",
//     "the last time".
//   - A weekday, month or year alone, without a preposition, day number or year: "Friday's
//     meeting notes", "what did I do Monday", "2024", "March". A day number or year makes a
//     month a date ("May 3", "May 2024").
//   - Words that only look like time: "may" the verb ("may I ask", "what may 3 people need",
//     "since may be wrong", "12 may be enough"; but "In May I moved" is the month), "march"
//     the verb ("did we march", "we march 12 miles"), "second" the ordinal, "sat", "sun", "wed"
//     (weekdays are never abbreviated), a possessive month ("May's garden", "Jan's birthday"),
//     a four-digit number followed by a count ("in 2000 words"), "the last week of March",
//     "last year of school" (a unit followed by "of").
//   - Impossible dates: February 30, 2024-13-01.
//   - Seasons and holidays (summer, Christmas), "the 12th" without a month, numeric dates
//     other than ISO (12/03/2024 is day-first in some countries and month-first in others).
//
// # Caveats
//
// When a query holds several expressions, the first (leftmost) wins: "yesterday, or maybe last
// week" gives yesterday. They are not intersected.
//
// The window says when something was said or happened: recall ranks first the memories
// written in it and those whose text mentions a time in it (Mentions). Explicit since/until
// arguments (which win over the query) are the filters.
package timewords
