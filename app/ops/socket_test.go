package ops_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/login"
)

// TestSocket_Commands: with a server holding the file, the Socket commands run inside it.
// Every one of them would fail if it opened the file itself: the server holds its lock.
func TestSocket_Commands(t *testing.T) {
	s := MustServe(t)
	env := newEnv(s.DBPath, "")
	env.Cwd = t.TempDir() // the client's directory, for relative paths

	t.Run("token create and list", func(t *testing.T) {
		out, errs, err := run(t, env, "token", "create", "--name", "script")
		if err != nil || !strings.HasPrefix(out, "osk_") || !strings.Contains(errs, "shown only once") {
			t.Fatalf("token create: %v\n%s%s", err, out, errs)
		}
		if out := mustRun(t, env, "token", "list"); !strings.Contains(out, "script") {
			t.Errorf("token list:\n%s", out)
		}
	})
	t.Run("a usage error stays one", func(t *testing.T) {
		_, _, err := run(t, env, "token", "revoke", "nosuch")
		var ue *ops.UsageError
		if !errors.As(err, &ue) || !strings.HasPrefix(err.Error(), "token revoke: ") {
			t.Errorf("err = %v, want a *UsageError from the server", err)
		}
	})
	t.Run("import from standard input notifies the store's subscribers", func(t *testing.T) {
		in := `{"type":"entity","name":"Ana","entityType":"person","observations":["Plays the cello","Lives in Porto"]}` + "\n"
		out := mustRun(t, newEnvLike(env, in), "import", "-")
		if want := "imported 2 of 2 memories from standard input (0 already stored, 0 bad lines)\n"; out != want {
			t.Errorf("import - = %q, want %q", out, want)
		}
		if got := s.Changed(); len(got) != 2 {
			t.Errorf("OnChange heard of %v, want the 2 new memories", got)
		}
	})
	t.Run("import FILE is read by the client", func(t *testing.T) {
		os.WriteFile(filepath.Join(env.Cwd, "one.jsonl"), []byte(`{"type":"entity","name":"Ana","entityType":"person","observations":["Takes the 7:40 train"]}`+"\n"), 0o600)
		out := mustRun(t, env, "import", "one.jsonl")
		if want := "imported 1 of 1 memory from " + filepath.Join(env.Cwd, "one.jsonl") + " (0 already stored, 0 bad lines)\n"; out != want {
			t.Errorf("import FILE = %q, want %q", out, want)
		}
		if got := s.Changed(); len(got) != 3 {
			t.Errorf("OnChange heard of %v, want 3 memories", got)
		}
	})
	t.Run("export", func(t *testing.T) {
		out := mustRun(t, env, "export")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 4 || !strings.Contains(lines[0], `"format":"ownsona-export"`) || !strings.Contains(out, "Takes the 7:40 train") {
			t.Errorf("export:\n%s", out)
		}
	})
	t.Run("check", func(t *testing.T) {
		got := mustRun(t, env, "check")
		if want := s.DBPath + ": ok (schema 1, 3 memories, 0 vectors, 1 personal access token)\n"; got != want {
			t.Errorf("check = %q, want %q", got, want)
		}
	})
	t.Run("backup --to a file of the client", func(t *testing.T) {
		out := mustRun(t, env, "backup", "--to", "b.db")
		to := filepath.Join(env.Cwd, "b.db")
		if want := "backed up " + s.DBPath + " to " + to + " ("; !strings.HasPrefix(out, want) {
			t.Errorf("output %q, want %q...", out, want)
		}
		fi, err := os.Stat(to)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup: %v, mode %v; want 0600", err, fi.Mode())
		}
		if got := exportTexts(t, to); len(got) != 3 {
			t.Errorf("the backup holds %v, want 3 memories", got)
		}
		if _, _, err := run(t, env, "backup", "--to", "b.db"); err == nil || !strings.Contains(err.Error(), "add --force") {
			t.Errorf("a second backup to the same file: %v, want a refusal", err)
		}
		mustRun(t, env, "backup", "--to", "b.db", "--force")
	})
	t.Run("password set", func(t *testing.T) {
		out := mustRun(t, newEnvLike(env, "a new owner passphrase\n"), "password", "set")
		if !strings.Contains(out, "restart it to use the new one") {
			t.Errorf("output does not say the running server needs a restart:\n%s", out)
		}
		mustVerifyOwnerPassword(t, s.DB, "a new owner passphrase")
	})
	t.Run("Forward", func(t *testing.T) {
		var out bytes.Buffer
		handled, err := adminsock.Forward(context.Background(), s.DBPath, &adminsock.Call{Args: []string{"keys", "list"}, Stdout: &out, Stderr: io.Discard})
		if !handled || err != nil || !strings.HasPrefix(out.String(), "active signing key: ") {
			t.Errorf("Forward(keys list) = %v, %v, %q", handled, err, out.String())
		}
	})
	t.Run("stdio", func(t *testing.T) {
		var out bytes.Buffer
		handled, err := adminsock.Forward(context.Background(), s.DBPath, &adminsock.Call{Args: []string{"stdio"}, Stdin: strings.NewReader("ping\n"), Stdout: &out, Stderr: io.Discard})
		if !handled || err != nil || out.String() != "ping\n" {
			t.Errorf("Forward(stdio) = %v, %v, %q; want the echo", handled, err, out.String())
		}
	})
	t.Run("a cut input imports nothing", func(t *testing.T) {
		before := s.Memories.Count(memory.Filter{IncludeDeleted: true})
		in := io.MultiReader(strings.NewReader(`{"type":"entity","name":"Cut","entityType":"x","observations":["half"]}`+"\n"),
			iotest.ErrReader(errors.New("disk on fire")))
		e := newEnvLike(env, "")
		e.Stdin = in
		_, _, err := run(t, e, "import", "-")
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("err = %v, want the input's error", err)
		}
		if got := s.Memories.Count(memory.Filter{IncludeDeleted: true}); got != before {
			t.Errorf("%d memories after a cut import, want %d", got, before)
		}
	})
	t.Run("restore and compact refuse", func(t *testing.T) {
		for _, args := range [][]string{{"restore", "--from", "b.db"}, {"compact"}} {
			_, _, err := run(t, env, args...)
			if err == nil || !strings.Contains(err.Error(), "a server runs on "+s.DBPath+"; stop it first") {
				t.Errorf("%v: err = %v", args, err)
			}
		}
	})
}

// newEnvLike is env with stdin as its standard input.
func newEnvLike(env *ops.Env, stdin string) *ops.Env {
	e := *env
	e.Stdin = strings.NewReader(stdin)
	return &e
}

// TestSocketCommands: the server runs the Socket commands, and refuses the others as usage
// errors without running them.
func TestSocketCommands(t *testing.T) {
	s := MustServe(t)
	for _, args := range [][]string{{"compact"}, {"restore", "--from", "b.db"}, {"serve"}, {"hash-password"}, {"install-service"}} {
		_, err := adminsock.Forward(context.Background(), s.DBPath, &adminsock.Call{Args: args, Stdout: io.Discard, Stderr: io.Discard})
		if !errors.Is(err, adminsock.ErrUsage) || !strings.Contains(err.Error(), "is not a command the server runs") {
			t.Errorf("%v: err = %v, want a usage error", args, err)
		}
	}
	socket := map[string]bool{}
	for name := range ops.SocketCommands(s.Live) {
		socket[name] = true
	}
	for _, c := range ops.Commands() {
		if socket[c.Name] != c.Socket {
			t.Errorf("%s: served on the socket: %v, want %v", c.Name, socket[c.Name], c.Socket)
		}
	}
}

// TestForward_Protocol pins what the client side of backup and import sends, against a
// stand-in server: the files stay on the client's side of the socket.
func TestForward_Protocol(t *testing.T) {
	dir := shortDir(t)
	db := filepath.Join(dir, "o.db")
	snapshot := mustSnapshot(t)
	ln, err := net.Listen("unix", adminsock.Path(db))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type seen struct {
		req   map[string]any
		input []byte
	}
	got := make(chan seen, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			line, _ := r.ReadBytes('\n')
			var s seen
			json.Unmarshal(line, &s.req)
			if s.req["stdin"] == true {
				for {
					kind, b := readFrame(t, r)
					if kind != 'i' || len(b) == 0 {
						break
					}
					s.input = append(s.input, b...)
				}
			}
			if args, _ := s.req["args"].([]any); len(args) > 0 && args[0] == "backup" {
				writeFrame(c, 'o', snapshot[:len(snapshot)/2])
				writeFrame(c, 'o', snapshot[len(snapshot)/2:])
			}
			writeFrame(c, 'x', []byte(`{}`))
			c.Close()
			got <- s
		}
	}()
	env := newEnv(db, "")
	env.Cwd = dir

	t.Run("backup --to FILE", func(t *testing.T) {
		MustCreateDB(t, db) // backup refuses a path where no database exists
		mustRun(t, env, "backup", "--to", "b.db", "--db", db)
		s := <-got
		if args, _ := json.Marshal(s.req["args"]); string(args) != `["backup","--to","-"]` {
			t.Errorf("args %s, want the snapshot on standard output", args)
		}
		b, err := os.ReadFile(filepath.Join(dir, "b.db"))
		if err != nil || !bytes.Equal(b, snapshot) {
			t.Errorf("the client wrote %d bytes (%v), want the %d of the snapshot", len(b), err, len(snapshot))
		}
	})
	t.Run("import FILE", func(t *testing.T) {
		content := []byte(strings.Repeat(`{"type":"entity","name":"N","entityType":"t","observations":["x"]}`+"\n", 3000))
		os.WriteFile(filepath.Join(dir, "in.jsonl"), content, 0o600)
		mustRun(t, env, "import", "in.jsonl")
		s := <-got
		if args, _ := json.Marshal(s.req["args"]); string(args) != `["import","-"]` {
			t.Errorf("args %s, want standard input", args)
		}
		if s.req["stdin_name"] != filepath.Join(dir, "in.jsonl") {
			t.Errorf("stdin_name %v", s.req["stdin_name"])
		}
		if !bytes.Equal(s.input, content) {
			t.Errorf("the server received %d bytes, want the file's %d", len(s.input), len(content))
		}
	})
}

// mustSnapshot is a small database file's bytes.
func mustSnapshot(t testing.TB) []byte {
	p := MustCreateDB(t, filepath.Join(t.TempDir(), "snap.db"))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFrame(t testing.TB, r io.Reader) (byte, []byte) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[1:]))
	io.ReadFull(r, b)
	return hdr[0], b
}

func writeFrame(w io.Writer, kind byte, b []byte) {
	hdr := [5]byte{kind}
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(b)))
	w.Write(append(hdr[:], b...))
}

// mustVerifyOwnerPassword checks that the owner password stored in db is pw, as the login
// page would.
func mustVerifyOwnerPassword(t testing.TB, db *kv.DB, pw string) {
	t.Helper()
	var hash []byte
	db.View(func(tx *kv.Tx) error {
		if b := tx.Bucket(oauth.BucketOwner); b != nil {
			hash = b.Get([]byte("password_hash"))
		}
		return nil
	})
	v, warn, err := login.NewVerifier(oauth.DefaultUsername, string(hash))
	if err != nil || warn != "" {
		t.Fatalf("stored hash %q: %v %s", hash, err, warn)
	}
	for _, tt := range []struct {
		pw   string
		want bool
	}{{pw, true}, {pw + "x", false}} {
		if ok, err := v.Check(context.Background(), oauth.DefaultUsername, tt.pw); ok != tt.want || err != nil {
			t.Errorf("Check(%q) = %v, %v; want %v", tt.pw, ok, err, tt.want)
		}
	}
}
