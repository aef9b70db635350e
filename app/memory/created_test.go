package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStore_windowLocked: the creation-time order answers a window as Filter.match does, for
// every id and every window, with memories imported out of creation order, a hard delete,
// and after a reopen; and a search whose window holds nothing lists nothing.
func TestStore_windowLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	s, db := openFile(t, path, Config{})
	ctx := context.Background()
	o := Origin{Provider: "claude", Client: "stdio"}
	for i := range 5 {
		if _, _, err := s.Remember(ctx, []Draft{{Text: fmt.Sprintf("written now, note %d about the garden", i)}}, o); err != nil {
			t.Fatal(err)
		}
	}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	var lines []string
	for i, d := range []int{40, 3, 17, 3, 0, 25} { // out of order, one day twice
		lines = append(lines, fmt.Sprintf(`{"text":"imported note %d from day %d about the garden","created_at":%q}`, i, d, base.AddDate(0, 0, d).Format(time.RFC3339)))
	}
	if _, err := s.ImportFrom(ctx, strings.NewReader(strings.Join(lines, "\n")), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(6); err != nil { // the memory of day 40
		t.Fatal(err)
	}
	day := func(d int) *time.Time { t := base.AddDate(0, 0, d); return &t }
	windows := []Filter{
		{Since: day(3)}, {Until: day(3)}, {Since: day(3), Until: day(17)}, {Since: day(4), Until: day(16)},
		{Since: day(-10), Until: day(-1)}, {Since: day(41)}, {Since: day(17), Until: day(3)}, {Until: day(100)},
		{Since: day(-1000)}, // every memory
	}
	check := func(step string) {
		t.Helper()
		now := s.now()
		s.mu.RLock()
		defer s.mu.RUnlock()
		for _, f := range windows {
			win := s.windowLocked(&f)
			for id := uint64(0); id <= s.seq+65; id++ {
				m := s.mems[id]
				want := m != nil && f.match(m, now)
				if win == nil { // every memory is in the window
					if m != nil && !want {
						t.Errorf("%s: window %v–%v: no bits, but memory %d is outside it", step, f.Since, f.Until, id)
					}
					continue
				}
				if got := get(win, id); got != want {
					t.Errorf("%s: window %v–%v: memory %d in it: %v, Filter.match: %v", step, f.Since, f.Until, id, got, want)
				}
			}
		}
	}
	check("after imports and a delete")
	if got := s.Search(ctx, Query{Text: "garden", Filter: Filter{Since: day(-10), Until: day(-1)}, Limit: 5}); len(got.Matches) != 0 {
		t.Errorf("a search in an empty window found %d memories", len(got.Matches))
	}
	got := s.Search(ctx, Query{Text: "garden", Filter: Filter{Since: day(3), Until: day(17)}, Limit: 10})
	if len(got.Matches) != 3 {
		t.Errorf("a search from day 3 to day 17 found %d memories, want the 3 created then", len(got.Matches))
	}
	s.Close()
	db.Close()
	s, db = openFile(t, path, Config{})
	defer db.Close()
	defer s.Close()
	check("after a reopen")
}
