package rpc

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestError_Messages: every error of JSON-RPC 2.0's own codes in the transcripts (this
// package's and the app's) carries the specification's message word for word, the detail
// being in data (seed 003; doc.go, "Errors").
func TestError_Messages(t *testing.T) {
	want := map[int]string{
		CodeParseError:     MessageParseError,
		CodeInvalidRequest: MessageInvalidRequest,
		CodeMethodNotFound: MessageMethodNotFound,
		CodeInvalidParams:  MessageInvalidParams,
		CodeInternalError:  MessageInternalError,
	}
	errRE := regexp.MustCompile(`"code": (-32[0-9]{3}),\s*"message": ("(?:[^"\\]|\\.)*")`)
	var files []string
	for _, pattern := range []string{"testdata/*.txtar", "../testdata/golden/*.txtar"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := map[int]int{}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range errRE.FindAllStringSubmatch(string(data), -1) {
			code, _ := strconv.Atoi(m[1])
			msg, err := strconv.Unquote(m[2])
			if err != nil {
				t.Fatalf("%s: %s: %v", file, m[2], err)
			}
			if w, ok := want[code]; ok {
				seen[code]++
				if msg != w {
					t.Errorf("%s: code %d has message %q, want %q", file, code, msg, w)
				}
			}
		}
	}
	for code := range want {
		if seen[code] == 0 {
			t.Errorf("no transcript shows an error %d", code)
		}
	}
}
