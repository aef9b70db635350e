package app

// What `ownsona version` prints, and the version /health, the server card and serverInfo carry.

import (
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// BuildDate is set by the build (-ldflags "-X github.com/ownsona/ownsona/app.BuildDate=…") to
// the commit's date in RFC 3339 (the Makefile's SOURCE_DATE_EPOCH), not the time of the build,
// so that two builds of one commit are the same bytes. If empty, the commit time VCS stamping
// recorded.
var BuildDate = ""

// Commit is set by the build (-X …app.Commit=…) to the full commit hash, for builds where Go's
// VCS stamping has nothing to read (a git worktree, whose .git is a file; -buildvcs=false). The
// stamped vcs.revision, when there is one, wins.
var Commit = ""

// buildInfo is what the binary knows of its own making.
type buildInfo struct {
	Version   string // semantic, e.g. v0.1.0; "dev" when nothing says
	Commit    string // the VCS revision; empty when neither VCS stamping nor -X says
	Modified  bool   // the work tree had changes
	Date      string // RFC 3339; empty when unknown
	GoVersion string
	Platform  string // GOOS/GOARCH, with GOARM's v6 or v7 on 32-bit ARM
}

// readBuildInfo combines the -X values (Version, Commit, BuildDate) with what the Go toolchain
// stamped: the main module's version (`go install …@v0.1.0`, or Go's pseudo-version of the
// commit in a git checkout) and the vcs.* settings.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: semver(Version), Commit: Commit, Date: BuildDate, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Modified: strings.HasSuffix(Version, "-dirty")}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "dev"
		}
		return b
	}
	if b.Version == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		b.Version = info.Main.Version
	}
	if b.Version == "" {
		b.Version = "dev"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		case "vcs.time":
			if b.Date == "" {
				b.Date = s.Value
			}
		case "GOARM":
			b.Platform += "v" + strings.TrimSuffix(s.Value, ",softfloat")
		}
	}
	return b
}

// versionString is the version /health, the server card and MCP's serverInfo carry.
func versionString() string { return readBuildInfo().Version }

// describeRE is `git describe --tags --dirty` after a tag: TAG-N-gHASH, and -dirty.
var describeRE = regexp.MustCompile(`^(v\d+\.\d+\.\d+)(-[0-9A-Za-z.-]+?)?-(\d+)-g([0-9a-f]+)(-dirty)?$`)

// semverRE is a semantic version with a v (semver.org §9 and §10, loosely).
var semverRE = regexp.MustCompile(`^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// hashRE is `git describe --always --dirty` with no tag yet: the abbreviated commit.
var hashRE = regexp.MustCompile(`^([0-9a-f]{7,40})(-dirty)?$`)

// semver turns the Makefile's VERSION (`git describe --tags --always --dirty`) into a semantic
// version that sorts where the commit stands: v0.1.0 at the tag; v0.1.1-dev.3+g6e72c48, after
// v0.1.0 and before v0.1.1, three commits past it; +dirty (or .dirty) for a changed work tree;
// v0.0.0-dev+g6e72c48 before the first tag. "" for "" and "dev" (nothing stamped); anything
// else as it is.
func semver(describe string) string {
	d := strings.TrimSpace(describe)
	switch {
	case d == "" || d == "dev":
		return ""
	case semverRE.MatchString(d) && !describeRE.MatchString(d) && !strings.HasSuffix(d, "-dirty"):
		return d
	}
	if m := strings.TrimSuffix(d, "-dirty"); m != d && semverRE.MatchString(m) && !describeRE.MatchString(m) && !strings.Contains(m, "+") {
		return m + "+dirty"
	}
	if m := describeRE.FindStringSubmatch(d); m != nil {
		base, pre, n, hash, dirty := m[1], m[2], m[3], m[4], m[5]
		meta := "+g" + hash
		if dirty != "" {
			meta += ".dirty"
		}
		if pre != "" {
			return base + pre + ".dev." + n + meta // v0.2.0-rc.1 < v0.2.0-rc.1.dev.3 < v0.2.0
		}
		v := semverRE.FindStringSubmatch(base)
		patch, _ := strconv.Atoi(v[3])
		return fmt.Sprintf("v%s.%s.%d-dev.%s%s", v[1], v[2], patch+1, n, meta)
	}
	if m := hashRE.FindStringSubmatch(d); m != nil {
		meta := "+g" + m[1]
		if m[2] != "" {
			meta += ".dirty"
		}
		return "v0.0.0-dev" + meta
	}
	return d
}

// printVersion writes what `ownsona version` prints: the version on the first line, then the
// commit, the build date, the Go version and the platform.
func printVersion(w io.Writer, b buildInfo) error {
	commit := b.Commit
	switch {
	case commit == "":
		commit = "unknown"
	case b.Modified:
		commit += " (with uncommitted changes)"
	}
	date := b.Date
	if date == "" {
		date = "unknown"
	}
	_, err := fmt.Fprintf(w, "ownsona %s\ncommit    %s\nbuilt     %s\ngo        %s\nplatform  %s\n",
		b.Version, commit, date, b.GoVersion, b.Platform)
	return err
}
