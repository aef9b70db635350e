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

// Query returns the entries in db that match f, in one read transaction: a cursor seek to the
// time bound, then a walk that decodes each entry in range. corrupt counts the entries that
// could not be decoded, which are skipped. A database without the audit bucket (one that never
// had a Log opened on it) has no entries. Query works on a read-only DB: it is what
// `ownsona audit` uses while the server is stopped. It does not see entries still buffered in
// a Log (see Log.Query).
func Query(db *kv.DB, f Filter) (entries []Entry, corrupt int, err error) {
	var since, until int64 = 0, 1<<63 - 1
	if !f.Since.IsZero() {
		since = max(f.Since.UnixNano(), 0)
	}
	if !f.Until.IsZero() {
		until = max(f.Until.UnixNano(), 0)
	}
	err = db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(Bucket)
		if b == nil {
			return nil
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
		return nil
	})
	if err != nil {
		return nil, corrupt, fmt.Errorf("query audit log: %w", err)
	}
	return entries, corrupt, nil
}
