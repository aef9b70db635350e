package grant

import (
	"bytes"
	"errors"
	"fmt"
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

		time.Sleep(DefaultGraceWindow + time.Second) // past the grace window
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

// TestStore_Refresh_Grace: the grace window for racing refreshes (AS-12,
// AS-13). Inside the window a replay of the rotated token gets the successor
// already issued and changes nothing; once the successor is used, or after
// the window, a replay revokes the family (AS-11, RFC 9700 §4.14.2).
func TestStore_Refresh_Grace(t *testing.T) {
	type step struct {
		wait  time.Duration
		rt    int  // index of the token to present: 0 is the exchange's
		got   int  // index of the token returned (len(rts) for a new one); -1 for ErrInvalidGrant
		alive bool // family still live afterwards
	}
	replays := []step{{0, 0, 1, true}}
	for range MaxReplays {
		replays = append(replays, step{0, 0, 1, true})
	}
	replays = append(replays,
		step{0, 0, -1, true}, // one replay too many is refused, the family lives
		step{0, 1, 2, true},  // and RT1 works
	)
	tests := []struct {
		name  string
		grace time.Duration
		steps []step
	}{
		{"replays get the same successor", 0, []step{
			{0, 0, 1, true},           // RT0 → RT1
			{time.Second, 0, 1, true}, // RT0 again → RT1 again
			{0, 1, 2, true},           // RT1 is the family's token
		}},
		{"replays at 0 s, 10 s and 50 s", 0, []step{
			{0, 0, 1, true},
			{0, 0, 1, true},
			{10 * time.Second, 0, 1, true},
			{40 * time.Second, 0, 1, true},
			{0, 1, 2, true},
		}},
		{"replay at the window's edge", 0, []step{
			{0, 0, 1, true},
			{DefaultGraceWindow, 0, 1, true},
		}},
		{"replay after the window revokes", 0, []step{
			{0, 0, 1, true},
			{DefaultGraceWindow + time.Millisecond, 0, -1, false},
			{0, 1, -1, false},
		}},
		{"the successor stays usable after the window", 0, []step{
			{0, 0, 1, true},
			{time.Hour, 1, 2, true},
		}},
		{"replay once the successor was used revokes", 0, []step{
			{0, 0, 1, true},   // RT0 → RT1
			{0, 0, 1, true},   // a racer gets RT1 too
			{0, 1, 2, true},   // RT1 → RT2: RT0's window closes
			{0, 0, -1, false}, // RT0 again is reuse
			{0, 2, -1, false},
		}},
		{"chains: each rotation has its window", 0, []step{
			{0, 0, 1, true},           // A: RT0 → RT1
			{time.Second, 0, 1, true}, // B replays RT0: RT1
			{time.Second, 1, 2, true}, // A: RT1 → RT2
			{time.Second, 1, 2, true}, // B: RT1 within RT1's window: RT2
			{time.Second, 2, 3, true}, // A: RT2 → RT3
			{0, 1, -1, false},         // RT1 again: its successor RT2 was used
		}},
		{"replays are capped", 0, replays},
		{"a 30 min window", MaxGraceWindow, []step{
			{0, 0, 1, true},
			{MaxGraceWindow, 0, 1, true},
			{time.Millisecond, 0, -1, false},
		}},
		{"no window", -1, []step{
			{0, 0, 1, true},
			{0, 0, -1, false},
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
					case st.got >= 0 && err != nil:
						t.Fatalf("step %d (RT%d): %v", i, st.rt, err)
					case st.got < 0 && err != ErrInvalidGrant:
						t.Fatalf("step %d (RT%d): %v, want ErrInvalidGrant", i, st.rt, err)
					case st.got >= 0:
						idx := slices.Index(rts, got.RefreshToken)
						if idx < 0 {
							idx = len(rts)
							rts = append(rts, got.RefreshToken)
						}
						if idx != st.got {
							t.Fatalf("step %d (RT%d): got RT%d, want RT%d", i, st.rt, idx, st.got)
						}
						if got.GrantID != first.GrantID {
							t.Fatalf("step %d: grant %s, want %s", i, got.GrantID, first.GrantID)
						}
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

// TestStore_Refresh_Concurrent sends N refreshes with one token at once:
// the only error is ErrInvalidGrant, and a family never has two active
// tokens (AS-12). With the grace window, every one succeeds with the same
// refresh token, which is the family's active one; without it, one succeeds
// and the others' reuse revokes the family.
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
						wantWinners = n
					}
					if len(winners) != wantWinners {
						t.Fatalf("%d refreshes succeeded, want %d", len(winners), wantWinners)
					}
					for _, w := range winners {
						if w.GrantID != tok.GrantID || w.RefreshToken != winners[0].RefreshToken {
							t.Fatalf("winner %s in family %s, want %s in %s", w.RefreshToken[:8], w.GrantID, winners[0].RefreshToken[:8], tok.GrantID)
						}
					}
					// Without a window the losers are reuse: the family is revoked.
					if alive := s.GrantActive(tok.GrantID); alive != (grace == 0) {
						t.Fatalf("family alive = %v", alive)
					}
					if !s.GrantActive(other.GrantID) {
						t.Fatal("another family was revoked")
					}
					if grace == 0 && !s.isActiveRT(t, winners[0].RefreshToken) {
						t.Fatal("the token every racer holds is not the family's active one")
					}
				})
			})
		}
	}
}

// TestStore_CloseWindows: the sealed successor is dropped when its window
// closes — by time (CloseWindows, GC), by the successor's use, or by the
// family's revocation — and after that a replay cannot open it (AS-13,
// AS-17).
func TestStore_CloseWindows(t *testing.T) {
	pending := func(t *testing.T, s *Store, grantID string) bool {
		t.Helper()
		var g *grantRecord
		err := s.db.View(func(tx *kv.Tx) error {
			var err error
			g, err = getGrant(tx.Bucket(BucketGrants), grantID)
			return err
		})
		if err != nil || g == nil {
			t.Fatalf("grant %s: %v", grantID, err)
		}
		return g.Pending != nil
	}
	t.Run("by time", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != nil {
				t.Fatal(err)
			}
			if !pending(t, s, tok.GrantID) {
				t.Fatal("no sealed successor after a rotation")
			}
			before := s.updates.Load()
			if n, err := s.CloseWindows(time.Now().Add(DefaultGraceWindow)); n != 0 || err != nil {
				t.Fatalf("CloseWindows inside the window = %d, %v", n, err)
			}
			if s.updates.Load() != before {
				t.Error("CloseWindows wrote with nothing to drop")
			}
			time.Sleep(DefaultGraceWindow + time.Second)
			if n, err := s.CloseWindows(time.Now()); n != 1 || err != nil {
				t.Fatalf("CloseWindows after the window = %d, %v; want 1", n, err)
			}
			if pending(t, s, tok.GrantID) {
				t.Fatal("sealed successor kept after its window")
			}
			if n, err := s.CloseWindows(time.Now()); n != 0 || err != nil {
				t.Fatalf("CloseWindows again = %d, %v", n, err)
			}
			checkInvariants(t, s)
		})
	})
	t.Run("by GC", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != nil {
				t.Fatal(err)
			}
			time.Sleep(DefaultGraceWindow + time.Second)
			st, err := s.GC(time.Now())
			if err != nil || st.Windows != 1 {
				t.Fatalf("GC = %+v, %v; want Windows 1", st, err)
			}
			if pending(t, s, tok.GrantID) {
				t.Fatal("sealed successor kept after GC")
			}
		})
	})
	t.Run("by use of the successor", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{GraceWindow: MaxGraceWindow})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			t1, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Refresh(t1.RefreshToken, c.ID, nil, ""); err != nil {
				t.Fatal(err)
			}
			// The grant's one sealed successor is now RT2's, for replays of RT1.
			var g *grantRecord
			_ = s.db.View(func(tx *kv.Tx) error {
				g, _ = getGrant(tx.Bucket(BucketGrants), tok.GrantID)
				return nil
			})
			if g.Pending == nil || !bytes.Equal(g.Pending.Parent, hashOf(t1.RefreshToken)) {
				t.Fatalf("pending = %+v, want the successor of RT1", g.Pending)
			}
			if _, err := openSuccessor(tok.RefreshToken, g.Pending.Sealed, g.ActiveRT); err == nil {
				t.Fatal("RT0 opens the sealed successor of RT1")
			}
		})
	})
	t.Run("by revocation", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := MustOpenStore(t, Config{})
			c := MustRegister(t, s)
			tok := MustTokens(t, s, c.ID)
			t1, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.RevokeToken(t1.RefreshToken); err != nil {
				t.Fatal(err)
			}
			if pending(t, s, tok.GrantID) {
				t.Fatal("sealed successor kept in a revoked family")
			}
		})
	})
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
