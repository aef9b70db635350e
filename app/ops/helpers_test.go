package ops_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// testNow is the clock of the commands under test.
var testNow = time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)

// newEnv is an environment whose OWNSONA_DB is db, with stdin as standard input.
func newEnv(db, stdin string) *ops.Env {
	return &ops.Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(k string) string { return map[string]string{"OWNSONA_DB": db}[k] },
		Now:    func() time.Time { return testNow },
	}
}

// run runs `ownsona args...` from ops.Commands() in env and returns its standard output and
// error, and standard error.
func run(t testing.TB, env *ops.Env, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	e := *env
	e.Stdout, e.Stderr = &out, &errb
	for _, c := range ops.Commands() {
		if c.Name == args[0] {
			err = c.Run(context.Background(), &e, args[1:])
			return out.String(), errb.String(), err
		}
	}
	t.Fatalf("no command %q", args[0])
	return "", "", nil
}

// mustRun is run that fails the test on an error.
func mustRun(t testing.TB, env *ops.Env, args ...string) string {
	t.Helper()
	out, errs, err := run(t, env, args...)
	if err != nil {
		t.Fatalf("ownsona %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
	}
	return out
}

// shortDir is a temporary directory with a short path: a Unix socket's path has at most 104
// to 108 bytes, more than t.TempDir() leaves for long test names.
func shortDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "ops")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// MustCreateDB makes a database file with every migration at path and closes it.
func MustCreateDB(tb testing.TB, path string) string {
	tb.Helper()
	db, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// testServer is a running server's side of the admin socket: the file, its memory store and
// the socket, closed in reverse at cleanup.
type testServer struct {
	*ops.Live
	changedMu sync.Mutex
	changed   []uint64 // the ids the store's OnChange hooks heard of
}

func (s *testServer) Changed() []uint64 {
	s.changedMu.Lock()
	defer s.changedMu.Unlock()
	return append([]uint64(nil), s.changed...)
}

// MustServe opens a database in a short temporary directory, a memory store without an
// embedder over it, and the admin socket, as serve does.
func MustServe(tb testing.TB) *testServer {
	tb.Helper()
	path := filepath.Join(shortDir(tb), "o.db")
	db := kvtest.OpenFile(tb, path, kv.Options{Migrations: memory.Migrations})
	store, err := memory.Open(db, memory.Config{})
	if err != nil {
		tb.Fatal(err)
	}
	s := &testServer{Live: &ops.Live{DBPath: path, DB: db, Memories: store}}
	store.OnChange(func(ids []uint64) {
		s.changedMu.Lock()
		s.changed = append(s.changed, ids...)
		s.changedMu.Unlock()
	})
	stdio := func(ctx context.Context, in io.Reader, out io.Writer) error {
		_, err := io.Copy(out, in) // an echo, for the stdio passthrough
		return err
	}
	closeSocket, err := adminsock.Listen(context.Background(), s.Live.DBPath, adminsock.Config{Commands: ops.SocketCommands(s.Live), Stdio: stdio, Log: zerolog.Nop()})
	if err != nil {
		store.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		closeSocket()
		store.Close()
	})
	return s
}

func flagSet() *flag.FlagSet { return flag.NewFlagSet("test", flag.ContinueOnError) }
