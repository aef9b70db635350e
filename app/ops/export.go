package ops

// `ownsona export`: every memory as JSON Lines on standard output.

import (
	"context"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
)

func exportCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("export", "export [--active-only] [--db PATH]",
		"Writes every memory as JSON Lines to standard output, oldest first: a header line, then one\n"+
			"memory per line with every field, forgotten and expired ones too. 'ownsona import' reads it\n"+
			"back. It never changes the file.")
	db := dbFlags(fs, env)
	activeOnly := fs.Bool("active-only", false, "leave out forgotten and expired memories")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"export"}, args...)}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(*db, true)
	if err != nil {
		return err
	}
	defer done()
	if err := memory.Export(kdb, env.Stdout, !*activeOnly, env.now()); err != nil {
		return err
	}
	return done()
}
