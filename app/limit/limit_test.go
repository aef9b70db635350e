package limit_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/limit"
)

// MustNew returns a Limiter at 120/min, burst 20, with cfg's other fields. Unless cfg.Now
// says otherwise its clock is time.Now: call it inside a synctest bubble, whose time stands
// still until the test sleeps.
func MustNew(tb testing.TB, cfg limit.Config) *limit.Limiter {
	tb.Helper()
	if cfg.PerMinute == 0 {
		cfg.PerMinute, cfg.Burst = limit.DefaultPerMinute, limit.DefaultBurst
	}
	l := limit.New(cfg)
	if l == nil {
		tb.Fatal("New returned nil")
	}
	return l
}

func TestLimiter_Allow(t *testing.T) {
	t.Run("burst then refusal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{})
			for i := range limit.DefaultBurst {
				d := l.Allow("client:a")
				if !d.Allowed {
					t.Fatalf("request %d refused", i+1)
				}
				if got, want := d.Remaining, limit.DefaultBurst-1-i; got != want {
					t.Errorf("request %d: Remaining = %d, want %d", i+1, got, want)
				}
				if d.RetryAfter != 0 || d.RetryAfterSeconds() != 0 {
					t.Errorf("request %d: RetryAfter = %v, want 0", i+1, d.RetryAfter)
				}
			}
			d := l.Allow("client:a")
			if d.Allowed {
				t.Fatal("request past the burst allowed")
			}
			if got, want := d.RetryAfter, 500*time.Millisecond; got != want {
				t.Errorf("RetryAfter = %v, want %v", got, want)
			}
			if got, want := d.RetryAfterSeconds(), 1; got != want {
				t.Errorf("RetryAfterSeconds = %d, want %d", got, want)
			}
			if d.Remaining != 0 {
				t.Errorf("Remaining = %d, want 0", d.Remaining)
			}
			if !l.Allow("client:b").Allowed {
				t.Error("another key refused")
			}
		})
	})

	t.Run("refill rate", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{})
			for range limit.DefaultBurst {
				l.Allow("k")
			}
			time.Sleep(499 * time.Millisecond)
			if d := l.Allow("k"); d.Allowed {
				t.Fatal("allowed before a token refilled")
			} else if got, want := d.RetryAfter, time.Millisecond; got != want {
				t.Errorf("RetryAfter = %v, want %v", got, want)
			}
			time.Sleep(time.Millisecond)
			if d := l.Allow("k"); !d.Allowed || d.Remaining != 0 {
				t.Fatalf("after one interval: %+v, want allowed with 0 remaining", d)
			}
			// 5 s refill 10 tokens: 10 requests pass, the 11th does not.
			time.Sleep(5 * time.Second)
			for i := range 10 {
				if d := l.Allow("k"); !d.Allowed || d.Remaining != 9-i {
					t.Fatalf("request %d after 5s: %+v, want allowed with %d remaining", i+1, d, 9-i)
				}
			}
			if l.Allow("k").Allowed {
				t.Fatal("11th request after 5s allowed")
			}
			// An idle minute fills the bucket, and no more than full.
			time.Sleep(time.Hour)
			n := 0
			for l.Allow("k").Allowed {
				n++
			}
			if n != limit.DefaultBurst {
				t.Errorf("after an idle hour %d requests passed, want %d", n, limit.DefaultBurst)
			}
		})
	})

	t.Run("retry after", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{PerMinute: 7, Burst: 1})
			interval := time.Minute / 7
			if !l.Allow("k").Allowed {
				t.Fatal("first request refused")
			}
			for _, tc := range []struct {
				wait    time.Duration // before the request
				want    time.Duration
				seconds int
			}{
				{0, interval, 9}, // 8.571428571s
				{8 * time.Second, interval - 8*time.Second, 1},
				{interval - 8*time.Second - time.Nanosecond, time.Nanosecond, 1},
			} {
				time.Sleep(tc.wait)
				d := l.Allow("k")
				if d.Allowed {
					t.Fatalf("after %v: allowed", tc.wait)
				}
				if d.RetryAfter != tc.want || d.RetryAfterSeconds() != tc.seconds {
					t.Errorf("after %v: RetryAfter = %v (%ds), want %v (%ds)",
						tc.wait, d.RetryAfter, d.RetryAfterSeconds(), tc.want, tc.seconds)
				}
			}
			time.Sleep(time.Nanosecond)
			if !l.Allow("k").Allowed {
				t.Fatal("refused once RetryAfter has passed")
			}
		})
	})

	t.Run("remaining never negative", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{PerMinute: 600, Burst: 3})
			allowed := 0
			for i := range 5000 {
				if i%7 == 0 {
					time.Sleep(time.Duration(i%5) * 30 * time.Millisecond)
				}
				d := l.Allow("k")
				if d.Remaining < 0 || d.Remaining > 2 {
					t.Fatalf("request %d: Remaining = %d, want 0..2", i, d.Remaining)
				}
				if !d.Allowed && (d.RetryAfter <= 0 || d.RetryAfterSeconds() < 1) {
					t.Fatalf("request %d refused with RetryAfter %v", i, d.RetryAfter)
				}
				if d.Allowed {
					allowed++
				}
			}
			if allowed == 0 {
				t.Error("nothing allowed")
			}
		})
	})

	t.Run("clock going back", func(t *testing.T) {
		// A synctest clock never goes back, so this one is a plain variable.
		now := time.Unix(1_700_000_000, 0)
		l := MustNew(t, limit.Config{Now: func() time.Time { return now }})
		for range limit.DefaultBurst {
			l.Allow("k")
		}
		now = now.Add(-24 * time.Hour)
		d := l.Allow("k")
		if d.Allowed {
			t.Fatal("allowed right after the burst")
		}
		if d.RetryAfter != 500*time.Millisecond {
			t.Errorf("RetryAfter = %v, want 500ms (never owe more than a full bucket)", d.RetryAfter)
		}
	})
}

func TestLimiter_Off(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    *limit.Limiter
	}{
		{"nil", nil},
		{"PerMinute 0", limit.New(limit.Config{PerMinute: 0, Burst: 20})},
		{"PerMinute negative", limit.New(limit.Config{PerMinute: -5})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.l
			for range 1000 {
				d := l.Allow("k")
				if !d.Allowed {
					t.Fatal("refused while off")
				}
				h := http.Header{}
				d.SetHeaders(h)
				if len(h) != 0 {
					t.Fatalf("headers while off: %v", h)
				}
			}
			if l.Len() != 0 {
				t.Errorf("Len = %d, want 0", l.Len())
			}
			if pm, _ := l.Rate(); pm != 0 {
				t.Errorf("Rate = %d/min, want 0", pm)
			}
		})
	}
}

// TestLimiter_Set: a rate changed at run time applies to the next request, and each key keeps
// the tokens it has used.
func TestLimiter_Set(t *testing.T) {
	// use takes n tokens of key, failing the test when one is refused.
	use := func(t *testing.T, l *limit.Limiter, key string, n int) {
		t.Helper()
		for i := range n {
			if !l.Allow(key).Allowed {
				t.Fatalf("%s: request %d of %d refused", key, i+1, n)
			}
		}
	}
	t.Run("lower", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{}) // 120/min, burst 20
			use(t, l, "used", 3)
			l.Set(6, 5) // one token every 10 s
			if pm, b := l.Rate(); pm != 6 || b != 5 {
				t.Errorf("Rate = %d, %d; want 6, 5", pm, b)
			}
			use(t, l, "used", 2) // 3 of the new 5 are used already
			d := l.Allow("used")
			if d.Allowed {
				t.Fatal("allowed past the new burst")
			}
			if got, want := d.Limit, 6; got != want {
				t.Errorf("Limit = %d, want %d", got, want)
			}
			if got, want := d.RetryAfter, 10*time.Second; got != want {
				t.Errorf("RetryAfter = %v, want %v (one token at the new rate)", got, want)
			}
			use(t, l, "fresh", 5)
			if l.Allow("fresh").Allowed {
				t.Error("a new key allowed past the new burst")
			}
			time.Sleep(10 * time.Second)
			use(t, l, "fresh", 1)
		})
	})
	t.Run("debt capped at the new burst", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{})
			use(t, l, "k", limit.DefaultBurst)
			l.Set(60, 2) // one a second; the key owed 20 tokens, now at most 2
			if d := l.Allow("k"); d.Allowed || d.RetryAfter != time.Second {
				t.Fatalf("after lowering the burst: allowed %v, RetryAfter %v; want refused, 1s", d.Allowed, d.RetryAfter)
			}
			time.Sleep(2 * time.Second)
			use(t, l, "k", 2)
		})
	})
	t.Run("raise frees a throttled key", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{PerMinute: 1, Burst: 1})
			use(t, l, "k", 1)
			if l.Allow("k").Allowed {
				t.Fatal("second request at 1/min allowed")
			}
			l.Set(limit.DefaultPerMinute, limit.DefaultBurst)
			d := l.Allow("k") // one token used, at the new rate: 18 left after this one
			if !d.Allowed || d.Remaining != limit.DefaultBurst-2 {
				t.Errorf("after raising: allowed %v, Remaining %d; want true, %d", d.Allowed, d.Remaining, limit.DefaultBurst-2)
			}
		})
	})
	t.Run("off and on", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{PerMinute: 1, Burst: 1})
			use(t, l, "k", 1)
			l.Set(0, 1)
			for range 100 {
				d := l.Allow("k")
				h := http.Header{}
				d.SetHeaders(h)
				if !d.Allowed || len(h) != 0 {
					t.Fatalf("while off: allowed %v, headers %v", d.Allowed, h)
				}
			}
			if l.Len() != 0 {
				t.Errorf("Len = %d while off, want 0", l.Len())
			}
			l.Set(1, 2) // on again: every bucket full
			use(t, l, "k", 2)
			if l.Allow("k").Allowed {
				t.Error("allowed past the burst once on again")
			}
		})
	})
	t.Run("a limiter made off", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := limit.New(limit.Config{})
			use(t, l, "k", 100)
			l.Set(60, 1)
			use(t, l, "k", 1)
			if l.Allow("k").Allowed {
				t.Error("Set did not turn limiting on")
			}
		})
	})
	t.Run("nil", func(t *testing.T) {
		var l *limit.Limiter
		l.Set(1, 1) // no effect, no panic
		for i := range 2 {
			if !l.Allow("k").Allowed {
				t.Errorf("a nil Limiter refused request %d", i+1)
			}
		}
	})
	t.Run("concurrent with Allow", func(t *testing.T) {
		l := limit.New(limit.Config{PerMinute: limit.DefaultPerMinute, Burst: limit.DefaultBurst})
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 2000 {
					l.Allow("k" + strconv.Itoa((g*2000+i)%64))
				}
			})
		}
		wg.Go(func() {
			for i := range 200 {
				l.Set(i%3*60, 1+i%7)
			}
		})
		wg.Wait()
	})
}

func TestDecision_SetHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := MustNew(t, limit.Config{})
		now := time.Now().Unix() // the bubble's clock starts on a whole second
		for _, tc := range []struct {
			name     string
			requests int // made before the one whose headers are checked
			want     map[string]string
		}{
			{"first", 0, map[string]string{
				"X-Ratelimit-Limit": "120", "X-Ratelimit-Remaining": "19",
				"X-Ratelimit-Reset": strconv.FormatInt(now+1, 10), // full again in 0.5s, rounded up
			}},
			{"last of the burst", 18, map[string]string{
				"X-Ratelimit-Limit": "120", "X-Ratelimit-Remaining": "0",
				"X-Ratelimit-Reset": strconv.FormatInt(now+10, 10),
			}},
			{"refused", 0, map[string]string{
				"X-Ratelimit-Limit": "120", "X-Ratelimit-Remaining": "0",
				"X-Ratelimit-Reset": strconv.FormatInt(now+10, 10), "Retry-After": "1",
			}},
		} {
			// One bucket across the cases, in order; a bubble cannot hold subtests.
			for range tc.requests {
				l.Allow("k")
			}
			h := http.Header{}
			l.Allow("k").SetHeaders(h)
			if len(h) != len(tc.want) {
				t.Errorf("%s: headers = %v, want %v", tc.name, h, tc.want)
			}
			for k, want := range tc.want {
				if got := h.Get(k); got != want {
					t.Errorf("%s: %s = %q, want %q", tc.name, k, got, want)
				}
			}
		}
	})
}

func TestLimiter_Eviction(t *testing.T) {
	t.Run("bounded under a flood of 1M keys", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{})
			for range limit.DefaultBurst + 5 {
				l.Allow("client:heavy")
			}
			for i := range 1_000_000 {
				if i%1000 == 0 {
					time.Sleep(time.Millisecond) // 1 s in all: most flood buckets stay live
				}
				if !l.Allow("ip:" + strconv.Itoa(i)).Allowed {
					t.Fatalf("new key %d refused", i)
				}
				if i%50_000 == 0 && l.Len() > limit.DefaultMaxKeys {
					t.Fatalf("after %d keys: Len = %d, want ≤ %d", i+1, l.Len(), limit.DefaultMaxKeys)
				}
			}
			if n := l.Len(); n > limit.DefaultMaxKeys || n < limit.DefaultMaxKeys/2 {
				t.Errorf("Len = %d, want between %d and %d", n, limit.DefaultMaxKeys/2, limit.DefaultMaxKeys)
			}
			// The heavy user's bucket, furthest from full, outlived the flood: in the flood's 1 s it
			// refilled 2 tokens, where a forgotten bucket would hold 20.
			if d := l.Allow("client:heavy"); !d.Allowed || d.Remaining != 1 {
				t.Errorf("heavy user after the flood: %+v, want allowed with 1 remaining", d)
			}
		})
	})

	t.Run("bounded when buckets refill", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l := MustNew(t, limit.Config{MaxKeys: 64}) // 2 per shard
			for i := range 64 {
				l.Allow(strconv.Itoa(i))
			}
			time.Sleep(time.Second) // every bucket is full again
			for i := range 1000 {
				l.Allow("new" + strconv.Itoa(i))
				if l.Len() > 64 {
					t.Fatalf("Len = %d, want ≤ 64", l.Len())
				}
			}
		})
	})
}

func TestIPKey(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.7", "ip:192.0.2.7"},
		{"::ffff:192.0.2.7", "ip:192.0.2.7"},
		{"2001:db8:1:2::1", "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "ip:2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "ip:2001:db8:1:3::/64"},
		{"fe80::1%eth0", "ip:fe80::/64"},
		{"::1", "ip:::/64"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			if got := limit.IPKey(netip.MustParseAddr(tc.addr)); got != tc.want {
				t.Errorf("IPKey(%s) = %q, want %q", tc.addr, got, tc.want)
			}
		})
	}
	if got, want := limit.IPKey(netip.Addr{}), "ip:invalid IP"; got != want {
		t.Errorf("IPKey(zero) = %q, want %q", got, want)
	}
}

func TestRemoteAddrKey(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:51234", "ip:192.0.2.7"},
		{"[2001:db8:1:2::99]:443", "ip:2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.7]:80", "ip:192.0.2.7"},
		{"2001:db8:1:2::99", "ip:2001:db8:1:2::/64"},
		{"@", "ip:@"},
		{"", "ip:"},
	} {
		t.Run(tc.remote, func(t *testing.T) {
			if got := limit.RemoteAddrKey(tc.remote); got != tc.want {
				t.Errorf("RemoteAddrKey(%q) = %q, want %q", tc.remote, got, tc.want)
			}
		})
	}
}

// TestLimiter_IPv6Prefix: addresses of one /64 share a bucket; another /64 has its own.
func TestLimiter_IPv6Prefix(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := MustNew(t, limit.Config{PerMinute: 60, Burst: 2})
		for i, addr := range []string{"2001:db8:0:1::1", "2001:db8:0:1::2"} {
			if !l.Allow(limit.IPKey(netip.MustParseAddr(addr))).Allowed {
				t.Fatalf("request %d from %s refused", i+1, addr)
			}
		}
		if l.Allow(limit.IPKey(netip.MustParseAddr("2001:db8:0:1:aaaa::3"))).Allowed {
			t.Error("a third address of the /64 got a fresh bucket")
		}
		if !l.Allow(limit.IPKey(netip.MustParseAddr("2001:db8:0:2::1"))).Allowed {
			t.Error("another /64 refused")
		}
	})
}

// TestLimiter_Concurrent: many goroutines on one key at a frozen instant get exactly Burst
// tokens between them; others, on their own keys, run alongside (for -race).
func TestLimiter_Concurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := MustNew(t, limit.Config{PerMinute: 60, Burst: 50})
		var allowed atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 2000 {
					if l.Allow("shared").Allowed {
						allowed.Add(1)
					}
					l.Allow("own:" + strconv.Itoa(g) + ":" + strconv.Itoa(i%100))
				}
			})
		}
		wg.Go(func() {
			for range 100 {
				_ = l.Len()
			}
		})
		wg.Wait()
		if got, want := allowed.Load(), int64(50); got != want {
			t.Errorf("%d requests allowed on the shared key, want %d", got, want)
		}
	})
}

// TestLimiter_RealClock runs with the default clock in a synctest bubble: a refused request
// passes once Retry-After has elapsed.
func TestLimiter_RealClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := limit.New(limit.Config{PerMinute: limit.DefaultPerMinute, Burst: 1})
		if !l.Allow("k").Allowed {
			t.Fatal("first request refused")
		}
		d := l.Allow("k")
		if d.Allowed {
			t.Fatal("second request allowed")
		}
		time.Sleep(d.RetryAfter)
		if !l.Allow("k").Allowed {
			t.Error("refused after RetryAfter")
		}
	})
}

func TestGate(t *testing.T) {
	t.Run("acquire and release", func(t *testing.T) {
		g := limit.NewGate(2)
		for i := range 2 {
			if !g.TryAcquire() {
				t.Fatalf("free slot %d refused", i+1)
			}
		}
		if g.TryAcquire() {
			t.Fatal("third slot granted")
		}
		if got := g.InFlight(); got != 2 {
			t.Errorf("InFlight = %d, want 2", got)
		}
		g.Release()
		if !g.TryAcquire() {
			t.Fatal("released slot refused")
		}
	})

	t.Run("nil admits everything", func(t *testing.T) {
		g := limit.NewGate(0)
		for range 100 {
			if !g.TryAcquire() {
				t.Fatal("refused")
			}
		}
		g.Release()
		if g.InFlight() != 0 {
			t.Error("InFlight not 0")
		}
	})

	t.Run("middleware", func(t *testing.T) {
		g := limit.NewGate(1)
		entered, release := make(chan struct{}), make(chan struct{})
		h := g.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
		}))
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
		}()
		<-entered
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("POST", "/mcp", nil))
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("when full: %d, Retry-After %q; want 503, 1", rec.Code, rec.Header().Get("Retry-After"))
		}
		close(release)
		<-done
		if g.InFlight() != 0 {
			t.Errorf("InFlight = %d after the request, want 0", g.InFlight())
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		g := limit.NewGate(3)
		var inside, peak atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 2000 {
					if !g.TryAcquire() {
						continue
					}
					n := inside.Add(1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					inside.Add(-1)
					g.Release()
				}
			})
		}
		wg.Wait()
		if p := peak.Load(); p > 3 {
			t.Errorf("%d inside at once, want ≤ 3", p)
		}
	})
}

func BenchmarkLimiter_Allow(b *testing.B) {
	keys := make([]string, 10_000)
	for i := range keys {
		keys[i] = limit.IPKey(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}))
	}
	for _, bc := range []struct {
		name string
		keys []string
	}{{"one key", keys[:1]}, {"10k keys", keys}} {
		b.Run(bc.name, func(b *testing.B) {
			l := limit.New(limit.Config{PerMinute: limit.DefaultPerMinute, Burst: limit.DefaultBurst})
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					l.Allow(bc.keys[i%len(bc.keys)])
					i++
				}
			})
		})
	}
}

func TestPerKey(t *testing.T) {
	p := limit.NewPerKey(2)
	for i, want := range []bool{true, true, false} {
		if got := p.TryAcquire("a"); got != want {
			t.Errorf("acquire %d of a = %v, want %v", i+1, got, want)
		}
	}
	if !p.TryAcquire("b") {
		t.Error("b is held back by a's requests")
	}
	p.Release("a")
	if got := p.InFlight("a"); got != 1 {
		t.Errorf("InFlight(a) = %d after a release, want 1", got)
	}
	if !p.TryAcquire("a") {
		t.Error("a's freed slot was not taken again")
	}
	var unbounded *limit.PerKey = limit.NewPerKey(0)
	for range 100 {
		if !unbounded.TryAcquire("x") {
			t.Fatal("a nil PerKey refused")
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Release without TryAcquire did not panic")
		}
	}()
	p.Release("c")
}
