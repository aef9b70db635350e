package ops

// `ownsona check [FILE]`: bbolt's page check and ownsona's own check of what the file holds.

import (
	"context"
	"errors"
	"fmt"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/kv"
)

func checkCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("check", "check [FILE] [--db PATH]",
		"Checks the database (through the server while it runs), or FILE (a backup; no process may\n"+
			"have it open): bbolt's page check, then ownsona's: the schema version is one this build\n"+
			"knows, every memory and vector decodes and every vector has its memory, every personal\n"+
			"access token hash points to a token, every audit entry decodes.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(operands) > 1:
		return Usagef("check: takes at most one FILE")
	case len(operands) == 1:
		p := env.path(operands[0])
		report, err := backup.CheckFileSummary(p)
		if err != nil {
			return fmt.Errorf("check %s: %w", p, heldError(p, err))
		}
		fmt.Fprintf(env.Stdout, "%s: ok (%s)\n", p, report)
		return nil
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"check"}, args...)}, nil); handled {
		return err
	}
	kdb, name, done, err := env.openDB(*db, true)
	if err != nil {
		return err
	}
	defer done()
	if err := kdb.Check(); err != nil {
		return fmt.Errorf("check %s: %w", name, err)
	}
	report, err := backup.CheckContents(kdb)
	if err != nil {
		return fmt.Errorf("check %s: %w", name, err)
	}
	fmt.Fprintf(env.Stdout, "%s: ok (%s)\n", name, report)
	return done()
}

// heldError is OpenError for a file another process holds (kv.ErrInUse), else err.
func heldError(path string, err error) error {
	if errors.Is(err, kv.ErrInUse) {
		return OpenError(path, err)
	}
	return err
}
