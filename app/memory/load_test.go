package memory

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/vector"
)

// TestOpen_chunks: Open indexes the memories while later chunks still decode (loadMemories);
// a store of several chunks, with sessions, forgotten and erased memories, opens to the same
// ids, neighbours, word counts and search answers as the store that wrote it, which built them
// one write at a time. A record that will not decode, in the first chunk or a later one, fails
// Open with the memory's id.
func TestOpen_chunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	cfg := Config{Embedder: vector.NewBuiltin()}
	s, db := openFile(t, path, cfg)
	ctx := context.Background()
	topics := []string{"the garden and its roses", "a camping trip to the lake", "the new job at the bakery",
		"painting sunsets in oil", "the dog's training classes", "a concert of the marching band"}
	const n = 2600 // three chunks of loadMemories
	var ids []uint64
	for i := 0; i < n; i += 200 {
		var drafts []Draft
		for j := i; j < min(i+200, n); j++ {
			drafts = append(drafts, Draft{
				Text:      fmt.Sprintf("Note %d of session %d: %s, told to friend %d", j, j%7, topics[j%len(topics)], j%13),
				SessionID: fmt.Sprint("s", j%7),
				Dedup:     DedupInsert,
			})
		}
		res, _, err := s.Remember(ctx, drafts, Origin{Provider: "claude", Client: "stdio"})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			ids = append(ids, r.ID)
		}
	}
	if _, err := s.Forget(ids[100:140], Forgetting{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids[1500:1520] {
		if err := s.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{"roses in the garden", "lake camping", "bakery job", "oil painting", "band concert", "friend 7"}
	type state struct {
		ids     []uint64
		near    map[uint64][]uint64
		words   int64
		answers [][]uint64
	}
	snapshot := func(s *Store) state {
		var st state
		for _, q := range queries {
			var got []uint64
			for _, m := range s.Search(ctx, Query{Text: q, Limit: 20}).Matches {
				got = append(got, m.Memory.ID)
			}
			st.answers = append(st.answers, got)
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		st.ids = slices.Clone(s.ids)
		st.near = map[uint64][]uint64{}
		for _, id := range s.ids {
			if nb := s.neighboursLocked(nil, id); len(nb) > 0 {
				st.near[id] = nb
			}
		}
		st.words = s.words.Total()
		return st
	}
	<-s.IndexReady()
	written := snapshot(s)
	s.Close()
	db.Close()

	s, db = openFile(t, path, cfg)
	<-s.IndexReady()
	opened := snapshot(s)
	s.Close()
	db.Close()
	if len(opened.ids) != n-20 || !slices.Equal(opened.ids, written.ids) {
		t.Errorf("opened %d ids, want the %d written, in order", len(opened.ids), len(written.ids))
	}
	if len(opened.near) != len(written.near) {
		t.Errorf("%d memories with neighbours after opening, %d as written", len(opened.near), len(written.near))
	}
	for id, nb := range written.near {
		if !slices.Equal(opened.near[id], nb) {
			t.Errorf("memory %d: neighbours %v after opening, %v as written", id, opened.near[id], nb)
		}
	}
	if opened.words != written.words || written.words == 0 {
		t.Errorf("word counts: %d after opening, %d as written", opened.words, written.words)
	}
	for i, q := range queries {
		if len(written.answers[i]) == 0 || !slices.Equal(opened.answers[i], written.answers[i]) {
			t.Errorf("search %q: %v after opening, %v as written", q, opened.answers[i], written.answers[i])
		}
	}

	for _, bad := range []uint64{ids[3], ids[2400]} {
		db := kvtest.OpenFile(t, path, kv.Options{Migrations: Migrations})
		var good []byte
		if err := db.Update(func(tx *kv.Tx) error {
			good = slices.Clone(tx.Bucket(bucketMemories).Get(kv.Key(bad)))
			return tx.Bucket(bucketMemories).Put(kv.Key(bad), []byte(`{"id":`))
		}); err != nil {
			t.Fatal(err)
		}
		if s, err := Open(db, cfg); err == nil {
			s.Close()
			t.Errorf("memory %d's record is cut short, yet Open succeeded", bad)
		} else if !strings.Contains(err.Error(), fmt.Sprintf("memory %d:", bad)) {
			t.Errorf("memory %d's record is cut short: Open says %q, which does not name it", bad, err)
		}
		if err := db.Update(func(tx *kv.Tx) error { return tx.Bucket(bucketMemories).Put(kv.Key(bad), good) }); err != nil {
			t.Fatal(err)
		}
		db.Close()
	}
}
