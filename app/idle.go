package app

import (
	"context"
	"runtime/metrics"
	"time"
)

// A serving process gives the heap's free pages back to the operating system once it has gone
// quiet after some work. The collector lets the heap grow to twice what is live before it
// collects (GOGC 100), and keeps the pages it grew into: a store of 100k memories holds ~170
// MiB live, yet a few hundred recalls left the process at ~310 MiB resident, for as long as it
// then sat idle, which a personal server does most of the time. Collecting more often while
// it works (GOGC 25) kept it at ~260 MiB but cost 12-15 % of the throughput of 16 writers;
// releasing when quiet costs one collection (~35 ms of one core at 100k) per burst of work.
const (
	idlePeriod = 5 * time.Second // how often the process looks
	idleQuiet  = 1 << 20         // at most this many bytes allocated in a period is quiet
	idleLeast  = 32 << 20        // and a release needs this many allocated since the last one
)

// idleRelease decides when to release, from the bytes allocated since the process started,
// read once a period.
type idleRelease struct {
	quiet, least   uint64
	last, released uint64 // the bytes allocated at the last look and at the last release
}

// step looks at allocated, the bytes allocated so far, and reports whether to release now: the
// last period was quiet and enough was allocated since the last release to be worth a
// collection.
func (r *idleRelease) step(allocated uint64) bool {
	quiet := allocated-r.last <= r.quiet
	r.last = allocated
	if quiet && allocated-r.released >= r.least {
		r.released = allocated
		return true
	}
	return false
}

// releaseWhenIdle runs idleRelease every period until ctx is done, reading the bytes allocated
// so far from allocated (heapAllocated) and calling release (the process: debug.FreeOSMemory)
// when it says. What was allocated before it started counts as released (Open releases the
// load's garbage itself).
func releaseWhenIdle(ctx context.Context, period time.Duration, quiet, least uint64, allocated func() uint64, release func()) {
	now := allocated()
	r := idleRelease{quiet: quiet, least: least, last: now, released: now}
	every(ctx, period, func() {
		if r.step(allocated()) {
			release()
		}
	})
}

// heapAllocated is the bytes this process has allocated on the heap since it started.
func heapAllocated() uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// every calls fn every d until ctx is done, and returns then.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}
