package kvtest_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// recorder is a testing.TB that keeps its cleanups and errors for the test to look at.
type recorder struct {
	testing.TB
	cleanups []func()
	errs     []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Cleanup(f func())          { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Errorf(f string, a ...any) { r.errs = append(r.errs, fmt.Sprintf(f, a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.TB.Fatalf(f, a...) }

// runCleanups runs the cleanups, last registered first, as testing does.
func (r *recorder) runCleanups() {
	for _, f := range slices.Backward(r.cleanups) {
		f()
	}
}

// fill writes enough keys into a bucket to take several pages.
func fill(tb testing.TB, db *kv.DB) {
	tb.Helper()
	err := db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists("b")
		if err != nil {
			return err
		}
		for i := range uint64(2000) {
			if err := b.Put(kv.Key(i), make([]byte, 100)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestOpen(t *testing.T) {
	t.Run("healthy", func(t *testing.T) {
		r := &recorder{TB: t}
		db := kvtest.Open(r)
		fill(t, db)
		r.runCleanups()
		if len(r.errs) != 0 {
			t.Errorf("cleanup of a healthy file: %q, want no errors", r.errs)
		}
		if err := db.Update(func(*kv.Tx) error { return nil }); err == nil {
			t.Error("Update after cleanup: nil error, want the file closed")
		}
	})
	t.Run("corrupt page", func(t *testing.T) {
		r := &recorder{TB: t}
		db := kvtest.Open(r)
		fill(t, db)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(db.Path())
		if err != nil {
			t.Fatal(err)
		}
		// Zero the header of every fourth page from page 3 on: the meta pages stay intact, so
		// the file still opens, but pages of bucket b go bad.
		pageSize := os.Getpagesize()
		for p := 3; (p+1)*pageSize <= len(data); p += 4 {
			clear(data[p*pageSize : p*pageSize+16])
		}
		if err := os.WriteFile(db.Path(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		r.runCleanups()
		if len(r.errs) == 0 {
			t.Error("cleanup of a corrupted file: no errors, want the check to fail the test")
		}
	})
}

func TestOpenFile(t *testing.T) {
	path := t.TempDir() + "/o.db"
	db := kvtest.OpenFile(t, path, kv.Options{Migrations: []kv.Migration{{Version: 1, Name: "bucket", Up: func(tx *kv.Tx) error {
		_, err := tx.CreateBucketIfNotExists("b")
		return err
	}}}})
	if got, want := db.Path(), path; got != want {
		t.Errorf("Path = %q, want %q", got, want)
	}
	if v, err := db.SchemaVersion(); err != nil || v != 1 {
		t.Errorf("SchemaVersion = %d, %v; want 1, nil", v, err)
	}
}
