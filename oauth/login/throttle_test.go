package login

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

func TestDelay(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want time.Duration
	}{
		{0, 0}, {1, 0}, {2, 0}, {3, time.Second}, {4, 2 * time.Second}, {5, 4 * time.Second},
		{6, 8 * time.Second}, {11, 256 * time.Second}, {12, MaxDelay}, {19, MaxDelay}, {100, MaxDelay},
	} {
		t.Run(fmt.Sprint(tt.n), func(t *testing.T) {
			if got := Delay(tt.n); got != tt.want {
				t.Errorf("Delay(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
}

func TestThrottle_Allow(t *testing.T) {
	t.Run("delays grow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for n := range 13 { // n failures so far, the last one just now (all inside the window)
				got := th.Allow("198.51.100.7")
				if want := Delay(n); got != want {
					t.Fatalf("after %d failures: Allow = %v, want %v", n, got, want)
				}
				if got == 0 {
					continue
				}
				time.Sleep(got - time.Millisecond)
				if got := th.Allow("198.51.100.7"); got != time.Millisecond {
					t.Fatalf("after %d failures, 1ms early: Allow = %v, want 1ms", n, got)
				}
				time.Sleep(time.Millisecond)
				if got := th.Allow("198.51.100.7"); got != 0 {
					t.Fatalf("after %d failures and the delay: Allow = %v, want 0", n, got)
				}
			}
		})
	})
	t.Run("429 after MaxFailures without delays", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			th.delay = func(int) time.Duration { return 0 }
			for i := range MaxFailures {
				if got := th.Allow("198.51.100.7"); got != 0 {
					t.Fatalf("attempt %d: Allow = %v, want 0", i+1, got)
				}
				time.Sleep(time.Second)
			}
			if got, want := th.Allow("198.51.100.7"), Window-MaxFailures*time.Second; got != want {
				t.Errorf("attempt %d: Allow = %v, want %v", MaxFailures+1, got, want)
			}
			if got := th.Allow("198.51.100.8"); got != 0 {
				t.Errorf("another IP: Allow = %v, want 0", got)
			}
			time.Sleep(Window - MaxFailures*time.Second)
			if got := th.Allow("198.51.100.7"); got != 0 {
				t.Errorf("after the cool-down: Allow = %v, want 0", got)
			}
		})
	})
	t.Run("success resets", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for range 3 {
				th.Allow("198.51.100.7")
			}
			if got := th.Allow("198.51.100.7"); got == 0 {
				t.Fatal("4th attempt at once allowed, want a delay")
			}
			time.Sleep(time.Second)
			if got := th.Allow("198.51.100.7"); got != 0 {
				t.Fatalf("after the delay: Allow = %v, want 0", got)
			}
			th.Success("198.51.100.7")
			for i := range 3 {
				if got := th.Allow("198.51.100.7"); got != 0 {
					t.Errorf("after success, attempt %d: Allow = %v, want 0", i+1, got)
				}
			}
		})
	})
	t.Run("released after the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for range 12 {
				time.Sleep(th.Allow("198.51.100.7"))
				th.Allow("198.51.100.7")
			}
			if got := th.Allow("198.51.100.7"); got == 0 {
				t.Fatal("attempt at once allowed, want a delay")
			}
			time.Sleep(Window)
			for i := range 3 {
				if got := th.Allow("198.51.100.7"); got != 0 {
					t.Errorf("after the window, attempt %d: Allow = %v, want 0", i+1, got)
				}
			}
		})
	})
	t.Run("IPv6 by /64, mapped IPv4 as IPv4", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for _, ip := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
				th.Allow(ip)
			}
			if got := th.Allow("2001:db8:1:2::9"); got == 0 {
				t.Error("4th attempt from one /64 allowed at once, want a delay")
			}
			if got := th.Allow("2001:db8:1:3::1"); got != 0 {
				t.Errorf("another /64: Allow = %v, want 0", got)
			}
			for _, ip := range []string{"192.0.2.1", "::ffff:192.0.2.1", "192.0.2.1"} {
				th.Allow(ip)
			}
			if got := th.Allow("192.0.2.1"); got == 0 {
				t.Error("4th attempt from one IPv4 address allowed at once, want a delay")
			}
		})
	})
	t.Run("global backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for i := range GlobalBurst {
				if got := th.Allow(fmt.Sprintf("10.0.%d.%d", i/256, i%256)); got != 0 {
					t.Fatalf("IP %d: Allow = %v, want 0", i, got)
				}
			}
			got := th.Allow("203.0.113.1")
			if got != GlobalInterval {
				t.Fatalf("a fresh IP while many fail: Allow = %v, want %v", got, GlobalInterval)
			}
			time.Sleep(got)
			if got := th.Allow("203.0.113.1"); got != 0 {
				t.Errorf("after the bucket drained by one: Allow = %v, want 0", got)
			}
			time.Sleep(GlobalBurst * GlobalInterval)
			for i := range 3 {
				if got := th.Allow(fmt.Sprintf("203.0.113.%d", 10+i)); got != 0 {
					t.Errorf("after the attack: Allow = %v, want 0", got)
				}
			}
		})
	})
}

func TestThrottle_AllowDevice(t *testing.T) {
	t.Run("own limit, apart from IPs and the global bucket", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for i := range GlobalBurst { // many addresses fill the global bucket
				th.Allow(fmt.Sprintf("10.0.%d.%d", i/256, i%256))
			}
			if got := th.Allow("203.0.113.1"); got == 0 {
				t.Fatal("a fresh IP passed a full global bucket")
			}
			for i := range MaxDeviceFailures {
				if got := th.AllowDevice("dev-a"); got != 0 {
					t.Fatalf("device attempt %d: AllowDevice = %v, want 0", i+1, got)
				}
				time.Sleep(time.Minute)
			}
			if got, want := th.AllowDevice("dev-a"), DeviceWindow-MaxDeviceFailures*time.Minute; got != want {
				t.Errorf("attempt %d: AllowDevice = %v, want %v", MaxDeviceFailures+1, got, want)
			}
			if got := th.AllowDevice("dev-b"); got != 0 {
				t.Errorf("another device: AllowDevice = %v, want 0", got)
			}
			th.SuccessDevice("dev-a")
			if got := th.AllowDevice("dev-a"); got != 0 {
				t.Errorf("after SuccessDevice: AllowDevice = %v, want 0", got)
			}
		})
	})
	t.Run("released after the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			th := NewThrottle(time.Now)
			for range MaxDeviceFailures {
				th.AllowDevice("dev-a")
			}
			if th.AllowDevice("dev-a") == 0 {
				t.Fatal("attempt past the limit allowed")
			}
			time.Sleep(DeviceWindow)
			if got := th.AllowDevice("dev-a"); got != 0 {
				t.Errorf("after DeviceWindow: AllowDevice = %v, want 0", got)
			}
		})
	})
}
