package kv

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// shortTimeout keeps lock-conflict tests quick; nothing asserts on how long they take.
const shortTimeout = 50 * time.Millisecond

// MustOpen opens a database at path (a new file in a temp dir if path is empty) and closes it
// when the test ends.
func MustOpen(tb testing.TB, path string, opts Options) *DB {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "test.db")
	}
	db, err := Open(path, opts)
	if err != nil {
		tb.Fatalf("Open(%q): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return db
}

// MustUpdate runs fn in an Update and fails the test on error.
func MustUpdate(tb testing.TB, db *DB, fn func(tx *Tx) error) {
	tb.Helper()
	if err := db.Update(fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

// MustView runs fn in a View and fails the test on error.
func MustView(tb testing.TB, db *DB, fn func(tx *Tx) error) {
	tb.Helper()
	if err := db.View(fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

// mustHash returns the SHA-256 of the file's bytes.
func mustHash(tb testing.TB, path string) [32]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return sha256.Sum256(b)
}

// bucketMigration returns migration v, which creates bucket name and records v in *ran.
func bucketMigration(v int, name string, ran *[]int) Migration {
	return Migration{Version: v, Name: "create " + name, Up: func(tx *Tx) error {
		*ran = append(*ran, v)
		_, err := tx.CreateBucketIfNotExists(name)
		return err
	}}
}

func mustVersion(tb testing.TB, db *DB) int {
	tb.Helper()
	v, err := db.SchemaVersion()
	if err != nil {
		tb.Fatalf("SchemaVersion: %v", err)
	}
	return v
}

func TestDB_Open(t *testing.T) {
	t.Run("creates the file with mode 0600", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.db")
		MustOpen(t, path, Options{})
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("mode = %v, want %v", got, want)
		}
	})

	t.Run("new file without migrations has version 0", func(t *testing.T) {
		db := MustOpen(t, "", Options{})
		if got, want := mustVersion(t, db), 0; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
	})

	t.Run("path", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "p.db")
		db := MustOpen(t, path, Options{})
		if got, want := db.Path(), path; got != want {
			t.Errorf("Path = %q, want %q", got, want)
		}
	})

	t.Run("second open in the same process fails with ErrInUse", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "locked.db")
		MustOpen(t, path, Options{})
		for _, readOnly := range []bool{false, true} {
			db, err := Open(path, Options{Timeout: shortTimeout, ReadOnly: readOnly})
			if db != nil {
				db.Close()
			}
			if !errors.Is(err, ErrInUse) {
				t.Fatalf("ReadOnly=%v: err = %v, want ErrInUse", readOnly, err)
			}
			for _, want := range []string{path, "in use by another process"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		}
	})

	t.Run("negative timeout fails without waiting", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "locked.db")
		MustOpen(t, path, Options{})
		_, err := Open(path, Options{Timeout: -1})
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("err = %v, want ErrInUse", err)
		}
	})

	t.Run("read-only opens share the file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "shared.db")
		db := MustOpen(t, path, Options{})
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		a := MustOpen(t, path, Options{ReadOnly: true, Timeout: shortTimeout})
		b := MustOpen(t, path, Options{ReadOnly: true, Timeout: shortTimeout})
		if got, want := mustVersion(t, a)+mustVersion(t, b), 0; got != want {
			t.Errorf("versions sum = %d, want %d", got, want)
		}
		if _, err := Open(path, Options{Timeout: shortTimeout}); !errors.Is(err, ErrInUse) {
			t.Errorf("read-write open beside readers: err = %v, want ErrInUse", err)
		}
	})

	t.Run("lock is released by Close", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "reopen.db")
		db, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		MustOpen(t, path, Options{Timeout: shortTimeout})
	})

	t.Run("read-only open of a missing file fails", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.db")
		if _, err := Open(path, Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want os.ErrNotExist", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("read-only open created the file: %v", err)
		}
	})

	t.Run("not a database file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.txt")
		if err := os.WriteFile(path, bytes.Repeat([]byte("not a database\n"), 1000), 0o600); err != nil {
			t.Fatal(err)
		}
		before := mustHash(t, path)
		_, err := Open(path, Options{})
		if err == nil {
			t.Fatal("Open succeeded, want an error")
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the path", err)
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
	})

	t.Run("bbolt file that is not ownsona's", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "foreign.db")
		db, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		MustUpdate(t, db, func(tx *Tx) error {
			if _, err := tx.CreateBucketIfNotExists("someone-elses"); err != nil {
				return err
			}
			return tx.DeleteBucket(metaBucket)
		})
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		before := mustHash(t, path)
		_, err = Open(path, Options{})
		if err == nil || !strings.Contains(err.Error(), "not an ownsona database") {
			t.Fatalf("err = %v, want not an ownsona database", err)
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
	})

	t.Run("reopening a current file does not write", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "idle.db")
		var ran []int
		ms := []Migration{bucketMigration(1, "a", &ran)}
		db, err := Open(path, Options{Migrations: ms})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		before := mustHash(t, path)
		db, err = Open(path, Options{Migrations: ms})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
	})

	t.Run("invalid migrations", func(t *testing.T) {
		up := func(*Tx) error { return nil }
		for _, tt := range []struct {
			name string
			ms   []Migration
			want string
		}{
			{"starts at 0", []Migration{{Version: 0, Name: "a", Up: up}}, "want 1"},
			{"gap", []Migration{{Version: 1, Name: "a", Up: up}, {Version: 3, Name: "c", Up: up}}, "want 2"},
			{"out of order", []Migration{{Version: 2, Name: "b", Up: up}, {Version: 1, Name: "a", Up: up}}, "want 1"},
			{"no name", []Migration{{Version: 1, Up: up}}, "no name"},
			{"no up", []Migration{{Version: 1, Name: "a"}}, "no Up"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "m.db")
				_, err := Open(path, Options{Migrations: tt.ms})
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want one containing %q", err, tt.want)
				}
				if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("file created despite invalid migrations: %v", err)
				}
			})
		}
	})
}

// holdLockEnv tells TestHelperProcess, run as a child process, which file to hold open.
const holdLockEnv = "OWNSONA_KV_TEST_HOLD_LOCK"

// TestHelperProcess is not a real test: run as a child by TestDB_OpenLockedByAnotherProcess, it
// opens the database named by holdLockEnv, prints "locked", and holds the lock until its stdin
// is closed.
func TestHelperProcess(t *testing.T) {
	path := os.Getenv(holdLockEnv)
	if path == "" {
		t.Skip("helper for TestDB_OpenLockedByAnotherProcess")
	}
	db, err := Open(path, Options{})
	if err != nil {
		fmt.Fprintf(os.Stderr, "child: %v\n", err)
		t.Fatal(err)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin) // until the parent closes stdin (or dies)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDB_OpenLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "shared.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	// GORACE: a race-enabled child otherwise sleeps 1s at exit.
	cmd.Env = append(os.Environ(), holdLockEnv+"="+path, "GORACE=atexit_sleep_ms=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() error {
		if released {
			return nil
		}
		released = true
		stdin.Close()
		_, _ = io.Copy(io.Discard, stdout)
		return cmd.Wait()
	}
	t.Cleanup(func() { _ = release() })

	line, err := bufio.NewReader(stdout).ReadString('\n')
	if got, want := strings.TrimSpace(line), "locked"; got != want {
		t.Fatalf("child said %q (%v), want %q; stderr:\n%s", line, err, want, stderr.String())
	}

	t.Run("read-write open fails with ErrInUse", func(t *testing.T) {
		db, err := Open(path, Options{Timeout: shortTimeout})
		if db != nil {
			db.Close()
		}
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("err = %v, want ErrInUse", err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name the path", err)
		}
	})

	t.Run("read-only open fails with ErrInUse", func(t *testing.T) {
		db, err := Open(path, Options{Timeout: shortTimeout, ReadOnly: true})
		if db != nil {
			db.Close()
		}
		if !errors.Is(err, ErrInUse) {
			t.Fatalf("err = %v, want ErrInUse", err)
		}
	})

	t.Run("open succeeds once the child exits", func(t *testing.T) {
		if err := release(); err != nil {
			t.Fatalf("child: %v; stderr:\n%s", err, stderr.String())
		}
		MustOpen(t, path, Options{Timeout: shortTimeout})
	})
}

func TestDB_OpenNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	var ran []int
	future := []Migration{
		bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran), bucketMigration(3, "c", &ran),
	}
	db, err := Open(path, Options{Migrations: future})
	if err != nil {
		t.Fatal(err)
	}
	MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("a").Put([]byte("k"), []byte("v")) })
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := mustHash(t, path)
	ran = nil

	for _, tt := range []struct {
		name string
		opts Options
	}{
		{"read-write", Options{Migrations: future[:1]}},
		{"read-only", Options{Migrations: future[:1], ReadOnly: true}},
		{"no migrations", Options{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := Open(path, tt.opts)
			if db != nil {
				db.Close()
			}
			if !errors.Is(err, ErrNewerSchema) {
				t.Fatalf("err = %v, want ErrNewerSchema", err)
			}
			supported := fmt.Sprintf("reads schema versions up to %d", len(tt.opts.Migrations))
			for _, want := range []string{path, "schema version 3", supported, "run that newer ownsona", "put back a backup made before the upgrade"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if got := mustHash(t, path); got != before {
				t.Error("file bytes changed")
			}
			if len(ran) != 0 {
				t.Errorf("migrations ran: %v", ran)
			}
		})
	}

	t.Run("lock is released after the refusal", func(t *testing.T) {
		db := MustOpen(t, path, Options{Migrations: future, Timeout: shortTimeout})
		if got, want := mustVersion(t, db), 3; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
	})
}

func TestDB_OpenMigrations(t *testing.T) {
	t.Run("run once, in order", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.db")
		var ran []int
		ms := []Migration{
			bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran), bucketMigration(3, "c", &ran),
		}
		db, err := Open(path, Options{Migrations: ms[:2]})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ran, []int{1, 2}; !slices.Equal(got, want) {
			t.Errorf("ran = %v, want %v", got, want)
		}
		if got, want := mustVersion(t, db), 2; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		ran = nil
		db = MustOpen(t, path, Options{Migrations: ms})
		if got, want := ran, []int{3}; !slices.Equal(got, want) {
			t.Errorf("after adding migration 3: ran = %v, want %v", got, want)
		}
		if got, want := mustVersion(t, db), 3; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
		MustView(t, db, func(tx *Tx) error {
			for _, name := range []string{"a", "b", "c"} {
				if tx.Bucket(name) == nil {
					t.Errorf("bucket %q missing", name)
				}
			}
			return nil
		})
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		ran = nil
		MustOpen(t, path, Options{Migrations: ms})
		if len(ran) != 0 {
			t.Errorf("reopen ran migrations %v, want none", ran)
		}
	})

	t.Run("migration sees a writable tx", func(t *testing.T) {
		var writable bool
		MustOpen(t, "", Options{Migrations: []Migration{{Version: 1, Name: "probe", Up: func(tx *Tx) error {
			writable = tx.Writable()
			return nil
		}}}})
		if !writable {
			t.Error("tx.Writable() = false inside a migration")
		}
	})

	t.Run("failing migration leaves the file at its version", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "fail.db")
		var ran []int
		boom := errors.New("boom")
		ms := []Migration{
			bucketMigration(1, "a", &ran),
			bucketMigration(2, "b", &ran),
			{Version: 3, Name: "fill c", Up: func(tx *Tx) error {
				ran = append(ran, 3)
				b, err := tx.CreateBucketIfNotExists("c")
				if err != nil {
					return err
				}
				if err := b.Put([]byte("half"), []byte("done")); err != nil {
					return err
				}
				return boom
			}},
			bucketMigration(4, "d", &ran),
		}
		db := MustOpen(t, path, Options{Migrations: ms[:1]})
		MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("a").Put([]byte("k"), []byte("v")) })
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		before := mustHash(t, path)
		ran = nil

		_, err := Open(path, Options{Migrations: ms})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		for _, want := range []string{"migration 3", "fill c", path, "still at schema 1", ".pre-v4-"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		if got, want := ran, []int{2, 3}; !slices.Equal(got, want) {
			t.Errorf("ran = %v, want %v", got, want)
		}
		// All pending migrations share one transaction: migration 2's commit went with 3's.
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
		db = MustOpen(t, path, Options{Migrations: ms, ReadOnly: true, Timeout: shortTimeout})
		if got, want := mustVersion(t, db), 1; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
		MustView(t, db, func(tx *Tx) error {
			for _, name := range []string{"b", "c"} {
				if tx.Bucket(name) != nil {
					t.Errorf("bucket %s of the failed upgrade was committed", name)
				}
			}
			return nil
		})
	})

	t.Run("failing migration of a new file leaves it empty", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.db")
		var ran []int
		boom := errors.New("boom")
		ms := []Migration{
			bucketMigration(1, "a", &ran),
			{Version: 2, Name: "fail", Up: func(*Tx) error { return boom }},
		}
		if _, err := Open(path, Options{Migrations: ms}); !errors.Is(err, boom) {
			t.Fatalf("err = %v, want boom", err)
		}
		db := MustOpen(t, path, Options{ReadOnly: true})
		MustView(t, db, func(tx *Tx) error {
			if k, _ := tx.tx.Cursor().First(); k != nil {
				t.Errorf("bucket %q was committed", k)
			}
			return nil
		})
		if got := backups(t, path); len(got) != 0 {
			t.Errorf("backups of a new file: %v", got)
		}
	})

	t.Run("read-only open runs no migrations", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ro.db")
		var ran []int
		ms := []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran)}
		db, err := Open(path, Options{Migrations: ms[:1]})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		before := mustHash(t, path)
		ran = nil
		db = MustOpen(t, path, Options{Migrations: ms, ReadOnly: true})
		if len(ran) != 0 {
			t.Errorf("ran = %v, want none", ran)
		}
		if got, want := mustVersion(t, db), 1; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
	})

	t.Run("version stored big-endian", func(t *testing.T) {
		var ran []int
		db := MustOpen(t, "", Options{Migrations: []Migration{bucketMigration(1, "a", &ran)}})
		MustView(t, db, func(tx *Tx) error {
			got := tx.Bucket(metaBucket).Get([]byte(versionKey))
			if want := []byte{0, 0, 0, 0, 0, 0, 0, 1}; !bytes.Equal(got, want) {
				t.Errorf("schema_version = %x, want %x", got, want)
			}
			return nil
		})
	})
}

func TestDB_Close(t *testing.T) {
	t.Run("nil", func(t *testing.T) {
		var db *DB
		if err := db.Close(); err != nil {
			t.Errorf("Close on nil = %v, want nil", err)
		}
	})

	t.Run("twice", func(t *testing.T) {
		db, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := db.Close(); err != nil {
				t.Errorf("Close #%d = %v, want nil", i+1, err)
			}
		}
	})

	t.Run("use after close", func(t *testing.T) {
		db, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		nop := func(*Tx) error { return nil }
		for name, err := range map[string]error{
			"Update": db.Update(nop),
			"View":   db.View(nop),
			"Check":  db.Check(),
		} {
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s = %v, want ErrClosed", name, err)
			}
		}
		if _, err := db.Backup(io.Discard); !errors.Is(err, ErrClosed) {
			t.Errorf("Backup = %v, want ErrClosed", err)
		}
		if _, err := db.SchemaVersion(); !errors.Is(err, ErrClosed) {
			t.Errorf("SchemaVersion = %v, want ErrClosed", err)
		}
	})
}

func TestDB_Update(t *testing.T) {
	t.Run("commits", func(t *testing.T) {
		db := MustOpen(t, "", Options{})
		MustUpdate(t, db, func(tx *Tx) error {
			b, err := tx.CreateBucketIfNotExists("b")
			if err != nil {
				return err
			}
			return b.Put([]byte("k"), []byte("v"))
		})
		MustView(t, db, func(tx *Tx) error {
			if got, want := tx.Bucket("b").Get([]byte("k")), []byte("v"); !bytes.Equal(got, want) {
				t.Errorf("Get = %q, want %q", got, want)
			}
			return nil
		})
	})

	t.Run("error rolls back and is returned as is", func(t *testing.T) {
		db := MustOpen(t, "", Options{})
		boom := errors.New("boom")
		err := db.Update(func(tx *Tx) error {
			if _, err := tx.CreateBucketIfNotExists("b"); err != nil {
				return err
			}
			return boom
		})
		if got, want := err, boom; got != want {
			t.Fatalf("err = %v, want %v", got, want)
		}
		MustView(t, db, func(tx *Tx) error {
			if tx.Bucket("b") != nil {
				t.Error("bucket b committed despite the error")
			}
			return nil
		})
	})

	t.Run("panic rolls back", func(t *testing.T) {
		db := MustOpen(t, "", Options{})
		func() {
			defer func() {
				if recover() == nil {
					t.Error("panic not propagated")
				}
			}()
			_ = db.Update(func(tx *Tx) error {
				if _, err := tx.CreateBucketIfNotExists("b"); err != nil {
					return err
				}
				panic("boom")
			})
		}()
		MustView(t, db, func(tx *Tx) error {
			if tx.Bucket("b") != nil {
				t.Error("bucket b committed despite the panic")
			}
			return nil
		})
		MustUpdate(t, db, func(tx *Tx) error { return nil }) // the write lock was released
	})

	t.Run("read-only database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ro.db")
		if err := MustOpen(t, path, Options{}).Close(); err != nil {
			t.Fatal(err)
		}
		db := MustOpen(t, path, Options{ReadOnly: true})
		err := db.Update(func(tx *Tx) error { return nil })
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("err = %v, want ErrReadOnly", err)
		}
	})
}

func TestDB_View(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateBucketIfNotExists("b")
		return err
	})
	err := db.View(func(tx *Tx) error {
		if tx.Writable() {
			t.Error("Writable() = true in View")
		}
		if _, err := tx.CreateBucketIfNotExists("c"); !errors.Is(err, ErrReadOnly) {
			t.Errorf("CreateBucketIfNotExists = %v, want ErrReadOnly", err)
		}
		if err := tx.Bucket("b").Put([]byte("k"), []byte("v")); !errors.Is(err, ErrReadOnly) {
			t.Errorf("Put = %v, want ErrReadOnly", err)
		}
		return io.EOF
	})
	if got, want := err, io.EOF; got != want {
		t.Errorf("View = %v, want %v", got, want)
	}
}

func TestDB_Concurrent(t *testing.T) {
	db := MustOpen(t, "", Options{})
	MustUpdate(t, db, func(tx *Tx) error {
		_, err := tx.CreateBucketIfNotExists("n")
		return err
	})
	const writers, perWriter = 4, 25
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range perWriter {
				err := db.Update(func(tx *Tx) error {
					b := tx.Bucket("n")
					id, err := b.NextSequence()
					if err != nil {
						return err
					}
					return b.Put(Key(id), Key(id))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range perWriter {
				err := db.View(func(tx *Tx) error {
					// A snapshot: every key present has its value and sequence covers it.
					b := tx.Bucket("n")
					seq := b.Sequence()
					return b.ForEach(func(k, v []byte) error {
						if !bytes.Equal(k, v) || ID(k) > seq {
							return fmt.Errorf("inconsistent snapshot: %x=%x, sequence %d", k, v, seq)
						}
						return nil
					})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	MustView(t, db, func(tx *Tx) error {
		if got, want := tx.Bucket("n").Stats(), writers*perWriter; got != want {
			t.Errorf("keys = %d, want %d", got, want)
		}
		return nil
	})
}

func TestDB_Backup(t *testing.T) {
	var ran []int
	ms := []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran)}
	db := MustOpen(t, "", Options{Migrations: ms})
	want := map[string]string{}
	MustUpdate(t, db, func(tx *Tx) error {
		b := tx.Bucket("a")
		for i := range 500 {
			k, v := fmt.Sprintf("key-%04d", i), strings.Repeat("v", i)
			want[k] = v
			if err := b.Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})

	var buf bytes.Buffer
	n, err := db.Backup(&buf)
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	if got, want := n, int64(buf.Len()); got != want {
		t.Errorf("Backup returned %d, wrote %d bytes", got, want)
	}
	// Writes after the snapshot are not in it.
	MustUpdate(t, db, func(tx *Tx) error { return tx.Bucket("a").Put([]byte("later"), []byte("x")) })

	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ran = nil
	restored := MustOpen(t, path, Options{Migrations: ms})
	if len(ran) != 0 {
		t.Errorf("restored backup ran migrations %v", ran)
	}
	if got, want := mustVersion(t, restored), 2; got != want {
		t.Errorf("SchemaVersion = %d, want %d", got, want)
	}
	if err := restored.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	got := map[string]string{}
	MustView(t, restored, func(tx *Tx) error {
		return tx.Bucket("a").ForEach(func(k, v []byte) error {
			got[string(k)] = string(v)
			return nil
		})
	})
	if len(got) != len(want) {
		t.Errorf("restored %d keys, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("restored %q = %q, want %q", k, got[k], v)
			break
		}
	}
}

func TestDB_Check(t *testing.T) {
	fill := func(t *testing.T, path string) {
		t.Helper()
		db, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		MustUpdate(t, db, func(tx *Tx) error {
			b, err := tx.CreateBucketIfNotExists("b")
			if err != nil {
				return err
			}
			for i := range 2000 {
				if err := b.Put(Key(uint64(i)), bytes.Repeat([]byte{'x'}, 100)); err != nil {
					return err
				}
			}
			return nil
		})
		if err := db.Check(); err != nil {
			t.Errorf("Check on a healthy read-write db: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("healthy", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ok.db")
		fill(t, path)
		db := MustOpen(t, path, Options{ReadOnly: true})
		if err := db.Check(); err != nil {
			t.Errorf("Check on a healthy read-only db: %v", err)
		}
	})

	t.Run("corrupt page", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.db")
		fill(t, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Zero the header of every fourth page from page 3 on: the meta pages (0 and 1) stay
		// intact, so the file still opens, but pages of bucket b go bad.
		pageSize := os.Getpagesize()
		for p := 3; (p+1)*pageSize <= len(data); p += 4 {
			clear(data[p*pageSize : p*pageSize+16])
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		db := MustOpen(t, path, Options{ReadOnly: true})
		err = db.Check()
		if err == nil {
			t.Fatal("Check on a corrupted db = nil, want errors")
		}
		t.Logf("Check: %v", err)
		if !strings.HasPrefix(err.Error(), "check db: ") {
			t.Errorf("Check error %q lacks the operation", err)
		}
	})
}
