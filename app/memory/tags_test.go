package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// TestStore_AddTags: tags are added to each memory in one change, normalized, without
// duplicates, each memory succeeding or failing on its own.
func TestStore_AddTags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, nil)
		a := remember(t, s, memory.Draft{Text: "Ana is my sister", Tags: []string{"family"}})
		b := remember(t, s, memory.Draft{Text: "Ana lives in Lisbon", Tags: []string{"family", "travel"}})
		full := remember(t, s, memory.Draft{Text: "Tagged to the brim", Tags: manyTags(32)})
		gone := remember(t, s, memory.Draft{Text: "Forgotten fact"})
		if _, err := s.Forget([]uint64{gone}, memory.Forgetting{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddTags([]uint64{a}, []string{"ok", "!"}); fieldOf(err) != "tags[1]" {
			t.Errorf("an invalid tag: %v, want an InputError on tags[1]", err)
		}
		if _, err := s.AddTags([]uint64{a}, []string{" , "}); fieldOf(err) != "tags" {
			t.Errorf("no tag: %v, want an InputError on tags", err)
		}
		var heard [][]uint64
		s.OnChange(func(ids []uint64) { heard = append(heard, slices.Clone(ids)) })
		time.Sleep(time.Minute)
		res, err := s.AddTags([]uint64{a, b, full, gone, 404, a}, []string{"Travel", "ana"})
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []struct {
			changed []string
			field   string
			is      error
		}{
			{[]string{"tags"}, "", nil},
			{[]string{"tags"}, "", nil},
			{[]string{}, "tags", nil},
			{[]string{}, "", memory.ErrForgotten},
			{[]string{}, "", memory.ErrNotFound},
			{[]string{}, "ids[5]", nil},
		} {
			r := res[i]
			switch {
			case !slices.Equal(r.Changed, want.changed):
				t.Errorf("item %d: changed %v, want %v", i, r.Changed, want.changed)
			case want.is != nil && !errors.Is(r.Err, want.is):
				t.Errorf("item %d: %v, want %v", i, r.Err, want.is)
			case want.is == nil && fieldOf(r.Err) != want.field:
				t.Errorf("item %d: %v, want an error on %q", i, r.Err, want.field)
			}
		}
		for id, want := range map[uint64][]string{a: {"family", "travel", "ana"}, b: {"family", "travel", "ana"}} {
			if m, _ := s.Get(id); !slices.Equal(m.Tags, want) || !m.UpdatedAt.Equal(t0.Add(time.Minute)) {
				t.Errorf("memory %d: tags %v updated %v, want %v at %v", id, m.Tags, m.UpdatedAt, want, t0.Add(time.Minute))
			}
		}
		if fmt.Sprint(heard) != fmt.Sprint([][]uint64{{a, b}}) {
			t.Errorf("OnChange heard %v, want one change of %d and %d", heard, a, b)
		}
	})
}

// TestStore_MergeTags: a tag renamed everywhere, forgotten memories included; renaming onto a
// tag a memory has already merges the two.
func TestStore_MergeTags(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		a := remember(t, s, memory.Draft{Text: "Walks the dog", Tags: []string{"pets", "daily"}})
		b := remember(t, s, memory.Draft{Text: "The cat is called Miso", Tags: []string{"animals", "pet"}})
		c := remember(t, s, memory.Draft{Text: "Rabbit named Tofu", Tags: []string{"animals"}})
		d := remember(t, s, memory.Draft{Text: "Likes jazz", Tags: []string{"music"}})
		if _, err := s.Forget([]uint64{c}, memory.Forgetting{}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			from  []string
			into  string
			field string
		}{
			{"no from", nil, "pet", "from"},
			{"bad from", []string{"animals", "?"}, "pet", "from[1]"},
			{"bad into", []string{"animals"}, "!", "into"},
		} {
			if _, err := s.MergeTags(tc.from, tc.into); fieldOf(err) != tc.field {
				t.Errorf("%s: %v, want an InputError on %q", tc.name, err, tc.field)
			}
		}
		if _, err := s.RenameTag("", "pet"); fieldOf(err) != "from" {
			t.Errorf("rename of no tag: %v, want an InputError on from", err)
		}
		var heard [][]uint64
		s.OnChange(func(ids []uint64) { heard = append(heard, slices.Clone(ids)) })
		changed, err := s.MergeTags([]string{"Animals", "pet"}, "Pet")
		if err != nil || !slices.Equal(changed, []uint64{b, c}) {
			t.Fatalf("MergeTags = %v, %v; want [%d %d]", changed, err, b, c)
		}
		want := map[uint64][]string{a: {"pet", "daily"}, b: {"pet"}, c: {"pet"}, d: {"music"}}
		for id, tags := range want {
			if m, _ := s.Get(id); !slices.Equal(m.Tags, tags) {
				t.Errorf("memory %d: tags %v, want %v", id, m.Tags, tags)
			}
		}
		if fmt.Sprint(heard) != fmt.Sprint([][]uint64{{b, c}}) {
			t.Errorf("OnChange heard %v", heard)
		}
		if changed, err := s.RenameTag("music", "jazz"); err != nil || !slices.Equal(changed, []uint64{d}) {
			t.Errorf("RenameTag = %v, %v", changed, err)
		}
		if changed, err := s.RenameTag("pet", "pet"); err != nil || len(changed) != 0 {
			t.Errorf("renaming a tag to itself: %v, %v; want nothing changed", changed, err)
		}
		if got := s.Tags(memory.Filter{}, 0); fmt.Sprint(got) != "[{pet 2} {daily 1} {jazz 1}]" {
			t.Errorf("tags after merging: %v", got)
		}
	})
}
