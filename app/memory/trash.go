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
// its expiry has passed meanwhile (an update of expires_at mends that). An id listed twice
// fails the second time. err is a storage failure, after which nothing was restored.
func (s *Store) Restore(ids []uint64) ([]Restored, error) {
	now := s.now().UTC()
	already := map[uint64]bool{}
	errs, err := s.modify(ids, func(m *Memory) (bool, error) {
		if !m.Deleted() {
			already[m.ID] = true
			return false, nil
		}
		m.DeletedAt, m.ForgetReason, m.ReplacedByID, m.UpdatedAt = nil, "", nil, now
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return perID[Restored](ids, errs, already), nil
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
