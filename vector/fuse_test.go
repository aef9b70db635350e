package vector

import (
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
