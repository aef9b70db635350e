package ops_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// mustImport stores memories of texts in the database at db, offline.
func mustImport(t testing.TB, db string, texts ...string) {
	t.Helper()
	var in strings.Builder
	for _, text := range texts {
		in.WriteString(`{"type":"entity","name":"Note","entityType":"note","observations":["` + text + `"]}` + "\n")
	}
	mustRun(t, newEnv(db, in.String()), "import", "-")
}

func TestBackup(t *testing.T) {
	dir := t.TempDir()
	db := MustCreateDB(t, filepath.Join(dir, "o.db"))
	mustImport(t, db, "The spare key is under the blue pot")
	to := filepath.Join(dir, "b.db")

	t.Run("writes a checked file with mode 0600", func(t *testing.T) {
		out := mustRun(t, newEnv(db, ""), "backup", "--to", to)
		if want := "backed up " + db + " to " + to + " ("; !strings.HasPrefix(out, want) || !strings.HasSuffix(out, " bytes, checked)\n") {
			t.Errorf("output %q, want %q...", out, want)
		}
		fi, err := os.Stat(to)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup file: %v, mode %v; want 0600", err, fi.Mode())
		}
		if err := backup.CheckFile(to); err != nil {
			t.Errorf("CheckFile(backup) = %v", err)
		}
		if got := exportTexts(t, to); len(got) != 1 || !got["Note: The spare key is under the blue pot"] {
			t.Errorf("backup holds %v", got)
		}
	})
	t.Run("refuses an existing file without --force", func(t *testing.T) {
		os.WriteFile(to, []byte("keep me"), 0o600)
		_, _, err := run(t, newEnv(db, ""), "backup", "--to", to)
		var ue *ops.UsageError
		if !errors.As(err, &ue) || err.Error() != "backup: "+to+" exists; add --force to replace it" {
			t.Errorf("err = %v, want a usage error that names --force", err)
		}
		if b, _ := os.ReadFile(to); string(b) != "keep me" {
			t.Errorf("the existing file was changed")
		}
	})
	t.Run("replaces it with --force", func(t *testing.T) {
		mustRun(t, newEnv(db, ""), "backup", "--to", to, "--force")
		if err := backup.CheckFile(to); err != nil {
			t.Errorf("CheckFile(backup) = %v", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("the directory holds %d files, want the database and the backup (no temporary file)", len(entries))
		}
	})
	t.Run("refuses the database itself", func(t *testing.T) {
		_, _, err := run(t, newEnv(db, ""), "backup", "--to", db, "--force")
		if err == nil || !strings.Contains(err.Error(), "is the database itself") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("to standard output", func(t *testing.T) {
		out := mustRun(t, newEnv(db, ""), "backup", "--to", "-")
		p := filepath.Join(t.TempDir(), "stdout.db")
		os.WriteFile(p, []byte(out), 0o600)
		if err := backup.CheckFile(p); err != nil {
			t.Errorf("CheckFile(the snapshot on standard output) = %v", err)
		}
	})
	t.Run("relative to the command's directory", func(t *testing.T) {
		env := newEnv(db, "")
		env.Cwd = t.TempDir()
		mustRun(t, env, "backup", "--to", "rel.db")
		if err := backup.CheckFile(filepath.Join(env.Cwd, "rel.db")); err != nil {
			t.Errorf("CheckFile(Cwd/rel.db) = %v", err)
		}
	})
}

func TestBackupTo(t *testing.T) {
	dir := t.TempDir()
	db := kvtest.OpenFile(t, filepath.Join(dir, "o.db"), kv.Options{Migrations: memory.Migrations})
	to := filepath.Join(dir, "scheduled.db")
	n, err := backup.ToFile(db, to)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(to)
	if err != nil || fi.Size() != n || fi.Mode().Perm() != 0o600 {
		t.Errorf("backup: %v, %d bytes (BackupTo said %d), mode %v", err, fi.Size(), n, fi.Mode())
	}
	if _, err := backup.ToFile(db, filepath.Join(dir, "missing", "x.db")); err == nil {
		t.Error("BackupTo into a missing directory succeeded")
	}
}

// exportTexts are the texts of the memories in the database at db.
func exportTexts(t testing.TB, db string) map[string]bool {
	t.Helper()
	out := mustRun(t, newEnv(db, ""), "export")
	texts := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
		if _, rest, ok := strings.Cut(line, `"text":"`); ok {
			text, _, _ := strings.Cut(rest, `"`)
			texts[text] = true
		}
	}
	return texts
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	db := MustCreateDB(t, filepath.Join(dir, "o.db"))
	mustImport(t, db, "The bike lock code is in the notebook")
	t.Run("the database", func(t *testing.T) {
		got := mustRun(t, newEnv(db, ""), "check")
		if want := db + ": ok (schema 1, 1 memory, 0 vectors, 0 personal access tokens)\n"; got != want {
			t.Errorf("check = %q, want %q", got, want)
		}
	})
	t.Run("a file", func(t *testing.T) {
		got := mustRun(t, newEnv("", ""), "check", db)
		if want := db + ": ok (schema 1, 1 memory, 0 vectors, 0 personal access tokens)\n"; got != want {
			t.Errorf("check FILE = %q, want %q", got, want)
		}
	})
	t.Run("not a database", func(t *testing.T) {
		p := filepath.Join(dir, "junk.db")
		os.WriteFile(p, bytes.Repeat([]byte("junk"), 4096), 0o600)
		if _, _, err := run(t, newEnv("", ""), "check", p); err == nil {
			t.Error("check of a junk file succeeded")
		}
	})
}
