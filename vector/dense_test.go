package vector

import (
	"math/rand/v2"
	"sync"
	"testing"
)

func randomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return normalized(v)
}

// TestDense_SwitchesToGraph: below the threshold searches are exact; past it the graph is built
// in the background, changes made during the build reach it, and afterwards searches come from
// the graph with the answers of the exact index.
func TestDense_SwitchesToGraph(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim, n = 32, 3000
	d := NewDense(dim, 1000, HNSWConfig{Seed: 1})
	vecs := map[uint64][]float32{}
	for id := uint64(1); id < 1000; id++ {
		vecs[id] = randomUnit(rng, dim)
		if err := d.Add(id, vecs[id]); err != nil {
			t.Fatal(err)
		}
	}
	if d.Graph() || d.Building() {
		t.Fatal("a graph was started below the threshold")
	}
	var wg sync.WaitGroup
	removed := map[uint64]bool{}
	for id := uint64(1000); id <= n; id++ { // the 1000th vector starts the build
		vecs[id] = randomUnit(rng, dim)
		if err := d.Add(id, vecs[id]); err != nil {
			t.Fatal(err)
		}
		if id%7 == 0 {
			d.Remove(id - 500)
			removed[id-500] = true
		}
		if id%100 == 0 { // searches keep answering during the build
			wg.Add(1)
			go func(q []float32) {
				defer wg.Done()
				if got := d.Search(q, 5, nil); len(got) != 5 {
					t.Errorf("a search during the build returned %d results", len(got))
				}
			}(vecs[id])
		}
	}
	wg.Wait()
	<-d.Build()
	if !d.Graph() {
		t.Fatal("the graph does not serve after the build")
	}
	if d.Len() != n-len(removed) {
		t.Errorf("Len = %d, want %d", d.Len(), n-len(removed))
	}
	hits := 0
	for id, v := range vecs {
		got := d.Search(v, 10, nil)
		for _, s := range got {
			if removed[s.ID] {
				t.Fatalf("removed id %d returned", s.ID)
			}
		}
		if !removed[id] && len(got) > 0 && got[0].ID == id {
			hits++
		}
	}
	if want := (n - len(removed)) * 95 / 100; hits < want {
		t.Errorf("each live vector finds itself first %d times of %d, want at least %d", hits, n-len(removed), want)
	}
}
