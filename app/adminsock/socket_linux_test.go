package adminsock_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/adminsock"
)

// nobody is the user id of the other user in these tests.
const nobody = 65534

// TestForward_ForeignServer (SECURITY.md ST-19): in a directory other users can write (mode
// 1777, like /tmp), another user listens on FILE.sock first. The client must not send it a
// command or an MCP session, nor print what it answers; root may still use the server of the
// file's owner. The checks are the socket's owner and the peer's credentials (SO_PEERCRED).
func TestForward_ForeignServer(t *testing.T) {
	mustBeRoot(t)
	tests := []struct {
		name    string
		setup   func(t *testing.T, db string) *fakeServer
		wantIs  error    // nil: the server is used, unless wantErr says otherwise
		wantErr []string // what the refusal says, beside the socket's path
	}{
		{
			name: "another user's socket and server",
			setup: func(t *testing.T, db string) *fakeServer {
				return serveFake(t, listenAs(t, nobody, adminsock.Path(db)))
			},
			wantIs:  adminsock.ErrForeign,
			wantErr: []string{"another user owns it (", "uid 65534), not root; it may be posing as the server"},
		},
		{
			name: "a socket chowned to us, another user's server",
			setup: func(t *testing.T, db string) *fakeServer {
				s := serveFake(t, listenAs(t, nobody, adminsock.Path(db)))
				mustLchown(t, adminsock.Path(db), 0)
				return s
			},
			wantIs:  adminsock.ErrForeign,
			wantErr: []string{"another user owns it: the process answering runs as ", "uid 65534, not as root"},
		},
		{
			name: "another user's socket, our server",
			setup: func(t *testing.T, db string) *fakeServer {
				s := serveFake(t, listenAs(t, 0, adminsock.Path(db)))
				mustLchown(t, adminsock.Path(db), nobody)
				return s
			},
			wantIs:  adminsock.ErrForeign,
			wantErr: []string{"another user owns it (", "uid 65534), not root"},
		},
		{
			name: "a symbolic link to a socket",
			setup: func(t *testing.T, db string) *fakeServer {
				target := filepath.Join(filepath.Dir(db), "elsewhere.sock")
				s := serveFake(t, listenAs(t, 0, target))
				if err := os.Symlink(target, adminsock.Path(db)); err != nil {
					t.Fatal(err)
				}
				return s
			},
			wantErr: []string{"a symbolic link, which ownsona never makes"},
		},
		{
			name: "root uses the server of the database's owner",
			setup: func(t *testing.T, db string) *fakeServer {
				mustLchown(t, db, nobody)
				return serveFake(t, listenAs(t, nobody, adminsock.Path(db)))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, via := range []string{"a command", "stdio"} {
				dir := shortDir(t)
				if err := os.Chmod(dir, 0o1777); err != nil {
					t.Fatal(err)
				}
				db := filepath.Join(dir, "o.db")
				if err := os.WriteFile(db, nil, 0o600); err != nil { // whose file it is is what counts
					t.Fatal(err)
				}
				s := tt.setup(t, db)
				call := adminsock.Call{Args: []string{"token", "create", "--name", "script"}}
				if via == "stdio" {
					call = adminsock.Call{Args: []string{"stdio"}, Stdin: strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall"}}` + "\n")}
				}
				out, _, err := forward(t, db, call) // fails the test unless handled: used or refused
				heard := s.stop()
				if tt.wantErr == nil {
					if err != nil || !strings.Contains(out, "osk_fake") || len(heard) == 0 {
						t.Errorf("%s: err %v, output %q, the server heard %q; want the server used", via, err, out, heard)
					}
					continue
				}
				if err == nil || tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Fatalf("%s: err = %v, want a refusal (%v)", via, err, tt.wantIs)
				}
				for _, want := range append(tt.wantErr, adminsock.Path(db)) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: err = %q, want %q in it", via, err, want)
					}
				}
				if out != "" || len(heard) != 0 {
					t.Errorf("%s: printed %q and sent the server %q; want nothing either way", via, out, heard)
				}
			}
		})
	}
}

// TestListen_ForeignPath (SECURITY.md ST-19): serve refuses a socket path that another user
// owns, and leaves it in place, whether or not anyone answers there.
func TestListen_ForeignPath(t *testing.T) {
	mustBeRoot(t)
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
	}{
		{"a file of another user", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			mustLchown(t, path, nobody)
		}},
		{"another user's server", func(t *testing.T, path string) {
			serveFake(t, listenAs(t, nobody, path))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := shortDir(t)
			if err := os.Chmod(dir, 0o1777); err != nil {
				t.Fatal(err)
			}
			db := filepath.Join(dir, "o.db")
			path := adminsock.Path(db)
			tt.setup(t, path)
			closeSocket, err := adminsock.Listen(context.Background(), db, adminsock.Config{Log: zerolog.Nop()})
			if err == nil {
				closeSocket()
			}
			if !errors.Is(err, adminsock.ErrForeign) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "uid 65534") {
				t.Errorf("err = %v, want ErrForeign naming %s and uid 65534", err, path)
			}
			if fi, err := os.Lstat(path); err != nil || int(fi.Sys().(*syscall.Stat_t).Uid) != nobody {
				t.Errorf("after the refusal: %v, want the other user's file left in place", err)
			}
		})
	}
}

// TestListen_ForeignClient (SECURITY.md ST-19): the server answers only its own user and root
// (SO_PEERCRED), even where the socket's mode would let another user connect: a client of
// another user gets no answer and runs nothing.
func TestListen_ForeignClient(t *testing.T) {
	mustBeRoot(t)
	s := mustListen(t)
	path := adminsock.Path(s.db)
	// As if the socket's mode, and its folder's, had not held.
	if err := os.Chmod(filepath.Dir(path), 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		uid    int
		answer bool
	}{
		{"another user", nobody, false},
		{"root", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := s.ran.Load()
			c := dialAs(t, tt.uid, path)
			defer c.Close()
			c.Write([]byte(`{"args":["echo","hi"],"cwd":"/"}` + "\n")) // fails once refused
			kind, b := readFrame(t, c)
			if got := kind == 'o'; got != tt.answer {
				t.Errorf("first frame %q %q; want an answer: %v", kind, b, tt.answer)
			}
			if ran := s.ran.Load() > before; ran != tt.answer {
				t.Errorf("the command ran: %v, want %v", ran, tt.answer)
			}
		})
	}
}

// dialAs connects to the Unix socket path as the user uid (the test runs as root): the
// server sees uid in the connection's credentials (SO_PEERCRED). Only the thread that dials
// takes on uid; it ends with its goroutine, still locked to it.
func dialAs(t testing.TB, uid int, path string) net.Conn {
	t.Helper()
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime ends the thread with the goroutine
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			ch <- result{err: e}
			return
		}
		c, err := net.Dial("unix", path)
		ch <- result{c, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("dial %s as uid %d: %v", path, uid, r.err)
	}
	return r.c
}

func mustBeRoot(t testing.TB) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("another user's socket needs root to make: run as root")
	}
}

func mustLchown(t testing.TB, path string, uid int) {
	t.Helper()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// listenAs listens on the Unix socket path as the user uid (the test runs as root): the
// socket's file is uid's, and so are the credentials its peers see (SO_PEERCRED). Only the
// thread that listens takes on uid; it ends with its goroutine, still locked to it.
func listenAs(t testing.TB, uid int, path string) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime ends the thread with the goroutine
		if _, _, e := syscall.RawSyscall(syscall.SYS_SETRESUID, ^uintptr(0), uintptr(uid), ^uintptr(0)); e != 0 {
			ch <- result{err: e}
			return
		}
		ln, err := net.Listen("unix", path)
		ch <- result{ln, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("listen on %s as uid %d: %v", path, uid, r.err)
	}
	t.Cleanup(func() { r.ln.Close() })
	return r.ln
}

// fakeServer answers every connection with a token and the end of a command, as an attacker
// would, and keeps what its clients sent.
type fakeServer struct {
	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	heard []byte
}

func serveFake(t testing.TB, ln net.Listener) *fakeServer {
	s := &fakeServer{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				writeFrame(c, 'o', []byte("osk_fake\n"))
				writeFrame(c, 'x', []byte(`{}`))
				c.SetReadDeadline(time.Now().Add(10 * time.Second))
				b, _ := io.ReadAll(c)
				s.mu.Lock()
				s.heard = append(s.heard, b...)
				s.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop closes the listener, waits for the connections to end and returns what they sent.
func (s *fakeServer) stop() []byte {
	s.ln.Close()
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.heard
}
