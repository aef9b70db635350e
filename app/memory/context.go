package memory

// A memory's context: the memories written with it. A person's assistant writes the turns of
// one conversation together, and a memory that shares no word with a later question is often
// answered by the one written just before it ("I've always had a great respect for our
// military" after "What inspired you to join it?"). Search lets the words of a memory's
// neighbours count for it, discounted (vector.ContextLexicalWeight, vector.ContextSoftWeight).
//
// The neighbours are derived, never stored: Open computes them from the records in id order
// (which is the order they were written), and every insert and erase keeps them as Open would
// compute them from the file at that moment. So files written before this existed get their
// context on the next start, an import that keeps its records' source, session and times (the
// ownsona export does) keeps their neighbours, and nothing in the file or in a payload names
// them.

import (
	"time"

	"github.com/ownsona/ownsona/vector"
)

// ContextWindow is how far apart in creation time two memories written one after the other by
// the same client, without a session id, may be and still be each other's context: the
// memories a client writes in one sitting. A client that names its conversation (session_id)
// is taken at its word instead, however long the conversation lasts. Items of one
// remember_batch share their creation time, so they are always each other's context. Memories
// of one client written hours apart, unrelated to each other, never are.
const ContextWindow = 5 * time.Minute

// ContextReach is how many memories on each side of a memory are its context: two before and
// two after it. The prototype measured on the LoCoMo dev split (issue 16) used ±2.
const ContextReach = 2

// contextGroup is what memories must share to be each other's context: who wrote them (the
// client and the provider it declared: two assistants on stdio are two writers) and the
// conversation they named, if any.
type contextGroup struct{ client, provider, session string }

func groupOf(m *Memory) contextGroup {
	return contextGroup{m.SourceClient, m.SourceProvider, m.SessionID}
}

// contextLink is a memory's place in its group: the group's memories in id order, each joined
// to the one before it or not.
type contextLink struct {
	prev, next uint64 // the group's memory before and after this one in id order; 0: none
	joined     bool   // prev is this memory's context (joins(prev, this))
}

// joins reports whether b, written after a in a's group, is a's context: the group is a named
// session, or b was written within ContextWindow of a.
func joins(a, b *Memory) bool {
	if a.SessionID != "" {
		return true
	}
	d := b.CreatedAt.Sub(a.CreatedAt)
	return d <= ContextWindow && d >= -ContextWindow
}

// linkLocked places m, just stored under the newest id, at the end of its group, and updates
// the neighbours of the memories within reach (unless loading: Open computes them all at the
// end). s.mu must be held for writing (or the store not yet shared), and m must be in s.mems.
func (s *Store) linkLocked(m *Memory, loading bool) {
	g := groupOf(m)
	l := contextLink{}
	if t, ok := s.tails[g]; ok {
		tl := s.links[t]
		tl.next = m.ID
		s.links[t] = tl
		l.prev, l.joined = t, joins(s.mems[t], m)
	}
	s.links[m.ID] = l
	s.tails[g] = m.ID
	if l.joined && !loading {
		s.renearLocked(m.ID)
	}
}

// nearAllLocked gives BM25 every memory's neighbours from the links, once Open has linked them
// all. s.mu must be held for writing (or the store not yet shared).
func (s *Store) nearAllLocked() {
	var nb []uint64
	for _, id := range s.ids {
		if nb = s.neighboursLocked(nb[:0], id); len(nb) > 0 {
			s.lex.SetContext(id, nb, voiceOf(s.mems[id]))
		}
	}
}

// unlinkLocked takes memory id out of its group, joining the memories on either side of it if
// the rule joins them, as Open would without it. Call it while id and its group are still in
// s.mems. s.mu must be held for writing.
func (s *Store) unlinkLocked(id uint64) {
	l, ok := s.links[id]
	if !ok {
		return
	}
	delete(s.links, id)
	if l.prev != 0 {
		p := s.links[l.prev]
		p.next = l.next
		s.links[l.prev] = p
	}
	if l.next != 0 {
		n := s.links[l.next]
		n.prev = l.prev
		n.joined = l.prev != 0 && joins(s.mems[l.prev], s.mems[l.next])
		s.links[l.next] = n
	} else if g := groupOf(s.mems[id]); l.prev != 0 {
		s.tails[g] = l.prev
	} else {
		delete(s.tails, g)
	}
	// The neighbours of the memories within reach of the gap change.
	if l.prev != 0 {
		s.renearLocked(l.prev)
	} else if l.next != 0 {
		s.renearLocked(l.next)
	}
}

// renearLocked gives BM25 again the neighbours of id and of the memories of its group within
// ContextReach of it, after a change of links there. s.mu must be held for writing.
func (s *Store) renearLocked(id uint64) {
	first := id
	for i := 0; i < ContextReach; i++ {
		p := s.links[first].prev
		if p == 0 {
			break
		}
		first = p
	}
	var nb []uint64
	for x, i := first, 0; x != 0 && i <= 2*ContextReach; i++ {
		nb = s.neighboursLocked(nb[:0], x)
		s.lex.SetContext(x, nb, voiceOf(s.mems[x]))
		x = s.links[x].next
	}
}

// neighboursLocked appends memory id's context to dst, computed from the links: up to
// ContextReach joined memories before it, nearest first, then after it, forgotten ones included.
// It is not cached: at most 2·ContextReach lookups of s.links, where a map of every memory's
// list cost ~7 MiB at 100k. s.mu must be held.
func (s *Store) neighboursLocked(dst []uint64, id uint64) []uint64 {
	l := s.links[id]
	for c, i := l, 0; i < ContextReach && c.joined; i++ {
		dst = append(dst, c.prev)
		c = s.links[c.prev]
	}
	for c, i := l, 0; i < ContextReach && c.next != 0; i++ {
		id := c.next
		c = s.links[id]
		if !c.joined {
			break
		}
		dst = append(dst, id)
	}
	return dst
}

// voiceOf says whether m's words count for its neighbours in BM25: never once forgotten
// (forgotten text never influences a result), and while active when it expires (asked at each
// search, by speaks).
func voiceOf(m *Memory) vector.Voice {
	switch {
	case m.Deleted():
		return vector.Quiet
	case m.ExpiresAt != nil:
		return vector.Ask
	}
	return vector.Speaks
}

// speaks is SearchContext's speaks filter at now: an active memory's words count for its
// neighbours. s.mu must be held while it is used.
func (s *Store) speaks(now time.Time) vector.Filter {
	return func(id uint64) bool { m := s.mems[id]; return m != nil && m.Active(now) }
}

// activeNeighboursLocked appends to dst memory id's neighbours that are active at now: the
// texts that count for it. s.mu must be held.
func (s *Store) activeNeighboursLocked(dst []uint64, id uint64, now time.Time) []uint64 {
	n := len(dst)
	dst = s.neighboursLocked(dst, id)
	active := dst[:n]
	for _, x := range dst[n:] {
		if s.mems[x].Active(now) {
			active = append(active, x)
		}
	}
	return active
}
