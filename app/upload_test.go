package app

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// importFixture reads a file of testdata/import.
func importFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "import", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// toolAs calls a tool over the real handler with token and returns its payload.
func toolAs(tb testing.TB, a *App, token, name string, args any) map[string]any {
	tb.Helper()
	argJSON, _ := json.Marshal(args)
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, argJSON)
	rec := mcpRequest(a.Handler(), "Bearer "+token, body, "MCP-Protocol-Version", "2025-11-25")
	var env struct {
		Result *toolResult `json:"result"`
	}
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &env) != nil || env.Result == nil {
		tb.Fatalf("%s: %d %s", name, rec.Code, rec.Body)
	}
	return env.Result.StructuredContent
}

// ticket is what prepare_import_upload returned.
type ticket struct{ id, url, token string }

func prepareAs(tb testing.TB, a *App, token, filename string) ticket {
	tb.Helper()
	p := toolAs(tb, a, token, "prepare_import_upload", map[string]any{"filename": filename})
	if p["ok"] != true {
		tb.Fatalf("prepare_import_upload: %v", p)
	}
	t := ticket{p["upload_id"].(string), p["upload_url"].(string), p["upload_token"].(string)}
	if !strings.HasPrefix(t.url, "http://127.0.0.1/mcp/upload/") || !strings.HasPrefix(t.token, "osu_") || len(t.token) != 4+43 {
		tb.Fatalf("ticket %+v", t)
	}
	if !strings.Contains(p["curl"].(string), "--data-binary @"+filename) || p["max_bytes"] != float64(64<<20) {
		tb.Errorf("payload %v", p)
	}
	return t
}

// upload POSTs body to url with the bearer token (none when ""); header adds headers.
func upload(a *App, url, token string, body io.Reader, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, url, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return rec
}

// waitImport polls import_status until the import id leaves waiting and running.
func waitImport(tb testing.TB, a *App, token, id string) map[string]any {
	tb.Helper()
	// A condition, with a deadline only against a hang: a decompression bomb under the race
	// detector on a busy two-core machine takes most of a minute to read through.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		p := toolAs(tb, a, token, "import_status", map[string]any{"id": id})
		if p["ok"] != true {
			tb.Fatalf("import_status: %v", p)
		}
		job := p["imports"].([]any)[0].(map[string]any)
		if s := job["state"]; s != "running" && s != "waiting" {
			return job
		}
		if time.Now().After(deadline) {
			tb.Fatalf("import %s still %v", id, job["state"])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// wantUploadError checks a refusal: its status and its error code.
func wantUploadError(tb testing.TB, rec *httptest.ResponseRecorder, status int, code string) {
	tb.Helper()
	var m map[string]any
	json.Unmarshal(rec.Body.Bytes(), &m)
	if rec.Code != status || m["error"] != code || m["error_description"] == "" {
		tb.Errorf("got %d %s; want %d %s with a description", rec.Code, rec.Body, status, code)
	}
}

// TestUpload_Flow: a client prepares an upload, POSTs the file with the upload token alone,
// and follows the import, which records it as the memories' source_client; the token works
// once, and another client sees nothing of the import.
func TestUpload_Flow(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	owner, other := patFor(t, a), testPAT(t, a)
	tk := prepareAs(t, a, owner, "ownsona.jsonl")
	if p := toolAs(t, a, owner, "import_status", map[string]any{"id": tk.id}); p["imports"].([]any)[0].(map[string]any)["state"] != "waiting" {
		t.Errorf("before the upload: %v", p)
	}

	file := importFixture(t, "ownsona.jsonl")
	rec := upload(a, tk.url, tk.token, bytes.NewReader(file))
	if rec.Code != http.StatusAccepted || !strings.Contains(rec.Body.String(), `"state":"running"`) {
		t.Fatalf("upload: %d %s", rec.Code, rec.Body)
	}
	job := waitImport(t, a, owner, tk.id)
	errs, _ := json.Marshal(job["errors"])
	if job["state"] != "done" || job["format"] != "ownsona" || job["read"] != 3.0 || job["imported"] != 3.0 || job["failed"] != 1.0 ||
		job["bytes"] != float64(len(file)) || !strings.Contains(string(errs), `"error":"text looks like a secret (aws-access-key)`) || !strings.Contains(string(errs), `"line":5}`) {
		t.Errorf("job %v", job)
	}
	list := mustOK(t, a, "list_memories", map[string]any{"limit": 10})
	for _, m := range list["memories"].([]any) {
		if c := m.(map[string]any)["source_client"]; c != "pat:test" {
			t.Errorf("source_client %v, want the uploader's pat:test", c)
		}
	}

	t.Run("the token works once", func(t *testing.T) {
		wantUploadError(t, upload(a, tk.url, tk.token, bytes.NewReader(file)), http.StatusUnauthorized, "upload_token_used")
	})
	t.Run("another client sees nothing of it", func(t *testing.T) {
		if p := toolAs(t, a, other, "import_status", map[string]any{}); len(p["imports"].([]any)) != 0 {
			t.Errorf("import_status of another client: %v", p)
		}
		if p := toolAs(t, a, other, "import_status", map[string]any{"id": tk.id}); p["ok"] != false || p["error"].(map[string]any)["code"] != "NOT_FOUND" {
			t.Errorf("import_status(id) of another client: %v", p)
		}
	})
	t.Run("the console shows it", func(t *testing.T) {
		b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
		b.signIn()
		page := b.page("/console/system")
		for _, want := range []string{"ownsona.jsonl</code> from pat:test, ownsona", "3 read, 3 imported, 0 already stored, 1 failed", "line 5: text looks like a secret"} {
			if !strings.Contains(page, want) {
				t.Errorf("the System page lacks %q", want)
			}
		}
	})
}

// TestUpload_Refused: every way an upload is refused, each with a status and an error that
// says what was wrong.
func TestUpload_Refused(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, testConfig(t, clock))
	owner, other := patFor(t, a), testPAT(t, a)
	mine, theirs := prepareAs(t, a, owner, "a.md"), prepareAs(t, a, other, "b.md")
	small := func() io.Reader { return strings.NewReader("Likes tea.\n") }

	for _, tt := range []struct {
		name   string
		url    string
		token  string
		body   io.Reader
		header []string
		status int
		code   string
	}{
		{"no token", mine.url, "", small(), nil, 401, "upload_token_required"},
		{"an access token", mine.url, owner, small(), nil, 401, "access_token_not_accepted"},
		{"a made-up token", mine.url, "osu_" + strings.Repeat("A", 43), small(), nil, 401, "invalid_upload_token"},
		{"another client's token at this URL", mine.url, theirs.token, small(), nil, 403, "wrong_upload_url"},
		{"the token at an unknown URL", "http://127.0.0.1/mcp/upload/nope", mine.token, small(), nil, 403, "wrong_upload_url"},
		{"a declared size past the cap", mine.url, mine.token, strings.NewReader("x"), []string{"Content-Length", fmt.Sprint(64<<20 + 1)}, 413, "upload_too_large"},
		{"an empty file", mine.url, mine.token, strings.NewReader("\n"), nil, 400, "empty_upload"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, tt.url, tt.body)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			if len(tt.header) == 2 {
				req.ContentLength = 64<<20 + 1
			}
			rec := httptest.NewRecorder()
			a.Handler().ServeHTTP(rec, req)
			wantUploadError(t, rec, tt.status, tt.code)
		})
	}
	t.Run("a body past the cap", func(t *testing.T) {
		// Chunked (no Content-Length): refused once the 64 MiB are read; the token stays good.
		body := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("Likes tea.\n"), 64<<20/11+1)))
		rec := upload(a, mine.url, mine.token, body, "Transfer-Encoding", "chunked")
		wantUploadError(t, rec, http.StatusRequestEntityTooLarge, "upload_too_large")
		if rec := upload(a, mine.url, mine.token, small()); rec.Code != http.StatusAccepted {
			t.Errorf("after a refused size, the token: %d %s", rec.Code, rec.Body)
		}
		waitImport(t, a, owner, mine.id)
	})
	t.Run("the upload token where an access token is expected", func(t *testing.T) {
		rec := mcpRequest(a.Handler(), "Bearer "+theirs.token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "invalid_token") {
			t.Errorf("/mcp with an upload token: %d %s", rec.Code, rec.Body)
		}
	})
	t.Run("an expired token", func(t *testing.T) {
		clock.Advance(10*time.Minute + time.Second)
		wantUploadError(t, upload(a, theirs.url, theirs.token, small()), http.StatusUnauthorized, "upload_token_expired")
		p := toolAs(t, a, other, "import_status", map[string]any{"id": theirs.id})
		if s := p["imports"].([]any)[0].(map[string]any)["state"]; s != "expired" {
			t.Errorf("state %v, want expired", s)
		}
	})
	t.Run("a read-only token cannot prepare an upload", func(t *testing.T) {
		rec := mcpRequest(a.Handler(), "Bearer "+testPAT(t, a, "memories:read"),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"prepare_import_upload","arguments":{"filename":"x"}}}`)
		if rec.Code != http.StatusForbidden {
			t.Errorf("prepare_import_upload with memories:read: %d %s", rec.Code, rec.Body)
		}
	})
}

// TestUpload_Formats: each fixture goes in through the upload route, raw or as a form field.
func TestUpload_Formats(t *testing.T) {
	for _, tt := range []struct {
		file, format     string
		imported, failed float64
		multipart        bool
	}{
		{"ownsona.jsonl", "ownsona", 3, 1, false},
		{"server-memory.jsonl", "server-memory", 4, 2, true},
		{"mcp-memory-service.json", "mcp-memory-service", 3, 1, false},
		{"mem0.json", "mem0", 2, 1, true},
		{"openmemory-memories.json", "mem0", 2, 1, false},
		{"openmemory.jsonl", "mem0", 3, 1, false},
		{"notes.md", "markdown", 7, 1, true},
	} {
		t.Run(tt.file, func(t *testing.T) {
			a := MustOpen(t, testConfig(t, newFakeClock()))
			tok := patFor(t, a)
			tk := prepareAs(t, a, tok, tt.file)
			body, header := io.Reader(bytes.NewReader(importFixture(t, tt.file))), []string(nil)
			if tt.multipart {
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				mw.WriteField("note", "ignored")
				fw, _ := mw.CreateFormFile("file", tt.file)
				fw.Write(importFixture(t, tt.file))
				mw.Close()
				body, header = &buf, []string{"Content-Type", mw.FormDataContentType()}
			}
			if rec := upload(a, tk.url, tk.token, body, header...); rec.Code != http.StatusAccepted {
				t.Fatalf("upload: %d %s", rec.Code, rec.Body)
			}
			job := waitImport(t, a, tok, tk.id)
			if job["state"] != "done" || job["format"] != tt.format || job["imported"] != tt.imported || job["failed"] != tt.failed {
				t.Errorf("job %v", job)
			}
		})
	}
}

// TestUpload_SDK: the Go SDK, over Streamable HTTP, prepares an upload and follows it; the
// file goes to the listener with a plain HTTP client, as curl would send it.
func TestUpload_SDK(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.PublicURL = "" // taken from the bound address
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, nil)
	hc := &http.Client{Transport: bearerTransport{patFor(t, a)}}
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + a.Addr() + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := sdkPayload(t, s, "prepare_import_upload", map[string]any{"filename": "notes.md", "format": "markdown"})
	url, tok := p["upload_url"].(string), p["upload_token"].(string)
	if want := "http://" + a.Addr() + "/mcp/upload/"; !strings.HasPrefix(url, want) {
		t.Fatalf("upload_url %q, want it under %s", url, want)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(importFixture(t, "notes.md")))
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("upload: %d", resp.StatusCode)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(10 * time.Millisecond) {
		st := sdkPayload(t, s, "import_status", map[string]any{})
		job := st["imports"].([]any)[0].(map[string]any)
		if job["state"] == "done" {
			if job["imported"] != 7.0 || job["format"] != "markdown" {
				t.Errorf("job %v", job)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %v", job)
		}
	}
}

// bomb is a small compressed file that expands to something large, and what its import must
// answer.
type bomb struct {
	name, file string
	body       []byte
	want       string // in the failed import's error
	skipped    bool   // the unit is reported (ImportError) and the import goes on
}

// gzipOf compresses what write writes, at the best ratio.
func gzipOf(tb testing.TB, write func(w io.Writer)) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	bw := bufio.NewWriterSize(zw, 1<<20)
	write(bw)
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// zipOf is a zip of one file, deflated, or stored when store is set.
func zipOf(tb testing.TB, name string, store bool, write func(w io.Writer)) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) { return flate.NewWriter(out, flate.BestCompression) })
	method := zip.Deflate
	if store {
		method = zip.Store
	}
	fw, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
	if err != nil {
		tb.Fatal(err)
	}
	bw := bufio.NewWriterSize(fw, 1<<20)
	write(bw)
	if err := bw.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// repeat writes s n times.
func repeat(w io.Writer, s string, n int) {
	chunk := []byte(strings.Repeat(s, max(1, (64<<10)/len(s))))
	per := len(chunk) / len(s)
	for ; n >= per; n -= per {
		w.Write(chunk)
	}
	w.Write(chunk[:n*len(s)])
}

// bombs are the decompression bombs of SECURITY.md UP-01, ~100 KB each: one 100 MiB JSON item,
// one 100 MiB Markdown paragraph (short lines, no blank one), a zip inside a zip, and a gzip
// of 2M list lines. They are made once per test binary.
func bombs(tb testing.TB) []bomb {
	tb.Helper()
	bombsOnce.Do(func() {
		const big = 100 << 20
		item := func(w io.Writer) {
			io.WriteString(w, `[{"memory":"A first memory"},{"memory":"`)
			repeat(w, "a", big)
			io.WriteString(w, `"}]`)
		}
		bombsMade = []bomb{
			{"one 100 MiB JSON item", "item.json.gz", gzipOf(tb, item), "item 2 is larger than", false},
			{"one 100 MiB Markdown paragraph", "notes.md.gz", gzipOf(tb, func(w io.Writer) {
				repeat(w, "the quick brown fox jumps over the lazy dog\n", big/44)
			}), "the paragraph is longer than", true},
			{"a zip inside a zip", "nested.zip", zipOf(tb, "inner.zip", false, func(w io.Writer) {
				w.Write(zipOf(tb, "memories.json", true, item))
			}), "a zip inside a zip", false},
			{"a gzip of 2M list lines", "list.md.gz", gzipOf(tb, func(w io.Writer) {
				repeat(w, "- a\n", 2_000_000)
			}), "items, the most one import reads", false},
		}
	})
	return bombsMade
}

var (
	bombsOnce sync.Once
	bombsMade []bomb
)

// heapGrowth runs f and returns how far the heap in use (HeapInuse: live objects and the
// garbage not yet collected) rose above where it stood before, at its highest, sampled every
// millisecond meanwhile, and what the process allocated in all (TotalAlloc).
//
// The collector runs at GOGC=10 meanwhile, so that the figure is what f holds rather than how
// late the collector came: at the default 100 the garbage of f, and of other tests' servers
// still winding down in the same process, may double the heap on a busy machine (a whole
// `go test ./app/` measured 132-153 MiB where the test alone measures 20).
func heapGrowth(f func()) (peak, alloc int64) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	inuse := func() int64 {
		metrics.Read(samples)
		return int64(samples[0].Value.Uint64() + samples[1].Value.Uint64())
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	base := inuse()
	stop, done := make(chan struct{}), make(chan int64)
	go func() {
		high := base
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			high = max(high, inuse())
			select {
			case <-stop:
				done <- high
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	high := max(<-done, inuse())
	runtime.ReadMemStats(&after)
	return high - base, int64(after.TotalAlloc - before.TotalAlloc)
}

// maxBombGrowth is UP-01's bound: an import of any upload grows the process by less than
// 128 MiB.
const maxBombGrowth = 128 << 20

// TestUpload_Bombs (SECURITY.md UP-01): each bomb, uploaded, ends its import failed with an
// error that names the unit and the limit, and allocates less than 128 MiB on the way.
func TestUpload_Bombs(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	tok := patFor(t, a)
	for _, b := range bombs(t) {
		t.Run(b.name, func(t *testing.T) {
			tk := prepareAs(t, a, tok, b.file)
			var job map[string]any
			peak, alloc := heapGrowth(func() {
				if rec := upload(a, tk.url, tk.token, bytes.NewReader(b.body)); rec.Code != http.StatusAccepted {
					t.Fatalf("upload: %d %s", rec.Code, rec.Body)
				}
				job = waitImport(t, a, tok, tk.id)
			})
			t.Logf("%d-byte upload: heap in use up to %+.1f MiB, %.1f MiB allocated in all; %v", len(b.body), float64(peak)/(1<<20), float64(alloc)/(1<<20), job["error"])
			// A unit too large to read past stops the import; a paragraph is skipped and
			// reported, as a line with a secret is.
			msg, _ := job["error"].(string)
			if b.skipped {
				errs, _ := json.Marshal(job["errors"])
				msg = string(errs)
			}
			if want := map[bool]string{false: "failed", true: "done"}[b.skipped]; job["state"] != want || !strings.Contains(msg, b.want) {
				t.Errorf("job %v, want %s with %q", job, want, b.want)
			}
			if peak > maxBombGrowth {
				t.Errorf("the heap grew by %d MiB, past the bound of %d MiB", peak>>20, maxBombGrowth>>20)
			}
		})
	}
}

// TestUpload_Stalled (SECURITY.md UP-02; issue 28, item 3): 16 connections that send the
// headers of 64 MiB uploads, each to its own upload URL, and stop: two are read in the
// uploads' own pool, the other 14 get 503 uploads_busy at once; /oauth/token and
// /console/signin keep answering everyone else; the process grows by less than 100 MiB; and a
// second transfer to a URL in progress is refused with 409. Before, each held a slot of the
// pool the OAuth endpoints, sign-in and the console share, for ten minutes, with 64 MiB
// allocated before a byte arrived (1 GiB), and the OAuth endpoints answered 503.
func TestUpload_Stalled(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := a.Addr()
	var tickets []ticket
	for _, tok := range []string{patFor(t, a), testPAT(t, a)} { // 10 unused URLs per client at most
		for range 8 {
			tickets = append(tickets, prepareAs(t, a, tok, "big.jsonl"))
		}
	}
	// stall sends the headers of a 64 MiB upload to tk and nothing more; its answer, if one
	// comes before the connection closes at cleanup, goes to answers.
	type answer struct {
		id     string
		status int
		code   string
	}
	answers := make(chan answer, 2*len(tickets))
	stall := func(tk ticket) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
			strings.TrimPrefix(tk.url, "http://127.0.0.1"), tk.token, 64<<20)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				return // closed at cleanup
			}
			var body struct{ Error string }
			json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			answers <- answer{tk.id, resp.StatusCode, body.Error}
		}()
	}
	post := func(path, body string) int {
		t.Helper()
		resp, err := http.Post("http://"+addr+path, "application/x-www-form-urlencoded", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	answered := map[string]bool{}
	peak, _ := heapGrowth(func() {
		for _, tk := range tickets {
			stall(tk)
		}
		// A condition: the 14 beyond the uploads' pool are answered at once.
		for range len(tickets) - 2 {
			select {
			case a := <-answers:
				answered[a.id] = true
				if a.status != http.StatusServiceUnavailable || a.code != "uploads_busy" {
					t.Errorf("upload %s beyond the uploads' pool: %d %s, want 503 uploads_busy", a.id, a.status, a.code)
				}
			case <-time.After(time.Minute): // against a hang only
				t.Fatalf("only %d of 16 stalled uploads answered in a minute; want 14 refused at once", len(answered))
			}
		}
		for i := range 20 {
			if s := post("/oauth/token", "grant_type=refresh_token&refresh_token=nope&client_id=x"); s != http.StatusBadRequest && s != http.StatusUnauthorized {
				t.Fatalf("POST /oauth/token %d while 16 uploads stall: %d, want the OAuth error (400 or 401)", i, s)
			}
			if s := post("/console/signin", "password=nope"); s == http.StatusServiceUnavailable || s == http.StatusTooManyRequests {
				t.Fatalf("POST /console/signin %d while 16 uploads stall: %d, want it served", i, s)
			}
		}
	})
	t.Logf("16 stalled uploads: heap in use up to %+.1f MiB", float64(peak)/(1<<20))
	if peak > 100<<20 {
		t.Errorf("the heap grew by %d MiB while 16 uploads stalled, want < 100 MiB", peak>>20)
	}

	t.Run("a second transfer to a URL in progress", func(t *testing.T) {
		for _, tk := range tickets {
			if answered[tk.id] {
				continue
			}
			stall(tk)
			select {
			case a := <-answers:
				if a.id != tk.id || a.status != http.StatusConflict || a.code != "upload_in_progress" {
					t.Errorf("a second transfer to %s: %+v, want 409 upload_in_progress", tk.id, a)
				}
			case <-time.After(time.Minute): // against a hang only
				t.Fatalf("a second transfer to %s: no answer in a minute", tk.id)
			}
		}
	})
}
