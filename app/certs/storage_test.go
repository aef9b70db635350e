package certs

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/rs/zerolog"
)

// MustStorage returns a storage on db with a fast poll, and the given keys stored.
func MustStorage(tb testing.TB, db *kv.DB, now func() time.Time, keys ...string) *storage {
	tb.Helper()
	s := newStorage(db, now, zerolog.Nop())
	s.poll = time.Millisecond
	for _, k := range keys {
		if err := s.Store(context.Background(), k, []byte("value of "+k)); err != nil {
			tb.Fatalf("Store(%q): %v", k, err)
		}
	}
	return s
}

// tree is the storage layout most tests use: certmagic's, and a name that is a prefix of
// another only by bytes ("ab" is not under "a").
var tree = []string{
	"acme/ca/users/me@example.com/me.json",
	"acme/ca/users/me@example.com/me.key",
	"certificates/ca/example.com/example.com.crt",
	"certificates/ca/example.com/example.com.json",
	"certificates/ca/example.com/example.com.key",
	"certificates/ca/other.org/other.org.crt",
	"a/b",
	"ab/c",
	"top",
}

func TestStorage_missing(t *testing.T) {
	ctx := context.Background()
	s := MustStorage(t, kvtest.Open(t), nil, tree...)
	empty := MustStorage(t, kvtest.Open(t), nil)
	for _, tt := range []struct {
		name string
		s    *storage
		key  string
	}{
		{"absent", s, "nope"},
		{"absent under a directory", s, "certificates/ca/nope.crt"},
		{"byte prefix of a directory", s, "certificates/c"},
		{"byte prefix of a file", s, "to"},
		{"under a file", s, "top/x"},
		{"empty storage", empty, "certificates"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.s.Load(ctx, tt.key); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Load: got %v, want fs.ErrNotExist", err)
			}
			if _, err := tt.s.Stat(ctx, tt.key); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("Stat: got %v, want fs.ErrNotExist", err)
			}
			if _, err := tt.s.List(ctx, tt.key, true); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("List: got %v, want fs.ErrNotExist", err)
			}
			if tt.s.Exists(ctx, tt.key) {
				t.Error("Exists: got true, want false")
			}
			if err := tt.s.Delete(ctx, tt.key); err != nil {
				t.Errorf("Delete: got %v, want nil", err)
			}
		})
	}
}

func TestStorage_StoreLoad(t *testing.T) {
	ctx := context.Background()
	s := MustStorage(t, kvtest.Open(t), nil)
	for _, tt := range []struct {
		name, store, load string
		value             []byte
	}{
		{"plain", "a/b/c", "a/b/c", []byte("one")},
		{"empty value", "empty", "empty", []byte{}},
		{"overwrite", "a/b/c", "a/b/c", []byte("two")},
		{"slashes are cleaned", "/x//y/", "x/y", []byte("three")},
		{"binary", "bin", "bin", []byte{0, 1, 2, 255}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.Store(ctx, tt.store, tt.value); err != nil {
				t.Fatalf("Store: %v", err)
			}
			got, err := s.Load(ctx, tt.load)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if string(got) != string(tt.value) || got == nil {
				t.Errorf("Load: got %q, want %q", got, tt.value)
			}
			if !s.Exists(ctx, tt.load) {
				t.Error("Exists: got false")
			}
		})
	}
}

func TestStorage_Store_conflicts(t *testing.T) {
	ctx := context.Background()
	s := MustStorage(t, kvtest.Open(t), nil, tree...)
	for _, key := range []string{"", "/", "top/under", "a", "certificates/ca"} {
		if err := s.Store(ctx, key, []byte("x")); err == nil {
			t.Errorf("Store(%q): got nil error, want one", key)
		}
	}
	got, err := s.List(ctx, "", true)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := MustStorage(t, kvtest.Open(t), nil, tree...).List(ctx, "", true)
	if !slices.Equal(got, want) {
		t.Errorf("after refused stores: got %q, want %q", got, want)
	}
}

func TestStorage_Stat(t *testing.T) {
	ctx := context.Background()
	c := newClock()
	s := MustStorage(t, kvtest.Open(t), c.Now)
	t0 := c.Now()
	mustStore(t, s, "d/one", "12345")
	c.Add(time.Hour)
	mustStore(t, s, "d/sub/two", "1")
	c.Add(time.Hour)
	mustStore(t, s, "e", "")
	for _, tt := range []struct {
		key  string
		want keyInfo
	}{
		{"d/one", keyInfo{"d/one", t0, 5, true}},
		{"d/sub/two", keyInfo{"d/sub/two", t0.Add(time.Hour), 1, true}},
		{"e", keyInfo{"e", t0.Add(2 * time.Hour), 0, true}},
		{"d", keyInfo{"d", t0.Add(time.Hour), 0, false}},
		{"d/sub", keyInfo{"d/sub", t0.Add(time.Hour), 0, false}},
		{"/d/sub/", keyInfo{"d/sub", t0.Add(time.Hour), 0, false}},
	} {
		t.Run(tt.key, func(t *testing.T) {
			ki, err := s.Stat(ctx, tt.key)
			if err != nil {
				t.Fatal(err)
			}
			got := keyInfo{ki.Key, ki.Modified, ki.Size, ki.IsTerminal}
			if !got.Modified.Equal(tt.want.Modified) || got.Key != tt.want.Key || got.Size != tt.want.Size || got.Terminal != tt.want.Terminal {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

type keyInfo struct {
	Key      string
	Modified time.Time
	Size     int64
	Terminal bool
}

func mustStore(tb testing.TB, s *storage, key, value string) {
	tb.Helper()
	if err := s.Store(context.Background(), key, []byte(value)); err != nil {
		tb.Fatalf("Store(%q): %v", key, err)
	}
}

func TestStorage_List(t *testing.T) {
	ctx := context.Background()
	s := MustStorage(t, kvtest.Open(t), nil, tree...)
	for _, tt := range []struct {
		prefix    string
		recursive bool
		want      []string
	}{
		{"", false, []string{"a", "ab", "acme", "certificates", "top"}},
		{"certificates", false, []string{"certificates/ca"}},
		{"certificates/ca", false, []string{"certificates/ca/example.com", "certificates/ca/other.org"}},
		{"certificates/ca/example.com", false, []string{
			"certificates/ca/example.com/example.com.crt",
			"certificates/ca/example.com/example.com.json",
			"certificates/ca/example.com/example.com.key",
		}},
		{"certificates", true, []string{
			"certificates/ca",
			"certificates/ca/example.com",
			"certificates/ca/example.com/example.com.crt",
			"certificates/ca/example.com/example.com.json",
			"certificates/ca/example.com/example.com.key",
			"certificates/ca/other.org",
			"certificates/ca/other.org/other.org.crt",
		}},
		{"/certificates/ca/other.org/", true, []string{"certificates/ca/other.org/other.org.crt"}},
		{"a", false, []string{"a/b"}},
		{"a", true, []string{"a/b"}},
		{"top", false, nil},
		{"a/b", true, nil},
		{"", true, []string{
			"a", "a/b", "ab", "ab/c",
			"acme", "acme/ca", "acme/ca/users", "acme/ca/users/me@example.com",
			"acme/ca/users/me@example.com/me.json", "acme/ca/users/me@example.com/me.key",
			"certificates", "certificates/ca",
			"certificates/ca/example.com",
			"certificates/ca/example.com/example.com.crt",
			"certificates/ca/example.com/example.com.json",
			"certificates/ca/example.com/example.com.key",
			"certificates/ca/other.org",
			"certificates/ca/other.org/other.org.crt",
			"top",
		}},
	} {
		name := tt.prefix
		if tt.recursive {
			name += " recursive"
		}
		t.Run(name, func(t *testing.T) {
			got, err := s.List(ctx, tt.prefix, tt.recursive)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestStorage_Delete(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		key     string
		removed []string // of tree; the rest must stay
	}{
		{"certificates/ca/example.com", []string{
			"certificates/ca/example.com/example.com.crt",
			"certificates/ca/example.com/example.com.json",
			"certificates/ca/example.com/example.com.key",
		}},
		{"certificates", []string{
			"certificates/ca/example.com/example.com.crt",
			"certificates/ca/example.com/example.com.json",
			"certificates/ca/example.com/example.com.key",
			"certificates/ca/other.org/other.org.crt",
		}},
		{"a", []string{"a/b"}},
		{"/top/", []string{"top"}},
		{"acme/ca/users/me@example.com/me.key", []string{"acme/ca/users/me@example.com/me.key"}},
		{"missing", nil},
		{"certificates/c", nil},
	} {
		t.Run(tt.key, func(t *testing.T) {
			s := MustStorage(t, kvtest.Open(t), nil, tree...)
			if err := s.Delete(ctx, tt.key); err != nil {
				t.Fatalf("Delete: %v", err)
			}
			if s.Exists(ctx, tt.key) {
				t.Errorf("Exists(%q) after Delete: got true", tt.key)
			}
			for _, k := range tree {
				if got, want := s.Exists(ctx, k), !slices.Contains(tt.removed, k); got != want {
					t.Errorf("Exists(%q): got %v, want %v", k, got, want)
				}
			}
			if err := s.Delete(ctx, tt.key); err != nil {
				t.Errorf("second Delete: %v", err)
			}
		})
	}
	t.Run("everything is refused", func(t *testing.T) {
		s := MustStorage(t, kvtest.Open(t), nil, tree...)
		if err := s.Delete(ctx, ""); err == nil {
			t.Error("Delete(\"\"): got nil error")
		}
	})
}

func TestStorage_canceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := MustStorage(t, kvtest.Open(t), nil, "k")
	if err := s.Store(ctx, "k", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Store: got %v", err)
	}
	if _, err := s.Load(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Load: got %v", err)
	}
	if _, err := s.List(ctx, "", true); !errors.Is(err, context.Canceled) {
		t.Errorf("List: got %v", err)
	}
	if err := s.Delete(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete: got %v", err)
	}
	if err := s.Lock(ctx, "l"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lock: got %v", err)
	}
}

func TestStorage_persists(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/ownsona.db"
	db := kvtest.OpenFile(t, path, kv.Options{})
	mustStore(t, MustStorage(t, db, nil), "acme/key", "secret")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := MustStorage(t, kvtest.OpenFile(t, path, kv.Options{}), nil).Load(ctx, "acme/key")
	if err != nil || string(got) != "secret" {
		t.Errorf("after reopening: got %q, %v; want \"secret\"", got, err)
	}
}

func TestStorage_Lock_contention(t *testing.T) {
	// Goroutines on two storages of one file (two certmagic configs in one process) take the
	// same lock in turns; the race detector checks the counter, inside checks exclusion.
	db := kvtest.Open(t)
	stores := []*storage{MustStorage(t, db, nil), MustStorage(t, db, nil)}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const workers, rounds = 6, 15
	var counter int
	var inside atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for range rounds {
				if err := s.Lock(ctx, "issue_cert_example.com"); err != nil {
					errs <- err
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				counter++
				inside.Add(-1)
				if err := s.Unlock(ctx, "issue_cert_example.com"); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if counter != workers*rounds {
		t.Errorf("counter: got %d, want %d", counter, workers*rounds)
	}
}

func TestStorage_Lock_context(t *testing.T) {
	ctx := context.Background()
	s := MustStorage(t, kvtest.Open(t), nil)
	if err := s.Lock(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	defer s.Unlock(ctx, "x")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := s.Lock(short, "x"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Lock of a held lock: got %v, want context.DeadlineExceeded", err)
	}
	if ok, err := s.TryLock(ctx, "x"); ok || err != nil {
		t.Errorf("TryLock of a held lock: got %v, %v; want false, nil", ok, err)
	}
	if ok, err := s.TryLock(ctx, "y"); !ok || err != nil {
		t.Errorf("TryLock of a free lock: got %v, %v; want true, nil", ok, err)
	}
	if err := s.Unlock(ctx, "y"); err != nil {
		t.Error(err)
	}
}

func TestStorage_Unlock(t *testing.T) {
	ctx := context.Background()
	db := kvtest.Open(t)
	s, other := MustStorage(t, db, nil), MustStorage(t, db, nil)
	if err := s.Unlock(ctx, "never"); err == nil {
		t.Error("Unlock of a lock never taken: got nil error")
	}
	if err := s.Lock(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := other.Unlock(ctx, "x"); err == nil {
		t.Error("Unlock by another storage: got nil error")
	}
	if err := s.Unlock(ctx, "x"); err != nil {
		t.Errorf("Unlock by the holder: %v", err)
	}
	if err := s.Unlock(ctx, "x"); err == nil {
		t.Error("second Unlock: got nil error")
	}
}

// putLock writes the lock record a holder that died would have left.
func putLock(tb testing.TB, db *kv.DB, name string, rec lockRecord) {
	tb.Helper()
	err := db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLocks)
		if err != nil {
			return err
		}
		v, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put([]byte(name), v)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestStorage_Lock_stale(t *testing.T) {
	// A previous process died holding the lock. Its record is taken over once it has not been
	// refreshed for lockStale; time is synctest's fake clock.
	db := kvtest.Open(t)
	for _, tt := range []struct {
		name string
		age  time.Duration // of the dead holder's last refresh
	}{
		{"already stale", lockStale + time.Second},
		{"becomes stale", time.Second},
		{"corrupt record", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				s := newStorage(db, nil, zerolog.Nop())
				start := time.Now()
				if tt.age < 0 {
					MustUpdateLock(t, db, tt.name, []byte("{not json"))
				} else {
					putLock(t, db, tt.name, lockRecord{Owner: "dead", Created: start.Add(-time.Hour), Updated: start.Add(-tt.age)})
				}
				if err := s.Lock(ctx, tt.name); err != nil {
					t.Fatal(err)
				}
				waited := time.Since(start)
				if tt.age >= 0 {
					if want := max(0, lockStale-tt.age); waited < want || waited > want+lockPoll {
						t.Errorf("took over after %v, want %v (+ up to %v)", waited, want, lockPoll)
					}
				}
				if err := s.Unlock(ctx, tt.name); err != nil {
					t.Errorf("Unlock: %v", err)
				}
			})
		})
	}
}

// MustUpdateLock writes raw bytes as the record of lock name.
func MustUpdateLock(tb testing.TB, db *kv.DB, name string, v []byte) {
	tb.Helper()
	err := db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLocks)
		if err != nil {
			return err
		}
		return b.Put([]byte(name), v)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

func TestStorage_Lock_liveHolder(t *testing.T) {
	// A live holder refreshes its record, so a waiter on another storage waits as long as it
	// holds the lock, however long, and takes it at its Unlock.
	db := kvtest.Open(t)
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		holder, waiter := newStorage(db, nil, zerolog.Nop()), newStorage(db, nil, zerolog.Nop())
		if err := holder.Lock(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		var got atomic.Bool
		done := make(chan error)
		go func() {
			err := waiter.Lock(ctx, "x")
			got.Store(err == nil)
			done <- err
		}()
		time.Sleep(3 * lockStale)
		synctest.Wait()
		if got.Load() {
			t.Fatal("waiter took a lock its live holder kept fresh")
		}
		if err := holder.Unlock(ctx, "x"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatalf("waiter: %v", err)
		}
		if err := waiter.Unlock(ctx, "x"); err != nil {
			t.Error(err)
		}
	})
}
