// Package kvtest opens database files for tests and checks them when the test ends, as bbolt's
// internal/btesting does: a test that leaves its file with a broken page fails, whatever it
// asserted.
//
//	db := kvtest.Open(t, memory.Migrations...)
//
// It is for tests only; nothing in the binary imports it.
package kvtest

import (
	"path/filepath"
	"testing"

	"github.com/ownsona/ownsona/kv"
)

// Open opens a new database file in tb.TempDir() with migrations (none: a bare file). At
// cleanup it closes the file and runs kv.CheckFile on it, failing tb if either fails.
func Open(tb testing.TB, migrations ...kv.Migration) *kv.DB {
	tb.Helper()
	return OpenFile(tb, filepath.Join(tb.TempDir(), "ownsona.db"), kv.Options{Migrations: migrations})
}

// OpenFile opens (or creates) the database file at path with opts, failing tb if it cannot.
// At cleanup it closes the file and runs kv.CheckFile on it, failing tb if either fails. The
// test may close it sooner (to reopen the file, say); the check still runs at cleanup, so by
// then nothing else may hold the file's lock for writing.
func OpenFile(tb testing.TB, path string, opts kv.Options) *kv.DB {
	tb.Helper()
	db, err := kv.Open(path, opts)
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("close %s: %v", path, err)
		}
		if err := kv.CheckFile(path); err != nil {
			tb.Errorf("check %s: %v", path, err)
		}
	})
	return db
}
