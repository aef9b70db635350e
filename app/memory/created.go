package memory

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// A question's time words ("last year", "in March") set a window of creation times, and a
// window that holds few memories made every search ask Filter.match (a map lookup and a
// pointer chase) about every memory: the vector index falls back to a scan of all of them when
// its filter is selective, and an empty window then lists the newest memories by walking every
// id. At 100k that cost tens of milliseconds per question. The store keeps its memories in
// creation order too, so a window is two binary searches and a bit per id.

// createdID is one entry of the creation-time order.
type createdID struct {
	at time.Time
	id uint64
}

func compareCreated(a, b createdID) int {
	if c := a.at.Compare(b.at); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// sortCreatedLocked rebuilds the creation-time order from s.mems. s.mu must be held for
// writing, or the store not yet shared.
func (s *Store) sortCreatedLocked() {
	s.created = make([]createdID, 0, len(s.ids))
	for _, id := range s.ids {
		s.created = append(s.created, createdID{s.mems[id].CreatedAt, id})
	}
	slices.SortFunc(s.created, compareCreated)
}

// addCreatedLocked puts newly stored memories in the creation-time order: appended when they
// are the newest (remember), merged in one pass when some are older (an import of another
// tool's history), never one insertion per memory. s.mu must be held for writing.
func (s *Store) addCreatedLocked(mems []queuedMemory) {
	n := len(s.created)
	for _, q := range mems {
		s.created = append(s.created, createdID{q.m.CreatedAt, q.m.ID})
	}
	added := s.created[n:]
	slices.SortFunc(added, compareCreated)
	if n == 0 || len(added) == 0 || compareCreated(s.created[n-1], added[0]) < 0 {
		return
	}
	old := s.created[:n]
	merged := make([]createdID, 0, len(s.created))
	for len(old) > 0 && len(added) > 0 {
		if compareCreated(old[0], added[0]) < 0 {
			merged, old = append(merged, old[0]), old[1:]
		} else {
			merged, added = append(merged, added[0]), added[1:]
		}
	}
	s.created = append(append(merged, old...), added...)
}

// windowLocked returns a bit per id (see get) of the memories created in f's window, both ends
// included as Filter.match has them; nil when f has no window or every memory is in it (the
// caller then asks Filter.match alone). s.mu must be held.
func (s *Store) windowLocked(f *Filter) []uint64 {
	if f.Since == nil && f.Until == nil {
		return nil
	}
	lo, hi := 0, len(s.created)
	if f.Since != nil { // the first created at or after since
		lo = sort.Search(len(s.created), func(i int) bool { return !s.created[i].at.Before(*f.Since) })
	}
	if f.Until != nil { // the first created after until
		hi = sort.Search(len(s.created), func(i int) bool { return s.created[i].at.After(*f.Until) })
	}
	if lo == 0 && hi >= len(s.created) {
		return nil // every memory is in it: the bits would rule out none
	}
	var bits []uint64
	var a activeSet
	for _, e := range s.created[lo:max(lo, hi)] {
		a.put(&bits, e.id, true)
	}
	if bits == nil {
		bits = []uint64{} // a window with nothing in it is still a window
	}
	return bits
}
