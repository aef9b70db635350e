package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/mcp"
)

// list_memories, get_memory, text_search and export_memories: memories as they are.

// filterArgs select memories for lists and counts.
type filterArgs struct {
	IncludeDeleted    bool    `json:"include_deleted" desc:"also soft-deleted, expired and superseded memories"`
	IncludeSuperseded bool    `json:"include_superseded" desc:"also memories that a newer memory supersedes (corrected facts)"`
	UntaggedOnly      bool    `json:"untagged_only" desc:"only memories without tags"`
	MinChars          int     `json:"min_chars" desc:"minimum text length" schema:"min=0,max=1000000"`
	MaxChars          int     `json:"max_chars" desc:"maximum text length" schema:"min=1,max=1000000"`
	NotConfirmedSince *string `json:"not_confirmed_since" desc:"only memories last confirmed before this time" schema:"time"`
	Tags              tagsArg `json:"tags"`
}

func (in *filterArgs) filter() (memory.Filter, error) {
	f := memory.Filter{IncludeDeleted: in.IncludeDeleted, IncludeSuperseded: in.IncludeSuperseded, UntaggedOnly: in.UntaggedOnly, MinChars: in.MinChars, MaxChars: in.MaxChars}
	var err error
	if f.Tags, err = memtext.ParseTags([]byte(in.Tags)); err != nil {
		return f, err
	}
	if in.MaxChars > 0 && in.MinChars > in.MaxChars {
		return f, mcp.InvalidArgument("max_chars", "is less than min_chars")
	}
	if f.NotConfirmedSince, err = parseTime("not_confirmed_since", in.NotConfirmedSince); err != nil {
		return f, err
	}
	if f.UntaggedOnly && len(f.Tags) > 0 {
		return f, mcp.InvalidArgument("untagged_only", "cannot be combined with tags")
	}
	return f, nil
}

type listArgs struct {
	filterArgs
	Limit  *int   `json:"limit" desc:"page size (default 20)" schema:"min=1,max=50"`
	Offset int    `json:"offset" desc:"skip this many matches" schema:"min=0,max=1000000"`
	Cursor string `json:"cursor" desc:"next_cursor of the previous page" schema:"min=1,max=40"`
}

type idArgs struct {
	ID uint64 `json:"id" schema:"required,id"`
}

type textSearchArgs struct {
	Text              string `json:"text" desc:"the text to look for" schema:"required,min=1,max=1000"`
	Limit             *int   `json:"limit" desc:"how many at most (default 20)" schema:"min=1,max=50"`
	IncludeSuperseded bool   `json:"include_superseded" desc:"also memories that a newer memory supersedes (corrected facts)"`
}

type exportArgs struct {
	IncludeDeleted *bool  `json:"include_deleted" desc:"include forgotten and expired memories (default true)"`
	Cursor         string `json:"cursor" desc:"next_cursor of the previous answer, when it was cut to fit the answer budget" schema:"min=1,max=40"`
}

type listPayload struct {
	OK         bool        `json:"ok"`
	Memories   []memoryOut `json:"memories"`
	NextCursor string      `json:"next_cursor"`
	cutNote
	from string // the cursor of the request, where an empty answer would have to continue
}

func (p listPayload) listLen() int { return len(p.Memories) }

// trimmed: the page's next_cursor continues right after the last memory kept.
func (p listPayload) trimmed(n, textMax int) any {
	q := p
	var cut []uint64
	q.Memories, cut = firstMemories(p.Memories, n, textMax)
	switch {
	case n == 0:
		q.NextCursor = p.from
	case n < len(p.Memories):
		q.NextCursor = encodeCursor(q.Memories[n-1].ID)
	}
	q.cutNote = newCut(len(p.Memories), n, "%d more memories of this page",
		fmt.Sprintf("call list_memories again with the same filters and cursor %q (no offset) for the rest", q.NextCursor), cut, textMax)
	return q
}

// memoriesPayload is text_search's.
type memoriesPayload struct {
	OK       bool        `json:"ok"`
	Memories []memoryOut `json:"memories"`
	cutNote
}

func (p memoriesPayload) listLen() int { return len(p.Memories) }

func (p memoriesPayload) trimmed(n, textMax int) any {
	q := p
	var cut []uint64
	q.Memories, cut = firstMemories(p.Memories, n, textMax)
	q.cutNote = newCut(len(p.Memories), n, "%d more matches", "ask with a lower limit or a longer text, or page through them with list_memories", cut, textMax)
	return q
}

// memoryPayload is get_memory's.
type memoryPayload struct {
	OK     bool       `json:"ok"`
	Memory *memoryOut `json:"memory"`
	cutNote
}

func (p memoryPayload) listLen() int { return 1 }

func (p memoryPayload) trimmed(n, textMax int) any {
	q := p
	if n == 0 {
		q.Memory = nil
		q.cutNote = cutNote{Truncated: true, Omitted: 1, Note: "The memory is longer than the answer budget allows; the owner sees it in ownsona's console or with `ownsona export`."}
		return q
	}
	mems, cut := firstMemories([]memoryOut{*p.Memory}, 1, textMax)
	q.Memory = &mems[0]
	q.cutNote = newCut(1, 1, "", "", cut, textMax)
	return q
}

// exportPayload is export_memories's: count is how many memories this answer holds.
type exportPayload struct {
	OK         bool        `json:"ok"`
	Count      int         `json:"count"`
	Memories   []memoryOut `json:"memories"`
	NextCursor string      `json:"next_cursor,omitempty"`
	cutNote
	from string // the cursor of the request
}

func (p exportPayload) listLen() int { return len(p.Memories) }

// trimmed: next_cursor continues right after the last memory kept.
func (p exportPayload) trimmed(n, textMax int) any {
	q := p
	var cut []uint64
	q.Memories, cut = firstMemories(p.Memories, n, textMax)
	q.Count = n
	switch {
	case n == 0:
		q.NextCursor = p.from
	case n < len(p.Memories):
		q.NextCursor = encodeExportCursor(q.Memories[n-1].ID)
	}
	q.cutNote = newCut(len(p.Memories), n, "%d more memories",
		fmt.Sprintf("call export_memories again with the same include_deleted and cursor %q for the rest, or run `ownsona export` on the server", q.NextCursor), cut, textMax)
	return q
}

func (s *Server) readTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[listArgs, listPayload]{
			name: "list_memories", title: "List memories",
			desc: "List memories newest first, with filters; page with next_cursor (or offset). Superseded (corrected) memories are left out unless include_superseded." + asData,
			ann:  readOnly(), run: s.listMemories,
			meta: appMeta(),
		}),
		newTool(s, def[idArgs, memoryPayload]{
			name: "get_memory", title: "Get a memory",
			desc: "Fetch one memory by id, including forgotten (soft-deleted) ones with their tombstone and superseded ones: superseded_by names the memory that corrects it, supersedes those it corrects." + asData,
			ann:  readOnly(), run: s.getMemory,
		}),
		newTool(s, def[textSearchArgs, memoriesPayload]{
			name: "text_search", title: "Find memories containing text",
			desc: "Find active memories whose text contains the given text (case-insensitive), newest first; superseded ones only with include_superseded. Use recall to search by meaning." + asData,
			ann:  readOnly(), run: s.textSearch,
		}),
		newTool(s, def[exportArgs, exportPayload]{
			name: "export_memories", title: "Export memories",
			desc: "Return every memory, oldest first, with all fields (forgotten ones too unless include_deleted is false); at most 1000, beyond which use `ownsona export` on the server. An answer too long for one reply is cut at a whole memory: call again with its next_cursor for the rest." + asData,
			ann:  readOnly(), run: s.exportMemories,
		}),
	}
}

func encodeCursor(id uint64) string { return fmt.Sprintf("m%d", id) }

func decodeCursor(s string) (uint64, error) {
	var id uint64
	if _, err := fmt.Sscanf(s, "m%d", &id); err != nil || id == 0 || encodeCursor(id) != s {
		return 0, mcp.InvalidArgument("cursor", "is not a cursor this server returned")
	}
	return id, nil
}

// An export's cursor names the last memory returned, after which the next answer starts
// (oldest first, where a list's cursor counts down).
func encodeExportCursor(id uint64) string { return fmt.Sprintf("x%d", id) }

func decodeExportCursor(s string) (uint64, error) {
	var id uint64
	if _, err := fmt.Sscanf(s, "x%d", &id); err != nil || id == 0 || encodeExportCursor(id) != s {
		return 0, mcp.InvalidArgument("cursor", "is not a cursor export_memories returned")
	}
	return id, nil
}

func (s *Server) listMemories(ctx context.Context, in listArgs) (listPayload, error) {
	f, err := in.filter()
	if err != nil {
		return listPayload{}, err
	}
	page := memory.Page{Offset: in.Offset, Limit: defaultList}
	if in.Limit != nil {
		page.Limit = *in.Limit
	}
	if in.Cursor != "" {
		if page.Before, err = decodeCursor(in.Cursor); err != nil {
			return listPayload{}, err
		}
	}
	mems, more := s.mem.List(f, page)
	p := listPayload{OK: true, Memories: memoriesOf(mems), from: in.Cursor}
	if more && len(mems) > 0 {
		p.NextCursor = encodeCursor(mems[len(mems)-1].ID)
	}
	return p, nil
}

func (s *Server) getMemory(ctx context.Context, in idArgs) (memoryPayload, error) {
	m, err := s.mem.Get(in.ID)
	if err != nil {
		return memoryPayload{}, err
	}
	out := memoryOf(m)
	return memoryPayload{OK: true, Memory: &out}, nil
}

func (s *Server) textSearch(ctx context.Context, in textSearchArgs) (memoriesPayload, error) {
	needle := strings.ToLower(strings.TrimSpace(in.Text))
	if needle == "" {
		return memoriesPayload{}, mcp.InvalidArgument("text", "is empty")
	}
	limit := defaultList
	if in.Limit != nil {
		limit = *in.Limit
	}
	mems, _ := s.mem.List(memory.Filter{Contains: needle, IncludeSuperseded: in.IncludeSuperseded}, memory.Page{Limit: limit})
	return memoriesPayload{OK: true, Memories: memoriesOf(mems)}, nil
}

func (s *Server) exportMemories(ctx context.Context, in exportArgs) (exportPayload, error) {
	var after uint64
	if in.Cursor != "" {
		var err error
		if after, err = decodeExportCursor(in.Cursor); err != nil {
			return exportPayload{}, err
		}
	}
	// Superseded memories are history: an export keeps them, with their links.
	f := memory.Filter{IncludeDeleted: in.IncludeDeleted == nil || *in.IncludeDeleted, IncludeSuperseded: true}
	mems := []memoryOut{}
	total := 0
	s.mem.Each(f, func(m *memory.Memory) bool {
		if total == maxExport {
			total++
			return false
		}
		total++
		if m.ID > after {
			mems = append(mems, memoryOf(m))
		}
		return true
	})
	if total > maxExport {
		return exportPayload{}, &toolError{Code: codeLimitExceeded, Message: fmt.Sprintf("more than %d memories; run `ownsona export` on the server for all of them", maxExport)}
	}
	return exportPayload{OK: true, Count: len(mems), Memories: mems, from: in.Cursor}, nil
}

// nonNil makes an absent list an empty one, so payloads show [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
