package app

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

// previousRelease is the commit whose binary users run today: the code of the last landed CI
// run before issue 31. There are no release tags yet; when there are, this is the last one.
const previousRelease = "971cabd"

// upgradeFixture is a file that previousRelease's binary wrote as TestUpgrade_FromPreviousRelease
// does (`go test ./app/ -run TestUpgrade_FromPreviousRelease -update` rewrites it), for the
// checkouts without git history.
const upgradeFixture = "../testdata/upgrade/" + previousRelease + ".db.gz"

// What the previous release's file holds: memories remembered over HTTP with a personal access
// token, and imported from Markdown.
var (
	upgradeRemembered = []string{
		"The boat is moored at pier 7 in the north harbour",
		"Anna's birthday is on the 14th of March",
		"The router's admin page is at 192.168.1.1",
	}
	upgradeImported = []string{
		"The spare key is under the blue flower pot",
		"The bike lock code is written in the red notebook",
	}
	upgradeToken = "upgrade-script"
)

// previousBinary builds previousRelease's binary from git, once per test, as `make
// bench-goals` builds BENCH_BASE's: a detached worktree in a temporary directory, `go build`,
// the worktree removed. It skips the test where git or the commit is missing (a tarball
// checkout, a shallow clone).
func previousBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds " + previousRelease + " from git, a minute or two cold; not with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git command, so no " + previousRelease + " to build the previous release from: " + err.Error())
	}
	if out, err := exec.Command("git", "-C", "..", "rev-parse", "--verify", "--quiet", previousRelease+"^{commit}").CombinedOutput(); err != nil {
		t.Skipf("commit %s is not in this checkout (a tarball, or a shallow clone?), so the previous release cannot be built: %v %s",
			previousRelease, err, bytes.TrimSpace(out))
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if out, err := exec.Command("git", "-C", "..", "worktree", "add", "--detach", src, previousRelease).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add %s: %v\n%s", previousRelease, err, out)
	}
	defer func() {
		if out, err := exec.Command("git", "-C", "..", "worktree", "remove", "--force", src).CombinedOutput(); err != nil {
			t.Errorf("git worktree remove %s: %v\n%s", src, err, out)
		}
	}()
	bin := filepath.Join(dir, "ownsona-"+previousRelease)
	cmd := exec.Command(goBin, "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of %s: %v\n%s", previousRelease, err, out)
	}
	return bin
}

// serveWith runs bin's `serve` on db until cleanup or stop, and returns its MCP URL and its log
// lines so far (JSON, one a line).
func serveWith(t *testing.T, bin, db string) (url string, logs func() []string, stop func()) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--db", db, "--addr", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword, "OWNSONA_RATE_LIMIT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	logs = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(lines)
	}
	urls := make(chan string, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
			var line struct{ Message, URL string }
			// "serving MCP", or the previous release's "serving MCP over HTTP".
			if json.Unmarshal(sc.Bytes(), &line) == nil && strings.HasPrefix(line.Message, "serving MCP") && line.URL != "" {
				urls <- line.URL
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			<-exited
			cmd.Wait()
		})
	}
	t.Cleanup(stop)
	select {
	case url = <-urls:
		return url, logs, stop
	case <-exited:
		cmd.Wait()
		t.Fatalf("%s serve exited before serving: %v\n%s", filepath.Base(bin), cmd.ProcessState, strings.Join(logs(), "\n"))
	}
	return "", logs, stop
}

// runWith runs a command of bin and returns its standard output.
func runWith(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(bin), strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// exportedMemories is bin's `export` of db: each memory's id and text.
func exportedMemories(t *testing.T, bin, db string) map[uint64]string {
	t.Helper()
	got := map[uint64]string{}
	sc := bufio.NewScanner(strings.NewReader(runWith(t, bin, "export", "--db", db)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			ID   uint64
			Text string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		if m.ID != 0 {
			got[m.ID] = m.Text
		}
	}
	return got
}

// writeWithPrevious has bin (the previous release) write db as a user would: a server, a
// personal access token made through its admin socket, memories remembered over HTTP with it
// and others imported from Markdown. It returns the token.
func writeWithPrevious(t *testing.T, bin, db string) string {
	t.Helper()
	url, _, stop := serveWith(t, bin, db)
	defer stop()
	token := patFrom(t, runWith(t, bin, "token", "create", "--db", db, "--name", upgradeToken))
	for _, text := range upgradeRemembered {
		if !rememberHTTP(t, url, token, text) {
			t.Fatalf("remember %q with %s failed", text, previousRelease)
		}
	}
	notes := filepath.Join(t.TempDir(), "notes.md")
	var md strings.Builder
	for _, text := range upgradeImported {
		fmt.Fprintf(&md, "- %s\n", text)
	}
	if err := os.WriteFile(notes, []byte(md.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	runWith(t, bin, "import", "--format", "markdown", notes, "--db", db)
	return token
}

// schemaOf is the schema version recorded in the file at path.
func schemaOf(t *testing.T, path string) int {
	t.Helper()
	db, err := kv.Open(path, kv.Options{ReadOnly: true, Migrations: memory.Migrations, Timeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	v, err := db.SchemaVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// upgradeBackups are the backups an upgrade left beside db.
func upgradeBackups(t *testing.T, db string) []string {
	t.Helper()
	names, err := filepath.Glob(db + ".pre-v*")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// checkUpgraded opens db, a file of the previous release at schema version from holding want
// (memories by id) and the token, with the current binary, as a server, and checks what must
// show: it migrates if its schema is older, after a backup beside it (mode 0600, checked, the
// file as it was, its path logged) and with none when nothing needs migrating; then every
// memory is there, the token still works, and `ownsona check` passes.
func checkUpgraded(t *testing.T, db string, from int, want map[uint64]string, token string) {
	t.Helper()
	bin := ownsonaBinary(t)
	to := len(memory.Migrations)
	url, logs, stop := serveWith(t, bin, db)
	var logged []string
	for _, l := range logs() {
		var line struct{ Message, Backup string }
		if json.Unmarshal([]byte(l), &line) == nil && line.Message == "backed up the file before migrating it" {
			logged = append(logged, line.Backup)
		}
	}
	baks := upgradeBackups(t, db)
	switch {
	case from == to:
		if len(baks) != 0 || len(logged) != 0 {
			t.Errorf("schema %d is current, yet backups %v beside the file, logged %v; want none", from, baks, logged)
		}
	case len(baks) != 1:
		t.Errorf("migrating from schema %d to %d: backups %v beside the file, want one", from, to, baks)
	default:
		bak := baks[0]
		if !regexp.MustCompile(regexp.QuoteMeta(db) + fmt.Sprintf(`\.pre-v%d-\d{8}T\d{6}Z\.bak$`, to)).MatchString(bak) {
			t.Errorf("backup %s, want %s.pre-v%d-YYYYMMDDTHHMMSSZ.bak", bak, db, to)
		}
		if !slices.Equal(logged, []string{bak}) {
			t.Errorf("logged backups %v, want [%s]", logged, bak)
		}
		// SECURITY.md ST-14: the DB and backups have mode 0600.
		if fi, err := os.Stat(bak); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("backup %s: %v, mode %v; want 0600", bak, err, fi.Mode().Perm())
		}
		if got := schemaOf(t, bak); got != from {
			t.Errorf("backup's schema = %d, want %d", got, from)
		}
		if out := ownsona(t, "check", bak); !strings.Contains(out, "ok (schema "+fmt.Sprint(from)) {
			t.Errorf("check of the backup: %q", out)
		}
	}
	if !rememberHTTP(t, url, token, "Written after the upgrade with the old token") {
		t.Error("the previous release's personal access token does not work after the upgrade")
	}
	if out := ownsona(t, "token", "list", "--db", db); !strings.Contains(out, upgradeToken) {
		t.Errorf("token list after the upgrade = %q, want %s", out, upgradeToken)
	}
	stop()

	if got := schemaOf(t, db); got != to {
		t.Errorf("schema after the upgrade = %d, want %d", got, to)
	}
	out := ownsona(t, "check", "--db", db)
	if !strings.Contains(out, fmt.Sprintf("ok (schema %d, %d memories,", to, len(want)+1)) || !strings.Contains(out, "1 personal access token") {
		t.Errorf("check after the upgrade = %q, want schema %d, %d memories and the token", out, to, len(want)+1)
	}
	got := exportedMemories(t, bin, db)
	for id, text := range want {
		if got[id] != text {
			t.Errorf("memory %d after the upgrade = %q, want %q", id, got[id], text)
		}
	}
}

// TestUpgrade_FromPreviousRelease: a file that the previous release's binary (built here from
// git) wrote as a user would opens with this code, migrates if its schema is older after an
// automatic backup, keeps every memory and token and passes `ownsona check`; a file from a
// newer schema is refused, untouched, with a message naming both versions and what to do.
// Slow (it builds the previous release): the Makefile runs it in SLOW_TESTS.
func TestUpgrade_FromPreviousRelease(t *testing.T) {
	prev := previousBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	token := writeWithPrevious(t, prev, db)
	want := exportedMemories(t, prev, db)
	if got := len(want); got != len(upgradeRemembered)+len(upgradeImported) {
		t.Fatalf("%s's export holds %d memories, want %d", previousRelease, got, len(upgradeRemembered)+len(upgradeImported))
	}
	from := schemaOf(t, db)
	t.Logf("%s wrote schema %d; this code reads up to %d", previousRelease, from, len(memory.Migrations))
	if *updateGolden {
		writeFixture(t, db, token)
	}
	pristine := filepath.Join(t.TempDir(), "ownsona.db")
	if err := kv.CopyFile(db, pristine); err != nil {
		t.Fatal(err)
	}

	t.Run("opens, migrates if older, checks", func(t *testing.T) {
		checkUpgraded(t, db, from, want, token)
	})

	t.Run("a newer schema is refused", func(t *testing.T) {
		checkRefusesNewer(t, pristine)
	})
}

// checkRefusesNewer moves the file at path one schema version past this code's (a migration
// that this code lacks, run through kv as a newer ownsona would, backup included), and
// checks that serve and check refuse it, untouched, naming both versions, what to do and the
// backup.
func checkRefusesNewer(t *testing.T, path string) {
	t.Helper()
	newer := len(memory.Migrations) + 1
	ms := append(slices.Clone(memory.Migrations), kv.Migration{Version: newer, Name: "a newer release's change",
		Up: func(tx *kv.Tx) error { _, err := tx.CreateBucketIfNotExists("from_the_future"); return err }})
	var up kv.Upgrade
	db, err := kv.Open(path, kv.Options{Migrations: ms, OnUpgrade: func(u kv.Upgrade) { up = u }})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if up.Backup == "" {
		t.Fatal("the newer release's migration took no backup")
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"serve", "--db", path, "--addr", "127.0.0.1:0"},
		{"stdio", "--db", path},
		{"check", "--db", path},
	} {
		t.Run(args[0], func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard, not an assertion
			defer cancel()
			cmd := exec.CommandContext(ctx, ownsonaBinary(t), args...)
			cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword)
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("ownsona %s: %v, want a refusal\n%s", strings.Join(args, " "), err, out)
			}
			for _, w := range []string{
				fmt.Sprintf("schema version %d", newer),
				fmt.Sprintf("reads schema versions up to %d", newer-1),
				"run that newer ownsona",
				"put back the backup the upgrade left beside it, " + up.Backup,
			} {
				if !strings.Contains(string(out), w) {
					t.Errorf("ownsona %s said %q; want it to contain %q", strings.Join(args, " "), out, w)
				}
			}
		})
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("the newer file's bytes changed")
	}
	if got := upgradeBackups(t, path); !slices.Equal(got, []string{up.Backup}) {
		t.Errorf("backups beside the newer file: %v, want only the newer release's %s", got, up.Backup)
	}
}

// writeFixture stores db as upgradeFixture, gzipped, with the token in its header's comment.
func writeFixture(t *testing.T, db, token string) {
	t.Helper()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Comment = token
	zw.Name = previousRelease + ".db"
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(upgradeFixture), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(upgradeFixture, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", upgradeFixture, buf.Len())
}

// TestUpgrade_Fixture is TestUpgrade_FromPreviousRelease on the file the previous release
// wrote and testdata keeps, for every checkout (no git, no build of the old code): it opens,
// migrates if older after a backup, keeps every memory and token, checks; made newer, it is
// refused.
func TestUpgrade_Fixture(t *testing.T) {
	f, err := os.Open(upgradeFixture)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	token := zr.Comment
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}
	pristine := filepath.Join(t.TempDir(), "ownsona.db")
	if err := os.WriteFile(pristine, b, 0o600); err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{}
	for i, text := range append(slices.Clone(upgradeRemembered), upgradeImported...) {
		want[uint64(i+1)] = text
	}
	from := schemaOf(t, db)
	t.Run("opens, migrates if older, checks", func(t *testing.T) {
		checkUpgraded(t, db, from, want, token)
	})
	t.Run("a newer schema is refused", func(t *testing.T) {
		checkRefusesNewer(t, pristine)
	})
}
