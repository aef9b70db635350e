package build

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-licenses/v2/licenses"
	"golang.org/x/mod/modfile"
	"k8s.io/klog/v2"
)

// Allowed are the licences (SPDX identifiers) that a package linked into the binary may carry:
// permissive ones that ask only that their notice travel with the binary, which NOTICE does.
// CC0-1.0 is github.com/zeebo/blake3's public-domain dedication. A package with another licence,
// or with none that go-licenses recognizes, fails `make test` until someone decides.
var Allowed = []string{"Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "CC0-1.0", "ISC", "MIT"}

// Target is one platform of `make dist`.
type Target struct{ GOOS, GOARCH string }

// DistTargets reads DIST_TARGETS (os/arch words; armv7 and armv6 are GOARCH arm) from the
// Makefile in root.
func DistTargets(root string) ([]Target, error) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		return nil, fmt.Errorf("dist targets: %w", err)
	}
	m := regexp.MustCompile(`(?m)^DIST_TARGETS\s*:?=\s*(.*)$`).FindSubmatch(b)
	if m == nil {
		return nil, fmt.Errorf("dist targets: the Makefile has no DIST_TARGETS")
	}
	var ts []Target
	for _, w := range strings.Fields(string(m[1])) {
		goos, arch, ok := strings.Cut(w, "/")
		if !ok {
			return nil, fmt.Errorf("dist targets: %q is not os/arch", w)
		}
		if strings.HasPrefix(arch, "armv") {
			arch = "arm"
		}
		if t := (Target{goos, arch}); !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return ts, nil
}

// Library is one licence file and the linked packages it covers (go-licenses' unit: a module,
// or a directory of one with a licence of its own, such as go-jose's json fork of encoding/json).
type Library struct {
	// Name is the longest import path common to the packages.
	Name string
	// Version is the module's version; empty for the main module and directory replacements.
	Version string
	// Main reports whether the packages are the main module's own.
	Main bool
	// File is the licence file's path; empty when none was found.
	File string
	// Licences are the SPDX identifiers go-licenses recognized in File.
	Licences []string
}

// Libraries lists the libraries whose packages the binary built from pkg (a package path or
// pattern of the module in dir) links on each of the targets, merged and sorted by name.
//
// go-licenses loads packages in the process's working directory and environment, so Libraries
// changes both (to dir, and GOOS and GOARCH to each target's) while it runs and restores them
// after: it must not run concurrently with anything that depends on either.
func Libraries(ctx context.Context, dir, pkg string, targets []Target) ([]Library, error) {
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("libraries: %w", err)
	}
	mainPath := modfile.ModulePath(gomod)
	quietKlog.Do(func() {
		// go-licenses warns through klog about every package with assembly; errors still show.
		fs := flag.NewFlagSet("klog", flag.ContinueOnError)
		klog.InitFlags(fs)
		fs.Set("logtostderr", "false")
		fs.Set("stderrthreshold", "ERROR")
		klog.SetOutput(io.Discard)
	})
	classifier, err := licenses.NewClassifier()
	if err != nil {
		return nil, fmt.Errorf("libraries: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("libraries: %w", err)
	}
	if err := os.Chdir(dir); err != nil {
		return nil, fmt.Errorf("libraries: %w", err)
	}
	defer os.Chdir(wd)
	defer restoreEnv("GOOS", "GOARCH", "GOFLAGS")()
	// The module as go.mod and go.sum have it, whatever GOFLAGS the caller has.
	os.Setenv("GOFLAGS", "-mod=readonly")

	// One library per licence file (per package when there is none), its name the packages'
	// common path over every target: a target may link fewer of them.
	byFile := map[string]*Library{}
	pkgs := map[string][]string{}
	for _, t := range targets {
		os.Setenv("GOOS", t.GOOS)
		os.Setenv("GOARCH", t.GOARCH)
		libs, err := licenses.Libraries(ctx, classifier, false, nil, pkg)
		if err != nil {
			return nil, fmt.Errorf("libraries for %s/%s: %w", t.GOOS, t.GOARCH, err)
		}
		for _, l := range libs {
			key := l.LicenseFile
			if key == "" {
				key = "package " + l.Name()
			}
			lib := &Library{Version: l.Version(), File: l.LicenseFile}
			for _, lic := range l.Licenses {
				lib.Licences = append(lib.Licences, lic.Name)
			}
			slices.Sort(lib.Licences)
			lib.Licences = slices.Compact(lib.Licences)
			if old, ok := byFile[key]; ok && !slices.Equal(old.Licences, lib.Licences) {
				return nil, fmt.Errorf("libraries: %s reads as %v on one target and %v on %s/%s", key, old.Licences, lib.Licences, t.GOOS, t.GOARCH)
			}
			byFile[key] = lib
			pkgs[key] = append(pkgs[key], l.Packages...)
		}
	}
	out := make([]Library, 0, len(byFile))
	for key, l := range byFile {
		l.Name = commonPath(pkgs[key])
		l.Main = l.Name == mainPath || strings.HasPrefix(l.Name, mainPath+"/")
		out = append(out, *l)
	}
	slices.SortFunc(out, func(a, b Library) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// commonPath is the longest import path that each of paths is or is under.
func commonPath(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	common := strings.Split(paths[0], "/")
	for _, p := range paths[1:] {
		parts := strings.Split(p, "/")
		n := 0
		for n < len(common) && n < len(parts) && common[n] == parts[n] {
			n++
		}
		common = common[:n]
	}
	return strings.Join(common, "/")
}

var quietKlog sync.Once

// restoreEnv returns a function that gives the variables back the values they have now.
func restoreEnv(keys ...string) func() {
	old := map[string]*string{}
	for _, k := range keys {
		if v, ok := os.LookupEnv(k); ok {
			old[k] = &v
		} else {
			old[k] = nil
		}
	}
	return func() {
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}
}

// Check returns a problem for each library without a licence file, and for each licence not in
// Allowed; none when every library may ship.
func Check(libs []Library) []error {
	var errs []error
	for _, l := range libs {
		if l.File == "" || len(l.Licences) == 0 {
			errs = append(errs, fmt.Errorf("%s %s: no licence file found in its module (a package the binary links must carry one)", l.Name, l.Version))
			continue
		}
		for _, lic := range l.Licences {
			if !slices.Contains(Allowed, lic) {
				errs = append(errs, fmt.Errorf("%s %s: licence %s (%s) is not on the allow-list %v", l.Name, l.Version, lic, l.File, Allowed))
			}
		}
	}
	return errs
}
