package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/mcp"
)

// The compatibility modes (issue 27, item 7; OWNSONA_COMPAT): each, off by default, adds what
// clients written for one of the seed systems call, so that they work unchanged. With every
// mode off, tools/list, resources/list and the templates are ownsona's alone; the modes' tools
// are unknown tools then, as to any other server. Switching a mode on or off (SetCompat) takes
// effect from the next request and tells connected clients with the list_changed
// notifications, as the allowlist does. A mode's tools and resources follow the allowlist by
// the tool of ownsona whose data they show (readsWith).
//
//   - once (seed 001): prepare_local_file_upload, ONCE's name of prepare_import_upload, with
//     its schema and behaviour.
//   - komcp (seed 003): search_kura_notes, with KOmcp's input schema, its text answer ("Found
//     N notes matching 'q':" then "1. **Title** (similarity: 0.92)" and an excerpt of the
//     note), its "No notes found" text, and its argument errors as JSON-RPC -32602 "Invalid
//     params" with data {field, reason} in every protocol revision. A memory has no title:
//     the title is its first line, cut at a word to 80 characters (as OpenAI's search has
//     it), and the excerpt its whole text on one line, cut at a word to 200 characters with
//     "...". structuredContent is recall's payload.
//   - sophon (seed 004): memory.search (query, scope, limit 1-100, default 10), answering
//     "Found N entries:" and the entries; sophon://memory/{id} (a memory's text, text/plain)
//     and sophon://memory/ (the listing); and the approval gate's outcomes of a tools/call as
//     JSON-RPC errors, -32001 "Approval rejected" and -32002 "Approval timed out", instead of
//     isError payloads, for every client while the mode is on. Claude refuses tool names with
//     a dot, so this mode is for Sophon's own clients.
//
// memory.search's scopes, from the caller's side: agent is what this client wrote (the
// memories whose source_client is the caller's: its OAuth client's or token's name, or the
// transport over stdio); user is everything else, the memories the user wrote through other
// assistants, the console or imports; all (the default) is both.

// Compat says which compatibility modes are on; the zero Compat, none.
type Compat struct {
	// ONCE adds prepare_local_file_upload (seed 001).
	ONCE bool
	// KOmcp adds search_kura_notes (seed 003).
	KOmcp bool
	// Sophon adds memory.search and the sophon://memory/ resources, and answers the
	// approval gate's outcomes as JSON-RPC errors -32001 and -32002 (seed 004). Claude
	// refuses tool names with a dot: this mode is for Sophon's own clients.
	Sophon bool
}

// CompatModes are the modes' names, as OWNSONA_COMPAT lists them.
var CompatModes = []string{"once", "komcp", "sophon"}

// ParseCompat reads a comma-separated list of modes ("once,komcp"); empty is none.
func ParseCompat(list string) (Compat, error) {
	var c Compat
	for _, m := range strings.Split(list, ",") {
		switch m = strings.ToLower(strings.TrimSpace(m)); m {
		case "":
		case "once":
			c.ONCE = true
		case "komcp":
			c.KOmcp = true
		case "sophon":
			c.Sophon = true
		default:
			return Compat{}, fmt.Errorf("%q is not a compatibility mode; the modes are %s", m, strings.Join(CompatModes, ", "))
		}
	}
	return c, nil
}

// String lists the modes that are on, as ParseCompat reads them; "" for none.
func (c Compat) String() string {
	var on []string
	for _, m := range CompatModes {
		if c.on(m) {
			on = append(on, m)
		}
	}
	return strings.Join(on, ",")
}

// on reports whether mode is on.
func (c Compat) on(mode string) bool {
	switch mode {
	case "once":
		return c.ONCE
	case "komcp":
		return c.KOmcp
	case "sophon":
		return c.Sophon
	}
	return false
}

// compatNames are the tools, resources and templates of the modes, by mode; each follows the
// allowlist by the tool in readsWith.
var compatNames = map[string]string{
	"prepare_local_file_upload": "once",
	"search_kura_notes":         "komcp",
	"memory.search":             "sophon",
	sophonTemplate:              "sophon",
	sophonListing:               "sophon",
}

// compatCatalogue is the order of the modes' tools in tools/list, after the catalogue's.
var compatCatalogue = []string{"prepare_local_file_upload", "search_kura_notes", "memory.search"}

// shows reports whether c lets name be seen: true for anything that is not a mode's.
func (c Compat) shows(name string) bool {
	mode, ok := compatNames[name]
	return !ok || c.on(mode)
}

// Compat returns the compatibility modes in force.
func (s *Server) Compat() Compat { return *s.compat.Load() }

// SetCompat makes c the compatibility modes from the next request on, and tells connected
// clients which lists changed with it (notifications/tools/list_changed and
// resources/list_changed).
func (s *Server) SetCompat(c Compat) {
	s.allowMu.Lock()
	defer s.allowMu.Unlock()
	old := s.Compat()
	s.compat.Store(&c)
	allow := *s.allowlist.Load()
	for _, kind := range []string{"tools", "prompts", "resources"} {
		if !slices.Equal(shown(kind, allow, old), shown(kind, allow, c)) {
			s.RPC.NotifyListChanged(kind)
		}
	}
}

// compatTools are the modes' tools.
func (s *Server) compatTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, s.prepareUploadDef("prepare_local_file_upload", "Prepare a file upload for import (ONCE's name)",
			prepareUploadDesc+" The same tool as prepare_import_upload, under the name clients written for ONCE call.")),
		s.kuraTool(),
		newTool(s, def[sophonSearchArgs, recallPayload]{
			name: "memory.search", title: "Search memory (Sophon)",
			desc: "Search user and agent memory by natural-language query. scope: agent is what this client wrote, user every other memory, all (default) both; limit defaults to 10. " +
				"For Sophon's clients (ownsona's sophon compatibility mode); other clients should call recall." + asData,
			ann: readOnly(), inSchema: sophonSearchSchema, run: s.sophonSearch,
		}),
	}
}

// ---- komcp: search_kura_notes ----

// kuraSchema is KOmcp's input schema of search_kura_notes (seed 003, "Input Schema").
var kuraSchema = schema{
	"type": "object",
	"properties": schema{
		"query": schema{"type": "string", "description": "Natural language search query", "minLength": 1, "maxLength": 1000},
		"limit": schema{"type": "number", "description": "Maximum number of results", "minimum": 1, "maximum": 50, "default": 10},
		"min_similarity": schema{"type": "number", "description": "Minimum cosine similarity threshold",
			"minimum": 0, "maximum": 1, "default": 0.7},
	},
	"required": []string{"query"},
}

const kuraDesc = "Search Kura notes using semantic similarity. Here the notes are the user's memories in ownsona (its KOmcp compatibility mode), " +
	"ranked as recall ranks them; similarity is recall's score. Other clients should call recall." + asData

// kuraTool is search_kura_notes. It checks its own arguments (mcp sees a schema that admits
// any object), so that every error is KOmcp's -32602 with its reasons, in every revision.
func (s *Server) kuraTool() *mcp.Tool {
	ann := *readOnly()
	ann.Title = "Search Kura notes (KOmcp)"
	t := &mcp.Tool{Name: "search_kura_notes", Title: ann.Title, Description: kuraDesc, InputSchema: mustJSON(kuraSchema),
		ArgumentSchema: mustJSON(schema{"type": "object"}), OutputSchema: mustJSON(outputOf[recallPayload]()), Annotations: &ann}
	t.Handler = func(ctx context.Context, raw json.RawMessage) (*mcp.ToolResult, error) {
		in, err := parseKuraArgs(raw)
		if err != nil {
			return nil, err
		}
		p := newRecallPayload(s.mem.Search(ctx, memory.Query{Text: in.query, Limit: in.limit, MinScore: float32(in.minSimilarity)}))
		p.render = func(p recallPayload) string { return kuraText(in.query, p) }
		return s.result(p), nil
	}
	return t
}

type kuraArgs struct {
	query         string
	limit         int
	minSimilarity float64
}

// kuraError is KOmcp's refusal of an argument: -32602 "Invalid params" with data {field,
// reason}, whatever the protocol revision.
func kuraError(field, reason string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params", Data: map[string]string{"field": field, "reason": reason}}
}

// parseKuraArgs checks search_kura_notes' arguments with KOmcp's reasons ("Query cannot be
// empty", "Limit must be between 1 and 50"); a limit with a fraction is cut to its whole part.
func parseKuraArgs(raw json.RawMessage) (kuraArgs, error) {
	in := kuraArgs{limit: 10, minSimilarity: 0.7}
	var args map[string]json.RawMessage
	_ = json.Unmarshal(raw, &args) // mcp has checked that it is an object
	number := func(name string) (float64, bool, bool) {
		v, ok := args[name]
		if !ok || string(v) == "null" {
			return 0, false, true
		}
		var f float64
		err := json.Unmarshal(v, &f)
		return f, true, err == nil
	}
	var q string
	if v, ok := args["query"]; ok && string(v) != "null" {
		if json.Unmarshal(v, &q) != nil {
			return in, kuraError("query", "Query must be a string")
		}
	}
	in.query = strings.TrimSpace(q)
	switch n := len([]rune(in.query)); {
	case n == 0:
		return in, kuraError("query", "Query cannot be empty")
	case n > maxQueryChars:
		return in, kuraError("query", fmt.Sprintf("Query must be at most %d characters", maxQueryChars))
	}
	if f, set, ok := number("limit"); set || !ok {
		if !ok || f < 1 || f > 50 {
			return in, kuraError("limit", "Limit must be between 1 and 50")
		}
		in.limit = int(f)
	}
	if f, set, ok := number("min_similarity"); set || !ok {
		if !ok || f < 0 || f > 1 {
			return in, kuraError("min_similarity", "Minimum similarity must be between 0 and 1")
		}
		in.minSimilarity = f
	}
	return in, nil
}

// kuraText is search_kura_notes' answer in KOmcp's words.
func kuraText(query string, p recallPayload) string {
	var b strings.Builder
	if len(p.Matches) == 0 {
		fmt.Fprintf(&b, "No notes found matching '%s'. Try:\n- Using different keywords\n- Lowering the similarity threshold\n- Checking if notes exist in your account", query)
	} else {
		fmt.Fprintf(&b, "Found %d notes matching '%s':", len(p.Matches), query)
		for i, m := range p.Matches {
			fmt.Fprintf(&b, "\n\n%d. **%s** (similarity: %.2f)\n   %s", i+1, title(m.Text), *m.Score, noteExcerpt(m.Text))
		}
	}
	for _, note := range []string{p.Warning, p.Note} {
		if note != "" {
			fmt.Fprintf(&b, "\n\nNote: %s", note)
		}
	}
	return b.String()
}

// excerptChars is the most characters of a note's excerpt before its "...".
const excerptChars = 200

// noteExcerpt is text on one line, cut at a word to excerptChars characters with "..." when
// it is longer.
func noteExcerpt(text string) string {
	line := strings.Join(strings.Fields(text), " ")
	r := []rune(line)
	if len(r) <= excerptChars {
		return line
	}
	cut := string(r[:excerptChars])
	if r[excerptChars] != ' ' {
		if i := strings.LastIndexByte(cut, ' '); i > 0 && len([]rune(cut[:i])) > excerptChars/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " .,;:-") + "..."
}

// ---- sophon: memory.search and the sophon://memory/ resources ----

type sophonSearchArgs struct {
	Query string `json:"query"`
	Scope string `json:"scope"`
	Limit *int   `json:"limit"`
}

// sophonSearchSchema is Sophon's input schema of memory.search (seed 004).
var sophonSearchSchema = schema{
	"type": "object",
	"properties": schema{
		"query": schema{"type": "string"},
		"scope": schema{"type": "string", "enum": []string{"user", "agent", "all"}},
		"limit": schema{"type": "integer", "minimum": 1, "maximum": 100},
	},
	"required": []string{"query"},
}

// defaultSophonLimit is memory.search's limit when none is given.
const defaultSophonLimit = 10

func (s *Server) sophonSearch(ctx context.Context, in sophonSearchArgs) (recallPayload, error) {
	q, err := (&searchArgs{}).query("query", in.Query)
	if err != nil {
		return recallPayload{}, err
	}
	q.Limit = defaultSophonLimit
	if in.Limit != nil {
		q.Limit = *in.Limit
	}
	client := origin(ctx, "").Client
	var found memory.Found
	switch in.Scope {
	case "agent":
		q.Filter.SourceClient = client
		found = s.mem.Search(ctx, q)
	case "user":
		found = s.searchExcept(ctx, q, client)
	default:
		found = s.mem.Search(ctx, q)
	}
	p := newRecallPayload(found)
	p.render = func(p recallPayload) string { return sophonText(p, client) }
	return p, nil
}

// searchExcept is the search q among the memories client did not write: the best q.Limit of
// a search that asks for as many more as client has memories, the client's left out.
func (s *Server) searchExcept(ctx context.Context, q memory.Query, client string) memory.Found {
	f := q.Filter
	f.SourceClient = client
	limit := q.Limit
	q.Limit += s.mem.Count(f)
	found := s.mem.Search(ctx, q)
	kept := found.Matches[:0]
	for _, m := range found.Matches {
		if m.Memory.SourceClient != client && len(kept) < limit {
			kept = append(kept, m)
		}
	}
	found.Matches = kept
	return found
}

// sophonText is memory.search's answer: "Found N entries:" and one line per entry, with its
// resource URI, whose it is (user or agent, from the caller's side) and its score.
func sophonText(p recallPayload, client string) string {
	var b strings.Builder
	if len(p.Matches) == 0 {
		b.WriteString("Found 0 entries.")
	} else {
		fmt.Fprintf(&b, "Found %d entries:", len(p.Matches))
		for i, m := range p.Matches {
			whose := "user"
			if m.SourceClient == client {
				whose = "agent"
			}
			fmt.Fprintf(&b, "\n%d. %s (%s; %s memory; score %.2f)", i+1, strings.Join(strings.Fields(m.Text), " "), sophonURI(m.ID), whose, *m.Score)
		}
	}
	for _, note := range []string{p.Warning, p.Note} {
		if note != "" {
			fmt.Fprintf(&b, "\n\nNote: %s", note)
		}
	}
	return b.String()
}

const (
	sophonTemplate = "sophon://memory/{id}"
	sophonListing  = "sophon://memory/"
	// sophonListed is the most memories the listing reads before the budget cuts it.
	sophonListed = 500
)

func sophonURI(id uint64) string { return fmt.Sprintf("%s%d", sophonListing, id) }

// sophonResource is the listing's entry in resources/list.
var sophonResource = mcp.Resource{URI: sophonListing, Name: "memory", Title: "Memories (Sophon)",
	Description: "User-accessible memory listing: each memory as a sophon://memory/{id} resource, newest first", MIMEType: "application/json"}

// sophonEntry is a memory in the listing, as Sophon's resources/list shows an entry.
type sophonEntry struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description"`
	MIMEType    string `json:"mimeType"`
}

// sophonListingPayload is the listing: total is how many active memories there are.
type sophonListingPayload struct {
	Resources []sophonEntry `json:"resources"`
	Total     int           `json:"total"`
	cutNote
}

func (p sophonListingPayload) listLen() int { return len(p.Resources) }

func (p sophonListingPayload) trimmed(n, textMax int) any {
	q := p
	q.Resources = firstOf(p.Resources, n)
	if textMax >= 0 && n > 0 {
		q.Resources[0].Name, _ = cutText(q.Resources[0].Name, textMax)
	}
	q.cutNote = newCut(len(p.Resources), n, "%d older memories", "memory.search finds them by meaning", nil, 0)
	return q
}

// readSophon reads sophon://memory/ or sophon://memory/{id}.
func (s *Server) readSophon(uri string) ([]mcp.ResourceContents, error) {
	if uri == sophonListing {
		mems, _ := s.mem.List(memory.Filter{}, memory.Page{Limit: sophonListed})
		p := sophonListingPayload{Resources: []sophonEntry{}, Total: s.mem.Count(memory.Filter{})}
		for _, m := range mems {
			desc := fmt.Sprintf("Memory %d, last confirmed %s", m.ID, m.LastConfirmedAt.Format("2006-01-02"))
			if len(m.Tags) > 0 {
				desc += "; tags: " + strings.Join(m.Tags, ", ")
			}
			p.Resources = append(p.Resources, sophonEntry{URI: sophonURI(m.ID), Name: title(m.Text), Description: desc, MIMEType: "text/plain"})
		}
		return s.jsonText(uri, p)
	}
	var id uint64
	if _, err := fmt.Sscanf(uri, sophonListing+"%d", &id); err == nil && sophonURI(id) == uri {
		if m, err := s.mem.Get(id); err == nil && !m.Deleted() {
			text, cut := cutText(m.Text, s.maxResult-200)
			if cut {
				text += "\n\n(cut to fit the answer budget; the owner sees the whole memory in ownsona's console)"
			}
			return []mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}, nil
		}
	}
	return nil, fmt.Errorf("%s: %w", uri, mcp.ErrResourceNotFound)
}
