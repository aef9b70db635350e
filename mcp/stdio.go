package mcp

// The stdio transport (MCP 2025-11-25, basic/transports): newline-delimited JSON-RPC on the
// server's stdin and stdout.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ownsona/ownsona/jsonrpc"
)

const (
	// stdioRunning bounds the handlers running at once on one stdio connection.
	stdioRunning = 8
	// stdioPending bounds the messages accepted but not yet answered; beyond it the reader
	// waits, so a flood of requests cannot hold more than stdioPending lines in memory.
	stdioPending = 32
)

// ServeStdio serves one MCP connection: newline-delimited JSON-RPC messages from in (LF or
// CRLF; empty lines ignored), each answer written to out as one line. Nothing else is ever
// written to out. Requests run concurrently (at most 8 at a time), so that a
// notifications/cancelled can reach the request it cancels, which then gets no response;
// responses may therefore come out of order. A client still reads its own writes: a request
// that writes (a tools/call of a tool without readOnlyHint, resources/subscribe and
// unsubscribe, logging/setLevel) starts only once every request read before it has finished,
// and one that reads (the other methods) once the writes read before it have; reads run
// together. ping, initialize and subscriptions/listen wait for nothing, and nothing waits for
// them. Responses to the server's own requests (Request) are delivered to them; others are
// ignored. A line over 4 MiB is answered -32600 "message too large" and skipped. The initialize
// request is answered before the next line is read.
//
// ServeStdio returns nil when in ends, after answering the requests in flight; ctx.Err() when
// ctx is done (the requests in flight see their contexts cancelled and are waited for; a
// goroutine blocked reading in stays until in returns); the error when reading in or writing
// out fails.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.Check() // the tools, which order needs; a failure is every request's answer
	w := &lineWriter{out: out, failed: cancel}
	ss := &session{transport: "stdio", notify: w.write, calls: &callSet{}}
	s.live().add(ss)
	defer s.live().remove(ss)
	var wg sync.WaitGroup
	defer wg.Wait()
	running := make(chan struct{}, stdioRunning)
	pending := make(chan struct{}, stdioPending)
	var order stdioOrder

	lines := make(chan stdioLine)
	var readErr error
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, tooLong, err := readLine(r)
			if err != nil {
				readErr = err
				return
			}
			select {
			case lines <- stdioLine{line, tooLong}:
			case <-ctx.Done():
				return
			}
		}
	}()

	for {
		var l stdioLine
		var ok bool
		select {
		case <-ctx.Done():
			return w.errOr(ctx.Err())
		case l, ok = <-lines:
		}
		if !ok {
			s.endSessionListeners(ss) // they would wait for a client that has gone
			wg.Wait()
			if readErr != nil && !errors.Is(readErr, io.EOF) {
				return fmt.Errorf("read: %w", readErr)
			}
			return w.errOr(nil)
		}
		if l.tooLong {
			w.write((&jsonrpc.Response{Err: jsonrpc.TooLarge()}).Encode())
			continue
		}
		if len(bytes.Trim(l.line, " \t\r")) == 0 {
			continue
		}
		job := s.accept(ctx, ss, w, l.line)
		if job == nil {
			continue
		}
		if !job.batch && len(job.items) == 1 && job.items[0].call != nil && job.items[0].call.req.Method == "initialize" {
			job.run(s, ss, w) // before reading on: later requests see the negotiated revision
			continue
		}
		if !job.batch && len(job.items) == 1 && job.items[0].call != nil && job.items[0].call.req.Method == "subscriptions/listen" {
			// A subscription lasts as long as the connection: it takes no slot of the requests
			// that come and go (listens are bounded per client instead).
			wg.Add(1)
			go func() { defer wg.Done(); job.run(s, ss, w) }()
			continue
		}
		select {
		case pending <- struct{}{}:
		case <-ctx.Done():
			job.abandon(s, ss)
			return w.errOr(ctx.Err())
		}
		after, done := order.next(s.jobAccess(job))
		wg.Add(1)
		go func() {
			defer func() { <-pending; wg.Done() }()
			defer done()
			after() // the requests this one must follow; each finishes, run or abandoned
			select {
			case running <- struct{}{}:
			case <-ctx.Done():
				job.abandon(s, ss)
				return
			}
			defer func() { <-running }()
			job.run(s, ss, w)
		}()
	}
}

type stdioLine struct {
	line    []byte
	tooLong bool
}

// stdioJob is one message read from stdin, its requests registered as in flight.
type stdioJob struct {
	batch bool
	items []stdioItem
}

// stdioItem is one element: an answer already known, or a call to run.
type stdioItem struct {
	resp *jsonrpc.Response
	call *call
}

// accept decodes a line, handles its notifications and registers its requests, in the order
// read, so that a cancellation on a later line finds the request it names. nil means nothing
// to answer and nothing to run.
func (s *Server) accept(ctx context.Context, ss *session, w *lineWriter, line []byte) *stdioJob {
	reqs, batch, fail := jsonrpc.DecodeMessage(line)
	if v := ss.protocol(""); fail == nil && batch && !batchAllowed(v) {
		fail = jsonrpc.InvalidRequest("batches are not supported in protocol version " + v)
	}
	if fail != nil {
		return &stdioJob{items: []stdioItem{{resp: &jsonrpc.Response{Err: fail}}}}
	}
	job := &stdioJob{batch: batch}
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.IsResponse: // an answer to a request of this server, else ignored
			s.deliver(ss, r)
		case r.Invalid != nil:
			job.items = append(job.items, stdioItem{resp: &jsonrpc.Response{ID: r.ID, Err: r.Invalid}})
		case r.ID == nil:
			s.notification(ss, r)
		default:
			job.items = append(job.items, stdioItem{call: s.begin(ctx, ss, r, "", func(b []byte) bool {
				if b != nil { // nil is a keep-alive, which a pipe does not need
					w.write(b)
				}
				return true
			})})
		}
	}
	if len(job.items) == 0 {
		return nil
	}
	return job
}

// run runs the job's calls one after another and writes the answer, leaving out cancelled
// requests. A call cancelled while it waited its turn does not run.
func (j *stdioJob) run(s *Server, ss *session, w *lineWriter) {
	var out []*jsonrpc.Response
	for _, it := range j.items {
		resp := it.resp
		switch {
		case it.call != nil && it.call.cancelled.Load():
			s.end(ss, it.call)
		case it.call != nil:
			resp = s.exec(ss, it.call)
		}
		if resp != nil {
			out = append(out, resp)
		}
	}
	if len(out) > 0 {
		w.write(jsonrpc.EncodeAll(nil, j.batch, out))
	}
}

// access is how a request touches what other requests see, for ordering one connection's.
type access int

const (
	independent access = iota // reads nothing that requests change: waits for nothing
	reads
	writes
)

// jobAccess is the job's access: that of its most demanding call. mcp cannot see what a tool
// does, so it takes the tool's word: a tools/call writes unless the tool's annotations say
// readOnlyHint (as the MCP spec has clients assume), and a tool it does not have writes
// nothing. resources/subscribe and unsubscribe and logging/setLevel change the session's
// state; ping and initialize read none, and a subscriptions/listen lasts as long as the
// connection, so nothing could wait for it.
func (s *Server) jobAccess(j *stdioJob) access {
	a := independent
	for _, it := range j.items {
		if it.call == nil {
			continue
		}
		r := it.call.req
		switch r.Method {
		case "ping", "initialize", "subscriptions/listen":
		case "resources/subscribe", "resources/unsubscribe", "logging/setLevel":
			a = writes
		case "tools/call":
			p, _ := jsonrpc.Members(r.Params)
			name, _, _ := str(p, "name", "name")
			if t := s.tools[name]; t != nil && (t.Annotations == nil || t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint) {
				a = writes
			} else {
				a = max(a, reads)
			}
		default:
			a = max(a, reads)
		}
	}
	return a
}

// stdioOrder orders the jobs of one connection, in the order they were read: a write follows
// every request before it, a read the writes before it.
type stdioOrder struct {
	write chan struct{}   // closed when the last write placed has finished; nil before any
	reads *sync.WaitGroup // the reads placed since that write; nil before any
}

// next places a job: after returns once the requests it must follow have finished, and done
// must be called when it has finished (run or abandoned).
func (o *stdioOrder) next(a access) (after, done func()) {
	prev := o.write
	waitWrite := func() {
		if prev != nil {
			<-prev
		}
	}
	switch a {
	case reads:
		if o.reads == nil {
			o.reads = &sync.WaitGroup{}
		}
		wg := o.reads
		wg.Add(1)
		return waitWrite, wg.Done
	case writes:
		prevReads := o.reads
		ch := make(chan struct{})
		o.write, o.reads = ch, nil
		return func() {
			waitWrite()
			if prevReads != nil {
				prevReads.Wait()
			}
		}, func() { close(ch) }
	}
	return func() {}, func() {}
}

// abandon unregisters the job's calls without running them.
func (j *stdioJob) abandon(s *Server, ss *session) {
	for _, it := range j.items {
		if it.call != nil {
			s.end(ss, it.call)
		}
	}
}

// lineWriter writes whole lines under a mutex. After a write fails it writes nothing more and
// stops the connection.
type lineWriter struct {
	mu     sync.Mutex
	out    io.Writer
	err    error
	failed func()
}

func (w *lineWriter) write(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	if _, err := w.out.Write(append(b, '\n')); err != nil {
		w.err = fmt.Errorf("write: %w", err)
		w.failed()
	}
}

func (w *lineWriter) errOr(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	return err
}

// readLine reads one line without its LF (or CRLF). A line over maxMessage is consumed to its
// end and reported as tooLong. The last line may lack its newline; then io.EOF follows.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > jsonrpc.MaxMessage+2 { // room for CRLF
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || tooLong):
		case err != nil:
			return nil, false, err
		}
		if tooLong {
			return nil, true, nil
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > jsonrpc.MaxMessage {
			return nil, true, nil
		}
		return line, false, nil
	}
}
