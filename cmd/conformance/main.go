// Command conformance is a test server for the official MCP conformance suite
// (@modelcontextprotocol/conformance, `conformance server --url URL`): an mcp.Server with the
// fixture tools, resources, prompts and completions the suite's server scenarios call by name
// (test_simple_text, test://static-text, test_simple_prompt, …), served over Streamable HTTP at
// /mcp on a loopback port, without authentication. It is not part of the ownsona binary; the
// end-to-end suite (testdata/e2e/conformance.test.mjs) builds and runs it.
//
// It serves both eras of the protocol on the same endpoint: the initialize-based revisions up
// to 2025-11-25 (0.1.16's active suite, 0.2.0-alpha.12's `--requirements 2025-11-25`) and the
// stateless 2026-07-28 (`--requirements 2026-07-28`), whose scenarios call fixtures of their
// own: test_missing_capability, test_streaming_elicitation, test_logging_tool,
// test_trigger_tool_change and test_trigger_prompt_change (server-stateless, which also needs
// tools and prompts to announce listChanged), the test_input_required_result_* tools and prompt
// of the multi-round-trip scenarios (SEP-2322), and for two scenarios still pending in the suite
// test_param_headers (x-mcp-header, SEP-2243) and json_schema_2020_12_tool's SEP-2106 keywords.
//
//	go run ./cmd/conformance -port 3001   # prints http://127.0.0.1:3001/mcp
//
// Like any local server without authentication it guards against DNS rebinding: a request whose
// Host is not localhost, 127.0.0.1 or [::1] (any port) is answered 421, one whose Origin names
// another host 403. The legacy HTTP+SSE transport is at /sse (messages to /message).
package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/mcp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }() // a second signal kills the process
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done. It prints the endpoint's URL on stdout once it listens.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 0, "loopback port to listen on (0 picks a free one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	s := newServer(stderr)
	if err := s.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", fmt.Sprint(*port)))
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", s)
	mux.HandleFunc("/sse", func(w http.ResponseWriter, r *http.Request) { s.ServeLegacySSE(w, r, "/message") })
	mux.HandleFunc("/message", s.ServeLegacyMessage)
	base, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := &http.Server{
		Handler:           localOnly(mux),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base }, // cancelled first, so streams end
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stdout, "http://%s/mcp\n", ln.Addr())
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	cancel()
	shutCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	return srv.Shutdown(shutCtx)
}

// localOnly refuses requests that a web page could have sent through DNS rebinding: a Host
// other than a loopback name (421 Misdirected Request), or an Origin of another host (403, as
// the Streamable HTTP transport asks).
func localOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			refuse(w, http.StatusMisdirectedRequest, "the Host header must name localhost, 127.0.0.1 or [::1]")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Host) {
				refuse(w, http.StatusForbidden, "the Origin must be a page on localhost, 127.0.0.1 or [::1]")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a Host header value (host, host:port, [v6]:port) names this
// machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// refuse answers with a JSON-RPC error that has no id.
func refuse(w http.ResponseWriter, status int, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": jsonrpc.CodeInvalidRequest, "message": jsonrpc.MessageInvalidRequest, "data": map[string]string{"reason": reason}}})
	w.Write(b)
}

// ---- the fixture ----

var (
	pngBase64 = base64.StdEncoding.EncodeToString(redPixel())
	wavBase64 = base64.StdEncoding.EncodeToString(silence())
)

// redPixel is a 1×1 red PNG.
func redPixel() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// silence is a WAV file of 10 ms of 8 kHz, 16-bit mono silence.
func silence() []byte {
	const rate, samples = 8000, 80
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + 2*samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))       // fmt chunk size
	le(uint16(1))        // PCM
	le(uint16(1))        // channels
	le(uint32(rate))     // sample rate
	le(uint32(rate * 2)) // byte rate
	le(uint16(2))        // block align
	le(uint16(16))       // bits per sample
	b.WriteString("data")
	le(uint32(2 * samples))
	b.Write(make([]byte, 2*samples))
	return b.Bytes()
}

const noArgs = `{"type":"object","properties":{},"additionalProperties":false}`

// jsonSchema202012 is the inputSchema the json-schema-2020-12 scenario expects to see listed
// unchanged: $schema, $defs and additionalProperties (SEP-1613), and since 2026-07-28 an $anchor
// in $defs, allOf/anyOf and if/then/else (SEP-2106).
const jsonSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// jsonSchema202012Checked is the part of jsonSchema202012 that mcp's validator checks: it has
// no composition or conditional keywords, so the tool's arguments are checked against their
// types alone. The scenario only lists the tool.
const jsonSchema202012Checked = `{
  "type": "object",
  "$defs": {
    "address": {
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "additionalProperties": false
}`

// sep1034Schema asks for one field of each primitive type, each with a default (SEP-1034).
const sep1034Schema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string", "description": "User name", "default": "John Doe"},
    "age": {"type": "integer", "description": "User age", "default": 30},
    "score": {"type": "number", "description": "User score", "default": 95.5},
    "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
    "verified": {"type": "boolean", "description": "Verification status", "default": true}
  }
}`

// sep1330Schema asks for the five kinds of enum field (SEP-1330).
const sep1330Schema = `{
  "type": "object",
  "properties": {
    "untitledSingle": {"type": "string", "title": "Untitled single", "enum": ["option1", "option2", "option3"]},
    "titledSingle": {"type": "string", "title": "Titled single", "oneOf": [
      {"const": "value1", "title": "First Option"},
      {"const": "value2", "title": "Second Option"},
      {"const": "value3", "title": "Third Option"}
    ]},
    "legacyEnum": {"type": "string", "title": "Legacy titled", "enum": ["opt1", "opt2", "opt3"],
      "enumNames": ["Option One", "Option Two", "Option Three"]},
    "untitledMulti": {"type": "array", "title": "Untitled multi", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
    "titledMulti": {"type": "array", "title": "Titled multi", "items": {"anyOf": [
      {"const": "value1", "title": "First Choice"},
      {"const": "value2", "title": "Second Choice"},
      {"const": "value3", "title": "Third Choice"}
    ]}}
  }
}`

func text(s string) *mcp.ToolResult {
	return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(s)}}
}

// fixed is a tool without arguments that always returns the same content.
func fixed(name, desc string, content ...mcp.Content) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(noArgs),
		Handler: func(context.Context, json.RawMessage) (*mcp.ToolResult, error) {
			return &mcp.ToolResult{Content: content}, nil
		}}
}

// pause waits d, or less when ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ask sends a request to the client and turns a refusal into a tool error the model can read.
func ask(ctx context.Context, method string, params any) (json.RawMessage, *mcp.ToolResult) {
	res, err := mcp.Request(ctx, method, params)
	var re *jsonrpc.Error
	switch {
	case errors.Is(err, mcp.ErrNoStream):
		return nil, &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent(method + " needs a client that accepts text/event-stream")}, IsError: true}
	case errors.As(err, &re):
		return nil, &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("the client refused " + method + ": " + re.Message)}, IsError: true}
	}
	return res, nil
}

// elicit is a tool without arguments that asks the client to fill requestedSchema.
func elicit(name, desc, message, requestedSchema string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(noArgs),
		Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
			res, refused := ask(ctx, "elicitation/create", map[string]any{"message": message, "requestedSchema": json.RawMessage(requestedSchema)})
			if refused != nil {
				return refused, nil
			}
			var r struct {
				Action  string          `json:"action"`
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, fmt.Errorf("elicitation result: %w", err)
			}
			return text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, orEmpty(r.Content))), nil
		}}
}

func orEmpty(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	return string(raw)
}

func newServer(stderr io.Writer) *mcp.Server {
	s := &mcp.Server{
		Info:         mcp.Implementation{Name: "ownsona-conformance", Title: "ownsona rpc conformance fixture", Version: "1.0.0"},
		Instructions: "A fixture for the MCP conformance suite.",
		// test_trigger_tool_change and test_trigger_prompt_change announce changes of these
		// lists (server-stateless checks that a listening client hears of them).
		ListChanged: []string{"tools", "prompts"},
		Tools: []*mcp.Tool{
			fixed("test_simple_text", "Returns one text item.", mcp.TextContent("This is a simple text response for testing.")),
			fixed("test_image_content", "Returns a 1x1 red PNG.", mcp.Content{Type: "image", MIMEType: "image/png", Data: pngBase64}),
			fixed("test_audio_content", "Returns 10 ms of silence as WAV.", mcp.Content{Type: "audio", MIMEType: "audio/wav", Data: wavBase64}),
			fixed("test_embedded_resource", "Returns an embedded text resource.", mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}),
			fixed("test_multiple_content_types", "Returns text, an image and an embedded resource.",
				mcp.TextContent("Multiple content types test:"),
				mcp.Content{Type: "image", MIMEType: "image/png", Data: pngBase64},
				mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
					URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}}),
			{
				Name: "test_tool_with_logging", Description: "Sends three info log messages 50 ms apart.", InputSchema: json.RawMessage(noArgs),
				Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
					for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
						if i > 0 {
							if err := pause(ctx, 50*time.Millisecond); err != nil {
								return nil, err
							}
						}
						mcp.Log(ctx, "info", "conformance", msg)
					}
					return text("Tool with logging executed successfully"), nil
				},
			},
			{
				Name: "test_error_handling", Description: "Always fails, as a tool execution error.", InputSchema: json.RawMessage(noArgs),
				Handler: func(context.Context, json.RawMessage) (*mcp.ToolResult, error) {
					return &mcp.ToolResult{Content: []mcp.Content{mcp.TextContent("This tool intentionally returns an error for testing")}, IsError: true}, nil
				},
			},
			{
				Name: "test_tool_with_progress", Description: "Reports progress 0, 50 and 100 of 100, 50 ms apart.", InputSchema: json.RawMessage(noArgs),
				Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
					for i, p := range []float64{0, 50, 100} {
						if i > 0 {
							if err := pause(ctx, 50*time.Millisecond); err != nil {
								return nil, err
							}
						}
						mcp.Progress(ctx, p, 100, "")
					}
					return text("Tool with progress executed successfully"), nil
				},
			},
			{
				Name: "test_sampling", Description: "Asks the client's LLM to answer a prompt (sampling/createMessage).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"],"additionalProperties":false}`),
				Handler: func(ctx context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
					var a struct {
						Prompt string `json:"prompt"`
					}
					if err := json.Unmarshal(args, &a); err != nil {
						return nil, err
					}
					res, refused := ask(ctx, "sampling/createMessage", map[string]any{
						"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": a.Prompt}}},
						"maxTokens": 100,
					})
					if refused != nil {
						return refused, nil
					}
					return text("LLM response: " + samplingText(res)), nil
				},
			},
			{
				Name: "test_elicitation", Description: "Asks the user for a username and an email (elicitation/create).",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"],"additionalProperties":false}`),
				Handler: func(ctx context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
					var a struct {
						Message string `json:"message"`
					}
					if err := json.Unmarshal(args, &a); err != nil {
						return nil, err
					}
					res, refused := ask(ctx, "elicitation/create", map[string]any{"message": a.Message, "requestedSchema": json.RawMessage(`{
						"type": "object",
						"properties": {
							"username": {"type": "string", "description": "User's response"},
							"email": {"type": "string", "description": "User's email address"}
						},
						"required": ["username", "email"]}`)})
					if refused != nil {
						return refused, nil
					}
					var r struct {
						Action  string          `json:"action"`
						Content json.RawMessage `json:"content"`
					}
					if err := json.Unmarshal(res, &r); err != nil {
						return nil, fmt.Errorf("elicitation result: %w", err)
					}
					return text(fmt.Sprintf("User response: action=%s, content=%s", r.Action, orEmpty(r.Content))), nil
				},
			},
			elicit("test_elicitation_sep1034_defaults", "Asks for fields of every primitive type, each with a default (SEP-1034).",
				"Please review and update the form fields with defaults", sep1034Schema),
			elicit("test_elicitation_sep1330_enums", "Asks for the five kinds of enum field (SEP-1330).",
				"Please select options from the enum fields", sep1330Schema),
			{
				// http-custom-header-server-validation (SEP-2243) calls the first tool whose
				// inputSchema has an x-mcp-header, with its string argument in Mcp-Param-Region:
				// Base64-encoded, malformed, or left out.
				Name: "test_param_headers", Description: "Echoes its arguments; region, priority and dryRun travel in Mcp-Param-* headers too.",
				InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "region": {"type": "string", "x-mcp-header": "Region"},
    "priority": {"type": "integer", "x-mcp-header": "Priority"},
    "options": {"type": "object", "properties": {"dryRun": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
    "query": {"type": "string"}
  },
  "required": ["region"],
  "additionalProperties": false
}`),
				Handler: func(_ context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
					return text("Received: " + string(args)), nil
				},
			},
			{
				Name: "json_schema_2020_12_tool", Description: "Tool with JSON Schema 2020-12 features",
				InputSchema:    json.RawMessage(jsonSchema202012),
				ArgumentSchema: json.RawMessage(jsonSchema202012Checked),
				Handler: func(_ context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
					return text("Received: " + string(args)), nil
				},
			},
		},
		ListResources: func(context.Context) ([]mcp.Resource, error) {
			return []mcp.Resource{
				{URI: "test://static-text", Name: "static-text", Title: "Static text", Description: "A static text resource", MIMEType: "text/plain"},
				{URI: "test://static-binary", Name: "static-binary", Title: "Static binary", Description: "A 1x1 red PNG", MIMEType: "image/png"},
				{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched", Description: "A resource to subscribe to", MIMEType: "text/plain"},
			}, nil
		},
		ResourceTemplates: []mcp.ResourceTemplate{
			{URITemplate: "test://template/{id}/data", Name: "template-data", Title: "Data by id", Description: "Data for an id, from a template", MIMEType: "application/json"},
		},
		ReadResource: readResource,
		Prompts: []*mcp.Prompt{
			{
				Name: "test_simple_prompt", Description: "A prompt without arguments.",
				Get: func(context.Context, map[string]string) (*mcp.PromptResult, error) {
					return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("This is a simple prompt for testing.")}}}, nil
				},
			},
			{
				Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments.",
				Arguments: []mcp.PromptArgument{{Name: "arg1", Description: "First test argument", Required: true}, {Name: "arg2", Description: "Second test argument", Required: true}},
				Get: func(_ context.Context, args map[string]string) (*mcp.PromptResult, error) {
					return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user",
						Content: mcp.TextContent(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))}}}, nil
				},
			},
			{
				Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource.",
				Arguments: []mcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}},
				Get: func(_ context.Context, args map[string]string) (*mcp.PromptResult, error) {
					return &mcp.PromptResult{Messages: []mcp.PromptMessage{
						{Role: "user", Content: mcp.Content{Type: "resource", Resource: &mcp.ResourceContents{
							URI: args["resourceUri"], MIMEType: "text/plain", Text: "Embedded resource content for testing."}}},
						{Role: "user", Content: mcp.TextContent("Please process the embedded resource above.")},
					}}, nil
				},
			},
			{
				Name: "test_prompt_with_image", Description: "A prompt with an image.",
				Get: func(context.Context, map[string]string) (*mcp.PromptResult, error) {
					return &mcp.PromptResult{Messages: []mcp.PromptMessage{
						{Role: "user", Content: mcp.Content{Type: "image", MIMEType: "image/png", Data: pngBase64}},
						{Role: "user", Content: mcp.TextContent("Please analyze the image above.")},
					}}, nil
				},
			},
		},
		Complete: func(_ context.Context, req mcp.CompleteRequest) ([]string, error) {
			var all []string
			switch req.ArgName {
			case "arg1", "arg2":
				all = []string{"paris", "park", "party", "test", "testValue1", "testValue2"}
			case "id":
				all = []string{"1", "2", "3", "123"}
			}
			var out []string
			for _, v := range all {
				if strings.HasPrefix(v, req.ArgValue) {
					out = append(out, v)
				}
			}
			return out, nil
		},
		OnError: func(_ context.Context, method string, err error) {
			fmt.Fprintf(stderr, "%s: %v\n", method, err)
		},
	}
	s.Tools = append(s.Tools, modernTools(s)...)
	s.Prompts = append(s.Prompts, modernPrompts()...)
	return s
}

// samplingText is the text of a sampling/createMessage result, whose content is one item or
// (since 2025-11-25) a list of them.
func samplingText(res json.RawMessage) string {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(res, &r)
	type item struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var one item
	if json.Unmarshal(r.Content, &one) == nil && one.Type != "" {
		return one.Text
	}
	var many []item
	json.Unmarshal(r.Content, &many)
	var texts []string
	for _, it := range many {
		if it.Type == "text" {
			texts = append(texts, it.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func readResource(_ context.Context, uri string) ([]mcp.ResourceContents, error) {
	switch uri {
	case "test://static-text":
		return []mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "This is the content of the static text resource."}}, nil
	case "test://static-binary":
		return []mcp.ResourceContents{{URI: uri, MIMEType: "image/png", Blob: pngBase64}}, nil
	case "test://watched-resource":
		return []mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: "Watched resource content."}}, nil
	}
	if rest, ok := strings.CutPrefix(uri, "test://template/"); ok {
		if id, ok := strings.CutSuffix(rest, "/data"); ok && id != "" && !strings.Contains(id, "/") {
			b, _ := json.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			return []mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
		}
	}
	return nil, fmt.Errorf("read %s: %w", uri, mcp.ErrResourceNotFound)
}

// ---- the fixtures of 2026-07-28 ----
//
// A 2026-07-28 server sends no request of its own. A handler that needs the client's input (an
// elicitation, a sampling, its roots) asks through mcp.Elicit or mcp.Input, and in that era its
// call ends with an input_required result naming the questions; the client retries the call
// with inputResponses (and the requestState mcp issued), the handler runs again from the top,
// and this time the answers are there. In the legacy era the same calls are server-to-client
// requests on the call's stream.

// modernTools are the tools the 2026-07-28 scenarios call: server-stateless's diagnostic tools
// and the input_required (SEP-2322) ones.
func modernTools(s *mcp.Server) []*mcp.Tool {
	trigger := func(name, kind string) *mcp.Tool {
		return &mcp.Tool{Name: name, Description: "Tells listeners that the " + kind + " list changed (notifications/" + kind + "/list_changed).",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(context.Context, json.RawMessage) (*mcp.ToolResult, error) {
				s.NotifyListChanged(kind)
				return text("notifications/" + kind + "/list_changed sent"), nil
			}}
	}
	return []*mcp.Tool{
		{
			Name: "test_missing_capability", Description: "Asks the client's model a question, so needs the sampling capability (-32021 without it).",
			InputSchema: json.RawMessage(noArgs),
			Handler:     askCapital,
		},
		{
			Name: "test_streaming_elicitation", Description: "Asks the user to confirm (elicitation): a request on the call's stream before 2026-07-28, an input_required result since.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				ok, action, err := askField(ctx, "confirm", "Please confirm", "ok", "boolean")
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("Elicitation completed: action=%s, ok=%v", action, ok)), nil
			},
		},
		{
			// Not test_tool_with_logging's pauses: server-stateless reads this call's stream for
			// half a second, and must see its answer and no notifications/message (it sets no
			// io.modelcontextprotocol/logLevel).
			Name: "test_logging_tool", Description: "Sends three info log messages, which 2026-07-28 clients get only when their request set a log level.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				for _, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
					mcp.Log(ctx, "info", "conformance", msg)
				}
				return text("Tool with logging executed successfully"), nil
			},
		},
		trigger("test_trigger_tool_change", "tools"),
		trigger("test_trigger_prompt_change", "prompts"),
		{
			Name: "test_input_required_result_elicitation", Description: "Asks the user's name (elicitation) and greets them.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				name, action, err := askField(ctx, "user_name", "What is your name?", "name", "string")
				if err != nil {
					return nil, err
				}
				if action != "accept" {
					return text("No name given: " + action), nil
				}
				return text(fmt.Sprintf("Hello, %v!", name)), nil
			},
		},
		{
			Name: "test_input_required_result_sampling", Description: "Asks the client's model a question (sampling) and returns its answer.",
			InputSchema: json.RawMessage(noArgs),
			Handler:     askCapital,
		},
		{
			Name: "test_input_required_result_list_roots", Description: "Asks the client for its roots (roots/list) and lists them.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				out, err := mcp.Input(ctx, map[string]mcp.InputRequest{"client_roots": rootsRequest})
				if err != nil {
					return nil, err
				}
				roots, err := decodeRoots("client_roots", out["client_roots"])
				if err != nil {
					return nil, err
				}
				return text("Roots: " + strings.Join(roots, ", ")), nil
			},
		},
		{
			Name: "test_input_required_result_request_state", Description: "Asks the user to confirm; the retry must bring back the requestState intact.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				ok, action, err := askField(ctx, "confirm", "Please confirm", "ok", "boolean")
				if err != nil {
					return nil, err
				}
				// mcp verified the requestState before the handler saw the answer.
				return text(fmt.Sprintf("state-ok: action=%s, ok=%v", action, ok)), nil
			},
		},
		{
			Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name (elicitation), a greeting (sampling) and the roots (roots/list) at once.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				out, err := mcp.Input(ctx, map[string]mcp.InputRequest{
					"user_name":    {Method: "elicitation/create", Params: form("What is your name?", "name", "string")},
					"greeting":     sampling("Generate a greeting", 50),
					"client_roots": rootsRequest,
				})
				if err != nil {
					return nil, err
				}
				name, err := decodeElicited("user_name", out["user_name"])
				if err != nil {
					return nil, err
				}
				greeting, err := decodeSampled("greeting", out["greeting"])
				if err != nil {
					return nil, err
				}
				roots, err := decodeRoots("client_roots", out["client_roots"])
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("%s %v (roots: %s)", greeting, name.content["name"], strings.Join(roots, ", "))), nil
			},
		},
		{
			Name: "test_input_required_result_multi_round", Description: "Asks two questions, one per round: a name, then a favourite colour.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				name, _, err := askField(ctx, "step1", "Step 1: What is your name?", "name", "string")
				if err != nil {
					return nil, err
				}
				color, _, err := askField(ctx, "step2", "Step 2: What is your favorite color?", "color", "string")
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("%v likes %v", name, color)), nil
			},
		},
		{
			Name: "test_input_required_result_tampered_state", Description: "Asks the user to confirm; a retry with an altered requestState is refused.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				ok, action, err := askField(ctx, "confirm", "Please confirm", "ok", "boolean")
				if err != nil {
					return nil, err
				}
				return text(fmt.Sprintf("Confirmed: action=%s, ok=%v", action, ok)), nil
			},
		},
		{
			Name: "test_input_required_result_capabilities", Description: "Asks only what the client declared it can answer: elicitation, else sampling, else roots.",
			InputSchema: json.RawMessage(noArgs),
			Handler: func(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
				var answered []string
				for _, q := range []struct {
					key string
					req mcp.InputRequest
				}{
					{"user_name", mcp.InputRequest{Method: "elicitation/create", Params: form("What is your name?", "name", "string")}},
					{"capital_question", sampling("What is the capital of France?", 100)},
					{"client_roots", rootsRequest},
				} {
					_, err := mcp.Input(ctx, map[string]mcp.InputRequest{q.key: q.req})
					var re *jsonrpc.Error
					if errors.As(err, &re) && re.Code == mcp.CodeMissingCapability {
						continue // not declared: not asked
					}
					if err != nil {
						return nil, err
					}
					answered = append(answered, q.key)
				}
				if answered == nil {
					return text("The client declared none of elicitation, sampling and roots."), nil
				}
				return text("Answered: " + strings.Join(answered, ", ")), nil
			},
		},
	}
}

// modernPrompts are the prompts the 2026-07-28 scenarios get.
func modernPrompts() []*mcp.Prompt {
	return []*mcp.Prompt{{
		Name: "test_input_required_result_prompt", Description: "A prompt that first asks the user for its context (elicitation).",
		Get: func(ctx context.Context, _ map[string]string) (*mcp.PromptResult, error) {
			given, action, err := askField(ctx, "user_context", "What context should the prompt use?", "context", "string")
			if err != nil {
				return nil, err
			}
			if action != "accept" {
				given = "none given"
			}
			return &mcp.PromptResult{Messages: []mcp.PromptMessage{{Role: "user",
				Content: mcp.TextContent(fmt.Sprintf("Answer with this context in mind: %v", given))}}}, nil
		},
	}}
}

// askCapital asks the client's model a question (sampling) and returns its answer.
func askCapital(ctx context.Context, _ json.RawMessage) (*mcp.ToolResult, error) {
	out, err := mcp.Input(ctx, map[string]mcp.InputRequest{"capital_question": sampling("What is the capital of France?", 100)})
	if err != nil {
		return nil, err
	}
	answer, err := decodeSampled("capital_question", out["capital_question"])
	if err != nil {
		return nil, err
	}
	return text("LLM response: " + answer), nil
}

// form is an elicitation/create's params asking for one required field of a primitive type.
func form(message, field, typ string) map[string]any {
	return map[string]any{"message": message, "requestedSchema": map[string]any{
		"type":       "object",
		"properties": map[string]any{field: map[string]string{"type": typ}},
		"required":   []string{field},
	}}
}

// sampling asks the client's model one question (sampling/createMessage).
func sampling(question string, maxTokens int) mcp.InputRequest {
	return mcp.InputRequest{Method: "sampling/createMessage", Params: map[string]any{
		"messages":  []any{map[string]any{"role": "user", "content": map[string]string{"type": "text", "text": question}}},
		"maxTokens": maxTokens,
	}}
}

// rootsRequest asks the client for its roots.
var rootsRequest = mcp.InputRequest{Method: "roots/list", Params: map[string]any{}}

// askField elicits one field (see form) under key and returns its value in an accepted answer
// and the answer's action.
func askField(ctx context.Context, key, message, field, typ string) (any, string, error) {
	raw, err := mcp.Elicit(ctx, key, form(message, field, typ))
	if err != nil {
		return nil, "", err
	}
	a, err := decodeElicited(key, raw)
	if err != nil {
		return nil, "", err
	}
	return a.content[field], a.action, nil
}

// elicited is a client's ElicitResult.
type elicited struct {
	action  string
	content map[string]any
}

// The answers are the client's, so they are checked: one that is not the result its request
// asked for is refused with -32602 (a protocol error, never a completed call), as the suite's
// input-required-result-validate-input expects of a number sent for an ElicitResult.

func decodeElicited(key string, raw json.RawMessage) (elicited, error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return elicited{}, badAnswer(key, "must be an ElicitResult object")
	}
	switch r.Action {
	case "accept", "decline", "cancel":
		return elicited{r.Action, r.Content}, nil
	}
	return elicited{}, badAnswer(key, "must be an ElicitResult whose action is accept, decline or cancel")
}

func decodeSampled(key string, raw json.RawMessage) (string, error) {
	var r struct {
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Content) == 0 {
		return "", badAnswer(key, "must be a CreateMessageResult object with content")
	}
	return samplingText(raw), nil
}

func decodeRoots(key string, raw json.RawMessage) ([]string, error) {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Roots == nil {
		return nil, badAnswer(key, "must be a ListRootsResult object with roots")
	}
	uris := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		uris[i] = root.URI
	}
	return uris, nil
}

// badAnswer is -32602 for the client's answer to question key.
func badAnswer(key, reason string) error {
	return jsonrpc.InvalidParams("inputResponses."+key, reason)
}
