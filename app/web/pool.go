package web

// The pool of authenticated MCP calls (SECURITY.md LA-13; issue 28, item 5): at most
// Config.MaxConcurrent at once, at most a share of them for one principal, so that one token
// cannot make every other client get 503; and calls waiting for the owner's approval are parked
// outside it (Park), since a person may take minutes to answer.

import (
	"context"
	"sync"
)

// principalShare is the most calls of the pool one principal may hold: half of it, at least 2
// (or the whole pool, when it has fewer). Half leaves the other half to everyone else however
// many calls one client keeps going; 2 lets a client with a slow call still make another.
func principalShare(limit int) int {
	return max(limit/2, min(2, limit))
}

// callPool bounds the authenticated calls in flight: in all (limit) and per principal (share);
// it also bounds the calls parked outside it (Park) the same way, so that parking cannot be
// used to hold more requests, and their bodies, than the pool would. A slot freed while a
// parked call waits to come back (resume) goes to that call first. A nil *callPool is
// unbounded. It is safe for concurrent use.
type callPool struct {
	limit, share int

	mu       sync.Mutex
	inFlight int
	per      map[string]int // slots held per principal; keys with none are removed
	parked   map[string]int // calls parked per principal; keys with none are removed
	parkedN  int
	waiters  []*resumer // parked calls that want their slot back, first come first
}

// resumer is a parked call waiting for a slot: ready is closed when it has one.
type resumer struct {
	key   string
	ready chan struct{}
}

// newCallPool returns the pool of limit calls; nil (unbounded) when limit ≤ 0.
func newCallPool(limit int) *callPool {
	if limit <= 0 {
		return nil
	}
	return &callPool{limit: limit, share: principalShare(limit), per: map[string]int{}, parked: map[string]int{}}
}

// tryAcquire takes a slot for key if the pool and key's share both have one; full tells which
// did not (true: the pool; false: key's share).
func (p *callPool) tryAcquire(key string) (ok, full bool) {
	if p == nil {
		return true, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.inFlight >= p.limit:
		return false, true
	case p.per[key] >= p.share:
		return false, false
	}
	p.take(key)
	return true, false
}

func (p *callPool) take(key string) {
	p.inFlight++
	p.per[key]++
}

// release gives back a slot of key, to the first parked call that can take it, if any.
func (p *callPool) release(key string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drop(key)
	p.handOff()
}

func (p *callPool) drop(key string) {
	p.inFlight--
	if p.per[key]--; p.per[key] <= 0 {
		delete(p.per, key)
	}
}

// handOff gives free slots to the resumers that can take them, in the order they came.
func (p *callPool) handOff() {
	kept := p.waiters[:0]
	for _, w := range p.waiters {
		if p.inFlight < p.limit && p.per[w.key] < p.share {
			p.take(w.key)
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(p.waiters[len(kept):])
	p.waiters = kept
}

// park moves a slot of key out of the pool, as a parked call of key; false (and nothing moved)
// when key already has its share of parked calls or the pool its limit.
func (p *callPool) park(key string) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.parked[key] >= p.share || p.parkedN >= p.limit {
		return false
	}
	p.parked[key]++
	p.parkedN++
	p.drop(key)
	p.handOff()
	return true
}

// unpark ends a parked call of key that will not come back into the pool.
func (p *callPool) unpark(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.unparkLocked(key)
}

func (p *callPool) unparkLocked(key string) {
	p.parkedN--
	if p.parked[key]--; p.parked[key] <= 0 {
		delete(p.parked, key)
	}
}

// resume brings a parked call of key back into the pool: at once when a slot is free, else
// with the first slot freed (before any new call takes it), or ctx's error when ctx ends first.
func (p *callPool) resume(ctx context.Context, key string) error {
	p.mu.Lock()
	p.unparkLocked(key)
	if p.inFlight < p.limit && p.per[key] < p.share {
		p.take(key)
		p.mu.Unlock()
		return nil
	}
	w := &resumer{key: key, ready: make(chan struct{})}
	p.waiters = append(p.waiters, w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, o := range p.waiters {
		if o == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return ctx.Err()
		}
	}
	// Handed a slot as ctx ended: it goes to the next one.
	p.drop(key)
	p.handOff()
	return ctx.Err()
}

// callSlot is one request's hold on the pool of calls. Its calls may park it (Park) while they
// wait for the owner's approval; end gives back whatever it holds when the request ends. Safe
// for concurrent use: the calls of a batch, and work that outlives its request (legacy SSE),
// may call Park at any time.
type callSlot struct {
	pool *callPool
	key  string

	mu     sync.Mutex
	held   bool // a slot of the pool
	parked bool // a parked call, outside the pool
	ended  bool
}

// end gives back the slot, or the parked place, and makes later parks do nothing.
func (s *callSlot) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.held {
		s.held = false
		s.pool.release(s.key)
	}
	if s.parked {
		s.parked = false
		s.pool.unpark(s.key)
	}
}

// park frees the slot while a call waits; false when it holds none (the request ended, another
// call of it parked it already) or the pool has no room for another parked call.
func (s *callSlot) park() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended || !s.held || !s.pool.park(s.key) {
		return false
	}
	s.held, s.parked = false, true
	return true
}

// resume takes a slot again for the parked call (see callPool.resume).
func (s *callSlot) resume(ctx context.Context) error {
	s.mu.Lock()
	if !s.parked {
		s.mu.Unlock()
		return nil
	}
	s.parked = false
	s.mu.Unlock()
	err := s.pool.resume(ctx, s.key)
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
	case s.ended: // the request ended meanwhile: nothing will give the slot back but this
		s.pool.release(s.key)
	default:
		s.held = true
	}
	return err
}

type callSlotKey struct{}

// Park frees the pool slot of the request whose context ctx is (or derives from) while the
// caller waits for something that may take minutes — the owner's approval — and returns the
// function that takes it back, which the caller must call before it goes on working. resume
// waits for a slot when the pool is full (it gets the first one freed, before any new call)
// and returns ctx's error if ctx ends first; the caller should then stop.
//
// Outside an HTTP request's pool (stdio, a GET stream, the console), and when the principal
// already has its share of parked calls (half of Config.MaxConcurrent, at least 2) or the
// server as many parked calls as MaxConcurrent, nothing is freed and resume returns nil at
// once: the call waits in its slot as before. In a batch, only the first call that parks frees
// the request's one slot. resume may be called more than once; only the first call counts.
func Park(ctx context.Context) (resume func() error) {
	s, _ := ctx.Value(callSlotKey{}).(*callSlot)
	if s == nil || !s.park() {
		return func() error { return nil }
	}
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() { err = s.resume(ctx) })
		return err
	}
}
