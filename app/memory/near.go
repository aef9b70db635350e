package memory

// Near duplicates and possible contradictions of a new memory are found by a search of the
// stored memories by vector (lexically without one). Until the HNSW graph serves, that search
// scans every vector, so it runs before the insert takes s.writeMu (presearch), on all cores
// for the items of a batch, and under the lock only the memories written since are scored
// (nearLocked); the answers are those of a search under the lock.

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/vector"
)

// similarLocked finds active, current (not superseded) memories whose similarity to text (by
// vector when one is given, else lexically) is at least threshold, best first, at most limit,
// leaving out those exclude names (nil: none). The memories queued for the next commit count
// too (commit.go). s.mu must be held.
func (s *Store) similarLocked(text string, vec []float32, limit int, threshold float32, exclude func(uint64) bool) []NearDuplicate {
	now := s.now()
	if s.byVectorLocked(vec) {
		hits := s.similarStoredLocked(vec, limit, threshold, exclude, now)
		return s.finishSimilarLocked(hits, vec, limit, threshold, exclude, now)
	}
	var out []NearDuplicate
	for _, r := range s.lex.Search(text, 4*limit, s.nearFilter(exclude, now)) {
		m := s.mems[r.ID]
		if sim := vector.LexicalSimilarity(text, m.Text); sim >= threshold {
			out = append(out, NearDuplicate{ID: r.ID, Text: m.Text, Score: round4(sim)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return s.similarQueuedLocked(out, text, limit, threshold, exclude, now)
}

// byVectorLocked reports whether near duplicates of a text with vector vec (nil: none) are
// found by vector rather than lexically. s.mu must be held.
func (s *Store) byVectorLocked(vec []float32) bool {
	return vec != nil && s.dense != nil && len(vec) == s.dense.Dim()
}

// nearFilter is the filter of a near-duplicate search at now. s.mu must be held while it runs.
func (s *Store) nearFilter(exclude func(uint64) bool, now time.Time) vector.Filter {
	return func(id uint64) bool {
		return s.activeLocked(id, now) && (exclude == nil || !exclude(id))
	}
}

// similarStoredLocked is the search by vector of similarLocked over the stored memories only,
// with the vector index's scores. s.mu must be held.
func (s *Store) similarStoredLocked(vec []float32, limit int, threshold float32, exclude func(uint64) bool, now time.Time) []vector.Scored {
	hits := s.dense.Search(vec, limit, s.nearFilter(exclude, now))
	return slices.DeleteFunc(hits, func(r vector.Scored) bool { return r.Score < threshold })
}

// finishSimilarLocked adds the queued memories similar by vector to hits (stored memories
// scoring at least threshold), and returns the best limit, best first (ties: higher id first,
// as the vector index orders them). s.mu must be held.
func (s *Store) finishSimilarLocked(hits []vector.Scored, vec []float32, limit int, threshold float32, exclude func(uint64) bool, now time.Time) []NearDuplicate {
	if len(s.queued) > 0 {
		for _, r := range s.queued {
			for _, q := range r.mems {
				if q.vec == nil || len(q.vec) != len(vec) || !q.m.Active(now) || (exclude != nil && exclude(q.m.ID)) {
					continue
				}
				if score := vector.ExactCosine(vec, q.vec); score >= threshold {
					hits = append(hits, vector.Scored{ID: q.m.ID, Score: score})
				}
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b vector.Scored) int {
		if a.Score != b.Score {
			return cmp.Compare(b.Score, a.Score)
		}
		return cmp.Compare(b.ID, a.ID)
	})
	hits = hits[:min(limit, len(hits))]
	out := make([]NearDuplicate, 0, len(hits))
	for _, r := range hits {
		text := ""
		if m := s.mems[r.ID]; m != nil {
			text = m.Text
		} else {
			text = s.queuedText(r.ID)
		}
		out = append(out, NearDuplicate{ID: r.ID, Text: text, Score: round4(r.Score)})
	}
	return out
}

// queuedText is the text of queued memory id. s.mu must be held.
func (s *Store) queuedText(id uint64) string {
	for _, r := range s.queued {
		for _, q := range r.mems {
			if q.m.ID == id {
				return q.m.Text
			}
		}
	}
	return ""
}

// similarQueuedLocked adds to out, best first and at most limit, the memories queued for the
// next commit that are lexically similar to text. s.mu must be held.
func (s *Store) similarQueuedLocked(out []NearDuplicate, text string, limit int, threshold float32, exclude func(uint64) bool, now time.Time) []NearDuplicate {
	added := false
	for _, r := range s.queued {
		for _, q := range r.mems {
			m := q.m
			if !m.Active(now) || (exclude != nil && exclude(m.ID)) {
				continue
			}
			if sim := vector.LexicalSimilarity(text, m.Text); sim >= threshold {
				out = append(out, NearDuplicate{ID: m.ID, Text: m.Text, Score: round4(sim)})
				added = true
			}
		}
	}
	if !added {
		return out
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

// nearSnap is a near-duplicate search by vector over the stored memories, made before
// s.writeMu is taken (presearch) and brought up to date under it (nearLocked).
type nearSnap struct {
	last uint64          // the newest stored id when it ran
	gen  uint64          // s.modGen when it ran
	hits []vector.Scored // at least the threshold, best first, at most the limit
}

// Near-duplicate searches of an insert: at most nearLimit similar memories from
// nearThreshold on.
const nearLimit = 10

func (s *Store) nearThreshold() float32 { return min(ContradictionThreshold, s.dedupThreshold) }

// presearch runs the near-duplicate search by vector of every item that needs one, on all
// cores, before the caller takes s.writeMu: the costly part of an insert (a scan of every
// vector until the HNSW graph serves) then no longer holds up other writers. An item left nil
// is searched under the lock.
func (s *Store) presearch(items []*newMemory) []*nearSnap {
	snaps := make([]*nearSnap, len(items))
	var todo []int
	for i, it := range items {
		if it.Policy != DedupInsert && it.Vector != nil {
			todo = append(todo, i)
		}
	}
	one := func(i int) {
		it := items[i]
		exclude := func(id uint64) bool { return slices.Contains(it.Supersedes, id) }
		s.mu.RLock()
		defer s.mu.RUnlock()
		if !s.byVectorLocked(it.Vector) {
			return
		}
		snap := &nearSnap{gen: s.modGen}
		if n := len(s.ids); n > 0 {
			snap.last = s.ids[n-1]
		}
		snap.hits = s.similarStoredLocked(it.Vector, nearLimit, s.nearThreshold(), exclude, s.now())
		snaps[i] = snap
	}
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	if workers <= 1 {
		for _, i := range todo {
			one(i)
		}
		return snaps
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := int(next.Add(1)) - 1; j < len(todo); j = int(next.Add(1)) - 1 {
				one(todo[j])
			}
		})
	}
	wg.Wait()
	return snaps
}

// nearLocked is similarLocked(text, vec, nearLimit, s.nearThreshold(), exclude), from snap (nil:
// none) when it still holds: when no memory changed since but by the new ones, whose vectors
// are then scored, and none of its hits left the search (or fewer than the limit did not
// leave room for another). s.mu must be held.
func (s *Store) nearLocked(text string, vec []float32, snap *nearSnap, exclude func(uint64) bool) []NearDuplicate {
	threshold := s.nearThreshold()
	if snap == nil || snap.gen != s.modGen || !s.byVectorLocked(vec) {
		return s.similarLocked(text, vec, nearLimit, threshold, exclude)
	}
	now := s.now()
	filter := s.nearFilter(exclude, now)
	hits := make([]vector.Scored, 0, len(snap.hits))
	for _, h := range snap.hits {
		if filter(h.ID) {
			hits = append(hits, h)
		}
	}
	if len(hits) < len(snap.hits) && len(snap.hits) == nearLimit {
		return s.similarLocked(text, vec, nearLimit, threshold, exclude) // the next best is unknown
	}
	for i := len(s.ids) - 1; i >= 0 && s.ids[i] > snap.last; i-- {
		id := s.ids[i]
		if !filter(id) {
			continue
		}
		if v, ok := s.dense.Get(id); ok {
			if score := vector.ExactCosine(vec, v); score >= threshold {
				hits = append(hits, vector.Scored{ID: id, Score: score})
			}
		}
	}
	return s.finishSimilarLocked(hits, vec, nearLimit, threshold, exclude, now)
}
