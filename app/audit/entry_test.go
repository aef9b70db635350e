package audit

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// now is the tests' clock: a day after full.Time.
func now() time.Time { return full.Time.Add(24 * time.Hour) }

var full = Entry{
	Time: time.Date(2026, 5, 1, 12, 0, 0, 123, time.UTC), Client: "Claude", ClientID: "c-1",
	RemoteIP: netip.MustParseAddr("2001:db8::7"), Transport: TransportHTTP, Method: "tools/call",
	Tool: "recall", Outcome: OutcomeOK, ErrorCode: -32001, Status: 200, Duration: time.Second,
	RequestBytes: 10, ResponseBytes: 20, Agent: "claude-code 2.1.4", Count: 3,
}

// TestLog_Drops fills the buffer while the writer is not running: what does not fit is dropped
// and counted, never waited for.
func TestLog_Drops(t *testing.T) {
	db := kvtest.Open(t)
	l, err := open(db, Config{Now: now, BufferSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		l.Record(full)
	}
	if s := l.Stats(); s.Dropped != 6 {
		t.Errorf("Dropped = %d, want 6", s.Dropped)
	}
	go l.run()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.Written != 4 || s.Dropped != 6 || s.Stored != 4 {
		t.Errorf("Stats = %+v, want 4 written and stored, 6 dropped", s)
	}
}

// TestLog_PruneBudget: one write deletes at most max(minPrune, 2×added) entries, and the next
// writes carry on.
func TestLog_PruneBudget(t *testing.T) {
	db := kvtest.Open(t)
	l, err := Open(db, Config{Now: now, BufferSize: 4000, BatchSize: 4000, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		e := full
		e.Time = e.Time.Add(time.Duration(i))
		l.Record(e)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = Open(db, Config{Now: now, MaxEntries: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, want := range []int{3000 - minPrune, 3000 - 2*minPrune, 10} {
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := l.Stats().Stored; got != want {
			t.Fatalf("Stored = %d, want %d", got, want)
		}
	}
}

func TestQuery_Corrupt(t *testing.T) {
	db := kvtest.Open(t)
	l, err := Open(db, Config{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Record(full)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *kv.Tx) error {
		b := tx.Bucket(Bucket)
		for _, kv := range [][2][]byte{
			{entryKey(full.Time.UnixNano()-1, 100), []byte{version1, 0xff}}, // truncated
			{entryKey(full.Time.UnixNano()+1, 101), []byte{9, 1, 2, 3}},     // unknown version
			{entryKey(full.Time.UnixNano()+2, 102), nil},                    // empty
			{[]byte("short"), encodeEntry(full)},                            // bad key
		} {
			if err := b.Put(kv[0], kv[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, oldestFirst := range []bool{false, true} {
		got, corrupt, err := Query(db, Filter{OldestFirst: oldestFirst})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != full || corrupt != 4 {
			t.Errorf("OldestFirst %v: got %v, %d corrupt; want the one entry and 4 corrupt", oldestFirst, got, corrupt)
		}
	}
}

func TestDecodeEntry(t *testing.T) {
	for _, e := range []Entry{full, {Time: time.Unix(0, 0).UTC()}, {Time: time.Unix(0, -5).UTC(), RemoteIP: netip.MustParseAddr("192.0.2.1")}} {
		b := encodeEntry(e)
		got, err := decodeEntry(b)
		if err != nil || got != e {
			t.Errorf("decode(encode(%+v)) = %+v, %v", e, got, err)
		}
		for i := range len(b) { // every truncation is corrupt
			if _, err := decodeEntry(b[:i]); !errors.Is(err, ErrCorrupt) {
				t.Errorf("decode of %d of %d bytes: %v, want ErrCorrupt", i, len(b), err)
			}
		}
		if _, err := decodeEntry(append(b, 0)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("decode with a trailing byte: %v, want ErrCorrupt", err)
		}
	}
}

// TestDecodeEntry_Version1: entries written before agents and counts still decode.
func TestDecodeEntry_Version1(t *testing.T) {
	// full as version 1 wrote it: the same layout, ending after ResponseBytes.
	v2 := encodeEntry(full)
	tail := len(appendString(nil, full.Agent)) + len(binary.AppendVarint(nil, int64(full.Count)))
	v1 := append([]byte{version1}, v2[1:len(v2)-tail]...)
	want := full
	want.Agent, want.Count = "", 0
	if got, err := decodeEntry(v1); err != nil || got != want {
		t.Errorf("decode of version 1 = %+v, %v; want %+v", got, err, want)
	}
	if _, err := decodeEntry(append(v1, 0)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("version 1 with a trailing byte: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(full))
	f.Add(encodeEntry(Entry{}))
	f.Add(encodeEntry(Entry{RemoteIP: netip.MustParseAddr("192.0.2.1"), Client: "pat:x"}))
	f.Add([]byte{})
	f.Add([]byte{version1})
	f.Add([]byte{version1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := decodeEntry(encodeEntry(e))
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again != e {
			t.Fatalf("round trip changed the entry:\n%+v\n%+v", e, again)
		}
		_ = clean(e) // never panics either
	})
}
