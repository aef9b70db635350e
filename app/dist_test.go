package app

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// distPromised are the targets that issues 6 and 31 promise `make dist` builds.
var distPromised = []string{"linux/amd64", "linux/arm64", "linux/armv7", "linux/armv6", "darwin/amd64", "darwin/arm64", "windows/amd64"}

// The VERSION and BUILD_DATE the test stamps in place of the Makefile's, and the version
// `ownsona version` must make of them.
const (
	distVersion = "v9.8.7-2-gabcdef0"
	distDate    = "2001-02-03T04:05:06Z"
	distSemver  = "v9.8.8-dev.2+gabcdef0"
	distCommit  = "abcdef0123456789abcdef0123456789abcdef01"
)

// TestDist_CrossBuild builds every target of `make dist` (DIST_TARGETS in the Makefile) the way
// the Makefile does, so that no target silently stops building: static (CGO_ENABLED=0), for the
// right machine, with GOARM applied, the version and date stamped where app reads them (the
// host's binary runs `version`). Two builds run at once; each uses every CPU.
func TestDist_CrossBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("cross builds take a minute or more; not with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	targets, ldflags := makeDist(t)
	for _, p := range distPromised {
		if !slices.Contains(targets, p) {
			t.Errorf("DIST_TARGETS lacks %s", p)
		}
	}
	dir := t.TempDir()
	sem := make(chan struct{}, 2)
	for _, target := range targets {
		t.Run(target, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			goos, arch, _ := strings.Cut(target, "/")
			goarch, goarm := arch, ""
			if v, ok := strings.CutPrefix(arch, "armv"); ok {
				goarch, goarm = "arm", v
			}
			out := filepath.Join(dir, "ownsona-"+goos+"-"+arch)
			cmd := exec.Command(goBin, "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, ".")
			cmd.Dir = ".." // the module's root, where main is
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch, "GOARM="+goarm)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build for %s: %v\n%s", target, err, b)
			}
			checkBinary(t, out, goos, goarch, goarm)
			if goos == runtime.GOOS && goarch == runtime.GOARCH {
				checkVersion(t, out, target)
			}
			if fi, err := os.Stat(out); err == nil {
				t.Logf("%s: %.1f MiB (%d bytes)", target, float64(fi.Size())/(1<<20), fi.Size())
			}
		})
	}
}

// makeDist reads DIST_TARGETS and LDFLAGS from the Makefile, with distVersion, distCommit and
// distDate for $(VERSION), $(COMMIT) and $(BUILD_DATE), and the Makefile's own value for any
// other $(NAME); without DIST_TARGETS, the targets are distPromised.
func makeDist(tb testing.TB) (targets []string, ldflags string) {
	tb.Helper()
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		tb.Fatal(err)
	}
	vars := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^([A-Z_]+)\s*[:?]?=\s*(.*)$`).FindAllStringSubmatch(string(b), -1) {
		vars[m[1]] = strings.TrimSpace(m[2])
	}
	targets = strings.Fields(vars["DIST_TARGETS"])
	if len(targets) == 0 {
		tb.Logf("the Makefile has no DIST_TARGETS: building the promised targets")
		targets = distPromised
	}
	stamps := map[string]string{"VERSION": distVersion, "COMMIT": distCommit, "BUILD_DATE": distDate}
	ldflags = regexp.MustCompile(`\$\(([A-Z_]+)\)`).ReplaceAllStringFunc(vars["LDFLAGS"], func(ref string) string {
		name := ref[2 : len(ref)-1]
		if v, ok := stamps[name]; ok {
			return v
		}
		return vars[name]
	})
	if ldflags == "" || strings.Contains(ldflags, "$") {
		tb.Fatalf("cannot use the Makefile's LDFLAGS %q", vars["LDFLAGS"])
	}
	return targets, ldflags
}

// checkVersion runs the binary's `version` and checks what the -X flags stamped.
func checkVersion(tb testing.TB, path, target string) {
	tb.Helper()
	out, err := exec.Command(path, "version").Output()
	if err != nil {
		tb.Fatalf("%s version: %v", filepath.Base(path), err)
	}
	for _, want := range []string{"ownsona " + distSemver + "\n", "\ncommit    " + distCommit + "\n",
		"\nbuilt     " + distDate + "\n", "\nplatform  " + target + "\n"} {
		if !strings.Contains(string(out), want) {
			tb.Errorf("%s version printed\n%s\nwant a line %q", filepath.Base(path), out, strings.TrimSpace(want))
		}
	}
}

// checkBinary checks that the file is an executable for goos/goarch, statically linked, built
// with the settings make dist gives.
func checkBinary(tb testing.TB, path, goos, goarch, goarm string) {
	tb.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		tb.Fatalf("build info: %v", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	want := map[string]string{"GOOS": goos, "GOARCH": goarch, "CGO_ENABLED": "0", "-trimpath": "true"}
	if goarm != "" {
		want["GOARM"] = goarm
	}
	for k, v := range want {
		if settings[k] != v {
			tb.Errorf("%s: build setting %s = %q, want %q", filepath.Base(path), k, settings[k], v)
		}
	}
	// With -trimpath the build info leaves -ldflags out (go.dev/issue/52372): look for the stamp.
	if b, err := os.ReadFile(path); err != nil || !bytes.Contains(b, []byte(distVersion)) || !bytes.Contains(b, []byte(distDate)) {
		tb.Errorf("%s: the version or the date is not stamped (-X …app.Version=%s, app.BuildDate=%s): %v", filepath.Base(path), distVersion, distDate, err)
	}
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64, "arm": elf.EM_ARM, "386": elf.EM_386}[goarch]
		if f.Machine != machine {
			tb.Errorf("ELF machine %v, want %v", f.Machine, machine)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				tb.Errorf("the binary is dynamically linked (%v): it must run on any Linux", p.Type)
			}
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		if cpu := map[string]macho.Cpu{"arm64": macho.CpuArm64, "amd64": macho.CpuAmd64}[goarch]; f.Cpu != cpu {
			tb.Errorf("Mach-O CPU %v, want %v", f.Cpu, cpu)
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			tb.Fatal(err)
		}
		defer f.Close()
		if m := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]; f.Machine != m {
			tb.Errorf("PE machine %#x, want %#x", f.Machine, m)
		}
	}
}
