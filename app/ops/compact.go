package ops

// `ownsona compact`: the file rewritten without its free pages.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

func compactCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("compact", "compact [--db PATH]",
		"With the server stopped, rewrites the database without its free pages (bbolt never shrinks\n"+
			"a file) and swaps it in; a crash at any moment leaves the old or the new file whole.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if env.Live != nil || adminsock.Answers(ctx, *db) {
		return Usagef("compact: a server runs on %s; stop it first", *db)
	}
	if err := mustExist(*db); err != nil {
		return err
	}
	// Take and release the lock to learn that no process holds the file.
	cur, err := kv.Open(*db, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return fmt.Errorf("compact: %w", OpenError(*db, err))
	}
	if err := cur.Close(); err != nil {
		return err
	}
	// Temporary files of compactions that were killed are garbage: no process holds the file.
	if old, _ := filepath.Glob(filepath.Join(filepath.Dir(*db), "."+filepath.Base(*db)+".tmp-*")); len(old) > 0 {
		for _, f := range old {
			os.Remove(f)
		}
	}
	before, after, err := kv.Compact(*db, *db)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "compacted %s: %d → %d bytes\n", *db, before, after)
	return nil
}
