package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/doctor"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/app/tools"
	"github.com/ownsona/ownsona/kv"
)

// command is one entry of the command table that Run, `ownsona help` and (through ops's own
// entries) the admin socket read: the name, the lines help prints, and what runs.
type command struct {
	name  string
	form  string // after "ownsona ": how it is typed
	about string // what it does; help wraps it
	run   func(ctx context.Context, env *ops.Env, args []string) error
}

// commands is the command table: serving first, then the operator's commands of app/ops, then
// the checks and the help.
func commands() []command {
	cmds := []command{
		{"serve", "serve [flags]", "serve MCP at http://ADDR/mcp, and the owner's console at /console; with --tls " +
			"acme|local|files over HTTPS (e.g. OWNSONA_DOMAIN=mem.example.com ownsona serve --tls acme)", runServe},
		{"stdio", "stdio [flags]", "serve MCP on standard input/output (for Claude Desktop, Claude Code, Cursor); " +
			"through a running server's admin socket when one holds the file", runStdio},
	}
	for _, c := range ops.Commands() {
		cmds = append(cmds, command{c.Name, c.Form, c.About, c.Run})
	}
	return append(cmds,
		command{"doctor", "doctor [--public] [--client NAME] [flags]", "check the file's permissions and the public URL, " +
			"issuer and resource; --public also DNS, port 443, the certificate, the OAuth discovery documents and the 401 " +
			"that hosted assistants need; --client claude|chatgpt|claude-code|cursor also what that client is known to " +
			"need (--env-file, --resolver, --timeout: see --help)", runDoctor},
		command{"version", "version", "print the version, the commit, the build date, the Go version and the platform",
			func(_ context.Context, env *ops.Env, args []string) error {
				if len(args) > 0 && !isHelp(args[0]) {
					return usageErr("version: takes no arguments")
				}
				return printVersion(env.Stdout, readBuildInfo())
			}},
		command{"health", "health [--url URL] [--timeout D]", "ask the local server's /health (at OWNSONA_ADDR, as serve " +
			"listens) and exit 0 when it answers healthy, 1 otherwise: a container's HEALTHCHECK", runHealth},
		command{"help", "help", "print this help", func(_ context.Context, env *ops.Env, _ []string) error { return usage(env.Stdout) }},
	)
}

func isHelp(arg string) bool { return arg == "-h" || arg == "-help" || arg == "--help" }

// Run is ownsona's command line: main calls it with the process's arguments (without the
// program name), environment and standard streams.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	name := "help"
	if len(args) > 0 {
		name, args = args[0], args[1:]
	}
	switch name {
	case "-h", "-help", "--help":
		name = "help"
	case "--version":
		name = "version"
	}
	env := &ops.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv,
		OpenMemories: func(db *kv.DB) (*memory.Store, error) { return openMemories(db, getenv, stderr) }}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, env, args)
		}
	}
	return usageErr("unknown command %q (see 'ownsona help')", name)
}

// openMemories opens the memory store over db with the embedder and limits of the environment,
// for commands that write memories without a server (import).
func openMemories(db *kv.DB, getenv func(string) string, stderr io.Writer) (*memory.Store, error) {
	cfg, _, err := loadConfig("import", nil, getenv, nil)
	if err != nil {
		return nil, err
	}
	emb, err := newEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	return memory.Open(db, memory.Config{Embedder: emb, Log: newLogger(stderr, cfg.LogLevel, cfg.LogFormat),
		MaxTextChars: cfg.MaxTextChars, DedupThreshold: cfg.DedupThreshold, Location: cfg.loc(),
		MaxMemories: cfg.MaxMemories, MaxFileBytes: fileCap(cfg.MaxFileMB)})
}

// configFor parses a serving command's settings; done is true when --help was asked for (and
// printed).
func configFor(name string, env *ops.Env, args []string, extra func(*flag.FlagSet)) (cfg Config, done bool, err error) {
	cfg, rest, err := loadConfig(name, args, env.Getenv, extra)
	if errors.Is(err, flag.ErrHelp) {
		return cfg, true, commandUsage(env.Stdout, name, extra)
	}
	if err != nil {
		return cfg, false, err
	}
	if len(rest) > 0 {
		return cfg, false, usageErr("%s: unexpected argument %q", name, rest[0])
	}
	cfg.Version = versionString()
	return cfg, false, nil
}

func runServe(ctx context.Context, env *ops.Env, args []string) error {
	cfg, done, err := configFor("serve", env, args, nil)
	if done || err != nil {
		return err
	}
	return serve(ctx, cfg, env.Stderr)
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
	go releaseWhenIdle(ctx, idlePeriod, idleQuiet, idleLeast, heapAllocated, debug.FreeOSMemory)
	if err := a.Listen(); err != nil {
		return err
	}
	if err := a.openAdminSocket(ctx); err != nil {
		return err
	}
	a.scheduleBackups(ctx)
	ep := a.Auth().Endpoints()
	scheme := "http"
	if cfg.TLS != "off" {
		scheme = "https"
	}
	a.log.Info().Str("url", ep.Resource).Str("listen", a.Addr()).Str("scheme", scheme).Str("issuer", ep.Issuer).
		Str("tls", a.web.TLSInfo()).Msg("serving MCP")
	if msg := doctor.ProxyWarning(cfg.PublicURL, cfg.TLS, cfg.TrustedProxies); msg != "" {
		a.log.Warn().Msg(msg)
	}
	steps := nextSteps{Resource: ep.Resource, Console: ep.Issuer + "/console", Bin: executable(), DB: absPath(cfg.DB)}
	fmt.Fprintf(stderr, "ownsona: serving %s for assistants and %s for you (file %s)\n", steps.Resource, steps.Console, steps.DB)
	if a.Auth().GeneratedPassword() != "" {
		steps.write(stderr)
	}
	a.warnSize(runtime.GOARCH) // bbolt's memory map on 32-bit systems: at start, then daily
	every(ctx, 24*time.Hour, func() { a.warnSize(runtime.GOARCH) })
	a.log.Info().Msg("shutting down")
	return a.Close()
}

// nextSteps are what the person starting a new server does next (a first start is one that
// had to generate the owner's password), with the paths that work when pasted anywhere: the
// binary's and the file's absolute paths, since a desktop client resolves a relative one
// against its own working directory.
type nextSteps struct {
	Resource, Console string // the MCP endpoint and the console's URL
	Bin, DB           string // absolute paths of the binary and of the file
}

func (n nextSteps) write(w io.Writer) {
	type server struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	desktop, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]server{
		"ownsona": {Command: n.Bin, Args: []string{"stdio", "--db", n.DB}}}}, "  ", "  ")
	fmt.Fprintf(w, "Next steps:\n"+
		"  the console:          %s   (your memories, connections, approvals, settings)\n"+
		"  Claude Code:          claude mcp add --transport http ownsona %s\n"+
		"  a token for scripts:  %s token create --name my-script --db %s\n"+
		"  Claude Desktop, Cursor (their JSON config; reaches this server while it runs):\n  %s\n"+
		"Lost the password? %s password set --db %s\n\n",
		n.Console, n.Resource, shellQuote(n.Bin), shellQuote(n.DB), desktop, shellQuote(n.Bin), shellQuote(n.DB))
}

// executable is the absolute path of the running binary, symlinks resolved; "ownsona" when the
// system cannot say.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return "ownsona"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe
}

// absPath is path made absolute against the working directory, or path when that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain path characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// openAdminSocket lets the operator's commands reach this server's open file (see ops).
func (a *App) openAdminSocket(ctx context.Context) error {
	live := &ops.Live{DBPath: a.cfg.DB, DB: a.db, Memories: a.mem}
	if auth := a.Auth(); auth != nil {
		live.Keys, live.Grants = auth.Keys(), auth.Grants()
		live.SetOwnerPassword = auth.ReplaceOwnerPassword // password set: in force at once
	}
	live.OnImport = a.cliImports.add // the console lists command-line imports too
	closeFn, err := adminsock.Listen(ctx, live.DBPath, adminsock.Config{Commands: ops.SocketCommands(live), Stdio: a.mcp.ServeStdio, Log: a.log})
	switch {
	case errors.Is(err, adminsock.ErrForeign):
		// Another user holds the path: they could pose as this server to its commands.
		return err
	case err != nil:
		a.log.Warn().Err(err).Msg("admin socket disabled; commands need the server stopped")
		return nil
	}
	a.closeSocket = closeFn
	return nil
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

func runStdio(ctx context.Context, env *ops.Env, args []string) error {
	cfg, done, err := configFor("stdio", env, args, nil)
	if done || err != nil {
		return err
	}
	if handled, err := adminsock.Forward(ctx, cfg.DB, &adminsock.Call{Args: []string{"stdio"}, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr}); handled {
		return err
	}
	return stdio(ctx, cfg, env.Stdin, env.Stdout, env.Stderr)
}

func stdio(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg.PublicURL = ""    // the stdio transport has no authorization: its client started the process
	cfg.standalone = true // and no console: only the client can approve what needs approval
	a, err := Open(cfg, stderr)
	if err != nil {
		return err
	}
	defer a.Close()
	go releaseWhenIdle(ctx, idlePeriod, idleQuiet, idleLeast, heapAllocated, debug.FreeOSMemory)
	a.log.Info().Msg("serving MCP on stdio")
	if err := a.mcp.ServeStdio(ctx, stdin, stdout); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("stdio: %w", err)
	}
	return a.Close()
}

// usage prints every command once, from the command table, and every setting, within
// ops.HelpWidth columns.
func usage(w io.Writer) error {
	fmt.Fprint(w, "ownsona: a personal memory server for AI assistants, in one file.\n\nUsage:\n")
	for _, c := range commands() {
		fmt.Fprint(w, "  ownsona "+c.form+"\n"+ops.Wrap(c.about, 6, ops.HelpWidth))
	}
	fmt.Fprint(w, "\n'ownsona COMMAND --help' shows a command's own flags.\n\nSettings (flag, environment variable, default):\n")
	printSettings(w, "")
	fmt.Fprintln(w, "\nLogs go to standard error, as text on a terminal and JSON lines otherwise (--log-format);\nstandard output belongs to the stdio transport.")
	return nil
}

// commandUsage is a serving command's --help: its line of the table, its own flags (extra), and
// the settings it takes.
func commandUsage(w io.Writer, name string, extra func(*flag.FlagSet)) error {
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintf(w, "%s\n%s", ops.Hang("Usage: ownsona "+c.form, 4, ops.HelpWidth), ops.Wrap(c.about, 0, ops.HelpWidth))
		}
	}
	if extra != nil {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		extra(fs)
		fmt.Fprint(w, "\nFlags:\n")
		ops.PrintFlags(w, fs)
	}
	fmt.Fprint(w, "\nSettings (flag, environment variable, default):\n")
	printSettings(w, name)
	return nil
}

// printSettings prints the settings table, a setting to a block: its flag, its variable and its
// default on one line, what it does below; for a command other than "" only what it takes.
func printSettings(w io.Writer, cmd string) {
	c := NewConfig()
	for _, s := range c.settings() {
		if cmd != "" && s.serveOnly && cmd != "serve" && cmd != "doctor" {
			continue
		}
		line := "  --" + s.flag + ", " + s.env
		if s.flag == "" {
			line = "  " + s.env + " (environment only)"
		}
		if def := fmt.Sprint(deref(s.ptr)); def != "" && def != "0" && def != "0s" && def != "false" {
			line += " (default " + def + ")"
		}
		fmt.Fprint(w, line+"\n"+ops.Wrap(s.help, 6, ops.HelpWidth))
	}
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

// runDoctor is `ownsona doctor`: it checks the setup serve would run with, from the same
// settings (and, with --env-file, the service's environment file), and fails when a check
// fails.
func runDoctor(ctx context.Context, env *ops.Env, args []string) error {
	var public bool
	var envFile, resolver, client string
	var timeout time.Duration
	extra := func(fs *flag.FlagSet) {
		fs.BoolVar(&public, "public", false, "also check DNS, port 443, the certificate and the discovery documents from outside")
		fs.StringVar(&client, "client", "", "also check what this client is known to need: "+strings.Join(doctor.Clients, ", ")+" (claude and chatgpt imply --public)")
		fs.StringVar(&envFile, "env-file", "", "the service's environment file (KEY=VALUE lines), read as systemd does")
		fs.StringVar(&resolver, "resolver", "", "DNS server for --public, e.g. 1.1.1.1:53 (default the system's)")
		fs.DurationVar(&timeout, "timeout", 0, "bound of each network check (default 5s)")
	}
	// --env-file changes the environment the settings are read from, so it is read first.
	_, file, err := cutValue(args, "--env-file")
	if err != nil {
		return usageErr("doctor: %v", err)
	}
	getenv := env.Getenv
	if file != "" {
		vars, err := doctor.ReadEnvFile(file)
		if err != nil {
			return usageErr("doctor: --env-file: %v", err)
		}
		procEnv := getenv
		getenv = func(k string) string { // the process's environment wins over the file
			if v := procEnv(k); v != "" {
				return v
			}
			return strings.TrimSpace(vars[k])
		}
	}
	denv := *env
	denv.Getenv = getenv
	cfg, done, err := configFor("doctor", &denv, args, extra)
	if done || err != nil {
		return err
	}
	if timeout < 0 {
		return usageErr("doctor: --timeout: %s is negative", timeout)
	}
	opts := doctor.Options{Public: public, Timeout: timeout,
		FileSizeWarning: func(n int64) string { return ops.WarnFileSize(runtime.GOARCH, n) }}
	if resolver != "" {
		if _, _, err := net.SplitHostPort(resolver); err != nil {
			resolver = net.JoinHostPort(resolver, "53")
		}
		opts.LookupIP = doctor.ResolverAt(resolver)
	}
	tlsDefaults(&cfg)
	opts.DB, opts.PublicURL, opts.TLS, opts.Domains = cfg.DB, cfg.PublicURL, cfg.TLS, cfg.Domains
	opts.TrustedProxies = cfg.TrustedProxies
	if client != "" {
		if !slices.Contains(doctor.Clients, client) {
			return usageErr("doctor: --client %q is not one of %s", client, strings.Join(doctor.Clients, ", "))
		}
		if opts.Tools, err = doctorTools(cfg); err != nil {
			return fmt.Errorf("doctor: %w", err)
		}
		opts.KnownClient = client
		opts.RedirectSchemes, opts.RedirectHosts, opts.MetadataHosts = cfg.RedirectSchemes, cfg.RedirectHosts, cfg.MetadataHosts
	}
	problems, err := doctor.Run(ctx, opts, env.Stdout)
	if err != nil {
		return err
	}
	switch problems {
	case 0:
		return nil
	case 1:
		return errors.New("doctor: 1 problem")
	}
	return fmt.Errorf("doctor: %d problems", problems)
}

// doctorTools lists ownsona's tools as clients see them in tools/list, with the configuration's
// OWNSONA_TOOLS applied (an allowlist the console saved in the file is not read: serve may hold
// it). They come from the tool catalogue itself, built over an empty store in a temporary file,
// so that doctor needs no running server and never opens the real file for them.
func doctorTools(cfg Config) ([]doctor.Tool, error) {
	dir, err := os.MkdirTemp("", "ownsona-doctor-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := kv.Open(filepath.Join(dir, "tools.db"), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	mem, err := memory.Open(db, memory.Config{MaxTextChars: cfg.MaxTextChars, DedupThreshold: cfg.DedupThreshold})
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	ts, err := tools.New(tools.Config{Memories: mem, Version: cfg.Version, Compat: toolsCompat(cfg.Compat)})
	if err != nil {
		return nil, err
	}
	var out []doctor.Tool
	for _, t := range ts.Listed() {
		if len(cfg.Tools) > 0 && !slices.Contains(cfg.Tools, t.Name) {
			continue
		}
		dt := doctor.Tool{Name: t.Name}
		if a := t.Annotations; a != nil {
			dt.Annotations, dt.Title = true, a.Title
			dt.ReadOnly, dt.Destructive, dt.Idempotent, dt.OpenWorld = a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint, a.OpenWorldHint
		}
		out = append(out, dt)
	}
	return out, nil
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

// warnSize logs ops.WarnFileSize's advice about the database file's size on goarch, if any:
// serve calls it at start and then daily, so a 32-bit system hears of the limit as the file
// grows toward it.
func (a *App) warnSize(goarch string) {
	fi, err := os.Stat(a.cfg.DB)
	if err != nil {
		return
	}
	if msg := ops.WarnFileSize(goarch, fi.Size()); msg != "" {
		a.log.Warn().Int64("bytes", fi.Size()).Str("goarch", goarch).Msg(msg)
	}
}
