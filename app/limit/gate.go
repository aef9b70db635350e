package limit

import (
	"net/http"
	"sync/atomic"
)

// Gate bounds the number of requests in flight. It is safe for concurrent use. A nil *Gate is
// unbounded: TryAcquire always succeeds.
type Gate struct {
	max      int64
	inFlight atomic.Int64
}

// NewGate returns a Gate that admits at most n requests at once. With n ≤ 0 it returns nil,
// which admits everything.
func NewGate(n int) *Gate {
	if n <= 0 {
		return nil
	}
	return &Gate{max: int64(n)}
}

// TryAcquire takes a slot if one is free and reports whether it did; it never waits. Every
// successful TryAcquire must be followed by exactly one Release.
func (g *Gate) TryAcquire() bool {
	if g == nil {
		return true
	}
	for {
		n := g.inFlight.Load()
		if n >= g.max {
			return false
		}
		if g.inFlight.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release returns a slot taken by TryAcquire.
func (g *Gate) Release() {
	if g == nil {
		return
	}
	if g.inFlight.Add(-1) < 0 {
		panic("limit: Gate.Release without TryAcquire")
	}
}

// InFlight is the number of slots taken now.
func (g *Gate) InFlight() int {
	if g == nil {
		return 0
	}
	return int(g.inFlight.Load())
}

// Middleware runs next while holding a slot. When none is free it answers 503 Service
// Unavailable with "Retry-After: 1" and a plain-text body, without calling next. Do not put
// long-lived responses (SSE streams) behind it: each holds its slot until it ends.
func (g *Gate) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.TryAcquire() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "server busy, retry shortly", http.StatusServiceUnavailable)
			return
		}
		defer g.Release()
		next.ServeHTTP(w, r)
	})
}
