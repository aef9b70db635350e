package vector

import "sort"

// Fuse combines a lexical and a dense result list into one ranking. Each list is scaled by its
// best score (BM25 scores and cosines at or below zero count as no evidence), so the best hit of
// each list scores 1, and the two are summed with the weights. Ids with no evidence in either
// list are dropped. The result is sorted best first (ties: higher id first) and cut to k.
func Fuse(lexical, dense []Scored, wLexical, wDense float32, k int) []Scored {
	sum := map[uint64]float32{}
	add := func(list []Scored, w float32) {
		var best float32
		for _, s := range list {
			best = max(best, s.Score)
		}
		if best <= 0 || w == 0 {
			return
		}
		for _, s := range list {
			if s.Score > 0 {
				sum[s.ID] += w * s.Score / best
			}
		}
	}
	add(lexical, wLexical)
	add(dense, wDense)
	out := make([]Scored, 0, len(sum))
	for id, s := range sum {
		out = append(out, Scored{ID: id, Score: s})
	}
	sort.Slice(out, func(i, j int) bool { return worse(out[j], out[i]) })
	if k >= 0 && len(out) > k {
		out = out[:k]
	}
	return out
}
