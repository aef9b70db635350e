package ops

// What every command shares: the table of commands, the environment they run in, their flag
// sets and usage, and opening the file they administer.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/token"
)

// UsageError is a mistake in the command line; main exits with status 2 for it.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Is makes a *UsageError one for the admin socket too (adminsock.ErrUsage): a command run inside
// the server that fails with one tells its client so.
func (e *UsageError) Is(target error) bool { return target == adminsock.ErrUsage }

// Usagef returns a *UsageError with the formatted message.
func Usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// ErrNoDatabase: a command that reads or administers the file (token, clients, keys,
// password, audit, backup, check, export, compact) was pointed at a path where no file
// exists. It creates none, so that a mistyped --db does not make an empty database.
var ErrNoDatabase = errors.New("no database")

// Env is what a command runs with; app fills it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the OWNSONA_* settings (OWNSONA_DB is --db's default); never nil.
	Getenv func(string) string
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Cwd is the directory relative paths on the command line are relative to. If empty, the
	// process's.
	Cwd string
	// Live is set when the command runs inside a running server (it came through the admin
	// socket); nil otherwise.
	Live *Live
	// OpenMemories opens the memory store over db with the configured embedder and text
	// limits; import needs it when no server runs. If nil, memory.Open with memory.Config{}
	// (no embedder: the server embeds what import stored at its next start).
	OpenMemories func(db *kv.DB) (*memory.Store, error)

	stdinName string // what Stdin carries, for messages; set by the admin socket
}

// Live is the running server a command came to through the admin socket.
type Live struct {
	DBPath   string
	DB       *kv.DB
	Memories *memory.Store
	// Keys and Grants are the server's own: they keep what they read of the file in memory
	// (the active signing key, the live grants), so a command that rotates a key or revokes a
	// grant goes through them, or the server would act on it only at its next start. If nil,
	// the command opens its own over DB.
	Keys   *token.Keys
	Grants *grant.Store
	// SetOwnerPassword keeps the owner's new password hash in the file and makes the server
	// check sign-ins against it at once (oauth.Server.ReplaceOwnerPassword); having stored it,
	// it returns oauth.ErrPasswordConfigured when OWNSONA_LOGIN_PASSWORD wins over it. If nil,
	// `password set` only stores the hash, for the server's next start.
	SetOwnerPassword func(hash string) error
	// OnImport, when set, hears of every `ownsona import` run inside the server, once it
	// ends, so that the console lists it beside the uploaded imports.
	OnImport func(memory.ImportJob)
}

// Command is one thing the operator types: `ownsona NAME ...`.
type Command struct {
	Name string
	// Form is how the command is typed, after "ownsona ": "token create|list|revoke".
	Form string
	// About is what it does, in one sentence: "personal access tokens for scripts".
	About string
	// Run parses args (those after the name) with the command's own flag.FlagSet and runs it.
	// `--help` and `-h` print the command's usage and flags on env.Stdout and return nil.
	Run func(ctx context.Context, env *Env, args []string) error
	// Socket: while a server holds the file, the command runs inside it through the admin
	// socket.
	Socket bool
}

// Commands returns ops's commands, in the order help lists them.
func Commands() []Command {
	cmds := []struct {
		name, form, about string
		run               func(ctx context.Context, env *Env, args []string) error
		socket            bool
	}{
		{"token", "token create|list|revoke", "personal access tokens for scripts (shown once, stored hashed)", tokenCmd, true},
		{"clients", "clients list|revoke|delete", "OAuth clients; revoke (or revoke-all) ends their access at once", clientsCmd, true},
		{"keys", "keys rotate|list", "token signing keys (tokens signed by the old key stay valid until they expire)", keysCmd, true},
		{"password", "password set", "set the owner's login password (OWNSONA_LOGIN_PASSWORD still wins)", passwordCmd, true},
		{"audit", "audit [--since 24h] [...]", "the audit log of MCP requests, newest first", auditCmd, true},
		{"ca", "ca export", "the root certificate of --tls local, as PEM, for devices to trust", caCmd, true},
		{"backup", "backup --to FILE [--force]", "a checked snapshot of the file, also while the server runs", backupCmd, true},
		{"check", "check [FILE]", "page and content checks of the database (or of FILE)", checkCmd, true},
		{"restore", "restore --from FILE", "replace the database by a checked copy of FILE (server stopped)", restoreCmd, false},
		{"compact", "compact", "rewrite the file without its free pages (server stopped)", compactCmd, false},
		{"import", "import FILE|-", "memories from an ownsona export, server-memory, mcp-memory-service, Mem0 or OpenMemory, or Markdown notes", importCmd, true},
		{"export", "export [--active-only]", "every memory as JSON Lines on standard output, oldest first", exportCmd, true},
		{"install-service", "install-service [--user]", "serve at login (--user), or at boot as a hardened system unit", installServiceCmd, false},
		{"hash-password", "hash-password", "read a password, print its argon2id hash for OWNSONA_LOGIN_PASSWORD", hashPasswordCmd, false},
	}
	out := make([]Command, len(cmds))
	for i, c := range cmds {
		run := c.run
		out[i] = Command{
			Name:  c.name,
			Form:  c.form,
			About: c.about,
			Run: func(ctx context.Context, env *Env, args []string) error {
				if err := run(ctx, env, args); !errors.Is(err, errHelp) {
					return err
				}
				return nil
			},
			Socket: c.socket,
		}
	}
	return out
}

// errHelp is returned by a command once --help printed its usage; Run turns it into nil.
var errHelp = errors.New("help printed")

// now is the command's clock.
func (env *Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}

// path resolves a path given on the command line against env.Cwd.
func (env *Env) path(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) || env.Cwd == "" {
		return p
	}
	return filepath.Join(env.Cwd, p)
}

// DBFlag registers --db on fs with the default from OWNSONA_DB (else "ownsona.db") and
// returns the pointer. A relative path is taken relative to env.Cwd.
func DBFlag(fs *flag.FlagSet, env *Env) *string {
	def := "ownsona.db"
	if v := strings.TrimSpace(env.Getenv("OWNSONA_DB")); v != "" {
		def = v
	}
	p := new(string)
	*p = env.path(def)
	fs.Var(pathValue{p, env}, "db", "`PATH` of the database file (OWNSONA_DB)")
	return p
}

// pathValue is a flag of a path given on the command line, resolved against env.Cwd.
type pathValue struct {
	p   *string
	env *Env
}

func (v pathValue) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v pathValue) Set(s string) error {
	*v.p = v.env.path(s)
	return nil
}

// newFlags returns the flag set of command name ("token create"), whose usage is its form,
// what it does, and its flags.
func newFlags(name, form, about string) *flag.FlagSet {
	fs := flag.NewFlagSet("ownsona "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse reports errors as *UsageError, and prints help itself
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "%s\n%s\n", Hang("Usage: ownsona "+form, 4, HelpWidth), about)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintf(w, "\nFlags:\n")
			PrintFlags(w, fs)
		}
	}
	return fs
}

// dbFlags registers what every command over the file takes: --db, and --log-level, accepted
// and ignored (these commands log nothing) so that scripts written for older versions run.
func dbFlags(fs *flag.FlagSet, env *Env) *string {
	db := DBFlag(fs, env)
	fs.String("log-level", "", "ignored (accepted for older scripts; these commands log nothing)")
	return db
}

// cmdName is the command a flag set belongs to, for messages: "token create".
func cmdName(fs *flag.FlagSet) string { return strings.TrimPrefix(fs.Name(), "ownsona ") }

// parse parses args with fs, flags and operands in any order (`token revoke NAME --db x`;
// after "--" everything is an operand), and returns the operands. With --help or -h it
// prints the usage on env.Stdout and returns errHelp.
func parse(env *Env, fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		err := fs.Parse(args)
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(env.Stdout)
			fs.Usage()
			return nil, errHelp
		}
		if err != nil {
			return nil, Usagef("%s: %v (see 'ownsona %s --help')", cmdName(fs), err, cmdName(fs))
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			operands = append(operands, rest...)
			break
		}
		operands, args = append(operands, rest[0]), rest[1:]
	}
	if f := fs.Lookup("db"); f != nil && f.Value.String() == "" {
		return nil, Usagef("%s: --db: the database path is empty", cmdName(fs))
	}
	return operands, nil
}

// noOperands refuses operands for a command that takes none.
func noOperands(fs *flag.FlagSet, operands []string) error {
	if len(operands) > 0 {
		return Usagef("%s: unexpected argument %q (see 'ownsona %s --help')", cmdName(fs), operands[0], cmdName(fs))
	}
	return nil
}

// subcommand is one verb of a command that has several (token create, token list, ...).
type subcommand struct {
	name, form, about string
	run               func(ctx context.Context, env *Env, args []string) error
}

// dispatch runs the subcommand args[0] of command name. `name --help` (or `name help`) lists
// the subcommands.
func dispatch(ctx context.Context, env *Env, name string, subs []subcommand, args []string) error {
	names := make([]string, len(subs))
	for i, s := range subs {
		names[i] = s.name
	}
	say := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if len(names) == 1 {
		say = names[0]
	}
	if len(args) == 0 {
		return Usagef("%s: say %s (see 'ownsona %s --help')", name, say, name)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(env.Stdout, "Usage: ownsona %s %s [flags]\n\n", name, strings.Join(names, "|"))
		for _, s := range subs {
			fmt.Fprintf(env.Stdout, "  ownsona %s\n      %s\n", s.form, s.about)
		}
		fmt.Fprintf(env.Stdout, "\nSee 'ownsona %s SUBCOMMAND --help' for its flags.\n", name)
		return errHelp
	}
	for _, s := range subs {
		if s.name == args[0] {
			return s.run(ctx, env, args[1:])
		}
	}
	if strings.HasPrefix(args[0], "-") {
		return Usagef("%s: name the subcommand first: ownsona %s %s [flags]", name, name, strings.Join(names, "|"))
	}
	return Usagef("%s: unknown subcommand %q; use %s", name, args[0], say)
}

// openDB returns the database a command administers and the path to name it by: the running
// server's when the command came through the admin socket, else the file at path, opened by
// this process with every migration (read-only with a shared lock if readOnly). A missing
// file is ErrNoDatabase; a file another process holds names that process. done releases what
// openDB opened (nothing, inside the server) and returns the first error; calling it again is
// harmless.
func (env *Env) openDB(path string, readOnly bool) (db *kv.DB, name string, done func() error, err error) {
	if env.Live != nil {
		return env.Live.DB, env.Live.DBPath, func() error { return nil }, nil
	}
	if err := mustExist(path); err != nil {
		return nil, "", nil, err
	}
	db, err = kv.Open(path, kv.Options{ReadOnly: readOnly, Migrations: memory.Migrations})
	if err != nil {
		return nil, "", nil, OpenError(path, err)
	}
	return db, path, db.Close, nil
}

// createDB is openDB for a command that may make the file: `ca export` is meant to run before
// the first start, so that devices trust the local CA before the server is up.
func (env *Env) createDB(path string) (db *kv.DB, done func() error, err error) {
	if env.Live != nil {
		return env.Live.DB, func() error { return nil }, nil
	}
	db, err = kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return nil, nil, OpenError(path, err)
	}
	return db, db.Close, nil
}

// mustExist refuses a database path where no file exists.
func mustExist(path string) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%w at %s — start the server once, or check --db", ErrNoDatabase, path)
	}
	return nil
}

// OpenError says what kv.Open of path failed on; for a file another process holds, which one
// (a desktop client's `ownsona stdio`, or a serve whose admin socket did not answer).
func OpenError(path string, err error) error {
	if !errors.Is(err, kv.ErrInUse) {
		return err // kv's errors name the path
	}
	pid, cmdline, ok := kv.Holder(path)
	switch {
	case !ok:
		return fmt.Errorf("open %s: %w; several clients, or backups while one is open: run `ownsona serve`", path, kv.ErrInUse)
	case isServe(cmdline):
		return fmt.Errorf("open %s: %w (pid %d: %s), and its admin socket %s did not answer; stop it first", path, kv.ErrInUse, pid, cmdline, adminsock.Path(path))
	}
	return fmt.Errorf("open %s: %w (pid %d: %s); several clients, or backups while one is open: run `ownsona serve`", path, kv.ErrInUse, pid, cmdline)
}

// ServerOpenError is OpenError for a process that would serve the file itself (serve, or
// stdio when no server answered on the admin socket): another serve holding the file is
// serving it, not failing to answer, and the way out is to use it or stop it.
func ServerOpenError(path string, err error) error {
	if !errors.Is(err, kv.ErrInUse) {
		return err
	}
	if pid, cmdline, ok := kv.Holder(path); ok && isServe(cmdline) {
		return fmt.Errorf("open %s: %w: ownsona serve (pid %d: %s) already serves it; connect to that server, "+
			"stop it first, or give this one another --db", path, kv.ErrInUse, pid, cmdline)
	}
	return OpenError(path, err)
}

// isServe reports whether a command line is `ownsona serve ...`.
func isServe(cmdline string) bool {
	f := strings.Fields(cmdline)
	return len(f) > 1 && f[1] == "serve"
}

// plural is "1 memory", "2 memories", "0 memories".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// eof is an empty standard input.
type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }
