package vector

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestFuse(t *testing.T) {
	lex := []Scored{{1, 9}, {2, 5}, {5, 1}}         // normalized 1, 0.5, 0
	dense := []Scored{{2, 0.9}, {3, 0.5}, {4, 0.1}} // normalized 1, 0.5, 0
	tests := []struct {
		name       string
		lex, dense []Scored
		wl, wd     float32
		k          int
		want       []Scored
	}{
		{"weighted min-max sum", lex, dense, 0.5, 0.5, 10,
			[]Scored{{2, 0.75}, {1, 0.5}, {3, 0.25}, {5, 0}, {4, 0}}},
		{"weights shift the order", lex, dense, 0.8, 0.2, 10,
			[]Scored{{1, 0.8}, {2, 0.6}, {3, 0.1}, {5, 0}, {4, 0}}},
		{"cut to k", lex, dense, 0.5, 0.5, 2, []Scored{{2, 0.75}, {1, 0.5}}},
		{"lexical only", lex, nil, 1, 0, 10, []Scored{{1, 1}, {2, 0.5}, {5, 0}}},
		{"dense only keeps negative cosines in order", nil, []Scored{{7, 0.2}, {8, -0.6}}, 0, 1, 10,
			[]Scored{{7, 1}, {8, 0}}},
		{"equal scores normalize to 1", []Scored{{1, 3}, {2, 3}}, nil, 1, 1, 10, []Scored{{2, 1}, {1, 1}}},
		{"single hit", nil, []Scored{{4, 0.3}}, 0.5, 0.5, 10, []Scored{{4, 0.5}}},
		{"k zero", lex, dense, 0.5, 0.5, 0, nil},
		{"both empty", nil, nil, 0.5, 0.5, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Fuse(tt.lex, tt.dense, tt.wl, tt.wd, tt.k)
			if !slices.EqualFunc(got, tt.want, func(a, b Scored) bool { return a.ID == b.ID && near(a.Score, b.Score) }) {
				t.Errorf("Fuse = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestAtLeast(t *testing.T) {
	list := []Scored{{1, 0.8}, {2, 0.7}, {3, 0.6}, {4, 0.35}, {5, 0.2}}
	for _, tc := range []struct {
		floor, margin float32
		want          int
	}{
		{0.3, 0, 4}, {0.9, 0, 0}, {0, 0, 5}, {0.3, 0.15, 2}, {0.3, 0.25, 3}, {0.7, 0.5, 2},
	} {
		if got := AtLeast(list, tc.floor, tc.margin); len(got) != tc.want {
			t.Errorf("AtLeast(floor %v, margin %v) kept %v, want the first %d", tc.floor, tc.margin, got, tc.want)
		}
	}
	if got := AtLeast(nil, 0.3, 0.1); len(got) != 0 {
		t.Errorf("AtLeast(nil) = %v", got)
	}
}

// TestFuseBonus: the bonus is added as it is, so a candidate with the better bonus overtakes
// only by the bonus's real margin; with no bonus weight it is Fuse.
func TestFuseBonus(t *testing.T) {
	lex := []Scored{{1, 3}, {2, 1}}
	dense := []Scored{{2, 0.9}, {3, 0.5}}
	ids := Candidates(lex, dense)
	if want := []uint64{1, 2, 3}; !slices.Equal(ids, want) {
		t.Fatalf("Candidates = %v, want %v", ids, want)
	}
	if got, want := FuseBonus(lex, dense, 0.5, 0.5, ids, []float32{0, 0, 1}, 0, 3), Fuse(lex, dense, 0.5, 0.5, 3); !slices.Equal(got, want) {
		t.Errorf("with no bonus weight: %v, want Fuse's %v", got, want)
	}
	// Fuse: 1 → 0.5, 2 → 0.5, 3 → 0. Bonuses 0.2, 0.3, 0.9 at weight 1.
	got := FuseBonus(lex, dense, 0.5, 0.5, ids, []float32{0.2, 0.3, 0.9}, 1, 2)
	if want := []Scored{{3, 0.9}, {2, 0.8}}; !slices.Equal(got, want) {
		t.Errorf("FuseBonus = %v, want %v", got, want)
	}
}

// TestFuse_pooled: the maps Fuse, Candidates and FuseBonus keep for the next call carry
// nothing over; every call of a random sequence answers as the same function with maps of its
// own (kept here as the reference) does, and AppendCandidates keeps what its slice held.
func TestFuse_pooled(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	list := func() []Scored {
		var l []Scored
		for _, id := range r.Perm(40)[:r.IntN(30)] {
			l = append(l, Scored{ID: uint64(id + 1), Score: float32(r.IntN(8))})
		}
		return l
	}
	for round := range 500 {
		lex, dense := list(), list()
		ids := Candidates(lex, dense)
		if want := candidatesRef(lex, dense); !slices.Equal(ids, want) {
			t.Fatalf("round %d: Candidates = %v, want %v", round, ids, want)
		}
		if got := AppendCandidates([]uint64{7, 7}, lex, dense); !slices.Equal(got[:2], []uint64{7, 7}) || !slices.Equal(got[2:], ids) {
			t.Fatalf("round %d: AppendCandidates = %v, want [7 7] then %v", round, got, ids)
		}
		if got, want := Fuse(lex, dense, 0.6, 0.4, 10), fuseRef(lex, dense, 0.6, 0.4, 10); !slices.Equal(got, want) {
			t.Fatalf("round %d: Fuse = %v, want %v", round, got, want)
		}
		bonus := make([]float32, len(ids))
		for i := range bonus {
			bonus[i] = float32(r.IntN(4)) / 4
		}
		got := FuseBonus(lex, dense, 0.6, 0.4, ids, bonus, 0.3, 10)
		want := fuseRef(lex, dense, 0.6, 0.4, len(lex)+len(dense))
		for i := range want {
			want[i].Score += 0.3 * bonus[slices.Index(ids, want[i].ID)]
		}
		slices.SortFunc(want, compareBest)
		if want = want[:min(10, len(want))]; !slices.Equal(got, want) {
			t.Fatalf("round %d: FuseBonus = %v, want %v", round, got, want)
		}
	}
}

// fuseRef is Fuse with a map of its own.
func fuseRef(lexical, dense []Scored, wLexical, wDense float32, k int) []Scored {
	if k <= 0 || len(lexical)+len(dense) == 0 {
		return nil
	}
	sum := map[uint64]float32{}
	for _, l := range []struct {
		list []Scored
		w    float32
	}{{lexical, wLexical}, {dense, wDense}} {
		if len(l.list) == 0 {
			continue
		}
		lo, hi := l.list[0].Score, l.list[0].Score
		for _, s := range l.list {
			lo, hi = min(lo, s.Score), max(hi, s.Score)
		}
		for _, s := range l.list {
			norm := float32(1)
			if hi > lo {
				norm = (s.Score - lo) / (hi - lo)
			}
			sum[s.ID] += l.w * norm
		}
	}
	var out []Scored
	for id, score := range sum {
		out = append(out, Scored{ID: id, Score: score})
	}
	slices.SortFunc(out, compareBest)
	return out[:min(k, len(out))]
}

// candidatesRef is Candidates with a map of its own.
func candidatesRef(lists ...[]Scored) []uint64 {
	var ids []uint64
	seen := map[uint64]bool{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s.ID] {
				seen[s.ID] = true
				ids = append(ids, s.ID)
			}
		}
	}
	return ids
}

// BenchmarkFuseBonus fuses lists of a recall's sizes (40 lexical, 32 dense hits) with a bonus
// for each candidate, as Store.Search does, and reports what that allocates.
func BenchmarkFuseBonus(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	var lex, dense []Scored
	for i := range 40 {
		lex = append(lex, Scored{ID: uint64(r.IntN(100_000)), Score: 10 - float32(i)/4})
	}
	for i := range 32 {
		dense = append(dense, Scored{ID: uint64(r.IntN(100_000)), Score: 0.9 - float32(i)/100})
	}
	bonus := make([]float32, 72)
	b.ReportAllocs()
	for b.Loop() {
		ids := Candidates(lex, dense)
		FuseBonus(lex, dense, 0.5, 0.5, ids, bonus[:len(ids)], 0.2, 8)
	}
}
