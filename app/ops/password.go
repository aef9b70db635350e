package ops

// `ownsona password set`: a new owner password, for the login page, kept hashed in the file.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/login"
)

func passwordCmd(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, "password", []subcommand{
		{"set", "password set", "Sets the owner's login password (for a lost generated one, too).", passwordSet},
	}, args)
}

func passwordSet(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("password set", "password set [--db PATH]",
		"Reads a new owner password (twice without echo on a terminal, else one line of standard\n"+
			"input; at least 12 characters) and keeps its argon2id hash in the file, in place of the\n"+
			"generated one. A running server signs in with it at once. OWNSONA_LOGIN_PASSWORD, where\n"+
			"it is set, still wins over it.")
	db := dbFlags(fs, env)
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	if env.Live == nil {
		if err := mustExist(*db); err != nil {
			return err // before asking for a password
		}
	}
	pw, err := readNewPassword(env, "password set")
	if err != nil {
		return err
	}
	// Through the socket the password travels as the command's standard input, never in its
	// arguments (which the server logs by name).
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: []string{"password", "set"}}, strings.NewReader(pw+"\n")); handled {
		if err == nil && env.Getenv("OWNSONA_LOGIN_PASSWORD") != "" {
			fmt.Fprintln(env.Stderr, "Note: OWNSONA_LOGIN_PASSWORD is set in this environment; where the server has it too, it wins over the new password.")
		}
		return err
	}
	hash, err := login.HashPassword(pw)
	if err != nil {
		return err
	}
	if live := env.Live; live != nil && live.SetOwnerPassword != nil {
		err := live.SetOwnerPassword(hash)
		switch {
		case errors.Is(err, oauth.ErrPasswordConfigured):
			fmt.Fprintf(env.Stdout, "set the owner's login password of %s\n", live.DBPath)
			fmt.Fprintln(env.Stdout, "The running server was started with OWNSONA_LOGIN_PASSWORD, which wins over it: remove that setting and restart to use this password.")
			return nil
		case err != nil:
			return err
		}
		fmt.Fprintf(env.Stdout, "set the owner's login password of %s\n", live.DBPath)
		fmt.Fprintln(env.Stdout, "The running server signs in with it from now on; the old password no longer works.")
		return nil
	}
	kdb, name, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	if err := oauth.SetOwnerPassword(kdb, hash); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "set the owner's login password of %s\n", name)
	if env.Live != nil {
		fmt.Fprintln(env.Stdout, "The running server checks logins against the password it started with; restart it to use the new one.")
	} else {
		fmt.Fprintln(env.Stdout, "A server started on this file uses it from its next start.")
	}
	fmt.Fprintln(env.Stdout, "If OWNSONA_LOGIN_PASSWORD is set for the server, it still wins: remove it to use this password.")
	if env.Getenv("OWNSONA_LOGIN_PASSWORD") != "" {
		fmt.Fprintln(env.Stderr, "Note: OWNSONA_LOGIN_PASSWORD is set in this environment; a server started with it ignores the new password.")
	}
	return done()
}
