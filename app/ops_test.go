package app

import (
	"github.com/ownsona/ownsona/app/adminsock"

	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveDB runs `ownsona serve` on db and returns its MCP URL; the server is stopped (SIGINT) at
// cleanup.
func serveDB(t *testing.T, db string) string {
	url, _ := serveDBStop(t, db)
	return url
}

// serveDBStop is serveDB with a function that stops the server now (and waits for it).
func serveDBStop(t *testing.T, db string) (string, func()) {
	t.Helper()
	cmd := exec.Command(ownsonaBinary(t), "serve", "--db", db, "--addr", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword, "OWNSONA_RATE_LIMIT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Message, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving MCP" {
				urls <- line.URL
			}
		}
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute): // against a hang only
				cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	select {
	case u := <-urls:
		return u, stop
	case <-time.After(2 * time.Minute): // against a hang only
		t.Fatal("serve did not start within 2 minutes")
	}
	return "", stop
}

// ownsona runs a command of the binary and returns its standard output.
func ownsona(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(ownsonaBinary(t), args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ownsona %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// patFrom finds the osk_ token in `token create` output.
func patFrom(t *testing.T, out string) string {
	t.Helper()
	for f := range strings.FieldsSeq(out) {
		if strings.HasPrefix(f, "osk_") {
			return f
		}
	}
	t.Fatalf("no token in %q", out)
	return ""
}

// rememberHTTP stores text through /mcp with a bearer token and reports whether it was
// acknowledged.
func rememberHTTP(t *testing.T, url, token, text string) bool {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "remember", "arguments": map[string]any{"text": text}}})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"ok":true`))
}

// exportedTexts are the texts in an `ownsona export` of db.
func exportedTexts(t *testing.T, db string) map[string]bool {
	t.Helper()
	texts := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(ownsona(t, "export", "--db", db)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct{ Text string }
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Text != "" {
			texts[m.Text] = true
		}
	}
	return texts
}

// TestAdminSocket_CommandsWhileServing: with serve holding the file, token, check, export and
// stdio reach it through the admin socket, and the Go SDK over stdio sees what HTTP wrote.
func TestAdminSocket_CommandsWhileServing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ownsona.db")
	url := serveDB(t, db)
	fi, err := os.Stat(adminsock.Path(db))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin socket %s: %v, mode %v; want a socket with mode 0600", adminsock.Path(db), err, fi.Mode())
	}
	token := patFrom(t, ownsona(t, "token", "create", "--db", db, "--name", "writer"))
	if !rememberHTTP(t, url, token, "The boat is moored at pier 7") {
		t.Fatal("remember over HTTP failed")
	}
	if out := ownsona(t, "token", "list", "--db", db); !strings.Contains(out, "writer") {
		t.Errorf("token list through the socket: %q", out)
	}
	if out := ownsona(t, "check", "--db", db); !strings.Contains(out, "ok (schema") || !strings.Contains(out, "1 memory,") {
		t.Errorf("check through the socket: %q", out)
	}
	if !exportedTexts(t, db)["The boat is moored at pier 7"] {
		t.Error("export through the socket misses the memory written over HTTP")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil)
	s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(ownsonaBinary(t), "stdio", "--db", db, "--log-level", "error")}, nil)
	if err != nil {
		t.Fatalf("stdio while serve runs: %v", err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "where is the boat"}})
	if err != nil || res.IsError {
		t.Fatalf("recall over stdio: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), "pier 7") {
		t.Errorf("stdio recall = %s, want the memory HTTP wrote", b)
	}
	res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "remember", Arguments: map[string]any{"text": "Written by the desktop client through the socket"}})
	if err != nil || res.IsError {
		t.Fatalf("remember over stdio: %v %+v", err, res)
	}
	if !exportedTexts(t, db)["Written by the desktop client through the socket"] {
		t.Error("a memory written over stdio through the socket is not in the server's file")
	}

	// While that desktop client stays connected (issue 30, item 4: what install-service --user
	// promises), a backup and a second stdio client work too.
	backup := filepath.Join(filepath.Dir(db), "backup.db")
	if out := ownsona(t, "backup", "--db", db, "--to", backup); !strings.HasPrefix(out, "backed up "+db+" to "+backup+" (") {
		t.Errorf("backup while a stdio client is connected: %q", out)
	}
	if !exportedTexts(t, backup)["Written by the desktop client through the socket"] {
		t.Error("the backup misses the memory the stdio client wrote")
	}
	s2, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(ownsonaBinary(t), "stdio", "--db", db, "--log-level", "error")}, nil)
	if err != nil {
		t.Fatalf("a second stdio client while the first is connected: %v", err)
	}
	defer s2.Close()
	for i, c := range []*mcp.ClientSession{s2, s} {
		res, err := c.CallTool(ctx, &mcp.CallToolParams{Name: "recall", Arguments: map[string]any{"query": "written by the desktop client"}})
		if err != nil || res.IsError {
			t.Fatalf("recall over stdio client %d: %v %+v", 2-i, err, res)
		}
		if b, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(b), "Written by the desktop client through the socket") {
			t.Errorf("recall over stdio client %d = %s, want the first client's memory", 2-i, b)
		}
	}
}

// TestBackup_UnderWriteLoad: a writer keeps committing while backup runs; the backup checks
// and holds every write acknowledged before it started.
func TestBackup_UnderWriteLoad(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	url := serveDB(t, db)
	token := patFrom(t, ownsona(t, "token", "create", "--db", db, "--name", "load"))

	var mu sync.Mutex
	var acked []string
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			text := fmt.Sprintf("load write %d: the plants need water on day %d", i, i)
			if rememberHTTP(t, url, token, text) {
				mu.Lock()
				acked = append(acked, text)
				mu.Unlock()
			}
		}
	}()
	waitFor := func(n int) {
		deadline := time.Now().Add(2 * time.Minute) // against a hang only: a condition
		for time.Now().Before(deadline) {
			mu.Lock()
			k := len(acked)
			mu.Unlock()
			if k >= n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("fewer than %d writes acknowledged in 2 minutes", n)
	}
	waitFor(50)
	for round := range 3 {
		mu.Lock()
		before := append([]string(nil), acked...)
		mu.Unlock()
		backup := filepath.Join(dir, fmt.Sprintf("backup-%d.db", round))
		ownsona(t, "backup", "--db", db, "--to", backup)
		fi, err := os.Stat(backup)
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("backup file: %v, mode %v; want 0600", err, fi.Mode())
		}
		ownsona(t, "check", backup)
		got := exportedTexts(t, backup)
		missing := 0
		for _, text := range before {
			if !got[text] {
				missing++
			}
		}
		if missing > 0 {
			t.Errorf("round %d: backup misses %d of the %d writes acknowledged before it started", round, missing, len(before))
		}
		waitFor(len(before) + 20)
	}
	close(stop)
	<-done
}

// TestCompact_KilledMidway: SIGKILL at random moments of compact, 20 times, never loses a
// memory or leaves a file that fails check.
func TestCompact_KilledMidway(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	// A file of a few megabytes, so that compaction takes long enough to be killed mid-way.
	var in bytes.Buffer
	var texts []string
	for i := range 400 {
		text := fmt.Sprintf("compact memory %d: %s", i, strings.Repeat("the quiet library by the river ", 20))
		texts = append(texts, text)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":%q}}}`+"\n", i+1, text)
	}
	cmd := exec.Command(ownsonaBinary(t), "stdio", "--db", db, "--log-level", "error")
	cmd.Stdin = &in
	if out, err := cmd.Output(); err != nil || strings.Count(string(out), `\"ok\":true`) != 400 {
		t.Fatalf("seeding: %v (%d ok)", err, strings.Count(string(out), `\"ok\":true`))
	}
	want := exportedTexts(t, db)
	// Kill at random points of the copy, by how much of the new file is written (a condition,
	// not a delay: a loaded machine moves the moment, never the point), so that some are
	// killed mid-way and some finish first.
	fi, err := os.Stat(db)
	if err != nil {
		t.Fatal(err)
	}
	size := fi.Size()
	killed := 0
	for round := range 20 {
		old, _ := filepath.Glob(filepath.Join(dir, ".ownsona.db.tmp-*")) // of killed rounds
		c := exec.Command(ownsonaBinary(t), "compact", "--db", db)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { c.Wait(); close(exited) }()
		at := rand.Int64N(size + size/4) // past the file's size: the copy finishes first
		func() {
			for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				select {
				case <-exited:
					return
				default:
				}
				tmp, _ := filepath.Glob(filepath.Join(dir, ".ownsona.db.tmp-*"))
				for _, f := range tmp {
					if fi, err := os.Stat(f); err == nil && !slices.Contains(old, f) && fi.Size() >= at {
						c.Process.Signal(syscall.SIGKILL)
						return
					}
				}
			}
			t.Fatalf("round %d: compact neither wrote %d bytes nor ended in 2 minutes", round, at)
		}()
		<-exited
		if ws, ok := c.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed++
		}
		if out, err := exec.Command(ownsonaBinary(t), "check", "--db", db).CombinedOutput(); err != nil {
			t.Fatalf("round %d: check after SIGKILL of compact: %v\n%s", round, err, out)
		}
		got := exportedTexts(t, db)
		for text := range want {
			if !got[text] {
				t.Fatalf("round %d: a memory is missing after compact was killed", round)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d memories, want %d", round, len(got), len(want))
		}
	}
	// Temporary files of killed compactions are the only trace; the next compaction removes them.
	ownsona(t, "compact", "--db", db)
	if left, _ := filepath.Glob(filepath.Join(dir, ".ownsona.db.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left after a full compact: %v", left)
	}
	if n := len(exportedTexts(t, db)); n != len(texts) {
		t.Errorf("after a full compact: %d memories, want %d", n, len(texts))
	}
	t.Logf("%d of 20 compactions killed mid-way (the others had finished)", killed)
}

// TestBackup_Scheduled: each scheduled backup checks, and only the newest BackupKeep stay.
func TestBackup_Scheduled(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t, clock)
	cfg.BackupDir = filepath.Join(t.TempDir(), "backups")
	cfg.BackupKeep = 3
	a := MustOpen(t, cfg)
	mustOK(t, a, "remember", map[string]any{"text": "The spare tyre is in the garage"})
	var paths []string
	for range 5 {
		p, err := a.backupNow()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		clock.Advance(time.Hour)
	}
	entries, _ := os.ReadDir(cfg.BackupDir)
	var got []string
	for _, e := range entries {
		got = append(got, filepath.Join(cfg.BackupDir, e.Name()))
	}
	if strings.Join(got, ",") != strings.Join(paths[2:], ",") {
		t.Errorf("kept %v, want the newest three %v", got, paths[2:])
	}
	if !exportedTexts(t, got[2])["The spare tyre is in the garage"] {
		t.Error("the newest backup lacks the memory")
	}
}

// TestCrash_ServeKilled: SIGKILL of serve at random moments under HTTP writes, 20 times: every
// acknowledged write survives, check passes, and the next start replaces the stale admin socket.
func TestCrash_ServeKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server 20 times")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	mustCreateDB(t, db)
	token := patFrom(t, ownsona(t, "token", "create", "--db", db, "--name", "crash"))
	acked := map[string]bool{}
	for round := range 20 {
		cmd := exec.Command(ownsonaBinary(t), "serve", "--db", db, "--addr", "127.0.0.1:0", "--log-level", "info")
		cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword, "OWNSONA_RATE_LIMIT=0")
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		url := ""
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Message, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving MCP" {
				url = line.URL
				break
			}
		}
		go io.Copy(io.Discard, stderr)
		if url == "" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: serve did not start", round)
		}
		var mu sync.Mutex
		stop := make(chan struct{})
		var wg sync.WaitGroup
		roundAcked := 0
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					text := fmt.Sprintf("round %d writer %d write %d: the keys are on the hook", round, w, i)
					if rememberHTTP(t, url, token, text) {
						mu.Lock()
						acked[text] = true
						roundAcked++
						mu.Unlock()
					}
				}
			}()
		}
		// The kill follows a random number of acknowledgements, not a delay (a loaded machine
		// moves the moment, never the point); the writers keep going, so it lands mid-write.
		strikeAt := 1 + rand.IntN(40)
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			n := roundAcked
			mu.Unlock()
			if n >= strikeAt {
				break
			}
			if time.Now().After(deadline) { // against a hang only
				t.Fatalf("round %d: %d writes acknowledged in 2 minutes, want %d", round, n, strikeAt)
			}
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		close(stop)
		wg.Wait()
		if out, err := exec.Command(ownsonaBinary(t), "check", "--db", db).CombinedOutput(); err != nil {
			t.Fatalf("round %d: check after SIGKILL: %v\n%s", round, err, out)
		}
	}
	got := exportedTexts(t, db)
	missing := 0
	for text := range acked {
		if !got[text] {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged writes missing after 20 SIGKILLs of serve", missing, len(acked))
	}
	t.Logf("%d acknowledged writes over 20 SIGKILLs of serve, all present", len(acked))
}

// TestBackup_CopyOfStoppedFile: copying the file of a stopped server is a complete backup:
// memories, tokens and OAuth keys all work from the copy.
func TestBackup_CopyOfStoppedFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	url, stop := serveDBStop(t, db)
	token := patFrom(t, ownsona(t, "token", "create", "--db", db, "--name", "copy"))
	if !rememberHTTP(t, url, token, "The wine cellar key hangs by the stairs") {
		t.Fatal("remember failed")
	}
	stop()
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(dir, "copy", "ownsona.db")
	os.MkdirAll(filepath.Dir(copyPath), 0o700)
	if err := os.WriteFile(copyPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ownsona(t, "check", copyPath)
	url2 := serveDB(t, copyPath)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
		"params": map[string]any{"name": "recall", "arguments": map[string]any{"query": "wine cellar key"}}})
	req, _ := http.NewRequest(http.MethodPost, url2, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(got, []byte("by the stairs")) {
		t.Errorf("the copy, served, with the token made before the copy: %d %s", resp.StatusCode, got)
	}
}

// TestRun_FileHeldByStdio: while a desktop client's `ownsona stdio` holds the file, a second
// client and an admin command fail with an error that names that process, not serve, and says
// what to run instead.
func TestRun_FileHeldByStdio(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the holder is found through /proc/locks")
	}
	db := filepath.Join(t.TempDir(), "ownsona.db")
	mustCreateDB(t, db)
	p := startStdio(t, db, "http://127.0.0.1:1/v1", "unused") // the embedder is never reached
	p.call(t, "count_memories", map[string]any{})             // the file is open once it answers
	for _, args := range [][]string{{"stdio", "--db", db}, {"token", "list", "--db", db}} {
		cmd := exec.Command(ownsonaBinary(t), args...)
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("ownsona %s succeeded while stdio holds the file:\n%s", strings.Join(args, " "), out)
		}
		want := fmt.Sprintf("(pid %d: ownsona stdio --db %s", p.cmd.Process.Pid, db)
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "run `ownsona serve`") {
			t.Errorf("ownsona %s: %s\nwant it to name %q and say to run serve", strings.Join(args, " "), out, want)
		}
	}
}

// TestServe_FileHeldByServe: a second serve on a file another serve holds (and answers for on
// the admin socket) says that serve already serves it, naming it, not that its socket did not
// answer (issue 30).
func TestServe_FileHeldByServe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the holder is found through /proc/locks")
	}
	db := filepath.Join(t.TempDir(), "ownsona.db")
	serveDB(t, db)
	cmd := exec.Command(ownsonaBinary(t), "serve", "--db", db, "--addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a second serve on a served file started:\n%s", out)
	}
	if !strings.Contains(string(out), "already serves it") || !strings.Contains(string(out), "ownsona serve --db "+db) ||
		strings.Contains(string(out), "did not answer") {
		t.Errorf("second serve: %s\nwant it to say which serve already serves the file", out)
	}
}

// TestServe_ForeignSocket (issue 13, item 12): serve refuses to start when another user owns
// the admin socket's path (they could answer the operator's commands in its place), naming
// the path; the file is left alone.
func TestServe_ForeignSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make a file another user owns")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	sock := db + ".sock"
	if err := os.WriteFile(sock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(sock, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, []string{"serve", "--db", db, "--addr", "127.0.0.1:0"}, func(string) string { return "" },
		strings.NewReader(""), io.Discard, &stderr)
	if err == nil || !strings.Contains(err.Error(), sock) || !strings.Contains(err.Error(), "another user owns it") {
		t.Fatalf("serve with another user's file at the socket path: %v, want a refusal naming %s", err, sock)
	}
	if fi, err := os.Stat(sock); err != nil || fi.Size() != 0 {
		t.Errorf("the other user's file was touched: %v", err)
	}
}

// TestAdminSocket_RevokeAndRotateLive (issue 13, item 13): commands through the admin socket
// act on the running server's own grants and keys: clients revoke-all refuses the revoked
// access token at once, and keys rotate signs the next token with the new key at once (before,
// both waited for the next start, as the command opened stores of its own over the file).
func TestAdminSocket_RevokeAndRotateLive(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	a := MustOpen(t, cfg)
	if err := a.openAdminSocket(t.Context()); err != nil {
		t.Fatal(err)
	}
	h := a.Handler()
	run := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := Run(t.Context(), append(args, "--db", cfg.DB), func(string) string { return "" }, strings.NewReader(""), &out, io.Discard); err != nil {
			t.Fatalf("ownsona %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}

	tok := newOAuthClient(t, a, "socket test").login("")
	if rec := mcpRequest(h, "Bearer "+tok.AccessToken, msgToolsList); rec.Code != http.StatusOK {
		t.Fatalf("fresh access token: %d %s", rec.Code, rec.Body)
	}
	if out := run("clients", "revoke-all"); !strings.Contains(out, "revoked 1 grant") {
		t.Errorf("clients revoke-all printed %q", out)
	}
	wantRefused(t, mcpRequest(h, "Bearer "+tok.AccessToken, msgToolsList), "invalid_token")

	before := a.Auth().Keys().ActiveKID()
	run("keys", "rotate")
	after := a.Auth().Keys().ActiveKID()
	if after == before {
		t.Fatalf("the server still signs with %s after keys rotate", before)
	}
	tok = newOAuthClient(t, a, "after rotation").login("")
	header, _, _ := strings.Cut(tok.AccessToken, ".")
	b, err := base64.RawURLEncoding.DecodeString(header)
	if err != nil || !strings.Contains(string(b), `"kid":"`+after+`"`) {
		t.Errorf("a token minted after the rotation has header %s, want kid %s", b, after)
	}
}
