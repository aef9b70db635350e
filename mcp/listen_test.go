package mcp

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// listenLine is a subscriptions/listen request for updates of fixture://readme, with id.
func listenLine(id string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["fixture://readme"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}` + "\n"
}

// TestServer_ListenLongIDs opens four subscriptions/listen streams over stdio with 1 MiB ids,
// then four with ids of 256 bytes, and makes 30 changes that none of them reads (SECURITY
// LA-12): the long ids are refused with -32600 naming the limit (id null), the others are
// acknowledged, and the whole costs under 100 MiB of allocation. When ids were unbounded, each
// queued notification copied its listen's id: 183 MiB allocated, 130 MiB of it still in use.
func TestServer_ListenLongIDs(t *testing.T) {
	f := MustOpenFixture(t)
	c := MustServeStdio(t, context.Background(), f.Server)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 4 {
		c.send(t, listenLine(`"`+fmt.Sprint(i)+strings.Repeat("i", 1<<20)+`"`))
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"id of 1048579 bytes; the limit is 256 bytes of JSON"}}}`
		if got := c.recv(t); got != want {
			t.Fatalf("listen %d with a 1 MiB id: got %.300s, want %s", i, got, want)
		}
	}
	for i := range 4 {
		id := `"` + fmt.Sprint(i) + strings.Repeat("i", 253) + `"`
		c.send(t, listenLine(id))
		if got := c.recv(t); !strings.Contains(got, `"notifications/subscriptions/acknowledged"`) || !strings.Contains(got, id) {
			t.Fatalf("listen %d with a 256-byte id: got %.300s", i, got)
		}
	}
	for range 30 {
		f.NotifyResourceUpdated("fixture://readme")
	}
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d bytes allocated (%.1f MiB); heap in use %+.1f MiB", got, float64(got)/(1<<20), (float64(after.HeapInuse)-float64(before.HeapInuse))/(1<<20))
	if got > 100<<20 {
		t.Errorf("%d bytes allocated, over 100 MiB", got)
	}
}

// TestServer_ListenStaysFull: a subscriptions/listen stream whose client reads nothing while
// its queue stays full for listenStuckAfter is ended (SECURITY LA-12): what waited is dropped,
// the client is sent notifications/cancelled naming the listen request (the spec's end of a
// subscription the server tears down) and no result (which would say the end was graceful),
// and the connection goes on. A burst that fills the queue ends nothing, nor does a client that
// reads, however late.
func TestServer_ListenStaysFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenFixture(t)
		c := MustServeStdio(t, t.Context(), f.Server)
		const update = `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"uri":"fixture://readme"}}`
		c.send(t, listenLine(`"L"`))
		c.recv(t) // acknowledged
		notify := func(n int) {
			for range n {
				f.NotifyResourceUpdated("fixture://readme")
			}
			synctest.Wait() // the stream has taken an update and waits for the client to read it
		}
		listening := func() bool { return len(f.live().listenersWhere(func(*listener) bool { return true })) == 1 }

		notify(2 * outboxSize) // a burst far past the queue ends nothing
		time.Sleep(listenStuckAfter - time.Second)
		notify(2 * outboxSize) // nor does a queue full for less than listenStuckAfter
		if !listening() {
			t.Fatal("ended by a queue full for less than 30s")
		}
		for i := range outboxSize + 1 { // the one in writing and the 64 queued
			if got := c.recv(t); got != update {
				t.Fatalf("line %d: got %s, want an update", i, got)
			}
		}
		synctest.Wait()        // the stream has seen its last write return: the client has read
		notify(2 * outboxSize) // full again, since the client read: the clock starts again
		time.Sleep(listenStuckAfter - time.Second)
		notify(1)
		if !listening() {
			t.Fatal("ended by a queue full for less than 30s since the client last read")
		}
		time.Sleep(time.Second)
		notify(1)
		for i, want := range []string{
			update, // in writing; the 64 queued are dropped
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"L"},"reason":"the subscription's notifications went unread: its queue (64 messages or 256 KiB) stayed full for 30s; listen again","requestId":"L"}}`,
		} {
			if got := c.recv(t); got != want {
				t.Errorf("line %d: got %s, want %s", i, got, want)
			}
		}
		synctest.Wait()
		if listening() {
			t.Error("still listening after the end")
		}
		notify(1) // to no one
		c.send(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
		lines, err := c.rest(t)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{`{"jsonrpc":"2.0","id":2,"result":{}}`}; !equal(lines, want) {
			t.Errorf("then: got %q, want %q (no update, no answer to the listen)", lines, want)
		}
	})
}
