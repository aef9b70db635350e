package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/certs"
	"github.com/ownsona/ownsona/app/doctor"
	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/rpc"
	"github.com/ownsona/ownsona/vector"
)

// Version is set by the build (-ldflags "-X github.com/ownsona/ownsona/app.Version=…").
var Version = "dev"

// App is one running ownsona: the file, the memory service and the MCP server over them.
type App struct {
	cfg     Config
	log     zerolog.Logger
	now     func() time.Time
	started time.Time

	db   *kv.DB
	svc  *Service
	mcp  *rpc.Server
	auth *oauth.Server // nil until serve knows its public URL; never used by stdio

	rememberItem, updateItem *rpc.Schema // batch items, validated one by one

	limiter *limit.Limiter // nil when rate limiting is off
	audit   *audit.Log
	certs   *certs.Manager // nil until Listen, and with --tls off

	stderr   io.Writer // where a generated login password is shown
	ln       net.Listener
	http     *http.Server
	http80   *http.Server       // the ACME challenge and redirect listener; nil when none
	stopBase context.CancelFunc // ends the servers' base context: event streams close
	adminLn  net.Listener       // the admin socket; nil when not serving
	health   healthCache
}

// Open opens the file and builds the service and the MCP server. Close releases them.
func Open(cfg Config, stderr io.Writer) (*App, error) {
	a := &App{cfg: cfg, now: cfg.Now, stderr: stderr}
	if a.now == nil {
		a.now = time.Now
	}
	a.started = a.now()
	a.log = newLogger(stderr, cfg.LogLevel)
	emb, err := newEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	a.db, err = kv.Open(cfg.DB, kv.Options{Migrations: migrations})
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", cfg.DB, err)
	}
	a.svc, err = openService(a.db, serviceConfig{Embedder: emb, Now: a.now, Log: a.log,
		MaxTextChars: cfg.MaxTextChars, DedupThreshold: cfg.DedupThreshold})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.mcp = a.newRPCServer()
	if err := a.checkTools(); err != nil {
		a.Close()
		return nil, err
	}
	a.limiter = limit.New(limit.Config{PerMinute: cfg.RateLimit, Burst: cfg.RateBurst, Now: cfg.Now})
	a.audit, err = audit.Open(a.db, audit.Config{Now: a.now, MaxAge: cfg.AuditMaxAge, MaxEntries: cfg.AuditMaxEntries,
		OnError: func(err error) { a.log.Error().Err(err).Msg("audit log write failed") }})
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	if cfg.PublicURL != "" {
		if err := a.openAuth(cfg.PublicURL, stderr); err != nil {
			a.Close()
			return nil, err
		}
	}
	st := a.svc.stats()
	a.log.Info().Str("db", cfg.DB).Int("memories", st.Total).Str("embedder", cfg.Embedder).Str("version", cfg.Version).Msg("opened")
	return a, nil
}

// Close stops serving and releases everything in reverse order of opening; it tolerates
// partial opens and repeat calls and returns the first error.
func (a *App) Close() error {
	if a == nil {
		return nil
	}
	var errs []error
	if a.stopBase != nil {
		a.stopBase() // event streams end, so Shutdown need not wait for them
	}
	a.closeAdminSocket()
	for _, srv := range []**http.Server{&a.http, &a.http80} {
		if *srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := (*srv).Shutdown(ctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				// Connections that never finished their request (slow or stuck clients) are
				// cut rather than waited for: nothing acknowledged depends on them.
				a.log.Warn().Msg("connections still open after 5 s at shutdown were closed")
				err = (*srv).Close()
			}
			errs = append(errs, err)
			*srv = nil
		}
	}
	if a.certs != nil {
		errs = append(errs, a.certs.Close())
		a.certs = nil
	}
	if a.audit != nil {
		errs = append(errs, a.audit.Close())
		a.audit = nil
	}
	if a.auth != nil {
		a.auth.Close()
		a.auth = nil
	}
	if a.svc != nil {
		errs = append(errs, a.svc.Close())
		a.svc = nil
	}
	if a.db != nil {
		errs = append(errs, a.db.Close())
		a.db = nil
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func newEmbedder(cfg Config) (vector.Embedder, error) {
	switch cfg.Embedder {
	case "builtin":
		return vector.NewBuiltin(), nil
	case "openai":
		e, err := vector.NewOpenAI(vector.OpenAIConfig{URL: cfg.EmbedURL, Model: cfg.EmbedModel, APIKey: cfg.EmbedAPIKey, Timeout: cfg.EmbedTimeout})
		if err != nil {
			return nil, usageErr("embedder openai: %v", err)
		}
		return e, nil
	}
	if dir, ok := strings.CutPrefix(cfg.Embedder, "model2vec:"); ok {
		e, err := vector.NewModel2Vec(dir)
		if err != nil {
			return nil, usageErr("embedder %v", err)
		}
		return e, nil
	}
	return nil, nil
}

func newLogger(w io.Writer, level string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	// The background embedder and request handlers log concurrently; SyncWriter keeps lines whole
	// whatever w is.
	return zerolog.New(zerolog.SyncWriter(w)).Level(lvl).With().Timestamp().Logger()
}

// Run is ownsona's command line: main calls it with the process's arguments (without the
// program name), environment and standard streams.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := "help"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "help", "-h", "-help", "--help":
		return usage(stdout)
	case "version", "--version":
		fmt.Fprintln(stdout, "ownsona", Version)
		return nil
	case "hash-password":
		if len(args) > 0 {
			return usageErr("hash-password: reads the password from standard input and takes no arguments")
		}
		return hashPassword(stdin, stdout, stderr)
	case "install-service":
		return installService(args, stdout)
	case "doctor":
		return doctorCmd(ctx, args, getenv, stdout, stderr)
	case "serve", "stdio", "export", "token", "clients", "keys", "audit", "ca", "backup", "check", "restore", "compact", "import":
	default:
		return usageErr("unknown command %q (see 'ownsona help')", cmd)
	}
	all := args
	var activeOnly bool
	if cmd == "export" {
		args, activeOnly = cutFlag(args, "--active-only")
	}
	var sub []string
	if cmd != "serve" && cmd != "stdio" && cmd != "export" { // the rest have subcommands and arguments of their own
		args, sub = splitAdminArgs(args)
	}
	cfg, rest, err := loadConfig(cmd, args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return usage(stdout)
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("%s: unexpected argument %q", cmd, rest[0])
	}
	cfg.Version = Version
	if slices.Contains(adminCommands, cmd) && !(cmd == "check" && len(sub) > 0) { // check FILE opens FILE
		if handled, err := forwardAdmin(ctx, cfg.DB, append([]string{cmd}, all...), stdin, stdout, stderr); handled {
			return err
		}
	}
	return runCommand(ctx, cmd, cfg, sub, activeOnly, stdin, stdout, stderr)
}

// runLive runs a command that came through the admin socket on the running server's file.
// Settings flags (--db, --log-level) are the server's; the command's own arguments are kept.
func runLive(a *App, req adminRequest, stdout, stderr io.Writer) error {
	cmd, args := req.Args[0], req.Args[1:]
	cfg := a.cfg
	cfg.live, cfg.cwd = a, req.Cwd
	var activeOnly bool
	if cmd == "export" {
		args, activeOnly = cutFlag(args, "--active-only")
	}
	_, sub := splitAdminArgs(args)
	if cmd == "export" && len(sub) > 0 {
		return usageErr("export: unexpected argument %q", sub[0])
	}
	return runCommand(context.Background(), cmd, cfg, sub, activeOnly, nil, stdout, stderr)
}

// runCommand runs a command once its configuration is known.
func runCommand(ctx context.Context, cmd string, cfg Config, sub []string, activeOnly bool, stdin io.Reader, stdout, stderr io.Writer) error {
	switch cmd {
	case "serve":
		return serve(ctx, cfg, stderr)
	case "export":
		return export(cfg, stdout, !activeOnly)
	case "token":
		return tokenCmd(cfg, sub, stdout, stderr)
	case "clients":
		return clientsCmd(cfg, sub, stdout)
	case "keys":
		return keysCmd(cfg, sub, stdout)
	case "audit":
		return auditCmd(cfg, sub, stdout)
	case "ca":
		return caCmd(cfg, sub, stdout)
	case "backup":
		return backupCmd(cfg, sub, stdout)
	case "check":
		return checkCmd(cfg, sub, stdout)
	case "restore":
		return restoreCmd(cfg, sub, stdout)
	case "compact":
		return compactCmd(cfg, sub, stdout)
	case "import":
		return importCmd(cfg, sub, stdout, stderr)
	default:
		return stdio(ctx, cfg, stdin, stdout, stderr)
	}
}

func serve(ctx context.Context, cfg Config, stderr io.Writer) error {
	tlsDefaults(&cfg)
	if err := checkListen(cfg.Addr, cfg.PublicURL); err != nil {
		return err
	}
	a, err := Open(cfg, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Listen(); err != nil {
		return err
	}
	a.openAdminSocket(ctx)
	a.scheduleBackups(ctx)
	ep := a.auth.Endpoints()
	a.log.Info().Str("url", ep.Resource).Str("listen", a.Addr()).Str("issuer", ep.Issuer).Str("tls", a.certsInfo()).Msg("serving MCP over HTTP")
	a.warnSize(runtime.GOARCH) // bbolt's memory map on 32-bit systems: at start, then daily
	daily := time.NewTicker(24 * time.Hour)
	defer daily.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-daily.C:
			a.warnSize(runtime.GOARCH)
		}
	}
	a.log.Info().Msg("shutting down")
	return a.Close()
}

// tlsDefaults fills what --tls implies: with acme, listen on :443 unless an address was given,
// and with a domain, the public URL https://DOMAIN (with the port when it is not 443).
func tlsDefaults(cfg *Config) {
	if cfg.TLS == "off" {
		return
	}
	if cfg.TLS == "acme" && cfg.Addr == NewConfig().Addr {
		cfg.Addr = ":443"
	}
	if cfg.PublicURL == "" && len(cfg.Domains) > 0 {
		cfg.PublicURL = "https://" + cfg.Domains[0]
		if _, port, err := net.SplitHostPort(cfg.Addr); err == nil && port != "443" && port != "0" {
			cfg.PublicURL += ":" + port
		}
	}
}

func stdio(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg.PublicURL = "" // the stdio transport has no authorization: its client started the process
	a, err := Open(cfg, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	a.log.Info().Msg("serving MCP on stdio")
	if err := a.mcp.ServeStdio(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return a.Close()
}

// usage prints the subcommands and every setting.
func usage(w io.Writer) error {
	fmt.Fprint(w, `ownsona: a personal memory server for AI assistants, in one file.

Usage:
  ownsona serve [flags]    serve MCP at http://ADDR/mcp; with --tls acme|local|files over HTTPS
                           (e.g. OWNSONA_DOMAIN=mem.example.com ownsona serve --tls acme)
  ownsona stdio [flags]    serve MCP on standard input/output (for Claude Desktop, Claude Code, Cursor)
  ownsona export [flags]   write every memory as JSON Lines to standard output, oldest first
                           (--active-only leaves out forgotten and expired ones)
  ownsona token create --name NAME [--scope memories:read|memories:write] [--expires 90d|never]
                           create a personal access token for scripts (printed once; stored hashed)
  ownsona token list       list personal access tokens
  ownsona token revoke ID|NAME
  ownsona clients list     list OAuth clients; 'clients revoke ID' ends its access at once,
                           'clients revoke-all' ends every client's, 'clients delete ID' removes it
  ownsona keys rotate      new token signing key (old tokens stay valid until they expire)
  ownsona audit [--since 24h] [--client NAME] [--tool T] [--outcome O] [--limit N] [--json]
                           the audit log of MCP requests, newest first
  ownsona ca export        the root certificate of --tls local, as PEM, for devices to trust
  ownsona backup --to FILE a checked snapshot of the file, also while the server runs
  ownsona check [FILE]     page and content checks of the database (or of FILE)
  ownsona restore --from FILE
                           replace the database by a checked copy of FILE (server stopped;
                           the old file is kept as .bak-TIME)
  ownsona compact          rewrite the file without free pages (server stopped)
  ownsona import FILE      memories from an export, export_memories output or a server-memory
                           knowledge graph; a re-import adds nothing twice
  ownsona doctor [--public] [--env-file FILE] [--resolver 1.1.1.1:53] [--timeout 5s] [flags]
                           check the file's permissions and the public URL, issuer and resource;
                           --public also DNS, port 443, the certificate, the OAuth discovery
                           documents and the 401 that hosted assistants (Claude.ai, ChatGPT) need
  ownsona install-service [--dry-run] [--user ownsona] [--db /var/lib/ownsona/ownsona.db]
                          [--bin /usr/local/bin/ownsona] [--unit /etc/systemd/system/ownsona.service]
                          [--env-file /etc/ownsona/ownsona.env] [--backup-dir DIR]
                           write a hardened systemd unit and print the commands that finish the install
  ownsona doctor [--public] [--env-file FILE] [--resolver 1.1.1.1:53] [--timeout 5s] [flags]
                           check the file's permissions and the public URL, issuer and resource;
                           --public also DNS, port 443, the certificate, the OAuth discovery
                           documents and the 401 that hosted assistants (Claude.ai, ChatGPT) need
  ownsona install-service [--dry-run] [--user ownsona] [--db /var/lib/ownsona/ownsona.db]
                          [--bin /usr/local/bin/ownsona] [--unit /etc/systemd/system/ownsona.service]
                          [--env-file /etc/ownsona/ownsona.env] [--backup-dir DIR]
                           write a hardened systemd unit and print the commands that finish the install
  ownsona hash-password    read a password on standard input, print its argon2id hash
                           for OWNSONA_LOGIN_PASSWORD
  ownsona version          print the version
  ownsona help             print this help

Settings (flag, environment variable, default):
`)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	c := NewConfig()
	for _, s := range c.settings() {
		name := "--" + s.flag
		if s.flag == "" {
			name = "(env only)"
		}
		def := fmt.Sprint(deref(s.ptr))
		if def == "" || def == "0" || def == "0s" {
			def = "-"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, s.env, def, s.help)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nLogs are JSON lines on standard error; standard output belongs to the stdio transport.")
	return nil
}

func deref(p any) any {
	switch v := p.(type) {
	case *string:
		return *v
	case *int:
		return *v
	case *float64:
		return *v
	case *time.Duration:
		return *v
	case *[]string:
		return strings.Join(*v, ",")
	}
	return ""
}

// Getenv adapts os.Getenv for Run.
func Getenv(key string) string { return strings.TrimSpace(os.Getenv(key)) }

// splitAdminArgs separates the settings (--db, --log-level, …) from the subcommand and its
// own arguments for token, clients and keys.
func splitAdminArgs(args []string) (settings, sub []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (name == "db" || name == "log-level") {
			settings = append(settings, a)
			if !hasVal && i+1 < len(args) {
				i++
				settings = append(settings, args[i])
			}
			continue
		}
		sub = append(sub, a)
	}
	return settings, sub
}

// cutFlag removes a boolean flag from args and reports whether it was there.
func cutFlag(args []string, name string) ([]string, bool) {
	out := args[:0:0]
	found := false
	for _, a := range args {
		if a == name || a == "-"+name[2:] {
			found = true
			continue
		}
		out = append(out, a)
	}
	return out, found
}

// doctorCmd is `ownsona doctor [--public] [--env-file FILE] [--resolver ADDR] [--timeout D]
// [settings]`: it checks the setup serve would run with, from the same settings (and, with
// --env-file, the service's environment file), and fails when a check fails.
func doctorCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	args, public := cutFlag(args, "--public")
	var envFile, resolver, timeout string
	var err error
	for _, f := range []struct {
		name string
		v    *string
	}{{"--env-file", &envFile}, {"--resolver", &resolver}, {"--timeout", &timeout}} {
		if args, *f.v, err = cutValue(args, f.name); err != nil {
			return usageErr("doctor: %v", err)
		}
	}
	opts := doctor.Options{Public: public, FileSizeWarning: func(n int64) string { return warnFileSize(runtime.GOARCH, n) }}
	if timeout != "" {
		if opts.Timeout, err = time.ParseDuration(timeout); err != nil || opts.Timeout <= 0 {
			return usageErr("doctor: --timeout: %q is not a duration such as 5s", timeout)
		}
	}
	if resolver != "" {
		if _, _, err := net.SplitHostPort(resolver); err != nil {
			resolver = net.JoinHostPort(resolver, "53")
		}
		opts.LookupIP = doctor.ResolverAt(resolver)
	}
	if envFile != "" {
		env, err := readEnvFile(envFile)
		if err != nil {
			return usageErr("doctor: --env-file: %v", err)
		}
		procEnv := getenv
		getenv = func(k string) string { // the process's environment wins over the file
			if v := procEnv(k); v != "" {
				return v
			}
			return strings.TrimSpace(env[k])
		}
	}
	cfg, rest, err := loadConfig("doctor", args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return usage(stdout)
	}
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageErr("doctor: unexpected argument %q", rest[0])
	}
	tlsDefaults(&cfg)
	opts.DB, opts.PublicURL, opts.TLS, opts.Domains = cfg.DB, cfg.PublicURL, cfg.TLS, cfg.Domains
	problems, err := doctor.Run(ctx, opts, stdout)
	if err != nil {
		return err
	}
	if problems > 0 {
		return fmt.Errorf("doctor: %d problem(s)", problems)
	}
	return nil
}

// cutValue removes a flag and its value ("--name V", "--name=V", "-name V", "-name=V") from
// args; the last one wins.
func cutValue(args []string, name string) (rest []string, value string, err error) {
	bare := strings.TrimLeft(name, "-")
	for i := 0; i < len(args); i++ {
		n, v, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || n != bare {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("%s needs a value", name)
			}
			i++
			v = args[i]
		}
		value = v
	}
	return rest, value, nil
}
