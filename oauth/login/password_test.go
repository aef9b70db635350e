package login

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestHashPassword(t *testing.T) {
	phc, err := HashPassword("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if want := "$argon2id$v=19$m=19456,t=2,p=1$"; !strings.HasPrefix(phc, want) {
		t.Errorf("HashPassword = %q, want prefix %q", phc, want)
	}
	other, _ := HashPassword("correct horse battery staple")
	if other == phc {
		t.Error("two hashes of one password are equal: salt not random")
	}
	if _, err := HashPassword(""); err == nil {
		t.Error("HashPassword(\"\") succeeded, want an error")
	}

	v, warn, err := NewVerifier("me", phc)
	if err != nil {
		t.Fatal(err)
	}
	if warn != "" {
		t.Errorf("warn = %q, want none for a PHC string", warn)
	}
	for _, tt := range []struct {
		name, user, pw string
		want           bool
	}{
		{"right", "me", "correct horse battery staple", true},
		{"wrong password", "me", "correct horse battery stapler", false},
		{"wrong user", "you", "correct horse battery staple", false},
		{"empty", "", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Check(context.Background(), tt.user, tt.pw)
			if err != nil || got != tt.want {
				t.Errorf("Check = %v, %v; want %v, nil", got, err, tt.want)
			}
		})
	}
}

func TestNewVerifier_PlainText(t *testing.T) {
	v, warn, err := NewVerifier("me", "hunter2")
	if err != nil {
		t.Fatal(err)
	}
	if warn != PlainTextWarning {
		t.Errorf("warn = %q, want %q", warn, PlainTextWarning)
	}
	if got, _ := v.Check(context.Background(), "me", "hunter2"); !got {
		t.Error("Check(right password) = false")
	}
	if got, _ := v.Check(context.Background(), "me", "hunter3"); got {
		t.Error("Check(wrong password) = true")
	}
}

func TestNewVerifier_Bcrypt(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("hunter2"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	v, warn, err := NewVerifier("me", string(hash))
	if err != nil || warn != "" {
		t.Fatalf("NewVerifier = %q, %v; want no warning, nil", warn, err)
	}
	if got, _ := v.Check(context.Background(), "me", "hunter2"); !got {
		t.Error("Check(right password) = false")
	}
	if got, _ := v.Check(context.Background(), "me", "hunter3"); got {
		t.Error("Check(wrong password) = true")
	}
}

func TestNewVerifier_Errors(t *testing.T) {
	good, _ := HashPassword("pw")
	for _, tt := range []struct{ name, user, secret string }{
		{"empty user", "", good},
		{"empty secret", "me", ""},
		{"argon2i", "me", strings.Replace(good, "argon2id", "argon2i", 1)},
		{"truncated", "me", good[:len(good)-10] + "$"},
		{"missing hash", "me", good[:strings.LastIndex(good, "$")]},
		{"version 16", "me", strings.Replace(good, "v=19", "v=16", 1)},
		{"memory too high", "me", strings.Replace(good, "m=19456", "m=4194304", 1)},
		{"zero time", "me", strings.Replace(good, "t=2", "t=0", 1)},
		{"parameters reordered", "me", strings.Replace(good, "m=19456,t=2", "t=2,m=19456", 1)},
		{"bad base64", "me", good[:len(good)-3] + "!!!"},
		{"bad bcrypt", "me", "$2b$10$short"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := NewVerifier(tt.user, tt.secret)
			if err == nil {
				t.Fatal("NewVerifier succeeded, want an error")
			}
			if tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
				t.Errorf("error %q contains the secret", err)
			}
		})
	}
}

func TestVerifier_Check_AlwaysRunsKDF(t *testing.T) {
	v, _, err := NewVerifier("owner", "right password")
	if err != nil {
		t.Fatal(err)
	}
	real := v.kdf
	var calls atomic.Int32
	v.kdf = func(pw []byte) bool { calls.Add(1); return real(pw) }

	type result struct {
		ok  bool
		err error
	}
	check := func(user, pw string) (result, int32) {
		calls.Store(0)
		ok, err := v.Check(context.Background(), user, pw)
		return result{ok, err}, calls.Load()
	}
	wrongUser, wrongUserCalls := check("intruder", "right password")
	wrongPW, wrongPWCalls := check("owner", "wrong password")
	both, bothCalls := check("intruder", "wrong password")
	longUser, longUserCalls := check(strings.Repeat("x", 10000), "wrong password")

	want := result{false, nil}
	for _, tt := range []struct {
		name  string
		got   result
		calls int32
	}{
		{"wrong user", wrongUser, wrongUserCalls},
		{"wrong password", wrongPW, wrongPWCalls},
		{"both wrong", both, bothCalls},
		{"long user", longUser, longUserCalls},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != want {
				t.Errorf("Check = %+v, want %+v", tt.got, want)
			}
			if tt.calls != 1 {
				t.Errorf("KDF ran %d times, want 1", tt.calls)
			}
		})
	}
}

func TestVerifier_Check_Concurrency(t *testing.T) {
	v, _, err := NewVerifier("me", "pw")
	if err != nil {
		t.Fatal(err)
	}
	var inFlight, maxInFlight atomic.Int32
	entered := make(chan struct{}, 50)
	release := make(chan struct{})
	v.kdf = func(pw []byte) bool {
		n := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		entered <- struct{}{}
		<-release
		inFlight.Add(-1)
		return string(pw) == "pw"
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var busy, checked atomic.Int32
	for range 50 {
		wg.Go(func() {
			_, err := v.Check(ctx, "me", "pw")
			switch {
			case errors.Is(err, ErrBusy):
				busy.Add(1)
			case err == nil:
				checked.Add(1)
			default:
				t.Errorf("Check error = %v", err)
			}
		})
	}
	for range DefaultConcurrency {
		<-entered // the slots are full; everyone else waits
	}
	cancel() // the other requests' contexts end
	for busy.Load() < 50-DefaultConcurrency {
		select {
		case <-entered:
			t.Fatal("a check ran beyond the limit")
		default:
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()

	if got := maxInFlight.Load(); got > DefaultConcurrency {
		t.Errorf("max in flight = %d, want ≤ %d", got, DefaultConcurrency)
	}
	if got, want := checked.Load(), int32(DefaultConcurrency); got != want {
		t.Errorf("checked = %d, want %d", got, want)
	}
	if got, want := busy.Load(), int32(50-DefaultConcurrency); got != want {
		t.Errorf("ErrBusy = %d, want %d", got, want)
	}
}

func TestVerifier_Check_ShortContext(t *testing.T) {
	// The real KDF, 50 callers with a context that ends almost at once:
	// nobody errs with anything but ErrBusy, and some are turned away.
	v, _, err := NewVerifier("me", "pw")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	var busy atomic.Int32
	for i := range 50 {
		if i == DefaultConcurrency {
			cancel()
		}
		wg.Go(func() {
			if _, err := v.Check(ctx, "me", "pw"); errors.Is(err, ErrBusy) {
				busy.Add(1)
			} else if err != nil {
				t.Errorf("Check error = %v", err)
			}
		})
	}
	wg.Wait()
	if busy.Load() < 50-DefaultConcurrency {
		t.Errorf("ErrBusy = %d, want ≥ %d", busy.Load(), 50-DefaultConcurrency)
	}
}

func TestGeneratePassword(t *testing.T) {
	a, b := GeneratePassword(), GeneratePassword()
	if len(a) < 20 {
		t.Errorf("len(GeneratePassword()) = %d, want ≥ 20", len(a))
	}
	if a == b {
		t.Error("two generated passwords are equal")
	}
}
