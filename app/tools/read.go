package tools

import (
	"context"
	"fmt"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/memtext"
	"github.com/ownsona/ownsona/rpc"
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
		return f, rpc.InvalidArgument("max_chars", "is less than min_chars")
	}
	if f.NotConfirmedSince, err = parseTime("not_confirmed_since", in.NotConfirmedSince); err != nil {
		return f, err
	}
	if f.UntaggedOnly && len(f.Tags) > 0 {
		return f, rpc.InvalidArgument("untagged_only", "cannot be combined with tags")
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
	IncludeDeleted *bool `json:"include_deleted" desc:"include forgotten and expired memories (default true)"`
}

type listPayload struct {
	OK         bool             `json:"ok"`
	Memories   []*memory.Memory `json:"memories"`
	NextCursor string           `json:"next_cursor"`
}

type memoriesPayload struct {
	OK       bool             `json:"ok"`
	Memories []*memory.Memory `json:"memories"`
}

func (s *Server) readTools() []*rpc.Tool {
	memories := arrayOf(memorySchema)
	return []*rpc.Tool{
		newTool(s, def[listArgs]{
			name: "list_memories", title: "List memories",
			desc: "List memories newest first, with filters; page with next_cursor (or offset). Superseded (corrected) memories are left out unless include_superseded." + asData,
			ann:  readOnly(), out: schema{"memories": memories, "next_cursor": typeString}, run: s.listMemories,
			meta: appMeta(),
		}),
		newTool(s, def[idArgs]{
			name: "get_memory", title: "Get a memory",
			desc: "Fetch one memory by id, including forgotten (soft-deleted) ones with their tombstone and superseded ones: superseded_by names the memory that corrects it, supersedes those it corrects." + asData,
			ann:  readOnly(), out: schema{"memory": memorySchema}, run: s.getMemory,
		}),
		newTool(s, def[textSearchArgs]{
			name: "text_search", title: "Find memories containing text",
			desc: "Find active memories whose text contains the given text (case-insensitive), newest first; superseded ones only with include_superseded. Use recall to search by meaning." + asData,
			ann:  readOnly(), out: schema{"memories": memories}, run: s.textSearch,
		}),
		newTool(s, def[exportArgs]{
			name: "export_memories", title: "Export memories",
			desc: "Return every memory, oldest first, with all fields (forgotten ones too unless include_deleted is false); at most 1000, beyond which use `ownsona export` on the server." + asData,
			ann:  readOnly(), out: schema{"count": typeInteger, "memories": memories}, run: s.exportMemories,
		}),
	}
}

func encodeCursor(id uint64) string { return fmt.Sprintf("m%d", id) }

func decodeCursor(s string) (uint64, error) {
	var id uint64
	if _, err := fmt.Sscanf(s, "m%d", &id); err != nil || id == 0 || encodeCursor(id) != s {
		return 0, rpc.InvalidArgument("cursor", "is not a cursor this server returned")
	}
	return id, nil
}

func (s *Server) listMemories(ctx context.Context, in listArgs) (any, error) {
	f, err := in.filter()
	if err != nil {
		return nil, err
	}
	page := memory.Page{Offset: in.Offset, Limit: defaultList}
	if in.Limit != nil {
		page.Limit = *in.Limit
	}
	if in.Cursor != "" {
		if page.Before, err = decodeCursor(in.Cursor); err != nil {
			return nil, err
		}
	}
	mems, more := s.mem.List(f, page)
	p := listPayload{OK: true, Memories: nonNil(mems)}
	if more && len(mems) > 0 {
		p.NextCursor = encodeCursor(mems[len(mems)-1].ID)
	}
	return p, nil
}

func (s *Server) getMemory(ctx context.Context, in idArgs) (any, error) {
	m, err := s.mem.Get(in.ID)
	if err != nil {
		return nil, err
	}
	return struct {
		OK     bool           `json:"ok"`
		Memory *memory.Memory `json:"memory"`
	}{true, m}, nil
}

func (s *Server) textSearch(ctx context.Context, in textSearchArgs) (any, error) {
	needle := strings.ToLower(strings.TrimSpace(in.Text))
	if needle == "" {
		return nil, rpc.InvalidArgument("text", "is empty")
	}
	limit := defaultList
	if in.Limit != nil {
		limit = *in.Limit
	}
	mems, _ := s.mem.List(memory.Filter{Contains: needle, IncludeSuperseded: in.IncludeSuperseded}, memory.Page{Limit: limit})
	return memoriesPayload{true, nonNil(mems)}, nil
}

func (s *Server) exportMemories(ctx context.Context, in exportArgs) (any, error) {
	// Superseded memories are history: an export keeps them, with their links.
	f := memory.Filter{IncludeDeleted: in.IncludeDeleted == nil || *in.IncludeDeleted, IncludeSuperseded: true}
	var mems []*memory.Memory
	tooMany := false
	s.mem.Each(f, func(m *memory.Memory) bool {
		if len(mems) == maxExport {
			tooMany = true
			return false
		}
		mems = append(mems, m.Clone())
		return true
	})
	if tooMany {
		return nil, &toolError{Code: codeLimitExceeded, Message: fmt.Sprintf("more than %d memories; run `ownsona export` on the server for all of them", maxExport)}
	}
	return struct {
		OK       bool             `json:"ok"`
		Count    int              `json:"count"`
		Memories []*memory.Memory `json:"memories"`
	}{true, len(mems), nonNil(mems)}, nil
}

// nonNil makes an absent list an empty one, so payloads show [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
