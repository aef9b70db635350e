package approval

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Errors of Decide.
var (
	// ErrNotFound: no request has this ID — never had, or it was consumed, withdrawn or
	// forgotten after Config.Retain.
	ErrNotFound = errors.New("approval: no such request")
	// ErrDecided: the request was already approved, rejected or timed out; the first decision
	// wins.
	ErrDecided = errors.New("approval: the request is already decided")
)

// Outcome is how a request ended.
type Outcome string

// Outcomes. A pending request's Outcome is "".
const (
	Approved  Outcome = "approved"
	Rejected  Outcome = "rejected"
	TimedOut  Outcome = "timed_out" // nobody answered before its deadline
	Withdrawn Outcome = "withdrawn" // its caller went before anyone answered
)

// Request is a call waiting for approval.
type Request struct {
	// ID names it in Decide and Get: 16 URL-safe characters, random.
	ID string
	// Tool is the tool the call would run.
	Tool string
	// Summary says what the call would do, for a person: "Forget memory 12 "My son Colby…"
	// permanently?". It may quote memories: show it as text, never as HTML.
	Summary string
	// Client is who asks: the OAuth client's name, "pat:" and the token's name, or "stdio".
	Client string
	// Agent is the MCP client software as it names itself ("claude-code"), if it did; self-
	// reported, for reading only.
	Agent string
	// Created is when it was first asked; Deadline is when it times out.
	Created, Deadline time.Time
}

// Record is a request and how it ended.
type Record struct {
	Request
	Outcome Outcome
	// By is who decided, as the decider named itself ("owner (console)", "user in
	// claude-code"); empty for TimedOut and Withdrawn.
	By string
	// At is when it ended.
	At time.Time
}

// Defaults of Config.
const (
	DefaultHistory = 100
	DefaultRetain  = 15 * time.Minute
)

// Config configures a Queue. The zero value is usable.
type Config struct {
	// Now is the clock of Created, Deadline and At. Deadlines are kept by timers (the time
	// package's), so a test drives them with testing/synctest. If nil, time.Now.
	Now func() time.Time
	// History is how many ended requests Recent keeps. If zero, DefaultHistory (100).
	History int
	// Retain is how long a decided or timed-out request stays under its key for the call to
	// come back for it (see the package doc). If zero, DefaultRetain (15 minutes, the life of a
	// 2026-07-28 requestState).
	Retain time.Duration
	// OnDecision, when set, is told how each request ended (approved, rejected, timed out,
	// withdrawn), after the fact and outside the queue's lock. It must not block.
	OnDecision func(Record)
}

// Queue is the requests waiting for approval, and the recent decisions. Safe for concurrent
// use.
type Queue struct {
	cfg Config
	now func() time.Time

	mu     sync.Mutex
	byKey  map[string][]*Ticket // oldest first
	byID   map[string]*Ticket
	recent []Record // oldest first
	subs   map[chan struct{}]struct{}
	closed bool
	// reporting counts the decisions told to OnDecision or about to be: finish adds one under
	// mu, report marks it done. A waiter wakes when finish closes its ticket, before the
	// report, so Close waits for them: its caller may then close what OnDecision writes to.
	reporting sync.WaitGroup
}

// New returns an empty queue.
func New(cfg Config) *Queue {
	if cfg.History <= 0 {
		cfg.History = DefaultHistory
	}
	if cfg.Retain <= 0 {
		cfg.Retain = DefaultRetain
	}
	q := &Queue{cfg: cfg, now: cfg.Now, byKey: map[string][]*Ticket{}, byID: map[string]*Ticket{}, subs: map[chan struct{}]struct{}{}}
	if q.now == nil {
		q.now = time.Now
	}
	return q
}

// Ticket is the asking side's hold on one request.
type Ticket struct {
	q       *Queue
	key     string
	req     Request
	done    chan struct{} // closed when it ends
	outcome Outcome
	by      string
	at      time.Time
	waiters int  // Waits in progress
	parked  bool // a client holds a question about it (a 2026-07-28 round)
	linked  bool // under its key and ID
	timer   *time.Timer
}

func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Ask files a new request from r (its ID, Created and Deadline filled in) under key, beside any
// already there, that times out after timeout (DefaultTimeout if not positive): one request per
// call, so that one approval never serves two calls (SECURITY.md AG-02).
func (q *Queue) Ask(key string, r Request, timeout time.Duration) *Ticket {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	r.ID, r.Created, r.Deadline = newID(), now, now.Add(timeout)
	t := &Ticket{q: q, key: key, req: r, done: make(chan struct{})}
	if q.closed {
		t.outcome, t.at = Withdrawn, now
		close(t.done)
		return t
	}
	t.linked = true
	q.byKey[key], q.byID[r.ID] = append(q.byKey[key], t), t
	t.timer = time.AfterFunc(timeout, func() { q.expire(t) })
	q.notify()
	return t
}

// Lookup returns the requests under key, oldest first, whatever their state: pending, or ended
// but not yet consumed, withdrawn or forgotten after Config.Retain.
func (q *Queue) Lookup(key string) []*Ticket {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.byKey[key])
}

// Pending returns the requests waiting for a decision, oldest first.
func (q *Queue) Pending() []Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []Request
	for _, t := range q.byID {
		if t.outcome == "" {
			out = append(out, t.req)
		}
	}
	slices.SortFunc(out, func(a, b Request) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// Get returns the request called id, pending (Outcome "") or ended but still kept under its
// key.
func (q *Queue) Get(id string) (Record, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t := q.byID[id]
	if t == nil {
		return Record{}, false
	}
	return t.record(), true
}

// Recent returns the ended requests, newest first (at most Config.History).
func (q *Queue) Recent() []Record {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := slices.Clone(q.recent)
	slices.Reverse(out)
	return out
}

// Decide approves or rejects the pending request called id on behalf of by (who decides, as
// Record.By shows it). It fails with ErrNotFound for an unknown id, and with ErrDecided when
// the request already ended: the first decision wins.
func (q *Queue) Decide(id string, approve bool, by string) error {
	q.mu.Lock()
	t := q.byID[id]
	if t == nil {
		q.mu.Unlock()
		return ErrNotFound
	}
	if t.outcome != "" {
		out := t.outcome
		q.mu.Unlock()
		return fmt.Errorf("%w: %s", ErrDecided, out)
	}
	rec := q.finish(t, decision(approve), by)
	q.mu.Unlock()
	q.report(rec)
	return nil
}

func decision(approve bool) Outcome {
	if approve {
		return Approved
	}
	return Rejected
}

// Subscribe returns a channel that receives a value soon after every change: a request asked,
// decided, timed out, withdrawn or consumed. Changes that come while a value waits unread are
// merged into it. stop ends the subscription; Close closes the channel.
func (q *Queue) Subscribe() (ch <-chan struct{}, stop func()) {
	c := make(chan struct{}, 1)
	q.mu.Lock()
	if q.closed {
		close(c)
	} else {
		q.subs[c] = struct{}{}
	}
	q.mu.Unlock()
	return c, func() {
		q.mu.Lock()
		if _, ok := q.subs[c]; ok {
			delete(q.subs, c)
			close(c)
		}
		q.mu.Unlock()
	}
}

// Close withdraws every pending request (their Waits return), stops the timers and closes the
// subscriptions. Later requests are withdrawn as soon as they are asked.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	var recs []Record
	for _, t := range q.byID {
		if t.outcome == "" {
			recs = append(recs, q.finish(t, Withdrawn, ""))
		}
		q.unlink(t)
	}
	for c := range q.subs {
		close(c)
	}
	clear(q.subs)
	q.mu.Unlock()
	for _, r := range recs {
		q.report(r)
	}
	q.reporting.Wait()
}

// ---- under q.mu ----

// notify signals the subscribers.
func (q *Queue) notify() {
	for c := range q.subs {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// finish ends a pending request and keeps it under its key for Retain (TimedOut, Approved,
// Rejected) or drops it (Withdrawn). The caller reports the record outside the lock.
func (q *Queue) finish(t *Ticket, out Outcome, by string) Record {
	q.reporting.Add(1) // the caller reports the record once it has let go of mu
	t.outcome, t.by, t.at = out, by, q.now()
	close(t.done)
	if t.timer != nil {
		t.timer.Stop()
	}
	if out == Withdrawn {
		q.unlink(t)
	} else if t.linked {
		keep := q.cfg.Retain
		if left := t.req.Deadline.Sub(t.at); left > 0 {
			keep += left // a decision before the deadline holds as long as a timeout would
		}
		t.timer = time.AfterFunc(keep, func() { q.forget(t) })
	}
	rec := t.record()
	q.recent = append(q.recent, rec)
	if n := len(q.recent) - q.cfg.History; n > 0 {
		q.recent = slices.Delete(q.recent, 0, n)
	}
	q.notify()
	return rec
}

// unlink takes a request from under its key and ID.
func (q *Queue) unlink(t *Ticket) {
	if !t.linked {
		return
	}
	t.linked = false
	if t.timer != nil {
		t.timer.Stop()
	}
	if l := slices.DeleteFunc(q.byKey[t.key], func(u *Ticket) bool { return u == t }); len(l) > 0 {
		q.byKey[t.key] = l
	} else {
		delete(q.byKey, t.key)
	}
	delete(q.byID, t.req.ID)
	q.notify()
}

// ---- timers ----

// expire times a request out at its deadline, unless it ended before.
func (q *Queue) expire(t *Ticket) {
	q.mu.Lock()
	if t.outcome != "" || !t.linked {
		q.mu.Unlock()
		return
	}
	rec := q.finish(t, TimedOut, "")
	q.mu.Unlock()
	q.report(rec)
}

// forget drops an ended request from under its key once it has been kept long enough.
func (q *Queue) forget(t *Ticket) {
	q.mu.Lock()
	q.unlink(t)
	q.mu.Unlock()
}

func (q *Queue) report(r Record) {
	defer q.reporting.Done()
	if q.cfg.OnDecision != nil {
		q.cfg.OnDecision(r)
	}
}

// ---- the asking side ----

func (t *Ticket) record() Record {
	return Record{Request: t.req, Outcome: t.outcome, By: t.by, At: t.at}
}

// Request returns the request.
func (t *Ticket) Request() Request { return t.req }

// Done is closed when the request ends.
func (t *Ticket) Done() <-chan struct{} { return t.done }

// Outcome returns how the request ended and who decided; "" while it is pending.
func (t *Ticket) Outcome() (Outcome, string) {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	return t.outcome, t.by
}

// Decide approves or rejects the request on behalf of by, unless it already ended, and returns
// how it ended and by whom: the first decision wins.
func (t *Ticket) Decide(approve bool, by string) (Outcome, string) {
	q := t.q
	q.mu.Lock()
	if t.outcome != "" {
		defer q.mu.Unlock()
		return t.outcome, t.by
	}
	rec := q.finish(t, decision(approve), by)
	q.mu.Unlock()
	q.report(rec)
	return rec.Outcome, rec.By
}

// Park marks the request as asked of a client that will come back with the answer (a
// 2026-07-28 input_required round): it stays pending when no Wait holds it.
func (t *Ticket) Park() {
	t.q.mu.Lock()
	t.parked = true
	t.q.mu.Unlock()
}

// Wait blocks until the request ends or ctx does, and returns how it ended (or ctx's error).
// tick, when not nil, is called every interval meanwhile, to keep a connection alive. When ctx
// ends first and no other Wait holds the request and it is not parked, it is withdrawn.
func (t *Ticket) Wait(ctx context.Context, every time.Duration, tick func()) (Outcome, error) {
	q := t.q
	q.mu.Lock()
	t.waiters++
	q.mu.Unlock()
	var ticks <-chan time.Time
	if tick != nil && every > 0 {
		tk := time.NewTicker(every)
		defer tk.Stop()
		ticks = tk.C
	}
	for {
		select {
		case <-t.done:
			q.mu.Lock()
			t.waiters--
			out := t.outcome
			q.mu.Unlock()
			return out, nil
		case <-ctx.Done():
			q.mu.Lock()
			t.waiters--
			if out := t.outcome; out != "" { // decided as the caller went: the decision stands
				q.mu.Unlock()
				return out, nil
			}
			var rec Record
			gone := t.waiters == 0 && !t.parked
			if gone {
				rec = q.finish(t, Withdrawn, "")
			}
			q.mu.Unlock()
			if gone {
				q.report(rec)
			}
			return "", ctx.Err()
		case <-ticks:
			tick()
		}
	}
}

// Consume takes an ended request from under its key, so that its approval serves one call
// only. It does nothing to a pending one.
func (t *Ticket) Consume() {
	q := t.q
	q.mu.Lock()
	if t.outcome != "" {
		q.unlink(t)
	}
	q.mu.Unlock()
}
