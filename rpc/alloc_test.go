package rpc

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestServer_HandleAllocations bounds what one message costs in allocations, relative to its
// size (SECURITY LA-09: allocations ≤ k × input), for the shapes a hostile client would pick:
// one long string, many keys, many small objects, escapes, numbers, deep nesting. The bound is
// loose (k = 16); it catches a decoder that builds a tree per value or copies per level.
func TestServer_HandleAllocations(t *testing.T) {
	f := MustOpenFixture(t)
	call := func(args string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":` + args + `}}`
	}
	keys := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `"k%d":[1,2.5,"x",null,true],`, i)
		}
		return b.String() + `"end":0`
	}
	for _, tc := range []struct{ name, msg string }{
		{"long string", call(`{"text":"` + strings.Repeat("a", 3<<20) + `"}`)},
		{"many keys", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":{` + keys(9000) + `}}}`},
		{"many small objects, refused by type", call(`{"text":"a","meta":[` + strings.Repeat(`{"a":1,"b":2},`, 100000) + `{}]}`)},
		{"many small objects, validated", call(`{"text":"a","tags":[` + strings.Repeat(`"ab",`, 500000) + `"c"]}`)},
		{"escapes", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"` + strings.Repeat(`\u00e9`, 500000) + `":1}}`},
		{"numbers", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"n":[` + strings.Repeat("1e400,", 500000) + `0]}}`},
		{"nesting at the limit", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":` + strings.Repeat(`[`, 62) + strings.Repeat(`]`, 62) + `}}`},
		{"batch", `[` + strings.Repeat(call(`{"text":"a"}`)+",", 19) + call(`{"text":"b"}`) + `]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.msg) > maxMessage {
				t.Fatalf("message of %d bytes is over the limit", len(tc.msg))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			f.Handle(context.Background(), []byte(tc.msg))
			runtime.ReadMemStats(&after)
			got := after.TotalAlloc - before.TotalAlloc
			if limit := uint64(16*len(tc.msg) + 256<<10); got > limit {
				t.Errorf("%d bytes allocated for %d bytes in (%.1f×), over %d", got, len(tc.msg), float64(got)/float64(len(tc.msg)), limit)
			}
			t.Logf("%d bytes in, %d allocated (%.1f×)", len(tc.msg), got, float64(got)/float64(len(tc.msg)))
		})
	}
}
