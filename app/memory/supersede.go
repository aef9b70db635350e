package memory

// Corrections that replace old facts. A memory that supersedes others (remember's or
// update_memory's supersedes) makes them leave searches, lists, counts of active memories and
// the context prompt, while they stay in the file: get_memory shows them with superseded_by,
// export and import keep the links, the console shows the chain. Nothing is decided silently:
// the store only links what a caller names.
//
// The rules:
//
//   - A memory is superseded by at most one memory at a time (its SupersededBy); a memory may
//     supersede many (its Supersedes, at most MaxSupersedes per call). Both directions are
//     stored, in one transaction with the write that makes them.
//   - A memory may not supersede itself, a memory that does not exist or was forgotten, or a
//     memory already superseded by another memory that is not forgotten (supersede that one
//     instead: corrections form a chain, A ← B ← C).
//   - Links never form a cycle: a memory may not supersede one that (through any chain)
//     supersedes it.
//   - A superseded memory is hidden while its successor is not forgotten. Forgetting the
//     successor brings it back; restoring the successor from the trash hides it again.
//     Erasing either end for good (hard delete, emptying the trash) removes the link from the
//     other. Expiry of the successor does not bring it back.
//   - A memory that is superseded while its successor is forgotten may be superseded again by
//     another memory: the link moves, and the forgotten successor no longer lists it.
//   - An update that changes a memory's text links the text it replaces the same way: a
//     forgotten memory superseded by (and replaced by) the updated one (Update). Restoring such
//     a forgotten memory takes it out of the chain (Restore).

import (
	"fmt"
	"maps"
	"slices"
)

// checkSupersedes checks the shape of a supersedes list before any memory is read: at most
// MaxSupersedes ids, each a memory id, none repeated, none the memory itself (self; 0 for a
// memory not stored yet).
func checkSupersedes(ids []uint64, self uint64) error {
	if len(ids) > MaxSupersedes {
		return &InputError{Field: "supersedes", Reason: fmt.Sprintf("lists %d memories; the limit is %d", len(ids), MaxSupersedes)}
	}
	for i, id := range ids {
		field := fmt.Sprintf("supersedes[%d]", i)
		switch {
		case id == 0:
			return &InputError{Field: field, Reason: "must be a memory id"}
		case id == self:
			return &InputError{Field: field, Reason: fmt.Sprintf("is memory %d itself; a memory cannot supersede itself", id)}
		}
		if j := slices.Index(ids[:i], id); j >= 0 {
			return &InputError{Field: field, Reason: fmt.Sprintf("memory %d is already listed at supersedes[%d]", id, j)}
		}
	}
	return nil
}

// addSupersedes appends to m.Supersedes the ids it lacks and reports whether it added any.
func addSupersedes(m *Memory, ids []uint64) bool {
	added := false
	for _, id := range ids {
		if !slices.Contains(m.Supersedes, id) {
			m.Supersedes = append(m.Supersedes, id)
			added = true
		}
	}
	return added
}

// pendingBase is where the stand-in ids of memories not stored yet start: item i of an insert
// is pendingBase+i until the transaction gives it its id. Real ids stay below 2^63.
const pendingBase = uint64(1) << 63

// linkPlan is the changes a write makes to the records at the other end of its links: which
// memories get a new successor, and which forgotten successors stop listing the memories that
// move away from them.
type linkPlan struct {
	succ map[uint64]uint64   // memory → its new successor (possibly a pending id)
	drop map[uint64][]uint64 // forgotten successor → the memories it no longer supersedes
}

func newLinkPlan() *linkPlan {
	return &linkPlan{succ: map[uint64]uint64{}, drop: map[uint64][]uint64{}}
}

func (p *linkPlan) fork() *linkPlan {
	q := &linkPlan{succ: maps.Clone(p.succ), drop: make(map[uint64][]uint64, len(p.drop))}
	for k, v := range p.drop {
		q.drop[k] = slices.Clone(v)
	}
	return q
}

// ids are the stored memories the plan changes, ascending.
func (p *linkPlan) ids() []uint64 {
	set := map[uint64]bool{}
	for id := range p.succ {
		set[id] = true
	}
	for id := range p.drop {
		set[id] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// successorLocked is id's successor once the plan is applied; 0 for none. s.mu must be held.
func (s *Store) successorLocked(p *linkPlan, id uint64) uint64 {
	if to, ok := p.succ[id]; ok {
		return to
	}
	if m := s.mems[id]; m != nil && m.SupersededBy != nil {
		return *m.SupersededBy
	}
	return 0
}

// planSupersedesLocked checks that successor (a stored memory, or a pending id) may supersede
// each of ids, given the store and the plan so far, and adds the links to the plan; on a
// refusal the plan is left as it was. s.mu must be held.
func (s *Store) planSupersedesLocked(plan *linkPlan, successor uint64, ids []uint64) (*linkPlan, error) {
	next := plan.fork()
	for i, id := range ids {
		field := fmt.Sprintf("supersedes[%d]", i)
		m := s.mems[id]
		switch {
		case m == nil:
			return plan, &InputError{Field: field, Reason: fmt.Sprintf("memory %d does not exist", id)}
		case m.Deleted():
			return plan, &InputError{Field: field, Reason: fmt.Sprintf("memory %d was forgotten", id)}
		}
		cur := s.successorLocked(next, id)
		if cur == successor {
			continue // linked already
		}
		if cur != 0 {
			if cur >= pendingBase {
				return plan, &InputError{Field: field, Reason: fmt.Sprintf("memory %d is superseded by another item of this call", id)}
			}
			if c := s.mems[cur]; c != nil && !c.Deleted() {
				return plan, &InputError{Field: field, Reason: fmt.Sprintf("memory %d is already superseded by memory %d; supersede that one instead", id, cur)}
			}
		}
		if s.reachesLocked(next, successor, id) {
			return plan, &InputError{Field: field, Reason: fmt.Sprintf("memory %d already supersedes this memory (directly or through others); links cannot form a cycle", id)}
		}
		if cur != 0 && s.mems[cur] != nil {
			next.drop[cur] = append(next.drop[cur], id)
		}
		next.succ[id] = successor
	}
	return next, nil
}

// reachesLocked reports whether target is from or one of from's successors, through any chain,
// given the store and the plan: then a link that makes target superseded by from closes a
// cycle. s.mu must be held.
func (s *Store) reachesLocked(p *linkPlan, from, target uint64) bool {
	for at, steps := from, 0; at != 0 && steps <= len(s.mems)+len(p.succ); at, steps = s.successorLocked(p, at), steps+1 {
		if at == target {
			return true
		}
	}
	return false
}

// apply makes the plan's changes to m, a copy of a stored memory, with pending ids resolved,
// and reports whether it changed m.
func (p *linkPlan) apply(m *Memory, resolve func(uint64) uint64) bool {
	changed := false
	if to, ok := p.succ[m.ID]; ok {
		to = resolve(to)
		if m.SupersededBy == nil || *m.SupersededBy != to {
			m.SupersededBy = &to
			changed = true
		}
	}
	if gone := p.drop[m.ID]; len(gone) > 0 {
		n := len(m.Supersedes)
		m.Supersedes = slices.DeleteFunc(m.Supersedes, func(id uint64) bool { return slices.Contains(gone, id) })
		if len(m.Supersedes) == 0 {
			m.Supersedes = nil
		}
		changed = changed || len(m.Supersedes) != n
	}
	return changed
}

func same(id uint64) uint64 { return id }

// refreshSupersededLocked recomputes the cached Superseded state of id and of the memories it
// supersedes, with their bits in s.active, after id was stored or changed. s.mu must be held
// for writing.
func (s *Store) refreshSupersededLocked(id uint64) {
	m := s.mems[id]
	if m == nil {
		return
	}
	m.superseded = s.isSupersededLocked(m)
	s.markLocked(id)
	for _, p := range m.Supersedes {
		if pm := s.mems[p]; pm != nil {
			pm.superseded = s.isSupersededLocked(pm)
			s.markLocked(p)
		}
	}
}

// isSupersededLocked reports whether m's successor is stored and not forgotten.
func (s *Store) isSupersededLocked(m *Memory) bool {
	if m.SupersededBy == nil {
		return false
	}
	to := s.mems[*m.SupersededBy]
	return to != nil && !to.Deleted()
}

// unlinkErasedLocked is what erasing ids does to the memories at the other end of their
// links: copies of them without the erased ids, to write with the erase. The caller holds
// s.writeMu.
func (s *Store) unlinkErasedLocked(ids []uint64) map[uint64]*Memory {
	s.mu.RLock()
	defer s.mu.RUnlock()
	gone := map[uint64]bool{}
	for _, id := range ids {
		gone[id] = true
	}
	fixed := map[uint64]*Memory{}
	edit := func(id uint64) *Memory {
		if c, ok := fixed[id]; ok {
			return c
		}
		c := s.mems[id].Clone()
		fixed[id] = c
		return c
	}
	for _, id := range ids {
		m := s.mems[id]
		if m == nil {
			continue
		}
		for _, p := range m.Supersedes {
			if pm := s.mems[p]; pm != nil && !gone[p] && pm.SupersededBy != nil && *pm.SupersededBy == id {
				edit(p).SupersededBy = nil
			}
		}
		if m.SupersededBy != nil {
			to := *m.SupersededBy
			if tm := s.mems[to]; tm != nil && !gone[to] && slices.Contains(tm.Supersedes, id) {
				c := edit(to)
				c.Supersedes = slices.DeleteFunc(c.Supersedes, func(x uint64) bool { return x == id })
				if len(c.Supersedes) == 0 {
					c.Supersedes = nil
				}
			}
		}
	}
	return fixed
}

// linkSupersedes links pairs of stored memories, each [0] superseded by [1], as an import
// restores them: a pair that the rules refuse (a memory already superseded by another current
// one, a cycle) is skipped and counted in skipped. A forgotten memory may be superseded (the
// link is history, as the export had it), but never so as to close a cycle, whether its ends
// are forgotten or not (SECURITY.md ST-18). err is a storage failure.
func (s *Store) linkSupersedes(pairs [][2]uint64) (skipped int, err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	plan := newLinkPlan()
	adds := map[uint64][]uint64{} // successor → predecessors it gains
	s.mu.RLock()
	for _, pr := range pairs {
		old, to := pr[0], pr[1]
		if s.mems[to] == nil || old == to {
			skipped++
			continue
		}
		if s.successorLocked(plan, old) == to { // linked already
			adds[to] = append(adds[to], old)
			continue
		}
		next, perr := s.planSupersedesLocked(plan, to, []uint64{old})
		if perr != nil {
			// A forgotten memory's link is history: keep it as the export had it, unless the
			// memory has another successor already or the link would close a cycle (which
			// would hide both ends for good once they are restored).
			if m := s.mems[old]; m == nil || !m.Deleted() || s.successorLocked(plan, old) != 0 || s.reachesLocked(plan, to, old) {
				skipped++
				continue
			}
			next = plan.fork()
			next.succ[old] = to
		}
		plan = next
		adds[to] = append(adds[to], old)
	}
	s.mu.RUnlock()
	ids := plan.ids()
	for id := range adds {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	_, err = s.modifyLocked(ids, func(m *Memory) (bool, error) {
		a := plan.apply(m, same)
		b := addSupersedes(m, adds[m.ID])
		return a || b, nil
	}, nil)
	return skipped, err
}
