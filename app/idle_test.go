package app

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestIdleRelease_step: a release comes after a quiet period that follows enough work, once
// per burst; never while the process keeps allocating, nor after too little.
func TestIdleRelease_step(t *testing.T) {
	r := idleRelease{quiet: 10, least: 100, last: 1000, released: 1000}
	for i, c := range []struct {
		allocated uint64
		want      bool
	}{
		{1005, false}, // quiet, but too little since the start
		{1050, false}, // working
		{1200, false}, // working
		{1205, true},  // quiet, 205 since the start
		{1208, false}, // still quiet: released already
		{1300, false}, // working again
		{1350, false}, // working
		{1355, true},  // quiet, 150 since the release
		{1360, false}, // quiet, 5 since the release
		{1450, false}, // working
		{1454, false}, // quiet, but 99 since the release
	} {
		if got := r.step(c.allocated); got != c.want {
			t.Errorf("look %d, at %d bytes allocated: release %v, want %v", i, c.allocated, got, c.want)
		}
	}
}

// TestReleaseWhenIdle: steady allocation brings no release; the quiet after it brings one,
// and only one, however long the quiet lasts; work after it brings the next. The clock is a
// synctest bubble's and the allocation counter the test's own, so a busy machine cannot move
// either (the test once read this process's real allocations against the wall clock, and
// failed under load).
func TestReleaseWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			period       = 5 * time.Second
			quiet, least = 1 << 20, 16 << 20
		)
		var allocated atomic.Uint64
		var releases atomic.Int32
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go releaseWhenIdle(ctx, period, quiet, least, allocated.Load, func() { releases.Add(1) })
		synctest.Wait()

		look := func(alloc uint64) int32 { // allocate, then let one period pass and the look run
			allocated.Add(alloc)
			time.Sleep(period)
			synctest.Wait()
			return releases.Load()
		}
		for i := range 20 { // 3 MiB a period, 60 MiB in all: never quiet
			if n := look(3 << 20); n != 0 {
				t.Fatalf("period %d of steady allocation: %d releases, want none", i, n)
			}
		}
		if n := look(0); n != 1 {
			t.Fatalf("the first quiet period after 60 MiB: %d releases, want 1", n)
		}
		for i := range 10 {
			if n := look(quiet / 2); n != 1 {
				t.Fatalf("quiet period %d after the release: %d releases, want still 1", i, n)
			}
		}
		for range 6 { // working again: 18 MiB
			look(3 << 20)
		}
		if n := look(0); n != 2 {
			t.Errorf("the quiet after another 18 MiB: %d releases, want 2", n)
		}
	})
}
