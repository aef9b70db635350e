package app

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/ops"
)

func TestSemver(t *testing.T) {
	for _, tc := range []struct{ describe, want string }{
		{"", ""},
		{"dev", ""},
		{"v0.1.0", "v0.1.0"},
		{"v0.1.0-dirty", "v0.1.0+dirty"},
		{"v0.1.0-3-g6e72c48", "v0.1.1-dev.3+g6e72c48"},
		{"v0.1.9-12-g6e72c48-dirty", "v0.1.10-dev.12+g6e72c48.dirty"},
		{"v0.2.0-rc.1", "v0.2.0-rc.1"},
		{"v0.2.0-rc.1-3-g6e72c48", "v0.2.0-rc.1.dev.3+g6e72c48"},
		{"6e72c48", "v0.0.0-dev+g6e72c48"},
		{"6e72c48-dirty", "v0.0.0-dev+g6e72c48.dirty"},
		{"v1.0.0+meta", "v1.0.0+meta"},
		{"custom-build", "custom-build"},
	} {
		t.Run(tc.describe, func(t *testing.T) {
			if got := semver(tc.describe); got != tc.want {
				t.Errorf("semver(%q) = %q, want %q", tc.describe, got, tc.want)
			}
		})
	}
}

// TestReadBuildInfo_Stamped: the -X values win, made semantic; without them the version is
// "dev" (a test binary has no main module version).
func TestReadBuildInfo_Stamped(t *testing.T) {
	oldV, oldD := Version, BuildDate
	t.Cleanup(func() { Version, BuildDate = oldV, oldD })

	Version, BuildDate = "v0.1.0-3-g6e72c48", "2026-11-29T06:00:00Z"
	b := readBuildInfo()
	if b.Version != "v0.1.1-dev.3+g6e72c48" || b.Date != "2026-11-29T06:00:00Z" {
		t.Errorf("stamped: version %q, date %q", b.Version, b.Date)
	}
	if b.GoVersion != runtime.Version() || b.Platform != runtime.GOOS+"/"+runtime.GOARCH && !strings.HasPrefix(b.Platform, "linux/armv") {
		t.Errorf("go %q, platform %q", b.GoVersion, b.Platform)
	}
	if got := versionString(); got != b.Version {
		t.Errorf("versionString() = %q, want %q", got, b.Version)
	}

	Version, BuildDate = "dev", ""
	if got := readBuildInfo().Version; got != "dev" {
		t.Errorf("unstamped test binary: version %q, want dev", got)
	}
}

// TestRun_Version: `ownsona version` (and --version) prints the version first, then the
// commit, the date, Go's version and the platform; serve's Config carries the same version.
func TestRun_Version(t *testing.T) {
	oldV, oldD := Version, BuildDate
	t.Cleanup(func() { Version, BuildDate = oldV, oldD })
	Version, BuildDate = "v0.1.0", "2026-11-29T06:00:00Z"
	for _, args := range [][]string{{"version"}, {"--version"}} {
		t.Run(args[0], func(t *testing.T) {
			var out bytes.Buffer
			if err := Run(context.Background(), args, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			want := []string{"ownsona v0.1.0", "commit    ", "built     2026-11-29T06:00:00Z",
				"go        " + runtime.Version(), "platform  " + runtime.GOOS + "/" + runtime.GOARCH}
			if len(lines) != len(want) {
				t.Fatalf("version printed %q, want %d lines", out.String(), len(want))
			}
			for i, w := range want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
				}
			}
		})
	}
	t.Run("extra argument", func(t *testing.T) {
		err := Run(context.Background(), []string{"version", "x"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "takes no arguments") {
			t.Errorf("version x: %v", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		env := &ops.Env{Getenv: func(string) string { return "" }, Stdout: io.Discard, Stderr: io.Discard}
		cfg, _, err := configFor("serve", env, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Version != "v0.1.0" {
			t.Errorf("serve's Config.Version = %q, want v0.1.0 (for /health and the server card)", cfg.Version)
		}
	})
}
