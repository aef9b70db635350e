package web

import (
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// simConn is a connection's body on a simulated clock: it delivers chunk bytes every tick
// until it has sent total (stalling for ever after stallAfter bytes, when that is set), and,
// as a real connection does, fails with os.ErrDeadlineExceeded once the clock passes the read
// deadline before the next chunk.
type simConn struct {
	now, deadline time.Time
	chunk, total  int
	stallAfter    int // 0: never
	tick          time.Duration
	sent          int
}

func (c *simConn) setDeadline(t time.Time) { c.deadline = t }

func (c *simConn) Read(p []byte) (int, error) {
	if c.sent >= c.total {
		return 0, io.EOF
	}
	next := c.now.Add(c.tick)
	if c.stallAfter > 0 && c.sent >= c.stallAfter {
		next = c.now.Add(24 * time.Hour)
	}
	if next.After(c.deadline) {
		c.now = c.deadline
		return 0, fmt.Errorf("read tcp 127.0.0.1:1->127.0.0.1:2: %w", os.ErrDeadlineExceeded)
	}
	c.now = next
	n := min(c.chunk, len(p), c.total-c.sent)
	c.sent += n
	return n, nil
}

func (c *simConn) Close() error { return nil }

// drain reads r to its end, as readCapped does, in reads larger than any chunk of simConn.
func drain(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// TestRateBody_Read (SECURITY.md UP-02): an upload's body keeps its connection while it
// arrives at 16 KiB/s or faster over each 30 s window, however long it takes; below that rate,
// or stalled, it is cut one window after the last window it filled (two after the start, the
// first being the grace period). Time is a simulated clock: nothing waits.
func TestRateBody_Read(t *testing.T) {
	start := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	for _, tt := range []struct {
		name    string
		conn    simConn
		wantCut bool
		cutAt   time.Duration // since the start, when cut
	}{
		{"20 KiB/s for 52 minutes is never cut", simConn{chunk: 2 << 10, tick: 100 * time.Millisecond, total: 64 << 20}, false, 0},
		{"exactly the minimum is never cut", simConn{chunk: 16 << 10, tick: time.Second, total: 8 << 20}, false, 0},
		{"a small file at once", simConn{chunk: 32 << 10, tick: time.Millisecond, total: 1000}, false, 0},
		{"headers and nothing is cut after grace and a window", simConn{chunk: 1, tick: time.Second, total: 100, stallAfter: 1 << 30}, true, time.Minute},
		{"4 KiB/s is cut after grace and a window", simConn{chunk: 4 << 10, tick: time.Second, total: 64 << 20}, true, time.Minute},
		// 15 KiB/s fills the first window (480 KiB) at 32 s, which the grace allows; the next
		// would be full at 64 s, past its deadline at 62 s.
		{"just under the minimum is cut", simConn{chunk: 15 << 10, tick: time.Second, total: 64 << 20}, true, 62 * time.Second},
		// 1 MiB in 6.4 s fills the first window at 3 s (480 KiB) and the second at 6 s; then
		// nothing: cut 30 s after 6 s. A burst buys one window, never the file's whole length.
		{"a burst then a stall is cut a window after", simConn{chunk: 16 << 10, tick: 100 * time.Millisecond, total: 64 << 20, stallAfter: 1 << 20}, true, 36 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.conn
			c.now = start
			b := newRateBody(&c, c.setDeadline, defaultUploadRate, func() time.Time { return c.now })
			n, err := drain(b)
			if b.cut != tt.wantCut || (err != nil) != tt.wantCut || b.total != n {
				t.Fatalf("read %d bytes (counted %d), error %v, cut %v; want cut %v", n, b.total, err, b.cut, tt.wantCut)
			}
			if tt.wantCut {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("error %v, want the deadline's", err)
				}
				if got := c.now.Sub(start); got != tt.cutAt {
					t.Errorf("cut %v after the start, want %v", got, tt.cutAt)
				}
			}
		})
	}
}
