package mcp

// The MCP methods. Params are read member by member with exact keys (see members); members a
// method does not know are ignored, as MCP adds optional ones in every revision.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/jsonrpc"
)

type params = map[string]json.RawMessage

type methodFunc func(ctx context.Context, ss *session, p params) (any, error)

// method returns the handler of a method, nil when the server does not offer it.
func (s *Server) method(name string) methodFunc {
	switch name {
	case "initialize":
		return func(ctx context.Context, ss *session, p params) (any, error) { return s.initialize(ss, p) }
	case "ping":
		return func(context.Context, *session, params) (any, error) { return struct{}{}, nil }
	case "tools/list":
		return s.listTools
	case "tools/call":
		return s.callTool
	case "resources/list":
		if s.ListResources != nil {
			return s.listResources
		}
	case "resources/templates/list":
		if s.ListResources != nil {
			return s.listTemplates
		}
	case "resources/read":
		if s.ListResources != nil && s.ReadResource != nil {
			return s.readResource
		}
	case "resources/subscribe":
		if s.ListResources != nil && s.ReadResource != nil {
			return s.subscribe
		}
	case "resources/unsubscribe":
		if s.ListResources != nil && s.ReadResource != nil {
			return s.unsubscribe
		}
	case "prompts/list":
		if len(s.Prompts) > 0 {
			return s.listPrompts
		}
	case "prompts/get":
		if len(s.Prompts) > 0 {
			return s.getPrompt
		}
	case "completion/complete":
		if s.Complete != nil {
			return s.complete
		}
	case "logging/setLevel":
		return s.setLevel
	case "server/discover":
		return func(context.Context, *session, params) (any, error) { return s.discover(), nil }
	case "subscriptions/listen":
		return s.listen
	}
	return nil
}

// ---- params ----

// methodKeys are the params members each method reads, besides _meta.
var methodKeys = map[string][]string{
	"initialize":               {"protocolVersion", "capabilities", "clientInfo"},
	"ping":                     nil,
	"logging/setLevel":         {"level"},
	"tools/list":               {"cursor"},
	"tools/call":               {"name", "arguments", "inputResponses", "requestState"},
	"resources/list":           {"cursor"},
	"resources/templates/list": {"cursor"},
	"resources/read":           {"uri", "inputResponses", "requestState"},
	"resources/subscribe":      {"uri"},
	"resources/unsubscribe":    {"uri"},
	"prompts/list":             {"cursor"},
	"prompts/get":              {"name", "arguments", "inputResponses", "requestState"},
	"completion/complete":      {"ref", "argument", "context"},
	"server/discover":          nil,
	"subscriptions/listen":     {"notifications"},
}

// checkKeys refuses a member that is not one of known but looks like one: equal under Unicode
// case folding ("Name", "naMe", "\u212Aey" for "key", "paramſ" for "params") or with trailing
// NULs. Another decoder on the way, such as encoding/json's case-insensitive struct matching,
// could take it for the real member and act on a different value than this server does.
// Members that look like nothing known are ignored (MCP adds optional ones).
func checkKeys(p params, prefix string, known ...string) error {
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if slices.Contains(known, k) {
			continue
		}
		for _, kn := range known {
			if lookalike(k, kn) {
				return jsonrpc.InvalidParams(joinPath(prefix, k), fmt.Sprintf("must be spelled exactly %q", kn))
			}
		}
	}
	return nil
}

// lookalike reports whether a differs from b only by case folding or trailing NULs.
func lookalike(a, b string) bool {
	return a != b && (strings.EqualFold(a, b) || strings.TrimRight(a, "\x00") == b)
}

// str reads an optional string member (null counts as absent); field names it in errors.
func str(p params, field, key string) (string, bool, error) {
	raw, ok := p[key]
	if !ok || string(raw) == "null" {
		return "", false, nil
	}
	var v string
	if raw[0] != '"' || json.Unmarshal(raw, &v) != nil {
		return "", false, jsonrpc.InvalidParams(field, "must be a string")
	}
	return v, true, nil
}

// requiredStr reads a string member that must be present.
func requiredStr(p params, field, key string) (string, error) {
	v, ok, err := str(p, field, key)
	if err == nil && !ok {
		err = jsonrpc.InvalidParams(field, "is required")
	}
	return v, err
}

// object reads an optional object member (null counts as absent).
func object(p params, field, key string) (params, bool, error) {
	raw, ok := p[key]
	if !ok || string(raw) == "null" {
		return nil, false, nil
	}
	m, ok := jsonrpc.Members(raw)
	if !ok {
		return nil, false, jsonrpc.InvalidParams(field, "must be an object")
	}
	return m, true, nil
}

// stringMap reads an object of strings; field prefixes each member's name in errors.
func stringMap(p params, field, key string) (map[string]string, error) {
	m, ok, err := object(p, field, key)
	if !ok || err != nil {
		return nil, err
	}
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, _, err := str(m, field+"."+k, k)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// ---- lifecycle ----

type listChanged struct {
	ListChanged bool `json:"listChanged"`
}

type resourceCapabilities struct {
	Subscribe   bool `json:"subscribe"`
	ListChanged bool `json:"listChanged"`
}

type capabilities struct {
	Completions *struct{}             `json:"completions,omitempty"`
	Logging     struct{}              `json:"logging"`
	Prompts     *listChanged          `json:"prompts,omitempty"`
	Resources   *resourceCapabilities `json:"resources,omitempty"`
	Tools       listChanged           `json:"tools"`
	Extensions  map[string]any        `json:"extensions,omitempty"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    capabilities   `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// initialize negotiates the revision: the client's when supported, else the latest. A request
// without params at all (nil p: seed 001's plain JSON-RPC callers send {"method":"initialize"}
// alone, in a batch too) gets the latest legacy revision; params without protocolVersion
// are still refused.
func (s *Server) initialize(ss *session, p params) (any, error) {
	asked := LatestProtocolVersion
	if p != nil {
		var err error
		if asked, err = requiredStr(p, "protocolVersion", "protocolVersion"); err != nil {
			return nil, err
		}
	}
	var client *Implementation
	ci, ok, err := object(p, "clientInfo", "clientInfo")
	if err != nil {
		return nil, err
	}
	if ok {
		if client, err = readImplementation(ci, "clientInfo"); err != nil {
			return nil, err
		}
	}
	caps, _, err := object(p, "capabilities", "capabilities")
	if err != nil {
		return nil, err
	}
	version := LatestProtocolVersion
	if slices.Contains(SupportedProtocolVersions, asked) {
		version = asked
	}
	ss.mu.Lock()
	ss.negotiated = version
	ss.initialized = true
	if client != nil {
		ss.client = client
	}
	ss.caps = caps
	ss.mu.Unlock()
	return initializeResult{version, s.capabilities(false), s.Info, s.Instructions}, nil
}

// capabilities are the server's, for initialize (legacy) or server/discover (modern). In both
// eras resources.subscribe says resources can be watched: through resources/subscribe in the
// legacy era, through subscriptions/listen's resourceSubscriptions in 2026-07-28.
func (s *Server) capabilities(modern bool) capabilities {
	caps := capabilities{}
	if s.Complete != nil {
		caps.Completions = &struct{}{}
	}
	announces := func(kind string) bool { return slices.Contains(s.ListChanged, kind) }
	caps.Tools.ListChanged = announces("tools")
	if len(s.Prompts) > 0 {
		caps.Prompts = &listChanged{announces("prompts")}
	}
	if s.ListResources != nil {
		caps.Resources = &resourceCapabilities{Subscribe: s.ReadResource != nil, ListChanged: announces("resources")}
	}
	if len(s.Extensions) > 0 {
		caps.Extensions = s.Extensions
	}
	return caps
}

var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// setLevel records the client's log level, below which Log sends nothing on this session.
func (s *Server) setLevel(ctx context.Context, ss *session, p params) (any, error) {
	level, err := requiredStr(p, "level", "level")
	if err != nil {
		return nil, err
	}
	if !slices.Contains(logLevels, level) {
		return nil, jsonrpc.InvalidParams("level", "must be one of "+strings.Join(logLevels, ", "))
	}
	ss.mu.Lock()
	ss.level = level
	ss.mu.Unlock()
	return struct{}{}, nil
}

// ---- pagination ----

const cursorPrefix = "offset:"

func encodeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

// page cuts a list at the request's cursor; the next cursor is "" on the last page, where the
// results leave it out (2026-07-28 defines "" as a valid cursor; clients would ask again)
// unless SetEmptyLastCursor says otherwise (see nextCursor).
func page[T any](s *Server, p params, items []T) ([]T, string, error) {
	cursor, _, err := str(p, "cursor", "cursor")
	if err != nil {
		return nil, "", err
	}
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		text, ok := strings.CutPrefix(string(b), cursorPrefix)
		n, err2 := strconv.Atoi(text)
		if err != nil || err2 != nil || !ok || n < 0 || n > len(items) || encodeCursor(n) != cursor {
			return nil, "", jsonrpc.InvalidParams("cursor", "is not a cursor this server returned")
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
		next = encodeCursor(end)
	}
	return items[start:end], next, nil
}

// SetEmptyLastCursor decides whether the last page of tools/list, resources/list,
// resources/templates/list and prompts/list carries "nextCursor": "" for clients of the
// legacy revisions (2025-11-25 and older), as clients written literally to a pocket summary
// of the spec expect (seed 002). Off by default: the TypeScript SDK v2 asks again for a list
// whose last page says "", and 2026-07-28 results always leave the member out, whatever this
// says. Safe for concurrent use; it takes effect at the next list request.
func (s *Server) SetEmptyLastCursor(on bool) { s.emptyLastCursor.Store(on) }

// nextCursor is a list result's nextCursor: next, or on the last page (next == "") nil, which
// leaves the member out, or "" for a legacy-era request while SetEmptyLastCursor is on.
func (s *Server) nextCursor(ctx context.Context, next string) *string {
	if next == "" {
		if !s.emptyLastCursor.Load() {
			return nil
		}
		if ri := infoFrom(ctx); ri != nil && ri.meta.modern {
			return nil
		}
	}
	return &next
}

// ---- tools ----

type toolJSON struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

func (s *Server) listTools(ctx context.Context, ss *session, p params) (any, error) {
	visible := s.Tools
	if s.Permit != nil {
		visible = make([]*Tool, 0, len(s.Tools))
		for _, t := range s.Tools {
			if s.Permit(ctx, t.Name) == nil {
				visible = append(visible, t)
			}
		}
	}
	items, next, err := page(s, p, visible)
	if err != nil {
		return nil, err
	}
	tools := make([]toolJSON, len(items))
	for i, t := range items {
		tools[i] = toolJSON{t.Name, t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations, t.Meta}
		if len(tools[i].InputSchema) == 0 {
			tools[i].InputSchema = objectSchema
		}
	}
	return struct {
		Tools      []toolJSON `json:"tools"`
		NextCursor *string    `json:"nextCursor,omitempty"`
	}{tools, s.nextCursor(ctx, next)}, nil
}

// callResult is a tools/call result. exec encodes it with encode, into a pooled buffer, and
// then gives its structured content's buffer back (release).
type callResult struct {
	Content           []Content
	StructuredContent json.RawMessage
	IsError           bool
	// textIsStructured: content is one text item of StructuredContent's JSON, encoded from
	// its bytes (Content is then nil).
	textIsStructured bool
	// pooled is the buffer of resultBufs that holds StructuredContent, if one does.
	pooled *bytes.Buffer
}

// encode writes {"content","structuredContent","isError"} into b: what encoding/json writes
// for the result, without the garbage of a string of the structured content and of its
// Content item.
func (r callResult) encode(b *bytes.Buffer) error {
	b.Grow(2*len(r.StructuredContent) + 96) // the text and the object, unless it escapes much
	b.WriteString(`{"content":[`)
	if r.textIsStructured {
		b.WriteString(`{"type":"text","text":`)
		b.Write(jsonrpc.AppendString(b.AvailableBuffer(), r.StructuredContent))
		b.WriteByte('}')
	}
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte(',')
		}
		item, err := c.MarshalJSON()
		if err != nil {
			return err
		}
		b.Write(item)
	}
	b.WriteString(`],"structuredContent":`)
	b.Write(r.StructuredContent)
	b.WriteString(`,"isError":`)
	b.WriteString(strconv.FormatBool(r.IsError))
	b.WriteByte('}')
	return nil
}

// MarshalJSON is encode, for anything that marshals a callResult with encoding/json.
func (r callResult) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	err := r.encode(&b)
	return b.Bytes(), err
}

// release gives the structured content's buffer back; r must not be used after.
func (r callResult) release() {
	if r.pooled != nil {
		jsonrpc.PutResultBuf(r.pooled)
	}
}

// callTool validates the arguments, runs the tool and shapes its result: content (at least
// one item), structuredContent (an object) and isError are always present.
func (s *Server) callTool(ctx context.Context, ss *session, p params) (any, error) {
	name, err := requiredStr(p, "name", "name")
	if err != nil {
		return nil, err
	}
	t := s.tools[name]
	if t == nil {
		return nil, jsonrpc.InvalidParams("name", fmt.Sprintf("unknown tool %q", name))
	}
	if s.Permit != nil {
		if err := s.Permit(ctx, name); err != nil {
			return nil, err
		}
	}
	args := p["arguments"]
	switch {
	case args == nil || string(args) == "null":
		args = json.RawMessage("{}")
	case args[0] != '{':
		return nil, jsonrpc.InvalidParams("arguments", "must be an object")
	}
	var res *ToolResult
	if ae := s.schemas[name].validateRoot("", bytes.TrimSpace(args)); ae != nil {
		err = ae
	}
	if err == nil {
		res, err = t.Handler(ctx, args)
	}
	var ae *ArgError
	if errors.As(err, &ae) && ProtocolVersionFrom(ctx) >= "2025-11-25" {
		// 2025-11-25: input validation errors are tool execution errors, for the model to fix.
		var payload any = map[string]map[string]string{"error": {"field": ae.Field, "reason": ae.Reason}}
		if s.ToolErrorResult != nil {
			payload = s.ToolErrorResult(ae.Field, ae.Reason)
		}
		res, err = &ToolResult{Structured: payload, IsError: true}, nil
	}
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("tool %s returned no result", name)
	}
	var structured any = struct{}{}
	if res.Structured != nil {
		structured = res.Structured
	}
	buf := jsonrpc.GetResultBuf()
	err = jsonrpc.MarshalInto(buf, structured)
	b := buf.Bytes()
	switch {
	case err != nil:
		jsonrpc.PutResultBuf(buf)
		return nil, fmt.Errorf("tool %s: marshal structured content: %w", name, err)
	case string(b) == "null":
		b = []byte("{}")
	case b[0] != '{':
		jsonrpc.PutResultBuf(buf)
		return nil, fmt.Errorf("tool %s: structured content is not a JSON object", name)
	}
	return callResult{Content: res.Content, StructuredContent: b, IsError: res.IsError, textIsStructured: len(res.Content) == 0, pooled: buf}, nil
}

// ---- resources ----

func (s *Server) listResources(ctx context.Context, ss *session, p params) (any, error) {
	all, err := s.ListResources(ctx)
	if err != nil {
		return nil, err
	}
	items, next, err := page(s, p, all)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []Resource{}
	}
	return struct {
		Resources  []Resource `json:"resources"`
		NextCursor *string    `json:"nextCursor,omitempty"`
	}{items, s.nextCursor(ctx, next)}, nil
}

// visible reports whether a prompt or resource template is offered to the caller of ctx.
func (s *Server) visible(ctx context.Context, kind, name string) bool {
	return s.Visible == nil || s.Visible(ctx, kind, name)
}

func (s *Server) listTemplates(ctx context.Context, ss *session, p params) (any, error) {
	all := s.ResourceTemplates
	if s.Visible != nil {
		all = nil
		for _, t := range s.ResourceTemplates {
			if s.visible(ctx, "template", t.URITemplate) {
				all = append(all, t)
			}
		}
	}
	items, next, err := page(s, p, all)
	if err != nil {
		return nil, err
	}
	if items == nil {
		items = []ResourceTemplate{}
	}
	return struct {
		ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
		NextCursor        *string            `json:"nextCursor,omitempty"`
	}{items, s.nextCursor(ctx, next)}, nil
}

func (s *Server) readResource(ctx context.Context, ss *session, p params) (any, error) {
	uri, err := requiredStr(p, "uri", "uri")
	if err != nil {
		return nil, err
	}
	if uri == "" {
		return nil, jsonrpc.InvalidParams("uri", "must not be empty")
	}
	contents, err := s.ReadResource(ctx, uri)
	if errors.Is(err, ErrResourceNotFound) {
		code := CodeResourceNotFound
		if ri := infoFrom(ctx); ri != nil && ri.meta.modern {
			code = jsonrpc.CodeInvalidParams // 2026-07-28 (SEP-2164): invalid params, not -32002
		}
		msg := "resource not found"
		if code == jsonrpc.CodeInvalidParams {
			// data stays exactly {uri}: the TypeScript SDK v2 tells a resource not found from
			// other -32602 errors by it.
			msg = jsonrpc.MessageInvalidParams
		}
		return nil, &jsonrpc.Error{Code: code, Message: msg, Data: map[string]string{"uri": uri}}
	}
	if err != nil {
		return nil, err
	}
	if contents == nil {
		contents = []ResourceContents{}
	}
	return struct {
		Contents []ResourceContents `json:"contents"`
	}{contents}, nil
}

// ---- prompts ----

type promptJSON struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
}

func (s *Server) listPrompts(ctx context.Context, ss *session, p params) (any, error) {
	all := s.Prompts
	if s.Visible != nil {
		all = nil
		for _, pr := range s.Prompts {
			if s.visible(ctx, "prompt", pr.Name) {
				all = append(all, pr)
			}
		}
	}
	items, next, err := page(s, p, all)
	if err != nil {
		return nil, err
	}
	prompts := make([]promptJSON, len(items))
	for i, pr := range items {
		prompts[i] = promptJSON{pr.Name, pr.Title, pr.Description, pr.Arguments}
	}
	return struct {
		Prompts    []promptJSON `json:"prompts"`
		NextCursor *string      `json:"nextCursor,omitempty"`
	}{prompts, s.nextCursor(ctx, next)}, nil
}

func (s *Server) getPrompt(ctx context.Context, ss *session, p params) (any, error) {
	name, err := requiredStr(p, "name", "name")
	if err != nil {
		return nil, err
	}
	pr := s.prompts[name]
	if pr == nil || !s.visible(ctx, "prompt", name) {
		return nil, jsonrpc.InvalidParams("name", fmt.Sprintf("unknown prompt %q", name))
	}
	given, ok, err := object(p, "arguments", "arguments")
	if err != nil {
		return nil, err
	}
	args := map[string]string{}
	if ok {
		names := make([]string, len(pr.Arguments))
		for i, a := range pr.Arguments {
			names[i] = a.Name
		}
		if err := checkKeys(given, "", names...); err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(given)) {
			if !slices.Contains(names, k) {
				return nil, jsonrpc.InvalidParams(k, fmt.Sprintf("is not an argument of prompt %q", pr.Name))
			}
			v, present, err := str(given, k, k)
			if err != nil {
				return nil, err
			}
			if present {
				args[k] = v
			}
		}
	}
	for _, a := range pr.Arguments {
		if a.Required && strings.TrimSpace(args[a.Name]) == "" {
			return nil, jsonrpc.InvalidParams(a.Name, "is required")
		}
	}
	res, err := pr.Get(ctx, args)
	if err != nil {
		return nil, err
	}
	if res == nil {
		return nil, fmt.Errorf("prompt %s returned no result", name)
	}
	out := *res
	if out.Messages == nil {
		out.Messages = []PromptMessage{}
	}
	return out, nil
}

// ---- completion ----

// maxCompletions is the most values completion/complete may return.
const maxCompletions = 100

func (s *Server) complete(ctx context.Context, ss *session, p params) (any, error) {
	ref, ok, err := object(p, "ref", "ref")
	if err == nil && !ok {
		err = jsonrpc.InvalidParams("ref", "is required")
	}
	if err != nil {
		return nil, err
	}
	arg, ok, err := object(p, "argument", "argument")
	if err == nil && !ok {
		err = jsonrpc.InvalidParams("argument", "is required")
	}
	if err != nil {
		return nil, err
	}
	if err := checkKeys(ref, "ref", "type", "name", "uri"); err != nil {
		return nil, err
	}
	if err := checkKeys(arg, "argument", "name", "value"); err != nil {
		return nil, err
	}
	req := CompleteRequest{}
	if req.RefType, err = requiredStr(ref, "ref.type", "type"); err != nil {
		return nil, err
	}
	if req.ArgName, err = requiredStr(arg, "argument.name", "name"); err != nil {
		return nil, err
	}
	if req.ArgValue, _, err = str(arg, "argument.value", "value"); err != nil {
		return nil, err
	}
	if cx, ok, err := object(p, "context", "context"); err != nil {
		return nil, err
	} else if ok {
		if err := checkKeys(cx, "context", "arguments"); err != nil {
			return nil, err
		}
		if req.Context, err = stringMap(cx, "context.arguments", "arguments"); err != nil {
			return nil, err
		}
	}
	switch req.RefType {
	case "ref/prompt":
		if req.RefName, err = requiredStr(ref, "ref.name", "name"); err != nil {
			return nil, err
		}
		pr := s.prompts[req.RefName]
		if pr == nil || !s.visible(ctx, "prompt", req.RefName) {
			return nil, jsonrpc.InvalidParams("ref.name", fmt.Sprintf("unknown prompt %q", req.RefName))
		}
		if !slices.ContainsFunc(pr.Arguments, func(a PromptArgument) bool { return a.Name == req.ArgName }) {
			return nil, jsonrpc.InvalidParams("argument.name", fmt.Sprintf("%q is not an argument of prompt %q", req.ArgName, pr.Name))
		}
	case "ref/resource":
		if req.RefURI, err = requiredStr(ref, "ref.uri", "uri"); err != nil {
			return nil, err
		}
		if s.templates[req.RefURI] == nil || !s.visible(ctx, "template", req.RefURI) {
			return nil, jsonrpc.InvalidParams("ref.uri", fmt.Sprintf("%q is not a resource template of this server", req.RefURI))
		}
		if !slices.Contains(templateVariables(req.RefURI), req.ArgName) {
			return nil, jsonrpc.InvalidParams("argument.name", fmt.Sprintf("%q is not a variable of %s", req.ArgName, req.RefURI))
		}
	default:
		return nil, jsonrpc.InvalidParams("ref.type", "must be ref/prompt or ref/resource")
	}
	values, err := s.Complete(ctx, req)
	if err != nil {
		return nil, err
	}
	total := len(values)
	values = values[:min(total, maxCompletions)]
	if values == nil {
		values = []string{}
	}
	type completion struct {
		Values  []string `json:"values"`
		Total   int      `json:"total"`
		HasMore bool     `json:"hasMore"`
	}
	return struct {
		Completion completion `json:"completion"`
	}{completion{values, total, total > len(values)}}, nil
}

// templateVariables lists the variables of an RFC 6570 URI template: "a{/b,c*}{?d:3}" has
// b, c and d.
func templateVariables(t string) []string {
	var vars []string
	for {
		_, rest, ok := strings.Cut(t, "{")
		if !ok {
			return vars
		}
		expr, after, ok := strings.Cut(rest, "}")
		if !ok {
			return vars
		}
		t = after
		expr = strings.TrimLeft(expr, "+#./;?&=,!@|")
		for _, v := range strings.Split(expr, ",") {
			v, _, _ = strings.Cut(v, ":")
			vars = append(vars, strings.TrimSuffix(v, "*"))
		}
	}
}
