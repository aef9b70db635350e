package importers_test

import (
	"path/filepath"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/vector"
)

// MustOpen opens a store over a new file, with the embedder emb (nil for none) and a text
// limit of 200 characters, and closes both at cleanup.
func MustOpen(tb testing.TB, emb vector.Embedder) *memory.Store {
	tb.Helper()
	s, db := openAt(tb, filepath.Join(tb.TempDir(), "ownsona.db"), memory.Config{Embedder: emb, MaxTextChars: 200})
	tb.Cleanup(func() { s.Close(); db.Close() })
	return s
}

// openAt opens the file at path and the store in it with cfg; the caller closes the store,
// then the file.
func openAt(tb testing.TB, path string, cfg memory.Config) (*memory.Store, *kv.DB) {
	tb.Helper()
	db, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		tb.Fatal(err)
	}
	s, err := memory.Open(db, cfg)
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	return s, db
}
