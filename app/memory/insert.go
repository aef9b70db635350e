package memory

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// newMemory is a validated memory to insert.
type newMemory struct {
	Memory
	Vector []float32 // nil: embed later
	Policy DedupPolicy
	// Key is the idempotency key, "" for none; Principal owns it and Sum is the text's
	// fingerprint (idempotency.go).
	Key, Principal string
	// Retry: answer an exact duplicate the same client wrote within RecentDuplicateWindow with
	// it (Remember's drafts; not imports).
	Retry bool
}

// NearDuplicate is a stored memory similar to a text being written.
type NearDuplicate struct {
	ID    uint64  `json:"id"`
	Text  string  `json:"text"`
	Score float32 `json:"score"`
}

// insertResult is the outcome of inserting one newMemory.
type insertResult struct {
	ID             uint64
	Skipped        bool // skip_if_near found an existing memory; ID is that memory
	Replayed       bool // an idempotency key or a recent exact duplicate answered; nothing stored
	NearDuplicates []NearDuplicate
	Contradictions []NearDuplicate
	Err            error // the item was refused (its supersedes, its idempotency key)

	sameAs int  // for a key repeated in one call: 1 + the index of the item that answers
	keyHit bool // answered by its idempotency key, which is recorded already
}

// insert stores every item in one transaction (one logical operation), after checking each for
// idempotency keys, recent exact duplicates, near duplicates according to its policy, possible
// contradictions and the memories it supersedes. The checks happen under s.writeMu against the
// cache and the writes queued before this one, so two identical calls at once store once; the
// write then joins the group commit (commit.go) and insert returns once it is in the file. A
// call that supersedes waits for the queue to drain and keeps s.writeMu until it is committed.
//
// It reads as its four steps: check each item (checkInsertLocked), plan the links its
// supersedes change (planInsertLocked), assign the ids (assignInsert), and commit
// (commitInsert).
func (s *Store) insert(items []*newMemory) ([]insertResult, error) {
	results := make([]insertResult, len(items))
	links := slices.ContainsFunc(items, func(it *newMemory) bool { return len(it.Supersedes) > 0 })
	full := s.fileFull() // quota.go: read before the locks, a stat
	snaps := s.presearch(items)
	s.writeMu.Lock()
	locked := true
	defer func() {
		if locked {
			s.writeMu.Unlock()
		}
	}()
	if links {
		s.drainLocked()
	}
	now := s.now().UTC()
	s.mu.RLock()
	gen := s.gen
	s.mu.RUnlock()
	if err := s.replayKeys(items, results, now); err != nil {
		return nil, err
	}
	s.mu.RLock()
	s.checkInsertLocked(items, results, snaps, full, now)
	plan, linked := s.planInsertLocked(items, results)
	s.mu.RUnlock()
	mems := s.assignInsert(items, results, plan, linked, now)
	release := func() {
		if !links {
			s.writeMu.Unlock()
			locked = false
		}
	}
	if err := s.commitInsert(items, results, mems, linked, now, gen, release); err != nil {
		return nil, fmt.Errorf("insert memories: %w", err)
	}
	return results, nil
}

// checkInsertLocked is insert's first step: it decides for each item not answered already (by
// its idempotency key) whether it is a retry of a recent exact duplicate (Replayed), which
// stored memories it nearly duplicates or may contradict, whether skip_if_near keeps one of
// them instead (Skipped), and whether the quotas let it be stored (else its Err). full is the
// file's quota error read before the locks (fileFull), snaps the items' presearches. s.mu is
// held for reading and s.writeMu held.
func (s *Store) checkInsertLocked(items []*newMemory, results []insertResult, snaps []*nearSnap, full error, now time.Time) {
	// The details of the texts compared for contradictions, each read once a call: near
	// duplicates recur across a batch's items.
	known := map[string]textDetails{}
	detailsOf := func(text string) textDetails {
		d, ok := known[text]
		if !ok {
			d = details(text)
			known[text] = d
		}
		return d
	}
	count := len(s.mems) + s.queuedLocked() // what the file holds, against MaxMemories
	for i, it := range items {
		r := &results[i]
		if r.Replayed || r.Err != nil || r.sameAs != 0 {
			continue
		}
		if it.Retry && it.Policy != DedupInsert {
			if id := s.recentDuplicateLocked(&it.Memory, now); id != 0 {
				r.ID, r.Replayed = id, true
				continue
			}
		}
		if it.Policy != DedupInsert {
			exclude := func(id uint64) bool { return slices.Contains(it.Supersedes, id) }
			similar := s.nearLocked(it.Text, it.Vector, snaps[i], exclude)
			for _, d := range similar {
				if d.Score >= s.dedupThreshold && len(r.NearDuplicates) < 5 {
					r.NearDuplicates = append(r.NearDuplicates, d)
				}
				if d.Score >= ContradictionThreshold && detailsOf(it.Text).differ(detailsOf(d.Text)) {
					r.Contradictions = append(r.Contradictions, d)
				}
			}
			if it.Policy == DedupSkipIfNear && len(r.NearDuplicates) > 0 {
				r.ID, r.Skipped = r.NearDuplicates[0].ID, true
			}
		}
		if !r.Skipped { // it would be stored: the quotas (quota.go)
			if err := cmp.Or(full, s.countFull(count)); err != nil {
				*r = insertResult{Err: err}
				continue
			}
			count++
		}
	}
}

// planInsertLocked is insert's second step: it plans the supersedes links of the items that
// passed the checks, in item order (an item whose links the rules refuse gets that Err), with
// the items not stored yet named by their stand-in ids (pendingBase), and returns the plan
// with copies of the stored memories it changes: those superseded, forgotten successors that
// stop listing them, and the memories skip_if_near kept, which gain the supersedes. s.mu is
// held for reading and s.writeMu held.
func (s *Store) planInsertLocked(items []*newMemory, results []insertResult) (*linkPlan, map[uint64]*Memory) {
	plan := newLinkPlan()
	for i, it := range items {
		r := &results[i]
		if r.Replayed || r.Err != nil || r.sameAs != 0 || len(it.Supersedes) == 0 {
			continue
		}
		successor := pendingBase + uint64(i)
		if r.Skipped {
			successor = r.ID
		}
		next, err := s.planSupersedesLocked(plan, successor, it.Supersedes)
		if err != nil {
			*r = insertResult{Err: err}
			continue
		}
		plan = next
	}
	linked := map[uint64]*Memory{}
	for _, id := range plan.ids() {
		linked[id] = s.mems[id].Clone()
	}
	for i, it := range items {
		if r := results[i]; r.Skipped && r.Err == nil && len(it.Supersedes) > 0 && linked[r.ID] == nil {
			linked[r.ID] = s.mems[r.ID].Clone()
		}
	}
	return plan, linked
}

// assignInsert is insert's third step: it gives each item to store the next id of s.seq (which
// the commit writes back as the bucket's sequence), applies the plan to the linked memories
// with those ids (dropping the ones it leaves unchanged, touching the others at now), and
// answers each item whose idempotency key an earlier item of the call carries with that
// item's outcome. It returns the memories to store, in item order. s.writeMu is held.
func (s *Store) assignInsert(items []*newMemory, results []insertResult, plan *linkPlan, linked map[uint64]*Memory, now time.Time) []queuedMemory {
	var mems []queuedMemory
	for i, it := range items {
		if r := results[i]; r.Err == nil && !r.Skipped && !r.Replayed && r.sameAs == 0 {
			s.seq++
			it.ID, results[i].ID = s.seq, s.seq
			mems = append(mems, queuedMemory{m: &it.Memory, vec: it.Vector})
		}
	}
	resolve := func(id uint64) uint64 {
		if id >= pendingBase {
			return results[id-pendingBase].ID
		}
		return id
	}
	for id, m := range linked {
		changed := plan.apply(m, resolve)
		for i, it := range items {
			if r := results[i]; r.Skipped && r.ID == id && r.Err == nil && addSupersedes(m, it.Supersedes) {
				changed = true
			}
		}
		if !changed {
			delete(linked, id)
			continue
		}
		m.UpdatedAt = now
	}
	for i := range results {
		if j := results[i].sameAs; j != 0 {
			r := results[j-1]
			results[i] = insertResult{ID: r.ID, Skipped: r.Skipped, Replayed: true, Err: r.Err, keyHit: true}
		}
	}
	return mems
}

// commitInsert is insert's last step: it queues for the group commit (commit.go) the new
// memories mems, the linked memories the plan changed and the items' idempotency keys, with
// their change to the caches, and waits until they are in the file. release is called once
// the write is queued (insert lets go of s.writeMu there unless the call supersedes); gen is
// s.gen as insert's checks saw it. s.writeMu is held.
func (s *Store) commitInsert(items []*newMemory, results []insertResult, mems []queuedMemory, linked map[uint64]*Memory, now time.Time, gen uint64, release func()) error {
	keys := map[string]idempotencyRecord{}
	for i, it := range items {
		if r := results[i]; it.Key != "" && r.Err == nil && !r.keyHit {
			keys[string(idempotencyKey(it.Principal, it.Key))] = idempotencyRecord{At: now, Sum: textSum(it.Text), ID: r.ID, Existing: r.Skipped}
		}
	}
	prune := now.Sub(s.prunedAt) >= pruneEvery
	if prune {
		s.prunedAt = now
	}
	req := &commitReq{mems: mems, keys: keys}
	if len(mems) > 0 || len(linked) > 0 || len(keys) > 0 || prune {
		req.write = s.insertWrite(mems, linked, keys, now, prune)
	}
	req.apply = func() []uint64 { return s.insertApplyLocked(mems, linked, now) }
	req.wake = s.emb != nil && slices.ContainsFunc(mems, func(q queuedMemory) bool { return q.vec == nil })
	lead, err := s.enqueue(req, gen)
	if err != nil {
		return err
	}
	release()
	return s.await(req, lead)
}

// insertWrite is the puts of an insert, for the group's transaction: the new memories and
// their vectors, the bucket's sequence (s.seq as it is now), the linked memories the plan
// changed, and the idempotency keys (pruning the expired ones if prune).
func (s *Store) insertWrite(mems []queuedMemory, linked map[uint64]*Memory, keys map[string]idempotencyRecord, now time.Time, prune bool) func(tx *kv.Tx) error {
	seq := s.seq
	return func(tx *kv.Tx) error {
		mb, vb := writeBuckets(tx)
		for _, q := range mems {
			b, err := encodeMemory(q.m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(q.m.ID), b); err != nil {
				return err
			}
			if q.vec != nil {
				if err := vb.Put(kv.Key(q.m.ID), encodeVector(s.embID, q.vec)); err != nil {
					return err
				}
			}
		}
		if seq > mb.Sequence() {
			if err := mb.SetSequence(seq); err != nil {
				return err
			}
		}
		for id, m := range linked {
			b, err := encodeMemory(m)
			if err != nil {
				return err
			}
			if err := mb.Put(kv.Key(id), b); err != nil {
				return err
			}
		}
		return s.rememberKeys(tx, keys, now, prune)
	}
}

// insertApplyLocked is an insert's change to the caches once it is in the file: the new
// memories indexed (their vectors, or pending for the background embedder), the linked ones
// replaced. It returns the ids changed, ascending, for the OnChange hooks. s.mu is held for
// writing.
func (s *Store) insertApplyLocked(mems []queuedMemory, linked map[uint64]*Memory, now time.Time) []uint64 {
	var ids []uint64
	for _, q := range mems {
		m := q.m.Clone()
		s.addRecentLocked(m, now)
		s.mems[m.ID] = m
		s.ids = append(s.ids, m.ID)
		s.indexText(m, nil)
		s.linkLocked(m, false)
		if q.vec != nil {
			s.addVectorLocked(m.ID, q.vec)
		} else if s.emb != nil {
			s.pending[m.ID] = struct{}{}
		}
		ids = append(ids, m.ID)
	}
	s.addCreatedLocked(mems)
	if len(linked) > 0 {
		s.modGen++
	}
	for id, m := range linked {
		s.mems[id] = m
		ids = append(ids, id)
	}
	for _, id := range ids {
		s.refreshSupersededLocked(id)
	}
	slices.Sort(ids)
	return ids
}
