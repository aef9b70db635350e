package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ownsona/ownsona/jsonrpc"
)

// LatestProtocolVersion is the newest initialize-based (legacy) MCP revision the server speaks;
// ModernProtocolVersion is the stateless one beside it.
const LatestProtocolVersion = "2025-11-25"

// SupportedProtocolVersions are the legacy MCP revisions negotiated in initialize, newest first.
var SupportedProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// fallbackVersion is assumed when a client named no revision (no MCP-Protocol-Version header
// and no initialize), as the Streamable HTTP transport asks. Batches are accepted at it.
const fallbackVersion = "2025-03-26"

// Implementation names a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Server is an MCP server over tables of tools, resources and prompts. Set its fields before
// the first request; they are read once (the tables are indexed and the tool schemas compiled
// on first use, see Check) and must not change afterwards. A Server is then safe for
// concurrent use by any number of transports, and must not be copied.
type Server struct {
	Info         Implementation
	Instructions string // sent in initialize; omitted if empty
	// PageSize is the length of a page of tools/list, resources/list,
	// resources/templates/list and prompts/list. If zero, 50.
	PageSize int
	Tools    []*Tool
	// ListResources lists the static resources. If nil, the server has no resources
	// capability and the resources/* methods are not found.
	ListResources     func(ctx context.Context) ([]Resource, error)
	ResourceTemplates []ResourceTemplate
	// ReadResource reads a resource by URI; ErrResourceNotFound (possibly wrapped) for an
	// unknown one. If nil, resources/read is not found.
	ReadResource func(ctx context.Context, uri string) ([]ResourceContents, error)
	// Prompts are the prompt templates. If empty, the server has no prompts capability.
	Prompts []*Prompt
	// Complete offers completions of a prompt or resource-template argument, best first (the
	// client is sent the first 100). If nil, there is no completions capability.
	Complete func(ctx context.Context, req CompleteRequest) ([]string, error)
	// ListChanged names the lists whose changes the server announces with NotifyListChanged:
	// "tools", "prompts" or "resources". Their capabilities say listChanged: true, in
	// initialize and in server/discover. If empty, none says so (NotifyListChanged still tells
	// the sessions and subscriptions/listen streams that receive list changes).
	ListChanged []string
	// ToolErrorResult builds the structured payload of an argument error for clients on
	// protocol 2025-11-25 (an isError result instead of -32602); it must marshal to a JSON
	// object. If nil, {"error":{"field","reason"}}.
	ToolErrorResult func(field, reason string) any
	// Permit, when set, decides whether the caller of ctx may use a tool: tools/list leaves out
	// the tools it refuses and tools/call of one answers its error (an *Error is sent as it
	// is). If nil, every tool is permitted.
	Permit func(ctx context.Context, tool string) error
	// Visible, when set, decides at each request whether a prompt (kind "prompt", by name) or
	// a resource template (kind "template", by URI template) is offered: prompts/list and
	// resources/templates/list leave out the others, and prompts/get and completion/complete
	// answer for them as for ones the server does not have. Unlike the tables, its answers may
	// change while the server runs (announce it with NotifyListChanged). If nil, all are.
	Visible func(ctx context.Context, kind, name string) bool
	// OnError is told about internal errors (handler errors that are not *Error or *ArgError,
	// panics, results that do not marshal), which clients see only as -32603 "internal
	// error". May be nil.
	OnError func(ctx context.Context, method string, err error)

	// Owner names the principal of an HTTP request from its context (the caller's
	// authentication). An HTTP session, and an answer to the server's own request, are
	// accepted only from the owner that created them; others get 404. If nil, every request
	// has the same owner.
	Owner func(ctx context.Context) string
	// SessionIdle ends an HTTP session unused for this long (one with an open GET stream is in
	// use). If zero, 30 minutes.
	SessionIdle time.Duration
	// MaxSessions bounds the HTTP sessions (Streamable HTTP and legacy SSE); at the bound, a
	// new one ends the least recently used. Each owner has at most 64. If zero, 1000.
	MaxSessions int
	// KeepAlive is the interval of SSE comment lines on open streams, so that proxies do not
	// close idle ones. If zero, 25 seconds.
	KeepAlive time.Duration
	// OnWarning, when set, is told of a request served although it breaks a rule that this
	// server waives for real clients' sake (see Warning for the kinds), once per owner (Owner)
	// and kind (the server remembers 4096 of them, then starts afresh). For a log line; it
	// must not block.
	OnWarning func(ctx context.Context, w Warning)
	// OnCall, when set, is told of every request (notifications aside) after its answer is
	// decided, and of those that end without an answer (CallInfo.Outcome says why): for an
	// audit log. It must not block.
	OnCall func(ctx context.Context, call CallInfo)
	// Now is the clock of session expiry and of requestState deadlines. If nil, time.Now.
	Now func() time.Time
	// StateKey signs the requestState of 2026-07-28 input_required results (HMAC-SHA256). If
	// empty, a random key per process: a state does not survive a restart, and the client is
	// asked again.
	StateKey []byte
	// Extensions are the MCP extensions the server supports, by identifier (such as
	// "io.modelcontextprotocol/ui"), each with its settings object (marshalled as JSON; an empty
	// object says "supported, no settings"). They are sent as capabilities.extensions in
	// initialize and in server/discover. If empty, the member is left out.
	Extensions map[string]any

	warnings        warnSet
	emptyLastCursor atomic.Bool // SetEmptyLastCursor

	once      sync.Once
	stateOnce sync.Once
	key       []byte
	liveOnce  sync.Once
	liveSt    *liveState
	checkErr  error
	tools     map[string]*Tool
	schemas   map[string]*schemaNode
	headers   map[string][]paramHeader // each tool's x-mcp-header arguments
	prompts   map[string]*Prompt
	templates map[string]*ResourceTemplate
}

// Tool is one callable tool.
type Tool struct {
	Name        string
	Title       string // omitted if empty
	Description string
	// InputSchema is the JSON Schema of the arguments, shown to clients. If empty,
	// {"type":"object"}. Arguments are validated against it (see CompileSchema for the
	// supported keywords) before Handler runs, unless ArgumentSchema is set. A property of type
	// string, integer or boolean, reached from the root through properties alone, may say
	// "x-mcp-header": "Name": a 2026-07-28 tools/call over HTTP must then carry the argument's
	// value, when it has one, in the Mcp-Param-Name header as well (400, -32020 otherwise).
	// Check refuses an x-mcp-header anywhere else, or one that is not a unique HTTP token.
	InputSchema json.RawMessage
	// ArgumentSchema, when set, replaces InputSchema for validation, for a tool that
	// validates parts of its arguments itself (a batch tool, so that one bad item does not
	// fail the call).
	ArgumentSchema json.RawMessage
	OutputSchema   json.RawMessage // omitted if empty
	Annotations    *ToolAnnotations
	// Meta is the tool's _meta in tools/list (an extension's metadata, such as MCP Apps'
	// {"ui": {"resourceUri": "ui://…"}}); it must marshal to a JSON object. Omitted if nil.
	Meta map[string]any
	// Handler runs the tool with arguments that passed validation: a JSON object whose keys
	// are unique. Those not in the schema's properties reach it only when the schema allows
	// additional properties, and encoding/json matches keys case-insensitively, so a schema
	// should say additionalProperties: false.
	Handler func(ctx context.Context, args json.RawMessage) (*ToolResult, error)
}

// ToolAnnotations are hints about a tool's behaviour; nil hints are omitted, so a server that
// wants every hint sent (some directories read them all) sets every pointer.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolResult is what a tool returns.
type ToolResult struct {
	// Content is shown to the model. If empty, it is one text item holding the JSON of
	// Structured.
	Content []Content
	// Structured is the structured payload, sent as "structuredContent"; it must marshal to
	// a JSON object. If nil, {}.
	Structured any
	IsError    bool
}

// Content is one content item ("text", "image", "audio" or "resource"). Empty fields are
// omitted, except text on a text item.
type Content struct {
	Type     string
	Text     string
	MIMEType string
	Data     string // base64, for image and audio
	Resource *ResourceContents
}

// MarshalJSON writes {"type","text"?,"mimeType"?,"data"?,"resource"?}.
func (c Content) MarshalJSON() ([]byte, error) {
	v := struct {
		Type     string            `json:"type"`
		Text     *string           `json:"text,omitempty"`
		MIMEType string            `json:"mimeType,omitempty"`
		Data     string            `json:"data,omitempty"`
		Resource *ResourceContents `json:"resource,omitempty"`
	}{Type: c.Type, MIMEType: c.MIMEType, Data: c.Data, Resource: c.Resource}
	if c.Type == "text" || c.Text != "" {
		v.Text = &c.Text
	}
	return jsonrpc.Marshal(v)
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
	// Meta is the resource's _meta in resources/list (such as MCP Apps' {"ui": {"csp": …}});
	// it must marshal to a JSON object. Omitted if nil.
	Meta map[string]any `json:"_meta,omitempty"`
}

// ResourceTemplate is a family of resources named by an RFC 6570 URI template such as
// "ownsona://memories/{id}". Its variables are the arguments completion/complete accepts.
type ResourceTemplate struct {
	URITemplate string `json:"uriTemplate"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

// ResourceContents is one read resource (or an embedded one): its text, or, when Blob is set,
// its bytes in base64.
type ResourceContents struct {
	URI      string
	MIMEType string // omitted if empty
	Text     string
	Blob     string // base64; when set, the contents are binary and Text is not sent
	// Meta is the contents' _meta (such as MCP Apps' {"ui": {"csp": …}}); it must marshal to
	// a JSON object. Omitted if nil.
	Meta map[string]any
}

// MarshalJSON writes {"uri","mimeType"?,"text","_meta"?} or, when Blob is set,
// {"uri","mimeType"?,"blob","_meta"?}.
func (rc ResourceContents) MarshalJSON() ([]byte, error) {
	v := struct {
		URI      string         `json:"uri"`
		MIMEType string         `json:"mimeType,omitempty"`
		Text     *string        `json:"text,omitempty"`
		Blob     string         `json:"blob,omitempty"`
		Meta     map[string]any `json:"_meta,omitempty"`
	}{URI: rc.URI, MIMEType: rc.MIMEType, Blob: rc.Blob, Meta: rc.Meta}
	if rc.Blob == "" {
		v.Text = &rc.Text
	}
	return jsonrpc.Marshal(v)
}

// Prompt is a prompt template.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Get renders the prompt. It is called only with the prompt's own arguments, each
	// required one present and not blank. An *ArgError it returns is -32602.
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
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// CompleteRequest asks for completions of one argument of a prompt or resource template.
type CompleteRequest struct {
	RefType  string            // "ref/prompt" or "ref/resource"
	RefName  string            // the prompt's name, for ref/prompt
	RefURI   string            // the resource template, for ref/resource
	ArgName  string            // the argument being completed
	ArgValue string            // what the user has typed so far
	Context  map[string]string // arguments already given; nil if none
}

// Check indexes the tables and compiles the tool schemas, reporting the first problem: a tool
// or prompt without a name, handler or Get, a duplicate name, a schema that does not compile.
// Serving calls it once; if it fails, every request is answered -32603 and OnError is told.
// Call it at startup to fail early.
func (s *Server) Check() error {
	s.once.Do(func() { s.checkErr = s.build() })
	return s.checkErr
}

func (s *Server) build() error {
	s.tools = map[string]*Tool{}
	s.schemas = map[string]*schemaNode{}
	s.headers = map[string][]paramHeader{}
	for i, t := range s.Tools {
		switch {
		case t == nil || t.Name == "":
			return fmt.Errorf("mcp: tool %d has no name", i)
		case t.Handler == nil:
			return fmt.Errorf("mcp: tool %s has no handler", t.Name)
		case s.tools[t.Name] != nil:
			return fmt.Errorf("mcp: two tools named %s", t.Name)
		}
		if len(t.InputSchema) > 0 {
			if err := jsonrpc.CheckJSON(t.InputSchema); err != nil || bytes.TrimSpace(t.InputSchema)[0] != '{' {
				return fmt.Errorf("mcp: tool %s: inputSchema must be a JSON object", t.Name)
			}
		}
		raw := t.InputSchema
		if len(t.ArgumentSchema) > 0 {
			raw = t.ArgumentSchema
		}
		sc, err := compileSchema(raw)
		if err != nil {
			return fmt.Errorf("mcp: tool %s: %w", t.Name, err)
		}
		hs, err := paramHeaders(t.InputSchema)
		if err != nil {
			return fmt.Errorf("mcp: tool %s: inputSchema: %w", t.Name, err)
		}
		s.tools[t.Name] = t
		s.schemas[t.Name] = sc
		s.headers[t.Name] = hs
	}
	s.prompts = map[string]*Prompt{}
	for i, p := range s.Prompts {
		switch {
		case p == nil || p.Name == "":
			return fmt.Errorf("mcp: prompt %d has no name", i)
		case p.Get == nil:
			return fmt.Errorf("mcp: prompt %s has no Get", p.Name)
		case s.prompts[p.Name] != nil:
			return fmt.Errorf("mcp: two prompts named %s", p.Name)
		}
		s.prompts[p.Name] = p
	}
	for _, kind := range s.ListChanged {
		if !slices.Contains([]string{"tools", "prompts", "resources"}, kind) {
			return fmt.Errorf("mcp: ListChanged: %q is not tools, prompts or resources", kind)
		}
	}
	s.templates = map[string]*ResourceTemplate{}
	for i := range s.ResourceTemplates {
		s.templates[s.ResourceTemplates[i].URITemplate] = &s.ResourceTemplates[i]
	}
	return nil
}

// ---- request context ----

type ctxKey struct{}

// reqInfo is what a handler may learn about its request.
type reqInfo struct {
	server        *Server
	session       *session
	transport     string
	version       string
	client        *Implementation
	progressToken json.RawMessage
	push          func([]byte) bool // nil when the transport cannot push
	meta          reqMeta           // what the request's _meta declared
	id            json.RawMessage   // the request's id
	method        string
	params        params
	// input is what a 2026-07-28 retry carries for Elicit: the client's inputResponses, once
	// its requestState has been verified.
	input params

	mu      sync.Mutex
	done    bool   // the response is decided: no more progress
	outcome string // SetOutcome's word, for CallInfo.Outcome
}

// SetOutcome names how the request in ctx ended when its answer alone does not say so (such
// as "rejected": a tool refused to run without someone's approval), for CallInfo.Outcome; the
// last word wins. Outside a request it does nothing.
func SetOutcome(ctx context.Context, word string) {
	if ri := infoFrom(ctx); ri != nil {
		ri.mu.Lock()
		ri.outcome = word
		ri.mu.Unlock()
	}
}

// CallTrace is told of the requests served under a context (WithCallTrace): for a transport's
// own record of what it carried, such as an HTTP handler's audit log wrapped around mcp's.
type CallTrace struct {
	// Ended, when set, is told of each request as OnCall is. It must not block; over the
	// legacy SSE transport it may be told after the POST that carried the request returned.
	Ended func(CallInfo)
}

type traceKey struct{}

// WithCallTrace returns ctx carrying t, which the requests served under it tell.
func WithCallTrace(ctx context.Context, t *CallTrace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func infoFrom(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(ctxKey{}).(*reqInfo)
	return ri
}

// TransportFrom names the transport of the request in ctx: "stdio", "http" or "test"
// (Server.Handle); "" outside a request.
func TransportFrom(ctx context.Context) string {
	if ri := infoFrom(ctx); ri != nil {
		return ri.transport
	}
	return ""
}

// ProtocolVersionFrom is the MCP revision of the request in ctx: the MCP-Protocol-Version
// header, else the one negotiated by initialize on this connection, else 2025-03-26.
func ProtocolVersionFrom(ctx context.Context) string {
	if ri := infoFrom(ctx); ri != nil {
		return ri.version
	}
	return ""
}

// ClientInfoFrom is the clientInfo the client sent in initialize, on transports that keep a
// connection or a session (stdio, Streamable HTTP with Mcp-Session-Id, legacy SSE). An HTTP
// request without a session never has it.
func ClientInfoFrom(ctx context.Context) (Implementation, bool) {
	if ri := infoFrom(ctx); ri != nil && ri.client != nil {
		return *ri.client, true
	}
	return Implementation{}, false
}

// Progress sends notifications/progress for the request in ctx when the request carried
// _meta.progressToken and the transport can push (stdio, or an HTTP client that accepts
// text/event-stream, which then gets the answer as an event stream); otherwise, and once the
// request is answered, it does nothing. progress should grow with each call; total (if not
// zero) and message are optional. Safe for concurrent use.
func Progress(ctx context.Context, progress, total float64, message string) {
	ri := infoFrom(ctx)
	if ri == nil || ri.push == nil || ri.progressToken == nil {
		return
	}
	type params struct {
		ProgressToken json.RawMessage `json:"progressToken"`
		Progress      float64         `json:"progress"`
		Total         float64         `json:"total,omitempty"`
		Message       string          `json:"message,omitempty"`
	}
	b, err := notification("notifications/progress", params{ri.progressToken, progress, total, message})
	if err != nil { // NaN or ±Inf
		return
	}
	ri.send(b)
}

// KeepAlive sends a comment line on the event stream of the Streamable HTTP request in ctx,
// starting the stream when the client accepts one (which lifts the connection's write
// deadline), so that a call that waits long — for a person's answer — is not cut by a proxy
// or a timeout. It reports whether the line went out; elsewhere (stdio, the legacy SSE
// transport whose stream keeps itself alive, a client that takes only application/json, an
// answered request) it does nothing.
func KeepAlive(ctx context.Context) bool {
	ri := infoFrom(ctx)
	if ri == nil || ri.transport != "http" {
		return false
	}
	return ri.send(nil)
}

// send pushes a message related to the request, unless it is answered.
func (ri *reqInfo) send(b []byte) bool {
	ri.mu.Lock()
	defer ri.mu.Unlock()
	if ri.done || ri.push == nil {
		return false
	}
	return ri.push(b)
}

// notification encodes a JSON-RPC notification.
func notification(method string, params any) ([]byte, error) {
	return jsonrpc.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", method, params})
}

// ---- sessions and calls ----

// session is the state of one connection or HTTP session: the negotiated revision, the client,
// the log level, the subscriptions and the requests in flight. A stdio connection, a Streamable
// HTTP session (Mcp-Session-Id) and a legacy SSE stream are each one session; an HTTP request
// without a session id is a session of its own that shares its owner's calls (so that a
// notifications/cancelled in another request finds the call it names).
type session struct {
	transport string
	owner     string // the principal that created it (Server.Owner); "" on stdio
	id        string // Mcp-Session-Id or the legacy sessionId; "" otherwise
	// notify writes a message to a stdio connection; nil elsewhere.
	notify func([]byte)
	// out queues messages for the session's stream (GET /mcp or the legacy SSE stream); nil
	// for a session of one request.
	out   *outbox
	calls *callSet

	mu          sync.Mutex
	negotiated  string
	client      *Implementation
	caps        params // the capabilities the client declared in initialize
	level       string
	subs        map[string]bool // subscribed resource URIs
	lastUsed    time.Time
	streaming   bool // a GET stream is attached
	ended       bool
	initialized bool          // an initialize request succeeded on it
	slots       chan struct{} // legacy SSE: its running requests
}

// protocol is the revision of a message: its MCP-Protocol-Version header (HTTP; "" when
// absent), else the one initialize negotiated on the session, else 2025-03-26.
func (ss *session) protocol(header string) string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	switch {
	case header != "":
		return header
	case ss.negotiated != "":
		return ss.negotiated
	}
	return fallbackVersion
}

// batchAllowed: batches were removed from MCP in 2025-06-18.
func batchAllowed(version string) bool { return version <= fallbackVersion }

// push sends a message unrelated to any request: on the stdio connection or the session's
// stream. It reports whether the message went out (a full or missing stream drops it).
func (ss *session) push(b []byte) bool {
	switch {
	case ss.notify != nil:
		ss.notify(b)
		return true
	case ss.out != nil:
		return ss.out.offer(b)
	}
	return false
}

// callSet is the requests in flight of a session, by id.
type callSet struct {
	mu sync.Mutex
	m  map[string]*call
}

// call is one request being answered.
type call struct {
	req       *jsonrpc.Message
	header    string // the MCP-Protocol-Version of its message
	key       string // in the call set; "" when not cancellable
	ctx       context.Context
	cancel    context.CancelFunc
	info      *reqInfo
	cancelled atomic.Bool // by notifications/cancelled or the session's end: send no response
	byClient  atomic.Bool // by notifications/cancelled
}

// begin registers a request as in flight, before it runs, so that a cancellation read right
// after it finds it. push carries the messages that relate to the request (progress, log
// messages, requests to the client): the stdio connection or the POST's event stream; nil
// when there is none.
func (s *Server) begin(ctx context.Context, ss *session, r *jsonrpc.Message, header string, push func([]byte) bool) *call {
	ctx, cancel := context.WithCancel(ctx)
	ss.mu.Lock()
	client := ss.client
	ss.mu.Unlock()
	c := &call{req: r, header: header, cancel: cancel, info: &reqInfo{server: s, session: ss, transport: ss.transport, client: client, push: push, id: r.ID, method: r.Method}}
	if r.Method != "initialize" { // the initialize request must not be cancelled
		c.key = idKey(r.ID)
		ss.calls.mu.Lock()
		if ss.calls.m == nil {
			ss.calls.m = map[string]*call{}
		}
		ss.calls.m[c.key] = c
		ss.calls.mu.Unlock()
	}
	c.ctx = context.WithValue(ctx, ctxKey{}, c.info)
	return c
}

// end unregisters a call and stops its notifications.
func (s *Server) end(ss *session, c *call) {
	c.info.mu.Lock()
	c.info.done = true
	c.info.mu.Unlock()
	c.cancel()
	if c.key == "" {
		return
	}
	ss.calls.mu.Lock()
	if ss.calls.m[c.key] == c {
		delete(ss.calls.m, c.key)
	}
	ss.calls.mu.Unlock()
}

// cancelCall handles notifications/cancelled: unknown or finished ids are ignored.
func (ss *session) cancelCall(id json.RawMessage) {
	ss.calls.mu.Lock()
	c := ss.calls.m[idKey(id)]
	ss.calls.mu.Unlock()
	if c != nil {
		c.byClient.Store(true)
		c.cancelled.Store(true)
		c.cancel()
	}
}

// cancelAll cancels every call in flight, when a session ends. Like a cancelled request, they
// get no response: there is no one left to read it, and the handlers' context errors are not
// internal errors to report.
func (ss *session) cancelAll() {
	ss.calls.mu.Lock()
	defer ss.calls.mu.Unlock()
	for _, c := range ss.calls.m {
		c.cancelled.Store(true)
		c.cancel()
	}
}

// idKey identifies a request id regardless of how it was spelled: "\u0061" is "a", 1.0 is 1.
func idKey(id json.RawMessage) string {
	switch {
	case len(id) == 0:
		return ""
	case id[0] == '"':
		var s string
		if json.Unmarshal(id, &s) == nil {
			return "s" + s
		}
	case id[0] == '-' || id[0] >= '0' && id[0] <= '9':
		d := parseDecimal(string(id))
		return fmt.Sprintf("n%t:%s:%d", d.neg, d.digits, d.exp)
	}
	return string(id)
}

var errClientResponse = jsonrpc.InvalidRequest("the message is a response, but no request of this server with its id is waiting")

// outcome tells a transport what kind of answer a message got.
type outcome int

const (
	outOK   outcome = iota // a response body (HTTP 200)
	outBad                 // the message was malformed: an error body, nothing ran (HTTP 400)
	outNone                // notifications only: no body (HTTP 202 or 204)
)

// handle answers one message synchronously (HTTP and Handle): batch elements one after
// another. push carries the messages related to its requests (see begin). A client-sent
// response is delivered to the request of this server it answers, else answered -32600. The
// answer is appended to dst (nil: a slice of its own).
func (s *Server) handle(ctx context.Context, ss *session, header string, data []byte, push func([]byte) bool, dst []byte) ([]byte, outcome) {
	reqs, batch, fail := jsonrpc.DecodeMessage(data)
	if v := ss.protocol(header); fail == nil && batch && !batchAllowed(v) {
		fail = jsonrpc.InvalidRequest("batches are not supported in protocol version " + v)
	}
	if fail != nil {
		return (&jsonrpc.Response{Err: fail}).AppendTo(dst), outBad
	}
	var out []*jsonrpc.Response
	ran := false
	for i := range reqs {
		r := &reqs[i]
		switch {
		case r.IsResponse:
			if !s.deliver(ss, r) {
				out = append(out, &jsonrpc.Response{Err: errClientResponse})
				continue
			}
			ran = true
		case r.Invalid != nil:
			out = append(out, &jsonrpc.Response{ID: r.ID, Err: r.Invalid})
		case r.ID == nil:
			ran = true
			s.notification(ss, r)
		default:
			ran = true
			if resp := s.exec(ss, s.begin(ctx, ss, r, header, push)); resp != nil {
				out = append(out, resp)
			}
		}
	}
	switch {
	case len(out) == 0:
		return nil, outNone
	case !ran:
		return jsonrpc.EncodeAll(dst, batch, out), outBad
	}
	return jsonrpc.EncodeAll(dst, batch, out), outOK
}

// Handle answers one raw message (a request, a notification or a batch) outside any transport,
// for tests and goldens, and returns the raw response: nil when there is nothing to send. Each
// call is a session of its own (transport "test") at the revision initialize negotiates, else
// 2025-03-26; a client-sent response is answered -32600.
func (s *Server) Handle(ctx context.Context, msg []byte) []byte {
	out, _ := s.handle(ctx, &session{transport: "test", calls: &callSet{}}, "", msg, nil, nil)
	return out
}

// notification handles a message without an id; notifications are never answered.
func (s *Server) notification(ss *session, r *jsonrpc.Message) {
	if r.Method != "notifications/cancelled" || r.BadParams != nil {
		return
	}
	p, _ := jsonrpc.Members(r.Params)
	if id, ok := p["requestId"]; ok {
		ss.cancelCall(id)
	}
}

// errNoAnswer is a handler's way to end its request without a response.
var errNoAnswer = errors.New("mcp: the request ended without an answer")

// exec runs a registered call and returns its response, or nil when it was cancelled.
func (s *Server) exec(ss *session, c *call) (resp *jsonrpc.Response) {
	defer s.end(ss, c)
	start := time.Now()
	result, err := s.run(ss, c)
	if c.cancelled.Load() || err != nil && c.ctx.Err() != nil && errors.Is(err, c.ctx.Err()) || errors.Is(err, errNoAnswer) {
		// Cancelled, or its client went (an HTTP stream closed): no one reads an answer. Or
		// the server ended it with a notification instead (a subscription, see listen), which
		// is not the client abandoning it.
		if s.told(c) && !errors.Is(err, errNoAnswer) {
			ci := callInfo(c, nil, nil, time.Since(start))
			ci.Outcome = OutcomeAbandoned
			if c.byClient.Load() {
				ci.Outcome = OutcomeCancelled
			}
			s.called(c, ci)
		}
		return nil
	}
	if s.told(c) {
		defer func() { s.called(c, callInfo(c, result, resp, time.Since(start))) }()
	}
	if ir, ok := asInputRequired(err); ok && c.info.meta.modern {
		result, err = s.inputRequiredResult(c.info, ir)
		SetOutcome(c.ctx, OutcomeInputRequired)
	}
	if err != nil {
		return &jsonrpc.Response{ID: c.req.ID, Err: s.toError(c.ctx, c.req.Method, err)}
	}
	buf := jsonrpc.GetResultBuf()
	if cr, ok := result.(callResult); ok {
		buf.Reset()
		err = cr.encode(buf)
		cr.release()
	} else {
		err = jsonrpc.MarshalInto(buf, result)
	}
	if err != nil {
		jsonrpc.PutResultBuf(buf)
		s.reportInternal(c.ctx, c.req.Method, fmt.Errorf("marshal result: %w", err))
		return &jsonrpc.Response{ID: c.req.ID, Err: jsonrpc.InternalError()}
	}
	if c.info.meta.modern || c.req.Method == "server/discover" {
		out := jsonrpc.GetResultBuf()
		s.decorate(out, c.req.Method, buf.Bytes())
		jsonrpc.PutResultBuf(buf)
		buf = out
	}
	return &jsonrpc.Response{ID: c.req.ID, Result: buf.Bytes(), Pooled: buf}
}

// CallInfo describes a request for Server.OnCall: never its arguments.
type CallInfo struct {
	Method    string
	Tool      string // the tool of a tools/call; "" otherwise
	Code      int    // the JSON-RPC error code; 0 when the request succeeded
	ToolError bool   // a tools/call whose result has isError
	Duration  time.Duration
	// Outcome, when not empty, says how the request ended where its answer does not:
	// OutcomeCancelled or OutcomeAbandoned (it got no answer), OutcomeInputRequired, or the
	// handler's own word (SetOutcome).
	Outcome string
}

// Outcomes of CallInfo that mcp itself gives.
const (
	// OutcomeCancelled: the client cancelled the request (notifications/cancelled); it got no
	// answer.
	OutcomeCancelled = "cancelled"
	// OutcomeAbandoned: the client went before the answer (its HTTP request or stream closed,
	// or its session ended); no one read one.
	OutcomeAbandoned = "abandoned"
	// OutcomeInputRequired: a 2026-07-28 round that ended asking the client for input (an
	// input_required result); the retry is a request of its own.
	OutcomeInputRequired = "input_required"
)

// told reports whether anyone is told of c: OnCall, or a CallTrace in its context.
func (s *Server) told(c *call) bool {
	return s.OnCall != nil || c.ctx.Value(traceKey{}) != nil
}

// called tells OnCall and the context's CallTrace of a request.
func (s *Server) called(c *call, ci CallInfo) {
	if s.OnCall != nil {
		s.OnCall(c.ctx, ci)
	}
	if t, _ := c.ctx.Value(traceKey{}).(*CallTrace); t != nil && t.Ended != nil {
		t.Ended(ci)
	}
}

func callInfo(c *call, result any, resp *jsonrpc.Response, d time.Duration) CallInfo {
	c.info.mu.Lock()
	ci := CallInfo{Method: c.req.Method, Duration: d, Outcome: c.info.outcome}
	c.info.mu.Unlock()
	if c.req.Method == "tools/call" {
		if p, ok := jsonrpc.Members(c.req.Params); ok {
			var name string
			if json.Unmarshal(p["name"], &name) == nil {
				ci.Tool = name
			}
		}
	}
	if resp != nil && resp.Err != nil {
		ci.Code = resp.Err.Code
	}
	switch r := result.(type) {
	case callResult:
		ci.ToolError = r.IsError
	case *callResult:
		ci.ToolError = r != nil && r.IsError
	}
	return ci
}

// run dispatches a call, turning a panic into an internal error.
func (s *Server) run(ss *session, c *call) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.reportInternal(c.ctx, c.req.Method, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			result, err = nil, jsonrpc.InternalError()
		}
	}()
	if err := s.Check(); err != nil {
		s.reportInternal(c.ctx, c.req.Method, err)
		return nil, jsonrpc.InternalError()
	}
	p, _ := jsonrpc.Members(c.req.Params)
	if p == nil {
		p = params{}
	}
	rm, tok, err := readMeta(p)
	c.info.meta, c.info.progressToken, c.info.params = rm, tok, p
	c.info.version = ss.protocol(c.header)
	if rm.modern {
		// 2026-07-28: the request declares its revision and client; the session's are not
		// consulted, and the methods that revision removed do not exist. As over HTTP (see
		// classify), the version decides first, then whether the method exists in it, and only
		// then the rest of _meta.
		c.info.version, c.info.client = rm.version, rm.client
		if rm.version != "" && !slices.Contains(ModernProtocolVersions, rm.version) {
			return nil, unsupportedVersion(rm.version)
		}
	}
	h := s.method(c.req.Method)
	legacySSE := ss.transport == "sse" // 2024-11-05's transport carries no 2026-07-28 request
	if h == nil || rm.modern && !modernMethod(c.req.Method) || !rm.modern && c.req.Method == "subscriptions/listen" ||
		legacySSE && (rm.modern || c.req.Method == "server/discover") {
		return nil, jsonrpc.MethodNotFound(c.req.Method)
	}
	if err != nil {
		return nil, err
	}
	if c.req.BadParams != nil {
		return nil, c.req.BadParams
	}
	if err := checkKeys(p, "", append(methodKeys[c.req.Method], "_meta")...); err != nil {
		return nil, err
	}
	if rm.modern {
		if err := s.verifyInput(c.ctx, c.info); err != nil {
			return nil, err
		}
	}
	if c.req.Method == "initialize" && c.req.Params == nil {
		p = nil // no params at all (see initialize)
	}
	return h(c.ctx, ss, p)
}
