package ops

// `ownsona keys rotate|list`: the keys that sign OAuth access tokens.

import (
	"context"
	"fmt"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/oauth/token"
)

func keysCmd(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, "keys", []subcommand{
		{"rotate", "keys rotate", "Makes a new signing key; the old one keeps verifying tokens until they expire.", keysRotate},
		{"list", "keys list", "Prints the active signing key's id and the public keys (JWKS).", keysList},
	}, args)
}

func keysRotate(ctx context.Context, env *Env, args []string) error {
	return keysOp(ctx, env, "rotate", "Makes a new signing key for OAuth access tokens. The old key keeps verifying the tokens it\nsigned for "+token.RetireAfter.String()+", so clients are not logged out.", args,
		func(keys *token.Keys) error {
			old := keys.ActiveKID()
			if err := keys.Rotate(); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "new signing key %s; %s keeps verifying tokens for %s\n", keys.ActiveKID(), old, token.RetireAfter)
			return nil
		})
}

func keysList(ctx context.Context, env *Env, args []string) error {
	return keysOp(ctx, env, "list", "Prints the active signing key's id and the public keys, as the JWKS document serves them.", args,
		func(keys *token.Keys) error {
			_, err := fmt.Fprintf(env.Stdout, "active signing key: %s\n%s\n", keys.ActiveKID(), keys.JWKS())
			return err
		})
}

// keysOp parses `keys SUB`, forwards it to a running server or opens the file, and runs op.
func keysOp(ctx context.Context, env *Env, sub, about string, args []string, op func(keys *token.Keys) error) error {
	fs := newFlags("keys "+sub, "keys "+sub+" [--db PATH]", about)
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"keys", sub}, args...)}, nil); handled {
		return err
	}
	if env.Live != nil && env.Live.Keys != nil { // the server's own: a rotation is live at once
		return op(env.Live.Keys)
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	keys, err := token.OpenKeys(kdb, env.Now)
	if err != nil {
		return err
	}
	if err := op(keys); err != nil {
		return err
	}
	return done()
}
