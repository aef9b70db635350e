package ops

// The commands' side of the admin socket: what runs inside a running server, and how a
// command that runs there reaches it.

import (
	"context"
	"errors"
	"io"

	"github.com/ownsona/ownsona/app/adminsock"
)

// SocketCommands are the Socket commands of Commands(), run inside the server live: what
// serve hands adminsock.Listen. Each runs with env.Live set and without the client's settings.
func SocketCommands(live *Live) map[string]adminsock.Handler {
	m := map[string]adminsock.Handler{}
	for _, c := range Commands() {
		if !c.Socket {
			continue
		}
		run := c.Run
		m[c.Name] = func(ctx context.Context, call *adminsock.Call) error {
			env := &Env{
				Stdin:     call.Stdin,
				Stdout:    call.Stdout,
				Stderr:    call.Stderr,
				Getenv:    func(string) string { return "" }, // the client's settings do not apply here
				Cwd:       call.Cwd,
				Live:      live,
				stdinName: call.StdinName,
			}
			return run(ctx, env, call.Args[1:])
		}
	}
	return m
}

// forward runs a command through the admin socket unless the command already runs inside the
// server: a Socket command calls it first, and goes on with the file itself when handled is
// false. stdin, if not nil, is the command's standard input there.
func (env *Env) forward(ctx context.Context, db string, c adminsock.Call, stdin io.Reader) (handled bool, err error) {
	return env.forwardTo(ctx, db, c, stdin, env.Stdout)
}

// forwardTo is forward with the command's standard output sent to stdout. A usage error from
// the server is a *UsageError here.
func (env *Env) forwardTo(ctx context.Context, db string, c adminsock.Call, stdin io.Reader, stdout io.Writer) (handled bool, err error) {
	if env.Live != nil {
		return false, nil
	}
	c.Cwd, c.Stdin, c.Stdout, c.Stderr = env.Cwd, stdin, stdout, env.Stderr
	handled, err = adminsock.Forward(ctx, db, &c)
	if errors.Is(err, adminsock.ErrUsage) {
		err = &UsageError{err.Error()}
	}
	return handled, err
}
