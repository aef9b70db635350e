package grant

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// TestStore_Refresh_Rotation: every refresh rotates; a rotated token presented
// after the grace window revokes the family, with an audit event (AS-11).
func TestStore_Refresh_Rotation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		c := MustRegister(t, s)
		rt0 := MustTokens(t, s, c.ID)

		time.Sleep(time.Minute)
		rt1, err := s.Refresh(rt0.RefreshToken, c.ID, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		if rt1.GrantID != rt0.GrantID || rt1.RefreshToken == rt0.RefreshToken ||
			!slices.Equal(rt1.Scope, rt0.Scope) || rt1.Resource != testResource || rt1.ClientID != c.ID || rt1.Subject != "owner" {
			t.Fatalf("rotated tokens = %+v", rt1)
		}
		checkInvariants(t, s)

		time.Sleep(time.Minute) // past the grace window
		if _, err := s.Refresh(rt0.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Fatalf("replay of RT0: %v, want ErrInvalidGrant", err)
		}
		if s.GrantActive(rt0.GrantID) {
			t.Error("family active after reuse")
		}
		if _, err := s.Refresh(rt1.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Errorf("RT1 after reuse: %v, want ErrInvalidGrant", err)
		}
		ev, err := s.Events(0)
		if err != nil {
			t.Fatal(err)
		}
		if len(ev) != 1 || ev[0].Kind != EventRefreshReuse || ev[0].GrantID != rt0.GrantID ||
			ev[0].ClientID != c.ID || !ev[0].Time.Equal(time.Now()) || ev[0].Reason == "" {
			t.Errorf("events = %+v", ev)
		}
		checkInvariants(t, s)
	})
}

// TestStore_Refresh_Binding: a refresh cannot change client, widen scope or
// change resource, and a refused one changes nothing (AS-14, AS-15).
func TestStore_Refresh_Binding(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c, other := MustRegister(t, s), MustRegister(t, s)
	tok := MustTokens(t, s, c.ID)
	read := MustTokens(t, s, c.ID)
	tests := []struct {
		name     string
		tok      *Tokens
		clientID string
		scope    []string
		resource string
		want     error
	}{
		{"another client", tok, other.ID, nil, "", ErrInvalidGrant},
		{"unknown client", tok, "cl_unknown", nil, "", ErrInvalidClient},
		{"another scope", tok, c.ID, []string{"admin"}, "", ErrInvalidScope},
		{"a scope too many", tok, c.ID, []string{scopeRead, scopeWrite, "admin"}, "", ErrInvalidScope},
		{"empty scope entry", tok, c.ID, []string{""}, "", ErrInvalidScope},
		{"another resource", tok, c.ID, nil, "https://other.example/mcp", ErrInvalidTarget},
		{"resource with a trailing slash", tok, c.ID, nil, testResource + "/", ErrInvalidTarget},
		{"unknown token", &Tokens{RefreshToken: "osr_unknown"}, c.ID, nil, "", ErrInvalidGrant},
		{"empty token", &Tokens{}, c.ID, nil, "", ErrInvalidGrant},
		{"code as refresh token", &Tokens{RefreshToken: "osc_x"}, c.ID, nil, "", ErrInvalidGrant},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.Refresh(tt.tok.RefreshToken, tt.clientID, tt.scope, tt.resource); err != tt.want {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
	checkInvariants(t, s)

	// The token was never rotated: it still works, narrowed.
	got, err := s.Refresh(tok.RefreshToken, c.ID, []string{scopeRead, scopeRead}, testResource)
	if err != nil {
		t.Fatalf("refresh after refused ones: %v", err)
	}
	if !slices.Equal(got.Scope, []string{scopeRead}) {
		t.Errorf("narrowed scope = %v", got.Scope)
	}
	// Narrowing applies to one access token: the grant keeps its scope.
	got, err = s.Refresh(got.RefreshToken, c.ID, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Scope, []string{scopeRead, scopeWrite}) {
		t.Errorf("scope after a narrowed refresh = %v", got.Scope)
	}
	if !s.GrantActive(read.GrantID) || !s.GrantActive(tok.GrantID) {
		t.Error("a refused refresh revoked a grant")
	}
	if ev, _ := s.Events(0); len(ev) != 0 {
		t.Errorf("events = %+v", ev)
	}
}

// TestStore_Refresh_Expiry: idle and absolute lifetimes (AS-16).
func TestStore_Refresh_Expiry(t *testing.T) {
	const idle, max = 10 * 24 * time.Hour, 30 * 24 * time.Hour
	t.Run("idle", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{RefreshIdle: idle, RefreshMax: max})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			time.Sleep(idle)
			tok, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
			if err != nil {
				t.Fatalf("at exactly the idle limit: %v", err)
			}
			time.Sleep(idle + time.Second)
			if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
				t.Fatalf("idle beyond the limit: %v, want ErrInvalidGrant", err)
			}
			checkInvariants(t, s)
		})
	})
	t.Run("family age", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{RefreshIdle: idle, RefreshMax: max})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			var err error
			for range 3 { // refreshed every 9 days: never idle
				time.Sleep(9 * 24 * time.Hour)
				if tok, err = s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(3*24*time.Hour + time.Second) // 30 days and 1s after the exchange
			if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
				t.Fatalf("family past RefreshMax: %v, want ErrInvalidGrant", err)
			}
			checkInvariants(t, s)
		})
	})
}

// TestStore_Refresh_Grace: the grace window for parallel refreshes (AS-13).
func TestStore_Refresh_Grace(t *testing.T) {
	type step struct {
		wait  time.Duration
		rt    int  // index of the token to present: 0 is the exchange's
		ok    bool // success expected; else ErrInvalidGrant
		alive bool // family still live afterwards
	}
	tests := []struct {
		name  string
		grace time.Duration
		steps []step
	}{
		{"replay inside the window succeeds", 0, []step{
			{0, 0, true, true},           // RT0 → RT1
			{time.Second, 0, true, true}, // RT0 again → RT2, RT1 superseded
			{0, 2, true, true},           // RT2 is the family's token
		}},
		{"superseded child is reuse", 0, []step{
			{0, 0, true, true},   // RT0 → RT1
			{0, 0, true, true},   // RT0 → RT2, RT1 superseded
			{0, 1, false, false}, // RT1 → revoke
			{0, 2, false, false},
		}},
		{"replay at the window's edge", 0, []step{
			{0, 0, true, true},
			{DefaultGraceWindow, 0, true, true},
		}},
		{"replay after the window revokes", 0, []step{
			{0, 0, true, true},
			{DefaultGraceWindow + time.Millisecond, 0, false, false},
			{0, 1, false, false},
		}},
		{"replay once the child was used revokes", 0, []step{
			{0, 0, true, true}, // RT0 → RT1
			{0, 1, true, true}, // RT1 → RT2
			{0, 0, false, false},
			{0, 2, false, false},
		}},
		{"replays are capped", 0, []step{
			{0, 0, true, true}, // RT0 → RT1
			{0, 0, true, true}, // replays 1..5 → RT2..RT6
			{0, 0, true, true},
			{0, 0, true, true},
			{0, 0, true, true},
			{0, 0, true, true},
			{0, 0, false, true}, // the 6th replay is refused, the family lives
			{0, 6, true, true},  // RT6 is the family's token
		}},
		{"a 5s window", MaxGraceWindow, []step{
			{0, 0, true, true},
			{MaxGraceWindow, 0, true, true},
			{MaxGraceWindow + time.Millisecond, 0, false, false},
		}},
		{"no window", -1, []step{
			{0, 0, true, true},
			{0, 0, false, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := MustOpenStore(t, Config{GraceWindow: tt.grace})
				c := MustRegister(t, s)
				first := MustTokens(t, s, c.ID)
				rts := []string{first.RefreshToken}
				for i, st := range tt.steps {
					time.Sleep(st.wait)
					got, err := s.Refresh(rts[st.rt], c.ID, nil, "")
					switch {
					case st.ok && err != nil:
						t.Fatalf("step %d (RT%d): %v", i, st.rt, err)
					case !st.ok && err != ErrInvalidGrant:
						t.Fatalf("step %d (RT%d): %v, want ErrInvalidGrant", i, st.rt, err)
					case st.ok:
						rts = append(rts, got.RefreshToken)
					}
					if alive := s.GrantActive(first.GrantID); alive != st.alive {
						t.Fatalf("step %d (RT%d): family alive = %v, want %v", i, st.rt, alive, st.alive)
					}
					checkInvariants(t, s)
				}
			})
		})
	}
}

// TestStore_Refresh_GraceSynctest runs the grace window on the real clock,
// inside a synctest bubble where time.Sleep takes no time.
func TestStore_Refresh_GraceSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db, err := kv.Open(filepath.Join(t.TempDir(), "db"), kv.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		s, err := Open(db, Config{}) // time.Now: the bubble's clock
		if err != nil {
			t.Fatal(err)
		}
		c := MustRegister(t, s)
		rt0 := MustTokens(t, s, c.ID)
		if _, err := s.Refresh(rt0.RefreshToken, c.ID, nil, ""); err != nil {
			t.Fatal(err)
		}
		time.Sleep(DefaultGraceWindow / 2)
		rt2, err := s.Refresh(rt0.RefreshToken, c.ID, nil, "")
		if err != nil {
			t.Fatalf("replay inside the window: %v", err)
		}
		time.Sleep(DefaultGraceWindow)
		if _, err := s.Refresh(rt0.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Fatalf("replay after the window: %v, want ErrInvalidGrant", err)
		}
		if _, err := s.Refresh(rt2.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
			t.Fatalf("newest child after reuse: %v, want ErrInvalidGrant", err)
		}
		if s.GrantActive(rt0.GrantID) {
			t.Fatal("family alive after reuse")
		}
	})
}

// TestStore_Refresh_Concurrent sends N parallel refreshes with one token:
// the only error is ErrInvalidGrant, at least one succeeds, and a family never
// has two active tokens (AS-12). With the grace window, the winners share the
// family and the newest of their tokens is its active one.
func TestStore_Refresh_Concurrent(t *testing.T) {
	for _, grace := range []time.Duration{0, -1} {
		for _, n := range []int{2, 5, 10} {
			name := fmt.Sprintf("grace window/%d", n)
			if grace < 0 {
				name = fmt.Sprintf("no grace window/%d", n)
			}
			t.Run(name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := MustOpenStore(t, Config{GraceWindow: grace})
					c := MustRegister(t, s)
					tok := MustTokens(t, s, c.ID)
					other := MustTokens(t, s, c.ID) // another family, untouched

					var (
						wg      sync.WaitGroup
						mu      sync.Mutex
						winners []*Tokens
					)
					start := make(chan struct{})
					for range n {
						wg.Go(func() {
							<-start
							got, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
							if err != nil && !errors.Is(err, ErrInvalidGrant) {
								t.Errorf("refresh: %v", err)
							}
							if err == nil {
								mu.Lock()
								winners = append(winners, got)
								mu.Unlock()
							}
						})
					}
					close(start)
					wg.Wait()
					checkInvariants(t, s)

					wantWinners := 1
					if grace == 0 {
						wantWinners = min(n, 1+MaxReplays)
					}
					if len(winners) != wantWinners {
						t.Fatalf("%d refreshes succeeded, want %d", len(winners), wantWinners)
					}
					for _, w := range winners {
						if w.GrantID != tok.GrantID {
							t.Fatalf("winner in family %s, want %s", w.GrantID, tok.GrantID)
						}
					}
					// Without a window the losers are reuse: the family is revoked.
					if alive := s.GrantActive(tok.GrantID); alive != (grace == 0) {
						t.Fatalf("family alive = %v", alive)
					}
					if !s.GrantActive(other.GrantID) {
						t.Fatal("another family was revoked")
					}
					if grace != 0 {
						return
					}
					// Exactly one winner's token is the family's active one: it works.
					ok := 0
					for _, w := range winners {
						if s.isActiveRT(t, w.RefreshToken) {
							ok++
						}
					}
					if ok != 1 {
						t.Fatalf("%d of the winners' tokens are active, want 1", ok)
					}
				})
			})
		}
	}
}

// isActiveRT reports whether rt is its live family's active token.
func (s *Store) isActiveRT(tb testing.TB, rt string) bool {
	tb.Helper()
	var active bool
	err := s.db.View(func(tx *kv.Tx) error {
		h := hashOf(rt)
		rec, err := get[refreshRecord](tx.Bucket(BucketRefresh), h)
		if err != nil || rec == nil {
			return err
		}
		g, err := getGrant(tx.Bucket(BucketGrants), rec.GrantID)
		if err != nil || g == nil {
			return err
		}
		active = g.RevokedAt == nil && rec.State == rtActive && string(g.ActiveRT) == string(h)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return active
}
