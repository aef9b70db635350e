package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/mcp"
)

// recall (and its alias search_memory) and build_context_prompt: memories by meaning.

// searchArgs are the arguments every search takes.
type searchArgs struct {
	Limit         *int     `json:"limit" desc:"how many memories at most (default 8)" schema:"min=1,max=50"`
	MinScore      *float64 `json:"min_score" desc:"drop matches scoring below this (0 to 1; scores are relative to the embedder)" schema:"min=0,max=1"`
	MinSimilarity *float64 `json:"min_similarity" desc:"alias of min_score" schema:"min=0,max=1"`
	Tags          tagsArg  `json:"tags"`
	Since         *string  `json:"since" desc:"only memories created at or after this time" schema:"time"`
	Until         *string  `json:"until" desc:"only memories created at or before this time" schema:"time"`
	// IncludeSuperseded also finds the memories a newer one corrects (supersede.go).
	IncludeSuperseded bool `json:"include_superseded" desc:"also memories that a newer memory supersedes (corrected facts; left out by default)"`
}

type recallArgs struct {
	Query  string `json:"query" desc:"what to look for, in natural language" schema:"required,min=1,max=1000"`
	Format string `json:"format" desc:"json (default) or text for a readable list" schema:"enum=json|text"`
	searchArgs
}

type contextPromptArgs struct {
	UserPrompt string `json:"user_prompt" desc:"the user's prompt" schema:"required,min=1,max=1000"`
	MaxChars   *int   `json:"max_chars" desc:"budget for the whole prompt, in characters" schema:"min=1,max=1000000"`
	searchArgs
}

// query checks the search arguments and makes the query for text (the argument named field).
func (in *searchArgs) query(field, text string) (memory.Query, error) {
	// A question (recall, search) may say when by its own words; a user's prompt to build
	// context for is not searched by time.
	q := memory.Query{Text: strings.TrimSpace(text), Limit: defaultRecall, TimeWords: field == "query"}
	if q.Text == "" {
		return q, mcp.InvalidArgument(field, "is empty")
	}
	if n := len([]rune(q.Text)); n > maxQueryChars {
		return q, mcp.InvalidArgument(field, fmt.Sprintf("is %d characters; the limit is %d", n, maxQueryChars))
	}
	if in.Limit != nil {
		q.Limit = *in.Limit
	}
	switch {
	case in.MinScore != nil && in.MinSimilarity != nil:
		return q, mcp.InvalidArgument("min_similarity", "give min_score or its alias min_similarity, not both")
	case in.MinScore != nil:
		q.MinScore = float32(*in.MinScore)
	case in.MinSimilarity != nil:
		q.MinScore = float32(*in.MinSimilarity)
	}
	q.Filter.IncludeSuperseded = in.IncludeSuperseded
	var err error
	if q.Filter.Tags, err = memtext.ParseTags([]byte(in.Tags)); err != nil {
		return q, err
	}
	if q.Filter.Since, err = parseTime("since", in.Since); err != nil {
		return q, err
	}
	if q.Filter.Until, err = parseTime("until", in.Until); err != nil {
		return q, err
	}
	if q.Filter.Since != nil && q.Filter.Until != nil && q.Filter.Until.Before(*q.Filter.Since) {
		return q, mcp.InvalidArgument("until", "is before since")
	}
	return q, nil
}

type recallPayload struct {
	OK                   bool        `json:"ok"`
	Matches              []memoryOut `json:"matches"`
	QueryEmbeddingTimeMS float64     `json:"query_embedding_time_ms"`
	SearchTimeMS         float64     `json:"search_time_ms"`
	Warning              string      `json:"warning,omitempty"`
	TimeWindow           *timeWindow `json:"time_window,omitempty" desc:"the window the question's own time words set (since inclusive, until exclusive, null for an open end); absent when it has none or since/until were given. It ranks, never hides: memories written in it or mentioning a time in it come first (ranked: true). listed: the question was only the window, and the matches are its memories, newest first; nearest: it holds none, and the matches are the nearest in time; note says so"`
	cutNote
	// render, when set, is the text of content[0] (recall's format "text", the compat
	// modes' answers), made from the payload as it is sent, so from a cut one too.
	render func(recallPayload) string
}

// timeWindow is the window the question's own time words set ("last week"): since inclusive,
// until exclusive, null for an open end; phrase as the question has it. It ranks, it never
// hides a memory: ranked is always true, and note says what the matches are when the question
// was only the window (the window's memories, newest first, or, when it holds none, the
// nearest in time).
type timeWindow struct {
	Since   *time.Time `json:"since" schema:"format=date-time"`
	Until   *time.Time `json:"until" schema:"format=date-time"`
	Phrase  string     `json:"phrase"`
	Ranked  bool       `json:"ranked"`
	Listed  bool       `json:"listed,omitempty"`
	Nearest bool       `json:"nearest,omitempty"`
	Note    string     `json:"note,omitempty"`
}

// timeWindowOf is w in a payload; nil for none.
func timeWindowOf(w *memory.TimeWindow) *timeWindow {
	if w == nil {
		return nil
	}
	tw := &timeWindow{Since: w.Since, Until: w.Until, Phrase: w.Phrase, Ranked: true, Listed: w.Listed, Nearest: w.Nearest}
	switch {
	case w.Nearest:
		tw.Note = "no memory falls in " + w.Phrase + "; these are the nearest to it in time"
	case w.Listed:
		tw.Note = "the memories of " + w.Phrase + ", newest first"
	}
	return tw
}

func (p recallPayload) contentText() string {
	if p.render == nil {
		return ""
	}
	return p.render(p)
}

func (p recallPayload) listLen() int { return len(p.Matches) }

func (p recallPayload) trimmed(n, textMax int) any {
	q := p
	q.Matches = firstOf(p.Matches, n)
	var cut []uint64
	if textMax >= 0 && n > 0 {
		var was bool
		if q.Matches[0], was = cutMemory(q.Matches[0], textMax); was {
			cut = append(cut, q.Matches[0].ID)
		}
	}
	q.cutNote = newCut(len(p.Matches), n, "%d more matches", "ask again with a lower limit, or narrow the search with tags, since or until", cut, textMax)
	return q
}

type contextPromptPayload struct {
	OK        bool     `json:"ok"`
	Prompt    string   `json:"prompt"`
	MemoryIDs []uint64 `json:"memory_ids" schema:"id"`
	// Omitted counts the facts left out, by max_chars or by the answer budget; it hides
	// cutNote's.
	Omitted int    `json:"omitted"`
	Warning string `json:"warning,omitempty"`
	cutNote
	userPrompt string      // the user's prompt
	facts      []memoryOut // the matches, most relevant first
	maxChars   int         // max_chars; 0: none
}

// newContextPrompt lays out the prompt of facts within maxChars.
func newContextPrompt(userPrompt string, facts []memoryOut, maxChars int, warning string) contextPromptPayload {
	prompt, used, omitted := contextPrompt(userPrompt, facts, maxChars)
	return contextPromptPayload{OK: true, Prompt: prompt, MemoryIDs: used, Omitted: omitted, Warning: warning,
		userPrompt: userPrompt, facts: facts, maxChars: maxChars}
}

func (p contextPromptPayload) listLen() int { return len(p.facts) }

// trimmed lays out the prompt again with the n most relevant facts.
func (p contextPromptPayload) trimmed(n, textMax int) any {
	facts, cut := firstMemories(p.facts, n, textMax)
	q := newContextPrompt(p.userPrompt, facts, p.maxChars, p.Warning)
	q.facts = p.facts
	c := newCut(len(p.facts), n, "The %d least relevant facts", "the prompt keeps the most relevant ones", cut, textMax)
	q.Omitted += c.Omitted
	c.Omitted = 0 // counted in q.Omitted, which hides it
	q.cutNote = c
	return q
}

const recallDesc = "Search the user's memories by meaning and keywords; returns the best matches first with a relevance score. Call it before answering anything that may depend on what you know about the user. Prefer the most recently confirmed of contradicting matches." + asData

func (s *Server) recallTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[recallArgs, recallPayload]{name: "recall", title: "Recall memories", desc: recallDesc, ann: readOnly(), run: s.recall, meta: appMeta()}),
		newTool(s, def[recallArgs, recallPayload]{name: "search_memory", title: "Search memories (alias of recall)", desc: "Alias of recall. " + recallDesc, ann: readOnly(), run: s.recall, meta: appMeta()}),
		newTool(s, def[contextPromptArgs, contextPromptPayload]{
			name: "build_context_prompt", title: "Build a prompt with context",
			desc: "Find the memories relevant to the user's prompt and return one prompt that lists them as known facts followed by the user's prompt, within max_chars characters (most relevant facts first)." + asData,
			ann:  readOnly(),
			run:  s.buildContextPrompt,
		}),
	}
}

func (s *Server) recall(ctx context.Context, in recallArgs) (recallPayload, error) {
	q, err := in.query("query", in.Query)
	if err != nil {
		return recallPayload{}, err
	}
	p := newRecallPayload(s.mem.Search(ctx, q))
	if in.Format == "text" {
		p.render = func(p recallPayload) string { return recallText(in.Query, p) }
	}
	return p, nil
}

// newRecallPayload is recall's payload of what a search found.
func newRecallPayload(found memory.Found) recallPayload {
	p := recallPayload{OK: true, Matches: make([]memoryOut, 0, len(found.Matches)), QueryEmbeddingTimeMS: ms(found.EmbedTime), SearchTimeMS: ms(found.SearchTime), Warning: found.Warning,
		TimeWindow: timeWindowOf(found.TimeWindow)}
	for _, m := range found.Matches {
		out := memoryOf(m.Memory)
		out.Score = &m.Score
		p.Matches = append(p.Matches, out)
	}
	return p
}

// recallText is the human-readable form of recall's result.
func recallText(query string, p recallPayload) string {
	var b strings.Builder
	if len(p.Matches) == 0 {
		fmt.Fprintf(&b, "No memories found matching %q.", query)
	} else {
		fmt.Fprintf(&b, "Found %d memories matching %q:\n", len(p.Matches), query)
		for i, m := range p.Matches {
			fmt.Fprintf(&b, "\n%d. [id %d, score %.2f", i+1, m.ID, *m.Score)
			if len(m.Tags) > 0 {
				fmt.Fprintf(&b, ", tags %s", strings.Join(m.Tags, ", "))
			}
			fmt.Fprintf(&b, ", confirmed %s] %s", m.LastConfirmedAt.Format(time.DateOnly), m.Text)
		}
	}
	if p.Warning != "" {
		fmt.Fprintf(&b, "\n\nNote: %s", p.Warning)
	}
	if p.Note != "" {
		fmt.Fprintf(&b, "\n\nNote: %s", p.Note)
	}
	return b.String()
}

func (s *Server) buildContextPrompt(ctx context.Context, in contextPromptArgs) (contextPromptPayload, error) {
	q, err := in.query("user_prompt", in.UserPrompt)
	if err != nil {
		return contextPromptPayload{}, err
	}
	found := s.mem.Search(ctx, q)
	facts := make([]memoryOut, len(found.Matches))
	for i, m := range found.Matches {
		facts[i] = memoryOf(m.Memory)
	}
	maxChars := 0
	if in.MaxChars != nil {
		maxChars = *in.MaxChars
	}
	return newContextPrompt(in.UserPrompt, facts, maxChars, found.Warning), nil
}

// contextPrompt lays out facts and the user's prompt as OwnSona does, adding facts in order of
// relevance while the whole prompt stays within maxChars (0: no budget).
func contextPrompt(userPrompt string, facts []memoryOut, maxChars int) (prompt string, used []uint64, omitted int) {
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
