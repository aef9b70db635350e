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

	"golang.org/x/term"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/backup"
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
		n, err := backup.WriteChecked(path, func(w io.Writer) error {
			handled, err := env.forwardTo(ctx, dbPath, adminsock.Call{Args: []string{"backup", "--to", "-"}}, nil, w)
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
	n, err := backup.ToFile(kdb, path)
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
	if handled, err := env.forward(ctx, db, adminsock.Call{Args: []string{"backup", "--to", "-"}}, nil); handled {
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

// samePath reports whether a and b name one existing file.
func samePath(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
