package vector

import (
	"slices"
	"sync"
	"testing"
)

func TestWordCounts(t *testing.T) {
	c, err := NewWordCounts()
	if err != nil {
		t.Fatal(err)
	}
	g := c.g
	row := func(w string) int32 {
		t.Helper()
		r, ok := g.row(w)
		if !ok {
			t.Fatalf("%q is not in the vocabulary", w)
		}
		return r
	}
	c.Add("I don't like Colby's puppies, Zxqwvblorp!")
	// do, not (the contraction's two words), like, colby (the possessive goes), puppies; "i"
	// (the vocabulary has no single letters) and the unknown word are not counted.
	if got, want := c.Total(), int64(5); got != want {
		t.Errorf("Total = %d, want %d", got, want)
	}
	for _, w := range []string{"do", "not", "like", "colby"} {
		if got := c.count[row(w)]; got != 1 {
			t.Errorf("count of %q = %d, want 1", w, got)
		}
	}
	c.Add("Colby, colby")
	if got := c.count[row("puppies")]; got != 1 {
		t.Errorf("count of puppies = %d, want 1", got)
	}
	if got := c.count[row("colby")]; got != 3 {
		t.Errorf("count of colby = %d, want 3", got)
	}
	c.Remove("I don't like Colby's puppies, Zxqwvblorp!")
	c.Remove("Colby, colby")
	if c.Total() != 0 || slices.ContainsFunc(c.count, func(n int32) bool { return n != 0 }) {
		t.Errorf("after removing every text: total %d, counts not all zero", c.Total())
	}
}

func TestWordCounts_concurrent(t *testing.T) {
	c, err := NewWordCounts()
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuiltin()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for range 100 {
				if i%2 == 0 {
					c.Add("we drank espresso in Rome")
				} else {
					b.SoftMatch("coffee in Italy", []string{"we drank espresso in Rome"}, c)
				}
			}
		})
	}
	wg.Wait()
	one, err := NewWordCounts()
	if err != nil {
		t.Fatal(err)
	}
	one.Add("we drank espresso in Rome")
	if got, want := c.Total(), 200*one.Total(); got != want {
		t.Errorf("Total = %d, want %d", got, want)
	}
}
