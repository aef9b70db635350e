package web

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestBatchOver pins the count of a batch's elements without decoding them (SECURITY.md
// LA-11).
func TestBatchOver(t *testing.T) {
	for _, tc := range []struct {
		body  string
		limit int
		want  bool
	}{
		{`[]`, 0, false},
		{`[1]`, 0, true},
		{`[1]`, 1, false},
		{` [ 1 , 2 , 3 ] `, 2, true},
		{`[1,2,3]`, 3, false},
		{`[{"a":[1,2,3,4]},"x,y,z]",[[],[]]]`, 2, true},
		{`[{"a":[1,2,3,4]},"x,y,z]",[[],[]]]`, 3, false},
		{`["\"],[1,2,3"]`, 0, true},
		{`["\"],[1,2,3"]`, 1, false},
		{`{"a":[1,2,3]}`, 0, false}, // not a batch
		{`[1,2,`, 1, true},          // malformed after the limit: still over it
		{`[1 2 3]`, 0, true},
		{`[1 2 3]`, 1, false}, // malformed: the mcp server's to refuse
		{``, 0, false},
	} {
		if got := batchOver([]byte(tc.body), tc.limit); got != tc.want {
			t.Errorf("batchOver(%s, %d) = %v, want %v", tc.body, tc.limit, got, tc.want)
		}
	}
}

// TestMemberOf pins the scan for one member of a message.
func TestMemberOf(t *testing.T) {
	for _, tc := range []struct {
		body, key, want string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"x"}`, "id", `7`},
		{` { "method" : [1,{"id":2}] , "id" : "a\"b" } `, "id", `"a\"b"`},
		{`{"params":{"id":1}}`, "id", ``},
		{`[{"id":1}]`, "id", ``},
		{`{"i\u0064":1}`, "id", ``}, // only the exact spelling, as the mcp server's decoder
		{`{"id":`, "id", ``},
	} {
		if got := memberOf([]byte(tc.body), tc.key); string(got) != tc.want {
			t.Errorf("memberOf(%s, %s) = %s, want %s", tc.body, tc.key, got, tc.want)
		}
	}
}

// FuzzScanner holds the scanner to encoding/json on valid JSON: a batch is over a limit when it
// has more elements, and an object's member is the one json decodes.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`[]`, `[1,"a",{"b":[2]},null]`, `{"id":1,"x":"]"}`, `[{"id":"\\\""}]`, `{"a":{"id":2},"id":[3]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		if json.Unmarshal(b, &v) != nil {
			batchOver(b, 2) // no panic on anything
			memberOf(b, "id")
			return
		}
		if a, ok := v.([]any); ok {
			for limit := range 4 {
				if got, want := batchOver(b, limit), len(a) > limit; got != want {
					t.Errorf("batchOver(%s, %d) = %v, want %v", b, limit, got, want)
				}
			}
		}
		var m map[string]json.RawMessage
		// Without escapes, and with "id" once, it is the key when json finds the member.
		if json.Unmarshal(b, &m) == nil && bytes.Count(b, []byte(`"id"`)) == 1 && bytes.IndexByte(b, '\\') < 0 {
			want, ok := m["id"]
			got := memberOf(b, "id")
			if ok && !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
				t.Errorf("memberOf(%s) = %s, want %s", b, got, want)
			}
		}
	})
}
