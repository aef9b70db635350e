package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ownsona/ownsona/jsonrpc"
)

// fixture is a Server with a few toy tools, a resource, a template, a prompt and completions,
// recording what its handlers saw.
type fixture struct {
	*Server
	calls   atomic.Int64  // tool handler calls
	started chan string   // the slow tool sends its progress token (or "") when it starts
	release chan struct{} // closing it lets the slow tool finish

	mu   sync.Mutex
	errs []string // what OnError was told
}

func (f *fixture) onErrors() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.errs)
}

const echoSchema = `{
  "type": "object",
  "properties": {
    "text": {"type": "string", "minLength": 1, "maxLength": 10, "description": "what to echo"},
    "times": {"type": "integer", "minimum": 1, "maximum": 3},
    "style": {"type": "string", "enum": ["plain", "loud"]},
    "when": {"type": "string", "format": "date-time"},
    "tags": {"type": ["array", "string"], "items": {"type": "string", "minLength": 1}, "maxItems": 3},
    "meta": {"type": "object", "properties": {"source": {"type": "string"}}, "additionalProperties": false}
  },
  "required": ["text"],
  "additionalProperties": false
}`

// MustOpenFixture returns a fresh fixture.
func MustOpenFixture(tb testing.TB) *fixture {
	tb.Helper()
	f := &fixture{started: make(chan string, 16), release: make(chan struct{})}
	yes, no := true, false
	f.Server = &Server{
		Info:         Implementation{Name: "fixture", Title: "Fixture server", Version: "1.0.0"},
		Instructions: "Call echo to hear yourself.",
		PageSize:     2,
		Tools: []*Tool{
			{
				Name: "echo", Title: "Echo", Description: "Echoes text <back> & forth.",
				InputSchema:  json.RawMessage(echoSchema),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
				Annotations:  &ToolAnnotations{ReadOnlyHint: &yes, DestructiveHint: &no},
				Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
					f.calls.Add(1)
					var a struct {
						Text  string `json:"text"`
						Times int    `json:"times"`
					}
					if err := json.Unmarshal(args, &a); err != nil {
						return nil, err
					}
					return &ToolResult{Structured: map[string]any{
						"text":      strings.Repeat(a.Text, max(a.Times, 1)),
						"transport": TransportFrom(ctx),
						"version":   ProtocolVersionFrom(ctx),
					}}, nil
				},
			},
			{
				Name: "fail", Description: "Fails in the way asked.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string"}},"required":["mode"]}`),
				Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
					f.calls.Add(1)
					var a struct {
						Mode string `json:"mode"`
					}
					json.Unmarshal(args, &a)
					switch a.Mode {
					case "internal":
						return nil, errors.New("disk on fire at /secret/path")
					case "storage":
						return nil, &jsonrpc.Error{Code: CodeStorageError, Message: "storage error", Data: map[string]bool{"retryable": true}}
					case "wrapped":
						return nil, fmt.Errorf("wrap: %w", &jsonrpc.Error{Code: CodeRateLimited, Message: "rate limited"})
					case "arg":
						return nil, fmt.Errorf("check: %w", InvalidArgument("mode", "is not welcome here"))
					case "panic":
						panic("kaboom")
					case "nil":
						return nil, nil
					case "content":
						return &ToolResult{Content: []Content{TextContent("<b>&</b>"), {Type: "image", MIMEType: "image/png", Data: "iVBORw0KGgo="}}, Structured: map[string]int{"a": 1}}, nil
					case "empty-text":
						return &ToolResult{Content: []Content{TextContent("")}}, nil
					case "iserror":
						return &ToolResult{Structured: map[string]any{"ok": false}, IsError: true}, nil
					case "array":
						return &ToolResult{Structured: []int{1, 2}}, nil
					case "unmarshalable":
						return &ToolResult{Structured: map[string]any{"c": make(chan int)}}, nil
					case "typed-nil":
						return &ToolResult{Structured: (*struct{ A int })(nil)}, nil
					case "not-found":
						return nil, ErrResourceNotFound
					}
					return &ToolResult{}, nil
				},
			},
			{
				// ask puts a question to the user (elicitation): in place in the legacy era, as
				// an input_required result and a retry in 2026-07-28.
				Name: "ask", Description: "Asks the user to confirm, then says what they answered.",
				Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
					f.calls.Add(1)
					answer, err := Elicit(ctx, "confirm", map[string]any{"message": "Go ahead?", "requestedSchema": map[string]any{
						"type": "object", "properties": map[string]any{"ok": map[string]string{"type": "boolean"}}, "required": []string{"ok"}}})
					if err != nil {
						return nil, err
					}
					return &ToolResult{Content: []Content{TextContent("answered " + string(answer))}}, nil
				},
			},
			{
				Name: "slow", Description: "Waits until released or cancelled.",
				Handler: func(ctx context.Context, args json.RawMessage) (*ToolResult, error) {
					f.calls.Add(1)
					Progress(ctx, 1, 2, "waiting")
					select {
					case f.started <- ProtocolVersionFrom(ctx):
					default: // nobody is watching (the fuzz target)
					}
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-f.release:
						Progress(ctx, 2, 2, "")
						info, ok := ClientInfoFrom(ctx)
						return &ToolResult{Structured: map[string]any{"client": info, "known": ok}}, nil
					}
				},
			},
		},
		ListResources: func(ctx context.Context) ([]Resource, error) {
			return []Resource{{URI: "fixture://readme", Name: "readme", Title: "Read me", MIMEType: "text/plain"}}, nil
		},
		ResourceTemplates: []ResourceTemplate{
			{URITemplate: "fixture://notes/{id}", Name: "note", Description: "One note by id", MIMEType: "application/json"},
			{URITemplate: "fixture://search{?q,limit}", Name: "search"},
			{URITemplate: "fixture://tags/{+path}", Name: "tags"},
		},
		ReadResource: func(ctx context.Context, uri string) ([]ResourceContents, error) {
			switch uri {
			case "fixture://readme":
				return []ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "Hello <there> & welcome."}}, nil
			case "fixture://notes/1":
				return []ResourceContents{{URI: uri, MIMEType: "application/json", Text: `{"id":1}`}}, nil
			case "fixture://broken":
				return nil, errors.New("cannot read the disk")
			}
			return nil, fmt.Errorf("read %s: %w", uri, ErrResourceNotFound)
		},
		Prompts: []*Prompt{{
			Name: "greet", Title: "Greet", Description: "Greets someone.",
			Arguments: []PromptArgument{{Name: "who", Description: "whom to greet", Required: true}, {Name: "style"}},
			Get: func(ctx context.Context, args map[string]string) (*PromptResult, error) {
				if args["style"] == "rude" {
					return nil, InvalidArgument("style", "must be polite")
				}
				text := "Say hello to " + args["who"]
				if s, ok := args["style"]; ok {
					text += " in a " + s + " way"
				}
				return &PromptResult{Description: "A greeting", Messages: []PromptMessage{{Role: "user", Content: TextContent(text + ".")}}}, nil
			},
		}},
		Complete: func(ctx context.Context, req CompleteRequest) ([]string, error) {
			switch {
			case req.RefType == "ref/prompt" && req.ArgName == "who":
				var out []string
				for _, n := range []string{"ada", "alan", "grace", "barbara"} {
					if strings.HasPrefix(n, req.ArgValue) {
						out = append(out, n)
					}
				}
				return out, nil
			case req.RefType == "ref/prompt" && req.ArgName == "style":
				out := make([]string, 150)
				for i := range out {
					out[i] = "style-" + strconv.Itoa(i)
				}
				return out, nil
			case req.RefType == "ref/resource":
				return []string{req.RefURI + " " + req.ArgName + "=" + req.ArgValue + " ctx=" + fmt.Sprint(req.Context)}, nil
			}
			return nil, nil
		},
		OnError: func(ctx context.Context, method string, err error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			msg, _, _ := strings.Cut(err.Error(), "\n") // a panic's stack follows
			f.errs = append(f.errs, method+": "+msg)
		},
	}
	if err := f.Check(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
	})
	return f
}
