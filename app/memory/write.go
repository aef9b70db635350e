package memory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ownsona/ownsona/vector"
)

// Remembered is the outcome of one Draft.
type Remembered struct {
	// ID is the new memory's, or with Existing the near duplicate's that DedupSkipIfNear kept.
	ID       uint64
	Existing bool
	// NearDuplicates are stored memories similar to this one (not with DedupInsert).
	NearDuplicates []NearDuplicate
	// Replayed: an idempotency key or an exact duplicate the same client wrote within
	// RecentDuplicateWindow answered (idempotency.go); ID is the first write's memory and
	// nothing was stored. Existing is the first write's.
	Replayed bool
	// Contradictions are stored memories similar to this one with other details
	// (contradict.go), for the caller to ask about; never superseded by themselves.
	Contradictions []NearDuplicate
	// Err is why this draft was not stored (*InputError, *SecretError); the others still were.
	Err error
}

// Remember stores drafts written by o, in one transaction: each is checked on its own, and a
// draft that fails is reported in its Remembered.Err while the rest are stored. A draft's
// Supersedes are linked in the same transaction (supersede.go); a retry is answered rather
// than stored (idempotency.go); near duplicates and possible contradictions are reported
// (contradict.go). The texts are
// embedded first, outside the store's locks; when the embedder fails they are stored without a
// vector, embedded in the background later, and warning says so. err is a storage failure, in
// which case nothing was stored.
func (s *Store) Remember(ctx context.Context, drafts []Draft, o Origin) (res []Remembered, warning string, err error) {
	res = make([]Remembered, len(drafts))
	now := s.now().UTC()
	var items []*newMemory
	var idx []int
	for i, d := range drafts {
		m, err := s.draft(d, o, now)
		if err != nil {
			res[i].Err = err
			continue
		}
		policy := d.Dedup
		if policy == "" {
			policy = DedupAsk
		}
		items = append(items, &newMemory{Memory: *m, Policy: policy, Key: d.IdempotencyKey, Principal: o.principal(), Retry: true})
		idx = append(idx, i)
	}
	warning = s.embedNew(ctx, items)
	out, err := s.insert(items)
	if err != nil {
		return nil, "", err
	}
	for j, i := range idx {
		r := out[j]
		if r.Err != nil {
			res[i].Err = r.Err
			continue
		}
		res[i] = Remembered{ID: r.ID, Existing: r.Skipped, NearDuplicates: r.NearDuplicates, Replayed: r.Replayed, Contradictions: r.Contradictions}
	}
	return res, warning, nil
}

// embedNew fills in the vectors of items; on failure they are stored without, for the
// background embedder, and the warning says so.
func (s *Store) embedNew(ctx context.Context, items []*newMemory) (warning string) {
	if s.emb == nil || len(items) == 0 {
		return ""
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	vecs, err := s.embed(ctx, texts, vector.Document)
	if err != nil {
		s.log.Warn().Err(err).Int("memories", len(items)).Msg("embedding failed; stored without vectors, retrying in the background")
		return "the embedder is unavailable (" + err.Error() + "); stored, and it will be indexed for semantic search when the embedder answers"
	}
	for i, it := range items {
		it.Vector = vecs[i]
	}
	return ""
}

// Updated is the outcome of one Patch.
type Updated struct {
	ID      uint64
	Changed []string // the fields whose values changed, in the order of Updatable; empty if none
	// Previous is the memory that keeps the text this one had before the patch changed it (a
	// forgotten memory superseded by this one, see Update); 0 when the text did not change or
	// on a dry run.
	Previous uint64
	// Err is why this patch was not applied: *InputError, ErrNotFound or ErrForgotten.
	Err error
}

// Update applies patches in one transaction; each succeeds or fails on its own, and a memory
// may be named by one patch only. A patch that changes a text is refused at the quotas
// (*LimitError, quota.go), since the previous text is kept as a memory. dryRun reports what would change without writing. New texts
// are embedded before the write; a failed embedding leaves them to the background embedder.
// Forgotten memories cannot be updated (ErrForgotten). A patch's Supersedes are added to the
// memories the patched one supersedes, with the links at the other end written in the same
// transaction (supersede.go). err is a storage failure.
//
// A patch that changes a memory's text keeps the text it replaces (SECURITY.md AG-01): the
// memory keeps its id and takes the new text, and a new memory, in the same transaction, keeps
// the old one with the rest of the record as it was (tags, importance, times, source). That
// previous version is forgotten (it leaves searches, lists and counts, and is in the trash,
// replaced_by_id the updated memory, forget_reason saying so) and superseded by the updated
// memory, which lists it in its Supersedes: get_memory, exports and the console show the
// chain of versions. Restoring a version from the trash makes it a memory of its own again
// (Restore); emptying the trash erases it.
func (s *Store) Update(ctx context.Context, patches []Patch, dryRun bool) ([]Updated, error) {
	res := make([]Updated, len(patches))
	now := s.now().UTC()
	byID := map[uint64]int{}
	var ids []uint64
	for i := range patches {
		p := &patches[i]
		res[i].ID = p.ID
		if err := s.validate(p, now); err != nil {
			res[i].Err = err
			continue
		}
		if j, dup := byID[p.ID]; dup {
			res[i].Err = &InputError{Field: "id", Reason: fmt.Sprintf("memory %d is already updated by items[%d]", p.ID, j)}
			continue
		}
		byID[p.ID] = i
		ids = append(ids, p.ID)
	}
	vecs := map[uint64][]float32{}
	if !dryRun && s.emb != nil {
		var texts []string
		var tids []uint64
		for _, id := range ids {
			if p := patches[byID[id]]; p.Text != nil {
				texts = append(texts, *p.Text)
				tids = append(tids, id)
			}
		}
		if v, err := s.embed(ctx, texts, vector.Document); err == nil {
			for i, id := range tids {
				vecs[id] = v[i]
			}
		}
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	// The links of each patch's supersedes are checked in patch order, against the store and
	// the patches before it; a patch whose links are refused is not applied at all.
	plan := newLinkPlan()
	live := ids[:0:0]
	s.mu.RLock()
	for _, id := range ids {
		p := &patches[byID[id]]
		if m := s.mems[id]; len(p.Supersedes) > 0 && m != nil && !m.Deleted() {
			next, err := s.planSupersedesLocked(plan, id, p.Supersedes)
			if err != nil {
				res[byID[id]].Err = err
				continue
			}
			plan = next
		}
		live = append(live, id)
	}
	s.mu.RUnlock()
	patched := map[uint64]bool{}
	touch := slices.Clone(live)
	for _, id := range live {
		patched[id] = true
	}
	if !dryRun {
		for _, id := range plan.ids() {
			if !patched[id] {
				touch = append(touch, id)
			}
		}
	}
	var versions []*Memory
	full := s.fileFull() // quota.go
	errs, err := s.modifyAddLocked(touch, func(m *Memory) (bool, error) {
		changed := false
		if patched[m.ID] {
			i := byID[m.ID]
			if m.Deleted() {
				return false, forgotten(m.ID, "; remember it again instead of updating it")
			}
			if p := patches[i]; p.Text != nil && *p.Text != m.Text {
				// The previous text is kept as a memory: the quotas apply (s.mu is held).
				if err := cmp.Or(full, s.countFull(len(s.mems)+len(versions))); err != nil {
					return false, err
				}
			}
			prev := m.Clone()
			res[i].Changed = patches[i].apply(m, now)
			if res[i].Changed == nil {
				res[i].Changed = []string{}
			}
			changed = !dryRun && len(res[i].Changed) > 0
			if !dryRun && m.Text != prev.Text {
				v := s.versionOf(prev, now)
				m.Supersedes = append(m.Supersedes, v.ID)
				versions = append(versions, v)
				res[i].Previous = v.ID
			}
		}
		if !dryRun && plan.apply(m, same) {
			m.UpdatedAt = now
			changed = true
		}
		return changed, nil
	}, vecs, func() []*Memory { return versions })
	if err != nil {
		return nil, err
	}
	for id, e := range errs {
		if patched[id] {
			res[byID[id]].Err = e
		}
	}
	return res, nil
}

// versionOf is the previous version of m, whose text an update is replacing at now: a copy of
// m under a new id, forgotten, replaced by and superseded by m (see Update). The caller holds
// s.writeMu (the id comes from s.seq).
func (s *Store) versionOf(m *Memory, now time.Time) *Memory {
	v := m.Clone()
	s.seq++
	by, replaced, at := m.ID, m.ID, now
	v.ID, v.Supersedes, v.SupersededBy, v.UpdatedAt = s.seq, nil, &by, now
	v.DeletedAt, v.ReplacedByID, v.ForgetReason = &at, &replaced, fmt.Sprintf("the text of memory %d until an update replaced it", m.ID)
	v.superseded = false
	return v
}

// Confirm records that memory id is still true now (its last_confirmed_at) and returns that
// time. ErrNotFound, or ErrForgotten for a forgotten memory.
func (s *Store) Confirm(id uint64) (time.Time, error) {
	now := s.now().UTC()
	errs, err := s.modify([]uint64{id}, func(m *Memory) (bool, error) {
		if m.Deleted() {
			return false, forgotten(m.ID, "")
		}
		m.LastConfirmedAt, m.UpdatedAt = now, now
		return true, nil
	}, nil)
	if err != nil {
		return time.Time{}, err
	}
	return now, errs[id]
}

// Forgetting says how Forget retires memories.
type Forgetting struct {
	Reason     string  // why, kept in the tombstone
	ReplacedBy *uint64 // the active memory that supersedes them, kept in the tombstone
	DryRun     bool    // report without writing
}

// Forgotten is the outcome of forgetting one id.
type Forgotten struct {
	ID      uint64
	Already bool  // it was forgotten before; its tombstone is unchanged
	Err     error // ErrNotFound, or *InputError for an id listed twice
}

// Forget soft-deletes ids in one transaction: each keeps a tombstone (deleted_at, the reason,
// replaced_by_id) and leaves searches and lists. An id listed twice fails the second time.
// f.ReplacedBy must name an active memory that is not among ids (*InputError on
// "replaced_by_id"). err is that, or a storage failure.
func (s *Store) Forget(ids []uint64, f Forgetting) ([]Forgotten, error) {
	if err := s.checkReason(f.Reason); err != nil {
		return nil, err
	}
	if f.ReplacedBy != nil {
		r, err := s.Get(*f.ReplacedBy)
		switch {
		case len(ids) == 1 && *f.ReplacedBy == ids[0]:
			return nil, &InputError{Field: "replaced_by_id", Reason: "is the memory being forgotten"}
		case err != nil || r.Deleted():
			return nil, &InputError{Field: "replaced_by_id", Reason: fmt.Sprintf("memory %d does not exist or was forgotten", *f.ReplacedBy)}
		}
	}
	now := s.now().UTC()
	already := map[uint64]bool{}
	errs, err := s.modify(ids, func(m *Memory) (bool, error) {
		if m.Deleted() {
			already[m.ID] = true
			return false, nil
		}
		if f.ReplacedBy != nil && *f.ReplacedBy == m.ID {
			return false, &InputError{Field: "replaced_by_id", Reason: "is the memory being forgotten"}
		}
		if f.DryRun {
			return false, nil
		}
		t := now
		m.DeletedAt, m.ForgetReason, m.ReplacedByID, m.UpdatedAt = &t, f.Reason, f.ReplacedBy, now
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return perID[Forgotten](ids, errs, already), nil
}

// idOutcome is the shape of Forgotten and Restored: what became of one id of a list.
type idOutcome interface {
	~struct {
		ID      uint64
		Already bool
		Err     error
	}
}

// perID lays out the outcome of each of ids in their order, from the errors and the ids that
// needed no change that modify reported; an id listed again fails there with an *InputError
// naming where it was listed first.
func perID[T idOutcome](ids []uint64, errs map[uint64]error, already map[uint64]bool) []T {
	out := make([]T, len(ids))
	seen := map[uint64]int{}
	for i, id := range ids {
		o := struct {
			ID      uint64
			Already bool
			Err     error
		}{ID: id}
		if j, dup := seen[id]; dup {
			o.Err = &InputError{Field: fmt.Sprintf("ids[%d]", i), Reason: fmt.Sprintf("memory %d is already listed at ids[%d]", id, j)}
		} else {
			seen[id] = i
			o.Err, o.Already = errs[id], already[id]
		}
		out[i] = T(o)
	}
	return out
}

func (s *Store) checkReason(reason string) error {
	probe := Memory{Text: "x", CaptureMode: CaptureExplicit, ForgetReason: reason}
	err := s.check(&probe)
	var ie *InputError
	if errors.As(err, &ie) && ie.Field == "forget_reason" {
		return &InputError{Field: "reason", Reason: ie.Reason}
	}
	return err
}

// Delete erases memory id, its vector and its index entries for good (a hard delete: no
// tombstone). Its id is never reused. ErrNotFound when there is no such memory.
func (s *Store) Delete(id uint64) error { return s.hardDelete(id) }
