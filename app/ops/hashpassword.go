package ops

// `ownsona hash-password`: the argon2id hash of a password, for OWNSONA_LOGIN_PASSWORD.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/ownsona/ownsona/oauth"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/ownsona/ownsona/oauth/login"
)

// minPassword is the shortest password password set and hash-password accept: the same rule as
// a plain-text OWNSONA_LOGIN_PASSWORD's, so one rule holds wherever a password is chosen.
const minPassword = oauth.MinPlainPassword

func hashPasswordCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("hash-password", "hash-password",
		"Reads a password (twice without echo on a terminal, else one line of standard input) and\n"+
			"prints its argon2id hash, for OWNSONA_LOGIN_PASSWORD. The hash, not the password, goes in\n"+
			"the service's environment file.")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 {
		return Usagef("hash-password: reads the password from standard input and takes no arguments")
	}
	pw, err := readNewPassword(env, "hash-password")
	if err != nil {
		return err
	}
	h, err := login.HashPassword(pw)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, h)
	return nil
}

// readNewPassword reads a new password from env.Stdin: twice, without echo, when it is a
// terminal (prompts on env.Stderr), else one line. It must have at least minPassword
// characters.
func readNewPassword(env *Env, cmd string) (string, error) {
	var pw string
	in := env.Stdin
	if in == nil {
		in = eof{}
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(env.Stderr, "Password: ")
		a, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", err
		}
		fmt.Fprint(env.Stderr, "Again: ")
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", err
		}
		if string(a) != string(b) {
			return "", Usagef("%s: the two passwords differ", cmd)
		}
		pw = string(a)
	} else {
		line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		pw = strings.TrimRight(line, "\r\n")
	}
	if len([]rune(pw)) < minPassword {
		return "", Usagef("%s: use at least %d characters (a long passphrase is best)", cmd, minPassword)
	}
	return pw, nil
}
