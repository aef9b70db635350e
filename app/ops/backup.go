package ops

// `ownsona backup --to FILE`: a consistent, checked snapshot of the file, also while the
// server runs. Through the admin socket the server streams the snapshot and this process
// writes FILE, so the path is the user's and so are the permissions.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/term"

	"github.com/ownsona/ownsona/kv"
)

func backupCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("backup", "backup --to FILE [--force] [--db PATH]",
		"Writes a consistent snapshot of the database to FILE (mode 0600), also while the server runs,\n"+
			"and checks it (pages and contents) before it takes FILE's name. --to - writes the snapshot\n"+
			"to standard output instead, unchecked.")
	db := dbFlags(fs, env)
	to := fs.String("to", "", "the file to write (required); - for standard output")
	force := fs.Bool("force", false, "replace FILE if it exists")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	switch *to {
	case "":
		return Usagef("backup: --to FILE is required")
	case "-":
		return backupStdout(ctx, env, *db)
	}
	path := env.path(*to)
	dbPath := *db
	if env.Live != nil {
		dbPath = env.Live.DBPath
	}
	if samePath(path, dbPath) {
		return Usagef("backup: --to %s is the database itself", path)
	}
	if _, err := os.Lstat(path); err == nil && !*force {
		return Usagef("backup: %s exists; add --force to replace it", path)
	}
	if env.Live == nil {
		if err := mustExist(dbPath); err != nil {
			return err
		}
		// A running server streams the snapshot; this process writes and checks the file.
		n, err := writeChecked(path, func(w io.Writer) error {
			handled, err := env.forwardTo(ctx, dbPath, request{Args: []string{"backup", "--to", "-"}}, nil, w)
			if !handled {
				return errNoServer
			}
			return err
		})
		if err == nil {
			fmt.Fprintf(env.Stdout, "backed up %s to %s (%d bytes, checked)\n", dbPath, path, n)
			return nil
		}
		if !errors.Is(err, errNoServer) {
			return fmt.Errorf("backup to %s: %w", path, err)
		}
	}
	kdb, name, done, err := env.openDB(dbPath, true)
	if err != nil {
		return err
	}
	defer done()
	n, err := BackupTo(kdb, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "backed up %s to %s (%d bytes, checked)\n", name, path, n)
	return done()
}

// errNoServer: no server answered on the admin socket.
var errNoServer = errors.New("no server answers")

// backupStdout is `backup --to -`: the snapshot on standard output.
func backupStdout(ctx context.Context, env *Env, db string) error {
	if f, ok := env.Stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return Usagef("backup: --to - writes the database file to standard output, which is a terminal; redirect it")
	}
	if handled, err := env.forward(ctx, db, request{Args: []string{"backup", "--to", "-"}}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(db, true)
	if err != nil {
		return err
	}
	defer done()
	if _, err := kdb.Backup(env.Stdout); err != nil {
		return err
	}
	return done()
}

// BackupTo writes a consistent snapshot of db to path, mode 0600: to a temporary file beside
// path, fsynced and checked (pages and contents, as CheckFile) before it is renamed to path
// (replacing a file there) and the directory is fsynced. Writers go on while it runs; the
// snapshot holds every transaction committed before it started. A crash leaves path as it
// was or the whole snapshot. It returns the bytes written. Scheduled backups use it.
func BackupTo(db *kv.DB, path string) (int64, error) {
	n, err := writeChecked(path, func(w io.Writer) error {
		_, err := db.Backup(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup to %s: %w", path, err)
	}
	return n, nil
}

// writeChecked runs write on a new temporary file beside path (mode 0600), fsyncs it, checks
// it with CheckFile, renames it to path and fsyncs the directory. On any error the temporary
// file is removed and path is untouched. It returns the bytes written.
func writeChecked(path string, write func(w io.Writer) error) (n int64, err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return 0, err
	}
	cw := &countWriter{w: f}
	if err := write(cw); err != nil {
		return cw.n, err
	}
	if err := f.Sync(); err != nil {
		return cw.n, err
	}
	if err := f.Close(); err != nil {
		return cw.n, err
	}
	if _, err := checkFile(tmp); err != nil {
		return cw.n, fmt.Errorf("the snapshot does not check: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return cw.n, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return cw.n, nil
}

// countWriter counts what it writes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// samePath reports whether a and b name one existing file.
func samePath(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
