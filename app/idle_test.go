package app

import (
	"context"
	"sync/atomic"
	"testing"
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

// TestReleaseWhenIdle: in this process, steady allocation brings no release; the quiet after
// it brings one, and only one.
func TestReleaseWhenIdle(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const period = 50 * time.Millisecond
	var releases atomic.Int32
	go releaseWhenIdle(ctx, period, 1<<20, 16<<20, func() { releases.Add(1) })
	var sink []byte
	for end := time.Now().Add(20 * period); time.Now().Before(end); { // ~3 MiB per 5 ms: never quiet
		for range 48 {
			sink = make([]byte, 64<<10)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := releases.Load(); n != 0 {
		t.Errorf("%d releases while the process kept allocating, want none", n)
	}
	deadline := time.Now().Add(40 * period)
	for releases.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(period / 5)
	}
	time.Sleep(4 * period)
	if n := releases.Load(); n != 1 {
		t.Errorf("%d releases in the quiet after ~100 MiB of garbage, want 1", n)
	}
	_ = sink
}
