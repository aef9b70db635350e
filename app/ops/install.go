package ops

// `ownsona install-service`: a hardened systemd unit for a dedicated system account, and the
// commands that finish the install (with --user, a per-user service instead: install_user.go);
// the size warning of bbolt's memory map on 32-bit systems (serve and doctor give it); and the
// reader of the unit's environment file, so that `ownsona doctor --env-file` sees the settings
// the service sees.

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Defaults of install-service.
const (
	defaultServiceAccount = "ownsona"
	defaultServiceDB      = "/var/lib/ownsona/ownsona.db"
	defaultServiceUnit    = "/etc/systemd/system/ownsona.service"
	defaultServiceBin     = "/usr/local/bin/ownsona"
	defaultServiceEnv     = "/etc/ownsona/ownsona.env"
)

// serviceUnit is what the systemd unit is made of. Every path is absolute and written into the
// unit as is, so validate refuses what systemd would read differently (spaces, quotes, "%"
// specifiers, "$" variables, backslashes, control characters).
type serviceUnit struct {
	User    string // the dedicated system account serve runs as (--account)
	Bin     string // the ownsona binary
	DB      string // the database file; its directory is the only path the service may write
	EnvFile string // the OWNSONA_* settings, read by systemd (as root) if it exists
	// BackupDir, if set, is serve's --backup-dir: writable too, and optional (a USB disk that
	// is not mounted does not stop the service, only its backups).
	BackupDir string
}

// userRE is a portable login name (useradd's default NAME_REGEX, without the trailing "$").
var userRE = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,31}$`)

// unitNameRE is a unit's name without ".service" (no "@": not a template).
var unitNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)

// safePathRE are the paths written into the unit unquoted: systemd reads them back unchanged.
var safePathRE = regexp.MustCompile(`^/[A-Za-z0-9._+@:/-]*$`)

// hiddenDirs are hidden from or private to the service by ProtectHome=true and PrivateTmp=true.
var hiddenDirs = []string{"/home", "/root", "/run/user", "/tmp", "/var/tmp"}

// validate checks the inputs, naming the flag of a bad one.
func (u serviceUnit) validate() error {
	switch {
	case !userRE.MatchString(u.User):
		return Usagef("install-service: --account: %q is not a login name (lowercase letters, digits, _ and -, at most 32)", u.User)
	case u.User == "root":
		return Usagef("install-service: --account: the service must not run as root; it gets only CAP_NET_BIND_SERVICE, for ports 443 and 80")
	}
	for _, p := range []struct{ flag, path string }{{"--bin", u.Bin}, {"--db", u.DB}, {"--env-file", u.EnvFile}, {"--backup-dir", u.BackupDir}} {
		switch {
		case p.path == "" && p.flag == "--backup-dir":
			continue
		case p.path == "":
			return Usagef("install-service: %s: empty", p.flag)
		case !safePathRE.MatchString(p.path):
			return Usagef("install-service: %s: %q must be an absolute path of letters, digits and . _ + @ : - / only (no spaces, quotes, %%, $ or backslashes, which systemd would read differently)", p.flag, p.path)
		case filepath.Clean(p.path) != p.path:
			return Usagef("install-service: %s: %q is not a clean path (write %s)", p.flag, p.path, filepath.Clean(p.path))
		}
	}
	dir := filepath.Dir(u.DB)
	for _, h := range hiddenDirs {
		for _, p := range []struct{ flag, path string }{{"--bin", u.Bin}, {"--db", dir}, {"--backup-dir", u.BackupDir}} {
			if p.path == h || strings.HasPrefix(p.path, h+"/") {
				return Usagef("install-service: %s: %s is under %s, which the service cannot see (ProtectHome, PrivateTmp); use e.g. %s", p.flag, p.path, h,
					map[string]string{"--bin": defaultServiceBin, "--db": defaultServiceDB, "--backup-dir": "/mnt/usb/ownsona"}[p.flag])
			}
		}
	}
	for _, p := range []struct{ flag, dir string }{{"--db", dir}, {"--backup-dir", u.BackupDir}} {
		switch p.dir {
		case "/", "/etc", "/usr", "/var", "/var/lib", "/mnt", "/media", "/srv", "/opt":
			return Usagef("install-service: %s: give ownsona a directory of its own (e.g. %s): the service may write everything in %s",
				p.flag, map[string]string{"--db": filepath.Dir(defaultServiceDB), "--backup-dir": "/mnt/usb/ownsona"}[p.flag], p.dir)
		}
	}
	return nil
}

// syscallHardening are the unit lines that restrict what the service may ask of the kernel:
// seccomp-based, so they work in a system unit and in a user unit alike (install_user.go).
const syscallHardening = `RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=true
RestrictRealtime=true
RestrictSUIDSGID=true
LockPersonality=true
MemoryDenyWriteExecute=true
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM
`

// render writes the unit. The service may write only the database's directory (the file, the
// temporary files of backup and compact, and the admin socket live there) and the backup
// directory if any, and binds 443 and 80 with CAP_NET_BIND_SERVICE as its only capability.
func (u serviceUnit) render() string {
	var b strings.Builder
	w := func(s string) { b.WriteString(s + "\n") }
	w("# Written by `ownsona install-service`. Settings (OWNSONA_TLS, OWNSONA_DOMAIN,")
	w("# OWNSONA_LOGIN_PASSWORD, ...) go in " + u.EnvFile + ", mode 0600.")
	w("[Unit]")
	w("Description=ownsona, a personal memory server for AI assistants")
	w("Documentation=https://github.com/ownsona/ownsona")
	w("Wants=network-online.target")
	w("After=network-online.target")
	w("")
	w("[Service]")
	w("Type=exec")
	w("User=" + u.User)
	w("Group=" + u.User)
	w("EnvironmentFile=-" + u.EnvFile)
	start, rw := u.Bin+" serve --db "+u.DB, filepath.Dir(u.DB)
	if u.BackupDir != "" {
		start += " --backup-dir " + u.BackupDir
		rw += " -" + u.BackupDir // "-": a missing directory does not stop the service
	}
	w("ExecStart=" + start)
	w("Restart=on-failure")
	w("RestartSec=5")
	w("TimeoutStopSec=30")
	w("UMask=0077")
	w("LimitNOFILE=65536")
	w("")
	w("# Ports 443 and 80 without root, and no other privilege.")
	w("AmbientCapabilities=CAP_NET_BIND_SERVICE")
	w("CapabilityBoundingSet=CAP_NET_BIND_SERVICE")
	w("NoNewPrivileges=true")
	w("")
	w("# The file system is read-only but for the database's directory.")
	w("ProtectSystem=strict")
	w("ReadWritePaths=" + rw)
	w("ProtectHome=true")
	w("PrivateTmp=true")
	w("PrivateDevices=true")
	w("PrivateMounts=true")
	w("ProtectProc=invisible")
	w("ProcSubset=pid")
	w("RemoveIPC=true")
	w("")
	w("ProtectKernelTunables=true")
	w("ProtectKernelModules=true")
	w("ProtectKernelLogs=true")
	w("ProtectControlGroups=true")
	w("ProtectClock=true")
	w("ProtectHostname=true")
	b.WriteString(syscallHardening)
	w("")
	w("[Install]")
	w("WantedBy=multi-user.target")
	return b.String()
}

// installServiceCmd is `ownsona install-service`: it writes the systemd unit (mode 0644; with
// --dry-run it prints it instead) and prints the commands that create the account and the data
// directory and start the service; with --user, a per-user service (install_user.go).
func installServiceCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("install-service",
		"install-service --user [--dry-run] [--os linux|darwin] [--db PATH] [--addr ADDR]\n"+
			"ownsona install-service [--dry-run] [--account NAME] [--db PATH] [--env-file PATH]",
		"With --user: 'ownsona serve' as a service of your own login, a systemd user unit (Linux) or\n"+
			"a launchd agent (macOS), so that desktop clients, backups and exports work at once; it\n"+
			"prints the commands that start it, the console's URL and the clients' configuration.\n"+
			"Without: a hardened systemd unit that runs 'ownsona serve' as a dedicated system account,\n"+
			"and the commands that finish the install (the account, the data directory, the settings).")
	dryRun := fs.Bool("dry-run", false, "print the unit and the commands; write nothing")
	user := fs.Bool("user", false, "a per-user service for this login (no root needed)")
	goos := fs.String("os", "", "with --user: the `OS` to write for, linux (systemd) or darwin (launchd) (default this system's)")
	addr := fs.String("addr", defaultUserAddr, "with --user: the loopback `HOST:PORT` serve listens on")
	u := serviceUnit{}
	fs.StringVar(&u.User, "account", defaultServiceAccount, "not with --user: `NAME` of the system account the service runs as")
	fs.StringVar(&u.DB, "db", defaultServiceDB, "`PATH` of the database file (with --user: $XDG_DATA_HOME/ownsona/ownsona.db, "+
		"or ~/Library/Application Support/ownsona/ownsona.db)")
	fs.StringVar(&u.Bin, "bin", defaultServiceBin, "`PATH` of the binary the service runs (with --user: this one)")
	fs.StringVar(&u.EnvFile, "env-file", defaultServiceEnv, "not with --user: `PATH` of the service's OWNSONA_* settings")
	fs.StringVar(&u.BackupDir, "backup-dir", "", "serve's --backup-dir `DIR`, also writable by the service (optional)")
	unit := fs.String("unit", defaultServiceUnit, "`PATH` of the file to write (with --user: $XDG_CONFIG_HOME/systemd/user/ownsona.service, "+
		"or ~/Library/LaunchAgents/"+defaultUserLabel+".plist)")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if len(operands) > 0 && *user {
		// `--user NAME` named the system service's account before --user meant this.
		return Usagef("install-service: unexpected argument %q: --user takes no value (the system service's account is --account NAME)", operands[0])
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	only := []string{"account", "env-file"} // the system service's
	if !*user {
		only = []string{"os", "addr"}
	}
	for _, name := range only {
		if set[name] {
			if *user {
				return Usagef("install-service: --%s is for the system service, not with --user", name)
			}
			return Usagef("install-service: --%s is for a per-user service: add --user", name)
		}
	}
	if *user {
		us := userService{OS: *goos, Addr: *addr, BackupDir: u.BackupDir}
		for name, p := range map[string]*string{"db": &us.DB, "bin": &us.Bin, "unit": &us.Path} {
			if set[name] {
				*p = fs.Lookup(name).Value.String()
			}
		}
		return installUserService(env, us, *dryRun)
	}
	if err := u.validate(); err != nil {
		return err
	}
	name := strings.TrimSuffix(filepath.Base(*unit), ".service")
	if !safePathRE.MatchString(*unit) || !strings.HasSuffix(*unit, ".service") || !unitNameRE.MatchString(name) {
		return Usagef("install-service: --unit: %q must be an absolute path ending in NAME.service, without spaces or quotes", *unit)
	}
	stdout := env.Stdout
	text := u.render()
	if *dryRun {
		fmt.Fprintf(stdout, "# %s (--dry-run: nothing written)\n%s\n", *unit, text)
	} else {
		changed, err := writeFileAtomic(*unit, []byte(text), 0o644)
		if err != nil {
			return fmt.Errorf("install-service: write %s: %w (run it with sudo, or --dry-run to print the unit)", *unit, err)
		}
		if changed {
			fmt.Fprintf(stdout, "wrote %s\n\n", *unit)
		} else {
			fmt.Fprintf(stdout, "%s is up to date\n\n", *unit)
		}
	}
	return writeInstallSteps(stdout, u, name)
}

// installUserService is install-service --user: u holds the flags as given ("" where not
// given, the system service's defaults do not apply), resolved here against the user's
// defaults and the working directory.
func installUserService(env *Env, u userService, dryRun bool) error {
	switch u.OS {
	case "":
		u.OS = runtime.GOOS
		if u.OS != "linux" && u.OS != "darwin" {
			return Usagef("install-service: --user: no per-user service for %s here (systemd on Linux, launchd on macOS); --os linux or darwin prints theirs with --dry-run", u.OS)
		}
	case "linux", "darwin":
	default:
		return Usagef("install-service: --os: %q is not linux or darwin", u.OS)
	}
	u.Home = env.Getenv("HOME")
	if !filepath.IsAbs(u.Home) {
		return Usagef("install-service: --user: $HOME is %q, not an absolute path: the service's files go under it", u.Home)
	}
	u.Home = filepath.Clean(u.Home)
	db, unit, log := userPaths(env, u.OS, u.Home)
	u.Log = log
	for _, p := range []struct {
		path *string
		def  string
	}{{&u.DB, db}, {&u.Path, unit}, {&u.BackupDir, ""}, {&u.Bin, ""}} {
		if *p.path == "" {
			*p.path = p.def
			continue
		}
		abs, err := filepath.Abs(env.path(*p.path))
		if err != nil {
			return fmt.Errorf("install-service: %w", err)
		}
		*p.path = abs
	}
	if u.Bin == "" {
		exe, err := executable()
		if err != nil {
			return fmt.Errorf("install-service: the running binary: %w (give --bin)", err)
		}
		if goRunBuild(exe) {
			return Usagef("install-service: --bin: this binary, %s, is a temporary build of go run; build one (make build) and run it, or give --bin", exe)
		}
		u.Bin = exe
	}
	if err := u.validate(); err != nil {
		return err
	}
	stdout := env.Stdout
	if dryRun {
		fmt.Fprintf(stdout, "# %s (--dry-run: nothing written)\n%s\n", u.Path, u.render())
	} else {
		if err := u.install(stdout); err != nil {
			return err
		}
		fmt.Fprintln(stdout)
	}
	return writeUserSteps(stdout, u)
}

// goRunBuild reports whether exe is a binary `go run` built, which it removes when it exits:
// .../go-build123/b001/exe/ownsona.
func goRunBuild(exe string) bool { return goRunRE.MatchString(filepath.ToSlash(exe)) }

var goRunRE = regexp.MustCompile(`/go-build[0-9]+/b[0-9]+/exe/[^/]+$`)

// writeInstallSteps prints what is left to do, as commands to paste.
func writeInstallSteps(w io.Writer, u serviceUnit, name string) error {
	dir := filepath.Dir(u.DB)
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	p("# Then, as a user who may sudo:")
	if exe, err := os.Executable(); err == nil && !sameFile(exe, u.Bin) {
		p("# the binary, where the service runs it from:")
		p("sudo install -m 0755 %s %s", exe, u.Bin)
	}
	p("# a system user with no login, and the data directory only it may enter:")
	p("sudo useradd --system --user-group --home-dir %s --no-create-home --shell /usr/sbin/nologin %s", dir, u.User)
	p("sudo install -d -o %s -g %s -m 0700 %s", u.User, u.User, dir)
	if u.BackupDir != "" {
		p("sudo install -d -o %s -g %s -m 0700 %s   # with the disk mounted", u.User, u.User, u.BackupDir)
	}
	p("# (an existing file, with serve stopped: sudo install -o %s -g %s -m 0600 ownsona.db %s)", u.User, u.User, u.DB)
	p("# the settings file, readable by root only (systemd reads it before dropping privileges):")
	p("sudo install -d -m 0755 %s", filepath.Dir(u.EnvFile))
	p("sudo test -e %s || sudo install -m 0600 /dev/null %s", u.EnvFile, u.EnvFile)
	p("# then write the settings in it (sudoedit %s), e.g.", u.EnvFile)
	p("#   OWNSONA_TLS=acme")
	p("#   OWNSONA_DOMAIN=mem.example.com")
	p("#   OWNSONA_LOGIN_PASSWORD='<the output of: ownsona hash-password>'")
	p("# start it now and at every boot, and follow its log:")
	p("sudo systemctl daemon-reload && sudo systemctl enable --now %s", name)
	p("journalctl -u %s -f", name)
	p("# and check what Claude.ai and ChatGPT will see:")
	p("sudo %s doctor --public --env-file %s --db %s", u.Bin, u.EnvFile, u.DB)
	_, err := io.WriteString(w, b.String())
	return err
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// writeFileAtomic replaces path with data (mode perm) through a temporary file in the same
// directory, synced and renamed; changed is false when the file already held data.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (changed bool, err error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == perm {
			return false, nil
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return false, err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return err == nil, err
}

// WarnFileSize says what to do about a database file of size bytes on goarch, or "" when
// nothing needs doing. On 32-bit architectures bbolt maps the whole file into one piece of
// the address space: it doubles the map up to 1 GiB, beyond that maps its maximum (2 GiB on
// arm, 386 and ppc; 1 GiB on mips) at once, which a 32-bit process often cannot find, and it
// cannot open a file larger than the maximum at all.
func WarnFileSize(goarch string, size int64) string {
	var max int64
	switch goarch {
	case "arm", "386", "ppc":
		max = 2<<30 - 1 // bbolt's MaxMapSize, 0x7FFFFFFF
	case "mips", "mipsle":
		max = 1 << 30
	default:
		return ""
	}
	half := (max + 1) / 2 // beyond it, bbolt maps max at once
	const fix = "prefer a 64-bit OS: on a Raspberry Pi 3, 4 or 5, Raspberry Pi OS (64-bit) and the linux-arm64 binary, which open the same file (meanwhile `ownsona compact`, server stopped, gives back free pages)"
	switch {
	case size > max:
		return fmt.Sprintf("the database file (%s) is larger than the %s that bbolt can map on 32-bit %s, so it cannot be opened here; %s", mib(size), mib(max+1), goarch, fix)
	case size > half:
		return fmt.Sprintf("the database file (%s) is past %s: on 32-bit %s bbolt now maps %s at once, which may fail (\"cannot allocate memory\"), and the file cannot grow beyond it; %s", mib(size), mib(half), goarch, mib(max+1), fix)
	case size > half*3/4:
		return fmt.Sprintf("the database file (%s) is growing toward %s, past which bbolt on 32-bit %s must map %s at once; %s", mib(size), mib(half), goarch, mib(max+1), fix)
	}
	return ""
}

// mib formats a size in MiB, or in GiB from 1 GiB.
func mib(n int64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.3g GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
