package login

import (
	"encoding/json"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Throttle limits password attempts (SECURITY.md AS-27), per client IP and
// globally, and per device for a browser the owner has signed in with
// before, so that no attacker can lock the owner out of such a browser.
//
// Per IP (an IPv6 address counts by its /64): every attempt counts as a
// failure until Success says otherwise, so parallel requests cannot slip
// past the delay. Failures older than Window are forgotten. After n
// failures in the window the next attempt must wait Delay(n) after the last
// one (0, 0, 0, 1 s, 2 s, 4 s … capped at MaxDelay), and with MaxFailures
// failures in the window no attempt is allowed until the oldest one leaves
// the window. (With these delays one IP cannot reach MaxFailures inside
// the window; the cap is a second line should the delays change.) Success
// forgets the IP. Every refusal is 429 with Retry-After: the handler never
// sleeps, so waiting attempts hold no goroutines.
//
// Globally: a leaky bucket of GlobalBurst attempts that drains one attempt
// per GlobalInterval. When many IPs fail at once, every IP — the owner's too —
// waits for the bucket to drain. It empties once the attack stops.
//
// Per device (OWASP "Slow Down Online Guessing Attacks with Device
// Cookies"): a browser presenting a valid device cookie, set by an earlier
// sign-in, is limited by AllowDevice instead: MaxDeviceFailures attempts in
// DeviceWindow, counted as failures until SuccessDevice, and neither the
// per-IP limits nor the global bucket apply to it. Many addresses failing at
// once therefore never refuse the owner's own browser; a stolen device
// cookie is worth MaxDeviceFailures guesses an hour.
//
// The state lives in memory; MarshalJSON and UnmarshalJSON let the server keep
// it in the database file across restarts. At most maxTracked IPs
// are remembered; beyond that, new IPs are limited by the global bucket
// only. A Throttle is safe for concurrent use.
type Throttle struct {
	now   func() time.Time
	delay func(n int) time.Duration // Delay; tests turn it off to reach MaxFailures

	mu      sync.Mutex
	ips     map[string][]time.Time // attempt times inside the window, oldest first
	devices map[string][]time.Time // device digest → attempt times inside DeviceWindow, oldest first
	level   float64                // global bucket level, in attempts
	levelAt time.Time              // when level was last drained
}

// Throttle's limits.
const (
	Window         = 15 * time.Minute
	MaxFailures    = 20
	MaxDelay       = 5 * time.Minute
	GlobalBurst    = 100
	GlobalInterval = 6 * time.Second
	maxTracked     = 10000

	MaxDeviceFailures = 10
	DeviceWindow      = time.Hour
)

// NewThrottle returns an empty Throttle reading time from now. If now is
// nil, it uses time.Now.
func NewThrottle(now func() time.Time) *Throttle {
	if now == nil {
		now = time.Now
	}
	return &Throttle{now: now, delay: Delay, ips: make(map[string][]time.Time), devices: make(map[string][]time.Time)}
}

// Delay is how long an IP with n failures in the window waits after its
// last attempt before the next: 0 for n < 3, then 1 s doubling up to
// MaxDelay.
func Delay(n int) time.Duration {
	if n < 3 {
		return 0
	}
	if n-3 >= 9 { // 2^9 s > MaxDelay
		return MaxDelay
	}
	return min(time.Second<<(n-3), MaxDelay)
}

// Allow asks whether ip may try a password now. When it may, Allow records
// the attempt (as a failure until Success) and returns 0. Otherwise it
// returns how long to wait (always > 0): answer 429 with Retry-After and do
// not check the password. A refused attempt is not recorded.
func (t *Throttle) Allow(ip string) time.Duration {
	now := t.now()
	key := ipKey(ip)
	t.mu.Lock()
	defer t.mu.Unlock()

	fails := prune(t.ips[key], now)
	n := len(fails)
	if n >= MaxFailures {
		t.ips[key] = fails
		return fails[n-MaxFailures].Add(Window).Sub(now)
	}
	if n > 0 {
		if next := fails[n-1].Add(t.delay(n)); now.Before(next) {
			t.ips[key] = fails
			return next.Sub(now)
		}
	}

	t.drain(now)
	if t.level+1 > GlobalBurst {
		return time.Duration((t.level + 1 - GlobalBurst) * float64(GlobalInterval))
	}
	t.level++

	if _, tracked := t.ips[key]; !tracked && len(t.ips) >= maxTracked {
		t.sweep(now)
		if len(t.ips) >= maxTracked {
			return 0 // limited by the global bucket only
		}
	}
	t.ips[key] = append(fails, now)
	return 0
}

// Success forgets ip's failures after a correct password, and takes its
// attempt back out of the global bucket.
func (t *Throttle) Success(ip string) {
	key := ipKey(ip)
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.ips, key)
	t.drain(t.now())
	t.level = max(0, t.level-1)
}

// AllowDevice asks whether the browser with the valid device cookie whose
// digest is device may try a password now, in place of Allow: neither the
// per-IP limits nor the global bucket apply. When it may, AllowDevice records
// the attempt (as a failure until SuccessDevice) and returns 0; otherwise
// how long to wait. At most maxDevices devices are valid at once, so the
// table stays small.
func (t *Throttle) AllowDevice(device string) time.Duration {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	fails := pruneWindow(t.devices[device], now, DeviceWindow)
	if n := len(fails); n >= MaxDeviceFailures {
		t.devices[device] = fails
		return fails[n-MaxDeviceFailures].Add(DeviceWindow).Sub(now)
	}
	if _, tracked := t.devices[device]; !tracked && len(t.devices) >= 2*maxDevices {
		t.sweep(now) // devices replaced or forgotten since
	}
	t.devices[device] = append(fails, now)
	return 0
}

// SuccessDevice forgets device's failures after a right password (the
// handler then replaces the device cookie).
func (t *Throttle) SuccessDevice(device string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.devices, device)
}

func (t *Throttle) drain(now time.Time) {
	if elapsed := now.Sub(t.levelAt); elapsed > 0 {
		t.level = max(0, t.level-float64(elapsed)/float64(GlobalInterval))
	}
	t.levelAt = now
}

// sweep forgets the IPs and devices with no failure left in their window.
func (t *Throttle) sweep(now time.Time) {
	for k, fails := range t.ips {
		if len(prune(fails, now)) == 0 {
			delete(t.ips, k)
		}
	}
	for k, fails := range t.devices {
		if len(pruneWindow(fails, now, DeviceWindow)) == 0 {
			delete(t.devices, k)
		}
	}
}

// prune drops the attempts that have left the window.
func prune(fails []time.Time, now time.Time) []time.Time {
	return pruneWindow(fails, now, Window)
}

// pruneWindow drops the attempts older than window.
func pruneWindow(fails []time.Time, now time.Time, window time.Duration) []time.Time {
	i := 0
	for i < len(fails) && now.Sub(fails[i]) >= window {
		i++
	}
	return fails[i:]
}

// ipKey is the throttling key of an address: the address itself, an IPv4
// address mapped into IPv6 as IPv4, an IPv6 address as its /64 (one host
// commonly holds a whole /64). Anything that is not an address is its own key.
func ipKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// throttleState is a Throttle's state as kept in the database file, so that a restart does not
// forget the failures of the window.
type throttleState struct {
	IPs     map[string][]time.Time `json:"ips"`
	Devices map[string][]time.Time `json:"devices,omitempty"`
	Level   float64                `json:"level"`
	LevelAt time.Time              `json:"level_at"`
}

// MarshalJSON returns the state still relevant now: the failures inside the window and the
// global bucket.
func (t *Throttle) MarshalJSON() ([]byte, error) {
	now := t.now()
	t.mu.Lock()
	st := throttleState{IPs: make(map[string][]time.Time, len(t.ips)), Level: t.level, LevelAt: t.levelAt}
	for k, fails := range t.ips {
		if live := prune(fails, now); len(live) > 0 {
			st.IPs[k] = slices.Clone(live)
		}
	}
	for k, fails := range t.devices {
		if live := pruneWindow(fails, now, DeviceWindow); len(live) > 0 {
			if st.Devices == nil {
				st.Devices = make(map[string][]time.Time)
			}
			st.Devices[k] = slices.Clone(live)
		}
	}
	t.mu.Unlock()
	return json.Marshal(st)
}

// UnmarshalJSON restores a state saved by MarshalJSON into a Throttle made by NewThrottle,
// keeping at most maxTracked IPs and MaxFailures attempts each, and maxDevices devices and
// MaxDeviceFailures attempts each.
func (t *Throttle) UnmarshalJSON(b []byte) error {
	var st throttleState
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, fails := range st.IPs {
		if len(t.ips) >= maxTracked {
			break
		}
		slices.SortFunc(fails, time.Time.Compare)
		if len(fails) > MaxFailures {
			fails = fails[len(fails)-MaxFailures:]
		}
		t.ips[k] = fails
	}
	for k, fails := range st.Devices {
		if len(t.devices) >= maxDevices {
			break
		}
		slices.SortFunc(fails, time.Time.Compare)
		if len(fails) > MaxDeviceFailures {
			fails = fails[len(fails)-MaxDeviceFailures:]
		}
		t.devices[k] = fails
	}
	t.level = min(max(st.Level, 0), GlobalBurst)
	t.levelAt = st.LevelAt
	return nil
}
