package ops

// `ownsona restore --from FILE`: the database replaced by a checked copy of a backup.

import (
	"context"
	"fmt"
	"os"

	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

func restoreCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("restore", "restore --from FILE [--db PATH]",
		"With the server stopped, checks FILE, keeps the current database as DB.bak-TIME, and puts a\n"+
			"checked copy of FILE in its place. A crash at any moment leaves the old or the new file whole.")
	db := dbFlags(fs, env)
	from := fs.String("from", "", "the backup to restore (required)")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if *from == "" {
		return Usagef("restore: --from FILE is required")
	}
	if env.Live != nil || serverAnswers(ctx, *db) {
		return Usagef("restore: a server runs on %s; stop it first", *db)
	}
	src := env.path(*from)
	if err := backup.CheckFile(src); err != nil {
		return fmt.Errorf("restore: %s does not check, nothing changed: %w", src, heldError(src, err))
	}
	// Hold the current file's lock while swapping, so that no server starts meanwhile.
	var bak string
	if _, err := os.Stat(*db); err == nil {
		cur, err := kv.Open(*db, kv.Options{Migrations: memory.Migrations})
		if err != nil {
			return fmt.Errorf("restore: %w", OpenError(*db, err))
		}
		defer cur.Close()
		bak = fmt.Sprintf("%s.bak-%s", *db, env.now().UTC().Format("20060102T150405Z"))
		if err := kv.CopyFile(*db, bak); err != nil {
			return fmt.Errorf("restore: keeping the current file: %w", err)
		}
	}
	if err := kv.CopyFile(src, *db); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if bak != "" {
		fmt.Fprintf(env.Stdout, "restored %s from %s; the previous file is %s\n", *db, src, bak)
	} else {
		fmt.Fprintf(env.Stdout, "restored %s from %s\n", *db, src)
	}
	return nil
}
