// Package ops is what the operator types: `ownsona token`, `backup`, `import` and the other
// commands that administer the one file, one file per command, each with its own
// flag.FlagSet and usage. app runs them from the one table, Commands(); serve, stdio, doctor,
// version and help stay in app, which owns the server's configuration. While a server runs,
// the Socket commands reach it through its admin socket (app/adminsock): SocketCommands is the
// table serve hands adminsock.Listen.
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
// The Socket commands first try the admin socket of --db (adminsock.Path: the database's path
// plus ".sock"). When a server answers there, it runs the command on its open file with
// Env.Live set and this process only relays; otherwise the command opens the file itself,
// which fails when another process holds it: the error then names that process (kv.Holder).
// restore and compact refuse to run while a server answers. Whom a command trusts at the
// other end of the socket, and whom the server answers, is adminsock's to check (its doc says
// how). A usage error crosses the socket and is a *UsageError on the client's side too.
// Through the socket, clients and keys act on the server's own grant store and signing keys
// (Live.Grants, Live.Keys), so a revocation or a rotation is live at once.
//
// Files named on the command line are read and written by the command's own process, so that
// paths resolve where the user typed them and with the user's permissions: `backup --to FILE`
// asks the server for `backup --to -` and writes, fsyncs and checks FILE here; `import FILE`
// opens FILE here and sends it as `import -`'s standard input; `password set` reads the
// password here and sends it the same way. An import through the socket goes through the
// server's memory store, so its OnChange hooks (resource notifications) hear of it.
//
// # Caveats
//
// A command run through the socket runs with the server's clock and file, not with the
// client's settings: the client's OWNSONA_* variables and --db do not reach it (Env.Getenv
// there reads nothing). `password set` and `keys rotate` take effect in a running server at
// once only through Live.SetOwnerPassword and Live.Keys; a server that leaves them nil keeps
// checking logins against the old password, and signing with the old key, until it is
// restarted. Commands run through the socket one per connection, concurrently with each
// other and with the server's requests.
package ops
