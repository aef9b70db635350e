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

// addCreatedLocked puts newly stored memories in the creation-time order, merging from the
// newest end in place: only the entries newer than the oldest added one move. Writers take
// their time before their turn, so concurrent writers' memories often arrive a little out of
// order, and a merge that rebuilt the whole order (at 100k, 3 MB per commit) made 16 clients
// over HTTP three times slower; an import of another tool's history still moves what it must,
// once per commit, never once per memory. s.mu must be held for writing.
func (s *Store) addCreatedLocked(mems []queuedMemory) {
	added := make([]createdID, 0, len(mems))
	for _, q := range mems {
		added = append(added, createdID{q.m.CreatedAt, q.m.ID})
	}
	slices.SortFunc(added, compareCreated)
	n := len(s.created)
	s.created = append(s.created, added...) // the room; the merge below overwrites it
	i, j := n-1, len(added)-1
	for k := len(s.created) - 1; j >= 0; k-- {
		if i >= 0 && compareCreated(s.created[i], added[j]) > 0 {
			s.created[k], i = s.created[i], i-1
		} else {
			s.created[k], j = added[j], j-1
		}
	}
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
