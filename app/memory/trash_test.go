package memory_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/vector"
)

// TestStore_Restore: a forgotten memory comes back whole, without its tombstone, and is found
// again; restoring an active one changes nothing.
func TestStore_Restore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, vector.NewBuiltin())
		a := remember(t, s, memory.Draft{Text: "Keeps bees on the roof", Tags: []string{"hobby"}})
		b := remember(t, s, memory.Draft{Text: "Keeps chickens in the yard"})
		if _, err := s.Forget([]uint64{a}, memory.Forgetting{Reason: "moved", ReplacedBy: &b}); err != nil {
			t.Fatal(err)
		}
		var heard [][]uint64
		s.OnChange(func(ids []uint64) { heard = append(heard, slices.Clone(ids)) })
		time.Sleep(time.Hour)
		res, err := s.Restore([]uint64{a, b, a, 404})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Err != nil || res[0].Already {
			t.Errorf("restore %d: %+v, want restored", a, res[0])
		}
		if res[1].Err != nil || !res[1].Already {
			t.Errorf("restore of the active %d: %+v, want Already", b, res[1])
		}
		if fieldOf(res[2].Err) != "ids[2]" {
			t.Errorf("an id listed twice: %v, want an InputError on ids[2]", res[2].Err)
		}
		if !errors.Is(res[3].Err, memory.ErrNotFound) {
			t.Errorf("a missing id: %v, want ErrNotFound", res[3].Err)
		}
		m, _ := s.Get(a)
		if m.Deleted() || m.ForgetReason != "" || m.ReplacedByID != nil || !m.UpdatedAt.Equal(t0.Add(time.Hour)) || !slices.Equal(m.Tags, []string{"hobby"}) {
			t.Errorf("restored memory %+v: want no tombstone, its tags, updated now", m)
		}
		if fmt.Sprint(heard) != fmt.Sprint([][]uint64{{a}}) {
			t.Errorf("OnChange heard %v, want [[%d]]", heard, a)
		}
		<-s.IndexReady()
		if got := texts(s.Search(t.Context(), memory.Query{Text: "bees", Limit: 8})); !slices.Contains(got, "Keeps bees on the roof") {
			t.Errorf("search after restore: %v, want the restored memory", got)
		}
	})
}

// TestStore_EmptyTrash: every forgotten memory is erased for good, in one change; active and
// expired ones stay, and ids are not reused.
func TestStore_EmptyTrash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		s := MustOpen(t, vector.NewBuiltin())
		soon := t0.Add(time.Minute)
		keep := remember(t, s, memory.Draft{Text: "Likes green tea"})
		expired := remember(t, s, memory.Draft{Text: "At a conference this week", ExpiresAt: &soon})
		x := remember(t, s, memory.Draft{Text: "Old phone number ends in 42"})
		y := remember(t, s, memory.Draft{Text: "Old address on Elm Street"})
		if _, err := s.Forget([]uint64{x, y}, memory.Forgetting{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour)
		var heard [][]uint64
		s.OnChange(func(ids []uint64) { heard = append(heard, slices.Clone(ids)) })
		erased, err := s.EmptyTrash()
		if err != nil || !slices.Equal(erased, []uint64{x, y}) {
			t.Fatalf("EmptyTrash = %v, %v; want [%d %d]", erased, err, x, y)
		}
		if fmt.Sprint(heard) != fmt.Sprint([][]uint64{{x, y}}) {
			t.Errorf("OnChange heard %v, want one change of both", heard)
		}
		for _, id := range []uint64{x, y} {
			if _, err := s.Get(id); !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("get %d after emptying the trash: %v, want ErrNotFound", id, err)
			}
		}
		for _, id := range []uint64{keep, expired} {
			if _, err := s.Get(id); err != nil {
				t.Errorf("memory %d (not forgotten) was erased: %v", id, err)
			}
		}
		if st := s.Stats(); st.Total != 2 || st.SoftDeleted != 0 || st.Expired != 1 {
			t.Errorf("stats after emptying the trash: %+v", st)
		}
		if got := texts(s.Search(t.Context(), memory.Query{Text: "old address phone", Limit: 8})); len(got) != 0 {
			t.Errorf("erased memories are still found: %v", got)
		}
		if erased, err := s.EmptyTrash(); err != nil || len(erased) != 0 {
			t.Errorf("emptying an empty trash: %v, %v", erased, err)
		}
		if next := remember(t, s, memory.Draft{Text: "A new fact"}); next <= y {
			t.Errorf("id %d after erasing %d: ids are never reused", next, y)
		}
	})
}

// TestFilter_Trash: OnlyForgotten lists the trash, SourceClient the memories one client wrote.
func TestFilter_Trash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		a := remember(t, s, memory.Draft{Text: "one"})
		res, _, err := s.Remember(t.Context(), []memory.Draft{{Text: "two"}}, memory.Origin{Provider: "chatgpt", Client: "pat:script"})
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		b := res[0].ID
		if _, err := s.Forget([]uint64{a}, memory.Forgetting{}); err != nil {
			t.Fatal(err)
		}
		ids := func(f memory.Filter) []uint64 {
			var out []uint64
			s.Each(f, func(m *memory.Memory) bool { out = append(out, m.ID); return true })
			return out
		}
		for _, tc := range []struct {
			name string
			f    memory.Filter
			want []uint64
		}{
			{"active", memory.Filter{}, []uint64{b}},
			{"trash", memory.Filter{OnlyForgotten: true}, []uint64{a}},
			{"everything", memory.Filter{IncludeDeleted: true}, []uint64{a, b}},
			{"by client", memory.Filter{SourceClient: "pat:script"}, []uint64{b}},
			{"by client, none", memory.Filter{SourceClient: "stdio"}, nil},
		} {
			if got := ids(tc.f); !slices.Equal(got, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			}
		}
		if st := s.Stats(); st.Clients["pat:script"] != 1 || st.Clients["stdio"] != 0 {
			t.Errorf("Stats.Clients = %v, want pat:script 1 (active memories only)", st.Clients)
		}
	})
}
