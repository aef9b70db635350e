package ops

// The admin socket: while `serve` holds the file, the other commands (backup, export, token,
// clients, keys, audit, check, ca, stdio) reach it through a Unix socket next to the database,
// mode 0600, and the server runs them on its open file. When no server runs they open the file
// themselves.
//
// The protocol is local and small. The client sends one JSON line {"args": [...], "cwd": "..."};
// for stdio the connection then carries the MCP stdio transport both ways. For the other
// commands the server answers with frames: a byte ('o' standard output, 'e' standard error,
// 'x' the end), a big-endian uint32 length, and that many bytes; the 'x' frame holds
// {"error", "usage"}.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// adminCommands are the commands that go through the socket while a server runs.
var adminCommands = []string{"backup", "export", "import", "token", "clients", "keys", "audit", "check", "ca", "stdio"}

// socketPath is the admin socket of the database at db.
func socketPath(db string) string { return db + ".sock" }

type adminRequest struct {
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
}

type adminEnd struct {
	Error string `json:"error,omitempty"`
	Usage bool   `json:"usage,omitempty"`
}

// openAdminSocket listens on the admin socket, replacing a stale one (a file nobody answers
// on), and serves it until ctx ends. A path too long for a Unix socket only disables it, with a
// warning: the commands then say to stop the server.
func (a *App) openAdminSocket(ctx context.Context) {
	path, err := filepath.Abs(socketPath(a.cfg.DB))
	if err != nil {
		a.log.Warn().Err(err).Msg("admin socket disabled")
		return
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		a.log.Warn().Str("socket", path).Msg("admin socket disabled: another process answers on it")
		return
	}
	os.Remove(path) // stale: its server is gone (this process holds the file's lock)
	old := syscallUmask(0o177)
	ln, err := net.Listen("unix", path)
	syscallUmask(old)
	if err != nil {
		a.log.Warn().Err(err).Str("socket", path).Msg("admin socket disabled; commands need the server stopped")
		return
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		a.log.Warn().Err(err).Msg("admin socket disabled")
		return
	}
	a.adminLn = ln
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go a.serveAdminConn(ctx, c.(*net.UnixConn))
		}
	}()
}

func (a *App) closeAdminSocket() {
	if a.adminLn != nil {
		path := a.adminLn.Addr().String()
		a.adminLn.Close()
		os.Remove(path)
		a.adminLn = nil
	}
}

// serveAdminConn runs one command for a local client of the same user (or root).
func (a *App) serveAdminConn(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	if uid, ok := peerUID(c); ok && uid != os.Getuid() && uid != 0 {
		a.log.Warn().Int("uid", uid).Msg("admin socket: refused a client of another user")
		return
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	if err != nil || len(line) > 64<<10 {
		return
	}
	c.SetReadDeadline(time.Time{})
	var req adminRequest
	if err := json.Unmarshal(line, &req); err != nil || len(req.Args) == 0 || !slices.Contains(adminCommands, req.Args[0]) {
		writeFrame(c, 'x', frameJSON(adminEnd{Error: "admin socket: not a command it runs", Usage: true}))
		return
	}
	a.log.Info().Str("command", req.Args[0]).Msg("admin command")
	if req.Args[0] == "stdio" {
		if err := a.mcp.ServeStdio(ctx, r, c); err != nil && !errors.Is(err, context.Canceled) {
			a.log.Debug().Err(err).Msg("admin socket: stdio ended")
		}
		return
	}
	fw := &frameWriter{c: c}
	err = runLive(a, req, fw.stream('o'), fw.stream('e'))
	end := adminEnd{}
	if err != nil {
		end.Error = err.Error()
		var ue *UsageError
		end.Usage = errors.As(err, &ue)
	}
	fw.write('x', frameJSON(end))
}

func frameJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// frameWriter writes frames under a mutex (the command may write stdout and stderr from one
// goroutine only, but the mutex keeps frames whole whatever it does).
type frameWriter struct {
	mu sync.Mutex
	c  net.Conn
}

func (fw *frameWriter) write(kind byte, b []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return writeFrame(fw.c, kind, b)
}

func (fw *frameWriter) stream(kind byte) io.Writer {
	return writerFunc(func(b []byte) error {
		for len(b) > 0 { // frames of at most 1 MiB
			n := min(len(b), 1<<20)
			if err := fw.write(kind, b[:n]); err != nil {
				return err
			}
			b = b[n:]
		}
		return nil
	})
}

// writerFunc is an io.Writer that writes all of b or fails.
type writerFunc func([]byte) error

func (f writerFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

func writeFrame(w io.Writer, kind byte, b []byte) error {
	hdr := [5]byte{kind}
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(b)))
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(b)
	return err
}

// forwardAdmin runs a command through the running server's admin socket. handled is false when
// no server answers there (the caller then opens the file itself).
func forwardAdmin(ctx context.Context, db string, args []string, stdin io.Reader, stdout, stderr io.Writer) (handled bool, err error) {
	path := socketPath(db)
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return false, nil
	}
	defer c.Close()
	cwd, _ := os.Getwd()
	req := append(frameJSON(adminRequest{Args: args, Cwd: cwd}), '\n')
	if _, err := c.Write(req); err != nil {
		return true, fmt.Errorf("admin socket %s: %w", path, err)
	}
	if args[0] == "stdio" {
		go func() {
			io.Copy(c, stdin)
			c.(*net.UnixConn).CloseWrite()
		}()
		stop := context.AfterFunc(ctx, func() { c.Close() })
		defer stop()
		_, err := io.Copy(stdout, c)
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, err
	}
	r := bufio.NewReader(c)
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return true, fmt.Errorf("admin socket %s: the server ended the command early: %w", path, err)
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > 8<<20 {
			return true, fmt.Errorf("admin socket %s: a frame of %d bytes", path, n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return true, fmt.Errorf("admin socket %s: %w", path, err)
		}
		switch hdr[0] {
		case 'o':
			stdout.Write(b)
		case 'e':
			stderr.Write(b)
		case 'x':
			var end adminEnd
			if err := json.Unmarshal(b, &end); err != nil {
				return true, fmt.Errorf("admin socket %s: %w", path, err)
			}
			switch {
			case end.Error == "":
				return true, nil
			case end.Usage:
				return true, &UsageError{end.Error}
			}
			return true, errors.New(end.Error)
		}
	}
}
