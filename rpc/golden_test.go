package rpc

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the responses in testdata/*.txtar with what the server answers now")

// TestServer_Golden replays each transcript in testdata/*.txtar against a fresh fixture: every
// request goes through ServeHTTP and the status, headers and body must match exactly.
//
// A transcript is text before the first section (a comment), then "-- request --" /
// "-- response --" pairs. A request may start with header lines ("Name: value", ":method: GET"
// for the HTTP method) and a blank line before its body. The default headers are
// Content-Type: application/json, Accept: application/json, text/event-stream and
// MCP-Protocol-Version: 2025-11-25; a header line with an empty value removes one. A response is
// the status code, the Allow and Content-Type headers when set, a blank line and the body with
// its JSON indented for review (indenting changes no byte inside a string or number). Run with
// -update to rewrite the responses after a deliberate change, then review the diff.
func TestServer_Golden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts in testdata: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			f := MustOpenFixture(t)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseTranscript(string(data))
			var out strings.Builder
			out.WriteString(comment)
			n := 0
			for i, s := range sections {
				if s.name != "request" {
					continue
				}
				n++
				got := replay(t, f.Server, s.body)
				out.WriteString("-- request --\n" + s.body + "-- response --\n" + got)
				want := ""
				if i+1 < len(sections) && sections[i+1].name == "response" {
					want = sections[i+1].body
				}
				if !*update && got != want {
					t.Errorf("request %d:\n%s\ngot:\n%s\nwant:\n%s", n, s.body, got, want)
				}
			}
			if *update {
				if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type section struct{ name, body string }

// parseTranscript splits a transcript into its comment and its sections.
func parseTranscript(s string) (string, []section) {
	var comment string
	var sections []section
	cur := -1
	for line := range strings.SplitAfterSeq(s, "\n") {
		trimmed := strings.TrimRight(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			sections = append(sections, section{name: trimmed[3 : len(trimmed)-3]})
			cur = len(sections) - 1
			continue
		}
		if cur < 0 {
			comment += line
		} else {
			sections[cur].body += line
		}
	}
	return comment, sections
}

// replay sends one transcript request and formats the answer.
func replay(t *testing.T, s *Server, req string) string {
	t.Helper()
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
	r := httptest.NewRequest(method, "/mcp", strings.NewReader(strings.TrimSuffix(body, "\n")))
	r.Header = hdr
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
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
	if w.Body.Len() > 0 {
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

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
