package memory

// Group commit. A bbolt commit costs two fdatasyncs whatever it holds, so writers that arrive
// together share one. A writer does its checks under s.writeMu against the cache and the writes
// queued before it (s.queued: their memories and idempotency keys), takes its ids from
// s.seq, queues a commitReq and releases s.writeMu; the next writer's checks see its write in
// the queue, so two identical calls at once still store once.
//
// There is no committer goroutine and no delay: the writer that finds no commit in flight
// leads. It takes everything queued, writes it in one Update, and after the fsync applies each
// request's cache change in queue order, tells the OnChange hooks and wakes its writer; then it
// takes what queued meanwhile, until the queue is empty. So a writer is answered only once its
// write is in the file, and readers never see a memory the file does not hold.
//
// A failed commit fails every request in it and every request queued behind it (their checks
// counted on the failed writes), and empties the queue; writers that checked against it before
// the failure fail too (s.gen). Storage failures are the only ones left at that point: every
// item was validated before it was queued.
//
// Writes the queue cannot stand in for — supersedes links, updates, forgets, deletes, the
// background embedder's vectors — wait for the queue to drain under s.writeMu (drainLocked)
// and commit on their own, as before.

import (
	"errors"
	"slices"
	"sync"

	"github.com/ownsona/ownsona/kv"
)

// maxGroup caps how many requests one commit takes.
const maxGroup = 256

// errGroupFailed: a write queued behind one whose commit failed.
var errGroupFailed = errors.New("an earlier write of the same group commit failed")

// commitReq is one writer's share of a group commit.
type commitReq struct {
	write func(tx *kv.Tx) error // its puts, in the group's transaction; nil: nothing to write
	apply func() []uint64       // its cache change, with s.mu held for writing; returns the ids for the hooks
	wake  bool                  // nudge the background embedder after applying
	mems  []queuedMemory        // the memories it stores, ascending ids
	keys  map[string]idempotencyRecord
	done  chan error
}

// queuedMemory is a memory queued for the next commit, as the checks of later writers see it.
type queuedMemory struct {
	m   *Memory
	vec []float32 // nil: none
}

// committer is the queue of a Store's group commit.
type committer struct {
	mu         sync.Mutex
	queue      []*commitReq
	committing bool // a leader is writing; the next arrival queues
}

// enqueue puts r behind the requests queued before it, in the queue and in s.queued (the view
// of later writers' checks), and reports whether the caller leads the next commit. gen is
// s.gen when the caller's checks began: if a commit failed since, r is refused. The caller
// holds s.writeMu.
func (s *Store) enqueue(r *commitReq, gen uint64) (lead bool, err error) {
	r.done = make(chan error, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gen != gen {
		return false, errGroupFailed
	}
	c := &s.commit
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.write == nil && len(s.queued) == 0 && !c.committing {
		r.done <- nil // nothing to write and nothing it could depend on waits for the disk
		return false, nil
	}
	s.queued = append(s.queued, r)
	c.queue = append(c.queue, r)
	if c.committing {
		return false, nil
	}
	c.committing = true
	return true, nil
}

// await waits for r's commit, leading commits first when lead is set (see enqueue), and
// returns its error. It must be called without s.writeMu unless the queue was drained before r
// was queued.
func (s *Store) await(r *commitReq, lead bool) error {
	if lead {
		s.lead()
	}
	return <-r.done
}

// lead commits the queue, one group at a time, until it is empty.
func (s *Store) lead() {
	c := &s.commit
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.committing = false
			c.mu.Unlock()
			return
		}
		n := min(len(c.queue), maxGroup)
		group := c.queue[:n:n]
		c.queue = c.queue[n:]
		c.mu.Unlock()
		s.commitGroup(group)
	}
}

// commitGroup writes group in one Update and then applies it, or fails it and everything queued.
func (s *Store) commitGroup(group []*commitReq) {
	var err error
	if slices.ContainsFunc(group, func(r *commitReq) bool { return r.write != nil }) {
		err = s.db.Update(func(tx *kv.Tx) error {
			for _, r := range group {
				if r.write == nil {
					continue
				}
				if err := r.write(tx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		s.mu.Lock()
		c := &s.commit
		c.mu.Lock()
		behind := c.queue
		c.queue = nil
		c.mu.Unlock()
		s.queued = nil
		s.gen++
		s.mu.Unlock()
		for _, r := range group {
			r.done <- err
		}
		for _, r := range behind {
			r.done <- errGroupFailed
		}
		return
	}
	changed := make([][]uint64, len(group))
	wake := false
	s.mu.Lock()
	for i, r := range group {
		if r.apply != nil {
			changed[i] = r.apply()
		}
		wake = wake || r.wake
	}
	s.queued = s.queued[len(group):]
	s.mu.Unlock()
	if wake {
		s.nudge()
	}
	for i, r := range group {
		s.changed(changed[i])
		r.done <- nil
	}
}

// drainLocked waits until every queued write is committed and applied. The caller holds
// s.writeMu, so nothing queues meanwhile.
func (s *Store) drainLocked() {
	r := &commitReq{}
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	lead, err := s.enqueue(r, gen)
	if err != nil {
		return
	}
	_ = s.await(r, lead) // a failure empties the queue all the same
}
