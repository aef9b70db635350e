package memory_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/importers"
	"github.com/ownsona/ownsona/app/memory"
)

// limitOn reports whether err is a *LimitError on the setting name.
func limitOn(err error, name string) bool {
	var le *memory.LimitError
	return errors.As(err, &le) && le.Limit == name && strings.Contains(le.Message, name)
}

// TestStore_Quota_memories (SECURITY.md ST-13): past MaxMemories, remember, a batch's items, an
// import and a text update (whose previous text is kept) are refused with a *LimitError that
// names max-memories; what frees room (forget, then emptying the trash) makes room again, and
// writes that add nothing are never refused.
func TestStore_Quota_memories(t *testing.T) {
	ctx := context.Background()
	s, db := openAt(t, filepath.Join(t.TempDir(), "ownsona.db"), memory.Config{MaxMemories: 3})
	defer db.Close()
	defer s.Close()
	a := remember(t, s, memory.Draft{Text: "Likes tea"})
	res, _, err := s.Remember(ctx, []memory.Draft{{Text: "Likes coffee"}, {Text: "Likes cocoa"}, {Text: "Likes mate"}}, me)
	if err != nil || res[0].Err != nil || res[1].Err != nil || !limitOn(res[2].Err, "max-memories") {
		t.Fatalf("a batch that reaches the cap: %+v, %v", res, err)
	}
	if q := s.Quota(); q.Memories != 3 || q.MaxMemories != 3 || q.FileBytes <= 0 || q.FileSize < q.FileBytes || s.Stats().Quota != q {
		t.Errorf("quota %+v, stats %+v", q, s.Stats().Quota)
	}
	text := "Likes green tea"
	if up, err := s.Update(ctx, []memory.Patch{{ID: a, Text: &text}}, false); err != nil || !limitOn(up[0].Err, "max-memories") {
		t.Errorf("a text update at the cap: %+v, %v", up, err)
	}
	if m := mustGet(t, s, a); m.Text != "Likes tea" {
		t.Errorf("the refused update changed the text: %q", m.Text)
	}
	st, err := importers.ImportFrom(ctx, s, strings.NewReader("- Likes water\n"), importers.ImportOptions{})
	if !limitOn(err, "max-memories") || st.Imported != 0 {
		t.Errorf("an import at the cap: %+v, %v", st, err)
	}
	tags := []string{"drinks"}
	if up, err := s.Update(ctx, []memory.Patch{{ID: a, Tags: &tags}}, false); err != nil || up[0].Err != nil {
		t.Errorf("a change of tags at the cap: %+v, %v", up, err)
	}
	if _, err := s.Confirm(a); err != nil {
		t.Errorf("confirm at the cap: %v", err)
	}
	if _, err := s.Forget([]uint64{res[0].ID}, memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := s.Remember(ctx, []memory.Draft{{Text: "Likes water"}}, me); !limitOn(r[0].Err, "max-memories") {
		t.Errorf("a forgotten memory still takes room until the trash is emptied: %+v", r)
	}
	if _, err := s.EmptyTrash(); err != nil {
		t.Fatal(err)
	}
	if up, err := s.Update(ctx, []memory.Patch{{ID: a, Text: &text}}, false); err != nil || up[0].Err != nil || up[0].Previous == 0 {
		t.Errorf("a text update once there is room: %+v, %v", up, err)
	}
}

// TestStore_Quota_file (SECURITY.md ST-13): once the file's data reaches MaxFileBytes, writes
// that add memories are refused with a *LimitError that names max-file-mb, before the file grows
// much past it; emptying the trash makes room again.
func TestStore_Quota_file(t *testing.T) {
	const limit = 1 << 20
	ctx := context.Background()
	s, db := openAt(t, filepath.Join(t.TempDir(), "ownsona.db"), memory.Config{MaxFileBytes: limit, MaxTextChars: 16000})
	defer db.Close()
	defer s.Close()
	var ids []uint64
	var refused error
	for i := 0; refused == nil && i < 1000; i++ {
		res, _, err := s.Remember(ctx, []memory.Draft{{Text: fmt.Sprintf("%d %s", i, strings.Repeat("words of a long note ", 600))}}, me)
		if err != nil {
			t.Fatal(err)
		}
		refused = res[0].Err
		if refused == nil {
			ids = append(ids, res[0].ID)
		}
	}
	q := s.Quota()
	t.Logf("refused after %d memories of ~12 KiB: %+v: %v", len(ids), q, refused)
	if !limitOn(refused, "max-file-mb") || q.FileBytes < limit || q.FileBytes > limit+64<<10 || q.MaxFileBytes != limit {
		t.Fatalf("refused %v with %+v; want max-file-mb once the data passes %d bytes, by one write at most", refused, q, limit)
	}
	if _, err := s.Forget(ids[:len(ids)/2], memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EmptyTrash(); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := s.Remember(ctx, []memory.Draft{{Text: "A short note"}}, me); r[0].Err != nil {
		t.Errorf("after emptying the trash (%+v): %v", s.Quota(), r[0].Err)
	}
}
