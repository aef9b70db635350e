// Package limit protects the HTTP server from clients that send too much: a token-bucket rate
// limiter per client, token or address, with the X-RateLimit-* and Retry-After headers, and a
// cap on requests in flight.
//
// The simplest use, in front of /mcp once the caller is known:
//
//	lim := limit.New(limit.Config{PerMinute: 120, Burst: 20}) // off when PerMinute is 0
//	gate := limit.NewGate(64)
//	mux.Handle("/mcp", gate.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//		key := limit.RemoteAddrKey(r.RemoteAddr) // or "client:"+p.ClientID, "pat:"+p.ClientID
//		d := lim.Allow(key)
//		d.SetHeaders(w.Header()) // on every response
//		if !d.Allowed {
//			// 429, JSON-RPC error -32004; Retry-After is already set
//		}
//		…
//	})))
//
// # Rate limits
//
// Each key has a bucket of Config.Burst tokens (DESIGN.md: default 120/min, burst 20) that
// refills continuously at Config.PerMinute tokens a minute, one every minute/PerMinute (0.5 s
// by default). A request takes one token, or is refused when there is none; a refused request
// takes nothing, so a client that waits for Retry-After is served. The table stores one
// number per key (the time its bucket will be full again, the GCRA form of a token bucket), so
// a key whose bucket is full is the same as an absent one and costs nothing to forget.
//
// Set changes the rate and burst while the server runs (the console's Settings page): each key
// keeps the tokens it has used, which refill at the new rate, and never owes more than the new
// burst; 0 turns limiting off and forgets every bucket.
//
// Headers: X-RateLimit-Limit is the sustained rate (requests per minute), X-RateLimit-Remaining
// the whole tokens left now (at most Burst-1 after a request, never negative), and
// X-RateLimit-Reset the Unix time in seconds (GitHub style, as seed 003 shows; not the IETF
// draft's delta-seconds) at which the bucket will be full again. Retry-After, only on a
// refusal, is whole seconds, rounded up, at least 1. With limiting off no header is written.
//
// # Memory under attack
//
// A Limiter tracks at most Config.MaxKeys keys (default 100,000, about 5 MB measured: keys are
// kept as 64-bit hashes, never as the strings). A new key that finds its shard full first drops the
// full buckets, then, if more than 7/8 of the shard is still live, the buckets nearest to full
// down to 7/8: each eviction pass frees an eighth of the shard, so the cost per new key stays
// O(log n) amortized however many distinct addresses a flood brings. Eviction can only make the
// limit looser for the keys pushed out; it never refuses anyone else. IPv6 addresses are keyed
// by their /64 (IPKey), so one host cannot mint a bucket per address.
//
// # Requests in flight
//
// Gate admits at most n requests at once (TryAcquire/Release, or Middleware, which answers 503
// with "Retry-After: 1" when full). It never queues: under overload, a fast refusal is cheaper
// than a slow answer. Long-lived SSE streams should not hold a slot.
//
// # Caveats
//
// State is in memory only: a restart gives every key a full bucket. Limits are per process.
// A nil *Limiter and a nil *Gate are valid and limit nothing; a nil *Limiter cannot be
// turned on by Set, so give a server New's Limiter even when it starts with limiting off.
package limit
