package adminsock_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/adminsock"
)

// testServer is a server on the admin socket of db with a few stand-in commands, and what
// they saw.
type testServer struct {
	db    string
	ran   atomic.Int64 // commands run
	input chan error   // what cat's read of its input ended with
}

// mustListen listens on the admin socket of a database in a short temporary directory, with
// these commands:
//
//	echo ARGS...  its arguments and the client's directory on standard output, "warn" on standard error
//	cat           its standard input, read whole, on standard output; the input's name on standard error
//	big           3 MiB on standard output
//	wrong         a usage error
//	fail          an error
//
// and stdio as an echo. It closes at the test's end.
func mustListen(t testing.TB) *testServer {
	t.Helper()
	s := &testServer{db: filepath.Join(shortDir(t), "o.db"), input: make(chan error, 1)}
	cmds := map[string]adminsock.Handler{
		"echo": func(_ context.Context, c *adminsock.Call) error {
			fmt.Fprintf(c.Stdout, "%s\ncwd %s\n", strings.Join(c.Args, " "), c.Cwd)
			fmt.Fprintln(c.Stderr, "warn")
			return nil
		},
		"cat": func(_ context.Context, c *adminsock.Call) error {
			fmt.Fprintln(c.Stderr, c.StdinName)
			b, err := io.ReadAll(c.Stdin) // all of it first: the input's end is what tests see
			s.input <- err
			if err != nil {
				return err
			}
			_, err = c.Stdout.Write(b)
			return err
		},
		"big": func(_ context.Context, c *adminsock.Call) error {
			_, err := c.Stdout.Write(bytes.Repeat([]byte("0123456789abcdef"), 3<<16))
			return err
		},
		"wrong": func(context.Context, *adminsock.Call) error {
			return fmt.Errorf("wrong: say what: %w", adminsock.ErrUsage)
		},
		"fail": func(context.Context, *adminsock.Call) error { return errors.New("fail: disk on fire") },
	}
	for name, h := range cmds {
		cmds[name] = func(ctx context.Context, c *adminsock.Call) error {
			s.ran.Add(1)
			return h(ctx, c)
		}
	}
	stdio := func(ctx context.Context, in io.Reader, out io.Writer) error {
		_, err := io.Copy(out, in)
		return err
	}
	stop, err := adminsock.Listen(context.Background(), s.db, adminsock.Config{Commands: cmds, Stdio: stdio, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return s
}

// forward runs args through the socket of db and returns the command's output and error.
func forward(t testing.TB, db string, c adminsock.Call) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	handled, err := adminsock.Forward(context.Background(), db, &c)
	if !handled {
		t.Fatalf("Forward(%v) was not handled", c.Args)
	}
	return out.String(), errb.String(), err
}

func TestListen(t *testing.T) {
	s := mustListen(t)
	path := adminsock.Path(s.db)
	t.Run("mode 0600", func(t *testing.T) {
		fi, err := os.Stat(path)
		if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("socket %s: %v, mode %v; want a socket with mode 0600", path, err, fi.Mode())
		}
	})
	t.Run("arguments, directory and both outputs", func(t *testing.T) {
		out, errs, err := forward(t, s.db, adminsock.Call{Args: []string{"echo", "a", "b c"}, Cwd: "/home/me"})
		if want := "echo a b c\ncwd /home/me\n"; err != nil || out != want || errs != "warn\n" {
			t.Errorf("echo: %q, %q, %v; want %q, %q, nil", out, errs, err, want, "warn\n")
		}
	})
	t.Run("the client's directory by default", func(t *testing.T) {
		wd, _ := os.Getwd()
		out, _, err := forward(t, s.db, adminsock.Call{Args: []string{"echo"}})
		if want := "echo\ncwd " + wd + "\n"; err != nil || out != want {
			t.Errorf("echo: %q, %v; want %q", out, err, want)
		}
	})
	t.Run("standard input", func(t *testing.T) {
		in := strings.Repeat("a line of input\n", 10000) // several frames
		out, errs, err := forward(t, s.db, adminsock.Call{Args: []string{"cat"}, Stdin: strings.NewReader(in), StdinName: "/home/me/m.jsonl"})
		if err != nil || out != in || errs != "/home/me/m.jsonl\n" {
			t.Errorf("cat: %d bytes, %q, %v; want the %d bytes of the input and its name", len(out), errs, err, len(in))
		}
		if err := <-s.input; err != nil {
			t.Errorf("the command read its input with %v", err)
		}
	})
	t.Run("no standard input", func(t *testing.T) {
		out, _, err := forward(t, s.db, adminsock.Call{Args: []string{"cat"}})
		if err != nil || out != "" {
			t.Errorf("cat: %q, %v; want nothing", out, err)
		}
		if err := <-s.input; err != nil {
			t.Errorf("the command read its input with %v, want an empty input", err)
		}
	})
	t.Run("a cut input is an error to both sides, never a short input", func(t *testing.T) {
		in := io.MultiReader(strings.NewReader("half of it\n"), iotest.ErrReader(errors.New("disk on fire")))
		_, _, err := forward(t, s.db, adminsock.Call{Args: []string{"cat"}, Stdin: in})
		if err == nil || !strings.Contains(err.Error(), "disk on fire") {
			t.Errorf("err = %v, want the input's error", err)
		}
		if err := <-s.input; !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("the command read its input with %v, want io.ErrUnexpectedEOF", err)
		}
	})
	t.Run("output longer than a frame", func(t *testing.T) {
		out, _, err := forward(t, s.db, adminsock.Call{Args: []string{"big"}})
		if want := strings.Repeat("0123456789abcdef", 3<<16); err != nil || out != want {
			t.Errorf("big: %d bytes, %v; want %d", len(out), err, len(want))
		}
	})
	t.Run("a usage error stays one", func(t *testing.T) {
		_, _, err := forward(t, s.db, adminsock.Call{Args: []string{"wrong"}})
		if want := "wrong: say what: " + adminsock.ErrUsage.Error(); !errors.Is(err, adminsock.ErrUsage) || err.Error() != want {
			t.Errorf("err = %v, want %q wrapping ErrUsage", err, want)
		}
	})
	t.Run("an error is not a usage error", func(t *testing.T) {
		_, _, err := forward(t, s.db, adminsock.Call{Args: []string{"fail"}})
		if err == nil || err.Error() != "fail: disk on fire" || errors.Is(err, adminsock.ErrUsage) {
			t.Errorf("err = %v, want %q, not a usage error", err, "fail: disk on fire")
		}
	})
	t.Run("not a command the server runs", func(t *testing.T) {
		before := s.ran.Load()
		_, _, err := forward(t, s.db, adminsock.Call{Args: []string{"compact"}})
		if !errors.Is(err, adminsock.ErrUsage) || err.Error() != `admin socket: "compact" is not a command the server runs` {
			t.Errorf("err = %v, want a usage error", err)
		}
		if s.ran.Load() != before {
			t.Error("a command ran")
		}
	})
	t.Run("stdio", func(t *testing.T) {
		out, _, err := forward(t, s.db, adminsock.Call{Args: []string{"stdio"}, Stdin: strings.NewReader("ping\n")})
		if err != nil || out != "ping\n" {
			t.Errorf("stdio: %q, %v; want the echo", out, err)
		}
	})
	t.Run("Answers", func(t *testing.T) {
		if !adminsock.Answers(context.Background(), s.db) {
			t.Error("Answers = false with a server listening")
		}
		if adminsock.Answers(context.Background(), filepath.Join(t.TempDir(), "o.db")) {
			t.Error("Answers = true where nothing listens")
		}
	})
	t.Run("a second server is refused", func(t *testing.T) {
		if _, err := adminsock.Listen(context.Background(), s.db, adminsock.Config{}); err == nil || !strings.Contains(err.Error(), "another process answers on it") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a request line over 64 KiB gets no answer", func(t *testing.T) {
		before := s.ran.Load()
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		go c.Write(append([]byte(`{"args":["echo","`), bytes.Repeat([]byte("a"), 65<<10)...))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		// Closed with unread bytes, the connection ends in a reset rather than an EOF.
		var ne net.Error
		if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("read = %d, %v; want the connection closed", n, err)
		}
		if s.ran.Load() != before {
			t.Error("a command ran")
		}
	})
	t.Run("not a request", func(t *testing.T) {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("{\"args\":[]}\n"))
		kind, b := readFrame(t, bufio.NewReader(c))
		if want := `{"error":"admin socket: not a command","usage":true}`; kind != 'x' || string(b) != want {
			t.Errorf("frame %q %s, want 'x' %s", kind, b, want)
		}
	})
}

func TestListen_StaleAndClose(t *testing.T) {
	db := filepath.Join(shortDir(t), "o.db")
	os.WriteFile(adminsock.Path(db), []byte("stale"), 0o600) // a file nobody answers on
	cmds := map[string]adminsock.Handler{"echo": func(_ context.Context, c *adminsock.Call) error { return nil }}
	stop, err := adminsock.Listen(context.Background(), db, adminsock.Config{Commands: cmds, Log: zerolog.Nop()})
	if err != nil {
		t.Fatalf("Listen over a stale file: %v", err)
	}
	if _, _, err := forward(t, db, adminsock.Call{Args: []string{"echo"}}); err != nil {
		t.Errorf("Forward = %v", err)
	}
	stop()
	stop()
	if _, err := os.Lstat(adminsock.Path(db)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after close: %v, want the socket removed", err)
	}
	if handled, _ := adminsock.Forward(context.Background(), db, &adminsock.Call{Args: []string{"echo"}, Stdout: io.Discard, Stderr: io.Discard}); handled {
		t.Error("Forward after close was handled")
	}
}

// TestListen_CloseEndsCommands: close cancels the commands' context, ends their connections
// and returns once they have.
func TestListen_CloseEndsCommands(t *testing.T) {
	db := filepath.Join(shortDir(t), "o.db")
	started, ended := make(chan struct{}), make(chan struct{})
	cmds := map[string]adminsock.Handler{"wait": func(ctx context.Context, c *adminsock.Call) error {
		close(started)
		<-ctx.Done()
		close(ended)
		return ctx.Err()
	}}
	stop, err := adminsock.Listen(context.Background(), db, adminsock.Config{Commands: cmds, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := adminsock.Forward(context.Background(), db, &adminsock.Call{Args: []string{"wait"}, Stdout: io.Discard, Stderr: io.Discard})
		done <- err
	}()
	<-started
	stop()
	select {
	case <-ended:
	default:
		t.Error("close returned before the command did")
	}
	if err := <-done; err == nil {
		t.Error("Forward = nil, want the command's end")
	}
}

func TestForward_NoServer(t *testing.T) {
	handled, err := adminsock.Forward(context.Background(), filepath.Join(t.TempDir(), "o.db"), &adminsock.Call{Args: []string{"echo"}, Stdout: io.Discard, Stderr: io.Discard})
	if handled || err != nil {
		t.Errorf("Forward = %v, %v; want not handled", handled, err)
	}
}

// shortDir is a temporary directory with a short path: a Unix socket's path has at most 104
// to 108 bytes, more than t.TempDir() leaves for long test names.
func shortDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "adminsock")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	return dir
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
