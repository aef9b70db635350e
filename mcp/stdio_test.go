package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ownsona/ownsona/jsonrpc"
)

// stdioConn is a client of ServeStdio over pipes.
type stdioConn struct {
	in   *io.PipeWriter
	out  *bufio.Reader
	done chan error // ServeStdio's result
}

// MustServeStdio runs s.ServeStdio over pipes until the test ends.
func MustServeStdio(tb testing.TB, ctx context.Context, s *Server) *stdioConn {
	tb.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioConn{in: inW, out: bufio.NewReaderSize(outR, 1<<20), done: make(chan error, 1)}
	go func() {
		err := s.ServeStdio(ctx, inR, outW)
		outW.Close()
		c.done <- err
	}()
	tb.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR) // let the server finish writing
	})
	return c
}

func (c *stdioConn) send(tb testing.TB, s string) {
	tb.Helper()
	if _, err := io.WriteString(c.in, s); err != nil {
		tb.Fatalf("send: %v", err)
	}
}

// recv reads one line, which must be one JSON object.
func (c *stdioConn) recv(tb testing.TB) string {
	tb.Helper()
	line, err := c.out.ReadString('\n')
	if err != nil {
		tb.Fatalf("recv: %v (partial %q)", err, line)
	}
	line = strings.TrimSuffix(line, "\n")
	if !json.Valid([]byte(line)) || strings.Contains(line, "\n") {
		tb.Fatalf("recv: not one JSON message per line: %q", line)
	}
	return line
}

// rest closes stdin, reads every remaining line and returns them with ServeStdio's error.
func (c *stdioConn) rest(tb testing.TB) ([]string, error) {
	tb.Helper()
	c.in.Close()
	var lines []string
	for {
		line, err := c.out.ReadString('\n')
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		lines = append(lines, strings.TrimSuffix(line, "\n"))
	}
	return lines, <-c.done
}

func TestServer_ServeStdio(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)

	t.Run("initialize records the client and the revision", func(t *testing.T) {
		c.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"cli","version":"2"}}}`+"\n")
		got := c.recv(t)
		if !strings.Contains(got, `"protocolVersion":"2025-06-18"`) || !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":1,"result":`) {
			t.Errorf("got %s", got)
		}
		c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	})
	t.Run("CRLF and empty lines", func(t *testing.T) {
		c.send(t, "\n\r\n  \t\r\n")
		c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`+"\r\n")
		want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"text\":\"hi\",\"transport\":\"stdio\",\"version\":\"2025-06-18\"}"}],"structuredContent":{"text":"hi","transport":"stdio","version":"2025-06-18"},"isError":false}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("the negotiated revision decides argument errors", func(t *testing.T) {
		c.send(t, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{}}}`+"\n")
		want := `{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"field":"text","reason":"is required"}}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("batch refused after negotiating 2025-06-18", func(t *testing.T) {
		c.send(t, `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`+"\n")
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"batches are not supported in protocol version 2025-06-18"}}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("oversized line, then a good one", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":5,"method":"ping","params":{"x":"` + strings.Repeat("a", jsonrpc.MaxMessage) + `"}}`
		c.send(t, big+"\n")
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message too large: a message is limited to 4194304 bytes (4 MiB)"}}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
		c.send(t, `{"jsonrpc":"2.0","id":6,"method":"ping"}`+"\n")
		if got, want := c.recv(t), `{"jsonrpc":"2.0","id":6,"result":{}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("exactly 4 MiB is served", func(t *testing.T) {
		head, tail := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"`, `"}}`
		line := head + strings.Repeat("a", jsonrpc.MaxMessage-len(head)-len(tail)) + tail
		c.send(t, line+"\r\n")
		if got, want := c.recv(t), `{"jsonrpc":"2.0","id":7,"result":{}}`; got != want {
			t.Errorf("got  %.200s\nwant %s", got, want)
		}
	})
	t.Run("parse error", func(t *testing.T) {
		c.send(t, `{"jsonrpc":"2.0","id":8,"method":"ping","id":9}`+"\n")
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"reason":"duplicate key \"id\" at byte 40"}}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("client-sent responses are ignored", func(t *testing.T) {
		c.send(t, `{"jsonrpc":"2.0","id":99,"result":{}}`+"\n")
		c.send(t, `{"jsonrpc":"2.0","id":10,"method":"ping"}`+"\n")
		if got, want := c.recv(t), `{"jsonrpc":"2.0","id":10,"result":{}}`; got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
	t.Run("the last line may lack its newline; EOF ends the session", func(t *testing.T) {
		c.send(t, `{"jsonrpc":"2.0","id":11,"method":"ping"}`)
		lines, err := c.rest(t)
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil at EOF", err)
		}
		if want := []string{`{"jsonrpc":"2.0","id":11,"result":{}}`}; !equal(lines, want) {
			t.Errorf("got %q, want %q", lines, want)
		}
	})
}

func equal(a, b []string) bool { return strings.Join(a, "\n") == strings.Join(b, "\n") }

func TestServer_ServeStdioBatch(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)
	c.send(t, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"method":"no/such"},7]`+"\n")
	want := `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"method":"no/such"}}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a message must be a JSON object"}}}]`
	if got := c.recv(t); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	c.send(t, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`+"\n")
	c.send(t, `{"jsonrpc":"2.0","id":4,"method":"ping"}`+"\n")
	if got, want := c.recv(t), `{"jsonrpc":"2.0","id":4,"result":{}}`; got != want {
		t.Errorf("a batch of notifications answered: got %s, want %s", got, want)
	}
	c.send(t, `{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`+"\n")
	c.recv(t)
	c.send(t, `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`+"\n")
	if got, want := c.recv(t), `[{"jsonrpc":"2.0","id":6,"result":{}}]`; got != want {
		t.Errorf("batch on 2025-03-26: got %s, want %s", got, want)
	}
}

func TestServer_ServeStdioCancel(t *testing.T) {
	for _, tc := range []struct{ name, id, cancelID string }{
		{"string id", `"w"`, `"w"`},
		{"string id spelled with an escape", `"w"`, `"\u0077"`},
		{"number id", `42`, `42`},
		{"number id spelled differently", `42`, `4.2e1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustOpenFixture(t)
			c := MustServeStdio(t, context.Background(), f.Server)
			c.send(t, `{"jsonrpc":"2.0","id":`+tc.id+`,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}}`+"\n")
			want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":2,"message":"waiting"}}`
			if got := c.recv(t); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
			<-f.started
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+tc.cancelID+`,"reason":"user"}}`+"\n")
			c.send(t, `{"jsonrpc":"2.0","id":"after","method":"ping"}`+"\n")
			lines, err := c.rest(t)
			if err != nil {
				t.Errorf("ServeStdio = %v", err)
			}
			// The cancelled request gets no response; the ping does.
			if want := []string{`{"jsonrpc":"2.0","id":"after","result":{}}`}; !equal(lines, want) {
				t.Errorf("got %q, want %q", lines, want)
			}
		})
	}
	t.Run("unknown and malformed cancellations are ignored", func(t *testing.T) {
		f := MustOpenFixture(t)
		c := MustServeStdio(t, context.Background(), f.Server)
		c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n")
		<-f.started
		for _, p := range []string{`{"requestId":2}`, `{"requestId":"1"}`, `{}`, `{"requestId":{"x":1}}`, `[1]`, `{"RequestId":1}`} {
			c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":`+p+"}\n")
		}
		close(f.release)
		want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"client\":{\"name\":\"\",\"version\":\"\"},\"known\":false}"}],"structuredContent":{"client":{"name":"","version":""},"known":false},"isError":false}}`
		if got := c.recv(t); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	})
}

func TestServer_ServeStdioEOFWaitsForInFlight(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"cli","title":"CLI","version":"2"}}}`+"\n")
	c.recv(t)
	c.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":7}}}`+"\n")
	c.recv(t) // progress
	if v := <-f.started; v != "2025-11-25" {
		t.Errorf("the handler saw revision %q, want 2025-11-25", v)
	}
	c.in.Close()
	select {
	case err := <-c.done:
		t.Fatalf("ServeStdio returned %v with a request in flight", err)
	default: // the slow tool cannot finish before release, so neither can ServeStdio
	}
	close(f.release)
	lines, err := c.rest(t)
	if err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
	want := []string{
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":2,"total":2}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"client\":{\"name\":\"cli\",\"title\":\"CLI\",\"version\":\"2\"},\"known\":true}"}],"structuredContent":{"client":{"name":"cli","title":"CLI","version":"2"},"known":true},"isError":false}}`,
	}
	if !equal(lines, want) {
		t.Errorf("got  %q\nwant %q", lines, want)
	}
}

func TestServer_ServeStdioContextDone(t *testing.T) {
	f := MustOpenFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	c := MustServeStdio(t, ctx, f.Server)
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`+"\n")
	<-f.started
	cancel()
	// The slow tool sees its context cancelled and answers; then ServeStdio returns.
	go io.Copy(io.Discard, c.out)
	if err := <-c.done; !errors.Is(err, context.Canceled) {
		t.Errorf("ServeStdio = %v, want context.Canceled", err)
	}
}

func TestServer_ServeStdioManyConcurrent(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)
	const n = 300
	go func() {
		for i := range n {
			io.WriteString(c.in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x%d"}}}`+"\n", i, i%100))
		}
	}()
	seen := map[string]bool{}
	for range n {
		var resp struct {
			ID     json.RawMessage
			Result *callResult
		}
		if err := json.Unmarshal([]byte(c.recv(t)), &resp); err != nil || resp.Result == nil {
			t.Fatalf("bad response: %v", err)
		}
		seen[string(resp.ID)] = true
	}
	if len(seen) != n {
		t.Errorf("%d distinct responses, want %d", len(seen), n)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestServer_ServeStdioWriteError(t *testing.T) {
	f := MustOpenFixture(t)
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- f.ServeStdio(context.Background(), inR, failWriter{}) }()
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "write: broken pipe") {
		t.Errorf("ServeStdio = %v, want the write error", err)
	}
	inW.Close()
}

// errReader returns data, then an error that is not EOF.
type errReader struct{ data *bytes.Reader }

func (r errReader) Read(p []byte) (int, error) {
	if r.data.Len() > 0 {
		return r.data.Read(p)
	}
	return 0, errors.New("device gone")
}

func TestServer_ServeStdioReadError(t *testing.T) {
	f := MustOpenFixture(t)
	var out lockedBuffer
	err := f.ServeStdio(context.Background(), errReader{bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"))}, &out)
	if err == nil || !strings.Contains(err.Error(), "read: device gone") {
		t.Errorf("ServeStdio = %v, want the read error", err)
	}
	if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestReadLine(t *testing.T) {
	in := "a\nb\r\n\n" + strings.Repeat("x", jsonrpc.MaxMessage+1) + "\nc\r\r\n" + strings.Repeat("y", jsonrpc.MaxMessage) + "\r\n" + strings.Repeat("z", jsonrpc.MaxMessage+3) + "\nlast"
	r := bufio.NewReaderSize(strings.NewReader(in), 64<<10)
	type got struct {
		line    string
		tooLong bool
	}
	want := []got{{"a", false}, {"b", false}, {"", false}, {"", true}, {"c\r", false}, {strings.Repeat("y", jsonrpc.MaxMessage), false}, {"", true}, {"last", false}}
	for i, w := range want {
		line, tooLong, err := readLine(r)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if string(line) != w.line || tooLong != w.tooLong {
			t.Errorf("line %d = %.20q (%d bytes), %v; want %.20q, %v", i, line, len(line), tooLong, w.line, w.tooLong)
		}
	}
	if _, _, err := readLine(r); err != io.EOF {
		t.Errorf("after the last line: %v, want io.EOF", err)
	}
}

// notesServer is a server with a toy memory: remember (a write) adds a key after a random
// number of yields, so that calls that run together finish in any order; recall (read-only)
// says whether it has the key. wait and look (write and read-only) start by telling started
// their argument and finish when release[argument] closes.
type notesServer struct {
	*Server
	mu      sync.Mutex
	keys    map[string]bool
	started chan string
	release map[string]chan struct{}
}

func MustOpenNotes(tb testing.TB, release ...string) *notesServer {
	tb.Helper()
	n := &notesServer{keys: map[string]bool{}, started: make(chan string, 16), release: map[string]chan struct{}{}}
	for _, r := range release {
		n.release[r] = make(chan struct{})
	}
	key := func(args json.RawMessage) string {
		var a struct{ Key string }
		json.Unmarshal(args, &a)
		return a.Key
	}
	blocking := func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
		k := key(args)
		n.started <- k
		select {
		case <-n.release[k]:
			return &ToolResult{Structured: map[string]string{"done": k}}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	yes, no := true, false
	n.Server = &Server{
		Info: Implementation{Name: "notes", Version: "1"},
		Tools: []*Tool{
			{Name: "remember", Annotations: &ToolAnnotations{ReadOnlyHint: &no}, Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
				for range rand.IntN(200) {
					runtime.Gosched()
				}
				n.mu.Lock()
				defer n.mu.Unlock()
				n.keys[key(args)] = true
				return &ToolResult{Structured: map[string]bool{"ok": true}}, nil
			}},
			{Name: "recall", Annotations: &ToolAnnotations{ReadOnlyHint: &yes}, Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
				n.mu.Lock()
				defer n.mu.Unlock()
				return &ToolResult{Structured: map[string]bool{"found": n.keys[key(args)]}}, nil
			}},
			{Name: "wait", Handler: blocking}, // no annotations: a write
			{Name: "look", Annotations: &ToolAnnotations{ReadOnlyHint: &yes}, Handler: blocking},
		},
	}
	if err := n.Check(); err != nil {
		tb.Fatal(err)
	}
	return n
}

func callLine(id, tool, key string) string {
	return `{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"` + tool + `","arguments":{"key":"` + key + `"}}}` + "\n"
}

// TestServer_ServeStdioReadsOwnWrites pipes 200 remember→recall pairs without waiting for
// answers: each recall finds what the remember before it stored, although remembers take
// random times and requests run concurrently (issue 30, item 8).
func TestServer_ServeStdioReadsOwnWrites(t *testing.T) {
	n := MustOpenNotes(t)
	c := MustServeStdio(t, context.Background(), n.Server)
	const pairs = 200
	go func() {
		for i := range pairs {
			k := fmt.Sprint(i)
			if _, err := io.WriteString(c.in, callLine("w"+k, "remember", k)+callLine("r"+k, "recall", k)); err != nil {
				return
			}
		}
	}()
	lost := 0
	for range 2 * pairs {
		var resp struct {
			ID     string
			Result struct{ StructuredContent map[string]bool }
		}
		line := c.recv(t)
		if err := json.Unmarshal([]byte(line), &resp); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if resp.ID[0] == 'r' && !resp.Result.StructuredContent["found"] {
			lost++
		}
	}
	if lost > 0 {
		t.Errorf("%d of %d recalls did not find what the remember before them stored", lost, pairs)
	}
}

// TestServer_ServeStdioOrder: reads run together; a write waits for the reads before it, a read
// for the writes before it; ping waits for nothing.
func TestServer_ServeStdioOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := MustOpenNotes(t, "r1", "r2", "w", "r3")
		c := MustServeStdio(t, t.Context(), n.Server)
		answers := make(chan string, 16)
		go func() {
			for {
				line, err := c.out.ReadString('\n')
				if err != nil {
					close(answers)
					return
				}
				answers <- strings.TrimSuffix(line, "\n")
			}
		}()
		startedNow := func() []string {
			synctest.Wait()
			var got []string
			for {
				select {
				case k := <-n.started:
					got = append(got, k)
				default:
					slices.Sort(got)
					return got
				}
			}
		}
		check := func(step string, want ...string) {
			t.Helper()
			if got := startedNow(); !slices.Equal(got, want) {
				t.Errorf("%s: started %q, want %q", step, got, want)
			}
		}
		c.send(t, callLine("r1", "look", "r1")+callLine("r2", "look", "r2"))
		check("two reads", "r1", "r2") // both in flight at once
		c.send(t, callLine("w", "wait", "w")+callLine("r3", "look", "r3"))
		check("a write and a read behind two reads")
		c.send(t, `{"jsonrpc":"2.0","id":"p","method":"ping"}`+"\n")
		synctest.Wait()
		if got, want := <-answers, `{"jsonrpc":"2.0","id":"p","result":{}}`; got != want {
			t.Errorf("ping: got %s, want %s", got, want)
		}
		close(n.release["r1"])
		check("one read done")
		close(n.release["r2"])
		check("both reads done", "w")
		close(n.release["w"])
		check("the write done", "r3")
		close(n.release["r3"])
		synctest.Wait()
		var order []string
		for range 4 {
			var resp struct{ ID string }
			json.Unmarshal([]byte(<-answers), &resp)
			order = append(order, resp.ID)
		}
		if want := []string{"r1", "r2", "w", "r3"}; !slices.Equal(order, want) {
			t.Errorf("answered %q, want %q", order, want)
		}
	})
}

// TestServer_ServeStdioCancelWaiting: a write cancelled while it waits for the request before
// it never runs, and gets no response.
func TestServer_ServeStdioCancelWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := MustOpenNotes(t, "w")
		c := MustServeStdio(t, t.Context(), n.Server)
		c.send(t, callLine("w", "wait", "w")+callLine("x", "remember", "x"))
		<-n.started
		synctest.Wait()
		c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}`+"\n")
		synctest.Wait()
		close(n.release["w"])
		lines, err := c.rest(t)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], `{"jsonrpc":"2.0","id":"w","result"`) {
			t.Errorf("got %q, want only w's answer", lines)
		}
		if n.keys["x"] {
			t.Error("the cancelled remember ran")
		}
	})
}
