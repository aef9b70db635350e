package app

import (
	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"

	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/oauth"
)

// fakeClock is a settable clock for tests.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// testConfig is a Config for a fresh file in a temp dir, with a fake clock.
func testConfig(tb testing.TB, clock *fakeClock) Config {
	tb.Helper()
	cfg := NewConfig()
	cfg.DB = filepath.Join(tb.TempDir(), "ownsona.db")
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "error"
	cfg.PublicURL = "http://127.0.0.1"
	cfg.LoginPassword = testPassword
	cfg.RateLimit = 0                   // tests that are about rate limits turn it on
	cfg.Approval = string(approval.Off) // and those about the approval gate turn it on
	if clock != nil {
		cfg.Now = clock.Now
		testClocks.Store(cfg.DB, clock)
	}
	return cfg
}

// testClocks maps the file of a testConfig to its fake clock, for helpers that must let time
// pass the way the server sees it (the consent page's one-second delay).
var testClocks sync.Map // DB path → *fakeClock

// testPassword is the owner's password in tests.
const testPassword = "correct horse battery staple"

// patCache holds one full-scope personal access token per App, for rpcPost.
var patCache sync.Map // *App → string

// testPAT creates a personal access token with the given scopes (both when none).
func testPAT(tb testing.TB, a *App, scope ...string) string {
	tb.Helper()
	if len(scope) == 0 {
		scope = []string{"memories:read", "memories:write"}
	}
	tok, _, err := a.Auth().PATs().Create(fmt.Sprintf("test-%d", time.Now().UnixNano()), scope, 0)
	if err != nil {
		tb.Fatalf("create PAT: %v", err)
	}
	return tok
}

// patFor returns the App's full-scope token named "test" (source_client "pat:test").
func patFor(tb testing.TB, a *App) string {
	tb.Helper()
	if tok, ok := patCache.Load(a); ok {
		return tok.(string)
	}
	tok, _, err := a.Auth().PATs().Create("test", []string{"memories:read", "memories:write"}, 0)
	if errors.Is(err, oauth.ErrPATExists) { // a reopened file: replace the earlier App's token
		if _, err = a.Auth().PATs().Revoke("test"); err == nil {
			tok, _, err = a.Auth().PATs().Create("test", []string{"memories:read", "memories:write"}, 0)
		}
	}
	if err != nil {
		tb.Fatalf("create PAT: %v", err)
	}
	patCache.Store(a, tok)
	return tok
}

// MustOpen opens an App on cfg and closes it at cleanup.
func MustOpen(tb testing.TB, cfg Config) *App {
	tb.Helper()
	a, err := Open(cfg, io.Discard)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { a.Close() })
	return a
}

// rpcPost sends one JSON-RPC body to the app's /mcp handler and returns status and body.
func rpcPost(tb testing.TB, a *App, body string, header ...string) (int, []byte) {
	tb.Helper()
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+patFor(tb, a))
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes()
}

// toolResult is the shape of a tools/call result.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// callTool calls a tool over the real mcp path (protocol 2025-11-25) and returns the payload,
// checking that content[0].text carries the same JSON.
func callTool(tb testing.TB, a *App, name string, args any) (map[string]any, bool) {
	tb.Helper()
	argJSON, err := json.Marshal(args)
	if err != nil {
		tb.Fatal(err)
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, argJSON)
	status, resp := rpcPost(tb, a, body, "MCP-Protocol-Version", "2025-11-25")
	if status != http.StatusOK {
		tb.Fatalf("%s: status %d: %s", name, status, resp)
	}
	var env struct {
		Result *toolResult     `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &env); err != nil || env.Result == nil {
		tb.Fatalf("%s: no result: %s", name, resp)
	}
	var fromText map[string]any
	if err := json.Unmarshal([]byte(env.Result.Content[0].Text), &fromText); err != nil && name != "recall" {
		tb.Fatalf("%s: content text is not JSON: %v", name, err)
	}
	if fromText != nil {
		a, _ := json.Marshal(fromText)
		b, _ := json.Marshal(env.Result.StructuredContent)
		if !bytes.Equal(a, b) {
			tb.Fatalf("%s: content text %s differs from structuredContent %s", name, a, b)
		}
	}
	return env.Result.StructuredContent, env.Result.IsError
}

// mustOK calls a tool and fails unless its payload says ok.
func mustOK(tb testing.TB, a *App, name string, args any) map[string]any {
	tb.Helper()
	p, isErr := callTool(tb, a, name, args)
	if isErr || p["ok"] != true {
		tb.Fatalf("%s(%v): got error payload %v", name, args, p)
	}
	return p
}

// errCode calls a tool that must fail and returns its error code and field.
func errCode(tb testing.TB, a *App, name string, args any) (code, field string) {
	tb.Helper()
	p, isErr := callTool(tb, a, name, args)
	if !isErr || p["ok"] != false {
		tb.Fatalf("%s(%v): got %v, want an error payload", name, args, p)
	}
	e := p["error"].(map[string]any)
	f, _ := e["field"].(string)
	return e["code"].(string), f
}

func id(p map[string]any) uint64 { return uint64(p["memory_id"].(float64)) }

// mustCreateDB makes an empty database at path, as a server's first start does: the commands
// that administer a file refuse a path where none exists.
func mustCreateDB(tb testing.TB, path string) {
	tb.Helper()
	db, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// ownsonaBinary builds the real binary once per test process.
func ownsonaBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ownsona-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "ownsona")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/ownsona/ownsona")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestNewLogger: --log-format json and auto (off a terminal) write a JSON object a line, text
// a readable line without colour codes.
func TestNewLogger(t *testing.T) {
	for _, tt := range []struct {
		format   string
		wantJSON bool
	}{{"json", true}, {"auto", true}, {"text", false}} {
		t.Run(tt.format, func(t *testing.T) {
			var buf bytes.Buffer
			log := newLogger(&buf, "info", tt.format)
			log.Info().Str("db", "x.db").Msg("opened")
			log.Debug().Msg("below the level")
			line := strings.TrimSpace(buf.String())
			if strings.Count(line, "\n") != 0 {
				t.Fatalf("want one line, got %q", line)
			}
			var obj map[string]any
			isJSON := json.Unmarshal([]byte(line), &obj) == nil
			if isJSON != tt.wantJSON {
				t.Fatalf("line %q: JSON %v, want %v", line, isJSON, tt.wantJSON)
			}
			if !strings.Contains(line, "opened") || !strings.Contains(line, "x.db") {
				t.Errorf("line %q lacks the message or its field", line)
			}
			if strings.Contains(line, "\x1b[") {
				t.Errorf("line %q has colour codes, though the writer is no terminal", line)
			}
		})
	}
}
