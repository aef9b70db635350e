package limit

import "sync"

// PerKey bounds the requests in flight per key: an address, a principal. It is safe for
// concurrent use. A nil *PerKey is unbounded: TryAcquire always succeeds.
type PerKey struct {
	max int
	mu  sync.Mutex
	n   map[string]int // only keys with requests in flight: the map shrinks as they end
}

// NewPerKey returns a PerKey that admits at most n requests at once for each key. With n ≤ 0
// it returns nil, which admits everything.
func NewPerKey(n int) *PerKey {
	if n <= 0 {
		return nil
	}
	return &PerKey{max: n, n: map[string]int{}}
}

// TryAcquire takes a slot of key if one is free and reports whether it did; it never waits.
// Every successful TryAcquire must be followed by exactly one Release of the same key.
func (p *PerKey) TryAcquire(key string) bool {
	if p == nil {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key] >= p.max {
		return false
	}
	p.n[key]++
	return true
}

// Release returns a slot of key taken by TryAcquire.
func (p *PerKey) Release(key string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch n := p.n[key]; {
	case n <= 0:
		panic("limit: PerKey.Release without TryAcquire")
	case n == 1:
		delete(p.n, key)
	default:
		p.n[key] = n - 1
	}
}

// InFlight is the number of slots of key taken now.
func (p *PerKey) InFlight(key string) int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n[key]
}
