package adminsock

// The socket's two sides: Listen and the server it starts, Forward and the client. The
// protocol is described in doc.go.

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
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Limits of the protocol.
const (
	maxRequest    = 64 << 10 // the request line
	requestWait   = 10 * time.Second
	maxFrameWrite = 1 << 20 // frames written, either way
	maxFrameRead  = 8 << 20 // frames accepted
)

// Path is the admin socket of the database at db: db + ".sock".
func Path(db string) string { return db + ".sock" }

// ErrForeign is wrapped by Listen when another user owns the admin socket's path, and by
// Forward when the socket, or the process answering on it, is neither the caller's nor root's
// (nor, for root, the database owner's): in a directory other users can write, one of them
// may listen there first to collect the tokens and memories meant for the server.
var ErrForeign = errors.New("another user owns it")

// ErrUsage marks a command's error as a mistake in its command line: Listen tells the client
// so, and Forward's error for such a command wraps ErrUsage.
var ErrUsage = errors.New("a mistake in the command line")

// Call is one command run through the admin socket. On the client's side, Forward sends it;
// on the server's, a Handler runs it.
type Call struct {
	// Args are the command's name and its arguments: {"token", "list"}.
	Args []string
	// Cwd is the client's working directory, which relative paths on its command line are
	// relative to. Forward sends the process's if empty.
	Cwd string
	// Stdin is the command's standard input: nil for none. On the server's side it is never
	// nil, and a connection that ends before the client's input does is an error from it, never
	// a short input.
	Stdin io.Reader
	// StdinName is what Stdin carries, for messages ("/home/me/memories.jsonl").
	StdinName string
	// Stdout and Stderr are the command's output.
	Stdout, Stderr io.Writer
}

// Handler runs one command that came through the admin socket. An error that wraps ErrUsage
// reaches the client as one.
type Handler func(ctx context.Context, c *Call) error

// Config is what Listen serves.
type Config struct {
	// Commands are the commands the server runs, by name; any other is refused as a usage error.
	Commands map[string]Handler
	// Stdio serves "stdio": the MCP stdio transport over the connection, both ways, unframed.
	// If nil, "stdio" is refused like any command not in Commands.
	Stdio func(ctx context.Context, in io.Reader, out io.Writer) error
	Log   zerolog.Logger
}

// request is the client's first line.
type request struct {
	Args []string `json:"args"`
	Cwd  string   `json:"cwd"`
	// Stdin: input frames follow, ending with an empty one.
	Stdin bool `json:"stdin,omitempty"`
	// StdinName is what the input carries, for messages ("/home/me/memories.jsonl").
	StdinName string `json:"stdin_name,omitempty"`
}

// end is the payload of the 'x' frame.
type end struct {
	Error string `json:"error,omitempty"`
	Usage bool   `json:"usage,omitempty"`
}

// Listen listens on the admin socket of the database at db and serves it until ctx ends or
// close is called: it runs cfg.Commands, and "stdio" by calling cfg.Stdio. A stale socket (a
// file nobody answers on) is replaced; the new one has mode 0600 from the start, answers only
// processes of the same user or root (where the system says who is calling), and is removed
// by close. A path that another user owns is refused (ErrForeign), and left in place. close
// stops accepting, ends the connections still open, waits for their commands to return, and
// may be called more than once; call it before closing what the commands use.
func Listen(ctx context.Context, db string, cfg Config) (close func(), err error) {
	path, err := filepath.Abs(Path(db))
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if uid, ok := fileUID(fi); ok && uid != os.Getuid() {
			return nil, fmt.Errorf("admin socket %s: %w (%s), who could pose as this server to its clients; remove it, and keep the database in a directory only its user can write", path, ErrForeign, userName(uid))
		}
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return nil, fmt.Errorf("admin socket %s: another process answers on it", path)
	}
	os.Remove(path) // stale: its server is gone (this process holds the file's lock)
	old := syscallUmask(0o177)
	ln, err := net.Listen("unix", path)
	syscallUmask(old)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	s := &socketServer{commands: cfg.Commands, stdio: cfg.Stdio, log: cfg.Log, ln: ln, path: path, conns: map[net.Conn]struct{}{}}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.wg.Add(1)
	go s.accept()
	stop := context.AfterFunc(ctx, s.close)
	return func() {
		stop()
		s.close()
	}, nil
}

// socketServer is one listening admin socket.
type socketServer struct {
	commands map[string]Handler
	stdio    func(ctx context.Context, in io.Reader, out io.Writer) error
	log      zerolog.Logger
	ln       net.Listener
	path     string
	ctx      context.Context // the commands'; ends at close
	cancel   context.CancelFunc

	mu     sync.Mutex // guards conns and closed
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // accept and every connection
	once   sync.Once
}

func (s *socketServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serve(c.(*net.UnixConn))
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *socketServer) close() {
	s.once.Do(func() {
		s.cancel()
		s.ln.Close()
		s.mu.Lock()
		s.closed = true
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
		os.Remove(s.path)
	})
}

// serve runs one command for a local client of the same user (or root).
func (s *socketServer) serve(c *net.UnixConn) {
	defer c.Close()
	if uid, ok := peerUID(c); ok && uid != os.Getuid() && uid != 0 {
		s.log.Warn().Int("uid", uid).Msg("admin socket: refused a client of another user")
		return
	}
	c.SetReadDeadline(time.Now().Add(requestWait))
	r := bufio.NewReaderSize(c, maxRequest)
	line, err := r.ReadSlice('\n') // fails with bufio.ErrBufferFull past maxRequest
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	var req request
	if err := json.Unmarshal(line, &req); err != nil || len(req.Args) == 0 {
		writeFrame(c, 'x', mustJSON(end{Error: "admin socket: not a command", Usage: true}))
		return
	}
	name := req.Args[0]
	if name == "stdio" && s.stdio != nil {
		s.log.Info().Str("command", name).Msg("admin command")
		if err := s.stdio(s.ctx, r, c); err != nil && !errors.Is(err, context.Canceled) {
			s.log.Debug().Err(err).Msg("admin socket: stdio ended")
		}
		return
	}
	run, ok := s.commands[name]
	if !ok {
		writeFrame(c, 'x', mustJSON(end{Error: fmt.Sprintf("admin socket: %q is not a command the server runs", name), Usage: true}))
		return
	}
	s.log.Info().Str("command", name).Msg("admin command")
	fw := &frameWriter{w: c}
	call := &Call{
		Args:      req.Args,
		Cwd:       req.Cwd,
		Stdin:     eof{},
		StdinName: req.StdinName,
		Stdout:    fw.stream('o'),
		Stderr:    fw.stream('e'),
	}
	if req.Stdin {
		call.Stdin = &inputReader{r: r}
	}
	err = run(s.ctx, call)
	var e end
	if err != nil {
		e.Error = err.Error()
		e.Usage = errors.Is(err, ErrUsage)
		s.log.Debug().Err(err).Str("command", name).Msg("admin command failed")
	}
	fw.write('x', mustJSON(e))
}

// eof is an empty standard input.
type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }

// inputReader reads the client's input frames: 'i', a big-endian uint32 length and that many
// bytes; an empty one is the end. A connection that ends before it is an error, so a cut
// input is never taken for a whole one.
type inputReader struct {
	r    *bufio.Reader
	left uint32 // bytes left in the current frame
	err  error  // io.EOF after the last frame
}

func (in *inputReader) Read(p []byte) (int, error) {
	for in.left == 0 {
		if in.err != nil {
			return 0, in.err
		}
		var hdr [5]byte
		if _, err := io.ReadFull(in.r, hdr[:]); err != nil {
			in.err = fmt.Errorf("admin socket: the input ended early: %w", io.ErrUnexpectedEOF)
			continue
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		switch {
		case hdr[0] != 'i':
			in.err = fmt.Errorf("admin socket: a frame %q in the input", hdr[0])
		case n > maxFrameRead:
			in.err = fmt.Errorf("admin socket: an input frame of %d bytes", n)
		case n == 0:
			in.err = io.EOF
		}
		in.left = n
		if in.err != nil {
			in.left = 0
		}
	}
	if uint32(len(p)) > in.left {
		p = p[:in.left]
	}
	n, err := in.r.Read(p)
	in.left -= uint32(n)
	if err != nil {
		in.err = fmt.Errorf("admin socket: the input ended early: %w", io.ErrUnexpectedEOF)
		in.left = 0
		if n == 0 {
			return 0, in.err
		}
	}
	return n, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// frameWriter writes whole frames under a mutex, whatever goroutines write through it.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (fw *frameWriter) write(kind byte, b []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return writeFrame(fw.w, kind, b)
}

// stream is an io.Writer that sends what it is given as frames of kind, at most 1 MiB each.
func (fw *frameWriter) stream(kind byte) io.Writer {
	return writerFunc(func(b []byte) error {
		for len(b) > 0 {
			n := min(len(b), maxFrameWrite)
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

// Forward runs c through the admin socket of the running server of the database at db,
// copying its output to c.Stdout and c.Stderr; c.Stdin, if not nil, is the command's standard
// input (for stdio, the MCP transport). handled is false when no server answers there: the
// caller then opens the file itself. err is the command's error, wrapping ErrUsage if it was
// a usage error. The socket, and the process answering on it where the system says who that
// is, must be the caller's user's or root's (for root, also the database file's owner's);
// anything else, or a symbolic link, is refused before a byte is sent (handled, with an error
// that wraps ErrForeign but for the link).
func Forward(ctx context.Context, db string, c *Call) (handled bool, err error) {
	req := request{Args: c.Args, Cwd: c.Cwd, StdinName: c.StdinName}
	if req.Cwd == "" {
		req.Cwd, _ = os.Getwd()
	}
	return forward(ctx, db, req, c.Stdin, c.Stdout, c.Stderr)
}

// usageError is a command's error that the server said was a usage error.
type usageError struct{ msg string }

func (e *usageError) Error() string        { return e.msg }
func (e *usageError) Is(target error) bool { return target == ErrUsage }

func forward(ctx context.Context, db string, req request, stdin io.Reader, stdout, stderr io.Writer) (bool, error) {
	path := Path(db)
	fi, err := os.Lstat(path)
	if err != nil {
		return false, nil // no socket, no server
	}
	trust := trustFor(db)
	if fi.Mode()&os.ModeSymlink != 0 {
		return true, fmt.Errorf("admin socket %s: a symbolic link, which ownsona never makes; it may lead to another user's process posing as the server: remove it", path)
	}
	if uid, ok := fileUID(fi); ok && !trust.ok(uid) {
		return true, fmt.Errorf("admin socket %s: %w (%s), not %s; it may be posing as the server: remove it, and keep the database in a directory only its user can write", path, ErrForeign, userName(uid), trust)
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return false, nil
	}
	c := conn.(*net.UnixConn)
	defer c.Close()
	// The path was checked before connecting, and may have been replaced since: the process
	// that answers is what counts, where the system says who it is.
	if uid, ok := peerUID(c); ok && !trust.ok(uid) {
		return true, fmt.Errorf("admin socket %s: %w: the process answering runs as %s, not as %s; it may be posing as the server: stop it, remove the socket, and keep the database in a directory only its user can write", path, ErrForeign, userName(uid), trust)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	stdio := req.Args[0] == "stdio"
	req.Stdin = stdin != nil && !stdio
	if _, err := c.Write(append(mustJSON(req), '\n')); err != nil {
		return true, fmt.Errorf("admin socket %s: %w", path, err)
	}
	if stdio {
		go func() {
			io.Copy(c, stdin)
			c.CloseWrite()
		}()
		_, err := io.Copy(stdout, c)
		if ctx.Err() != nil {
			return true, ctx.Err()
		}
		return true, err
	}
	var inErr error // a failure to read stdin; the command must not take a cut input as whole
	var inMu sync.Mutex
	if req.Stdin {
		go func() {
			err := sendInput(c, stdin)
			if err != nil {
				inMu.Lock()
				inErr = err
				inMu.Unlock()
				c.Close()
			}
		}()
	}
	failed := func(err error) (bool, error) {
		inMu.Lock()
		defer inMu.Unlock()
		switch {
		case inErr != nil:
			return true, inErr
		case ctx.Err() != nil:
			return true, ctx.Err()
		}
		return true, err
	}
	r := bufio.NewReader(c)
	var buf []byte
	for {
		var hdr [5]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return failed(fmt.Errorf("admin socket %s: the server ended the command early: %w", path, err))
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		if n > maxFrameRead {
			return true, fmt.Errorf("admin socket %s: a frame of %d bytes", path, n)
		}
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return failed(fmt.Errorf("admin socket %s: %w", path, err))
		}
		switch hdr[0] {
		case 'o':
			if _, err := stdout.Write(buf); err != nil {
				return true, err
			}
		case 'e':
			stderr.Write(buf)
		case 'x':
			var e end
			if err := json.Unmarshal(buf, &e); err != nil {
				return true, fmt.Errorf("admin socket %s: %w", path, err)
			}
			switch {
			case e.Error == "":
				return true, nil
			case e.Usage:
				return true, &usageError{e.Error}
			}
			return true, errors.New(e.Error)
		}
	}
}

// socketTrust is whose admin socket and server a client may use: its own user's, root's,
// and, for root, the database file's owner's, so that `sudo ownsona token create` reaches
// the server of a service user (which answers root).
type socketTrust struct {
	me      int // os.Getuid(); -1 where the system has no user ids
	dbOwner int // -1 unless me is root and the file's owner is known
}

func trustFor(db string) socketTrust {
	t := socketTrust{me: os.Getuid(), dbOwner: -1}
	if t.me == 0 {
		if fi, err := os.Stat(db); err == nil {
			if uid, ok := fileUID(fi); ok {
				t.dbOwner = uid
			}
		}
	}
	return t
}

func (t socketTrust) ok(uid int) bool { return uid == t.me || uid == 0 || uid == t.dbOwner }

// String names the trusted users, for messages.
func (t socketTrust) String() string {
	switch {
	case t.me != 0:
		return "you or root"
	case t.dbOwner > 0:
		return "root or the database's owner (" + userName(t.dbOwner) + ")"
	}
	return "root"
}

// userName is "NAME, uid UID", or "uid UID" for a user the system does not name.
func userName(uid int) string {
	id := strconv.Itoa(uid)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username + ", uid " + id
	}
	return "uid " + id
}

// sendInput sends r as input frames and the empty frame that ends them. It returns a failure
// to read r; a failure to write means the server is done with the command, which the reader
// of its frames learns.
func sendInput(c net.Conn, r io.Reader) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if werr := writeFrame(c, 'i', buf[:n]); werr != nil {
				return nil
			}
		}
		if errors.Is(err, io.EOF) {
			writeFrame(c, 'i', nil)
			return nil
		}
		if err != nil {
			return fmt.Errorf("read input: %w", err)
		}
	}
}

// Answers reports whether a server answers on the admin socket of db.
func Answers(ctx context.Context, db string) bool {
	d := net.Dialer{Timeout: time.Second}
	c, err := d.DialContext(ctx, "unix", Path(db))
	if err != nil {
		return false
	}
	c.Close()
	return true
}
