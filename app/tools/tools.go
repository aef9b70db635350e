package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/rpc"
	"github.com/ownsona/ownsona/vector"
)

// Limits of the tool surface.
const (
	maxBatch        = 200
	defaultRecall   = 8
	maxRecall       = 50
	defaultList     = 20
	maxList         = 50
	maxQueryChars   = 1000
	maxExport       = 1000
	maxSessionChars = 200
	maxReasonChars  = 1000
	defaultDupGroup = 50
	maxDupGroups    = 500
)

// Error codes of tool payloads (TOOLS.md).
const (
	codeInvalidInput   = "INVALID_INPUT"
	codeNotFound       = "NOT_FOUND"
	codeSecretRejected = "SECRET_REJECTED"
	codeLimitExceeded  = "LIMIT_EXCEEDED"
	codeEmbedding      = "EMBEDDING_ERROR"
	codeDatabase       = "DATABASE_ERROR"
)

// toolError is a failure reported in the payload ("ok": false) rather than as a JSON-RPC error.
type toolError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

func (e *toolError) Error() string { return e.Message }

func errNotFoundID(id uint64) *toolError {
	return &toolError{Code: codeNotFound, Message: fmt.Sprintf("memory %d not found", id)}
}

// invalid is an invalid argument: -32602 or an isError result, depending on the protocol.
func invalid(field, reason string) error { return rpc.InvalidArgument(field, reason) }

// errorPayload is the payload of a failed call.
type errorPayload struct {
	OK    bool       `json:"ok"`
	Error *toolError `json:"error"`
}

// toolErrorResult is rpc.Server.ToolErrorResult: argument errors for 2025-11-25 clients.
func toolErrorResult(field, reason string) any {
	return errorPayload{Error: &toolError{Code: codeInvalidInput, Message: field + ": " + reason, Field: field, Reason: reason}}
}

// itemError turns one batch item's failure into its payload form.
func itemError(err error) *toolError {
	var te *toolError
	var ae *rpc.ArgError
	switch {
	case errors.As(err, &te):
		return te
	case errors.As(err, &ae):
		return &toolError{Code: codeInvalidInput, Message: ae.Field + ": " + ae.Reason, Field: ae.Field, Reason: ae.Reason}
	case errors.Is(err, errNotFound):
		return &toolError{Code: codeNotFound, Message: err.Error()}
	}
	return &toolError{Code: codeDatabase, Message: "storage error; the server log has details"}
}

// texter lets a payload choose the text of content[0] (recall's format "text").
type texter interface{ contentText() string }

// toolFunc is a tool's behaviour: a payload (marshalled with "ok": true first) or an error.
type toolFunc func(ctx context.Context, args json.RawMessage) (any, error)

// handler adapts a toolFunc to rpc: argument errors go back to rpc, payload errors become
// isError results, anything else is logged and shown as a storage error.
//
// After a tool that writes, the sessions subscribed to the resources it changed are told.
func (a *App) handler(name string, fn toolFunc) func(context.Context, json.RawMessage) (*rpc.ToolResult, error) {
	return func(ctx context.Context, args json.RawMessage) (*rpc.ToolResult, error) {
		payload, err := fn(ctx, args)
		if err == nil {
			if t := a.tool(name); t != nil && toolScope(t) == policy.ScopeWrite {
				a.notifyChanged(args, payload)
			}
		}
		if err != nil {
			var ae *rpc.ArgError
			var re *rpc.Error
			if errors.As(err, &ae) || errors.As(err, &re) {
				return nil, err
			}
			var te *toolError
			if !errors.As(err, &te) {
				a.log.Error().Err(err).Str("tool", name).Msg("tool failed")
				te = itemError(err)
			}
			return &rpc.ToolResult{Structured: errorPayload{Error: te}, IsError: true}, nil
		}
		res := &rpc.ToolResult{Structured: payload}
		if t, ok := payload.(texter); ok {
			res.Content = []rpc.Content{rpc.TextContent(t.contentText())}
		}
		return res, nil
	}
}

// notifyChanged tells subscribers that the memories a write named changed (the ids in its
// arguments and its payload, near duplicates it merely reports aside), and with them the recent
// list, the tags and the statistics.
func (a *App) notifyChanged(args json.RawMessage, payload any) {
	ids := map[uint64]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				switch k {
				case "near_duplicates", "possible_duplicates", "duplicates", "matches":
					continue // reported, not changed
				case "id", "ids", "memory_id", "memory_ids", "replaced_by_id":
					for _, f := range numbers(c) {
						ids[f] = true
					}
				}
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	for _, raw := range []any{args, payload} {
		b, ok := raw.(json.RawMessage)
		if !ok {
			var err error
			if b, err = json.Marshal(raw); err != nil {
				continue
			}
		}
		var v any
		if json.Unmarshal(b, &v) == nil {
			walk(v)
		}
	}
	for id := range ids {
		a.mcp.NotifyResourceUpdated(fmt.Sprintf("ownsona://memories/%d", id))
	}
	for _, uri := range []string{"ownsona://memories/recent", "ownsona://tags", "ownsona://stats"} {
		a.mcp.NotifyResourceUpdated(uri)
	}
}

// numbers are the memory ids in a decoded JSON value: a positive whole number or a list of them.
func numbers(v any) []uint64 {
	var out []uint64
	switch x := v.(type) {
	case float64:
		if x >= 1 && x == float64(uint64(x)) {
			out = append(out, uint64(x))
		}
	case []any:
		for _, e := range x {
			if f, ok := e.(float64); ok && f >= 1 && f == float64(uint64(f)) {
				out = append(out, uint64(f))
			}
		}
	}
	return out
}

// auditCall is rpc.Server.OnCall: requests over stdio (and through the admin socket's stdio)
// are audited here; HTTP requests are audited by the HTTP server, refusals before rpc included.
func (a *App) auditCall(ctx context.Context, c rpc.CallInfo) {
	if rpc.TransportFrom(ctx) != "stdio" {
		return
	}
	e := audit.Entry{Time: a.now(), Client: "stdio", Transport: audit.TransportStdio, Method: c.Method, Tool: c.Tool,
		Duration: c.Duration, Outcome: audit.OutcomeOK, ErrorCode: c.Code}
	if ci, ok := rpc.ClientInfoFrom(ctx); ok && ci.Name != "" {
		e.Client = "stdio:" + ci.Name
	}
	switch {
	case c.Code == codeAuthorization || c.Code == codeToolHidden:
		e.Outcome = audit.OutcomeDenied
	case c.Code != 0:
		e.Outcome = audit.OutcomeError
	case c.ToolError:
		e.Outcome = audit.OutcomeToolError
	}
	a.audit.Record(e)
}

// decode unmarshals validated arguments into dst.
func decode(args json.RawMessage, dst any) error {
	if len(args) == 0 || string(args) == "null" {
		return nil
	}
	if err := json.Unmarshal(args, dst); err != nil {
		return invalid("arguments", err.Error())
	}
	return nil
}

// parseTime parses an optional RFC 3339 argument.
func parseTime(field string, s *string) (*time.Time, error) {
	if s == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return nil, invalid(field, fmt.Sprintf("%q is not an RFC 3339 timestamp such as 2026-05-17T14:00:00Z", *s))
	}
	t = t.UTC()
	return &t, nil
}

// inputErr converts memtext's errors, prefixing the field for batch items.
func inputErr(prefix string, err error) error {
	var ie *memtext.InputError
	if errors.As(err, &ie) {
		return invalid(prefix+ie.Field, ie.Reason)
	}
	return err
}

// origin names who writes: the declared provider, else the MCP client's name, and the transport.
func origin(ctx context.Context, declared string) (provider, client string) {
	client = rpc.TransportFrom(ctx)
	p, authed := oauth.PrincipalFrom(ctx)
	if authed {
		client = p.Name
	}
	provider = declared
	if provider == "" {
		if info, ok := rpc.ClientInfoFrom(ctx); ok && info.Name != "" {
			provider = info.Name
		} else if authed && p.Kind == "oauth" {
			// Over stateless HTTP the initialize clientInfo is gone by the time of the call; the
			// OAuth client's registered name says as much.
			provider = p.Name
		} else {
			provider = "unknown"
		}
	}
	return provider, client
}

// ---- remember / remember_batch ----

type rememberArgs struct {
	Text            string          `json:"text"`
	Tags            json.RawMessage `json:"tags"`
	SourceProvider  string          `json:"source_provider"`
	Importance      *float64        `json:"importance"`
	CaptureMode     string          `json:"capture_mode"`
	SessionID       string          `json:"session_id"`
	ExpiresAt       *string         `json:"expires_at"`
	LastConfirmedAt *string         `json:"last_confirmed_at"`
	DedupPolicy     string          `json:"dedup_policy"`
}

func rememberProps() schema {
	return schema{
		"text":              strLen("the fact to remember, in one self-contained sentence", 1, 100000),
		"tags":              tagsSchema,
		"source_provider":   strLen("who is writing, e.g. claude or chatgpt; defaults to the client's name", 1, 100),
		"importance":        number("0 to 1, default 0.5", 0, 1),
		"capture_mode":      enum("explicit when the user asked to remember, inferred when you chose to", "explicit", "inferred"),
		"session_id":        strLen("conversation id, if any", 1, maxSessionChars),
		"expires_at":        timestamp("when the fact stops being true"),
		"last_confirmed_at": timestamp("when the fact was last known true; default now"),
		"dedup_policy":      enum("ask (default): store and report near duplicates; insert: no check; skip_if_near: return the existing memory instead", "ask", "insert", "skip_if_near"),
	}
}

// prepare validates one remember item into a memory to insert (vector not yet set).
func (a *App) prepare(ctx context.Context, in rememberArgs, prefix, defProvider, defPolicy string) (*newMemory, error) {
	text, err := memtext.NormalizeText(in.Text, a.cfg.MaxTextChars)
	if err != nil {
		return nil, inputErr(prefix, err)
	}
	if kind, found := memtext.DetectSecret(text); found {
		return nil, &toolError{Code: codeSecretRejected, Message: "text looks like a secret (" + kind + ") and was not stored; remember a description of it instead"}
	}
	tags, err := memtext.ParseTags(in.Tags)
	if err != nil {
		return nil, inputErr(prefix, err)
	}
	now := a.now().UTC()
	expires, err := parseTime(prefix+"expires_at", in.ExpiresAt)
	if err != nil {
		return nil, err
	}
	if expires != nil && !expires.After(now) {
		return nil, invalid(prefix+"expires_at", "is not in the future")
	}
	confirmed, err := parseTime(prefix+"last_confirmed_at", in.LastConfirmedAt)
	if err != nil {
		return nil, err
	}
	if confirmed == nil {
		confirmed = &now
	}
	importance := 0.5
	if in.Importance != nil {
		importance = *in.Importance
	}
	mode := in.CaptureMode
	if mode == "" {
		mode = "explicit"
	}
	declared := in.SourceProvider
	if declared == "" {
		declared = defProvider
	}
	provider, client := origin(ctx, declared)
	policy := in.DedupPolicy
	if policy == "" {
		policy = defPolicy
	}
	if policy == "" {
		policy = "ask"
	}
	if tags == nil {
		tags = []string{}
	}
	return &newMemory{Memory: Memory{
		Text: text, Tags: tags, Importance: importance, CreatedAt: now, UpdatedAt: now,
		LastConfirmedAt: *confirmed, ExpiresAt: expires, SourceProvider: provider, SourceClient: client,
		CaptureMode: mode, SessionID: in.SessionID,
	}, Policy: policy}, nil
}

// embedNew fills in vectors; on failure the memories are stored without and embedded later.
func (a *App) embedNew(ctx context.Context, items []*newMemory) (warning string) {
	if a.svc.emb == nil || len(items) == 0 {
		return ""
	}
	texts := make([]string, len(items))
	for i, it := range items {
		texts[i] = it.Text
	}
	vecs, err := a.svc.embed(ctx, texts, vector.Document)
	if err != nil {
		a.log.Warn().Err(err).Int("memories", len(items)).Msg("embedding failed; stored without vectors, retrying in the background")
		return "the embedder is unavailable (" + err.Error() + "); stored, and it will be indexed for semantic search when the embedder answers"
	}
	for i, it := range items {
		it.Vector = vecs[i]
	}
	return ""
}

type rememberPayload struct {
	OK             bool            `json:"ok"`
	MemoryID       uint64          `json:"memory_id"`
	Message        string          `json:"message"`
	NearDuplicates []nearDuplicate `json:"near_duplicates,omitempty"`
	Warning        string          `json:"warning,omitempty"`
}

func (a *App) remember(ctx context.Context, raw json.RawMessage) (any, error) {
	var in rememberArgs
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	it, err := a.prepare(ctx, in, "", "", "")
	if err != nil {
		return nil, err
	}
	warning := a.embedNew(ctx, []*newMemory{it})
	res, err := a.svc.insert([]*newMemory{it})
	if err != nil {
		return nil, err
	}
	p := rememberPayload{OK: true, MemoryID: res[0].ID, Message: "Ok", NearDuplicates: res[0].NearDuplicates, Warning: warning}
	if res[0].Skipped {
		p.Message = "Already remembered"
	}
	return p, nil
}

type batchItemResult struct {
	InputIndex int        `json:"input_index"`
	OK         bool       `json:"ok"`
	MemoryID   uint64     `json:"memory_id,omitempty"`
	Message    string     `json:"message,omitempty"`
	Error      *toolError `json:"error,omitempty"`
	// NearDuplicates lists similar stored memories for this item, as remember does.
	NearDuplicates []nearDuplicate `json:"near_duplicates,omitempty"`
}

type rememberBatchPayload struct {
	OK      bool              `json:"ok"`
	Results []batchItemResult `json:"results"`
	Summary struct {
		Total     int `json:"total"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
	} `json:"summary"`
	Warning string `json:"warning,omitempty"`
}

func (a *App) rememberBatch(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Items          []json.RawMessage `json:"items"`
		SourceProvider string            `json:"source_provider"`
		DedupPolicy    string            `json:"dedup_policy"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	p := rememberBatchPayload{OK: true, Results: make([]batchItemResult, len(in.Items))}
	var ok []*newMemory
	var okIdx []int
	for i, rawItem := range in.Items {
		p.Results[i].InputIndex = i
		var item rememberArgs
		var it *newMemory
		err := a.rememberItem.Validate(fmt.Sprintf("items[%d]", i), rawItem)
		if err == nil {
			err = decode(rawItem, &item)
		}
		if err == nil {
			it, err = a.prepare(ctx, item, fmt.Sprintf("items[%d].", i), in.SourceProvider, in.DedupPolicy)
		}
		if err != nil {
			p.Results[i].Error = itemError(err)
			continue
		}
		ok = append(ok, it)
		okIdx = append(okIdx, i)
	}
	rpc.Progress(ctx, 0, float64(len(in.Items)), "embedding")
	p.Warning = a.embedNew(ctx, ok)
	rpc.Progress(ctx, float64(len(in.Items))/2, float64(len(in.Items)), "storing")
	res, err := a.svc.insert(ok)
	if err != nil {
		return nil, err
	}
	for j, i := range okIdx {
		r := &p.Results[i]
		r.OK, r.MemoryID, r.Message, r.NearDuplicates = true, res[j].ID, "Ok", res[j].NearDuplicates
		if res[j].Skipped {
			r.Message = "Already remembered"
		}
	}
	for _, r := range p.Results {
		if r.OK {
			p.Summary.Succeeded++
		} else {
			p.Summary.Failed++
		}
	}
	p.Summary.Total = len(in.Items)
	rpc.Progress(ctx, float64(len(in.Items)), float64(len(in.Items)), "done")
	return p, nil
}

// ---- recall / build_context_prompt ----

type scoredMemory struct {
	*Memory
	Score float32 `json:"score"`
}

type recallPayload struct {
	OK                   bool           `json:"ok"`
	Matches              []scoredMemory `json:"matches"`
	QueryEmbeddingTimeMS float64        `json:"query_embedding_time_ms"`
	SearchTimeMS         float64        `json:"search_time_ms"`
	Warning              string         `json:"warning,omitempty"`
	text                 string
}

func (p recallPayload) contentText() string {
	if p.text == "" {
		b, _ := json.Marshal(p)
		return string(b)
	}
	return p.text
}

type searchArgs struct {
	Query         string          `json:"query"`
	UserPrompt    string          `json:"user_prompt"`
	Limit         *int            `json:"limit"`
	MinScore      *float64        `json:"min_score"`
	MinSimilarity *float64        `json:"min_similarity"`
	Tags          json.RawMessage `json:"tags"`
	Since         *string         `json:"since"`
	Until         *string         `json:"until"`
	Format        string          `json:"format"`
	MaxChars      *int            `json:"max_chars"`
}

// runSearch validates the common search arguments and searches.
func (a *App) runSearch(ctx context.Context, in searchArgs, queryField, query string) (searchOutcome, error) {
	q := strings.TrimSpace(query)
	if q == "" {
		return searchOutcome{}, invalid(queryField, "is empty")
	}
	if n := len([]rune(q)); n > maxQueryChars {
		return searchOutcome{}, invalid(queryField, fmt.Sprintf("is %d characters; the limit is %d", n, maxQueryChars))
	}
	limit := defaultRecall
	if in.Limit != nil {
		limit = *in.Limit
	}
	var minScore float32
	switch {
	case in.MinScore != nil && in.MinSimilarity != nil:
		return searchOutcome{}, invalid("min_similarity", "give min_score or its alias min_similarity, not both")
	case in.MinScore != nil:
		minScore = float32(*in.MinScore)
	case in.MinSimilarity != nil:
		minScore = float32(*in.MinSimilarity)
	}
	tags, err := memtext.ParseTags(in.Tags)
	if err != nil {
		return searchOutcome{}, inputErr("", err)
	}
	f := &memoryFilter{Tags: tags}
	if f.Since, err = parseTime("since", in.Since); err != nil {
		return searchOutcome{}, err
	}
	if f.Until, err = parseTime("until", in.Until); err != nil {
		return searchOutcome{}, err
	}
	if f.Since != nil && f.Until != nil && f.Until.Before(*f.Since) {
		return searchOutcome{}, invalid("until", "is before since")
	}
	return a.svc.search(ctx, q, f, limit, minScore), nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (a *App) recall(ctx context.Context, raw json.RawMessage) (any, error) {
	var in searchArgs
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	out, err := a.runSearch(ctx, in, "query", in.Query)
	if err != nil {
		return nil, err
	}
	p := recallPayload{OK: true, Matches: []scoredMemory{}, QueryEmbeddingTimeMS: ms(out.EmbedTime), SearchTimeMS: ms(out.SearchTime), Warning: out.Warning}
	for _, r := range out.Results {
		p.Matches = append(p.Matches, scoredMemory{r.Memory, r.Score})
	}
	if in.Format == "text" {
		p.text = recallText(in.Query, p)
	}
	return p, nil
}

// recallText is the human-readable form of recall's result.
func recallText(query string, p recallPayload) string {
	var b strings.Builder
	if len(p.Matches) == 0 {
		fmt.Fprintf(&b, "No memories found matching %q.", query)
	} else {
		fmt.Fprintf(&b, "Found %d memories matching %q:\n", len(p.Matches), query)
		for i, m := range p.Matches {
			fmt.Fprintf(&b, "\n%d. [id %d, score %.2f", i+1, m.ID, m.Score)
			if len(m.Tags) > 0 {
				fmt.Fprintf(&b, ", tags %s", strings.Join(m.Tags, ", "))
			}
			fmt.Fprintf(&b, ", confirmed %s] %s", m.LastConfirmedAt.Format(time.DateOnly), m.Text)
		}
	}
	if p.Warning != "" {
		fmt.Fprintf(&b, "\n\nNote: %s", p.Warning)
	}
	return b.String()
}

type contextPromptPayload struct {
	OK        bool     `json:"ok"`
	Prompt    string   `json:"prompt"`
	MemoryIDs []uint64 `json:"memory_ids"`
	Omitted   int      `json:"omitted"`
	Warning   string   `json:"warning,omitempty"`
}

// contextPrompt lays out facts and the user's prompt as OwnSona does, adding facts in order of
// relevance while the whole prompt stays within maxChars (0: no budget).
func contextPrompt(userPrompt string, facts []*Memory, maxChars int) (prompt string, used []uint64, omitted int) {
	const head = "The following are previously known facts:\n"
	const tail = "----------\nThe following is the user's prompt:\n"
	var lines strings.Builder
	size := len([]rune(head)) + len([]rune(tail)) + len([]rune(userPrompt))
	for _, m := range facts {
		line := "- " + m.Text + "\n"
		n := len([]rune(line))
		if maxChars > 0 && size+n > maxChars {
			omitted++
			continue
		}
		size += n
		lines.WriteString(line)
		used = append(used, m.ID)
	}
	if len(used) == 0 {
		return userPrompt, []uint64{}, omitted
	}
	return head + lines.String() + tail + userPrompt, used, omitted
}

func (a *App) buildContextPrompt(ctx context.Context, raw json.RawMessage) (any, error) {
	var in searchArgs
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	out, err := a.runSearch(ctx, in, "user_prompt", in.UserPrompt)
	if err != nil {
		return nil, err
	}
	facts := make([]*Memory, len(out.Results))
	for i, r := range out.Results {
		facts[i] = r.Memory
	}
	maxChars := 0
	if in.MaxChars != nil {
		maxChars = *in.MaxChars
	}
	prompt, used, omitted := contextPrompt(in.UserPrompt, facts, maxChars)
	return contextPromptPayload{OK: true, Prompt: prompt, MemoryIDs: used, Omitted: omitted, Warning: out.Warning}, nil
}

// ---- list / get / text_search / count / tags / stats / export ----

type filterArgs struct {
	IncludeDeleted    bool            `json:"include_deleted"`
	UntaggedOnly      bool            `json:"untagged_only"`
	MinChars          int             `json:"min_chars"`
	MaxChars          int             `json:"max_chars"`
	NotConfirmedSince *string         `json:"not_confirmed_since"`
	Tags              json.RawMessage `json:"tags"`
	SourceProvider    string          `json:"source_provider"`
}

func filterProps() schema {
	return schema{
		"include_deleted":     boolean("also soft-deleted and expired memories"),
		"untagged_only":       boolean("only memories without tags"),
		"min_chars":           integer("minimum text length", 0, 1000000),
		"max_chars":           integer("maximum text length", 1, 1000000),
		"not_confirmed_since": timestamp("only memories last confirmed before this time"),
		"tags":                tagsSchema,
	}
}

func (in *filterArgs) filter() (*memoryFilter, error) {
	tags, err := memtext.ParseTags(in.Tags)
	if err != nil {
		return nil, inputErr("", err)
	}
	if in.MaxChars > 0 && in.MinChars > in.MaxChars {
		return nil, invalid("max_chars", "is less than min_chars")
	}
	f := &memoryFilter{IncludeDeleted: in.IncludeDeleted, Tags: tags, UntaggedOnly: in.UntaggedOnly,
		MinChars: in.MinChars, MaxChars: in.MaxChars, SourceProvider: in.SourceProvider}
	if f.NotConfirmedSince, err = parseTime("not_confirmed_since", in.NotConfirmedSince); err != nil {
		return nil, err
	}
	if f.UntaggedOnly && len(f.Tags) > 0 {
		return nil, invalid("untagged_only", "cannot be combined with tags")
	}
	return f, nil
}

type listPayload struct {
	OK         bool      `json:"ok"`
	Memories   []*Memory `json:"memories"`
	NextCursor string    `json:"next_cursor"`
}

func encodeCursor(id uint64) string { return fmt.Sprintf("m%d", id) }

func decodeCursor(s string) (uint64, error) {
	var id uint64
	if _, err := fmt.Sscanf(s, "m%d", &id); err != nil || id == 0 || encodeCursor(id) != s {
		return 0, invalid("cursor", "is not a cursor this server returned")
	}
	return id, nil
}

func (a *App) listMemories(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		filterArgs
		Limit  *int   `json:"limit"`
		Offset int    `json:"offset"`
		Cursor string `json:"cursor"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	f, err := in.filter()
	if err != nil {
		return nil, err
	}
	limit := defaultList
	if in.Limit != nil {
		limit = *in.Limit
	}
	var before uint64
	if in.Cursor != "" {
		if before, err = decodeCursor(in.Cursor); err != nil {
			return nil, err
		}
	}
	mems, more := a.svc.list(f, before, in.Offset, limit)
	p := listPayload{OK: true, Memories: mems}
	if p.Memories == nil {
		p.Memories = []*Memory{}
	}
	if more && len(mems) > 0 {
		p.NextCursor = encodeCursor(mems[len(mems)-1].ID)
	}
	return p, nil
}

func (a *App) getMemory(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		ID uint64 `json:"id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	m, ok := a.svc.get(in.ID)
	if !ok {
		return nil, errNotFoundID(in.ID)
	}
	return struct {
		OK     bool    `json:"ok"`
		Memory *Memory `json:"memory"`
	}{true, m}, nil
}

func (a *App) textSearch(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Text  string `json:"text"`
		Limit *int   `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	needle := strings.ToLower(strings.TrimSpace(in.Text))
	if needle == "" {
		return nil, invalid("text", "is empty")
	}
	limit := defaultList
	if in.Limit != nil {
		limit = *in.Limit
	}
	mems, _ := a.svc.list(&memoryFilter{Contains: needle}, 0, 0, limit)
	if mems == nil {
		mems = []*Memory{}
	}
	return struct {
		OK       bool      `json:"ok"`
		Memories []*Memory `json:"memories"`
	}{true, mems}, nil
}

func (a *App) countMemories(ctx context.Context, raw json.RawMessage) (any, error) {
	var in filterArgs
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	f, err := in.filter()
	if err != nil {
		return nil, err
	}
	n := 0
	a.svc.each(f, func(*Memory) bool { n++; return true })
	return struct {
		OK    bool `json:"ok"`
		Count int  `json:"count"`
	}{true, n}, nil
}

type tagCount struct {
	Tag   string `json:"tag"`
	Count int    `json:"count"`
}

// tagCounts counts tags over memories passing f, by count then name.
func (a *App) tagCounts(f *memoryFilter, limit int) []tagCount {
	counts := map[string]int{}
	a.svc.each(f, func(m *Memory) bool {
		for _, t := range m.Tags {
			counts[t]++
		}
		return true
	})
	return topCounts(counts, limit, func(k string, n int) tagCount { return tagCount{k, n} })
}

func (a *App) listTags(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		IncludeDeleted bool `json:"include_deleted"`
		Limit          *int `json:"limit"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	limit := 100
	if in.Limit != nil {
		limit = *in.Limit
	}
	return struct {
		OK   bool       `json:"ok"`
		Tags []tagCount `json:"tags"`
	}{true, a.tagCounts(&memoryFilter{IncludeDeleted: in.IncludeDeleted}, limit)}, nil
}

type providerCount struct {
	Provider string `json:"provider"`
	Count    int    `json:"count"`
}

type statsPayload struct {
	OK              bool            `json:"ok"`
	Total           int             `json:"total"`
	Active          int             `json:"active"`
	SoftDeleted     int             `json:"soft_deleted"`
	Expired         int             `json:"expired"`
	AvgImportance   float64         `json:"avg_importance"`
	OldestCreatedAt *time.Time      `json:"oldest_created_at"`
	NewestCreatedAt *time.Time      `json:"newest_created_at"`
	TopTags         []tagCount      `json:"top_tags"`
	ByProvider      []providerCount `json:"by_provider"`
	Embedder        embedderPayload `json:"embedder"`
}

type embedderPayload struct {
	Name            string `json:"name"`
	Model           string `json:"model"`
	Dimensions      int    `json:"dimensions"`
	ReembedProgress struct {
		Pending int `json:"pending"`
		Done    int `json:"done"`
		Total   int `json:"total"`
	} `json:"reembed_progress"`
	LastError string `json:"last_error,omitempty"`
}

func (a *App) memoryStats(ctx context.Context, raw json.RawMessage) (any, error) {
	if err := decode(raw, &struct{}{}); err != nil {
		return nil, err
	}
	return a.statsPayload(), nil
}

func (a *App) statsPayload() statsPayload {
	st := a.svc.stats()
	p := statsPayload{OK: true, Total: st.Total, Active: st.Active, SoftDeleted: st.SoftDeleted, Expired: st.Expired,
		OldestCreatedAt: st.Oldest, NewestCreatedAt: st.Newest}
	if st.Active > 0 {
		p.AvgImportance = float64(int(st.ImportanceSum/float64(st.Active)*1000+0.5)) / 1000
	}
	p.TopTags = topCounts(st.Tags, 10, func(k string, n int) tagCount { return tagCount{k, n} })
	p.ByProvider = topCounts(st.Providers, 0, func(k string, n int) providerCount { return providerCount{k, n} })
	info, pending, total, lastErr := a.svc.embedderStatus()
	p.Embedder.Name, p.Embedder.Model, p.Embedder.Dimensions, p.Embedder.LastError = info.Name, info.Model, info.Dim, lastErr
	if a.svc.emb != nil {
		p.Embedder.ReembedProgress.Pending, p.Embedder.ReembedProgress.Total = pending, total
		p.Embedder.ReembedProgress.Done = total - pending
	}
	return p
}

func (a *App) exportMemories(ctx context.Context, raw json.RawMessage) (any, error) {
	in := struct {
		IncludeDeleted *bool `json:"include_deleted"`
	}{}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	f := &memoryFilter{IncludeDeleted: in.IncludeDeleted == nil || *in.IncludeDeleted}
	var mems []*Memory
	tooMany := false
	a.svc.each(f, func(m *Memory) bool {
		if len(mems) == maxExport {
			tooMany = true
			return false
		}
		mems = append(mems, m.clone())
		return true
	})
	if tooMany {
		return nil, &toolError{Code: codeLimitExceeded, Message: fmt.Sprintf("more than %d memories; run `ownsona export` on the server for all of them", maxExport)}
	}
	if mems == nil {
		mems = []*Memory{}
	}
	return struct {
		OK       bool      `json:"ok"`
		Count    int       `json:"count"`
		Memories []*Memory `json:"memories"`
	}{true, len(mems), mems}, nil
}

// ---- update / confirm / forget ----

type updatePayload struct {
	OK            bool     `json:"ok"`
	MemoryID      uint64   `json:"memory_id"`
	DryRun        bool     `json:"dry_run"`
	ChangedFields []string `json:"changed_fields"`
	Message       string   `json:"message"`
}

// update is one validated update_memory item.
type update struct {
	ID     uint64
	fields map[string]json.RawMessage
	text   *string
	tags   []string
	imp    *float64
	exp    **time.Time // set: *exp nil clears expiry
	conf   *time.Time
}

var updatable = []string{"text", "tags", "importance", "expires_at", "last_confirmed_at"}

// parseUpdate validates an update item; prefix names it inside a batch.
func (a *App) parseUpdate(raw json.RawMessage, prefix string) (*update, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, invalid(strings.TrimSuffix(prefix, "."), err.Error())
	}
	u := &update{fields: fields}
	if err := json.Unmarshal(fields["id"], &u.ID); err != nil || u.ID == 0 {
		return nil, invalid(prefix+"id", "must be a memory id")
	}
	now := a.now().UTC()
	if v, ok := fields["text"]; ok {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, invalid(prefix+"text", "must be a string")
		}
		text, err := memtext.NormalizeText(s, a.cfg.MaxTextChars)
		if err != nil {
			return nil, inputErr(prefix, err)
		}
		if kind, found := memtext.DetectSecret(text); found {
			return nil, &toolError{Code: codeSecretRejected, Message: "text looks like a secret (" + kind + ") and was not stored"}
		}
		u.text = &text
	}
	if v, ok := fields["tags"]; ok {
		tags, err := memtext.ParseTags(v)
		if err != nil {
			return nil, inputErr(prefix, err)
		}
		if tags == nil {
			tags = []string{}
		}
		u.tags = tags
	}
	if v, ok := fields["importance"]; ok {
		var f float64
		if err := json.Unmarshal(v, &f); err != nil || f < 0 || f > 1 {
			return nil, invalid(prefix+"importance", "must be a number from 0 to 1")
		}
		u.imp = &f
	}
	if v, ok := fields["expires_at"]; ok {
		var exp *time.Time
		if string(v) != "null" {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, invalid(prefix+"expires_at", "must be an RFC 3339 timestamp or null")
			}
			t, err := parseTime(prefix+"expires_at", &s)
			if err != nil {
				return nil, err
			}
			if !t.After(now) {
				return nil, invalid(prefix+"expires_at", "is not in the future; use forget to retire a memory")
			}
			exp = t
		}
		u.exp = &exp
	}
	if v, ok := fields["last_confirmed_at"]; ok {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, invalid(prefix+"last_confirmed_at", "must be an RFC 3339 timestamp")
		}
		t, err := parseTime(prefix+"last_confirmed_at", &s)
		if err != nil {
			return nil, err
		}
		u.conf = t
	}
	if u.text == nil && u.tags == nil && u.imp == nil && u.exp == nil && u.conf == nil {
		return nil, invalid(strings.TrimSuffix(prefix, ".")+"", "give at least one of "+strings.Join(updatable, ", "))
	}
	return u, nil
}

// apply changes m and lists the fields whose values changed.
func (u *update) apply(m *Memory, now time.Time) []string {
	var changed []string
	if u.text != nil && *u.text != m.Text {
		m.Text = *u.text
		changed = append(changed, "text")
	}
	if u.tags != nil && strings.Join(u.tags, ",") != strings.Join(m.Tags, ",") {
		m.Tags = u.tags
		changed = append(changed, "tags")
	}
	if u.imp != nil && *u.imp != m.Importance {
		m.Importance = *u.imp
		changed = append(changed, "importance")
	}
	if u.exp != nil && !timeEqual(*u.exp, m.ExpiresAt) {
		m.ExpiresAt = *u.exp
		changed = append(changed, "expires_at")
	}
	if u.conf != nil && !u.conf.Equal(m.LastConfirmedAt) {
		m.LastConfirmedAt = *u.conf
		changed = append(changed, "last_confirmed_at")
	}
	if len(changed) > 0 {
		m.UpdatedAt = now
	}
	return changed
}

func timeEqual(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Equal(*b)
}

// runUpdates applies validated updates in one Update; errs and changed are by position.
func (a *App) runUpdates(ctx context.Context, us []*update, dryRun bool) (changed [][]string, errs []error, err error) {
	changed = make([][]string, len(us))
	errs = make([]error, len(us))
	byID := map[uint64]int{}
	ids := make([]uint64, 0, len(us))
	for i, u := range us {
		if j, dup := byID[u.ID]; dup {
			errs[i] = invalid(fmt.Sprintf("items[%d].id", i), fmt.Sprintf("memory %d is already updated by items[%d]", u.ID, j))
			continue
		}
		byID[u.ID] = i
		ids = append(ids, u.ID)
	}
	// Embed new texts first, outside the lock; a failure leaves them to the background embedder.
	vecs := map[uint64][]float32{}
	if !dryRun && a.svc.emb != nil {
		var texts []string
		var tids []uint64
		for _, id := range ids {
			if u := us[byID[id]]; u.text != nil {
				texts = append(texts, *u.text)
				tids = append(tids, id)
			}
		}
		if v, err := a.svc.embed(ctx, texts, vector.Document); err == nil {
			for i, id := range tids {
				vecs[id] = v[i]
			}
		}
	}
	now := a.now().UTC()
	change := func(m *Memory) (bool, error) {
		i := byID[m.ID]
		if m.deleted() {
			return false, &toolError{Code: codeNotFound, Message: fmt.Sprintf("memory %d was forgotten; remember it again instead of updating it", m.ID)}
		}
		changed[i] = us[i].apply(m, now)
		return !dryRun && len(changed[i]) > 0, nil
	}
	perID, err := a.svc.modify(ids, change, vecs)
	if err != nil {
		return nil, nil, err
	}
	for id, e := range perID {
		if errors.Is(e, errNotFound) {
			e = errNotFoundID(id)
		}
		errs[byID[id]] = e
	}
	return changed, errs, nil
}

func (a *App) updateMemory(ctx context.Context, raw json.RawMessage) (any, error) {
	u, err := a.parseUpdate(raw, "")
	if err != nil {
		return nil, err
	}
	var dry struct {
		DryRun bool `json:"dry_run"`
	}
	_ = json.Unmarshal(raw, &dry)
	changed, errs, err := a.runUpdates(ctx, []*update{u}, dry.DryRun)
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	p := updatePayload{OK: true, MemoryID: u.ID, DryRun: dry.DryRun, ChangedFields: changed[0], Message: "Ok"}
	if p.ChangedFields == nil {
		p.ChangedFields = []string{}
	}
	if dry.DryRun {
		p.Message = "Would update"
	}
	return p, nil
}

type updateItemResult struct {
	InputIndex    int        `json:"input_index"`
	ID            uint64     `json:"id,omitempty"`
	OK            bool       `json:"ok"`
	ChangedFields []string   `json:"changed_fields,omitempty"`
	Error         *toolError `json:"error,omitempty"`
}

func (a *App) updateMemoryBatch(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Items  []json.RawMessage `json:"items"`
		DryRun bool              `json:"dry_run"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	results := make([]updateItemResult, len(in.Items))
	var us []*update
	var idx []int
	for i, item := range in.Items {
		results[i].InputIndex = i
		err := a.updateItem.Validate(fmt.Sprintf("items[%d]", i), item)
		var u *update
		if err == nil {
			u, err = a.parseUpdate(item, fmt.Sprintf("items[%d].", i))
		}
		if err != nil {
			results[i].Error = itemError(err)
			continue
		}
		results[i].ID = u.ID
		us = append(us, u)
		idx = append(idx, i)
	}
	changed, errs, err := a.runUpdates(ctx, us, in.DryRun)
	if err != nil {
		return nil, err
	}
	for j, i := range idx {
		if errs[j] != nil {
			results[i].Error = itemError(errs[j])
			continue
		}
		results[i].OK = true
		results[i].ChangedFields = changed[j]
		if results[i].ChangedFields == nil {
			results[i].ChangedFields = []string{}
		}
	}
	p := struct {
		OK      bool               `json:"ok"`
		DryRun  bool               `json:"dry_run"`
		Results []updateItemResult `json:"results"`
		Summary struct {
			Total   int `json:"total"`
			Updated int `json:"updated"`
			Errors  int `json:"errors"`
		} `json:"summary"`
	}{OK: true, DryRun: in.DryRun, Results: results}
	p.Summary.Total = len(results)
	for _, r := range results {
		switch {
		case !r.OK:
			p.Summary.Errors++
		case len(r.ChangedFields) > 0:
			p.Summary.Updated++
		}
	}
	return p, nil
}

func (a *App) confirm(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		ID uint64 `json:"id"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	now := a.now().UTC()
	errs, err := a.svc.modify([]uint64{in.ID}, func(m *Memory) (bool, error) {
		if m.deleted() {
			return false, &toolError{Code: codeNotFound, Message: fmt.Sprintf("memory %d was forgotten", m.ID)}
		}
		m.LastConfirmedAt = now
		m.UpdatedAt = now
		return true, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	if e := errs[in.ID]; e != nil {
		if errors.Is(e, errNotFound) {
			return nil, errNotFoundID(in.ID)
		}
		return nil, e
	}
	return struct {
		OK              bool      `json:"ok"`
		MemoryID        uint64    `json:"memory_id"`
		LastConfirmedAt time.Time `json:"last_confirmed_at"`
	}{true, in.ID, now}, nil
}

type forgetArgs struct {
	ID           uint64  `json:"id"`
	HardDelete   bool    `json:"hard_delete"`
	Reason       string  `json:"reason"`
	ReplacedByID *uint64 `json:"replaced_by_id"`
	DryRun       bool    `json:"dry_run"`
}

type forgetPayload struct {
	OK             bool   `json:"ok"`
	MemoryID       uint64 `json:"memory_id"`
	DryRun         bool   `json:"dry_run"`
	AlreadyDeleted bool   `json:"already_deleted"`
	Message        string `json:"message"`
}

// softForget marks ids forgotten in one Update; per-id results say whether each already was.
func (a *App) softForget(ids []uint64, reason string, replacedBy *uint64, dryRun bool) (already map[uint64]bool, errs map[uint64]error, err error) {
	now := a.now().UTC()
	already = map[uint64]bool{}
	errs, err = a.svc.modify(ids, func(m *Memory) (bool, error) {
		if m.deleted() {
			already[m.ID] = true
			return false, nil
		}
		if dryRun {
			return false, nil
		}
		t := now
		m.DeletedAt, m.ForgetReason, m.ReplacedByID, m.UpdatedAt = &t, reason, replacedBy, now
		return true, nil
	}, nil)
	return already, errs, err
}

func (a *App) forget(ctx context.Context, raw json.RawMessage) (any, error) {
	var in forgetArgs
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	m, ok := a.svc.get(in.ID)
	if !ok {
		return nil, errNotFoundID(in.ID)
	}
	p := forgetPayload{OK: true, MemoryID: in.ID, DryRun: in.DryRun, AlreadyDeleted: m.deleted()}
	if in.HardDelete {
		if in.ReplacedByID != nil {
			return nil, invalid("replaced_by_id", "cannot be combined with hard_delete: a hard delete keeps no tombstone")
		}
		if in.DryRun {
			p.Message = "Would hard delete"
			return p, nil
		}
		if err := a.svc.hardDelete(in.ID); err != nil {
			if errors.Is(err, errNotFound) {
				return nil, errNotFoundID(in.ID)
			}
			return nil, err
		}
		p.Message = "Hard deleted"
		return p, nil
	}
	if in.ReplacedByID != nil {
		r, ok := a.svc.get(*in.ReplacedByID)
		switch {
		case *in.ReplacedByID == in.ID:
			return nil, invalid("replaced_by_id", "is the memory being forgotten")
		case !ok || r.deleted():
			return nil, invalid("replaced_by_id", fmt.Sprintf("memory %d does not exist or was forgotten", *in.ReplacedByID))
		}
	}
	already, errs, err := a.softForget([]uint64{in.ID}, in.Reason, in.ReplacedByID, in.DryRun)
	if err != nil {
		return nil, err
	}
	if e := errs[in.ID]; e != nil {
		return nil, errNotFoundID(in.ID)
	}
	p.AlreadyDeleted = already[in.ID]
	switch {
	case p.AlreadyDeleted:
		p.Message = "Already forgotten"
	case in.DryRun:
		p.Message = "Would soft-delete"
	default:
		p.Message = "Forgotten"
	}
	return p, nil
}

type forgetItemResult struct {
	InputIndex     int        `json:"input_index"`
	ID             uint64     `json:"id"`
	OK             bool       `json:"ok"`
	AlreadyDeleted bool       `json:"already_deleted"`
	Error          *toolError `json:"error,omitempty"`
}

func (a *App) forgetBatch(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		IDs    []uint64 `json:"ids"`
		Reason string   `json:"reason"`
		DryRun bool     `json:"dry_run"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	already, errs, err := a.softForget(in.IDs, in.Reason, nil, in.DryRun)
	if err != nil {
		return nil, err
	}
	p := struct {
		OK      bool               `json:"ok"`
		DryRun  bool               `json:"dry_run"`
		Results []forgetItemResult `json:"results"`
		Summary struct {
			Total          int `json:"total"`
			Deleted        int `json:"deleted"`
			AlreadyDeleted int `json:"already_deleted"`
			Errors         int `json:"errors"`
		} `json:"summary"`
	}{OK: true, DryRun: in.DryRun}
	seen := map[uint64]bool{}
	for i, id := range in.IDs {
		r := forgetItemResult{InputIndex: i, ID: id}
		switch {
		case errs[id] != nil:
			r.Error = itemError(errNotFoundID(id))
			p.Summary.Errors++
		case seen[id]:
			r.Error = &toolError{Code: codeInvalidInput, Message: fmt.Sprintf("ids[%d]: memory %d is listed twice", i, id), Field: fmt.Sprintf("ids[%d]", i), Reason: "listed twice"}
			p.Summary.Errors++
		case already[id]:
			r.OK, r.AlreadyDeleted = true, true
			p.Summary.AlreadyDeleted++
		default:
			r.OK = true
			p.Summary.Deleted++
		}
		seen[id] = true
		p.Results = append(p.Results, r)
	}
	p.Summary.Total = len(in.IDs)
	return p, nil
}

func (a *App) findNearDuplicates(ctx context.Context, raw json.RawMessage) (any, error) {
	var in struct {
		Threshold *float64 `json:"threshold"`
		MaxGroups *int     `json:"max_groups"`
	}
	if err := decode(raw, &in); err != nil {
		return nil, err
	}
	threshold, maxGroups := 0.92, defaultDupGroup
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	if in.MaxGroups != nil {
		maxGroups = *in.MaxGroups
	}
	groups := a.svc.nearDuplicateGroups(float32(threshold))
	type groupPayload struct {
		IDs           []uint64  `json:"ids"`
		MaxSimilarity float32   `json:"max_similarity"`
		PairCount     int       `json:"pair_count"`
		Memories      []*Memory `json:"memories"`
	}
	p := struct {
		OK        bool           `json:"ok"`
		Threshold float64        `json:"threshold"`
		Groups    []groupPayload `json:"groups"`
		Summary   struct {
			Groups int `json:"groups"`
			Pairs  int `json:"pairs"`
		} `json:"summary"`
	}{OK: true, Threshold: threshold, Groups: []groupPayload{}}
	for _, g := range groups {
		p.Summary.Groups++
		p.Summary.Pairs += g.PairCount
		if len(p.Groups) == maxGroups {
			continue
		}
		gp := groupPayload{IDs: g.IDs, MaxSimilarity: g.MaxSimilarity, PairCount: g.PairCount}
		for _, id := range g.IDs {
			if m, ok := a.svc.get(id); ok {
				gp.Memories = append(gp.Memories, m)
			}
		}
		p.Groups = append(p.Groups, gp)
	}
	return p, nil
}
