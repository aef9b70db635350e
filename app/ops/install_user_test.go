package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// wantUserUnit is the systemd user unit for fixed inputs: every line, in order, reviewed as
// text.
const wantUserUnit = `# Written by ` + "`" + `ownsona install-service --user` + "`" + `: ownsona serve for this user, from login
# (from boot with ` + "`" + `loginctl enable-linger` + "`" + `), restarted if it fails.
[Unit]
Description=ownsona, a personal memory server for AI assistants
Documentation=https://github.com/ownsona/ownsona

[Service]
Type=exec
ExecStart=/home/me/bin/ownsona serve --db /home/me/.local/share/ownsona/ownsona.db --addr 127.0.0.1:8080
Restart=on-failure
RestartSec=5
TimeoutStopSec=30
UMask=0077

# What a user's service may restrict without privileges: no new privileges, and
# system calls, address families and namespaces filtered by seccomp.
NoNewPrivileges=true
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=true
RestrictRealtime=true
RestrictSUIDSGID=true
LockPersonality=true
MemoryDenyWriteExecute=true
SystemCallArchitectures=native
SystemCallFilter=@system-service
SystemCallErrorNumber=EPERM

[Install]
WantedBy=default.target
`

// wantPlist is the launchd agent for fixed inputs, the default data file's path with its space.
const wantPlist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by ownsona install-service: ownsona serve for this user, from login,
     restarted if it fails. -->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>io.github.ownsona</string>
	<key>ProgramArguments</key>
	<array>
		<string>/Users/me/bin/ownsona</string>
		<string>serve</string>
		<string>--db</string>
		<string>/Users/me/Library/Application Support/ownsona/ownsona.db</string>
		<string>--addr</string>
		<string>127.0.0.1:8080</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>KeepAlive</key>
	<dict>
		<key>SuccessfulExit</key>
		<false/>
	</dict>
	<key>Umask</key>
	<integer>63</integer>
	<key>StandardOutPath</key>
	<string>/Users/me/Library/Logs/ownsona.log</string>
	<key>StandardErrorPath</key>
	<string>/Users/me/Library/Logs/ownsona.log</string>
</dict>
</plist>
`

func TestUserService_Render(t *testing.T) {
	t.Run("systemd", func(t *testing.T) {
		u := userService{OS: "linux", Bin: "/home/me/bin/ownsona", DB: "/home/me/.local/share/ownsona/ownsona.db", Addr: defaultUserAddr,
			Path: "/home/me/.config/systemd/user/ownsona.service", Home: "/home/me"}
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		if got := u.render(); got != wantUserUnit {
			t.Errorf("render() =\n%s\nwant\n%s", got, wantUserUnit)
		}
	})
	t.Run("launchd", func(t *testing.T) {
		u := userService{OS: "darwin", Bin: "/Users/me/bin/ownsona", DB: "/Users/me/Library/Application Support/ownsona/ownsona.db", Addr: defaultUserAddr,
			Path: "/Users/me/Library/LaunchAgents/io.github.ownsona.plist", Log: "/Users/me/Library/Logs/ownsona.log", Home: "/Users/me"}
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		if got := u.render(); got != wantPlist {
			t.Errorf("render() =\n%s\nwant\n%s", got, wantPlist)
		}
	})
	// Paths with spaces, quotes, backslashes, "%" and "$" reach serve unchanged: systemd's
	// quoting read back by its rules, the plist by an XML parser.
	awkward := userService{Bin: "/home/me/my apps/own%sona", DB: `/home/me/it's "my" 100% $HOME\data/o.db`, Addr: "localhost:9000",
		BackupDir: "/media/me/USB & <disk>/ownsona", Home: "/home/me"}
	t.Run("systemd quoting", func(t *testing.T) {
		u := awkward
		u.OS, u.Path = "linux", "/home/me/.config/systemd/user/ownsona.service"
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		line := unitValue(t, u.render(), "ExecStart")
		want := `"/home/me/my apps/own%%sona" serve --db "/home/me/it's \"my\" 100%% $$HOME\\data/o.db" --addr localhost:9000 --backup-dir "/media/me/USB & <disk>/ownsona"`
		if line != want {
			t.Errorf("ExecStart=%s\nwant       %s", line, want)
		}
		if got, want := systemdArgs(t, line), u.serveArgs(); !equal(got, want) {
			t.Errorf("systemd reads %q, want %q", got, want)
		}
	})
	t.Run("plist escaping", func(t *testing.T) {
		u := awkward
		u.OS, u.Path, u.Log = "darwin", "/Users/me/Library/LaunchAgents/io.github.ownsona.plist", "/Users/me/Library/Logs/a&b.log"
		u.Bin = `/Users/me/"apps"/o'wn\sona` // launchd, unlike systemd, runs any path
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		got := plistValues(t, u.render())
		if want := u.serveArgs(); !equal(got["ProgramArguments"], want) {
			t.Errorf("ProgramArguments = %q, want %q", got["ProgramArguments"], want)
		}
		if got["StandardErrorPath"][0] != u.Log || got["Label"][0] != "io.github.ownsona" {
			t.Errorf("plist values %q", got)
		}
	})
}

func TestUserService_Validate(t *testing.T) {
	linux := userService{OS: "linux", Bin: "/home/me/bin/ownsona", DB: "/home/me/.local/share/ownsona/ownsona.db", Addr: defaultUserAddr,
		Path: "/home/me/.config/systemd/user/ownsona.service", Home: "/home/me"}
	darwin := userService{OS: "darwin", Bin: "/Users/me/bin/ownsona", DB: "/Users/me/Library/Application Support/ownsona/ownsona.db", Addr: defaultUserAddr,
		Path: "/Users/me/Library/LaunchAgents/io.github.ownsona.plist", Log: "/Users/me/Library/Logs/ownsona.log", Home: "/Users/me"}
	long := "/home/me/" + strings.Repeat("d", 90) + "/o.db" // 104 bytes; its socket 109
	tests := []struct {
		name   string
		base   userService
		change func(*userService)
		want   string // in the usage error; "" for none
	}{
		{"quote in bin", linux, func(u *userService) { u.Bin = `/home/me/it's/ownsona` }, "--bin: systemd cannot run \"/home/me/it's/ownsona\" (a quote, backslash or $ in the path); install the binary elsewhere, e.g. /home/me/.local/bin/ownsona"},
		{"backslash in bin", linux, func(u *userService) { u.Bin = `/home/me/a\b/ownsona` }, "--bin: systemd cannot run"},
		{"dollar in bin", linux, func(u *userService) { u.Bin = `/home/me/$x/ownsona` }, "--bin: systemd cannot run"},
		{"space and percent in bin", linux, func(u *userService) { u.Bin = "/home/me/my 100% apps/ownsona" }, ""},
		{"quote in bin on darwin", darwin, func(u *userService) { u.Bin = `/Users/me/it's/ownsona` }, ""},
		{"newline in db", linux, func(u *userService) { u.DB = "/home/me/o.db\nExecStartPre=/bin/sh" }, "--db: \"/home/me/o.db\\nExecStartPre=/bin/sh\" has a control character"},
		{"not UTF-8 in db", darwin, func(u *userService) { u.DB = "/Users/me/\xff.db" }, "--db: "},
		{"tab in backup dir", linux, func(u *userService) { u.BackupDir = "/media/a\tb" }, "--backup-dir: "},
		{"relative db", linux, func(u *userService) { u.DB = "o.db" }, "--db: \"o.db\" is not an absolute path"},
		{"unit without .service", linux, func(u *userService) { u.Path = "/home/me/.config/systemd/user/ownsona" }, "--unit: \"/home/me/.config/systemd/user/ownsona\" must be a path ending in NAME.service"},
		{"unit a template", linux, func(u *userService) { u.Path = "/home/me/.config/systemd/user/own@.service" }, "--unit: "},
		{"plist without .plist", darwin, func(u *userService) { u.Path = "/Users/me/Library/LaunchAgents/ownsona.service" }, "--unit: \"/Users/me/Library/LaunchAgents/ownsona.service\" must be a path ending in LABEL.plist"},
		{"socket path too long", linux, func(u *userService) { u.DB = long }, "--db: its admin socket " + long + ".sock would have a 109-byte path, more than the 107 a Unix socket may have on linux"},
		{"socket path fits on linux", linux, func(u *userService) { u.DB = long[:len(long)-2] }, ""},
		{"socket path too long on darwin", darwin, func(u *userService) { u.DB = long[:len(long)-2] }, "more than the 103 a Unix socket may have on darwin"},
		{"every interface", linux, func(u *userService) { u.Addr = ":8080" }, "--addr: \":8080\" is not a loopback address; a per-user service serves this computer"},
		{"LAN address", linux, func(u *userService) { u.Addr = "192.168.1.2:8080" }, "--addr: "},
		{"port 0", linux, func(u *userService) { u.Addr = "127.0.0.1:0" }, "--addr: \"127.0.0.1:0\" needs a port from 1 to 65535"},
		{"no port", linux, func(u *userService) { u.Addr = "127.0.0.1" }, "--addr: \"127.0.0.1\" is not HOST:PORT"},
		{"localhost", linux, func(u *userService) { u.Addr = "localhost:9000" }, ""},
		{"IPv6 loopback", darwin, func(u *userService) { u.Addr = "[::1]:8080" }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.base
			tt.change(&u)
			err := u.validate()
			var ue *UsageError
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("validate() = %v, want nil", err)
			case tt.want != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), "install-service: "+tt.want) && !strings.Contains(err.Error(), tt.want)):
				t.Errorf("validate() = %v, want a usage error with %q", err, tt.want)
			}
		})
	}
}

func TestInstallService_User(t *testing.T) {
	bin := "/opt/ownsona/bin/ownsona" // written into the unit, never run
	t.Run("systemd: writes the unit and the data directory", func(t *testing.T) {
		home := shortHome(t)
		vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "cfg"), "XDG_DATA_HOME": filepath.Join(home, "data")}
		args := []string{"--user", "--os", "linux", "--bin", bin}
		out, err := installUser(t, vars, "", args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		unit := filepath.Join(home, "cfg", "systemd", "user", "ownsona.service")
		db := filepath.Join(home, "data", "ownsona", "ownsona.db")
		got, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		if want := "\nExecStart=" + bin + " serve --db " + db + " --addr 127.0.0.1:8080\n"; !strings.Contains(string(got), want) {
			t.Errorf("unit lacks %q:\n%s", want, got)
		}
		mustMode(t, unit, 0o644)
		mustMode(t, filepath.Dir(db), 0o700|os.ModeDir) // ST-14, with the unit's UMask=0077
		for _, want := range []string{
			"wrote " + unit + "\n",
			"made " + filepath.Dir(db) + " (mode 0700)\n",
			"\nsystemctl --user daemon-reload && systemctl --user enable --now ownsona\n",
			"\njournalctl --user -u ownsona -f\n",
			"\nloginctl enable-linger\n",
			"\nhttp://127.0.0.1:8080/console\n",
			"\nclaude mcp add --scope user ownsona -- " + bin + " stdio --db " + db + "\n",
			"\n" + bin + " backup --db " + db + " --to " + filepath.Join(home, "ownsona-backup.db") + "\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		mustClientJSON(t, out, bin, db)

		out, err = installUser(t, vars, "", args...)
		if err != nil || !strings.HasPrefix(out, unit+" is up to date\n\n") {
			t.Errorf("second run: %v\n%s", err, out)
		}
		if entries, _ := os.ReadDir(filepath.Dir(unit)); len(entries) != 1 {
			t.Errorf("%s holds %d files, want only the unit", filepath.Dir(unit), len(entries))
		}
	})
	t.Run("systemd: defaults without XDG variables, this binary", func(t *testing.T) {
		home := shortHome(t)
		out, err := installUser(t, map[string]string{"HOME": home}, "", "--user", "--os", "linux", "--addr", "localhost:9000")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		exe, err := executable()
		if err != nil {
			t.Fatal(err)
		}
		db := filepath.Join(home, ".local", "share", "ownsona", "ownsona.db")
		got, err := os.ReadFile(filepath.Join(home, ".config", "systemd", "user", "ownsona.service"))
		if err != nil {
			t.Fatal(err)
		}
		if want := "\nExecStart=" + systemdExecutable(exe) + " serve --db " + db + " --addr localhost:9000\n"; !strings.Contains(string(got), want) {
			t.Errorf("unit lacks %q:\n%s", want, got)
		}
		if !strings.Contains(out, "\nhttp://localhost:9000/console\n") {
			t.Errorf("output lacks the console's URL:\n%s", out)
		}
		mustClientJSON(t, out, exe, db)
	})
	t.Run("launchd: the plist, the log file, quoted commands", func(t *testing.T) {
		home := filepath.Join(shortHome(t), "Mac HD") // a space, as in "Application Support"
		if err := os.MkdirAll(home, 0o700); err != nil {
			t.Fatal(err)
		}
		bin := `/opt/it's "o"\sona` // launchd runs it; JSON, XML and the shell each quote it
		out, err := installUser(t, map[string]string{"HOME": home, "XDG_DATA_HOME": "/elsewhere"}, "", "--user", "--os", "darwin", "--bin", bin)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		plist := filepath.Join(home, "Library", "LaunchAgents", "io.github.ownsona.plist")
		db := filepath.Join(home, "Library", "Application Support", "ownsona", "ownsona.db")
		logf := filepath.Join(home, "Library", "Logs", "ownsona.log")
		got, err := os.ReadFile(plist)
		if err != nil {
			t.Fatal(err)
		}
		v := plistValues(t, string(got))
		if want := []string{bin, "serve", "--db", db, "--addr", "127.0.0.1:8080"}; !equal(v["ProgramArguments"], want) {
			t.Errorf("ProgramArguments = %q, want %q", v["ProgramArguments"], want)
		}
		mustMode(t, plist, 0o644)
		mustMode(t, logf, 0o600) // ST-14: the first start writes the generated password there
		mustMode(t, filepath.Dir(db), 0o700|os.ModeDir)
		mustClientJSON(t, out, bin, db)
		for _, want := range []string{
			"\nlaunchctl bootstrap gui/$(id -u) '" + plist + "'\n",
			"\ntail -f '" + logf + "'\n",
			"launchctl kickstart -k gui/$(id -u)/io.github.ownsona\n",
			"\n# Claude Desktop (" + filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json") + ")\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		// The commands work when pasted: a shell reads the quoted paths back.
		if runtime.GOOS != "windows" {
			line := lineWith(t, out, "claude mcp add ")
			sh := exec.Command("sh", "-c", "printf '%s\\n' "+strings.TrimPrefix(line, "claude mcp add "))
			b, err := sh.Output()
			want := strings.Join([]string{"--scope", "user", "ownsona", "--", bin, "stdio", "--db", db}, "\n") + "\n"
			if err != nil || string(b) != want {
				t.Errorf("a shell reads %q as\n%s(%v), want\n%s", line, b, err, want)
			}
		}
	})
	t.Run("dry run writes nothing", func(t *testing.T) {
		for _, goos := range []string{"linux", "darwin"} {
			home := shortHome(t)
			out, err := installUser(t, map[string]string{"HOME": home}, "", "--user", "--dry-run", "--os", goos, "--bin", bin)
			if err != nil {
				t.Fatalf("%s: %v\n%s", goos, err, out)
			}
			if entries, _ := os.ReadDir(home); len(entries) != 0 {
				t.Errorf("%s: --dry-run wrote %d entries in HOME", goos, len(entries))
			}
			if !strings.Contains(out, "(--dry-run: nothing written)\n") || !strings.Contains(out, "/console\n") {
				t.Errorf("%s: output:\n%s", goos, out)
			}
			mustClientJSON(t, out, bin, "")
		}
	})
	t.Run("relative paths are taken from the working directory", func(t *testing.T) {
		home, cwd := shortHome(t), t.TempDir()
		out, err := installUser(t, map[string]string{"HOME": home}, cwd, "--user", "--os", "linux", "--dry-run", "--db", "mem/o.db", "--bin", "bin/ownsona")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		want := "\nExecStart=" + filepath.Join(cwd, "bin", "ownsona") + " serve --db " + filepath.Join(cwd, "mem", "o.db") + " "
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	})
	t.Run("usage errors name the flag", func(t *testing.T) {
		home := shortHome(t)
		for _, tt := range []struct {
			vars map[string]string
			args []string
			want string
		}{
			{nil, []string{"--user", "--os", "linux"}, "install-service: --user: $HOME is \"\", not an absolute path"},
			{map[string]string{"HOME": home}, []string{"--user", "--os", "windows"}, "install-service: --os: \"windows\" is not linux or darwin"},
			{map[string]string{"HOME": home}, []string{"--user", "ownsona"}, "install-service: unexpected argument \"ownsona\": --user takes no value (the system service's account is --account NAME)"},
			{map[string]string{"HOME": home}, []string{"--user", "--account", "mem"}, "install-service: --account is for the system service, not with --user"},
			{map[string]string{"HOME": home}, []string{"--user", "--env-file", "/etc/x"}, "install-service: --env-file is for the system service"},
			{nil, []string{"--os", "darwin", "--dry-run"}, "install-service: --os is for a per-user service: add --user"},
			{nil, []string{"--addr", "127.0.0.1:9000", "--dry-run"}, "install-service: --addr is for a per-user service"},
			{map[string]string{"HOME": home}, []string{"--user", "--os", "linux", "--bin", "/x/it's/ownsona"}, "install-service: --bin: systemd cannot run"},
			{map[string]string{"HOME": home}, []string{"--user", "--os", "darwin", "--unit", "/x/ownsona.service"}, "install-service: --unit: "},
		} {
			out, err := installUser(t, tt.vars, "", tt.args...)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("install-service %q = %v, want a usage error with %q\n%s", tt.args, err, tt.want, out)
			}
		}
		if entries, _ := os.ReadDir(home); len(entries) != 0 {
			t.Errorf("a refused command wrote %d entries in HOME", len(entries))
		}
	})
}

// shortHome is an empty temporary directory with a short path: the admin socket's path
// beside the data file must fit in 104 bytes, which t.TempDir() under a long test name
// (or macOS's $TMPDIR) leaves too little of.
func shortHome(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(map[bool]string{true: "/tmp"}[runtime.GOOS == "darwin"], "h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestGoRunBuild(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/go-build2952969217/b001/exe/ownsona": true,
		"/tmp/go-build3461216303/b001/ops.test":    false, // go test's, which runs the tests above
		"/home/me/src/ownsona/bin/ownsona":         false,
		"/home/me/go-builds/exe/ownsona":           false,
	} {
		if got := goRunBuild(path); got != want {
			t.Errorf("goRunBuild(%s) = %v, want %v", path, got, want)
		}
	}
}

// installUser runs install-service with args, HOME and the XDG variables from vars, and cwd
// as its working directory if not "".
func installUser(t *testing.T, vars map[string]string, cwd string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: io.Discard, Cwd: cwd,
		Getenv: func(k string) string { return vars[k] }}
	err := installServiceCmd(context.Background(), env, args)
	return out.String(), err
}

// mustClientJSON checks the desktop clients' configuration in out: valid JSON that runs bin
// with stdio on db (if db is not "", else on some absolute path).
func mustClientJSON(t *testing.T, out, bin, db string) {
	t.Helper()
	start, end := strings.Index(out, "\n{\n"), strings.Index(out, "\n}\n")
	if start < 0 || end < start {
		t.Fatalf("no JSON block in:\n%s", out)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out[start:end+2]), &cfg); err != nil {
		t.Fatalf("the client configuration is not JSON: %v\n%s", err, out[start:end+2])
	}
	s := cfg.MCPServers["ownsona"]
	if s.Command != bin || len(s.Args) != 3 || s.Args[0] != "stdio" || s.Args[1] != "--db" || !filepath.IsAbs(s.Args[2]) || (db != "" && s.Args[2] != db) {
		t.Errorf("mcpServers.ownsona = %+v, want %s stdio --db %s", s, bin, db)
	}
}

func mustMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
	}
}

// lineWith is the line of out that starts with prefix.
func lineWith(t *testing.T, out, prefix string) string {
	t.Helper()
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSuffix(line, "\n")
		}
	}
	t.Fatalf("no line %q... in:\n%s", prefix, out)
	return ""
}

// unitValue is the value of the unit's setting key.
func unitValue(t *testing.T, unit, key string) string {
	t.Helper()
	return strings.TrimPrefix(lineWith(t, unit, key+"="), key+"=")
}

// systemdArgs splits an ExecStart= command line as systemd does for what render writes
// (systemd.syntax(7) "Quoting", systemd.service(5) "Command lines"): words split at spaces,
// "double-quoted" words with \\ and \" escapes, then %% and $$ made single.
func systemdArgs(t *testing.T, line string) []string {
	t.Helper()
	var args []string
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		var b strings.Builder
		if line[i] == '"' {
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' {
					i++
				}
				b.WriteByte(line[i])
			}
			i++ // the closing quote
		} else {
			for ; i < len(line) && line[i] != ' '; i++ {
				b.WriteByte(line[i])
			}
		}
		args = append(args, strings.NewReplacer("%%", "%", "$$", "$").Replace(b.String()))
	}
	return args
}

// plistValues reads a plist's top-level dictionary: each key's string values (an array's,
// in order).
func plistValues(t *testing.T, plist string) map[string][]string {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(plist))
	d.Strict = true
	values := map[string][]string{}
	var key, elem string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the plist is not XML: %v\n%s", err, plist)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			elem = tok.Name.Local
		case xml.EndElement:
			elem = ""
		case xml.CharData:
			switch elem {
			case "key":
				key = string(tok)
			case "string":
				values[key] = append(values[key], string(tok))
			}
		}
	}
	return values
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}
