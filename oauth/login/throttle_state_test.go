package login

import (
	"encoding/json"
	"testing"
	"time"
)

// TestThrottle_SurvivesRestart: the failures of the window and the global bucket, saved and
// restored into a new Throttle, still refuse the IP that was refused; the window's end still
// frees it (AS-27: never a permanent lockout).
func TestThrottle_SurvivesRestart(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	th := NewThrottle(clock)
	for range 4 {
		if wait := th.Allow("203.0.113.9"); wait > 0 {
			now = now.Add(wait)
			th.Allow("203.0.113.9")
		}
	}
	if th.Allow("203.0.113.9") == 0 {
		t.Fatal("the fifth attempt in a row was allowed at once; the test needs a refused IP")
	}
	for range MaxDeviceFailures {
		th.AllowDevice("dev-a")
	}
	saved, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	restarted := NewThrottle(clock)
	if err := json.Unmarshal(saved, restarted); err != nil {
		t.Fatal(err)
	}
	if restarted.Allow("203.0.113.9") == 0 {
		t.Error("after a restart the refused IP may try again at once")
	}
	if restarted.Allow("198.51.100.1") != 0 {
		t.Error("after a restart another IP is refused")
	}
	if restarted.AllowDevice("dev-a") == 0 {
		t.Error("after a restart the refused device may try again at once")
	}
	now = now.Add(Window + time.Second)
	if restarted.Allow("203.0.113.9") != 0 {
		t.Error("the IP is still refused after the window")
	}
	now = now.Add(DeviceWindow)
	if restarted.AllowDevice("dev-a") != 0 {
		t.Error("the device is still refused after its window")
	}
	if err := json.Unmarshal([]byte(`{"ips":`), NewThrottle(clock)); err == nil {
		t.Error("a truncated state was accepted")
	}
}
