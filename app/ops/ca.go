package ops

// `ownsona ca export`: the root certificate of the local certificate authority (--tls local).

import (
	"context"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/certs"
)

func caCmd(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, "ca", []subcommand{
		{"export", "ca export", "Prints the root certificate of --tls local as PEM, for devices to trust.", caExport},
	}, args)
}

func caExport(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("ca export", "ca export [--db PATH]",
		"Prints the root certificate of the local certificate authority (--tls local) as PEM, for\n"+
			"devices to trust. It creates the authority if the file has none yet.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"ca", "export"}, args...)}, nil); handled {
		return err
	}
	kdb, done, err := env.createDB(*db)
	if err != nil {
		return err
	}
	defer done()
	pem, err := certs.RootPEM(kdb)
	if err != nil {
		return err
	}
	if _, err := env.Stdout.Write(pem); err != nil {
		return err
	}
	return done()
}
