// Package ops is what the operator types: `ownsona token`, `backup`, `import` and the other
// commands that administer the one file, one file per command, each with its own
// flag.FlagSet and usage; and the admin socket through which they reach a running server.
// app runs them from the one table, Commands(); serve, stdio, doctor, version and help stay in
// app, which owns the server's configuration.
//
// The simplest use, as app does:
//
//	env := &ops.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
//	for _, c := range ops.Commands() {
//		if c.Name == args[0] {
//			return c.Run(ctx, env, args[1:])
//		}
//	}
//
// # Commands
//
//	token create|list|revoke        personal access tokens for scripts
//	clients list|revoke|revoke-all|delete|prune
//	                                OAuth clients and their grants
//	keys rotate|list                token signing keys
//	password set                    the owner's login password
//	audit                           the audit log of MCP requests
//	ca export                       the root certificate of --tls local
//	backup --to FILE [--force]      a checked snapshot (--to -: on standard output)
//	check [FILE]                    page and content checks
//	restore --from FILE             a checked copy of a backup in place of the file (server stopped)
//	compact                         the file without free pages (server stopped)
//	import FILE|-                   memories from an export or another server
//	export [--active-only]          every memory as JSON Lines
//	install-service [--user]        serve as a per-user service (systemd, launchd), or a
//	                                hardened systemd unit for a system account
//	hash-password                   an argon2id hash for OWNSONA_LOGIN_PASSWORD
//
// Every command that works on the file takes --db (default OWNSONA_DB, else ownsona.db) and
// accepts --log-level, which it ignores. `ownsona CMD --help` prints the command's usage and
// flags on standard output and succeeds; an unknown flag or a stray argument is a
// *UsageError that names the command. Commands that read or administer the file (all that
// take --db but import, restore and ca export, which may make one) refuse a path where no file
// exists (ErrNoDatabase) rather than create an empty database there.
//
// # Running server or not
//
// The Socket commands first try the admin socket of --db (SocketPath: the database's path
// plus ".sock"). When a server answers there, it runs the command on its open file and this
// process only relays; otherwise the command opens the file itself, which fails when another
// process holds it: the error then names that process (kv.Holder). restore and compact refuse
// to run while a server answers. A command uses the socket only when it, and the process
// answering on it (where the system says who that is: Linux, darwin, freebsd), belong to its
// own user or root, or, run as root, to the database file's owner; a socket path another user
// owns makes ListenSocket, and so serve, refuse (ErrForeignSocket). Through the socket, clients
// and keys act on the server's own grant store and signing keys (Live.Grants, Live.Keys), so a
// revocation or a rotation is live at once.
//
// Files named on the command line are read and written by the command's own process, so that
// paths resolve where the user typed them and with the user's permissions: `backup --to FILE`
// asks the server for `backup --to -` and writes, fsyncs and checks FILE here; `import FILE`
// opens FILE here and sends it as `import -`'s standard input; `password set` reads the
// password here and sends it the same way. An import through the socket goes through the
// server's memory store, so its OnChange hooks (resource notifications) hear of it.
//
// # The socket protocol
//
// The client sends one JSON line, at most 64 KiB, within 10 s of connecting:
//
//	{"args": ["import", "-"], "cwd": "/home/me", "stdin": true, "stdin_name": "/home/me/m.jsonl"}
//
// For "stdio" the connection then carries the MCP stdio transport both ways, unframed. For the
// other commands both sides speak in frames: a kind byte, a big-endian uint32 length and that
// many bytes. The server sends 'o' (standard output), 'e' (standard error) and last 'x', whose
// payload is {"error": "...", "usage": true} (both absent on success). When "stdin" is true the
// client sends 'i' frames (standard input), ending with an empty 'i' frame; a connection that
// ends before it is an error to the command, never a short input. Frames are written at most
// 1 MiB long and read up to 8 MiB. The socket is created with mode 0600 (under umask 0177, not
// chmodded after a window); on Linux the server also refuses a peer (SO_PEERCRED) that is
// neither its own user nor root. A stale socket file is replaced at start, and close removes
// it.
//
// # Caveats
//
// A command run through the socket runs with the server's clock and file, not with the
// client's settings: the client's OWNSONA_* variables and --db do not reach it. `password
// set` and `keys rotate` write the file, but a running server reads the password and loads
// its signing keys when it starts: it keeps checking logins against the old password, and
// signing with the old key, until it is restarted. Commands run through the socket one per
// connection, concurrently with each other and with the server's requests.
package ops
