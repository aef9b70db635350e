package mcp

import (
	"bytes"
	"encoding/json"
	"flag"
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

var update = flag.Bool("update", false, "rewrite the responses in testdata/*.txtar with what the server answers now")

// TestGolden replays each transcript in testdata/*.txtar against a fresh fixture: every
// request goes through ServeHTTP and the status, headers and body must match exactly.
//
// A transcript is a txtar archive (golang.org/x/tools/txtar): its comment, then "-- request --"
// / "-- response --" pairs. A request may start with header lines ("Name: value", ":method: GET"
// for the HTTP method) and a blank line before its body. The default headers are
// Content-Type: application/json, Accept: application/json, text/event-stream and
// MCP-Protocol-Version: 2025-11-25; a header line with an empty value removes one. A response is
// the status code, the Allow and Content-Type headers when set, a blank line and the body with
// its JSON indented for review (indenting changes no byte inside a string or number); an event
// stream shows each event's data indented the same way. Run with -update to rewrite the
// responses after a deliberate change, then review the diff.
//
// Two things are not fixed bytes. A 2026-07-28 requestState carries a deadline, so responses
// show it as {{requestState}}, and a request may say {{requestState}} for the last one answered
// (a retry sends it back). A request with the header "Golden-Then: ACTION; ..." is served on its
// own goroutine (a subscriptions/listen stream stays open): once its first event is written,
// each action runs and its event is awaited, in order: "resource URI" (NotifyResourceUpdated),
// "list KIND" (NotifyListChanged), "end" (EndSubscriptions, which answers the stream).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range ar.Files {
				if f.Name != "request" && f.Name != "response" {
					t.Fatalf("section %q: want request or response", f.Name)
				}
			}
			f := MustOpenFixture(t)
			g := &golden{}
			out := &txtar.Archive{Comment: ar.Comment}
			n := 0
			for i, req := range ar.Files {
				if req.Name != "request" {
					continue
				}
				n++
				got := g.replay(t, f.Server, string(req.Data))
				out.Files = append(out.Files, req, txtar.File{Name: "response", Data: []byte(got)})
				want := ""
				if i+1 < len(ar.Files) && ar.Files[i+1].Name == "response" {
					want = string(ar.Files[i+1].Data)
				}
				if !*update && got != want {
					t.Errorf("request %d:\n%s\nresponse (-want +got):\n%s", n, req.Data, cmp.Diff(want, got))
				}
			}
			if *update {
				if err := os.WriteFile(file, txtar.Format(out), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// golden is what a transcript's replay carries from one request to the next.
type golden struct {
	state string // the last requestState answered
}

// requestStateRE finds a requestState member in a response.
var requestStateRE = regexp.MustCompile(`"requestState":\s*"([^"]*)"`)

// replay sends one transcript request and formats the answer.
func (g *golden) replay(t *testing.T, s *Server, req string) string {
	t.Helper()
	req = strings.ReplaceAll(req, "{{requestState}}", g.state)
	hdr := http.Header{}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Accept", "application/json, text/event-stream")
	hdr.Set("MCP-Protocol-Version", "2025-11-25")
	method := http.MethodPost
	body := req
	if strings.HasPrefix(req, ":method:") || strings.Contains(req, "\n\n") { // headers, blank line, body
		head, rest, ok := strings.Cut(req, "\n\n")
		if !ok {
			head, rest = req, ""
		}
		body = rest
		seen := map[string]bool{}
		for line := range strings.SplitSeq(strings.TrimSpace(head), "\n") {
			if line == "" {
				continue
			}
			if v, ok := strings.CutPrefix(line, ":method:"); ok {
				method = strings.TrimSpace(v)
				continue
			}
			name, value, ok := strings.Cut(line, ":")
			if !ok {
				t.Fatalf("bad header line %q", line)
			}
			key := http.CanonicalHeaderKey(name)
			if !seen[key] { // the transcript's lines replace a default; several lines add up
				hdr.Del(key)
				seen[key] = true
			}
			if value = strings.TrimSpace(value); value != "" {
				hdr.Add(key, value)
			}
		}
	}
	then := hdr.Get("Golden-Then")
	hdr.Del("Golden-Then")
	r := httptest.NewRequest(method, "/mcp", strings.NewReader(strings.TrimSuffix(body, "\n")))
	r.Header = hdr
	w := httptest.NewRecorder()
	if then == "" {
		s.ServeHTTP(w, r)
	} else {
		streamThen(t, s, w, r, then)
	}
	if m := requestStateRE.FindSubmatch(w.Body.Bytes()); m != nil {
		g.state = string(m[1])
		b := bytes.ReplaceAll(w.Body.Bytes(), m[1], []byte("{{requestState}}"))
		w.Body.Reset()
		w.Body.Write(b)
	}
	var out strings.Builder
	out.WriteString(itoa(w.Code) + "\n")
	for _, h := range []string{"Allow", "Content-Type"} {
		if v := w.Header().Get(h); v != "" {
			out.WriteString(h + ": " + v + "\n")
		}
	}
	if w.Header().Get("Mcp-Session-Id") != "" { // random: the transcript says only that one is set
		out.WriteString("Mcp-Session-Id: (set)\n")
	}
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		out.WriteString("\n")
		for line := range strings.Lines(w.Body.String()) {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				out.WriteString(line)
				continue
			}
			var buf bytes.Buffer
			if err := json.Indent(&buf, []byte(strings.TrimSpace(data)), "", "  "); err != nil {
				t.Errorf("event data is not JSON: %v: %s", err, data)
			}
			out.WriteString("data: " + buf.String() + "\n")
		}
	} else if w.Body.Len() > 0 {
		var buf bytes.Buffer
		if err := json.Indent(&buf, w.Body.Bytes(), "", "  "); err != nil {
			t.Errorf("response body is not JSON: %v: %s", err, w.Body.Bytes())
			buf.Reset()
			buf.Write(w.Body.Bytes())
		}
		out.WriteString("\n" + buf.String() + "\n")
	}
	return out.String()
}

// streamThen serves r on its own goroutine into w and, once the first event is out, runs the
// actions of a Golden-Then header one by one, each followed by the event it causes.
func streamThen(t *testing.T, s *Server, w *httptest.ResponseRecorder, r *http.Request, then string) {
	t.Helper()
	actions := strings.Split(then, ";")
	if strings.TrimSpace(actions[len(actions)-1]) != "end" {
		t.Fatalf("Golden-Then %q: the last action must be end, which answers the stream", then)
	}
	sw := &syncRecorder{rec: w, wrote: make(chan struct{}, 1)}
	done := make(chan struct{})
	go func() { defer close(done); s.ServeHTTP(sw, r) }()
	events := 1
	waitEvents := func() { // each write wakes it; a stream that never writes is go test's timeout
		t.Helper()
		for sw.events() < events {
			select {
			case <-sw.wrote:
			case <-done:
				if n := sw.events(); n < events {
					t.Fatalf("the stream ended after %d events, before %d", n, events)
				}
			}
		}
	}
	waitEvents()
	for _, action := range actions {
		verb, arg, _ := strings.Cut(strings.TrimSpace(action), " ")
		switch verb {
		case "resource":
			s.NotifyResourceUpdated(arg)
		case "list":
			s.NotifyListChanged(arg)
		case "end":
			s.EndSubscriptions()
		default:
			t.Fatalf("unknown Golden-Then action %q", action)
		}
		events++
		waitEvents()
	}
	<-done // the last action ends the stream
}

// syncRecorder is a ResponseRecorder that a test may read while a handler writes to it.
type syncRecorder struct {
	mu    sync.Mutex
	rec   *httptest.ResponseRecorder
	wrote chan struct{} // has a value after a write the test has not looked at
}

func (s *syncRecorder) Header() http.Header { return s.rec.Header() } // set before the first write
func (s *syncRecorder) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.WriteHeader(code)
}

func (s *syncRecorder) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		select {
		case s.wrote <- struct{}{}:
		default:
		}
	}()
	return s.rec.Write(b)
}

func (s *syncRecorder) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rec.Flush()
}

// events counts the events written so far.
func (s *syncRecorder) events() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.rec.Body.String(), "event: ")
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
