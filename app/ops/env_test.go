package ops_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

func TestCommands(t *testing.T) {
	var got []string
	for _, c := range ops.Commands() {
		got = append(got, c.Name)
		if !strings.HasPrefix(c.Form, c.Name) || strings.Contains(c.Form+c.About, "\n") || c.About == "" {
			t.Errorf("%s: form %q, about %q: want one line each, the form starting with the name", c.Name, c.Form, c.About)
		}
	}
	want := []string{"token", "clients", "keys", "password", "audit", "ca", "backup", "check", "restore", "compact", "import", "export", "install-service", "hash-password"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Commands() = %v, want %v", got, want)
	}
}

// commandLines are every command and subcommand, as typed before its flags.
var commandLines = [][]string{
	{"token", "create"}, {"token", "list"}, {"token", "revoke"},
	{"clients", "list"}, {"clients", "revoke"}, {"clients", "revoke-all"}, {"clients", "delete"}, {"clients", "prune"},
	{"keys", "rotate"}, {"keys", "list"},
	{"password", "set"},
	{"audit"}, {"ca", "export"}, {"backup"}, {"check"}, {"restore"}, {"compact"}, {"import"}, {"export"},
	{"install-service"}, {"hash-password"},
}

func TestCommand_Help(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, line := range commandLines {
		for _, help := range []string{"--help", "-h"} {
			args := append(append([]string(nil), line...), help)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				out, _, err := run(t, newEnv(db, ""), args...)
				if err != nil {
					t.Fatalf("err = %v, want nil", err)
				}
				if want := "Usage: ownsona " + strings.Join(line, " "); !strings.HasPrefix(out, want) {
					t.Errorf("output starts %q, want %q", firstLine(out), want)
				}
				if line[0] != "hash-password" && !strings.Contains(out, "-db") {
					t.Errorf("usage lists no --db flag:\n%s", out)
				}
			})
		}
	}
	for _, group := range []string{"token", "clients", "keys", "password", "ca"} {
		t.Run(group+" --help", func(t *testing.T) {
			out, _, err := run(t, newEnv(db, ""), group, "--help")
			if err != nil || !strings.HasPrefix(out, "Usage: ownsona "+group+" ") {
				t.Errorf("err = %v, output %q; want nil and the subcommands", err, out)
			}
		})
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--help created %s", db)
	}
}

func TestCommand_UsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.db")
	for _, line := range commandLines {
		args := append(append([]string(nil), line...), "--bogus")
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := run(t, newEnv(db, ""), args...)
			var ue *ops.UsageError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want a *UsageError", err)
			}
			if want := strings.Join(line, " ") + ": flag provided but not defined: -bogus"; !strings.Contains(err.Error(), want) {
				t.Errorf("err = %q, want it to say %q", err, want)
			}
		})
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"token"}, "token: say create, list or revoke"},
		{[]string{"token", "mint"}, `token: unknown subcommand "mint"; use create, list or revoke`},
		{[]string{"token", "--db", db, "list"}, "token: name the subcommand first"},
		{[]string{"token", "create"}, "token create: --name is required"},
		{[]string{"token", "create", "--name", "x", "--expires", "5y"}, `token create: --expires: "5y" is not a duration`},
		{[]string{"token", "create", "--name", "x", "extra"}, `token create: unexpected argument "extra"`},
		{[]string{"token", "revoke"}, "token revoke: name the token"},
		{[]string{"clients", "revoke"}, "clients revoke: name one CLIENT_ID"},
		{[]string{"keys", "list", "now"}, `keys list: unexpected argument "now"`},
		{[]string{"audit", "--limit", "-1"}, "audit: --limit: -1 is negative"},
		{[]string{"backup"}, "backup: --to FILE is required"},
		{[]string{"check", "a", "b"}, "check: takes at most one FILE"},
		{[]string{"restore"}, "restore: --from FILE is required"},
		{[]string{"import"}, "import: name one FILE"},
		{[]string{"export", "--db", ""}, "export: --db: the database path is empty"},
		{[]string{"hash-password", "pw"}, "hash-password: reads the password from standard input"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, _, err := run(t, newEnv(db, ""), tt.args...)
			var ue *ops.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want a *UsageError with %q", err, tt.want)
			}
		})
	}
}

// TestCommand_NoDatabase: the commands that read or administer the file refuse a path where
// none exists, and create nothing there.
func TestCommand_NoDatabase(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "typo.db")
	for _, args := range [][]string{
		{"token", "create", "--name", "x"}, {"token", "list"}, {"token", "revoke", "x"},
		{"clients", "list"}, {"clients", "revoke", "c"}, {"clients", "revoke-all"}, {"clients", "delete", "c"}, {"clients", "prune"},
		{"keys", "rotate"}, {"keys", "list"},
		{"password", "set"},
		{"audit"}, {"backup", "--to", filepath.Join(dir, "b.db")}, {"check"}, {"compact"}, {"export"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			_, _, err := run(t, newEnv(db, "a long enough password\n"), args...)
			if !errors.Is(err, ops.ErrNoDatabase) {
				t.Fatalf("err = %v, want ErrNoDatabase", err)
			}
			if want := "no database at " + db + " — start the server once, or check --db"; err.Error() != want {
				t.Errorf("err = %q, want %q", err, want)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 0 {
				t.Errorf("the directory holds %v, want nothing", entries)
			}
		})
	}
}

// TestCommand_CAExportBeforeFirstStart: `ca export` is for the devices to trust before the
// server first runs, so it makes the file (and the authority) rather than refuse.
func TestCommand_CAExportBeforeFirstStart(t *testing.T) {
	db := filepath.Join(t.TempDir(), "new.db")
	out, _, err := run(t, newEnv(db, ""), "ca", "export")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "-----BEGIN CERTIFICATE-----") {
		t.Errorf("ca export printed %q, want a PEM certificate", out)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the database was not made: %v", err)
	}
}

func TestDBFlag(t *testing.T) {
	for _, tt := range []struct{ name, env, cwd, args, want string }{
		{"default", "", "", "", "ownsona.db"},
		{"OWNSONA_DB", "/srv/o.db", "", "", "/srv/o.db"},
		{"the flag wins", "/srv/o.db", "", "--db=x.db", "x.db"},
		{"relative to Cwd", "/srv/o.db", "/home/me", "--db=x.db", "/home/me/x.db"},
		{"OWNSONA_DB relative to Cwd", "rel.db", "/home/me", "", "/home/me/rel.db"},
		{"absolute", "", "/home/me", "--db=/abs.db", "/abs.db"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fs := flagSet()
			env := newEnv(tt.env, "")
			env.Cwd = tt.cwd
			p := ops.DBFlag(fs, env)
			var args []string
			if tt.args != "" {
				args = []string{tt.args}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			if *p != tt.want {
				t.Errorf("--db = %q, want %q", *p, tt.want)
			}
		})
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestOpen_InUse: a file another process holds (here this test, through kv) is named with its
// holder, without blaming serve.
func TestOpen_InUse(t *testing.T) {
	db := filepath.Join(t.TempDir(), "o.db")
	kvtest.OpenFile(t, db, kv.Options{Migrations: memory.Migrations})
	_, _, err := run(t, newEnv(db, ""), "token", "list")
	if !errors.Is(err, kv.ErrInUse) {
		t.Fatalf("err = %v, want ErrInUse", err)
	}
	want := "open " + db + ": database file is in use by another process"
	if runtime.GOOS == "linux" {
		want += fmt.Sprintf(" (pid %d: ", os.Getpid())
	}
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "; several clients, or backups while one is open: run `ownsona serve`") {
		t.Errorf("err = %q, want %q...", err, want)
	}
}
