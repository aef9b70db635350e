package memory

// The trash: forgotten memories keep their tombstone until the owner restores them or empties
// the trash (the console's Trash page).

import (
	"slices"
)

// Restored is the outcome of restoring one id.
type Restored struct {
	ID      uint64
	Already bool  // it was not forgotten; nothing changed
	Err     error // ErrNotFound, or *InputError for an id listed twice
}

// Restore brings forgotten memories back from the trash in one transaction: each loses its
// tombstone (deleted_at, forget_reason, replaced_by_id) and is listed and found again, unless
// its expiry has passed meanwhile (an update of expires_at mends that) or it is superseded by
// a memory that is not forgotten. A memory superseded by the memory that replaced it (a
// previous version that Update kept) leaves that chain as it is restored: it becomes a memory
// of its own again, and its successor stops listing it. An id listed twice fails the second
// time. err is a storage failure, after which nothing was restored.
func (s *Store) Restore(ids []uint64) ([]Restored, error) {
	now := s.now().UTC()
	already := map[uint64]bool{}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	// The successors of the versions restored, which stop listing them.
	detach := map[uint64][]uint64{}
	touch := slices.Clone(ids)
	s.mu.RLock()
	for _, id := range ids {
		if m := s.mems[id]; m != nil && isVersion(m) {
			to := *m.SupersededBy
			if detach[to] == nil && !slices.Contains(ids, to) && s.mems[to] != nil {
				touch = append(touch, to)
			}
			detach[to] = append(detach[to], id)
		}
	}
	s.mu.RUnlock()
	restoring := map[uint64]bool{}
	for _, id := range ids {
		restoring[id] = true
	}
	errs, err := s.modifyLocked(touch, func(m *Memory) (bool, error) {
		changed := false
		if gone := detach[m.ID]; len(gone) > 0 {
			n := len(m.Supersedes)
			m.Supersedes = slices.DeleteFunc(m.Supersedes, func(id uint64) bool { return slices.Contains(gone, id) })
			if len(m.Supersedes) == 0 {
				m.Supersedes = nil
			}
			changed = len(m.Supersedes) != n
		}
		if !restoring[m.ID] {
			return changed, nil
		}
		if !m.Deleted() {
			already[m.ID] = true
			return changed, nil
		}
		if isVersion(m) {
			m.SupersededBy = nil
		}
		m.DeletedAt, m.ForgetReason, m.ReplacedByID, m.UpdatedAt = nil, "", nil, now
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return perID[Restored](ids, errs, already), nil
}

// isVersion reports whether m is a forgotten memory superseded by the memory that replaced it:
// the previous text of an updated memory (Update), or a memory its correction replaced.
func isVersion(m *Memory) bool {
	return m.Deleted() && m.SupersededBy != nil && m.ReplacedByID != nil && *m.SupersededBy == *m.ReplacedByID
}

// EmptyTrash erases every forgotten memory for good, with its vector and index entries, in one
// transaction, and returns the ids it erased, oldest first. Their ids are never reused. Active
// and expired memories stay. err is a storage failure, after which nothing was erased.
func (s *Store) EmptyTrash() ([]uint64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.drainLocked()
	var ids []uint64
	s.mu.RLock()
	for _, id := range s.ids {
		if s.mems[id].Deleted() {
			ids = append(ids, id)
		}
	}
	s.mu.RUnlock()
	if err := s.eraseLocked(ids); err != nil {
		return nil, err
	}
	return slices.Clip(ids), nil
}
