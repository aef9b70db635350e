// Package adminsock is the admin socket: while a server holds the database file, the
// operator's commands and `ownsona stdio` reach it through a Unix socket next to the file,
// and the server runs them on its open file. It knows the socket's path, the protocol, and
// whom to trust at either end; which commands there are, and what they do, is its caller's
// (app/ops).
//
// The simplest use, a server and a client of it:
//
//	stop, err := adminsock.Listen(ctx, "ownsona.db", adminsock.Config{
//		Commands: map[string]adminsock.Handler{"hello": func(ctx context.Context, c *adminsock.Call) error {
//			_, err := fmt.Fprintln(c.Stdout, "hello from the server")
//			return err
//		}},
//	})
//	...
//	handled, err := adminsock.Forward(ctx, "ownsona.db", &adminsock.Call{Args: []string{"hello"}, Stdout: os.Stdout, Stderr: os.Stderr})
//
// handled is false when no server answers on the socket (Path: the database's path plus
// ".sock"); the caller then opens the file itself. Answers says whether one does, for
// commands that must not run beside a server.
//
// # Whom it trusts
//
// Listen creates the socket with mode 0600 (under umask 0177, not chmodded after a window),
// refuses a path another user owns (ErrForeign), replaces a stale socket file (nobody answers
// on it) at start, and close removes it. Where the system says who is calling (SO_PEERCRED on
// Linux, LOCAL_PEERCRED on darwin and freebsd), the server answers only its own user and
// root. Forward uses the socket only when the socket, and the process answering on it where
// the system says who that is, belong to its own user or root, or, run as root, to the
// database file's owner (so `sudo ownsona token create` reaches a service user's server);
// anything else, or a symbolic link, is refused before a byte is sent. Elsewhere the guards
// are the socket's mode and owner (other Unix systems) or its folder's permissions (Windows).
//
// # The protocol
//
// The client sends one JSON line, at most 64 KiB, within 10 s of connecting:
//
//	{"args": ["import", "-"], "cwd": "/home/me", "stdin": true, "stdin_name": "/home/me/m.jsonl"}
//
// For "stdio" the connection then carries the MCP stdio transport both ways, unframed
// (Config.Stdio). For the other commands both sides speak in frames: a kind byte, a big-endian
// uint32 length and that many bytes. The server sends 'o' (standard output), 'e' (standard
// error) and last 'x', whose payload is {"error": "...", "usage": true} (both absent on
// success; usage when the command's error wraps ErrUsage). When "stdin" is true the client
// sends 'i' frames (standard input), ending with an empty 'i' frame; a connection that ends
// before it is an error to the command, never a short input. Frames are written at most 1 MiB
// long and read up to 8 MiB.
//
// # Caveats
//
// A command run through the socket runs with the server's clock and file, not with the
// client's settings: only its arguments, working directory and standard input cross.
// Commands run one per connection, concurrently with each other and with the server's
// requests; close cancels their context and waits for them.
package adminsock
