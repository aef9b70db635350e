package audit

import (
	"fmt"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Filter selects entries for Query. The zero Filter selects every entry, newest first.
type Filter struct {
	// Since and Until bound the entries' times: Since ≤ Time < Until. A zero bound is open.
	Since, Until time.Time
	// Client, if set, must equal the entry's Client or its ClientID.
	Client string
	// Method, Tool and Outcome, if set, must equal the entry's.
	Method  string
	Tool    string
	Outcome Outcome
	// Limit is the most entries returned; if zero or negative, all that match.
	Limit int
	// OldestFirst returns entries in time order, and Limit keeps the oldest. By default the
	// newest come first and Limit keeps the newest.
	OldestFirst bool
}

func (f *Filter) match(e *Entry) bool {
	return (f.Client == "" || f.Client == e.Client || f.Client == e.ClientID) &&
		(f.Method == "" || f.Method == e.Method) &&
		(f.Tool == "" || f.Tool == e.Tool) &&
		(f.Outcome == "" || f.Outcome == e.Outcome)
}

// Query returns the entries in db that match f, in one read transaction, from both buckets
// (the served requests and the aggregated refusals) merged in time order: in each, a cursor
// seek to the time bound, then a walk that decodes each entry in range. corrupt counts the
// entries that could not be decoded, which are skipped. A database without the audit buckets
// (one that never had a Log opened on it) has no entries. Query works on a read-only DB: it is
// what `ownsona audit` uses while the server is stopped. It does not see entries still
// buffered in a Log (see Log.Query).
func Query(db *kv.DB, f Filter) (entries []Entry, corrupt int, err error) {
	var since, until int64 = 0, 1<<63 - 1
	if !f.Since.IsZero() {
		since = max(f.Since.UnixNano(), 0)
	}
	if !f.Until.IsZero() {
		until = max(f.Until.UnixNano(), 0)
	}
	var served, refused []Entry
	err = db.View(func(tx *kv.Tx) error {
		var n int
		served, n = walk(tx.Bucket(Bucket), f, since, until)
		corrupt += n
		refused, n = walk(tx.Bucket(RefusedBucket), f, since, until)
		corrupt += n
		return nil
	})
	if err != nil {
		return nil, corrupt, fmt.Errorf("query audit log: %w", err)
	}
	return merge(served, refused, f), corrupt, nil
}

// merge merges two lists in f's order and keeps f.Limit of them. Entries of the same time keep
// the served one first.
func merge(a, b []Entry, f Filter) []Entry {
	if len(b) == 0 {
		return a
	}
	out := make([]Entry, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
		takeA := len(b) == 0 || len(a) > 0 && (f.OldestFirst && !a[0].Time.After(b[0].Time) || !f.OldestFirst && !a[0].Time.Before(b[0].Time))
		if takeA {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// walk returns the entries of one bucket that match f, in f's order, at most f.Limit, and how
// many could not be decoded.
func walk(b *kv.Bucket, f Filter, since, until int64) (entries []Entry, corrupt int) {
	if b == nil {
		return nil, 0
	}
	c := b.Cursor()
	var k, v []byte
	var next func() ([]byte, []byte)
	if f.OldestFirst {
		k, v = c.Seek(entryKey(since, 0))
		next = c.Next
	} else {
		if k, _ = c.Seek(entryKey(until, 0)); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		next = c.Prev
	}
	for ; k != nil; k, v = next() {
		if len(k) != 16 {
			corrupt++
			continue
		}
		if t := keyTime(k); t < since || t >= until {
			if f.OldestFirst == (t >= until) { // walked past the far bound
				break
			}
			continue
		}
		e, err := decodeEntry(v)
		if err != nil {
			corrupt++
			continue
		}
		if !f.match(&e) {
			continue
		}
		entries = append(entries, e)
		if f.Limit > 0 && len(entries) >= f.Limit {
			break
		}
	}
	return entries, corrupt
}
