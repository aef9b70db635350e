package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

// TestError_Messages: every error of JSON-RPC 2.0's own codes in the transcripts (this
// package's and the app's) carries the specification's message word for word, the detail
// being in data (seed 003; doc.go, "Errors").
func TestError_Messages(t *testing.T) {
	want := map[int]string{
		jsonrpc.CodeParseError:     jsonrpc.MessageParseError,
		jsonrpc.CodeInvalidRequest: jsonrpc.MessageInvalidRequest,
		jsonrpc.CodeMethodNotFound: jsonrpc.MessageMethodNotFound,
		jsonrpc.CodeInvalidParams:  jsonrpc.MessageInvalidParams,
		jsonrpc.CodeInternalError:  jsonrpc.MessageInternalError,
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

// TestServer_ToolErrorCodes: a tool handler's *Error, with any code and wrapped or not, is the
// call's JSON-RPC error in every era (sophon's approval outcomes are -32001 and -32002), not an
// isError result as an *ArgError is from 2025-11-25 on.
func TestServer_ToolErrorCodes(t *testing.T) {
	s := &Server{
		Info: Implementation{Name: "approvals", Version: "1"},
		Tools: []*Tool{{
			Name:        "gated",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"outcome":{"type":"string"}},"required":["outcome"]}`),
			Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
				var a struct{ Outcome string }
				json.Unmarshal(args, &a)
				if a.Outcome == "rejected" {
					return nil, &jsonrpc.Error{Code: -32001, Message: "approval rejected", Data: map[string]string{"tool": "gated"}}
				}
				return nil, fmt.Errorf("gated: %w", &jsonrpc.Error{Code: -32002, Message: "approval timed out"})
			},
		}},
	}
	modern := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, version := range []string{"2024-11-05", "2025-06-18", "2025-11-25", "2026-07-28"} {
		for outcome, want := range map[string]string{
			"rejected":  `"error":{"code":-32001,"message":"approval rejected","data":{"tool":"gated"}}`,
			"timed out": `"error":{"code":-32002,"message":"approval timed out"}`,
		} {
			t.Run(version+" "+outcome, func(t *testing.T) {
				meta, hdr := "", []string{"MCP-Protocol-Version", version}
				if version == ModernProtocolVersion {
					meta = modern
					hdr = append(hdr, "Mcp-Method", "tools/call", "Mcp-Name", "gated")
				}
				status, body := postAs(t, s, "", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"gated","arguments":{"outcome":"`+outcome+`"}`+meta+`}}`, hdr...)
				if status != 200 || !strings.Contains(body, `{"jsonrpc":"2.0","id":7,`+want+`}`) {
					t.Errorf("%d %s, want 200 with %s", status, body, want)
				}
			})
		}
	}
}

// TestArgError_Error: an argument error reads as its field and reason (jsonrpc's TestError_Error
// covers *jsonrpc.Error).
func TestArgError_Error(t *testing.T) {
	if got, want := InvalidArgument("items[2].text", "must not be empty").Error(), "items[2].text: must not be empty"; got != want {
		t.Errorf("ArgError.Error() = %q, want %q", got, want)
	}
}
