package kv

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testMigrations = []Migration{
	{Version: 1, Name: "things", Up: func(tx *Tx) error { _, err := tx.CreateBucketIfNotExists("things"); return err }},
}

func MustOpen(tb testing.TB, path string, opts Options) *DB {
	tb.Helper()
	db, err := Open(path, opts)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func TestDB_Open(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	db := MustOpen(t, path, Options{Migrations: testMigrations})
	t.Run("mode 0600", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("mode = %v, want %v", got, want)
		}
	})
	t.Run("schema version", func(t *testing.T) {
		got, err := db.SchemaVersion()
		if err != nil || got != 1 {
			t.Errorf("SchemaVersion = %d, %v; want 1", got, err)
		}
	})
	t.Run("second open fails with ErrInUse", func(t *testing.T) {
		_, err := Open(path, Options{Timeout: 50 * time.Millisecond})
		if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), path) {
			t.Errorf("err = %v, want ErrInUse naming the path", err)
		}
	})
	t.Run("close is idempotent", func(t *testing.T) {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
		var nilDB *DB
		if err := nilDB.Close(); err != nil {
			t.Errorf("nil Close = %v", err)
		}
	})
}

func TestDB_Migrations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	var ran []int
	migs := []Migration{
		{Version: 1, Name: "one", Up: func(tx *Tx) error { ran = append(ran, 1); _, err := tx.CreateBucketIfNotExists("a"); return err }},
		{Version: 2, Name: "two", Up: func(tx *Tx) error { ran = append(ran, 2); _, err := tx.CreateBucketIfNotExists("b"); return err }},
	}
	MustOpen(t, path, Options{Migrations: migs[:1]}).Close()
	MustOpen(t, path, Options{Migrations: migs}).Close()
	MustOpen(t, path, Options{Migrations: migs}).Close()
	if got, want := ran, []int{1, 2}; len(got) != len(want) || got[0] != 1 || got[1] != 2 {
		t.Errorf("migrations ran %v, want %v once each in order", got, want)
	}

	t.Run("failing migration keeps the version", func(t *testing.T) {
		bad := append(migs, Migration{Version: 3, Name: "explode", Up: func(tx *Tx) error {
			tx.CreateBucketIfNotExists("c")
			return errors.New("boom")
		}})
		_, err := Open(path, Options{Migrations: bad})
		if err == nil || !strings.Contains(err.Error(), "explode") {
			t.Fatalf("err = %v, want it to name the migration", err)
		}
		db := MustOpen(t, path, Options{Migrations: migs})
		if v, _ := db.SchemaVersion(); v != 2 {
			t.Errorf("version = %d, want 2", v)
		}
		db.View(func(tx *Tx) error {
			if tx.Bucket("c") != nil {
				t.Error("the failed migration's bucket survived")
			}
			return nil
		})
		db.Close()
	})

	t.Run("newer schema refused and untouched", func(t *testing.T) {
		before, _ := os.ReadFile(path)
		_, err := Open(path, Options{Migrations: migs[:1]})
		if !errors.Is(err, ErrNewerSchema) || !strings.Contains(err.Error(), "version 2") {
			t.Fatalf("err = %v, want ErrNewerSchema naming version 2", err)
		}
		after, _ := os.ReadFile(path)
		if sha256.Sum256(before) != sha256.Sum256(after) {
			t.Error("the newer file was modified")
		}
	})

	t.Run("misnumbered migrations", func(t *testing.T) {
		_, err := Open(filepath.Join(t.TempDir(), "x"), Options{Migrations: []Migration{{Version: 2, Name: "skip"}}})
		if err == nil {
			t.Error("a migration list starting at 2 was accepted")
		}
	})
}

func TestBucket_GetCopiesAndSequence(t *testing.T) {
	db := MustOpen(t, filepath.Join(t.TempDir(), "db"), Options{Migrations: testMigrations})
	var ids []uint64
	err := db.Update(func(tx *Tx) error {
		b := tx.Bucket("things")
		for range 3 {
			id, err := b.NextSequence()
			if err != nil {
				return err
			}
			ids = append(ids, id)
			if err := b.Put(Key(id), []byte("value")); err != nil {
				return err
			}
		}
		return b.Delete(Key(ids[2]))
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	db.View(func(tx *Tx) error { got = tx.Bucket("things").Get(Key(ids[0])); return nil })
	db.Update(func(tx *Tx) error { return tx.Bucket("things").Put(Key(ids[0]), []byte("other")) })
	if string(got) != "value" {
		t.Errorf("Get result changed after the transaction: %q", got)
	}
	var next uint64
	db.Update(func(tx *Tx) error { var err error; next, err = tx.Bucket("things").NextSequence(); return err })
	if next != 4 {
		t.Errorf("sequence after delete = %d, want 4 (never reused)", next)
	}
	var keys []uint64
	db.View(func(tx *Tx) error {
		return tx.Bucket("things").ForEach(func(k, v []byte) error { keys = append(keys, ID(k)); return nil })
	})
	if len(keys) != 2 || keys[0] != 1 || keys[1] != 2 {
		t.Errorf("keys = %v, want [1 2] in order", keys)
	}
	if !bytes.Equal(Key(258), []byte{0, 0, 0, 0, 0, 0, 1, 2}) || ID(Key(1<<40)) != 1<<40 || ID([]byte{1}) != 0 {
		t.Error("Key/ID encoding is not 8-byte big-endian")
	}
}

func TestDB_BackupAndCheck(t *testing.T) {
	dir := t.TempDir()
	db := MustOpen(t, filepath.Join(dir, "db"), Options{Migrations: testMigrations})
	db.Update(func(tx *Tx) error { return tx.Bucket("things").Put(Key(1), []byte("kept")) })
	if err := db.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	var buf bytes.Buffer
	if _, err := db.Backup(&buf); err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy")
	if err := os.WriteFile(copyPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	c := MustOpen(t, copyPath, Options{Migrations: testMigrations})
	c.View(func(tx *Tx) error {
		if got := string(tx.Bucket("things").Get(Key(1))); got != "kept" {
			t.Errorf("backup holds %q, want kept", got)
		}
		return nil
	})
}

// TestDB_OpenLockedByAnotherProcess re-executes the test binary as a child that holds the file.
func TestDB_OpenLockedByAnotherProcess(t *testing.T) {
	if path := os.Getenv("KV_TEST_HOLD"); path != "" {
		db, err := Open(path, Options{Migrations: testMigrations})
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		buf := make([]byte, 1)
		os.Stdin.Read(buf) // hold until the parent closes stdin
		db.Close()
		os.Exit(0)
	}
	path := filepath.Join(t.TempDir(), "db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestDB_OpenLockedByAnotherProcess$")
	cmd.Env = append(os.Environ(), "KV_TEST_HOLD="+path)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 5)
	if _, err := stdout.Read(buf); err != nil || string(buf[:4]) != "held" {
		t.Fatalf("child did not hold the file: %q %v", buf, err)
	}
	_, err := Open(path, Options{Timeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrInUse) {
		t.Errorf("err = %v, want ErrInUse", err)
	}
}
