package rpc

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// LatestProtocolVersion is the newest MCP revision the server speaks.
const LatestProtocolVersion = "2025-11-25"

// SupportedProtocolVersions are the MCP revisions negotiated in initialize, newest first.
var SupportedProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// defaultHTTPVersion is assumed for HTTP requests without MCP-Protocol-Version (spec 2025-06-18).
const defaultHTTPVersion = "2025-03-26"

// maxBatch caps the requests in one JSON-RPC batch.
const maxBatch = 20

// Implementation names a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Server is an MCP server over tables of tools, resources and prompts. Set its fields before
// serving; it is then safe for concurrent use.
type Server struct {
	Info         Implementation
	Instructions string
	// PageSize is the length of a list page. If zero, 50.
	PageSize int
	Tools    []*Tool
	// ListResources lists the static resources; nil means no resources capability.
	ListResources     func(ctx context.Context) ([]Resource, error)
	ResourceTemplates []ResourceTemplate
	// ReadResource reads a resource; ErrResourceNotFound (possibly wrapped) for an unknown URI.
	ReadResource func(ctx context.Context, uri string) ([]ResourceContents, error)
	Prompts      []*Prompt
	// Complete offers completions of a prompt or resource-template argument; nil means no
	// completions capability.
	Complete func(ctx context.Context, req CompleteRequest) ([]string, error)
	// ToolErrorResult builds the structured payload of an argument error for clients on
	// protocol 2025-11-25 (an isError result instead of -32602). If nil,
	// {"error":{"field","reason"}}.
	ToolErrorResult func(field, reason string) any
	// OnError is told about internal errors, which clients see only as -32603 "internal
	// error". May be nil.
	OnError func(ctx context.Context, method string, err error)

	once    sync.Once
	tools   map[string]*Tool
	schemas map[string]*schemaNode
	prompts map[string]*Prompt
}

// Tool is one callable tool.
type Tool struct {
	Name        string
	Title       string
	Description string
	// InputSchema is the JSON Schema of the arguments shown to clients. Arguments are validated
	// against it before Handler runs, unless ArgumentSchema is set.
	InputSchema json.RawMessage
	// ArgumentSchema, when set, replaces InputSchema for validation: a batch tool validates its
	// items itself (with Schema) so that one bad item does not fail the call.
	ArgumentSchema json.RawMessage
	OutputSchema   json.RawMessage
	Annotations    *ToolAnnotations
	Handler        func(ctx context.Context, args json.RawMessage) (*ToolResult, error)
}

// ToolAnnotations are hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolResult is what a tool call returns.
type ToolResult struct {
	// Content is shown to the model; if empty, it is the JSON text of Structured.
	Content []Content
	// Structured is the structured payload ("structuredContent"); nil means {}.
	Structured any
	IsError    bool
}

// Content is one content item.
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	MIMEType string            `json:"mimeType,omitempty"`
	Data     string            `json:"data,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
}

// TextContent is a text content item.
func TextContent(s string) Content { return Content{Type: "text", Text: s} }

// Resource is a static resource.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceTemplate is a family of resources named by an RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceContents is the content of a read resource.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text"`
}

// Prompt is a prompt template.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Get renders the prompt; required arguments are present and no unknown ones are passed.
	Get func(ctx context.Context, args map[string]string) (*PromptResult, error)
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptResult is a rendered prompt.
type PromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}

// PromptMessage is one message of a rendered prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// CompleteRequest asks for completions of one argument.
type CompleteRequest struct {
	RefType  string // "ref/prompt" or "ref/resource"
	RefName  string // the prompt's name
	RefURI   string // the resource template's URI
	ArgName  string
	ArgValue string
	Context  map[string]string // other arguments already given
}

func (s *Server) init() {
	s.once.Do(func() {
		s.tools = map[string]*Tool{}
		s.schemas = map[string]*schemaNode{}
		for _, t := range s.Tools {
			s.tools[t.Name] = t
			raw := t.InputSchema
			if t.ArgumentSchema != nil {
				raw = t.ArgumentSchema
			}
			sc, err := compileSchema(raw)
			if err != nil {
				panic(fmt.Sprintf("rpc: tool %s: bad input schema: %v", t.Name, err))
			}
			s.schemas[t.Name] = sc
		}
		s.prompts = map[string]*Prompt{}
		for _, p := range s.Prompts {
			s.prompts[p.Name] = p
		}
	})
}

// ---- request context ----

type ctxKey struct{}

// reqInfo is what a handler may learn about its request.
type reqInfo struct {
	transport     string
	version       string
	client        *Implementation
	progressToken json.RawMessage
	notify        func(msg []byte) // nil when the transport cannot push
}

func infoFrom(ctx context.Context) *reqInfo {
	if ri, ok := ctx.Value(ctxKey{}).(*reqInfo); ok {
		return ri
	}
	return &reqInfo{}
}

// TransportFrom names the transport of the request in ctx: "stdio" or "http".
func TransportFrom(ctx context.Context) string { return infoFrom(ctx).transport }

// ProtocolVersionFrom is the MCP revision of the request in ctx.
func ProtocolVersionFrom(ctx context.Context) string { return infoFrom(ctx).version }

// ClientInfoFrom is the client's initialize clientInfo, when the transport keeps it (stdio).
func ClientInfoFrom(ctx context.Context) (Implementation, bool) {
	if c := infoFrom(ctx).client; c != nil {
		return *c, true
	}
	return Implementation{}, false
}

// Progress sends notifications/progress for the request in ctx when it carried
// _meta.progressToken and the transport can push; otherwise it does nothing.
func Progress(ctx context.Context, progress, total float64, message string) {
	ri := infoFrom(ctx)
	if ri.notify == nil || ri.progressToken == nil {
		return
	}
	params := map[string]any{"progressToken": ri.progressToken, "progress": progress}
	if total > 0 {
		params["total"] = total
	}
	if message != "" {
		params["message"] = message
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
	if err == nil {
		ri.notify(b)
	}
}

// session is per-connection state: negotiated version, client info, log level, in-flight
// requests. HTTP is stateless, so each HTTP request has a fresh one.
type session struct {
	transport string
	header    string // HTTP MCP-Protocol-Version, "" when absent

	mu       sync.Mutex
	version  string
	client   *Implementation
	level    string
	inflight map[string]context.CancelFunc
	notify   func([]byte)
}

func (ss *session) protocol() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case ss.header != "":
		return ss.header
	case ss.version != "":
		return ss.version
	case ss.transport == "http":
		return defaultHTTPVersion
	}
	return LatestProtocolVersion
}

// ---- messages ----

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// outcome classifies what a transport should do with a processed message.
type outcome int

const (
	outOK        outcome = iota // a response body, HTTP 200
	outBad                      // a response body describing a malformed message, HTTP 400
	outNoContent                // notifications only: nothing to send
)

var nullID = json.RawMessage("null")

func errorResponse(id json.RawMessage, e *Error) *response {
	if id == nil {
		id = nullID
	}
	return &response{JSONRPC: "2.0", ID: id, Error: e}
}

// process handles one raw message (a request, a notification or a batch).
func (s *Server) process(ctx context.Context, ss *session, data []byte) ([]byte, outcome) {
	s.init()
	if err := checkJSON(data); err != nil {
		return marshal(errorResponse(nil, parseError(err.Error()))), outBad
	}
	data = bytes.TrimSpace(data)
	if data[0] != '[' {
		resp, bad := s.handleOne(ctx, ss, data)
		switch {
		case resp == nil && bad:
			return marshal(errorResponse(nil, invalidRequest("the message is a response; this server sends no requests"))), outBad
		case resp == nil:
			return nil, outNoContent
		case bad:
			return marshal(resp), outBad
		}
		return marshal(resp), outOK
	}
	if v := ss.protocol(); v >= "2025-06-18" && (ss.header != "" || ss.version != "") {
		return marshal(errorResponse(nil, invalidRequest("batch requests are not supported in protocol version "+v))), outBad
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return marshal(errorResponse(nil, parseError(err.Error()))), outBad
	}
	switch {
	case len(items) == 0:
		return marshal(errorResponse(nil, invalidRequest("empty batch"))), outBad
	case len(items) > maxBatch:
		return marshal(errorResponse(nil, invalidRequest(fmt.Sprintf("batch of %d requests; the limit is %d", len(items), maxBatch)))), outBad
	}
	var out []*response
	for _, item := range items {
		resp, bad := s.handleOne(ctx, ss, item)
		if resp == nil && bad {
			resp = errorResponse(nil, invalidRequest("the message is a response; this server sends no requests"))
		}
		if resp != nil {
			out = append(out, resp)
		}
	}
	if len(out) == 0 {
		return nil, outNoContent
	}
	return marshal(out), outOK
}

func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(errorResponse(nil, &Error{Code: CodeInternalError, Message: "internal error"}))
	}
	return b
}

var envelopeKeys = []string{"jsonrpc", "id", "method", "params"}

// handleOne handles one envelope. A nil response means nothing to send; bad reports a
// malformed message (or, with a nil response, a client-sent response object).
func (s *Server) handleOne(ctx context.Context, ss *session, data []byte) (resp *response, bad bool) {
	var env map[string]json.RawMessage
	if len(data) == 0 || data[0] != '{' || json.Unmarshal(data, &env) != nil {
		return errorResponse(nil, invalidRequest("a message must be a JSON object")), true
	}
	id, hasID := env["id"]
	if hasID {
		switch {
		case string(id) == "null", id[0] == '"', id[0] == '-', id[0] >= '0' && id[0] <= '9':
		default:
			return errorResponse(nil, invalidRequest("id must be a string, a number or null")), true
		}
	}
	_, hasResult := env["result"]
	_, hasError := env["error"]
	if _, hasMethod := env["method"]; !hasMethod && hasID && (hasResult || hasError) {
		return nil, true
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(envelopeKeys, k) {
			return errorResponse(id, invalidRequest(fmt.Sprintf("unknown member %q in the request", k))), true
		}
	}
	if string(env["jsonrpc"]) != `"2.0"` {
		return errorResponse(id, invalidRequest(`jsonrpc must be "2.0"`)), true
	}
	var method string
	if err := json.Unmarshal(env["method"], &method); err != nil || method == "" {
		return errorResponse(id, invalidRequest("method must be a non-empty string")), true
	}
	params := env["params"]
	if string(params) == "null" {
		params = nil
	}
	if params != nil && params[0] != '{' {
		if !hasID {
			return nil, false
		}
		return errorResponse(id, invalidParams("params", "must be an object")), false
	}
	if !hasID {
		s.notification(ss, method, params)
		return nil, false
	}
	result, err := s.call(ctx, ss, id, method, params)
	if err != nil {
		return errorResponse(id, s.toError(ctx, method, err)), false
	}
	b, err := json.Marshal(result)
	if err != nil {
		return errorResponse(id, s.toError(ctx, method, err)), false
	}
	return &response{JSONRPC: "2.0", ID: id, Result: b}, false
}

// toError maps a handler error to the JSON-RPC error the client sees.
func (s *Server) toError(ctx context.Context, method string, err error) *Error {
	var re *Error
	var ae *ArgError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &ae):
		return invalidParams(ae.Field, ae.Reason)
	case errors.Is(err, ErrResourceNotFound):
		return &Error{Code: CodeResourceNotFound, Message: "resource not found"}
	}
	if s.OnError != nil {
		s.OnError(ctx, method, err)
	}
	return &Error{Code: CodeInternalError, Message: "internal error"}
}

// notification handles a message without an id; notifications never get a reply.
func (s *Server) notification(ss *session, method string, params json.RawMessage) {
	if method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if err := decodeParams(params, &p); err != nil || p.RequestID == nil {
		return
	}
	ss.mu.Lock()
	cancel := ss.inflight[string(p.RequestID)]
	ss.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// decodeParams decodes params into dst, matching keys exactly: encoding/json matches struct
// fields case-insensitively, so the keys are first checked against dst's JSON names and only
// exact matches are kept.
func decodeParams(params json.RawMessage, dst any) error {
	if params == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(params, &m); err != nil {
		return err
	}
	exact := map[string]json.RawMessage{}
	for _, name := range jsonNames(dst) {
		if v, ok := m[name]; ok {
			exact[name] = v
		}
	}
	b, err := json.Marshal(exact)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

type rpcHandler func(ctx context.Context, ss *session, params json.RawMessage) (any, error)

// call dispatches one request.
func (s *Server) call(ctx context.Context, ss *session, id json.RawMessage, method string, params json.RawMessage) (any, error) {
	var h rpcHandler
	switch method {
	case "initialize":
		h = s.initialize
	case "ping":
		h = func(context.Context, *session, json.RawMessage) (any, error) { return struct{}{}, nil }
	case "tools/list":
		h = s.listTools
	case "tools/call":
		h = s.callTool
	case "resources/list":
		if s.ListResources != nil {
			h = s.listResources
		}
	case "resources/templates/list":
		if s.ListResources != nil {
			h = s.listTemplates
		}
	case "resources/read":
		if s.ReadResource != nil {
			h = s.readResource
		}
	case "prompts/list":
		h = s.listPrompts
	case "prompts/get":
		h = s.getPrompt
	case "completion/complete":
		if s.Complete != nil {
			h = s.complete
		}
	case "logging/setLevel":
		h = s.setLevel
	}
	if h == nil {
		return nil, &Error{Code: CodeMethodNotFound, Message: "method not found", Data: map[string]string{"method": method}}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := string(id)
	ss.mu.Lock()
	if ss.inflight == nil {
		ss.inflight = map[string]context.CancelFunc{}
	}
	ss.inflight[key] = cancel
	ri := &reqInfo{transport: ss.transport, client: ss.client, notify: ss.notify}
	ss.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.inflight, key)
		ss.mu.Unlock()
	}()
	ri.version = ss.protocol()
	var meta struct {
		Meta struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if decodeParams(params, &meta) == nil && meta.Meta.ProgressToken != nil {
		ri.progressToken = meta.Meta.ProgressToken
	}
	return h(context.WithValue(ctx, ctxKey{}, ri), ss, params)
}

func (s *Server) initialize(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		ProtocolVersion *string         `json:"protocolVersion"`
		ClientInfo      *Implementation `json:"clientInfo"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, invalidParams("params", err.Error())
	}
	if p.ProtocolVersion == nil {
		return nil, invalidParams("protocolVersion", "is required")
	}
	version := LatestProtocolVersion
	if slices.Contains(SupportedProtocolVersions, *p.ProtocolVersion) {
		version = *p.ProtocolVersion
	}
	ss.mu.Lock()
	ss.version = version
	ss.client = p.ClientInfo
	ss.mu.Unlock()
	caps := map[string]any{
		"tools":   map[string]bool{"listChanged": false},
		"logging": struct{}{},
	}
	if s.ListResources != nil {
		caps["resources"] = map[string]bool{"subscribe": false, "listChanged": false}
	}
	if len(s.Prompts) > 0 {
		caps["prompts"] = map[string]bool{"listChanged": false}
	}
	if s.Complete != nil {
		caps["completions"] = struct{}{}
	}
	return struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    map[string]any `json:"capabilities"`
		ServerInfo      Implementation `json:"serverInfo"`
		Instructions    string         `json:"instructions,omitempty"`
	}{version, caps, s.Info, s.Instructions}, nil
}

// page cuts items by an opaque cursor and returns the next one ("" on the last page).
func page[T any](s *Server, params json.RawMessage, items []T) ([]T, string, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, "", invalidParams("cursor", "must be a string")
	}
	start := 0
	if p.Cursor != nil && *p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		n, err2 := strconv.Atoi(strings.TrimPrefix(string(b), "offset:"))
		if err != nil || err2 != nil || !strings.HasPrefix(string(b), "offset:") || n < 0 || n > len(items) {
			return nil, "", invalidParams("cursor", "is not a cursor this server returned")
		}
		start = n
	}
	size := s.PageSize
	if size <= 0 {
		size = 50
	}
	end := min(start+size, len(items))
	next := ""
	if end < len(items) {
		next = base64.RawURLEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(end)))
	}
	return items[start:end], next, nil
}

type toolJSON struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

func (s *Server) listTools(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	items, next, err := page(s, params, s.Tools)
	if err != nil {
		return nil, err
	}
	tools := make([]toolJSON, len(items))
	for i, t := range items {
		tools[i] = toolJSON{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations}
	}
	return map[string]any{"tools": tools, "nextCursor": next}, nil
}

type callResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent"`
	IsError           bool      `json:"isError"`
}

func (s *Server) callTool(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, invalidParams("params", err.Error())
	}
	if p.Name == nil {
		return nil, invalidParams("name", "is required")
	}
	t, ok := s.tools[*p.Name]
	if !ok {
		return nil, invalidParams("name", fmt.Sprintf("unknown tool %q", *p.Name))
	}
	args := p.Arguments
	if args == nil || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	var res *ToolResult
	err := s.schemas[t.Name].validateJSON(args)
	if err == nil {
		res, err = t.Handler(ctx, args)
	}
	var ae *ArgError
	if errors.As(err, &ae) && ProtocolVersionFrom(ctx) >= "2025-11-25" {
		var payload any = map[string]any{"error": map[string]string{"field": ae.Field, "reason": ae.Reason}}
		if s.ToolErrorResult != nil {
			payload = s.ToolErrorResult(ae.Field, ae.Reason)
		}
		res, err = &ToolResult{Structured: payload, IsError: true}, nil
	}
	if err != nil {
		return nil, err
	}
	out := callResult{Content: res.Content, StructuredContent: res.Structured, IsError: res.IsError}
	if out.StructuredContent == nil {
		out.StructuredContent = struct{}{}
	}
	if len(out.Content) == 0 {
		b, err := json.Marshal(out.StructuredContent)
		if err != nil {
			return nil, err
		}
		out.Content = []Content{TextContent(string(b))}
	}
	return out, nil
}

func (s *Server) listResources(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	all, err := s.ListResources(ctx)
	if err != nil {
		return nil, err
	}
	items, next, err := page(s, params, all)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []Resource{}
	}
	return map[string]any{"resources": items, "nextCursor": next}, nil
}

func (s *Server) listTemplates(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	items, next, err := page(s, params, s.ResourceTemplates)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []ResourceTemplate{}
	}
	return map[string]any{"resourceTemplates": items, "nextCursor": next}, nil
}

func (s *Server) readResource(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := decodeParams(params, &p); err != nil || p.URI == nil || *p.URI == "" {
		return nil, invalidParams("uri", "is required")
	}
	contents, err := s.ReadResource(ctx, *p.URI)
	if errors.Is(err, ErrResourceNotFound) {
		return nil, &Error{Code: CodeResourceNotFound, Message: "resource not found", Data: map[string]string{"uri": *p.URI}}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"contents": contents}, nil
}

type promptJSON struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

func (s *Server) listPrompts(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	items, next, err := page(s, params, s.Prompts)
	if err != nil {
		return nil, err
	}
	prompts := make([]promptJSON, len(items))
	for i, p := range items {
		prompts[i] = promptJSON{p.Name, p.Title, p.Description, p.Arguments}
	}
	return map[string]any{"prompts": prompts, "nextCursor": next}, nil
}

func (s *Server) getPrompt(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		Name      *string                    `json:"name"`
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, invalidParams("arguments", "must be an object of strings")
	}
	if p.Name == nil {
		return nil, invalidParams("name", "is required")
	}
	pr, ok := s.prompts[*p.Name]
	if !ok {
		return nil, invalidParams("name", fmt.Sprintf("unknown prompt %q", *p.Name))
	}
	args := map[string]string{}
	names := make([]string, 0, len(p.Arguments))
	for k := range p.Arguments {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.ContainsFunc(pr.Arguments, func(a PromptArgument) bool { return a.Name == k }) {
			return nil, invalidParams(k, "is not an argument of prompt "+pr.Name)
		}
		var v string
		if err := json.Unmarshal(p.Arguments[k], &v); err != nil {
			return nil, invalidParams(k, "must be a string")
		}
		args[k] = v
	}
	for _, a := range pr.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return nil, invalidParams(a.Name, "is required")
		}
	}
	res, err := pr.Get(ctx, args)
	if err != nil {
		return nil, err
	}
	if res.Messages == nil {
		res.Messages = []PromptMessage{}
	}
	return res, nil
}

func (s *Server) complete(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		Ref *struct {
			Type string `json:"type"`
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"ref"`
		Argument *struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
		Context struct {
			Arguments map[string]string `json:"arguments"`
		} `json:"context"`
	}
	if err := decodeParams(params, &p); err != nil {
		return nil, invalidParams("params", err.Error())
	}
	if p.Ref == nil {
		return nil, invalidParams("ref", "is required")
	}
	if p.Argument == nil || p.Argument.Name == "" {
		return nil, invalidParams("argument", "is required")
	}
	switch p.Ref.Type {
	case "ref/prompt":
		if _, ok := s.prompts[p.Ref.Name]; !ok {
			return nil, invalidParams("ref.name", fmt.Sprintf("unknown prompt %q", p.Ref.Name))
		}
	case "ref/resource":
	default:
		return nil, invalidParams("ref.type", "must be ref/prompt or ref/resource")
	}
	values, err := s.Complete(ctx, CompleteRequest{RefType: p.Ref.Type, RefName: p.Ref.Name, RefURI: p.Ref.URI,
		ArgName: p.Argument.Name, ArgValue: p.Argument.Value, Context: p.Context.Arguments})
	if err != nil {
		return nil, err
	}
	total := len(values)
	if values == nil {
		values = []string{}
	}
	if len(values) > 100 {
		values = values[:100]
	}
	return map[string]any{"completion": map[string]any{"values": values, "total": total, "hasMore": total > len(values)}}, nil
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func (s *Server) setLevel(ctx context.Context, ss *session, params json.RawMessage) (any, error) {
	var p struct {
		Level string `json:"level"`
	}
	if err := decodeParams(params, &p); err != nil || !slices.Contains(logLevels, p.Level) {
		return nil, invalidParams("level", "must be one of "+strings.Join(logLevels, ", "))
	}
	ss.mu.Lock()
	ss.level = p.Level
	ss.mu.Unlock()
	return struct{}{}, nil
}
