package memory_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
)

// TestStore_Update_keepsPreviousText (SECURITY.md AG-01): a text change keeps the memory's id
// and keeps the text it replaces as a forgotten memory that the updated one supersedes: out of
// searches and lists, in the trash, in exports and in the chain; restored, a memory of its
// own again. Dry runs and changes of other fields keep no version.
func TestStore_Update_keepsPreviousText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	s, db := openAt(t, path, memory.Config{MaxTextChars: 200})
	whole := t // the subtests share the file: it is reopened for this test's span, not a subtest's
	ctx := context.Background()
	imp := 0.8
	a := remember(t, s, memory.Draft{Text: "My sister lives in Lisbon", Tags: []string{"family"}, Importance: &imp})
	b := remember(t, s, memory.Draft{Text: "The dentist is on Rua Augusta"})
	update := func(dry bool, patches ...memory.Patch) []memory.Updated {
		t.Helper()
		res, err := s.Update(ctx, patches, dry)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		return res
	}
	text := func(s string) *string { return &s }

	if res := update(true, memory.Patch{ID: a, Text: text("My sister lives in Porto")}); res[0].Previous != 0 || s.Count(memory.Filter{IncludeDeleted: true}) != 2 {
		t.Errorf("a dry run kept a version: %+v", res)
	}
	tags := []string{"family", "porto"}
	if res := update(false, memory.Patch{ID: a, Tags: &tags}); res[0].Previous != 0 || s.Count(memory.Filter{IncludeDeleted: true}) != 2 {
		t.Errorf("a change of tags kept a version: %+v", res)
	}
	res := update(false, memory.Patch{ID: a, Text: text("My sister lives in Porto")}, memory.Patch{ID: b, Text: text("The dentist is on Rua do Ouro")})
	va, vb := res[0].Previous, res[1].Previous
	if va == 0 || vb == 0 || va == vb || res[0].ID != a || !slices.Equal(res[0].Changed, []string{"text"}) {
		t.Fatalf("update %+v", res)
	}

	t.Run("the memory keeps its id, the version keeps the rest", func(t *testing.T) {
		m, v := mustGet(t, s, a), mustGet(t, s, va)
		if m.Text != "My sister lives in Porto" || !slices.Equal(m.Supersedes, []uint64{va}) || m.SupersededBy != nil {
			t.Errorf("updated %+v", m)
		}
		if v.Text != "My sister lives in Lisbon" || !slices.Equal(v.Tags, tags) || v.Importance != 0.8 || !v.CreatedAt.Equal(m.CreatedAt) ||
			!v.Deleted() || v.ReplacedByID == nil || *v.ReplacedByID != a || v.SupersededBy == nil || *v.SupersededBy != a ||
			v.ForgetReason != fmt.Sprintf("the text of memory %d until an update replaced it", a) {
			t.Errorf("version %+v", v)
		}
	})
	t.Run("versions leave searches and lists, and are in the trash", func(t *testing.T) {
		if got := ids(list(s, memory.Filter{})); !slices.Equal(got, []uint64{b, a}) {
			t.Errorf("list %v", got)
		}
		if got := matchIDs(s.Search(ctx, memory.Query{Text: "Lisbon", Limit: 8})); len(got) != 0 {
			t.Errorf("recall of the old text found %v", got)
		}
		if got := ids(list(s, memory.Filter{OnlyForgotten: true})); !slices.Equal(got, []uint64{vb, va}) {
			t.Errorf("trash %v", got)
		}
	})
	t.Run("exports keep them", func(t *testing.T) {
		var buf bytes.Buffer
		if err := s.Export(&buf, true); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"text":"My sister lives in Lisbon"`) || !strings.Contains(buf.String(), fmt.Sprintf(`"superseded_by":%d`, a)) {
			t.Errorf("export %s", buf.String())
		}
	})
	t.Run("the file keeps them", func(t *testing.T) {
		s.Close()
		db.Close()
		s, db = openAt(whole, path, memory.Config{MaxTextChars: 200})
		if v := mustGet(t, s, va); v.Text != "My sister lives in Lisbon" || !slices.Equal(mustGet(t, s, a).Supersedes, []uint64{va}) {
			t.Errorf("reopened: version %+v", v)
		}
		if c := remember(t, s, memory.Draft{Text: "A new fact"}); c <= vb {
			t.Errorf("a new memory got id %d, not past the versions' %d", c, vb)
		}
	})
	t.Run("restored, a version is a memory of its own", func(t *testing.T) {
		if _, err := s.Restore([]uint64{va}); err != nil {
			t.Fatal(err)
		}
		v, m := mustGet(t, s, va), mustGet(t, s, a)
		if v.Deleted() || v.SupersededBy != nil || v.Superseded() || len(m.Supersedes) != 0 {
			t.Errorf("restored %+v, updated %+v", v, m)
		}
		if got := matchIDs(s.Search(ctx, memory.Query{Text: "Lisbon", Limit: 8})); !slices.Contains(got, va) {
			t.Errorf("recall of the restored text found %v", got)
		}
	})
	t.Run("emptying the trash erases the rest", func(t *testing.T) {
		gone, err := s.EmptyTrash()
		if err != nil || !slices.Equal(gone, []uint64{vb}) {
			t.Fatalf("EmptyTrash %v, %v", gone, err)
		}
		if m := mustGet(t, s, b); len(m.Supersedes) != 0 {
			t.Errorf("after the trash was emptied: %+v", m)
		}
	})
	s.Close()
	db.Close()
}

// list is the first 50 memories that pass f, newest first.
func list(s *memory.Store, f memory.Filter) []*memory.Memory {
	out, _ := s.List(f, memory.Page{Limit: 50})
	return out
}
