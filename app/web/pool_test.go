package web

import (
	"context"
	"runtime"
	"testing"
)

func TestPrincipalShare(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{1, 1}, {2, 2}, {3, 2}, {4, 2}, {5, 2}, {6, 3}, {64, 32}} {
		if got := principalShare(tc.limit); got != tc.want {
			t.Errorf("principalShare(%d) = %d, want %d", tc.limit, got, tc.want)
		}
	}
}

// mustAcquire takes a slot of key as a request of the pool would.
func mustAcquire(tb testing.TB, p *callPool, key string) *callSlot {
	tb.Helper()
	if ok, _ := p.tryAcquire(key); !ok {
		tb.Fatalf("no slot for %s: %d in flight", key, p.inFlight)
	}
	return &callSlot{pool: p, key: key, held: true}
}

// TestCallPool_Resume (SECURITY.md LA-13): a parked call that comes back to a full pool gets
// the first slot freed, before a new call; one whose context ends while it waits leaves the
// queue; parks beyond a principal's share keep their slot; every slot is given back.
func TestCallPool_Resume(t *testing.T) {
	p := newCallPool(4) // share 2
	a := mustAcquire(t, p, "a")
	if !a.park() {
		t.Fatal("park refused")
	}
	b1, b2 := mustAcquire(t, p, "b"), mustAcquire(t, p, "b")
	c1, c2 := mustAcquire(t, p, "c"), mustAcquire(t, p, "c")
	resumed := make(chan error, 1)
	go func() { resumed <- a.resume(t.Context()) }()
	waitFor(t, p, func() bool { return len(p.waiters) == 1 })
	b1.end()
	if err := <-resumed; err != nil {
		t.Fatalf("resume: %v", err)
	}
	if ok, _ := p.tryAcquire("d"); ok {
		t.Error("a new call took the slot the parked call was given")
	}

	// A waiter whose context ends leaves the queue and takes nothing.
	b3 := mustAcquireAfter(t, p, "b", b2) // b holds 1: b2 ends, b3 takes it
	if !b3.park() {
		t.Fatal("park refused")
	}
	d := mustAcquire(t, p, "d") // the pool is full again
	ctx, cancel := context.WithCancel(t.Context())
	go func() { resumed <- b3.resume(ctx) }()
	waitFor(t, p, func() bool { return len(p.waiters) == 1 })
	cancel()
	if err := <-resumed; err == nil {
		t.Error("resume after its context ended: nil, want its error")
	}
	if len(p.waiters) != 0 {
		t.Errorf("%d waiters after the context ended, want 0", len(p.waiters))
	}

	// Parks beyond the share keep their slot.
	if !c1.park() || !c2.park() {
		t.Fatal("park refused")
	}
	c3 := mustAcquire(t, p, "c")
	if c3.park() {
		t.Error("a third park of c, whose share is 2, freed its slot")
	}
	for _, s := range []*callSlot{a, b1, b2, b3, c1, c2, c3, d} {
		s.end()
	}
	if p.inFlight != 0 || p.parkedN != 0 || len(p.per) != 0 || len(p.parked) != 0 {
		t.Errorf("after every request ended: %d in flight, %d parked (%v, %v), want none", p.inFlight, p.parkedN, p.per, p.parked)
	}
}

// mustAcquireAfter ends prev and takes a slot of key.
func mustAcquireAfter(tb testing.TB, p *callPool, key string, prev *callSlot) *callSlot {
	prev.end()
	return mustAcquire(tb, p, key)
}

// waitFor waits until cond holds under the pool's lock.
func waitFor(tb testing.TB, p *callPool, cond func() bool) {
	tb.Helper()
	for {
		p.mu.Lock()
		ok := cond()
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-tb.(*testing.T).Context().Done():
			tb.Fatal("gave up waiting")
		default:
		}
		runtime.Gosched()
	}
}
