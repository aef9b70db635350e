package limit

import (
	"hash/maphash"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults, from DESIGN.md's decisions table (rate limits: 120/min, burst 20).
const (
	DefaultPerMinute = 120
	DefaultBurst     = 20
	// DefaultMaxKeys is how many keys a Limiter tracks at most when Config.MaxKeys is zero.
	DefaultMaxKeys = 100_000
	// MaxBurst is the largest Burst a Limiter uses; larger values are lowered to it.
	MaxBurst = 1 << 20
)

// shards is the number of independently locked parts of a Limiter's table, so that parallel
// requests for different keys rarely wait for each other.
const shards = 32

// Config configures a Limiter. The zero value turns limiting off; Set changes PerMinute and
// Burst later.
type Config struct {
	// PerMinute is the sustained rate: requests per minute per key, refilled continuously (one
	// token every minute/PerMinute). If zero or negative, limiting is off: every Allow
	// succeeds and Decision.SetHeaders writes nothing.
	PerMinute int
	// Burst is the bucket's capacity: how many requests a key that has been idle may make at
	// once. If less than 1, 1 (no burst beyond one request); at most MaxBurst.
	Burst int
	// MaxKeys caps the number of keys tracked. If zero or negative, DefaultMaxKeys (100,000).
	// The cap is split evenly between 32 shards, so the bound is MaxKeys rounded down to a
	// multiple of 32 (at least 32).
	MaxKeys int
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
}

// Limiter is a token bucket per key. It is safe for concurrent use, Set included. A nil
// *Limiter is off: every Allow succeeds.
type Limiter struct {
	rate     atomic.Pointer[rate] // replaced by Set while it holds every shard's lock
	perShard int
	now      func() time.Time
	epoch    time.Time // tats are nanoseconds since epoch, read with the monotonic clock
	seed     maphash.Seed
	shards   [shards]shard
}

// rate is a Limiter's rate and burst, as Allow uses them. perMinute ≤ 0 is off.
type rate struct {
	perMinute int
	burst     int
	interval  int64 // nanoseconds per token
	depth     int64 // burst * interval: how far ahead of now a bucket's tat may run
}

func newRate(perMinute, burst int) *rate {
	if perMinute <= 0 {
		return &rate{}
	}
	burst = min(max(burst, 1), MaxBurst)
	interval := max(int64(time.Minute)/int64(perMinute), 1)
	return &rate{perMinute: perMinute, burst: burst, interval: interval, depth: int64(burst) * interval}
}

// shard is one part of the table. Each key holds its bucket's theoretical arrival time (the
// GCRA form of a token bucket): the bucket is full at and after tat, and each request moves tat
// one interval further. A key absent from the map has a full bucket.
type shard struct {
	mu      sync.Mutex
	tat     map[uint64]int64
	scratch []int64
	_       [64]byte // keeps neighbouring shards' locks off one cache line
}

// New returns a Limiter for cfg. With cfg.PerMinute ≤ 0 it is off until Set turns it on.
func New(cfg Config) *Limiter {
	maxKeys := cfg.MaxKeys
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	l := &Limiter{
		perShard: max(maxKeys/shards, 1),
		now:      now,
		epoch:    now(),
		seed:     maphash.MakeSeed(),
	}
	l.rate.Store(newRate(cfg.PerMinute, cfg.Burst))
	for i := range l.shards {
		l.shards[i].tat = make(map[uint64]int64)
	}
	return l
}

// Set changes the rate and burst at once, as Config.PerMinute and Config.Burst: perMinute ≤ 0
// turns limiting off (and forgets every bucket), and a later Set turns it on again with every
// bucket full. Each key keeps the tokens it has used, which then refill at the new rate; a key
// never owes more than the new burst. So raising the limit frees a throttled client at once,
// and lowering it refuses a client that has already used the new burst. Set is safe for
// concurrent use with Allow; it walks every bucket, so it is meant for rare changes (a
// setting), not for every request.
func (l *Limiter) Set(perMinute, burst int) {
	if l == nil {
		return
	}
	next := newRate(perMinute, burst)
	for i := range l.shards {
		l.shards[i].mu.Lock()
	}
	defer func() {
		for i := range l.shards {
			l.shards[i].mu.Unlock()
		}
	}()
	prev := l.rate.Load()
	l.rate.Store(next)
	now := int64(l.now().Sub(l.epoch))
	for i := range l.shards {
		s := &l.shards[i]
		for k, t := range s.tat {
			if t <= now || next.perMinute <= 0 || prev.perMinute <= 0 {
				delete(s.tat, k)
				continue
			}
			used := float64(t-now) / float64(prev.interval) // tokens taken and not yet refilled
			s.tat[k] = now + min(int64(used*float64(next.interval)), next.depth)
		}
	}
}

// Rate returns the rate in force, as Set takes it: requests per minute (0 when off) and burst.
func (l *Limiter) Rate() (perMinute, burst int) {
	if l == nil {
		return 0, 0
	}
	r := l.rate.Load()
	return r.perMinute, r.burst
}

// Decision is what Allow decided, with what the caller needs for its response headers.
type Decision struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Limit is the sustained requests per minute in force (Config.PerMinute, or the last
	// Set's); 0 when limiting is off.
	Limit int
	// Remaining is how many more requests the key may make right now: the whole tokens left in
	// its bucket after this request, from 0 to Burst-1. Never negative; 0 when refused.
	Remaining int
	// Reset is when the key's bucket will be full again if it makes no more requests. Zero when
	// limiting is off.
	Reset time.Time
	// RetryAfter is, when refused, how long until the next request would be allowed (always
	// positive); 0 when allowed. A refused request takes no token, so waiting this long is
	// enough.
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter in whole seconds for a Retry-After header, rounded up: at
// least 1 when refused, 0 when allowed.
func (d Decision) RetryAfterSeconds() int {
	if d.Allowed {
		return 0
	}
	return max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
}

// SetHeaders sets the rate-limit headers on h: X-RateLimit-Limit (requests per minute),
// X-RateLimit-Remaining, X-RateLimit-Reset (GitHub style: the Unix time in seconds, rounded up,
// at which the bucket is full again; not the IETF draft's delta) and, when refused,
// Retry-After in whole seconds (≥ 1). When limiting is off (Limit is 0) it sets nothing.
func (d Decision) SetHeaders(h http.Header) {
	if d.Limit <= 0 {
		return
	}
	reset := d.Reset.Unix()
	if d.Reset.Nanosecond() > 0 {
		reset++
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(d.RetryAfterSeconds()))
	}
}

// Allow takes one token from key's bucket if it has one. key names who is limited; by
// convention "client:<client_id>", "pat:<id>" or an address key from IPKey. Keys are hashed
// to 64 bits with a random per-Limiter seed: two keys that collide share a bucket, with odds of
// about n²/2⁶⁵ for n keys.
func (l *Limiter) Allow(key string) Decision {
	if l == nil || l.rate.Load().perMinute <= 0 {
		return Decision{Allowed: true}
	}
	h := maphash.String(l.seed, key)
	s := &l.shards[h%shards]

	s.mu.Lock()
	r := l.rate.Load() // under a shard's lock: Set cannot change it while the bucket is read
	if r.perMinute <= 0 {
		s.mu.Unlock()
		return Decision{Allowed: true}
	}
	nowT := l.now()
	now := int64(nowT.Sub(l.epoch))
	tat, ok := s.tat[h]
	switch {
	case !ok || tat < now:
		tat = now
	case tat-now > r.depth: // the clock went back: never owe more than a full bucket
		tat = now + r.depth
	}
	next := tat + r.interval
	if next-now > r.depth {
		s.mu.Unlock()
		return Decision{
			Limit:      r.perMinute,
			Reset:      nowT.Add(time.Duration(tat - now)),
			RetryAfter: time.Duration(next - now - r.depth),
		}
	}
	if !ok && len(s.tat) >= l.perShard {
		s.evict(now, l.perShard)
	}
	s.tat[h] = next
	s.mu.Unlock()
	return Decision{
		Allowed:   true,
		Limit:     r.perMinute,
		Remaining: int((r.depth - (next - now)) / r.interval),
		Reset:     nowT.Add(time.Duration(next - now)),
	}
}

// Len is the number of keys tracked now: keys whose buckets are not known to be full.
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.tat)
		s.mu.Unlock()
	}
	return n
}

// evict makes room in a full shard. It drops every full bucket (forgetting one changes
// nothing), and if that leaves more than 7/8 of capacity, the buckets nearest to full until 7/8
// is left: so a flood of new keys costs O(log n) per key amortized, and can only ever make the
// limit looser for the keys it pushes out (they start again with a full bucket), never refuse
// anyone else. The heaviest users, whose buckets are furthest from full, are kept longest.
func (s *shard) evict(now int64, capacity int) {
	s.scratch = s.scratch[:0]
	for k, t := range s.tat {
		if t <= now {
			delete(s.tat, k)
		} else {
			s.scratch = append(s.scratch, t)
		}
	}
	keep := capacity - capacity/8
	if keep >= capacity {
		keep = capacity - 1
	}
	drop := len(s.tat) - keep
	if drop <= 0 {
		return
	}
	slices.Sort(s.scratch)
	cutoff := s.scratch[drop-1]
	below, _ := slices.BinarySearch(s.scratch[:drop], cutoff) // how many are below the cutoff
	ties := drop - below
	for k, t := range s.tat {
		if t < cutoff {
			delete(s.tat, k)
		} else if t == cutoff && ties > 0 {
			delete(s.tat, k)
			ties--
		}
	}
}
