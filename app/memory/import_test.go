package memory_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/memory"
)

// TestStore_NewImport: the domain's typed import gives the records ids of the store, points
// their links (named in the source's ids) at them, refuses what remember refuses and reports
// it at its place, and skips what is stored already.
func TestStore_NewImport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpen(t, nil)
		ctx := context.Background()
		if _, _, err := s.Remember(ctx, []memory.Draft{{Text: "Written before the import"}}, me); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		gone := at.Add(24 * time.Hour)
		old, next := uint64(10), uint64(11)
		records := func() []*memory.ImportRecord {
			return []*memory.ImportRecord{
				{Memory: memory.Memory{ID: old, Text: "The flat is on Rue du Bac", CreatedAt: at, DeletedAt: &gone, ReplacedByID: &next, SupersededBy: &next}},
				{Memory: memory.Memory{ID: next, Text: "The flat is on Rue Oberkampf", CreatedAt: at.Add(time.Hour), Supersedes: []uint64{old}}},
				{Memory: memory.Memory{Text: "Likes tea", Tags: []string{"drinks"}}, TextOnly: true},
			}
		}
		var reported []memory.ImportError
		im := s.NewImport(ctx, memory.ImportConfig{Format: "test", OnError: func(e memory.ImportError) { reported = append(reported, e) }})
		for i, rec := range records() {
			if err := im.Add(memory.ImportPos{Line: i + 1}, []*memory.ImportRecord{rec}); err != nil {
				t.Fatal(err)
			}
		}
		secret := &memory.ImportRecord{Memory: memory.Memory{Text: "my key is sk-ant-api03-" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}
		if err := im.Add(memory.ImportPos{Item: 4}, []*memory.ImportRecord{secret}); err != nil {
			t.Fatal(err)
		}
		im.Bad(memory.ImportPos{Line: 5}, errors.New("not JSON"))
		st, err := im.Finish()
		if err != nil {
			t.Fatal(err)
		}
		if want := (memory.ImportStats{Format: "test", Read: 3, Imported: 3, Bad: 2}); st != want {
			t.Errorf("stats %+v, want %+v", st, want)
		}
		if len(reported) != 2 || reported[0].Item != 4 || reported[0].Line != 0 || reported[1].Line != 5 || reported[1].Error != "not JSON" {
			t.Errorf("reported %+v, want item 4 (the secret) and line 5", reported)
		}
		// The store held memory 1: the records are 2, 3 and 4, linked in those ids.
		a, b := mustGet(t, s, 2), mustGet(t, s, 3)
		if a.Text != "The flat is on Rue du Bac" || a.ReplacedByID == nil || *a.ReplacedByID != 3 || a.SupersededBy == nil || *a.SupersededBy != 3 {
			t.Errorf("memory 2 %+v, want Rue du Bac replaced and superseded by 3", a)
		}
		if b.Text != "The flat is on Rue Oberkampf" || !slices.Equal(b.Supersedes, []uint64{2}) || !b.CreatedAt.Equal(at.Add(time.Hour)) {
			t.Errorf("memory 3 %+v, want Rue Oberkampf superseding 2, created when the source says", b)
		}
		if c := mustGet(t, s, 4); c.SourceProvider != "import" || c.CaptureMode != memory.CaptureImport || c.CreatedAt.IsZero() {
			t.Errorf("memory 4 %+v, want what an import fills in", c)
		}

		again := s.NewImport(ctx, memory.ImportConfig{})
		if err := again.Add(memory.ImportPos{Line: 1}, records()); err != nil {
			t.Fatal(err)
		}
		if st, err := again.Finish(); err != nil || st.Read != 3 || st.Skipped != 3 || st.Imported != 0 {
			t.Errorf("the same records again: %+v, %v; want every one skipped", st, err)
		}
	})
}
