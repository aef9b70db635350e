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
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden transcripts in testdata/golden with the current responses")

// TestGolden replays each transcript in testdata/golden against a fresh store with a fixed
// clock: every request is POSTed to /mcp and the status and body must match exactly.
//
// A transcript is a series of "-- request --" / "-- response --" sections. A request may start
// with header lines ("Name: value") and a blank line before its body; the default headers are
// Content-Type: application/json, Accept: application/json, text/event-stream and
// MCP-Protocol-Version: 2025-11-25 (a header line with an empty value removes one). A response
// is the status code on its first line, then the body, JSON indented for review. Timings
// (*_time_ms) are zeroed. Text before the first section is a comment. Run with -update to
// rewrite responses after a deliberate change, and review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			a := MustOpen(t, testConfig(t, newFakeClock()))
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comment, sections := parseTranscript(string(data))
			var out strings.Builder
			out.WriteString(comment)
			for i, s := range sections {
				if s.name != "request" {
					continue
				}
				got := replay(t, a, s.body)
				out.WriteString("-- request --\n" + s.body + "-- response --\n" + got)
				want := ""
				if i+1 < len(sections) && sections[i+1].name == "response" {
					want = sections[i+1].body
				}
				if !*updateGolden && got != want {
					t.Errorf("request %d:\n%s\ngot:\n%s\nwant:\n%s", i/2+1, s.body, got, want)
				}
			}
			if *updateGolden {
				if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

type section struct{ name, body string }

var sectionLine = regexp.MustCompile(`(?m)^-- (request|response) --\n`)

func parseTranscript(s string) (comment string, sections []section) {
	locs := sectionLine.FindAllStringSubmatchIndex(s, -1)
	if len(locs) == 0 {
		return s, nil
	}
	comment = s[:locs[0][0]]
	for i, l := range locs {
		end := len(s)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		sections = append(sections, section{name: s[l[2]:l[3]], body: s[l[1]:end]})
	}
	return comment, sections
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
	body := req
	if head, rest, ok := strings.Cut(req, "\n\n"); ok && regexp.MustCompile(`^[A-Za-z-]+:`).MatchString(head) {
		for _, line := range strings.Split(head, "\n") {
			k, v, _ := strings.Cut(line, ":")
			headers[k] = strings.TrimSpace(v)
		}
		body = rest
	}
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(strings.TrimSuffix(body, "\n")))
	for k, v := range headers {
		if v != "" {
			r.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	a.Handler().ServeHTTP(rec, r)
	out := fmt.Sprintf("%d\n", rec.Code)
	if b := rec.Body.Bytes(); len(b) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, b, "", "  ") == nil {
			out += timings.ReplaceAllString(buf.String(), "${1}0") + "\n"
		} else {
			out += string(b) + "\n"
		}
	}
	return out
}
