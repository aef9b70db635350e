package approval_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/approval"
)

// MustNew returns a queue that is closed at cleanup. Inside a synctest bubble its clock and
// timers are the bubble's.
func MustNew(tb testing.TB, cfg approval.Config) *approval.Queue {
	tb.Helper()
	q := approval.New(cfg)
	tb.Cleanup(q.Close)
	return q
}

var forget = approval.Request{Tool: "forget", Summary: `Forget memory 12 "My son Colby…" permanently?`, Client: "pat:test"}

// waitOutcome runs t.Wait in a goroutine and returns its result on a channel.
func waitOutcome(ctx context.Context, t *approval.Ticket) <-chan approval.Outcome {
	ch := make(chan approval.Outcome, 1)
	go func() {
		out, err := t.Wait(ctx, 0, nil)
		if err != nil {
			out = "error: " + approval.Outcome(err.Error())
		}
		ch <- out
	}()
	return ch
}

func TestQueue_Decide(t *testing.T) {
	for _, tc := range []struct {
		name    string
		approve bool
		want    approval.Outcome
	}{{"approve", true, approval.Approved}, {"deny", false, approval.Rejected}} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var told []approval.Record
				q := MustNew(t, approval.Config{OnDecision: func(r approval.Record) { told = append(told, r) }})
				tk := q.Ask("k", forget, 2*time.Minute)
				done := waitOutcome(t.Context(), tk)
				pending := q.Pending()
				if len(pending) != 1 {
					t.Fatalf("Pending = %+v, want the one request", pending)
				}
				r := pending[0]
				if r.ID == "" || r.Tool != "forget" || r.Summary != forget.Summary || r.Client != "pat:test" ||
					!r.Created.Equal(time.Now()) || r.Deadline.Sub(r.Created) != 2*time.Minute {
					t.Errorf("pending request = %+v", r)
				}
				if err := q.Decide(r.ID, tc.approve, "owner (console)"); err != nil {
					t.Fatalf("Decide: %v", err)
				}
				if got := <-done; got != tc.want {
					t.Errorf("Wait = %q, want %q", got, tc.want)
				}
				if got := q.Pending(); len(got) != 0 {
					t.Errorf("Pending after the decision = %+v", got)
				}
				recent := q.Recent()
				if len(recent) != 1 || recent[0].Outcome != tc.want || recent[0].By != "owner (console)" || recent[0].ID != r.ID {
					t.Errorf("Recent = %+v", recent)
				}
				if len(told) != 1 || told[0].Outcome != tc.want {
					t.Errorf("OnDecision told %+v", told)
				}
				if err := q.Decide(r.ID, !tc.approve, "owner again"); !errors.Is(err, approval.ErrDecided) {
					t.Errorf("a second Decide: %v, want ErrDecided", err)
				}
				if err := q.Decide("no-such-id", true, "owner"); !errors.Is(err, approval.ErrNotFound) {
					t.Errorf("Decide of an unknown id: %v, want ErrNotFound", err)
				}
			})
		})
	}
}

// TestQueue_Timeout: unanswered, a request times out exactly at its deadline, and nothing
// decides it afterwards.
func TestQueue_Timeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := MustNew(t, approval.Config{})
		tk := q.Ask("k", forget, 2*time.Minute)
		start := time.Now()
		out, err := tk.Wait(t.Context(), 0, nil)
		if err != nil || out != approval.TimedOut {
			t.Fatalf("Wait = %q, %v; want timed_out", out, err)
		}
		if waited := time.Since(start); waited != 2*time.Minute {
			t.Errorf("timed out after %s, want 2m", waited)
		}
		if err := q.Decide(tk.Request().ID, true, "owner"); !errors.Is(err, approval.ErrDecided) {
			t.Errorf("Decide after the timeout: %v, want ErrDecided", err)
		}
		if got, by := tk.Decide(true, "user"); got != approval.TimedOut || by != "" {
			t.Errorf("Ticket.Decide after the timeout = %q by %q, want timed_out", got, by)
		}
		if r := q.Recent(); len(r) != 1 || r[0].Outcome != approval.TimedOut {
			t.Errorf("Recent = %+v", r)
		}
	})
}

// TestTicket_Decide: the first decision wins, whoever makes it.
func TestTicket_Decide(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := MustNew(t, approval.Config{})
		tk := q.Ask("k", forget, time.Minute)
		if err := q.Decide(tk.Request().ID, true, "owner (console)"); err != nil {
			t.Fatal(err)
		}
		out, by := tk.Decide(false, "user in claude")
		if out != approval.Approved || by != "owner (console)" {
			t.Errorf("the client's later no: %q by %q, want approved by the owner", out, by)
		}
	})
}

// TestQueue_Ask (SECURITY.md AG-02): every Ask is a request of its own, even under a key that
// holds others; Lookup finds them all, decided or not, until each is consumed or, once timed
// out, forgotten after Retain; deciding one decides no other.
func TestQueue_Ask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := MustNew(t, approval.Config{Retain: time.Minute})
		a := q.Ask("k", forget, time.Minute)
		b := q.Ask("k", forget, time.Minute)
		if b == a || b.Request().ID == a.Request().ID {
			t.Fatal("the second Ask under the key shares the first's request")
		}
		if c := q.Ask("other", forget, time.Minute); slices.Contains(q.Lookup("k"), c) {
			t.Error("another key's request is under k")
		}
		if got := q.Lookup("k"); !slices.Equal(got, []*approval.Ticket{a, b}) {
			t.Errorf("Lookup = %v, want both requests, oldest first", got)
		}
		a.Decide(true, "owner")
		if out, _ := b.Outcome(); out != "" {
			t.Errorf("approving one request decided the other: %q", out)
		}
		if len(q.Pending()) != 2 || !slices.Equal(q.Lookup("k"), []*approval.Ticket{a, b}) {
			t.Error("a decided request is not found under its key")
		}
		a.Consume()
		if !slices.Equal(q.Lookup("k"), []*approval.Ticket{b}) {
			t.Errorf("after Consume, Lookup = %v, want the other request only", q.Lookup("k"))
		}
		if _, ok := q.Get(a.Request().ID); ok {
			t.Error("a consumed request is still found by id")
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if out, _ := b.Outcome(); out != approval.TimedOut || !slices.Equal(q.Lookup("k"), []*approval.Ticket{b}) {
			t.Fatalf("after its deadline: %q, under its key %v", out, q.Lookup("k"))
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if l := q.Lookup("k"); len(l) != 0 {
			t.Errorf("after Retain, Lookup = %v, want none", l)
		}
	})
}

// TestQueue_Retain: an ended request stays under its key for Retain after its deadline (or
// its decision), then its key is free.
func TestQueue_Retain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := MustNew(t, approval.Config{Retain: 15 * time.Minute})
		tk := q.Ask("k", forget, 2*time.Minute)
		time.Sleep(time.Minute)
		tk.Decide(true, "owner")
		time.Sleep(time.Minute + 15*time.Minute - time.Second)
		synctest.Wait()
		if !slices.Equal(q.Lookup("k"), []*approval.Ticket{tk}) {
			t.Fatal("the approval was dropped before deadline + Retain")
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if len(q.Lookup("k")) != 0 {
			t.Error("the approval is kept past deadline + Retain")
		}
	})
}

// TestTicket_Wait: a request whose caller goes is withdrawn, unless a client holds a question
// about it (Park) or another call waits for it; keep-alives tick meanwhile.
func TestTicket_Wait(t *testing.T) {
	t.Run("withdrawn", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := MustNew(t, approval.Config{})
			tk := q.Ask("k", forget, 2*time.Minute)
			ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
			defer cancel()
			ticks := 0
			_, err := tk.Wait(ctx, 15*time.Second, func() { ticks++ })
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Wait = %v", err)
			}
			if ticks != 2 {
				t.Errorf("%d keep-alives in 40s every 15s, want 2", ticks)
			}
			if out, _ := tk.Outcome(); out != approval.Withdrawn || len(q.Pending()) != 0 || len(q.Lookup("k")) != 0 {
				t.Errorf("outcome %q, pending %v: want withdrawn and gone", out, q.Pending())
			}
			if err := q.Decide(tk.Request().ID, true, "owner"); !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("Decide of a withdrawn request: %v", err)
			}
		})
	})
	t.Run("parked", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := MustNew(t, approval.Config{})
			tk := q.Ask("k", forget, 2*time.Minute)
			tk.Park()
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			tk.Wait(ctx, 0, nil)
			if len(q.Pending()) != 1 {
				t.Error("a parked request was withdrawn when a waiter went")
			}
		})
	})
	t.Run("another waiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := MustNew(t, approval.Config{})
			tk := q.Ask("k", forget, 2*time.Minute)
			other := waitOutcome(t.Context(), tk)
			synctest.Wait()
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			tk.Wait(ctx, 0, nil)
			if len(q.Pending()) != 1 {
				t.Fatal("the request was withdrawn while another call waits for it")
			}
			q.Decide(tk.Request().ID, true, "owner")
			if got := <-other; got != approval.Approved {
				t.Errorf("the other waiter got %q", got)
			}
		})
	})
}

func TestQueue_Subscribe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := approval.New(approval.Config{})
		ch, stop := q.Subscribe()
		defer stop()
		signalled := func() bool {
			select {
			case _, ok := <-ch:
				return ok
			default:
				return false
			}
		}
		if signalled() {
			t.Error("a signal before any change")
		}
		tk := q.Ask("k", forget, time.Minute)
		if !signalled() {
			t.Error("no signal for a new request")
		}
		q.Decide(tk.Request().ID, false, "owner")
		if !signalled() {
			t.Error("no signal for a decision")
		}
		q.Ask("k2", forget, time.Minute)
		signalled()
		time.Sleep(time.Minute)
		synctest.Wait()
		if !signalled() {
			t.Error("no signal for a timeout")
		}
		q.Close()
		for range ch { // a last signal may wait; then the channel is closed
		}
		stop() // after Close: no panic
	})
}

// TestQueue_Close: waiting calls end, withdrawn; later requests are withdrawn at once.
func TestQueue_Close(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := approval.New(approval.Config{})
		done := waitOutcome(t.Context(), q.Ask("k", forget, time.Minute))
		synctest.Wait()
		q.Close()
		if got := <-done; got != approval.Withdrawn {
			t.Errorf("Wait after Close = %q, want withdrawn", got)
		}
		if out, _ := q.Ask("k", forget, time.Minute).Outcome(); out != approval.Withdrawn {
			t.Errorf("Ask after Close: %q, want withdrawn", out)
		}
	})
}

// TestQueue_CloseWaitsForReports: a waiter wakes when its request is decided, before
// OnDecision is told; Close returns only once OnDecision has returned, so that its caller can
// then close what OnDecision writes to (the app's audit log).
func TestQueue_CloseWaitsForReports(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		told, release := make(chan approval.Record, 1), make(chan struct{})
		q := approval.New(approval.Config{OnDecision: func(r approval.Record) {
			told <- r
			<-release
		}})
		tk := q.Ask("k", forget, time.Minute)
		done := waitOutcome(t.Context(), tk)
		go tk.Decide(false, "nobody")
		if got := <-done; got != approval.Rejected {
			t.Fatalf("Wait = %q, want rejected", got)
		}
		<-told // OnDecision runs, and is held
		closed := make(chan struct{})
		go func() {
			q.Close()
			close(closed)
		}()
		synctest.Wait()
		select {
		case <-closed:
			t.Fatal("Close returned while OnDecision was still running")
		default:
		}
		close(release)
		synctest.Wait()
		select {
		case <-closed:
		default:
			t.Fatal("Close did not return once OnDecision had")
		}
	})
}

func TestQueue_Recent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := MustNew(t, approval.Config{History: 3})
		var ids []string
		for _, k := range []string{"a", "b", "c", "d"} {
			tk := q.Ask(k, forget, time.Minute)
			ids = append(ids, tk.Request().ID)
			tk.Decide(true, "owner")
		}
		var got []string
		for _, r := range q.Recent() {
			got = append(got, r.ID)
		}
		if want := []string{ids[3], ids[2], ids[1]}; !slices.Equal(got, want) {
			t.Errorf("Recent = %v, want the newest 3 newest first %v", got, want)
		}
	})
}

func TestParsePolicy(t *testing.T) {
	for _, p := range approval.Policies {
		if got, err := approval.ParsePolicy(string(p)); got != p || err != nil {
			t.Errorf("ParsePolicy(%q) = %q, %v", p, got, err)
		}
	}
	for _, bad := range []string{"", "Off", "hard_delete", "all"} {
		if _, err := approval.ParsePolicy(bad); err == nil {
			t.Errorf("ParsePolicy(%q) succeeded", bad)
		}
	}
}

// Example shows the console's side: list what waits, and approve it.
func Example() {
	q := approval.New(approval.Config{})
	defer q.Close()
	t := q.Ask("digest of the call", approval.Request{Tool: "forget", Summary: "Forget memory 12 permanently?"}, time.Minute)
	for _, r := range q.Pending() {
		_ = q.Decide(r.ID, true, "owner (console)")
	}
	out, _ := t.Wait(context.Background(), 0, nil)
	t.Consume() // an approval serves one call
	fmt.Println(out)
	// Output: approved
}

// TestParseApprovers: the two values, and an error naming them.
func TestParseApprovers(t *testing.T) {
	for _, in := range []string{"client", "owner"} {
		if a, err := approval.ParseApprovers(in); err != nil || string(a) != in {
			t.Errorf("ParseApprovers(%q) = %q, %v", in, a, err)
		}
	}
	if _, err := approval.ParseApprovers("anyone"); err == nil || !strings.Contains(err.Error(), "client, owner") {
		t.Errorf("ParseApprovers(anyone): %v", err)
	}
}
