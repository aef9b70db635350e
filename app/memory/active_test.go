package memory

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// openFile is openAt of package memory_test for the tests inside the package: the file at
// path and the store in it with cfg; the caller closes the store, then the file (kvtest closes
// and checks the file at cleanup in any case).
func openFile(tb testing.TB, path string, cfg Config) (*Store, *kv.DB) {
	tb.Helper()
	db := kvtest.OpenFile(tb, path, kv.Options{Migrations: Migrations})
	s, err := Open(db, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s, db
}

// TestStore_activeLocked: the bitmap answers the zero Filter as Filter.match does, for every
// id, after each kind of write: remember (with and without an expiry), supersede, forget the
// successor, restore it, forget, delete, empty the trash, expiry, and a reopen.
func TestStore_activeLocked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		s, db := openFile(t, path, Config{})
		ctx := context.Background()
		o := Origin{Provider: "claude", Client: "stdio"}
		check := func(step string) {
			t.Helper()
			now := s.now()
			s.mu.RLock()
			defer s.mu.RUnlock()
			for id := uint64(0); id <= s.seq+65; id++ {
				m := s.mems[id]
				want := m != nil && (&Filter{}).match(m, now)
				if got := s.activeLocked(id, now); got != want {
					t.Errorf("after %s: memory %d passes the bitmap: %v, Filter.match: %v", step, id, got, want)
				}
			}
		}
		remember := func(d Draft) uint64 {
			t.Helper()
			res, _, err := s.Remember(ctx, []Draft{d}, o)
			if err != nil || res[0].Err != nil {
				t.Fatal(err, res)
			}
			return res[0].ID
		}
		a := remember(Draft{Text: "I live in Paris"})
		soon := time.Now().Add(time.Hour)
		remember(Draft{Text: "Parked on level 3", ExpiresAt: &soon})
		c := remember(Draft{Text: "I live in Berlin", Supersedes: []uint64{a}})
		check("remember and supersede")
		if _, err := s.Forget([]uint64{c}, Forgetting{}); err != nil {
			t.Fatal(err)
		}
		check("forgetting the successor")
		if _, err := s.Restore([]uint64{c}); err != nil {
			t.Fatal(err)
		}
		check("restoring the successor")
		d := remember(Draft{Text: "I like tea"})
		if _, err := s.Forget([]uint64{d}, Forgetting{}); err != nil {
			t.Fatal(err)
		}
		check("forget")
		if err := s.Delete(c); err != nil {
			t.Fatal(err)
		}
		check("delete of the successor")
		if _, err := s.EmptyTrash(); err != nil {
			t.Fatal(err)
		}
		check("emptying the trash")
		time.Sleep(2 * time.Hour)
		check("the expiry of the parking note")
		s.Close()
		var err error
		if s, err = Open(db, Config{}); err != nil {
			t.Fatal(err)
		}
		check("reopen")
		s.Close()
		db.Close()
	})
}
