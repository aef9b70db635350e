package mcp

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
)

// TestOutbox_Offer: a stream's queue is bounded in messages and in bytes (SECURITY LA-12), and a
// message alone may be larger than the byte bound.
func TestOutbox_Offer(t *testing.T) {
	kib := func(n int) []byte { return []byte(strings.Repeat("x", n<<10)) }
	t.Run("bytes", func(t *testing.T) {
		o := newOutbox()
		for i, want := range []bool{true, true, false} {
			if got := o.offer(kib(100)); got != want {
				t.Errorf("offer %d of 100 KiB = %v, want %v", i+1, got, want)
			}
		}
		if got, want := len(o.ch), 2; got != want {
			t.Errorf("%d messages queued, want %d", got, want)
		}
	})
	t.Run("a large message alone", func(t *testing.T) {
		o := newOutbox()
		if !o.offer(kib(1024)) {
			t.Error("1 MiB refused by an empty queue")
		}
		if o.offer([]byte("x")) {
			t.Error("a byte accepted behind 1 MiB")
		}
		o.took(<-o.ch)
		if !o.offer([]byte("x")) {
			t.Error("a byte refused by an emptied queue")
		}
	})
	t.Run("messages", func(t *testing.T) {
		o := newOutbox()
		for i := range outboxSize {
			if !o.offer([]byte("x")) {
				t.Fatalf("message %d refused", i+1)
			}
		}
		if o.offer([]byte("x")) {
			t.Errorf("message %d accepted", outboxSize+1)
		}
	})
	t.Run("drain", func(t *testing.T) {
		o := newOutbox()
		o.offer(kib(100))
		o.offer(kib(100))
		o.drain()
		if got := o.size.Load(); len(o.ch) != 0 || got != 0 || o.taken.Load() != 2 {
			t.Errorf("after drain: %d messages, %d bytes, %d taken", len(o.ch), got, o.taken.Load())
		}
		if !o.offer(kib(200)) {
			t.Error("200 KiB refused after drain")
		}
	})
}

// TestOutbox_Send: send (legacy SSE responses, which must not be dropped) waits for room in
// bytes as well as in messages, and gives up when the outbox closes.
func TestOutbox_Send(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := newOutbox()
		big := []byte(strings.Repeat("x", 200<<10))
		o.offer(big)
		sent := make(chan bool, 1)
		go func() { sent <- o.send(context.Background(), big) }()
		synctest.Wait()
		select {
		case <-sent:
			t.Fatal("sent 200 KiB behind 200 KiB")
		default:
		}
		o.took(<-o.ch)
		synctest.Wait()
		if !<-sent {
			t.Fatal("send failed once there was room")
		}
		go func() { sent <- o.send(context.Background(), big) }()
		synctest.Wait()
		o.close()
		if <-sent {
			t.Error("send succeeded into a closed, full outbox")
		}
	})
}
