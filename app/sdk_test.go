package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	ownjsonrpc "github.com/ownsona/ownsona/jsonrpc"
	ownmcp "github.com/ownsona/ownsona/mcp"
)

// These tests drive ownsona with the official MCP Go SDK client: the real binary over stdio, and
// the real HTTP server over Streamable HTTP.

var allTools = []string{
	"build_context_prompt", "confirm", "count_memories", "export_memories", "fetch", "find_near_duplicates",
	"forget", "forget_batch", "get_memory", "import_status", "list_memories", "list_tags", "memory_stats",
	"prepare_import_upload", "recall", "remember", "remember_batch", "search", "search_memory", "text_search",
	"update_memory", "update_memory_batch",
}

// sdkPayload calls a tool and decodes its structured payload.
func sdkPayload(t *testing.T, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || strings.TrimSpace(text.Text) != string(b) {
		var fromText map[string]any
		if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil {
			t.Fatalf("%s: content[0] is not the payload's JSON: %v", name, res.Content[0])
		}
	}
	if res.IsError != (p["ok"] == false) {
		t.Fatalf("%s: isError %v with payload %v", name, res.IsError, p)
	}
	return p
}

// eras are the protocol versions the SDK tests run under: unset is the Go SDK's default, which
// probes server/discover and must settle on 2026-07-28; 2025-11-25 pins the legacy era.
var eras = []struct{ name, pin, want string }{
	{"default", "", "2026-07-28"},
	{"legacy", "2025-11-25", "2025-11-25"},
}

// sdkOptions pins the session to a protocol version ("" for the SDK's default).
func sdkOptions(pin string) *mcp.ClientSessionOptions {
	if pin == "" {
		return nil
	}
	return &mcp.ClientSessionOptions{ProtocolVersion: pin}
}

// exerciseSDK uses every tool, resource and prompt through a connected session, which must have
// settled on protocol version wantVersion.
func exerciseSDK(t *testing.T, s *mcp.ClientSession, wantClient, wantVersion string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	init := s.InitializeResult()
	if init.ServerInfo.Name != "ownsona" || !strings.Contains(init.Instructions, "remember") {
		t.Errorf("initialize result = %+v", init)
	}
	if init.ProtocolVersion != wantVersion {
		t.Fatalf("the session speaks %s, want %s", init.ProtocolVersion, wantVersion)
	}
	modern := wantVersion >= "2026-07-28"
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s lacks an output schema or annotations", tool.Name)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, allTools) {
		t.Fatalf("tools = %v, want %v", names, allTools)
	}

	coffee := sdkPayload(t, s, "remember", map[string]any{"text": "I prefer dark roast coffee", "tags": []string{"food"}})
	cid := coffee["memory_id"].(float64)
	son := sdkPayload(t, s, "remember", map[string]any{"text": "My son Colby lives in Los Angeles", "tags": "family"})
	sid := son["memory_id"].(float64)
	if p := sdkPayload(t, s, "remember", map[string]any{"text": "sk-proj-" + strings.Repeat("Ab3", 16)}); p["error"].(map[string]any)["code"] != "SECRET_REJECTED" {
		t.Errorf("secret: %v", p)
	}
	b := sdkPayload(t, s, "remember_batch", map[string]any{"items": []any{map[string]any{"text": "Plays cello"}, map[string]any{"text": ""}}})
	if b["summary"].(map[string]any)["failed"] != 1.0 {
		t.Errorf("batch: %v", b)
	}
	r := sdkPayload(t, s, "recall", map[string]any{"query": "coffee"})
	if m := r["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["id"] != cid {
		t.Errorf("recall: %v", r)
	}
	// Colby first; the memories written just before and after it are its context and may
	// follow, at most half as strong.
	if m := sdkPayload(t, s, "search_memory", map[string]any{"query": "Colby"})["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["id"] != sid {
		t.Errorf("search_memory: %v", m)
	} else {
		for _, other := range m[1:] {
			if other.(map[string]any)["score"].(float64) > m[0].(map[string]any)["score"].(float64)/2 {
				t.Errorf("search_memory: %v scores more than half of the match", other)
			}
		}
	}
	if p := sdkPayload(t, s, "build_context_prompt", map[string]any{"user_prompt": "coffee to buy"}); !strings.Contains(p["prompt"].(string), "- I prefer dark roast coffee") {
		t.Errorf("build_context_prompt: %v", p)
	}
	got := sdkPayload(t, s, "get_memory", map[string]any{"id": sid})["memory"].(map[string]any)
	if got["source_client"] != wantClient {
		t.Errorf("source_client = %v, want %v", got["source_client"], wantClient)
	}
	// The client's own name (initialize's clientInfo, or the _meta of each 2026-07-28 request)
	// is the provider of what it writes.
	if got["source_provider"] != "go-sdk-test" {
		t.Errorf("source_provider = %v, want the client's name go-sdk-test", got["source_provider"])
	}
	sdkPayload(t, s, "list_memories", map[string]any{"limit": 1})
	sdkPayload(t, s, "update_memory", map[string]any{"id": sid, "importance": 0.9})
	sdkPayload(t, s, "update_memory_batch", map[string]any{"items": []any{map[string]any{"id": cid, "tags": "food,coffee"}}})
	sdkPayload(t, s, "confirm", map[string]any{"id": sid})
	sdkPayload(t, s, "text_search", map[string]any{"text": "cello"})
	sdkPayload(t, s, "find_near_duplicates", map[string]any{"threshold": 0.9})
	sdkPayload(t, s, "count_memories", nil)
	sdkPayload(t, s, "memory_stats", nil)
	sdkPayload(t, s, "list_tags", nil)
	sdkPayload(t, s, "export_memories", map[string]any{"include_deleted": false})
	sdkPayload(t, s, "forget", map[string]any{"id": cid, "reason": "switched to tea"})
	if p := sdkPayload(t, s, "forget_batch", map[string]any{"ids": []any{cid}}); p["summary"].(map[string]any)["already_deleted"] != 1.0 {
		t.Errorf("forget_batch: %v", p)
	}

	res, err := s.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 4 { // recent, tags, stats and the MCP App
		t.Fatalf("resources: %v %v", res, err)
	}
	tmpl, err := s.ListResourceTemplates(ctx, nil)
	if err != nil || tmpl.ResourceTemplates[0].URITemplate != "ownsona://memories/{id}" {
		t.Fatalf("templates: %v %v", tmpl, err)
	}
	for _, uri := range []string{"ownsona://stats", "ownsona://tags", "ownsona://memories/recent", "ownsona://memories/2"} {
		rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || !json.Valid([]byte(rr.Contents[0].Text)) {
			t.Errorf("read %s: %v %v", uri, rr, err)
		}
	}
	// A missing resource is -32002 in the legacy era, -32602 (invalid params) in 2026-07-28.
	wantCode := int64(ownmcp.CodeResourceNotFound)
	if modern {
		wantCode = ownjsonrpc.CodeInvalidParams
	}
	_, err = s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ownsona://memories/424242"})
	if we := (*jsonrpc.Error)(nil); !errors.As(err, &we) || we.Code != wantCode {
		t.Errorf("unknown resource: %v, want error %d", err, wantCode)
	}
	pl, err := s.ListPrompts(ctx, nil)
	if err != nil || len(pl.Prompts) != 4 {
		t.Fatalf("prompts: %v %v", pl, err)
	}
	gp, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize-memories", Arguments: map[string]string{"tag": "family"}})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "Colby") {
		t.Errorf("summarize-memories: %v %v", gp, err)
	}
	if _, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "recall-context"}); err == nil {
		t.Error("recall-context without topic succeeded")
	}
	cr, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize-memories"}, Argument: mcp.CompleteParamsArgument{Name: "tag", Value: "fa"}})
	if err != nil || !slices.Equal(cr.Completion.Values, []string{"family"}) {
		t.Errorf("complete: %v %v", cr, err)
	}
	if modern {
		return // 2026-07-28 removed ping and logging/setLevel
	}
	if err := s.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	// logging/setLevel is deprecated after 2025-11-25 but part of every legacy revision.
	//lint:ignore SA1019 the server implements the revisions that have it
	if err := s.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Errorf("setLevel: %v", err)
	}
}

func TestSDK_Stdio(t *testing.T) {
	bin := ownsonaBinary(t)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "ownsona.db")
			client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin, "stdio", "--db", db, "--log-level", "error")}, sdkOptions(era.pin))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer s.Close()
			exerciseSDK(t, s, "stdio", era.want)
		})
	}
}

// TestSDK_StreamableHTTP drives the HTTP endpoint with a personal access token, as a script
// would; oauth_sdk_test.go drives it through the whole OAuth flow.
func TestSDK_StreamableHTTP(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			_, s := connectSDKWith(t, testConfig(t, nil), era.pin)
			exerciseSDK(t, s, "pat:test", era.want)
		})
	}
}

// bearerTransport adds a bearer token to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
