package memory

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"
)

// recordSamples are memories as the store writes them, with every field set in some of them and
// texts that need each kind of escape.
func recordSamples() []*Memory {
	at := time.Date(2026, 11, 27, 9, 30, 15, 123456789, time.UTC)
	later := at.Add(90 * 24 * time.Hour)
	by, other := uint64(41), uint64(7)
	return []*Memory{
		{ID: 1, Text: "prefers oat milk", Tags: []string{}, CreatedAt: at, UpdatedAt: at, LastConfirmedAt: at,
			SourceProvider: "anthropic", SourceClient: "claude-ai", CaptureMode: "explicit"},
		{ID: 1 << 53, Text: `she said "call me Jo" \ and left` + "\n\ttabbed\r\x01\x1f <b>&amp;</b> \u2028\u2029",
			Tags:       []string{"family", "names", "a-very-long-tag-that-is-longer-than-the-sixty-four-bytes-interned-ones-are"},
			Importance: 0.75, CreatedAt: at, UpdatedAt: later, LastConfirmedAt: later, ExpiresAt: &later,
			SourceProvider: "openai", SourceClient: "chatgpt", CaptureMode: "inferred", SessionID: "s-1"},
		{ID: 18446744073709551615, Text: "Grüße aus Zürich — 東京 🍣 ok", Tags: []string{"ünïcode", "🍣"},
			Importance: 1e-7, CreatedAt: at, UpdatedAt: at, LastConfirmedAt: at, DeletedAt: &later,
			ForgetReason: "asked to \"forget\" it", ReplacedByID: &other, Supersedes: []uint64{3, 5, 1 << 60},
			SupersededBy: &by},
		{ID: 2, Text: "", Tags: []string{""}, Importance: -0, Supersedes: []uint64{}},
	}
}

// TestEncodeMemory: a memory's record is the JSON every file written so far holds, to the
// byte: the keys, their order, what is left out when empty and how text is escaped (the
// records of recordSamples as the store wrote them before record was a type of its own).
func TestEncodeMemory(t *testing.T) {
	want := []string{
		`{"id":1,"text":"prefers oat milk","tags":[],"importance":0,"created_at":"2026-11-27T09:30:15.123456789Z","updated_at":"2026-11-27T09:30:15.123456789Z","last_confirmed_at":"2026-11-27T09:30:15.123456789Z","source_provider":"anthropic","source_client":"claude-ai","capture_mode":"explicit"}`,
		`{"id":9007199254740992,"text":"she said \"call me Jo\" \\ and left\n\ttabbed\r\u0001\u001f \u003cb\u003e\u0026amp;\u003c/b\u003e \u2028\u2029","tags":["family","names","a-very-long-tag-that-is-longer-than-the-sixty-four-bytes-interned-ones-are"],"importance":0.75,"created_at":"2026-11-27T09:30:15.123456789Z","updated_at":"2027-02-25T09:30:15.123456789Z","last_confirmed_at":"2027-02-25T09:30:15.123456789Z","expires_at":"2027-02-25T09:30:15.123456789Z","source_provider":"openai","source_client":"chatgpt","capture_mode":"inferred","session_id":"s-1"}`,
		`{"id":18446744073709551615,"text":"Grüße aus Zürich — 東京 🍣 ok","tags":["ünïcode","🍣"],"importance":1e-7,"created_at":"2026-11-27T09:30:15.123456789Z","updated_at":"2026-11-27T09:30:15.123456789Z","last_confirmed_at":"2026-11-27T09:30:15.123456789Z","source_provider":"","source_client":"","capture_mode":"","deleted_at":"2027-02-25T09:30:15.123456789Z","forget_reason":"asked to \"forget\" it","replaced_by_id":7,"supersedes":[3,5,1152921504606846976],"superseded_by":41}`,
		`{"id":2,"text":"","tags":[""],"importance":0,"created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z","last_confirmed_at":"0001-01-01T00:00:00Z","source_provider":"","source_client":"","capture_mode":""}`,
	}
	for i, m := range recordSamples() {
		got, err := encodeMemory(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[i] {
			t.Errorf("record %d\n got %s\nwant %s", i, got, want[i])
		}
	}
}

func TestRecordDecoder(t *testing.T) {
	var d recordDecoder
	for _, m := range recordSamples() {
		b, err := encodeMemory(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := d.decode(b)
		if !ok {
			t.Fatalf("declined a record encodeMemory wrote: %s", b)
		}
		want, err := decodeMemory(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %s\n got %+v\nwant %+v", b, got, want)
		}
	}
	// Short strings are shared between records; long ones are not.
	a, _ := d.decode([]byte(`{"id":1,"text":"x","tags":["family"],"source_client":"claude-ai"}`))
	b, _ := d.decode([]byte(`{"id":2,"text":"x","tags":["family"],"source_client":"claude-ai"}`))
	if a == nil || b == nil || unsafeData(a.Tags[0]) != unsafeData(b.Tags[0]) || unsafeData(a.SourceClient) != unsafeData(b.SourceClient) {
		t.Error("equal tags and clients of two records are not one string")
	}
}

// TestRecordDecoder_declines: records encodeMemory never writes go to encoding/json, which
// decides (some it accepts, some it refuses).
func TestRecordDecoder_declines(t *testing.T) {
	for _, rec := range []string{
		`{"ID":1,"text":"x"}`,                   // another spelling of a key
		`{"id":1,"text":"x","colour":"blue"}`,   // an unknown key
		`{"id":1,"id":2}`,                       // a key twice
		`{"id":1,"text":null}`,                  // null where the field is no pointer
		`{"id":1,"tags":null}`,                  // ... or a slice
		`{"id":1,"text":"\ud83c\udf63"}`,        // a surrogate pair
		`{"id":1,"text":"\ud83c"}`,              // a lone surrogate
		"{\"id\":1,\"text\":\"bad \xff byte\"}", // invalid UTF-8
		`{"id":1,"text":"tab	inside"}`,          // a control character
		`{"id":-1}`, `{"id":1.0}`, `{"id":01}`, `{"id":18446744073709551616}`,
		`{"id":1,"importance":1e400}`, `{"id":1,"importance":.5}`, `{"id":1,"importance":"0.5"}`,
		`{"id":1,"created_at":"yesterday"}`, `{"id":1,"created_at":null}`,
		`{"id":1,"created_at":"2026-11-27T09:30:15\u005a"}`,
		`{"id":1,"text":"x\q"}`, `{"id":1,"text":"x\u12"}`, `{"id":1,"text":"x\u+123"}`,
		`{"id":1} {}`, `{"id":1`, `{"id":1,}`, `[]`, ``, `null`,
	} {
		var d recordDecoder
		if m, ok := d.decode([]byte(rec)); ok {
			t.Errorf("decoded %q to %+v, want it left to encoding/json", rec, m)
		}
	}
	// And what it reads the same as encoding/json: spaces, nulls in pointers, escapes.
	for _, rec := range []string{
		` { "id" : 3 , "text" : "a\/b \"q\" \u00e9\u4e2d" , "tags" : [ "x" , "y" ] , "expires_at" : null , "replaced_by_id" : null } `,
		`{}`,
		`{"id":0,"importance":-12.5e-3,"supersedes":[],"superseded_by":9}`,
	} {
		var d recordDecoder
		got, ok := d.decode([]byte(rec))
		if !ok {
			t.Errorf("declined %q", rec)
			continue
		}
		want, err := decodeMemory([]byte(rec))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("record %s\n got %+v\nwant %+v", rec, got, want)
		}
	}
}

// FuzzRecordDecoder: whatever a record holds, a memory the decoder returns is the memory
// encoding/json returns for it.
func FuzzRecordDecoder(f *testing.F) {
	for _, m := range recordSamples() {
		b, err := encodeMemory(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":1,"text":"\u00e9\n","tags":["a"],"supersedes":[1,2],"expires_at":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d recordDecoder
		got, ok := d.decode(b)
		if !ok {
			return
		}
		want, err := decodeMemory(b)
		if err != nil {
			t.Fatalf("decoded %q, which encoding/json refuses: %v", b, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("record %q\n got %+v\nwant %+v", b, got, want)
		}
	})
}

// TestRecordDecoder_corpus: every memory of a realistic corpus takes the fast path: the LoCoMo
// dev memories when they are there, and texts with quotes, newlines, markup and emoji.
func TestRecordDecoder_corpus(t *testing.T) {
	texts := append(locomoTexts(t), `Caroline: "I'm going to the LGBTQ support group" <3`, "line one\nline two",
		"Mel: Painting's my thing 🎨 — took it up in 2022 & love it", "C:\\Users\\ana\\notes.txt")
	var d recordDecoder
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for i, text := range texts {
		m := &Memory{ID: uint64(i + 1), Text: text, Tags: []string{"locomo"}, CreatedAt: at, UpdatedAt: at,
			LastConfirmedAt: at, SourceProvider: "anthropic", SourceClient: "claude-code", CaptureMode: "explicit"}
		b, err := encodeMemory(m)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := d.decode(b)
		if !ok {
			t.Fatalf("declined %s", b)
		}
		if got.Text != text {
			t.Fatalf("text %q, want %q", got.Text, text)
		}
	}
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }

// TestRecordDecoder_blocks: memories come from blocks of memoryBlock; across three blocks, with
// records the decoder declines in between (their slots go to the next record), every memory
// decodes as encoding/json decodes it, each is its own, and none changes once handed out.
func TestRecordDecoder_blocks(t *testing.T) {
	samples := recordSamples()
	var d recordDecoder
	type decoded struct {
		m   *Memory
		raw []byte
	}
	var got []decoded
	seen := map[*Memory]bool{}
	for i := range 2*memoryBlock + 500 {
		s := *samples[i%len(samples)]
		s.ID = uint64(i + 1)
		s.Text = fmt.Sprintf("%s %d", s.Text, i)
		raw, err := encodeMemory(&s)
		if err != nil {
			t.Fatal(err)
		}
		if i%97 == 0 {
			// Every sample, declined for an unknown key, into the slot this record then gets.
			for _, other := range samples {
				bad, err := encodeMemory(other)
				if err != nil {
					t.Fatal(err)
				}
				bad = append(bad[:len(bad)-1:len(bad)-1], `,"unknown_key":1}`...)
				if m, ok := d.decode(bad); ok || m != nil {
					t.Fatalf("before record %d, one with an unknown key decoded: %+v", i, m)
				}
			}
		}
		m, ok := d.decode(raw)
		if !ok {
			t.Fatalf("record %d declined: %s", i, raw)
		}
		if seen[m] {
			t.Fatalf("record %d got a memory handed out before", i)
		}
		seen[m] = true
		got = append(got, decoded{m, raw})
	}
	for i, g := range got {
		want, err := decodeMemory(g.raw)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g.m, want) {
			t.Fatalf("memory %d after the others decoded:\n got %+v\nwant %+v", i, g.m, want)
		}
	}
}
