package memory

import "time"

// activeSet answers the zero Filter (active and not superseded) for a search's every candidate
// with a bit test instead of a map lookup and a pointer chase. Ids are dense (the bucket's
// sequence), so a bit per id is small: 12.5 KB per 100k.
type activeSet struct {
	on      []uint64 // stored, not forgotten, not superseded
	expires []uint64 // has an expiry: whether it passed is asked of the memory
}

func (a *activeSet) put(bits *[]uint64, id uint64, v bool) {
	w := int(id >> 6)
	if w >= len(*bits) {
		if !v {
			return
		}
		*bits = append(*bits, make([]uint64, w+1-len(*bits))...)
	}
	if v {
		(*bits)[w] |= 1 << (id & 63)
	} else {
		(*bits)[w] &^= 1 << (id & 63)
	}
}

func get(bits []uint64, id uint64) bool {
	w := int(id >> 6)
	return w < len(bits) && bits[w]&(1<<(id&63)) != 0
}

// markLocked brings id's bits in line with s.mems[id] (absent: both off). Every change to a
// stored memory's record, its superseded state or its presence calls it. s.mu must be held for
// writing.
func (s *Store) markLocked(id uint64) {
	m := s.mems[id]
	s.active.put(&s.active.on, id, m != nil && !m.Deleted() && !m.superseded)
	s.active.put(&s.active.expires, id, m != nil && m.ExpiresAt != nil)
}

// activeLocked reports whether memory id passes the zero Filter at now. s.mu must be held.
func (s *Store) activeLocked(id uint64, now time.Time) bool {
	if !get(s.active.on, id) {
		return false
	}
	return !get(s.active.expires, id) || !s.mems[id].Expired(now)
}

// isZero reports whether f is the zero Filter: every active memory that is not superseded.
func (f *Filter) isZero() bool {
	return !f.IncludeDeleted && !f.IncludeSuperseded && !f.OnlyForgotten && len(f.Tags) == 0 &&
		f.SourceProvider == "" && f.SourceClient == "" && !f.UntaggedOnly && f.MinChars == 0 &&
		f.MaxChars == 0 && f.NotConfirmedSince == nil && f.Since == nil && f.Until == nil && f.Contains == ""
}
