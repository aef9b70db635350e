package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestServer_OnCall_outcome: OnCall, and a CallTrace in the request's context, are told how a
// call ended where its answer does not say: the handler's word (SetOutcome), cancelled by
// notifications/cancelled (no answer; before, OnCall was not told at all), abandoned when the
// client went, input_required for a 2026-07-28 round that asked the client.
func TestServer_OnCall_outcome(t *testing.T) {
	var mu sync.Mutex
	var got []CallInfo
	record := func(c CallInfo) { mu.Lock(); got = append(got, c); mu.Unlock() }
	started := make(chan struct{}, 1)
	s := &Server{Info: Implementation{Name: "t", Version: "1"}, Tools: []*Tool{
		{Name: "refuse", InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
			SetOutcome(ctx, "rejected")
			return &ToolResult{Structured: map[string]bool{"ok": false}, IsError: true}, nil
		}},
		{Name: "wait", InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}},
		{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`), Handler: func(ctx context.Context, _ json.RawMessage) (*ToolResult, error) {
			_, err := Elicit(ctx, "q", map[string]any{"message": "ok?", "requestedSchema": map[string]any{"type": "object"}})
			return nil, err
		}},
	}, OnCall: func(_ context.Context, c CallInfo) { record(c) }}
	last := func() CallInfo {
		mu.Lock()
		defer mu.Unlock()
		if len(got) == 0 {
			return CallInfo{}
		}
		return got[len(got)-1]
	}
	call := func(id int, name string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`+"\n", id, name)
	}

	t.Run("stdio", func(t *testing.T) {
		c := MustServeStdio(t, context.Background(), s)
		c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n")
		c.recv(t)
		c.send(t, call(1, "refuse"))
		c.recv(t)
		if l := last(); l.Tool != "refuse" || l.Outcome != "rejected" || !l.ToolError {
			t.Errorf("refuse: %+v, want outcome rejected", l)
		}
		c.send(t, call(2, "wait"))
		<-started
		c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`+"\n")
		lines, _ := c.rest(t)
		if len(lines) != 0 {
			t.Errorf("the cancelled call was answered: %q", lines)
		}
		if l := last(); l.Tool != "wait" || l.Outcome != OutcomeCancelled {
			t.Errorf("wait, cancelled: %+v, want outcome cancelled", l)
		}
	})

	t.Run("http abandoned, traced", func(t *testing.T) {
		var traced []CallInfo
		ctx, giveUp := context.WithCancel(WithCallTrace(context.Background(), &CallTrace{Ended: func(c CallInfo) { traced = append(traced, c) }}))
		req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(call(3, "wait")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		done := make(chan struct{})
		go func() { s.ServeHTTP(httptest.NewRecorder(), req); close(done) }()
		<-started
		giveUp()
		<-done
		if l := last(); l.Tool != "wait" || l.Outcome != OutcomeAbandoned {
			t.Errorf("wait, abandoned: %+v, want outcome abandoned", l)
		}
		if len(traced) != 1 || traced[0].Outcome != OutcomeAbandoned {
			t.Errorf("the CallTrace was told %+v", traced)
		}
	})

	t.Run("2026-07-28 input_required", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"ask","arguments":{},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
			`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}}}`
		out := s.Handle(context.Background(), []byte(body))
		if !strings.Contains(string(out), `"input_required"`) {
			t.Fatalf("ask: %s", out)
		}
		if l := last(); l.Tool != "ask" || l.Outcome != OutcomeInputRequired {
			t.Errorf("ask: %+v, want outcome input_required", l)
		}
	})
}
