package ops

// `ownsona install-service --user`: `ownsona serve` as a service of the user's own login, a
// systemd user unit on Linux or a launchd agent on macOS, so that on a laptop the server is
// the easy path: desktop clients' `ownsona stdio` relays to it through the admin socket, and
// backups, exports and a second client work while they are connected. It prints the commands
// that start it, the console's URL and the clients' configuration, every path absolute.

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/adminsock"
)

// Defaults of install-service --user.
const (
	defaultUserAddr  = "127.0.0.1:8080"
	defaultUserUnit  = "ownsona.service"   // in $XDG_CONFIG_HOME/systemd/user
	defaultUserLabel = "io.github.ownsona" // the launchd agent's label and file name
)

// userService is a per-user service: what it runs and where its files go. Every path is
// absolute and clean.
type userService struct {
	OS        string // "linux": a systemd user unit; "darwin": a launchd agent
	Bin       string // the ownsona binary
	DB        string // the database file
	Addr      string // serve's --addr, a loopback host:port
	BackupDir string // serve's --backup-dir; optional
	Path      string // the unit file, or the agent's plist
	Log       string // darwin: where the agent's standard output and error go
	Home      string // the user's home directory, for the printed commands
}

// labelRE is a launchd label (reverse DNS) or a unit's name without ".plist".
var labelRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// plainWordRE is a word systemd reads back unchanged without quotes, and a shell too.
var plainWordRE = regexp.MustCompile(`^[A-Za-z0-9._+@:/,=-]+$`)

// name is the unit's name without ".service", or the agent's label.
func (u userService) name() string {
	if u.OS == "darwin" {
		return strings.TrimSuffix(filepath.Base(u.Path), ".plist")
	}
	return strings.TrimSuffix(filepath.Base(u.Path), ".service")
}

// userPaths are the defaults of a user service on goos for a user whose home is home:
// the database file, the unit or plist, and (darwin) the log file.
func userPaths(env *Env, goos, home string) (db, unit, log string) {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "ownsona", "ownsona.db"),
			filepath.Join(home, "Library", "LaunchAgents", defaultUserLabel+".plist"),
			filepath.Join(home, "Library", "Logs", "ownsona.log")
	}
	return filepath.Join(xdgDir(env, "XDG_DATA_HOME", home, ".local/share"), "ownsona", "ownsona.db"),
		filepath.Join(xdgDir(env, "XDG_CONFIG_HOME", home, ".config"), "systemd", "user", defaultUserUnit), ""
}

// xdgDir is the XDG base directory in variable key, or home/def when it is unset or not
// absolute (the XDG Base Directory Specification ignores relative values).
func xdgDir(env *Env, key, home, def string) string {
	if v := env.Getenv(key); filepath.IsAbs(v) {
		return filepath.Clean(v)
	}
	return filepath.Join(home, def)
}

// executable is the running binary, symbolic links resolved.
func executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// validate checks the inputs, naming the flag of a bad one.
func (u userService) validate() error {
	paths := []struct{ flag, path string }{{"--bin", u.Bin}, {"--db", u.DB}, {"--backup-dir", u.BackupDir}, {"--unit", u.Path}}
	for _, p := range paths {
		switch {
		case p.path == "" && p.flag == "--backup-dir":
		case !filepath.IsAbs(p.path):
			return Usagef("install-service: %s: %q is not an absolute path", p.flag, p.path)
		case !utf8.ValidString(p.path) || strings.ContainsFunc(p.path, unicode.IsControl):
			return Usagef("install-service: %s: %q has a control character or is not UTF-8, which a service file cannot carry", p.flag, p.path)
		}
	}
	switch u.OS {
	case "linux":
		// systemd refuses an executable whose path has a quote or a backslash ("Executable
		// name contains special characters"), and would run a "$$" it was given as two.
		if strings.ContainsAny(u.Bin, `"'\$`) {
			return Usagef("install-service: --bin: systemd cannot run %q (a quote, backslash or $ in the path); install the binary elsewhere, e.g. %s, and give --bin",
				u.Bin, filepath.Join(u.Home, ".local", "bin", "ownsona"))
		}
		if !strings.HasSuffix(u.Path, ".service") || !unitNameRE.MatchString(u.name()) {
			return Usagef("install-service: --unit: %q must be a path ending in NAME.service (NAME of letters, digits and _ . : -)", u.Path)
		}
	case "darwin":
		if !strings.HasSuffix(u.Path, ".plist") || !labelRE.MatchString(u.name()) {
			return Usagef("install-service: --unit: %q must be a path ending in LABEL.plist (LABEL of letters, digits and _ . -, e.g. %s)", u.Path, defaultUserLabel)
		}
	}
	// The clients reach the service through the admin socket beside the file: its path must
	// fit in a Unix socket's address (sun_path: 104 bytes on macOS, 108 on Linux, with a NUL).
	max := 107
	if u.OS == "darwin" {
		max = 103
	}
	if n := len(adminsock.Path(u.DB)); n > max {
		return Usagef("install-service: --db: its admin socket %s would have a %d-byte path, more than the %d a Unix socket may have on %s, and clients could not reach the service; choose a shorter path",
			adminsock.Path(u.DB), n, max, u.OS)
	}
	host, port, err := net.SplitHostPort(u.Addr)
	if err != nil {
		return Usagef("install-service: --addr: %q is not HOST:PORT", u.Addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return Usagef("install-service: --addr: %q needs a port from 1 to 65535", u.Addr)
	}
	if ip := net.ParseIP(host); !strings.EqualFold(host, "localhost") && (ip == nil || !ip.IsLoopback()) {
		return Usagef("install-service: --addr: %q is not a loopback address; a per-user service serves this computer (e.g. %s); to serve others, install the system service", u.Addr, defaultUserAddr)
	}
	return nil
}

// consoleURL is the console's address in a browser.
func (u userService) consoleURL() string {
	host, port, _ := net.SplitHostPort(u.Addr)
	return "http://" + net.JoinHostPort(host, port) + "/console"
}

// serveArgs are the arguments the service runs the binary with.
func (u userService) serveArgs() []string {
	args := []string{u.Bin, "serve", "--db", u.DB, "--addr", u.Addr}
	if u.BackupDir != "" {
		args = append(args, "--backup-dir", u.BackupDir)
	}
	return args
}

// render writes the unit (linux) or the agent's plist (darwin).
func (u userService) render() string {
	if u.OS == "darwin" {
		return u.renderLaunchd()
	}
	return u.renderSystemd()
}

// renderSystemd writes a systemd user unit. A user's manager cannot set up the file-system
// sandbox of the system unit (ProtectSystem=, ProtectHome=, PrivateTmp=... need mount
// namespaces, which it has only inside a user namespace, and many systems forbid those to
// unprivileged users: the service would not start); it keeps what works without privileges:
// no_new_privs and seccomp filters (systemd.exec(5)).
func (u userService) renderSystemd() string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\n") }
	w("# Written by `ownsona install-service --user`: ownsona serve for this user, from login")
	w("# (from boot with `loginctl enable-linger`), restarted if it fails.")
	w("[Unit]")
	w("Description=ownsona, a personal memory server for AI assistants")
	w("Documentation=https://github.com/ownsona/ownsona")
	w("")
	w("[Service]")
	w("Type=exec")
	words := make([]string, 0, 8)
	for i, a := range u.serveArgs() {
		if i == 0 {
			words = append(words, systemdExecutable(a))
		} else {
			words = append(words, systemdWord(a))
		}
	}
	w("ExecStart=" + strings.Join(words, " "))
	w("Restart=on-failure")
	w("RestartSec=5")
	w("TimeoutStopSec=30")
	w("UMask=0077")
	w("")
	w("# What a user's service may restrict without privileges: no new privileges, and")
	w("# system calls, address families and namespaces filtered by seccomp.")
	w("NoNewPrivileges=true")
	b.WriteString(syscallHardening)
	w("")
	w("[Install]")
	w("WantedBy=default.target")
	return b.String()
}

// systemdExecutable writes the executable of ExecStart=: quoted when it has a space, "%"
// doubled (a specifier); validate refused what systemd cannot run (quotes, backslashes, $).
func systemdExecutable(s string) string {
	if plainWordRE.MatchString(s) {
		return s
	}
	return `"` + strings.ReplaceAll(s, "%", "%%") + `"`
}

// systemdWord writes an argument of ExecStart= so that systemd passes s unchanged
// (systemd.syntax(7), "Quoting"; systemd.service(5), "Command lines"): as is when plain, else
// double-quoted with \ and " escaped; "%" (a specifier) and "$" (a variable) doubled.
func systemdWord(s string) string {
	if plainWordRE.MatchString(s) {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "%", "%%", "$", "$$")
	return `"` + r.Replace(s) + `"`
}

// renderLaunchd writes a launchd agent (launchd.plist(5)): started at login and when
// bootstrapped, restarted when it exits with a failure, its output appended to u.Log.
func (u userService) renderLaunchd() string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\n") }
	str := func(indent, s string) {
		b.WriteString(indent + "<string>")
		xml.EscapeText(&b, []byte(s)) // validate refused what XML cannot carry
		b.WriteString("</string>\n")
	}
	w(`<?xml version="1.0" encoding="UTF-8"?>`)
	w(`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`)
	w("<!-- Written by ownsona install-service: ownsona serve for this user, from login,")
	w("     restarted if it fails. -->")
	w(`<plist version="1.0">`)
	w("<dict>")
	w("\t<key>Label</key>")
	str("\t", u.name())
	w("\t<key>ProgramArguments</key>")
	w("\t<array>")
	for _, a := range u.serveArgs() {
		str("\t\t", a)
	}
	w("\t</array>")
	w("\t<key>RunAtLoad</key>")
	w("\t<true/>")
	w("\t<key>KeepAlive</key>")
	w("\t<dict>")
	w("\t\t<key>SuccessfulExit</key>")
	w("\t\t<false/>")
	w("\t</dict>")
	w("\t<key>Umask</key>")
	w("\t<integer>63</integer>") // 0077: a plist has no octal
	w("\t<key>StandardOutPath</key>")
	str("\t", u.Log)
	w("\t<key>StandardErrorPath</key>")
	str("\t", u.Log)
	w("</dict>")
	w("</plist>")
	return b.String()
}

// shq quotes s for a POSIX shell when it needs it.
func shq(s string) string {
	if plainWordRE.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// install writes the unit or plist (mode 0644) and makes the directories the service needs
// (mode 0700) and, for launchd, its log file (mode 0600: the first start writes the owner's
// generated password there), saying what it did on w.
func (u userService) install(w io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(u.Path), 0o700); err != nil {
		return fmt.Errorf("install-service: %w", err)
	}
	changed, err := writeFileAtomic(u.Path, []byte(u.render()), 0o644)
	if err != nil {
		return fmt.Errorf("install-service: write %s: %w", u.Path, err)
	}
	if changed {
		fmt.Fprintf(w, "wrote %s\n", u.Path)
	} else {
		fmt.Fprintf(w, "%s is up to date\n", u.Path)
	}
	dirs := []string{filepath.Dir(u.DB), u.BackupDir}
	if u.Log != "" {
		dirs = append(dirs, filepath.Dir(u.Log))
	}
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		if _, err := os.Stat(dir); err == nil {
			continue
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("install-service: %w", err)
		}
		fmt.Fprintf(w, "made %s (mode 0700)\n", dir)
	}
	if u.Log != "" {
		f, err := os.OpenFile(u.Log, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		switch {
		case err == nil:
			f.Close()
			fmt.Fprintf(w, "made %s (mode 0600)\n", u.Log)
		case !errors.Is(err, os.ErrExist):
			return fmt.Errorf("install-service: %w", err)
		}
	}
	return nil
}

// jsonString is s as a JSON string, "<", ">" and "&" as they are.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// writeUserSteps prints what is left to do, as commands to paste: start the service, open
// the console, connect the desktop clients, back up.
func writeUserSteps(w io.Writer, u userService) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	name, bin, db := u.name(), shq(u.Bin), shq(u.DB)
	if exe, err := executable(); err == nil && !sameFile(exe, u.Bin) {
		p("# the binary, where the service runs it from:")
		p("mkdir -p %s && install -m 0755 %s %s", shq(filepath.Dir(u.Bin)), shq(exe), bin)
	}
	if _, err := os.Stat(u.DB); errors.Is(err, os.ErrNotExist) {
		p("# No database at %s yet: the first start makes it.", db)
		p("# To keep yours, stop what uses it and move it there, or run this again with --db FILE.")
		p("")
	}
	if u.OS == "darwin" {
		target := "gui/$(id -u)/" + name
		p("# Start it now and at every login, and follow its log:")
		p("launchctl bootstrap gui/$(id -u) %s", shq(u.Path))
		p("tail -f %s", shq(u.Log))
		p("# After a change: launchctl bootout %s, then the bootstrap line again;", target)
		p("# to restart it (a new binary): launchctl kickstart -k %s", target)
	} else {
		p("# Start it now and at every login, and follow its log:")
		p("systemctl --user daemon-reload && systemctl --user enable --now %s", name)
		p("journalctl --user -u %s -f", name)
		p("# After a change: systemctl --user daemon-reload && systemctl --user restart %s", name)
		p("# Optional: keep it running after you log out, and start it at boot, before you log in:")
		p("loginctl enable-linger")
	}
	p("")
	p("# The console, in a browser. The owner's password: a new file's first start writes a")
	p("# generated one to the log above, once; to choose another:")
	p("#   %s password set --db %s", bin, db)
	p("%s", u.consoleURL())
	p("")
	p("# Desktop clients start `ownsona stdio`, which reaches the service through its admin")
	p("# socket: quit them before the first start, then give them this. Backups, export and a")
	p("# second client work while they are connected.")
	desktop := "claude_desktop_config.json"
	if u.OS == "darwin" {
		desktop = filepath.Join(u.Home, "Library", "Application Support", "Claude", desktop)
	}
	p("# Claude Desktop (%s)", desktop)
	p("# and Cursor (%s), in \"mcpServers\":", filepath.Join(u.Home, ".cursor", "mcp.json"))
	p("{")
	p("  \"mcpServers\": {")
	p("    \"ownsona\": {")
	p("      \"command\": %s,", jsonString(u.Bin))
	p("      \"args\": [\"stdio\", \"--db\", %s]", jsonString(u.DB))
	p("    }")
	p("  }")
	p("}")
	p("")
	p("# Claude Code (--scope user: in every project):")
	p("claude mcp add --scope user ownsona -- %s stdio --db %s", bin, db)
	p("")
	p("# A backup, at any time:")
	p("%s backup --db %s --to %s", bin, db, shq(filepath.Join(u.Home, "ownsona-backup.db")))
	_, err := io.WriteString(w, b.String())
	return err
}
