package audit_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

var (
	t0   = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tNow = t0.AddDate(0, 0, 7)
)

// MustOpenLog opens a Log on db, closed at cleanup (before the database). Unless cfg sets a
// clock, it is stopped at tNow, so that entries around t0 are never too old.
func MustOpenLog(tb testing.TB, db *kv.DB, cfg audit.Config) *audit.Log {
	tb.Helper()
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return tNow }
	}
	l, err := audit.Open(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = l.Close() })
	return l
}

// MustFlush flushes l.
func MustFlush(tb testing.TB, l *audit.Log) {
	tb.Helper()
	if err := l.Flush(); err != nil {
		tb.Fatal(err)
	}
}

// MustQuery queries db and fails on an error or a corrupt entry.
func MustQuery(tb testing.TB, db *kv.DB, f audit.Filter) []audit.Entry {
	tb.Helper()
	entries, corrupt, err := audit.Query(db, f)
	if err != nil {
		tb.Fatal(err)
	}
	if corrupt != 0 {
		tb.Fatalf("%d corrupt entries", corrupt)
	}
	return entries
}

// sample is the i-th entry of a varied sequence, one a minute from t0.
func sample(i int) audit.Entry {
	clients := []struct{ name, id string }{{"Claude", "c-claude"}, {"ChatGPT", "c-gpt"}, {"pat:script", "p1"}}
	methods := []string{"tools/call", "tools/list", "initialize", "tools/call"}
	c, m := clients[i%len(clients)], methods[i%len(methods)]
	e := audit.Entry{
		Time:          t0.Add(time.Duration(i) * time.Minute),
		Client:        c.name,
		ClientID:      c.id,
		RemoteIP:      netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}),
		Transport:     audit.TransportHTTP,
		Method:        m,
		Outcome:       audit.OutcomeOK,
		Status:        200,
		Duration:      time.Duration(i+1) * time.Millisecond,
		RequestBytes:  int64(100 + i),
		ResponseBytes: int64(1000 + i),
	}
	if m == "tools/call" {
		e.Tool = []string{"recall", "remember"}[i%2]
	}
	switch {
	case i%7 == 3: // refusals (401, 429, 503) are aggregated apart: TestLog_Refusals
		e.Outcome, e.Status, e.ErrorCode = audit.OutcomeDenied, 403, -32003
	case i%5 == 4:
		e.Outcome, e.ErrorCode = audit.OutcomeError, -32602
	}
	return e
}

func wantEntries(tb testing.TB, got, want []audit.Entry) {
	tb.Helper()
	if len(got) != len(want) {
		tb.Fatalf("got %d entries, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if !got[i].Time.Equal(want[i].Time) {
			tb.Fatalf("entry %d: time %v, want %v", i, got[i].Time, want[i].Time)
		}
		g, w := got[i], want[i]
		g.Time, w.Time = time.Time{}, time.Time{}
		if g != w {
			tb.Fatalf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestLog_RoundTrip(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{})
	in := []audit.Entry{
		{
			Time: t0.Add(123456789), Client: "Claude", ClientID: "c-1", RemoteIP: netip.MustParseAddr("2001:db8::7"),
			Transport: audit.TransportHTTP, Method: "tools/call", Tool: "recall", Outcome: audit.OutcomeToolError,
			ErrorCode: -32001, Status: 200, Duration: 1234567 * time.Nanosecond, RequestBytes: 1 << 40, ResponseBytes: 7,
		},
		{Time: t0.Add(time.Second), Client: "stdio", Transport: audit.TransportStdio, Method: "ping", Outcome: audit.OutcomeOK},
		{Time: t0.Add(2 * time.Second), RemoteIP: netip.MustParseAddr("203.0.113.9"), Transport: audit.TransportSSE,
			Outcome: audit.OutcomeDenied, Status: 403, Agent: "claude-code 2.1.4"},
		{}, // all zero: the time comes from the clock
	}
	for _, e := range in {
		l.Record(e)
	}
	MustFlush(t, l)
	got := MustQuery(t, db, audit.Filter{OldestFirst: true, Until: t0.Add(time.Hour)})
	wantEntries(t, got, in[:3])
	all := MustQuery(t, db, audit.Filter{})
	if len(all) != 4 || !all[0].Time.Equal(tNow) {
		t.Errorf("the zero entry was not stamped with the clock: %+v", all)
	}
	if s := l.Stats(); s.Written != 4 || s.Stored != 4 || s.Dropped != 0 {
		t.Errorf("Stats = %+v, want 4 written and stored", s)
	}
}

// TestLog_Clean: what a hostile client controls is bounded and cannot drive a terminal.
func TestLog_Clean(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{})
	l.Record(audit.Entry{
		Time:      t0,
		Client:    "Evil\x1b[2J\u202eClient\n" + strings.Repeat("x", 300),
		ClientID:  "id\x00",
		RemoteIP:  netip.MustParseAddr("::ffff:192.0.2.1"),
		Transport: "http",
		Method:    "remember this: the password is hunter2",
		Tool:      strings.Repeat("t", 100),
		Outcome:   "ok",
		Duration:  -time.Second,
	})
	MustFlush(t, l)
	got := MustQuery(t, db, audit.Filter{})
	if len(got) != 1 {
		t.Fatalf("got %d entries", len(got))
	}
	e := got[0]
	if want := "Evil?[2J?Client?" + strings.Repeat("x", 111) + "…"; e.Client != want {
		t.Errorf("Client = %q, want %q", e.Client, want)
	}
	if want := "id?"; e.ClientID != want {
		t.Errorf("ClientID = %q, want %q", e.ClientID, want)
	}
	if want := "remember?this:?the?password?is?hunter2"; e.Method != want {
		t.Errorf("Method = %q, want %q", e.Method, want)
	}
	if want := strings.Repeat("t", 63) + "…"; e.Tool != want {
		t.Errorf("Tool = %q, want %q", e.Tool, want)
	}
	if want := netip.MustParseAddr("192.0.2.1"); e.RemoteIP != want {
		t.Errorf("RemoteIP = %v, want %v", e.RemoteIP, want)
	}
	if e.Duration != 0 {
		t.Errorf("Duration = %v, want 0", e.Duration)
	}
}

func TestQuery_Filter(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{})
	const n = 60
	var all []audit.Entry
	for i := range n {
		all = append(all, sample(i))
		l.Record(sample(i))
	}
	MustFlush(t, l)

	// reference applies f to all by brute force.
	reference := func(f audit.Filter) []audit.Entry {
		var out []audit.Entry
		for _, e := range all {
			if (!f.Since.IsZero() && e.Time.Before(f.Since)) || (!f.Until.IsZero() && !e.Time.Before(f.Until)) ||
				(f.Client != "" && f.Client != e.Client && f.Client != e.ClientID) ||
				(f.Method != "" && f.Method != e.Method) || (f.Tool != "" && f.Tool != e.Tool) ||
				(f.Outcome != "" && f.Outcome != e.Outcome) {
				continue
			}
			out = append(out, e)
		}
		if !f.OldestFirst {
			slices.Reverse(out)
		}
		if f.Limit > 0 && len(out) > f.Limit {
			out = out[:f.Limit]
		}
		return out
	}
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }
	for _, tc := range []struct {
		name string
		f    audit.Filter
		n    int // the reference's count, to keep the table honest
	}{
		{"all newest first", audit.Filter{}, n},
		{"all oldest first", audit.Filter{OldestFirst: true}, n},
		{"since", audit.Filter{Since: at(50)}, 10},
		{"since between entries", audit.Filter{Since: at(50).Add(time.Second)}, 9},
		{"until is exclusive", audit.Filter{Until: at(10)}, 10},
		{"until oldest first", audit.Filter{Until: at(10), OldestFirst: true}, 10},
		{"range", audit.Filter{Since: at(20), Until: at(30)}, 10},
		{"range oldest first", audit.Filter{Since: at(20), Until: at(30), OldestFirst: true}, 10},
		{"range after the end", audit.Filter{Since: at(100), Until: at(200)}, 0},
		{"empty range", audit.Filter{Since: at(30), Until: at(20)}, 0},
		{"since before 1970", audit.Filter{Since: time.Unix(-1000, 0)}, n},
		{"client by name", audit.Filter{Client: "ChatGPT"}, 20},
		{"client by id", audit.Filter{Client: "p1"}, 20},
		{"unknown client", audit.Filter{Client: "nobody"}, 0},
		{"method", audit.Filter{Method: "tools/list"}, 15},
		{"tool", audit.Filter{Tool: "recall"}, 15},
		{"outcome", audit.Filter{Outcome: audit.OutcomeDenied}, 9},
		{"combined", audit.Filter{Client: "Claude", Method: "tools/call", Outcome: audit.OutcomeOK}, 7},
		{"limit newest", audit.Filter{Limit: 5}, 5},
		{"limit oldest", audit.Filter{Limit: 5, OldestFirst: true}, 5},
		{"limit with filter", audit.Filter{Limit: 3, Tool: "remember", Since: at(10)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := reference(tc.f)
			if len(want) != tc.n {
				t.Fatalf("reference gives %d entries, the table says %d", len(want), tc.n)
			}
			wantEntries(t, MustQuery(t, db, tc.f), want)
		})
	}

	t.Run("Log.Query sees pending entries", func(t *testing.T) {
		l.Record(sample(n))
		got, _, err := l.Query(audit.Filter{Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		wantEntries(t, got, []audit.Entry{sample(n)})
	})
}

func TestLog_PruneCount(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{MaxEntries: 10})
	for i := range 25 {
		l.Record(sample(i))
		if i%4 == 0 {
			MustFlush(t, l)
		}
	}
	MustFlush(t, l)
	var want []audit.Entry
	for i := 24; i >= 15; i-- {
		want = append(want, sample(i))
	}
	wantEntries(t, MustQuery(t, db, audit.Filter{}), want)
	if s := l.Stats(); s.Stored != 10 || s.Pruned != 15 || s.Written != 25 {
		t.Errorf("Stats = %+v, want 25 written, 15 pruned, 10 stored", s)
	}
}

func TestLog_PruneAge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(t0)) // the bubble's clock starts in 2000: move it to the samples'
		db := kvtest.Open(t)
		// The clock is the bubble's; no tick within the test, so the Flush below prunes.
		l := MustOpenLog(t, db, audit.Config{Now: time.Now, MaxAge: time.Hour, FlushInterval: 24 * time.Hour})
		for i := range 10 {
			l.Record(sample(i * 10)) // t0, t0+10m, …, t0+90m
		}
		MustFlush(t, l)
		if got := len(MustQuery(t, db, audit.Filter{})); got != 10 {
			t.Fatalf("%d entries stored, want 10 (none too old yet)", got)
		}
		time.Sleep(time.Hour + 45*time.Minute) // keeps t0+45m and later
		MustFlush(t, l)                        // nothing pending: prunes only
		got := MustQuery(t, db, audit.Filter{OldestFirst: true})
		wantEntries(t, got, []audit.Entry{sample(50), sample(60), sample(70), sample(80), sample(90)})
		if s := l.Stats(); s.Stored != 5 || s.Pruned != 5 {
			t.Errorf("Stats = %+v, want 5 stored, 5 pruned", s)
		}
	})
}

func TestLog_Reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	db := kvtest.OpenFile(t, path, kv.Options{})
	l := MustOpenLog(t, db, audit.Config{})
	for i := range 20 {
		l.Record(sample(i))
	}
	if err := l.Close(); err != nil { // Close writes what is pending
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = kvtest.OpenFile(t, path, kv.Options{})
	l = MustOpenLog(t, db, audit.Config{MaxEntries: 8})
	if s := l.Stats(); s.Stored != 20 {
		t.Errorf("after reopening Stored = %d, want 20", s.Stored)
	}
	MustFlush(t, l) // prunes to the new bound
	var want []audit.Entry
	for i := 19; i >= 12; i-- {
		want = append(want, sample(i))
	}
	wantEntries(t, MustQuery(t, db, audit.Filter{}), want)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	ro := kvtest.OpenFile(t, path, kv.Options{ReadOnly: true})
	wantEntries(t, MustQuery(t, ro, audit.Filter{}), want)
}

// TestLog_Concurrent records from many goroutines while others flush and query (for -race).
// Every entry is either written or counted as dropped.
func TestLog_Concurrent(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{BufferSize: 256, BatchSize: 32})
	const goroutines, each = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				e := sample(i)
				e.ClientID = fmt.Sprint("g", g)
				l.Record(e)
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			if err := l.Flush(); err != nil {
				t.Error(err)
			}
			if _, _, err := l.Query(audit.Filter{Limit: 10}); err != nil {
				t.Error(err)
			}
			_ = l.Stats()
		}
	})
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	s := l.Stats()
	if s.Written+s.Dropped != goroutines*each || s.Failed != 0 {
		t.Errorf("Stats = %+v: written + dropped ≠ %d", s, goroutines*each)
	}
	if got := len(MustQuery(t, db, audit.Filter{})); uint64(got) != s.Written {
		t.Errorf("%d entries stored, %d written", got, s.Written)
	}
}

func TestLog_Close(t *testing.T) {
	db := kvtest.Open(t)
	l := MustOpenLog(t, db, audit.Config{})
	l.Record(sample(0))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	l.Record(sample(1)) // dropped, never a panic
	if err := l.Flush(); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Flush after Close = %v, want ErrClosed", err)
	}
	if _, _, err := l.Query(audit.Filter{}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Query after Close = %v, want ErrClosed", err)
	}
	if s := l.Stats(); s.Written != 1 || s.Dropped != 1 {
		t.Errorf("Stats = %+v, want 1 written, 1 dropped", s)
	}

	var nilLog *audit.Log
	nilLog.Record(sample(0))
	if nilLog.Flush() != nil || nilLog.Close() != nil || nilLog.Stats() != (audit.Stats{}) {
		t.Error("a nil Log is not inert")
	}
}

func TestLog_WriteError(t *testing.T) {
	db := kvtest.Open(t)
	var mu sync.Mutex
	var reported []error
	l := MustOpenLog(t, db, audit.Config{OnError: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		reported = append(reported, err)
	}})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	l.Record(sample(0))
	l.Record(sample(1))
	err := l.Flush()
	if !errors.Is(err, kv.ErrClosed) {
		t.Fatalf("Flush on a closed DB = %v, want kv.ErrClosed", err)
	}
	if s := l.Stats(); s.Failed != 2 || s.Written != 0 {
		t.Errorf("Stats = %+v, want 2 failed", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 1 || !strings.Contains(reported[0].Error(), "write audit log") {
		t.Errorf("OnError got %v", reported)
	}
}

// TestLog_Background runs the writer on the real clock in a synctest bubble: batches are
// written by size and by interval without Flush, and an idle writer prunes by age.
func TestLog_Background(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := kvtest.Open(t)
		l, err := audit.Open(db, audit.Config{MaxAge: time.Hour, BatchSize: 4, FlushInterval: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()

		for range 4 { // a full batch is written at once
			l.Record(audit.Entry{Method: "ping"})
		}
		synctest.Wait()
		if got := l.Stats().Written; got != 4 {
			t.Errorf("after a full batch Written = %d, want 4", got)
		}

		l.Record(audit.Entry{Method: "ping"}) // a partial one waits for the interval
		synctest.Wait()
		if got := l.Stats().Written; got != 4 {
			t.Errorf("before the interval Written = %d, want 4", got)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := l.Stats().Written; got != 5 {
			t.Errorf("after the interval Written = %d, want 5", got)
		}

		time.Sleep(time.Hour) // everything is now too old; the idle writer notices
		synctest.Wait()
		if s := l.Stats(); s.Stored != 0 || s.Pruned != 5 {
			t.Errorf("after an idle hour Stats = %+v, want 0 stored, 5 pruned", s)
		}
	})
}

func TestQuery_NoBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	db := kvtest.OpenFile(t, path, kv.Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := kvtest.OpenFile(t, path, kv.Options{ReadOnly: true})
	if got := MustQuery(t, ro, audit.Filter{}); len(got) != 0 {
		t.Errorf("got %d entries from a file without the bucket", len(got))
	}
}

func TestOpen_Config(t *testing.T) {
	db := kvtest.Open(t)
	for _, tc := range []struct {
		cfg  audit.Config
		want string
	}{
		{audit.Config{BufferSize: -1}, "buffer size"},
		{audit.Config{BatchSize: -1}, "batch size"},
		{audit.Config{FlushInterval: -time.Second}, "flush interval"},
	} {
		if _, err := audit.Open(db, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%+v) = %v, want an error naming %q", tc.cfg, err, tc.want)
		}
	}
	// Negative bounds turn pruning off.
	l := MustOpenLog(t, db, audit.Config{MaxAge: -1, MaxEntries: -1, Now: func() time.Time { return t0.AddDate(10, 0, 0) }})
	for i := range 5 {
		l.Record(sample(i))
	}
	MustFlush(t, l)
	if s := l.Stats(); s.Stored != 5 || s.Pruned != 0 {
		t.Errorf("without bounds Stats = %+v, want 5 stored", s)
	}
}

func TestWriteTable(t *testing.T) {
	entries := []audit.Entry{sample(4), {
		Time: t0.Add(3 * time.Minute), RemoteIP: netip.MustParseAddr("192.0.2.9"), Transport: audit.TransportHTTP, Method: "http:POST",
		Outcome: audit.OutcomeUnauthorized, Status: 401, Duration: 2 * time.Millisecond, RequestBytes: 3700, ResponseBytes: 3700, Count: 37,
	}, sample(3), {
		Time: t0, Client: "Evil\x1b]0;pwned\x07", Transport: audit.TransportStdio, Method: "ping",
		Outcome: audit.OutcomeOK, Duration: 850 * time.Microsecond, ResponseBytes: 3 << 20,
	}}
	entries[2].RemoteIP = netip.MustParseAddr("2001:db8::1")
	entries[2].Duration = 90 * time.Second
	entries[2].Agent = "claude-code 2.1.4"
	var b bytes.Buffer
	if err := audit.WriteTable(&b, entries); err != nil {
		t.Fatal(err)
	}
	want := `TIME                  CLIENT          AGENT              REMOTE       TRANSPORT  METHOD      TOOL      OUTCOME          CODE    STATUS  DURATION  IN      OUT
2026-05-01 12:04:00Z  ChatGPT         -                  192.0.2.4    http       tools/call  recall    error            -32602  200     5ms       104B    1004B
2026-05-01 12:03:00Z  -               -                  192.0.2.9    http       http:POST   -         unauthorized×37  -       401     2ms       3.6KiB  3.6KiB
2026-05-01 12:03:00Z  Claude          claude-code 2.1.4  2001:db8::1  http       tools/call  remember  denied           -32003  403     1m30s     103B    1003B
2026-05-01 12:00:00Z  Evil?]0;pwned?  -                  -            stdio      ping        -         ok               -       -       850µs     0B      3.0MiB
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteJSONLines(t *testing.T) {
	var b bytes.Buffer
	entries := []audit.Entry{sample(4), {Time: t0, Client: "stdio", Transport: audit.TransportStdio, Method: "ping", Outcome: audit.OutcomeOK}}
	if err := audit.WriteJSONLines(&b, entries); err != nil {
		t.Fatal(err)
	}
	want := `{"time":"2026-05-01T12:04:00Z","client":"ChatGPT","client_id":"c-gpt","remote_ip":"192.0.2.4","transport":"http","method":"tools/call","tool":"recall","outcome":"error","error_code":-32602,"status":200,"duration_ms":5,"request_bytes":104,"response_bytes":1004}
{"time":"2026-05-01T12:00:00Z","client":"stdio","transport":"stdio","method":"ping","outcome":"ok","duration_ms":0,"request_bytes":0,"response_bytes":0}
`
	if got := b.String(); got != want {
		t.Errorf("JSON lines:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseSince(t *testing.T) {
	paris := time.FixedZone("CEST", 2*3600)
	now := time.Date(2026, 5, 17, 14, 30, 0, 0, paris)
	for _, tc := range []struct {
		value string
		want  time.Time
	}{
		{"24h", now.Add(-24 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"7d", now.AddDate(0, 0, -7)},
		{"2w", now.AddDate(0, 0, -14)},
		{"1d12h", now.Add(-36 * time.Hour)},
		{"0s", now},
		{" 24h ", now.Add(-24 * time.Hour)},
		{"2026-05-01T09:00:00Z", time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)},
		{"2026-05-01T09:00:00.5+02:00", time.Date(2026, 5, 1, 7, 0, 0, 5e8, time.UTC)},
		{"2026-05-01", time.Date(2026, 5, 1, 0, 0, 0, 0, paris)},
	} {
		t.Run(tc.value, func(t *testing.T) {
			got, err := audit.ParseSince(tc.value, now)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) {
				t.Errorf("ParseSince(%q) = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
	for _, bad := range []string{"", "abc", "-5h", "7x", "d", "1.5d", "7d-1h", "99999999d", "9999999999999999999999w",
		"200000d", "2026-13-01", "2026-05-01T09:00:00", "24"} {
		t.Run("bad "+bad, func(t *testing.T) {
			_, err := audit.ParseSince(bad, now)
			if err == nil {
				t.Fatalf("ParseSince(%q) succeeded", bad)
			}
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
				t.Errorf("error %q does not name the value", err)
			}
		})
	}
}

// BenchmarkLog_Record is what a request pays: "queued" with room in the buffer (the writer's
// flushes are not timed), "parallel" from every core at once, mostly finding the buffer full.
func BenchmarkLog_Record(b *testing.B) {
	e := sample(1)
	b.Run("queued", func(b *testing.B) {
		l := MustOpenLog(b, kvtest.Open(b), audit.Config{BufferSize: 1 << 15, BatchSize: 1 << 20, FlushInterval: time.Hour})
		b.ReportAllocs()
		for i := range b.N {
			l.Record(e)
			if i%(1<<15) == 1<<15-1 {
				b.StopTimer()
				MustFlush(b, l)
				b.StartTimer()
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(l.Stats().Dropped)/float64(b.N), "dropped/op")
	})
	b.Run("parallel", func(b *testing.B) {
		l := MustOpenLog(b, kvtest.Open(b), audit.Config{})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Record(e)
			}
		})
		b.StopTimer()
		b.ReportMetric(float64(l.Stats().Dropped)/float64(b.N), "dropped/op")
	})
}

// BenchmarkLog_Write is the writer's cost per entry: batches of 256 committed (with fsync) and
// pruned at the 100,000-entry bound once it is reached.
func BenchmarkLog_Write(b *testing.B) {
	db := kvtest.Open(b)
	l := MustOpenLog(b, db, audit.Config{BufferSize: 256, BatchSize: 1 << 20, FlushInterval: time.Hour})
	e := sample(1)
	b.ReportAllocs()
	for i := range b.N {
		l.Record(e)
		if i%256 == 255 {
			MustFlush(b, l)
		}
	}
	MustFlush(b, l)
	if d := l.Stats().Dropped; d != 0 {
		b.Fatalf("%d dropped", d)
	}
}

// BenchmarkQuery filters 10,000 entries by client for the newest 100.
func BenchmarkQuery(b *testing.B) {
	db := kvtest.Open(b)
	l := MustOpenLog(b, db, audit.Config{BufferSize: 10_000, BatchSize: 10_000})
	for i := range 10_000 {
		l.Record(sample(i))
	}
	MustFlush(b, l)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := audit.Query(db, audit.Filter{Client: "Claude", Limit: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLog_Refusals (issue 13, item 3): requests refused before they were served (401, 429,
// 503) are recorded once per address (IPv6 by /64), outcome and minute, with their count, in a
// bucket of their own: a flood of them can never push out the record of real use.
func TestLog_Refusals(t *testing.T) {
	refusal := func(ip string, at time.Duration, o audit.Outcome) audit.Entry {
		status := map[audit.Outcome]int{audit.OutcomeUnauthorized: 401, audit.OutcomeRateLimited: 429, audit.OutcomeBusy: 503}[o]
		return audit.Entry{Time: t0.Add(at), RemoteIP: netip.MustParseAddr(ip), Transport: audit.TransportHTTP,
			Method: "http:POST", Outcome: o, Status: status, Duration: time.Millisecond, RequestBytes: 10, ResponseBytes: 100}
	}

	t.Run("aggregated per address and minute", func(t *testing.T) {
		db := kvtest.Open(t)
		l := MustOpenLog(t, db, audit.Config{})
		for i := range 200 {
			l.Record(refusal("198.51.100.7", time.Duration(i)*100*time.Millisecond, audit.OutcomeUnauthorized)) // 20 s
		}
		for i := range 50 { // one /64, many addresses
			l.Record(refusal(fmt.Sprintf("2001:db8:0:1::%x", i+1), time.Duration(i)*time.Second, audit.OutcomeRateLimited))
		}
		l.Record(refusal("198.51.100.7", 90*time.Second, audit.OutcomeUnauthorized)) // the next minute
		l.Record(sample(0))
		MustFlush(t, l)
		got := MustQuery(t, db, audit.Filter{OldestFirst: true})
		var summary []string
		for _, e := range got {
			summary = append(summary, fmt.Sprintf("%s %s %s ×%d %dB", e.Time.Format("15:04:05"), e.RemoteIP, e.Outcome, e.Count, e.RequestBytes))
		}
		want := []string{
			"12:00:00 192.0.2.0 ok ×0 100B",
			"12:00:00 198.51.100.7 unauthorized ×200 2000B",
			"12:00:00 2001:db8:0:1::1 rate_limited ×50 500B",
			"12:01:00 198.51.100.7 unauthorized ×1 10B",
		}
		if !slices.Equal(summary, want) {
			t.Errorf("entries:\n%s\nwant:\n%s", strings.Join(summary, "\n"), strings.Join(want, "\n"))
		}
		if s := l.Stats(); s.Stored != 1 || s.Refused != 3 || s.Folded != 248 {
			t.Errorf("Stats = %+v, want 1 stored, 3 refused, 248 folded", s)
		}
		if n := len(MustQuery(t, db, audit.Filter{Outcome: audit.OutcomeUnauthorized})); n != 2 {
			t.Errorf("filter by outcome: %d entries, want 2", n)
		}
	})

	t.Run("a flood never evicts real use", func(t *testing.T) {
		db := kvtest.Open(t)
		l := MustOpenLog(t, db, audit.Config{MaxEntries: 10, MaxRefused: 5, MaxAge: -1})
		for i := range 10 {
			l.Record(sample(i))
		}
		MustFlush(t, l)
		for i := range 3000 { // 3,000 addresses over 30 minutes
			l.Record(refusal(fmt.Sprintf("203.0.%d.%d", i/250, i%250+1), time.Duration(i)*600*time.Millisecond, audit.OutcomeUnauthorized))
			if i%500 == 499 {
				MustFlush(t, l)
			}
		}
		MustFlush(t, l)
		served := MustQuery(t, db, audit.Filter{Outcome: audit.OutcomeOK})
		var want int
		for i := range 10 {
			if sample(i).Outcome == audit.OutcomeOK {
				want++
			}
		}
		if len(served) != want {
			t.Errorf("%d served entries left after the flood, want all %d", len(served), want)
		}
		if s := l.Stats(); s.Stored != 10 || s.Refused != 5 {
			t.Errorf("Stats = %+v, want the 10 entries kept and 5 refusals", s)
		}
	})

	t.Run("groups in memory are bounded", func(t *testing.T) {
		db := kvtest.Open(t)
		l := MustOpenLog(t, db, audit.Config{MaxRefused: -1})
		const n = 10_050
		for i := range n { // all in one minute, each its own address
			l.Record(refusal(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}).String(), 0, audit.OutcomeBusy))
		}
		MustFlush(t, l)
		if s := l.Stats(); s.Refused != 10_000 || s.Dropped != n-10_000 {
			t.Errorf("Stats = %+v, want 10000 refusals kept and %d dropped", s, n-10_000)
		}
	})
}
