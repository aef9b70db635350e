package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteTable writes entries to w as an aligned table with a header line, one row per entry in
// the order given: time (second precision, in each entry's location: call Time.Local() first
// for local time), client, agent (the client software's own name), remote address, transport, method, tool, outcome, JSON-RPC code,
// HTTP status, duration, request and response sizes. An empty field shows as "-". Strings
// are cleaned again before printing, so nothing read from the file can drive the terminal.
func WriteTable(w io.Writer, entries []Entry) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tCLIENT\tAGENT\tREMOTE\tTRANSPORT\tMETHOD\tTOOL\tOUTCOME\tCODE\tSTATUS\tDURATION\tIN\tOUT")
	for _, e := range entries {
		t := e.Time
		e = clean(e)
		remote := ""
		if e.RemoteIP.IsValid() {
			remote = e.RemoteIP.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			t.Format("2006-01-02 15:04:05Z07:00"),
			dash(e.Client), dash(e.Agent), dash(remote), dash(string(e.Transport)), dash(e.Method), dash(e.Tool),
			outcome(e), dashInt(e.ErrorCode), dashInt(e.Status),
			formatDuration(e.Duration), formatBytes(e.RequestBytes), formatBytes(e.ResponseBytes))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write audit table: %w", err)
	}
	return nil
}

// WriteJSONLines writes entries to w as JSON Lines: one object per line (Entry.MarshalJSON),
// in the order given.
func WriteJSONLines(w io.Writer, entries []Entry) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, e := range entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("write audit json: %w", err)
		}
	}
	return nil
}

// outcome is the entry's outcome, with the number of requests an aggregated refusal stands for.
func outcome(e Entry) string {
	if e.Count > 1 {
		return fmt.Sprintf("%s×%d", dash(string(e.Outcome)), e.Count)
	}
	return dash(string(e.Outcome))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func dashInt(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// formatDuration is d at a precision fit for a table: 850µs, 12.3ms, 1.24s, 2m5s.
func formatDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(100 * time.Microsecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// formatBytes is n in B, KiB or MiB with one decimal.
func formatBytes(n int64) string {
	switch {
	case n < 1024:
		return strconv.FormatInt(n, 10) + "B"
	case n < 1024*1024:
		return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + "KiB"
	}
	return strconv.FormatFloat(float64(n)/(1024*1024), 'f', 1, 64) + "MiB"
}

// maxSinceDays bounds the days of a ParseSince duration (about 100 years).
const maxSinceDays = 36500

// ParseSince parses the value of `ownsona audit --since` into a time, relative to now: a
// duration back from now ("90m", "24h", Go's units), optionally led by days or weeks ("7d",
// "2w", "1d12h"); an RFC 3339 time ("2026-05-01T09:00:00+02:00"); or a date ("2026-05-01",
// midnight in now's location). The error names the bad value.
func ParseSince(value string, now time.Time) (time.Time, error) {
	v := strings.TrimSpace(value)
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, now.Location()); err == nil {
		return t, nil
	}
	d, ok := parseDays(v)
	if !ok {
		return time.Time{}, fmt.Errorf("parse since %q: want a duration such as 24h, 90m or 7d, "+
			"an RFC 3339 time such as 2026-05-01T09:00:00Z, or a date such as 2026-05-01", value)
	}
	return now.Add(-d), nil
}

// parseDays parses a non-negative duration with an optional leading count of days (d) or
// weeks (w).
func parseDays(v string) (time.Duration, bool) {
	var lead time.Duration
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i > 0 && i < len(v) && (v[i] == 'd' || v[i] == 'w') {
		n, err := strconv.Atoi(v[:i])
		if err == nil && v[i] == 'w' && n <= maxSinceDays {
			n *= 7
		}
		if err != nil || n > maxSinceDays {
			return 0, false
		}
		lead = time.Duration(n) * 24 * time.Hour
		v = v[i+1:]
		if v == "" {
			return lead, true
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d > maxSinceDays*24*time.Hour-lead {
		return 0, false
	}
	return lead + d, true
}
