package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

// TestServer_Permit: a refused tool is left out of tools/list, a call of it answers Permit's
// error as it is and never runs the handler, and other tools work.
func TestServer_Permit(t *testing.T) {
	f := MustOpenFixture(t)
	f.Server.Permit = func(ctx context.Context, tool string) error {
		if tool == "fail" {
			return &jsonrpc.Error{Code: -32003, Message: "insufficient scope", Data: map[string]string{"scope": "write"}}
		}
		return nil
	}
	ctx := context.Background()
	var names []string
	cursor := ""
	for {
		out := string(f.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"`+cursor+`"}}`)))
		if strings.Contains(out, `"error"`) {
			t.Fatalf("tools/list: %s", out)
		}
		for _, name := range []string{"echo", "fail", "slow"} {
			if strings.Contains(out, `"name":"`+name+`"`) {
				names = append(names, name)
			}
		}
		_, next, _ := strings.Cut(out, `"nextCursor":"`)
		cursor, _, _ = strings.Cut(next, `"`)
		if cursor == "" {
			break
		}
	}
	if strings.Contains(strings.Join(names, ","), "fail") || !strings.Contains(strings.Join(names, ","), "echo") {
		t.Errorf("tools/list showed %v; want echo and not fail", names)
	}
	before := f.calls.Load()
	out := string(f.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fail","arguments":{"mode":"internal"}}}`)))
	if want := `{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"insufficient scope","data":{"scope":"write"}}}`; out != want {
		t.Errorf("refused call:\n got %s\nwant %s", out, want)
	}
	if f.calls.Load() != before {
		t.Error("the refused tool's handler ran")
	}
	out = string(f.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)))
	if !strings.Contains(out, `"isError":false`) {
		t.Errorf("permitted call: %s", out)
	}
}
