package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/licenseclassifier/v2/assets"
)

// root is the main module's directory: this module lives in its build/.
const root = ".."

// linked is Libraries of the binary on every dist target, computed once for the tests below.
var linked = sync.OnceValues(func() ([]Library, error) {
	targets, err := DistTargets(root)
	if err != nil {
		return nil, err
	}
	return Libraries(context.Background(), root, ".", targets)
})

// TestLibraries_Allowed is `make test`'s licence check: every package the binary links, on
// every target of `make dist`, has a licence file with only licences on Allowed; ownsona's
// own packages are Apache-2.0 (LICENSE).
func TestLibraries_Allowed(t *testing.T) {
	libs, err := linked()
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range Check(libs) {
		t.Error(err)
	}
	var own bool
	for _, l := range libs {
		t.Logf("%-36s %-8s %s", l.Name, l.Version, strings.Join(l.Licences, ", "))
		if l.Main {
			own = true
			if !slices.Equal(l.Licences, []string{"Apache-2.0"}) || filepath.Base(l.File) != "LICENSE" {
				t.Errorf("ownsona's packages: licence %v in %s, want Apache-2.0 in LICENSE", l.Licences, l.File)
			}
		}
	}
	if !own {
		t.Error("no library of ownsona's own packages")
	}
	if len(libs) < 10 {
		t.Errorf("%d libraries: the binary links more than that; is the package pattern right?", len(libs))
	}
}

// TestNotice_UpToDate fails when NOTICE is not what `make notice` writes now: a dependency
// added, removed or upgraded since.
func TestNotice_UpToDate(t *testing.T) {
	libs, err := linked()
	if err != nil {
		t.Fatal(err)
	}
	goLicence, err := GoLicence()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Notice(libs, goLicence)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "NOTICE"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		i := 0
		for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
			i++
		}
		t.Errorf("NOTICE is out of date (run make notice); first difference at line %d:\n got: %q\nwant: %q",
			i+1, line(gl, i), line(wl, i))
	}
	for _, l := range libs {
		if !l.Main && !bytes.Contains(got, []byte("\n"+l.Name+" ")) {
			t.Errorf("NOTICE does not name %s", l.Name)
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}

// TestCheck_FakeModules proves the check fails: a module that links a dependency without a
// licence file, and one under GPL-3.0, gets one problem for each, and none for an MIT one.
func TestCheck_FakeModules(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	mit := licenceText(t, "License/MIT/pristine.txt")
	gpl := licenceText(t, "License/GPL-3.0/license.txt")
	dir := t.TempDir()
	mainDir, deps := filepath.Join(dir, "main"), filepath.Join(dir, "deps")
	write(t, filepath.Join(mainDir, "go.mod"), `module example.com/fake

go 1.22

require (
	example.com/nolicence v0.0.0
	example.com/gpl v0.0.0
	example.com/mit v0.0.0
)

replace (
	example.com/nolicence => ../deps/nolicence
	example.com/gpl => ../deps/gpl
	example.com/mit => ../deps/mit
)
`)
	write(t, filepath.Join(mainDir, "LICENSE"), mit)
	write(t, filepath.Join(mainDir, "main.go"), `package main

import (
	_ "example.com/gpl"
	_ "example.com/mit"
	_ "example.com/nolicence"
)

func main() {}
`)
	for name, licence := range map[string]string{"nolicence": "", "gpl": gpl, "mit": mit} {
		write(t, filepath.Join(deps, name, "go.mod"), "module example.com/"+name+"\n\ngo 1.22\n")
		write(t, filepath.Join(deps, name, name+".go"), "package "+name+"\n")
		if licence != "" {
			write(t, filepath.Join(deps, name, "LICENSE"), licence)
		}
	}

	libs, err := Libraries(context.Background(), mainDir, ".", []Target{{"linux", "amd64"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, err := range Check(libs) {
		got = append(got, err.Error())
	}
	t.Logf("problems: %q", got)
	if len(got) != 2 {
		t.Fatalf("%d problems, want 2 (no licence, GPL-3.0): %q", len(got), got)
	}
	for i, want := range []string{"example.com/gpl : licence GPL-3.0", "example.com/nolicence : no licence file found"} {
		if !strings.HasPrefix(got[i], want) {
			t.Errorf("problem %d = %q, want it to start with %q", i, got[i], want)
		}
	}
}

func licenceText(t *testing.T, name string) string {
	t.Helper()
	b, err := assets.ReadLicenseFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDistTargets: the Makefile's targets as GOOS/GOARCH, armv7 and armv6 both GOARCH arm.
func TestDistTargets(t *testing.T) {
	got, err := DistTargets(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []Target{{"linux", "amd64"}, {"linux", "arm64"}, {"linux", "arm"}, {"darwin", "arm64"}} {
		if !slices.Contains(got, want) {
			t.Errorf("DistTargets() = %v, lacks %v", got, want)
		}
	}
	for i, a := range got {
		if slices.Contains(got[i+1:], a) || strings.HasPrefix(a.GOARCH, "armv") {
			t.Errorf("DistTargets() = %v: %v twice, or not a GOARCH", got, a)
		}
	}
}
