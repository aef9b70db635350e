package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
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
			if len(tc.msg) > jsonrpc.MaxMessage {
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

// TestServer_PooledResults answers calls from many goroutines at once, legacy (alone and in
// batches, whose results all wait for the batch) and 2026-07-28, through Handle and over HTTP,
// and checks that every answer carries its own call's text: a result's buffer goes back to the
// pool only once its response is encoded, and an HTTP message's once it is written, so no
// answer can show another's bytes.
func TestServer_PooledResults(t *testing.T) {
	f := MustOpenFixture(t)
	const modernMeta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(id int, text, meta string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q,"times":3}%s}}`, id, text, meta)
	}
	// check reports whether answer (one response) is call id's with text: three times in
	// structuredContent and three in content[0], and resultType only in the modern era.
	check := func(answer json.RawMessage, id int, text string, modern bool) bool {
		var r struct {
			ID int `json:"id"`
		}
		s := string(answer)
		return json.Unmarshal(answer, &r) == nil && r.ID == id && strings.Count(s, text) == 6 &&
			strings.Contains(s, `"text":"`+strings.Repeat(text, 3)+`"`) && modern == strings.Contains(s, `"resultType":"complete"`)
	}
	// send answers msg through Handle for even goroutines, over HTTP for odd ones.
	send := func(g int, msg string, modern bool) []byte {
		if g%2 == 0 {
			return f.Handle(context.Background(), []byte(msg))
		}
		var hdr []string
		if modern {
			hdr = []string{"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "echo"}
		}
		_, body := post(t, f.Server, msg, hdr...)
		return []byte(body)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				text := fmt.Sprintf("g%di%d", g, i)
				switch i % 3 {
				case 0, 1:
					modern := i%3 == 1
					meta := ""
					if modern {
						meta = modernMeta
					}
					if out := send(g, call(i, text, meta), modern); !check(out, i, text, modern) {
						t.Errorf("call %s answered %s", text, out)
						return
					}
				case 2:
					batch := "[" + call(0, text+"a", "") + "," + call(1, text+"b", "") + "," + call(2, text+"c", "") + "]"
					var answers []json.RawMessage
					out := send(g, batch, false)
					if json.Unmarshal(out, &answers) != nil || len(answers) != 3 {
						t.Errorf("batch %s answered %s", text, out)
						return
					}
					for j, a := range answers {
						if !check(a, j, text+string(rune('a'+j)), false) {
							t.Errorf("call %d of batch %s answered %s", j, text, a)
							return
						}
					}
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkServer_ToolCall answers tools/call with a structured result of ~6 KB (a recall's
// size) and reports what one answer allocates.
func BenchmarkServer_ToolCall(b *testing.B) {
	type match struct {
		ID   int    `json:"id"`
		Text string `json:"text"`
	}
	matches := make([]match, 10)
	for i := range matches {
		matches[i] = match{ID: i, Text: strings.Repeat("the cello lesson moved to Thursday ", 15)}
	}
	s := &Server{Info: Implementation{Name: "bench", Version: "1"}, Tools: []*Tool{{
		Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, json.RawMessage) (*ToolResult, error) {
			return &ToolResult{Structured: map[string]any{"matches": matches}}, nil
		},
	}}}
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}`)
	if out := s.Handle(context.Background(), msg); !bytes.Contains(out, []byte(`"matches"`)) {
		b.Fatalf("answer: %s", out)
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Handle(context.Background(), msg)
	}
}

// TestServer_BatchCountedBeforeDecoding sends 4 MiB batches of small elements, [0,0,…] (2M of
// them), empty objects, arrays and strings, and objects of 17, 300 and 1000 keys, through the
// HTTP handler (in each era) and over stdio (SECURITY LA-11): each is refused at the batch limit
// with -32600 naming the limit, and what the request allocates stays under 100 MiB. A decoder
// that decoded every element before counting them allocated 265 MiB per decode for [0,0,…]
// (520 MiB over HTTP, which decodes twice), and one that built a key set per object of more
// than 16 keys 60-66 MiB per decode for the objects.
func TestServer_BatchCountedBeforeDecoding(t *testing.T) {
	const limit = 100 << 20
	f := MustOpenFixture(t)
	measure := func(t *testing.T, size int, do func()) {
		t.Helper()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		do()
		runtime.ReadMemStats(&after)
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("%d bytes in, %d allocated (%.1f MiB)", size, got, float64(got)/(1<<20))
		if got > limit {
			t.Errorf("%d bytes allocated, over %d", got, limit)
		}
	}
	// batch returns the largest array of elem that fits in maxMessage, and its length.
	batch := func(elem string) (string, int) {
		n := (jsonrpc.MaxMessage - 1) / (len(elem) + 1)
		return "[" + strings.Repeat(elem+",", n-1) + elem + "]", n
	}
	keys := func(n int) string { // an object of n keys
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, `,"%x":0`, i)
		}
		return "{" + b.String()[1:] + "}"
	}
	for _, elem := range []string{"0", "{}", "[]", `""`, keys(17), keys(300), keys(1000)} {
		body, n := batch(elem)
		want := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"batch of %d messages; the limit is %d"}}}`, n, jsonrpc.MaxBatch)
		for _, version := range []string{"", "2025-03-26", "2025-06-18", "2026-07-28"} {
			t.Run(fmt.Sprintf("%.8s HTTP %s", elem, version), func(t *testing.T) {
				var status int
				var got string
				measure(t, len(body), func() { status, got = post(t, f.Server, body, "MCP-Protocol-Version", version) })
				if status != 400 || got != want {
					t.Errorf("got %d %.300s, want 400 %s", status, got, want)
				}
			})
		}
		t.Run(fmt.Sprintf("%.8s stdio", elem), func(t *testing.T) {
			c := MustServeStdio(t, context.Background(), f.Server)
			line := []byte(body + "\n")
			var got string
			measure(t, len(body), func() {
				if _, err := c.in.Write(line); err != nil {
					t.Fatal(err)
				}
				got = c.recv(t)
			})
			if got != want {
				t.Errorf("got %.300s, want %s", got, want)
			}
		})
	}
}
