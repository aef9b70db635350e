package vector

import (
	"slices"
	"sync"
)

// Fuse combines a lexical and a dense result list into one ranking. Each list's scores are
// min-max normalized to [0, 1] (its best hit scores 1, its worst 0; a list whose scores are
// all equal scores 1 throughout), weighted, and summed per id; an id missing from a list gets
// 0 from it. Every id of either list is kept. The result is sorted best first (ties: higher id
// first) and cut to k; k <= 0 returns nil. Each list is expected to hold an id at most once,
// as Search returns them.
//
// Min-max fusion rather than reciprocal-rank fusion because it keeps how much better the best
// hits are: on the LoCoMo dev split, 0.5·BM25 + 0.5·GloVe-SIF reached recall@10 0.64 fused by
// min-max and 0.58 by reciprocal rank (k 60).
func Fuse(lexical, dense []Scored, wLexical, wDense float32, k int) []Scored {
	if k <= 0 || len(lexical)+len(dense) == 0 {
		return nil
	}
	pos := positions.get()
	defer positions.put(pos)
	out := make([]Scored, 0, len(lexical)+len(dense))
	add := func(list []Scored, w float32) {
		if len(list) == 0 {
			return
		}
		lo, hi := list[0].Score, list[0].Score
		for _, s := range list[1:] {
			lo, hi = min(lo, s.Score), max(hi, s.Score)
		}
		for _, s := range list {
			norm := float32(1)
			if hi > lo {
				norm = (s.Score - lo) / (hi - lo)
			}
			i, ok := pos[s.ID]
			if !ok {
				i = len(out)
				pos[s.ID] = i
				out = append(out, Scored{ID: s.ID})
			}
			out[i].Score += w * norm
		}
	}
	add(lexical, wLexical)
	add(dense, wDense)
	slices.SortFunc(out, compareBest)
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// AtLeast returns the leading hits of list (sorted best first, as Search returns it) that score
// at least floor and at least the best score less margin. Dense search always proposes its
// nearest neighbours, however far; cutting them at a similarity floor, and where they fall far
// behind the best hit, keeps unrelated memories out of a fused ranking. A margin ≤ 0 means no
// relative cut.
func AtLeast(list []Scored, floor, margin float32) []Scored {
	if len(list) > 0 && margin > 0 {
		floor = max(floor, list[0].Score-margin)
	}
	for i, s := range list {
		if s.Score < floor {
			return list[:i]
		}
	}
	return list
}

// Candidates returns the ids of lists, each once, in the order they first appear: the
// candidates a re-ranking signal (SoftMatch) scores.
func Candidates(lists ...[]Scored) []uint64 { return AppendCandidates(nil, lists...) }

// AppendCandidates is Candidates appending the ids to dst (whose own ids it does not look at).
func AppendCandidates(dst []uint64, lists ...[]Scored) []uint64 {
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	ids := slices.Grow(dst, n)
	seen := positions.get()
	defer positions.put(seen)
	for _, l := range lists {
		for _, s := range l {
			if _, ok := seen[s.ID]; !ok {
				seen[s.ID] = 0
				ids = append(ids, s.ID)
			}
		}
	}
	return ids
}

// FuseBonus is Fuse of lexical and dense, plus for each candidate wBonus times its bonus score
// as it is, not normalized: ids[i] has bonus[i], an absolute score in [0, 1] such as
// SoftMatch's. Min-max normalizing a signal that every candidate has would stretch the tiny
// differences among the few candidates of a small store to the whole range. An id that is in
// neither list is ignored. The result is sorted best first (ties: higher id first) and cut to k.
func FuseBonus(lexical, dense []Scored, wLexical, wDense float32, ids []uint64, bonus []float32, wBonus float32, k int) []Scored {
	ranked := Fuse(lexical, dense, wLexical, wDense, len(lexical)+len(dense))
	extra := bonuses.get()
	defer bonuses.put(extra)
	for i, id := range ids {
		extra[id] = bonus[i]
	}
	for i := range ranked {
		ranked[i].Score += wBonus * extra[ranked[i].ID]
	}
	slices.SortFunc(ranked, compareBest)
	return ranked[:min(max(k, 0), len(ranked))]
}

// A recall fuses a few hundred candidates through three maps by id; they are kept for the next
// search instead of being built and dropped each time (~7 KB of garbage per recall).
var (
	positions mapPool[int]
	bonuses   mapPool[float32]
)

// mapPool keeps emptied maps keyed by id.
type mapPool[V any] struct{ p sync.Pool }

func (mp *mapPool[V]) get() map[uint64]V {
	if m, ok := mp.p.Get().(map[uint64]V); ok {
		return m
	}
	return make(map[uint64]V)
}

func (mp *mapPool[V]) put(m map[uint64]V) {
	clear(m)
	mp.p.Put(m)
}
