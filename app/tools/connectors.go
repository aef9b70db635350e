package tools

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/mcp"
)

// search and fetch: OpenAI's contract for ChatGPT connectors and deep research
// (platform.openai.com/docs/mcp), which accept a server only if it has these two tools and
// whose deep research calls nothing else. Their payloads are OpenAI's shapes exactly, without
// our "ok": search returns {"results": [{"id", "title", "url"}]} and fetch {"id", "title",
// "text", "url", "metadata"}, each as the one text content item and as structuredContent. A
// failure is like every other tool's: {"ok": false, "error": {…}} with isError.
//
// Ids are strings, as OpenAI's examples and clients have them: the memory id in decimal. A
// url is the memory's page in the owner's console, <public origin>/console/memories/<id>; with
// no origin known (ownsona stdio without --public-url) it is the path alone.

type searchConnectorArgs struct {
	Query string `json:"query" desc:"what to look for, in natural language" schema:"required,min=1,max=1000"`
}

type fetchArgs struct {
	ID string `json:"id" desc:"the id of a search result, such as \"12\"" schema:"required,min=1,max=20"`
}

// searchResult is one of search's results.
type searchResult struct {
	ID    string `json:"id" desc:"the memory's id, for fetch" schema:"required"`
	Title string `json:"title" desc:"the memory's first words" schema:"required"`
	URL   string `json:"url" desc:"the memory's page in the owner's console" schema:"required"`
}

type searchPayload struct {
	Results []searchResult `json:"results"`
}

// document is fetch's payload: one memory as OpenAI's fetch describes a document.
type document struct {
	ID       string      `json:"id" desc:"the memory's id"`
	Title    string      `json:"title" desc:"the memory's first words"`
	Text     string      `json:"text" desc:"the memory's whole text"`
	URL      string      `json:"url" desc:"the memory's page in the owner's console"`
	Metadata docMetadata `json:"metadata"`
}

// docMetadata is what a memory holds besides its text.
type docMetadata struct {
	Tags            []string   `json:"tags"`
	Importance      float64    `json:"importance"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
	LastConfirmedAt time.Time  `json:"last_confirmed_at"`
	ExpiresAt       *time.Time `json:"expires_at,omitempty"`
	SourceProvider  string     `json:"source_provider"`
	SourceClient    string     `json:"source_client"`
	SessionID       string     `json:"session_id,omitempty"`
}

const searchDesc = "Search the user's memories by meaning and keywords, best match first (the same ranking as recall), and return for each an id, a title (its first words) and the URL of its page. Call fetch with an id to read the whole memory. This is the search tool of ChatGPT connectors and deep research; other clients should prefer recall, which returns the memories themselves with scores and filters." + asData

const fetchDesc = "Fetch one memory by the id a search result gave: its full text, a title, the URL of its page, and metadata (tags, importance, created_at, updated_at, last_confirmed_at, expires_at, source_provider, source_client, session_id). When memories contradict each other, prefer the one most recently confirmed." + asData

// connectorTools are search and fetch.
func (s *Server) connectorTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[searchConnectorArgs, searchPayload]{name: "search", title: "Search memories (ChatGPT connectors)", desc: searchDesc,
			ann: readOnly(), run: s.searchConnector}),
		newTool(s, def[fetchArgs, document]{name: "fetch", title: "Fetch a memory (ChatGPT connectors)", desc: fetchDesc,
			ann: readOnly(), run: s.fetch}),
	}
}

// searchConnector ranks as recall does, with recall's defaults (8 results, no filter).
func (s *Server) searchConnector(ctx context.Context, in searchConnectorArgs) (searchPayload, error) {
	q, err := (&searchArgs{}).query("query", in.Query)
	if err != nil {
		return searchPayload{}, err
	}
	found := s.mem.Search(ctx, q)
	p := searchPayload{Results: []searchResult{}}
	for _, m := range found.Matches {
		p.Results = append(p.Results, searchResult{ID: strconv.FormatUint(m.Memory.ID, 10), Title: title(m.Memory.Text), URL: s.memoryURL(m.Memory.ID)})
	}
	return p, nil
}

func (s *Server) fetch(ctx context.Context, in fetchArgs) (document, error) {
	raw := strings.TrimSpace(in.ID)
	id, err := strconv.ParseUint(raw, 10, 64)
	if err != nil || id == 0 || id > uint64(maxID) || strconv.FormatUint(id, 10) != raw {
		return document{}, &toolError{Code: codeInvalidInput, Message: "id: " + strconv.Quote(in.ID) + " is not a memory id; pass the id of a search result",
			Field: "id", Reason: "is not a memory id such as \"12\""}
	}
	m, err := s.mem.Get(id)
	if err != nil {
		return document{}, err
	}
	if m.Deleted() {
		return document{}, &toolError{Code: codeNotFound, Message: "memory " + raw + " was forgotten"}
	}
	return document{ID: raw, Title: title(m.Text), Text: m.Text, URL: s.memoryURL(m.ID), Metadata: metadataOf(m)}, nil
}

func metadataOf(m *memory.Memory) docMetadata {
	tags := m.Tags
	if tags == nil {
		tags = []string{}
	}
	return docMetadata{Tags: tags, Importance: m.Importance, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
		LastConfirmedAt: m.LastConfirmedAt, ExpiresAt: m.ExpiresAt, SourceProvider: m.SourceProvider,
		SourceClient: m.SourceClient, SessionID: m.SessionID}
}

// memoryURL is the page of memory id in the owner's console: absolute when the public origin
// is known, else the path alone.
func (s *Server) memoryURL(id uint64) string {
	origin := ""
	if s.publicURL != nil {
		origin = strings.TrimRight(s.publicURL(), "/")
	}
	return origin + "/console/memories/" + strconv.FormatUint(id, 10)
}

// titleChars is the most characters of a title before its ellipsis.
const titleChars = 80

// title is the first line of text, cut at a word to at most titleChars characters with an
// ellipsis when it is longer (at the limit itself when its first word is longer still).
func title(text string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) <= titleChars {
		return line
	}
	runes := []rune(line)
	cut := string(runes[:titleChars])
	if next := runes[titleChars]; next != ' ' && next != '\t' { // the cut is inside a word
		if i := strings.LastIndexAny(cut, " \t"); i >= 0 && utf8.RuneCountInString(cut[:i]) > titleChars/2 {
			cut = cut[:i]
		}
	}
	return strings.TrimRight(cut, " \t.,;:-") + "…"
}
