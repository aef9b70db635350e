package mcp

//lint:file-ignore SA1019 sampling and logging belong to the revisions the server implements; the SDK deprecates them only from 2026-07-28

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The official MCP Go SDK as a client we did not write, over Streamable HTTP with its session
// and GET stream, and over the legacy HTTP+SSE transport.

// sdkClient is a Go SDK client that answers sampling requests and reports the notifications
// it receives on channels.
type sdkClient struct {
	*mcp.Client
	updated  chan string  // resources/updated URIs
	progress chan float64 // progress values
	logs     chan string  // log levels
}

func newSDKClient() *sdkClient {
	c := &sdkClient{updated: make(chan string, 16), progress: make(chan float64, 16), logs: make(chan string, 16)}
	c.Client = mcp.NewClient(&mcp.Implementation{Name: "go-sdk-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			c.updated <- req.Params.URI
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.progress <- req.Params.Progress
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			c.logs <- string(req.Params.Level)
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
			return &mcp.CreateMessageResult{Role: "assistant", Model: "echo", Content: &mcp.TextContent{Text: "you said " + text}}, nil
		},
	})
	return c
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("no %s within %v", what, wait)
	}
	var zero T
	return zero
}

func structured(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServer_GoSDKStreamable(t *testing.T) {
	f := MustOpenTransport(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := newSDKClient()
	// Pinned to the legacy era: sessions, the GET stream and requests to the client are its.
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.ID()
	if id == "" {
		t.Fatal("the SDK got no session id")
	}
	deadline := time.Now().Add(wait)
	for f.sessionIdle(id) { // the SDK opens the session's GET stream after initialize
		if time.Now().After(deadline) {
			t.Fatal("the SDK did not open its GET stream")
		}
		time.Sleep(time.Millisecond)
	}

	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://b"}); err != nil {
		t.Fatal(err)
	}
	f.NotifyResourceUpdated("test://a")
	f.NotifyResourceUpdated("test://b")
	if got := receive(t, c.updated, "resources/updated"); got != "test://b" {
		t.Errorf("updated %q, want test://b", got)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "who"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := structured(t, res), `"client":"go-sdk-test","transport":"http","version":"2025-11-25"`; !strings.Contains(got, want) {
		t.Errorf("who: %s, want %s in it", got, want)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := structured(t, res), `"text":"you said hello?"`; !strings.Contains(got, want) {
		t.Errorf("ask: %s, want %s in it", got, want)
	}

	params := &mcp.CallToolParams{Name: "progress"}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	for _, want := range []float64{1, 2} {
		if got := receive(t, c.progress, "progress"); got != want {
			t.Errorf("progress %v, want %v", got, want)
		}
	}

	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "log"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warning", "error"} {
		if got := receive(t, c.logs, "log message"); got != want {
			t.Errorf("log level %q, want %q", got, want)
		}
	}

	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	if got := f.ping(t, id, ""); got != 404 {
		t.Errorf("the session after Close: %d, want 404 (the SDK sends DELETE)", got)
	}
}

func TestServer_GoSDKLegacySSE(t *testing.T) {
	f := MustOpenTransport(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	c := newSDKClient()
	cs, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: f.srv.URL + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	if got, want := strings.Join(names, " "), "who wait progress log ask"; got != want {
		t.Errorf("tools %s, want %s", got, want)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "who"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := structured(t, res), `"client":"go-sdk-test","transport":"sse"`; !strings.Contains(got, want) {
		t.Errorf("who: %s, want %s in it", got, want)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := structured(t, res), `"text":"you said hello?"`; !strings.Contains(got, want) {
		t.Errorf("ask: %s, want %s in it", got, want)
	}
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "test://c"}); err != nil {
		t.Fatal(err)
	}
	f.NotifyResourceUpdated("test://c")
	if got := receive(t, c.updated, "resources/updated"); got != "test://c" {
		t.Errorf("updated %q, want test://c", got)
	}
}

// TestServer_GoSDKModern: the Go SDK's default client probes server/discover and settles on
// 2026-07-28, over Streamable HTTP and over stdio; it lists and calls tools, answers an
// elicitation through the multi-round-trip retry (no request is ever sent to it), and is told
// of a resource update on the subscriptions/listen stream its Subscribe opens.
func TestServer_GoSDKModern(t *testing.T) {
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			f := MustOpenFixture(t)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			updated := make(chan string, 64)
			elicited := make(chan string, 4)
			c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-modern", Version: "1.0.0"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					elicited <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
				},
				ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
					updated <- req.Params.URI
				},
			})
			var tr mcp.Transport
			if transport == "http" {
				srv := httptest.NewServer(f.Server)
				t.Cleanup(srv.Close)
				tr = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}
			} else {
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				go func() { f.ServeStdio(ctx, inR, outW); outW.Close() }()
				tr = &mcp.IOTransport{Reader: outR, Writer: inW}
			}
			cs, err := c.Connect(ctx, tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != ModernProtocolVersion {
				t.Fatalf("the SDK settled on %s, want %s", v, ModernProtocolVersion)
			}
			if cs.ID() != "" {
				t.Errorf("a 2026-07-28 client got session id %q", cs.ID())
			}

			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			if want := []string{"echo", "fail", "ask", "slow"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v in order", names, want)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := structured(t, res), `{"text":"hi","transport":"`+transport+`","version":"2026-07-28"}`; got != want {
				t.Errorf("echo = %s, want %s", got, want)
			}

			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
			if err != nil {
				t.Fatal(err)
			}
			if got := receive(t, elicited, "elicitation"); got != "Go ahead?" {
				t.Errorf("elicited %q", got)
			}
			if got, want := res.Content[0].(*mcp.TextContent).Text, `answered {"action":"accept","content":{"ok":true}}`; got != want {
				t.Errorf("ask = %q, want %q", got, want)
			}

			if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "fixture://readme"}); err != nil {
				t.Fatal(err)
			}
			// The SDK opens the listen stream in the background: notify until it is up.
			deadline := time.Now().Add(wait)
			for got := ""; got != "fixture://readme"; {
				f.NotifyResourceUpdated("fixture://readme")
				select {
				case got = <-updated:
				case <-time.After(20 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("no notifications/resources/updated within %v", wait)
				}
			}
		})
	}
}

// TestServer_BothEras: a legacy session and a 2026-07-28 client on one endpoint, their calls
// interleaved, each served under its own revision.
func TestServer_BothEras(t *testing.T) {
	f := MustOpenFixture(t)
	srv := httptest.NewServer(f.Server)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	connect := func(pin string) *mcp.ClientSession {
		var opts *mcp.ClientSessionOptions
		if pin != "" {
			opts = &mcp.ClientSessionOptions{ProtocolVersion: pin}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-" + pin, Version: "1.0.0"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	legacy, modern := connect(LatestProtocolVersion), connect("")
	if legacy.ID() == "" || modern.ID() != "" {
		t.Fatalf("session ids: legacy %q, modern %q; want one for legacy only", legacy.ID(), modern.ID())
	}
	for i := range 10 {
		for _, c := range []struct {
			cs   *mcp.ClientSession
			want string
		}{{legacy, LatestProtocolVersion}, {modern, ModernProtocolVersion}} {
			res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
			if err != nil {
				t.Fatalf("call %d under %s: %v", i, c.want, err)
			}
			if got, want := structured(t, res), `{"text":"x","transport":"http","version":"`+c.want+`"}`; got != want {
				t.Fatalf("call %d = %s, want %s", i, got, want)
			}
		}
	}
}
