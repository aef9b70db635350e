package kv

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// backups lists the upgrade backups beside the file at path, by name.
func backups(tb testing.TB, path string) []string {
	tb.Helper()
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(path)+".pre-v") {
			names = append(names, e.Name())
		}
	}
	return names
}

// mustFileAt makes a file at path migrated by ms, with key "k" = "v" in bucket "a" (which
// migration 1 must create).
func mustFileAt(tb testing.TB, path string, ms []Migration) {
	tb.Helper()
	db, err := Open(path, Options{Migrations: ms})
	if err != nil {
		tb.Fatal(err)
	}
	MustUpdate(tb, db, func(tx *Tx) error { return tx.Bucket("a").Put([]byte("k"), []byte("v")) })
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

// TestDB_OpenUpgradeBackup: before Open migrates a file that holds data, it writes a checked
// backup of the file as it was beside it (mode 0600: SECURITY.md ST-14, "the DB and backups have
// mode 0600"), says where through OnUpgrade, and only then migrates; a new or up-to-date
// file, or a read-only open, gets none; a backup that fails migrates nothing.
func TestDB_OpenUpgradeBackup(t *testing.T) {
	t.Run("backup, then migrate", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		var ran []int
		var during []string // the backups that exist when migration 2 runs
		ms := []Migration{
			bucketMigration(1, "a", &ran),
			{Version: 2, Name: "create b", Up: func(tx *Tx) error {
				during = backups(t, path)
				_, err := tx.CreateBucketIfNotExists("b")
				return err
			}},
			bucketMigration(3, "c", &ran),
		}
		mustFileAt(t, path, ms[:1])

		var told []Upgrade
		db := MustOpen(t, path, Options{Migrations: ms, OnUpgrade: func(u Upgrade) { told = append(told, u) }})
		if got, want := mustVersion(t, db), 3; got != want {
			t.Errorf("SchemaVersion = %d, want %d", got, want)
		}
		names := backups(t, path)
		if len(names) != 1 {
			t.Fatalf("backups = %v, want one", names)
		}
		if !regexp.MustCompile(`^ownsona\.db\.pre-v3-\d{8}T\d{6}Z\.bak$`).MatchString(names[0]) {
			t.Errorf("backup name %q, want ownsona.db.pre-v3-YYYYMMDDTHHMMSSZ.bak", names[0])
		}
		if !slices.Equal(during, names) {
			t.Errorf("backups while migrating = %v, want %v: the backup comes first", during, names)
		}
		bak := filepath.Join(filepath.Dir(path), names[0])
		fi, err := os.Stat(bak)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("backup mode = %v, want 0600", got)
		}
		if got, want := told, []Upgrade{{From: 1, To: 3, Backup: bak, Bytes: fi.Size()}}; !slices.Equal(got, want) {
			t.Errorf("OnUpgrade got %+v, want %+v", got, want)
		}
		if err := CheckFile(bak); err != nil {
			t.Errorf("CheckFile(backup): %v", err)
		}
		old := MustOpen(t, bak, Options{Migrations: ms, ReadOnly: true})
		if got, want := mustVersion(t, old), 1; got != want {
			t.Errorf("backup's SchemaVersion = %d, want %d", got, want)
		}
		MustView(t, old, func(tx *Tx) error {
			if got := tx.Bucket("a").Get([]byte("k")); string(got) != "v" {
				t.Errorf("backup's a/k = %q, want v", got)
			}
			if tx.Bucket("b") != nil || tx.Bucket("c") != nil {
				t.Error("the backup holds the migrations' buckets")
			}
			return nil
		})

		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		told = nil
		MustOpen(t, path, Options{Migrations: ms, OnUpgrade: func(u Upgrade) { told = append(told, u) }})
		if got := backups(t, path); len(got) != 1 || told != nil {
			t.Errorf("reopening an up-to-date file: backups %v, OnUpgrade %v; want no new backup", got, told)
		}
	})

	t.Run("none for a new file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.db")
		var ran []int
		called := false
		MustOpen(t, path, Options{Migrations: []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran)},
			OnUpgrade: func(Upgrade) { called = true }})
		if got := backups(t, path); len(got) != 0 || called {
			t.Errorf("backups = %v, OnUpgrade called %v; want none", got, called)
		}
	})

	t.Run("none for a read-only open", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ro.db")
		var ran []int
		ms := []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran)}
		mustFileAt(t, path, ms[:1])
		MustOpen(t, path, Options{Migrations: ms, ReadOnly: true})
		if got := backups(t, path); len(got) != 0 {
			t.Errorf("backups = %v, want none", got)
		}
	})

	t.Run("a failed backup migrates nothing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "ownsona.db")
		var ran []int
		ms := []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran)}
		mustFileAt(t, path, ms[:1])
		before := mustHash(t, path)
		// A directory that is not empty where the backup goes: its rename fails, as a full
		// disk or a read-only directory would fail it.
		at := time.Date(2026, 3, 1, 10, 15, 0, 0, time.UTC)
		t.Cleanup(func() { now = time.Now })
		now = func() time.Time { return at }
		block := upgradeBackupName(path, 2, at)
		if err := os.MkdirAll(filepath.Join(block, "x"), 0o700); err != nil {
			t.Fatal(err)
		}
		ran = nil
		called := false
		_, err := Open(path, Options{Migrations: ms, OnUpgrade: func(Upgrade) { called = true }})
		if err == nil {
			t.Fatal("Open succeeded; want the backup's failure")
		}
		for _, want := range []string{path, "migrate from schema 1 to 2", block, "nothing was migrated"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		if len(ran) != 0 || called {
			t.Errorf("ran %v, OnUpgrade called %v; want neither", ran, called)
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
		if got := backups(t, path); !slices.Equal(got, []string{filepath.Base(block)}) {
			t.Errorf("beside the file: %v, want only the blocking directory (no temporary file left)", got)
		}
	})

	t.Run("a newer file names the backup to put back", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "ownsona.db")
		var ran []int
		ms := []Migration{bucketMigration(1, "a", &ran), bucketMigration(2, "b", &ran), bucketMigration(3, "c", &ran)}
		mustFileAt(t, path, ms[:1])
		t.Cleanup(func() { now = time.Now })
		now = func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }
		db, err := Open(path, Options{Migrations: ms})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := backups(t, path), []string{"ownsona.db.pre-v3-20260101T000000Z.bak"}; !slices.Equal(got, want) {
			t.Fatalf("backups = %v, want %v", got, want)
		}
		// A later upgrade's, the one to name; another file's, and an upgrade to 2's: not those.
		newest := filepath.Join(dir, "ownsona.db.pre-v3-20260301T101500Z.bak")
		for _, p := range []string{newest, filepath.Join(dir, "other.db.pre-v3-20270101T000000Z.bak"),
			filepath.Join(dir, "ownsona.db.pre-v2-20270101T000000Z.bak")} {
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		before := mustHash(t, path)
		_, err = Open(path, Options{Migrations: ms[:1]})
		if !errors.Is(err, ErrNewerSchema) {
			t.Fatalf("err = %v, want ErrNewerSchema", err)
		}
		for _, want := range []string{"schema version 3", "reads schema versions up to 1", "run that newer ownsona",
			"put back the backup the upgrade left beside it, " + newest + ","} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
		}
		if got := mustHash(t, path); got != before {
			t.Error("file bytes changed")
		}
	})
}
