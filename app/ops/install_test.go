package ops

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// wantUnit is the unit for the defaults: every line, in order, reviewed as text.
const wantUnit = `# Written by ` + "`ownsona install-service`" + `. Settings (OWNSONA_TLS, OWNSONA_DOMAIN,
# OWNSONA_LOGIN_PASSWORD, ...) go in /etc/ownsona/ownsona.env, mode 0600.
[Unit]
Description=ownsona, a personal memory server for AI assistants
Documentation=https://github.com/ownsona/ownsona
Wants=network-online.target
After=network-online.target

[Service]
Type=exec
User=ownsona
Group=ownsona
EnvironmentFile=-/etc/ownsona/ownsona.env
ExecStart=/usr/local/bin/ownsona serve --db /var/lib/ownsona/ownsona.db
Restart=on-failure
RestartSec=5
TimeoutStopSec=30
UMask=0077
LimitNOFILE=65536

# Ports 443 and 80 without root, and no other privilege.
AmbientCapabilities=CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
NoNewPrivileges=true

# The file system is read-only but for the database's directory.
ProtectSystem=strict
ReadWritePaths=/var/lib/ownsona
ProtectHome=true
PrivateTmp=true
PrivateDevices=true
PrivateMounts=true
ProtectProc=invisible
ProcSubset=pid
RemoveIPC=true

ProtectKernelTunables=true
ProtectKernelModules=true
ProtectKernelLogs=true
ProtectControlGroups=true
ProtectClock=true
ProtectHostname=true
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
WantedBy=multi-user.target
`

func TestServiceUnit_Render(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		u := serviceUnit{User: defaultServiceAccount, Bin: defaultServiceBin, DB: defaultServiceDB, EnvFile: defaultServiceEnv}
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		if got := u.render(); got != wantUnit {
			t.Errorf("render() =\n%s\nwant\n%s", got, wantUnit)
		}
	})
	t.Run("other paths", func(t *testing.T) {
		u := serviceUnit{User: "mem", Bin: "/opt/ownsona/bin/ownsona", DB: "/srv/ownsona-data/mem.db", EnvFile: "/etc/default/ownsona"}
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		got := u.render()
		for _, want := range []string{
			"\nUser=mem\n", "\nGroup=mem\n",
			"\nExecStart=/opt/ownsona/bin/ownsona serve --db /srv/ownsona-data/mem.db\n",
			"\nReadWritePaths=/srv/ownsona-data\n",
			"\nEnvironmentFile=-/etc/default/ownsona\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("unit lacks %q:\n%s", want, got)
			}
		}
		if n := strings.Count(got, "ReadWritePaths="); n != 1 {
			t.Errorf("%d ReadWritePaths lines, want 1", n)
		}
	})
	t.Run("backup directory", func(t *testing.T) {
		u := serviceUnit{User: "ownsona", Bin: defaultServiceBin, DB: defaultServiceDB, EnvFile: defaultServiceEnv, BackupDir: "/mnt/usb/ownsona"}
		if err := u.validate(); err != nil {
			t.Fatal(err)
		}
		got := u.render()
		for _, want := range []string{
			"\nExecStart=/usr/local/bin/ownsona serve --db /var/lib/ownsona/ownsona.db --backup-dir /mnt/usb/ownsona\n",
			"\nReadWritePaths=/var/lib/ownsona -/mnt/usb/ownsona\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("unit lacks %q:\n%s", want, got)
			}
		}
	})
}

func TestServiceUnit_Validate(t *testing.T) {
	good := serviceUnit{User: defaultServiceAccount, Bin: defaultServiceBin, DB: defaultServiceDB, EnvFile: defaultServiceEnv}
	tests := []struct {
		name   string
		change func(*serviceUnit)
		want   string // in the usage error
	}{
		{"space in db", func(u *serviceUnit) { u.DB = "/var/lib/my ownsona/ownsona.db" }, "--db: \"/var/lib/my ownsona/ownsona.db\" must be an absolute path"},
		{"newline in bin", func(u *serviceUnit) { u.Bin = "/usr/local/bin/ownsona\nExecStartPre=/bin/sh" }, "--bin: "},
		{"specifier in db", func(u *serviceUnit) { u.DB = "/var/lib/%h/ownsona.db" }, "--db: "},
		{"variable in bin", func(u *serviceUnit) { u.Bin = "/usr/local/bin/$HOME" }, "--bin: "},
		{"quote in env file", func(u *serviceUnit) { u.EnvFile = `/etc/"ownsona".env` }, "--env-file: "},
		{"backslash in db", func(u *serviceUnit) { u.DB = `/var/lib/ownsona\x20/ownsona.db` }, "--db: "},
		{"relative db", func(u *serviceUnit) { u.DB = "ownsona.db" }, "--db: \"ownsona.db\" must be an absolute path"},
		{"unclean db", func(u *serviceUnit) { u.DB = "/var/lib/ownsona/../ownsona/ownsona.db" }, "--db: \"/var/lib/ownsona/../ownsona/ownsona.db\" is not a clean path"},
		{"db in home", func(u *serviceUnit) { u.DB = "/home/pi/ownsona.db" }, "--db: /home/pi is under /home, which the service cannot see"},
		{"db in tmp", func(u *serviceUnit) { u.DB = "/tmp/ownsona/ownsona.db" }, "--db: /tmp/ownsona is under /tmp"},
		{"bin in home", func(u *serviceUnit) { u.Bin = "/home/pi/ownsona" }, "--bin: /home/pi/ownsona is under /home, which the service cannot see (ProtectHome, PrivateTmp); use e.g. /usr/local/bin/ownsona"},
		{"db in /var/lib itself", func(u *serviceUnit) { u.DB = "/var/lib/ownsona.db" }, "--db: give ownsona a directory of its own (e.g. /var/lib/ownsona): the service may write everything in /var/lib"},
		{"root", func(u *serviceUnit) { u.User = "root" }, "--account: the service must not run as root"},
		{"bad user", func(u *serviceUnit) { u.User = "Own Sona" }, "--account: \"Own Sona\" is not a login name"},
		{"empty bin", func(u *serviceUnit) { u.Bin = "" }, "--bin: empty"},
		{"backup dir with a space", func(u *serviceUnit) { u.BackupDir = "/mnt/my usb" }, "--backup-dir: \"/mnt/my usb\" must be an absolute path"},
		{"backup dir in home", func(u *serviceUnit) { u.BackupDir = "/home/pi/backups" }, "--backup-dir: /home/pi/backups is under /home"},
		{"backup dir /mnt itself", func(u *serviceUnit) { u.BackupDir = "/mnt" }, "--backup-dir: give ownsona a directory of its own (e.g. /mnt/usb/ownsona)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := good
			tt.change(&u)
			err := u.validate()
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("validate() = %v, want a usage error with %q", err, tt.want)
			}
		})
	}
}

func TestInstallService(t *testing.T) {
	t.Run("dry run writes nothing", func(t *testing.T) {
		unit := filepath.Join(t.TempDir(), "ownsona.service")
		var out bytes.Buffer
		if err := installService([]string{"--dry-run", "--unit", unit}, &out); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(unit); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--dry-run wrote %s (%v)", unit, err)
		}
		for _, want := range []string{
			"# " + unit + " (--dry-run: nothing written)\n" + wantUnit,
			"sudo useradd --system --user-group --home-dir /var/lib/ownsona --no-create-home --shell /usr/sbin/nologin ownsona\n",
			"sudo install -d -o ownsona -g ownsona -m 0700 /var/lib/ownsona\n",
			"sudo test -e /etc/ownsona/ownsona.env || sudo install -m 0600 /dev/null /etc/ownsona/ownsona.env\n",
			"sudo systemctl daemon-reload && sudo systemctl enable --now ownsona\n",
			"sudo /usr/local/bin/ownsona doctor --public --env-file /etc/ownsona/ownsona.env --db /var/lib/ownsona/ownsona.db\n",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, &out)
			}
		}
	})
	t.Run("writes the unit with mode 0644", func(t *testing.T) {
		unit := filepath.Join(t.TempDir(), "mem.service")
		var out bytes.Buffer
		args := []string{"--unit", unit, "--account", "mem", "--db", "/srv/mem/mem.db", "--bin", "/opt/ownsona"}
		if err := installService(args, &out); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(unit)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), "\nExecStart=/opt/ownsona serve --db /srv/mem/mem.db\n") {
			t.Errorf("unit:\n%s", got)
		}
		if fi, _ := os.Stat(unit); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o644 {
			t.Errorf("mode %04o, want 0644", fi.Mode().Perm())
		}
		for _, want := range []string{"wrote " + unit + "\n", "sudo systemctl daemon-reload && sudo systemctl enable --now mem\n", "journalctl -u mem -f\n"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, &out)
			}
		}
		if entries, _ := os.ReadDir(filepath.Dir(unit)); len(entries) != 1 {
			t.Errorf("the directory holds %d files, want only the unit (no temporary file left)", len(entries))
		}
		out.Reset()
		if err := installService(args, &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), unit+" is up to date\n") {
			t.Errorf("second run:\n%s", &out)
		}
	})
	t.Run("usage errors name the flag", func(t *testing.T) {
		for args, want := range map[string]string{
			"--db=/var/lib/o o/x.db":      "--db: ",
			"--unit=ownsona.service":      "--unit: ",
			"--unit=/etc/systemd/ownsona": "--unit: ",
			"--frobnicate":                "flag provided but not defined: -frobnicate",
			"extra":                       "unexpected argument \"extra\"",
		} {
			err := installService([]string{args}, &bytes.Buffer{})
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) {
				t.Errorf("installService(%q) = %v, want a usage error with %q", args, err, want)
			}
		}
	})
	t.Run("unwritable directory", func(t *testing.T) {
		err := installService([]string{"--unit", filepath.Join(t.TempDir(), "missing", "ownsona.service")}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "run it with sudo, or --dry-run") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestWarnFileSize(t *testing.T) {
	const MiB, GiB = 1 << 20, 1 << 30
	tests := []struct {
		goarch string
		size   int64
		want   string // "" for no warning
	}{
		{"arm64", 100 * GiB, ""},
		{"amd64", 3 * GiB, ""},
		{"arm", 0, ""},
		{"arm", 700 * MiB, ""},
		{"arm", 800 * MiB, "the database file (800 MiB) is growing toward 1 GiB, past which bbolt on 32-bit arm must map 2 GiB at once; prefer a 64-bit OS"},
		{"arm", GiB, "growing toward 1 GiB"},
		{"arm", GiB + 1, "the database file (1 GiB) is past 1 GiB: on 32-bit arm bbolt now maps 2 GiB at once, which may fail"},
		{"386", 1536 * MiB, "the database file (1.5 GiB) is past 1 GiB: on 32-bit 386"},
		{"arm", 2*GiB - 1, "is past 1 GiB"},
		{"arm", 2 * GiB, "the database file (2 GiB) is larger than the 2 GiB that bbolt can map on 32-bit arm, so it cannot be opened here"},
		{"mipsle", 600 * MiB, "is past 512 MiB: on 32-bit mipsle bbolt now maps 1 GiB at once"},
	}
	for _, tt := range tests {
		got := WarnFileSize(tt.goarch, tt.size)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("WarnFileSize(%s, %d) = %q, want %q", tt.goarch, tt.size, got, tt.want)
		}
		if got != "" && !strings.Contains(got, "Raspberry Pi OS (64-bit) and the linux-arm64 binary") {
			t.Errorf("WarnFileSize(%s, %d) gives no advice: %q", tt.goarch, tt.size, got)
		}
	}
}

// installService runs install-service with args, its output in stdout.
func installService(args []string, stdout *bytes.Buffer) error {
	env := &Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stdout, Getenv: func(string) string { return "" }}
	return installServiceCmd(context.Background(), env, args)
}
