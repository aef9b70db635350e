package app

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden with the current responses")

// TestGolden replays each transcript in testdata/golden against a fresh store with a fixed
// clock: every request is sent to the handler and the status and body must match exactly.
//
// A transcript is a txtar archive (golang.org/x/tools/txtar): its comment, then an optional
// "-- config --" file of "flag: value" lines (the settings of `ownsona help`, e.g.
// "compat: komcp"), then "-- request --" / "-- response --" pairs. A request is POSTed to
// /mcp unless its first line is a method and a path ("GET /.well-known/oauth-protected-resource");
// then it may have header lines ("Name: value") and a blank line before its body. The default
// headers are Content-Type: application/json, Accept: application/json, text/event-stream,
// MCP-Protocol-Version: 2025-11-25 and a full-scope personal access token (a header line with
// an empty value removes one); $PAT and $READ_PAT in a request stand for a full-scope and a
// read-only token. A response is the status code on its first line, then, for a
// request with a method line, the response headers a client reads (shownHeaders), then the
// body, JSON indented for review. Requests come from 127.0.0.1, as a local client's. Timings (*_time_ms) are zeroed. Run with -update to rewrite
// responses after a deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg := testConfig(t, newFakeClock())
			out := &txtar.Archive{Comment: ar.Comment}
			for _, f := range ar.Files {
				switch f.Name {
				case "config":
					applyGoldenConfig(t, &cfg, string(f.Data))
					out.Files = append(out.Files, f)
				case "request", "response":
				default:
					t.Fatalf("section %q: want config, request or response", f.Name)
				}
			}
			a := MustOpen(t, cfg)
			n := 0
			for i, f := range ar.Files {
				if f.Name != "request" {
					continue
				}
				n++
				got := replay(t, a, string(f.Data))
				out.Files = append(out.Files, f, txtar.File{Name: "response", Data: []byte(got)})
				want := ""
				if i+1 < len(ar.Files) && ar.Files[i+1].Name == "response" {
					want = string(ar.Files[i+1].Data)
				}
				if !*updateGolden && got != want {
					t.Errorf("request %d:\n%s\nresponse (-want +got):\n%s", n, f.Data, cmp.Diff(want, got))
				}
			}
			if *updateGolden {
				if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// applyGoldenConfig sets the settings a transcript's config section names, parsed as their
// flags are.
func applyGoldenConfig(t *testing.T, cfg *Config, lines string) {
	t.Helper()
	for line := range strings.Lines(lines) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			t.Fatalf("config line %q: want \"flag: value\"", line)
		}
		found := false
		for _, s := range cfg.settings() {
			if s.flag == strings.TrimSpace(name) {
				if err := parseValue("--"+s.flag, s.ptr, strings.TrimSpace(value)); err != nil {
					t.Fatal(err)
				}
				found = true
			}
		}
		if !found {
			t.Fatalf("config line %q: no setting --%s", line, name)
		}
	}
}

// goldenReadPATs holds one read-only personal access token per App, for $READ_PAT.
var goldenReadPATs sync.Map // *App → string

func goldenReadPAT(t *testing.T, a *App) string {
	if tok, ok := goldenReadPATs.Load(a); ok {
		return tok.(string)
	}
	tok, _, err := a.Auth().PATs().Create("reader", []string{"memories:read"}, 0) // source_client "pat:reader"
	if err != nil {
		t.Fatalf("create PAT: %v", err)
	}
	goldenReadPATs.Store(a, tok)
	return tok
}

// shownHeaders are the response headers a transcript with a method line records, in this order.
var shownHeaders = []string{"Content-Type", "WWW-Authenticate", "Retry-After", "X-RateLimit-Limit",
	"X-RateLimit-Remaining", "X-API-Version", "Access-Control-Allow-Origin", "Access-Control-Max-Age", "Allow", "Location"}

var requestLine = regexp.MustCompile(`^(GET|POST|PUT|DELETE|OPTIONS|HEAD) (/\S*)\n`)

// randoms are the values a server draws at random (upload ids and tokens), shown as a fixed
// stand-in so that a transcript replays byte for byte.
var randoms = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`osu_[A-Za-z0-9_-]{20,}`), "osu_RANDOM"},
	{regexp.MustCompile(`/mcp/upload/[A-Za-z0-9_-]{16,}`), "/mcp/upload/RANDOM"},
	{regexp.MustCompile(`(\\?"upload_id\\?": ?\\?")[A-Za-z0-9_-]{16,}`), "${1}RANDOM"},
}

var timings = regexp.MustCompile(`(\\?"[a-z_]+_time_ms\\?": ?)[0-9.e+-]+`)

// replay sends one transcript request and formats the response.
func replay(t *testing.T, a *App, req string) string {
	t.Helper()
	headers := map[string]string{
		"Content-Type":         "application/json",
		"Accept":               "application/json, text/event-stream",
		"MCP-Protocol-Version": "2025-11-25",
		"Authorization":        "Bearer " + patFor(t, a),
	}
	// $PAT and $READ_PAT stand for a full-scope and a read-only personal access token, so that a
	// transcript can send one elsewhere than in the default Authorization header.
	req = strings.ReplaceAll(req, "$READ_PAT", goldenReadPAT(t, a))
	req = strings.ReplaceAll(req, "$PAT", patFor(t, a))
	method, path, showHeaders := http.MethodPost, "/mcp", false
	if m := requestLine.FindStringSubmatch(req); m != nil {
		method, path, showHeaders = m[1], m[2], true
		req = req[len(m[0]):]
	}
	body := req
	if head, rest, ok := strings.Cut(req, "\n\n"); ok && regexp.MustCompile(`^[A-Za-z-]+:`).MatchString(head) {
		for _, line := range strings.Split(head, "\n") {
			k, v, _ := strings.Cut(line, ":")
			headers[k] = strings.TrimSpace(v)
		}
		body = rest
	} else if showHeaders && !strings.Contains(req, "{") && !strings.Contains(req, "[") && regexp.MustCompile(`^[A-Za-z-]+:`).MatchString(req) {
		for _, line := range strings.Split(strings.TrimSuffix(req, "\n"), "\n") { // headers only, no body
			k, v, _ := strings.Cut(line, ":")
			headers[k] = strings.TrimSpace(v)
		}
		body = ""
	}
	r := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(strings.TrimSuffix(body, "\n")))
	r.RemoteAddr = "127.0.0.1:49152" // a client on this machine, as over loopback
	for k, v := range headers {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, r)
	out := fmt.Sprintf("%d\n", rec.Code)
	if showHeaders {
		for _, h := range shownHeaders {
			for _, v := range rec.Header().Values(h) {
				out += h + ": " + v + "\n"
			}
		}
		out += "\n"
	}
	if b := rec.Body.Bytes(); len(b) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			text := timings.ReplaceAllString(buf.String(), "${1}0")
			for _, r := range randoms {
				text = r.re.ReplaceAllString(text, r.with)
			}
			out += text + "\n"
		} else {
			out += string(b) + "\n"
		}
	}
	return out
}
