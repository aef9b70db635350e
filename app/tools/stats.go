package tools

import (
	"context"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/mcp"
)

// find_near_duplicates, count_memories, memory_stats and list_tags: the store as a whole.

type duplicatesArgs struct {
	Threshold *float64 `json:"threshold" desc:"similarity from 0.5 to 1 (default 0.92)" schema:"min=0.5,max=1"`
	MaxGroups *int     `json:"max_groups" desc:"how many groups at most (default 50)" schema:"min=1,max=500"`
}

type countArgs struct {
	filterArgs
	SourceProvider string `json:"source_provider" desc:"only memories from this provider" schema:"min=1,max=100"`
}

type noArgs struct{}

type tagsArgs struct {
	IncludeDeleted bool `json:"include_deleted" desc:"count soft-deleted and expired memories too"`
	Limit          *int `json:"limit" desc:"how many tags at most (default 100)" schema:"min=1,max=1000"`
}

type duplicateGroupPayload struct {
	IDs           []uint64    `json:"ids" schema:"id"`
	MaxSimilarity float32     `json:"max_similarity"`
	PairCount     int         `json:"pair_count"`
	Memories      []memoryOut `json:"memories"`
}

type duplicatesPayload struct {
	OK        bool                    `json:"ok"`
	Threshold float64                 `json:"threshold"`
	Groups    []duplicateGroupPayload `json:"groups"`
	Summary   struct {
		Groups int `json:"groups"`
		Pairs  int `json:"pairs"`
	} `json:"summary"`
	cutNote
}

func (p duplicatesPayload) listLen() int { return len(p.Groups) }

func (p duplicatesPayload) trimmed(n, textMax int) any {
	q := p
	q.Groups = firstOf(p.Groups, n)
	var cut []uint64
	if textMax >= 0 && n > 0 {
		g := &q.Groups[0]
		mems := make([]memoryOut, len(g.Memories))
		for i, m := range g.Memories {
			var was bool
			if mems[i], was = cutMemory(m, textMax); was {
				cut = append(cut, m.ID)
			}
		}
		g.Memories = mems
	}
	q.cutNote = newCut(len(p.Groups), n, "%d more groups (summary counts every group)",
		"merge these first and call again, or call with a higher threshold", cut, textMax)
	return q
}

// tagsPayload is list_tags's.
type tagsPayload struct {
	OK   bool       `json:"ok"`
	Tags []tagCount `json:"tags"`
	cutNote
}

func (p tagsPayload) listLen() int { return len(p.Tags) }

func (p tagsPayload) trimmed(n, _ int) any {
	q := p
	q.Tags = firstOf(p.Tags, n)
	q.cutNote = newCut(len(p.Tags), n, "The %d least used tags", "the most used are kept", nil, 0)
	return q
}

// countPayload is count_memories's.
type countPayload struct {
	OK    bool `json:"ok"`
	Count int  `json:"count"`
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
	Superseded      int             `json:"superseded"`
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

func (s *Server) reviewTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[duplicatesArgs, duplicatesPayload]{
			name: "find_near_duplicates", title: "Find near-duplicate memories",
			desc: "Group active memories that say nearly the same thing (similarity at or above threshold), most similar first, so they can be merged with update_memory and forget." + asData,
			ann:  readOnly(),
			run:  s.findNearDuplicates,
		}),
	}
}

func (s *Server) statsTools() []*mcp.Tool {
	return []*mcp.Tool{
		newTool(s, def[countArgs, countPayload]{
			name: "count_memories", title: "Count memories",
			desc: "Count memories matching filters (active ones unless include_deleted).",
			ann:  readOnly(), run: s.countMemories,
		}),
		newTool(s, def[noArgs, statsPayload]{
			name: "memory_stats", title: "Memory statistics",
			desc: "Totals (active, soft-deleted, expired), average importance, oldest and newest, top tags, counts by provider, and the embedder with its re-embedding progress.",
			ann:  readOnly(),
			run:  func(context.Context, noArgs) (statsPayload, error) { return s.stats(), nil },
		}),
		newTool(s, def[tagsArgs, tagsPayload]{
			name: "list_tags", title: "List tags",
			desc: "List tags with how many memories carry each, most used first.",
			ann:  readOnly(), run: s.listTags,
		}),
	}
}

func (s *Server) findNearDuplicates(ctx context.Context, in duplicatesArgs) (duplicatesPayload, error) {
	threshold, maxGroups := 0.92, defaultDupGroup
	if in.Threshold != nil {
		threshold = *in.Threshold
	}
	if in.MaxGroups != nil {
		maxGroups = *in.MaxGroups
	}
	p := duplicatesPayload{OK: true, Threshold: threshold, Groups: []duplicateGroupPayload{}}
	for _, g := range s.mem.NearDuplicates(float32(threshold)) {
		p.Summary.Groups++
		p.Summary.Pairs += g.PairCount
		if len(p.Groups) == maxGroups {
			continue
		}
		gp := duplicateGroupPayload{IDs: g.IDs, MaxSimilarity: g.MaxSimilarity, PairCount: g.PairCount, Memories: make([]memoryOut, 0, len(g.IDs))}
		for _, id := range g.IDs {
			if m, err := s.mem.Get(id); err == nil {
				gp.Memories = append(gp.Memories, memoryOf(m))
			}
		}
		p.Groups = append(p.Groups, gp)
	}
	return p, nil
}

func (s *Server) countMemories(ctx context.Context, in countArgs) (countPayload, error) {
	f, err := in.filter()
	if err != nil {
		return countPayload{}, err
	}
	f.SourceProvider = in.SourceProvider
	return countPayload{OK: true, Count: s.mem.Count(f)}, nil
}

func (s *Server) listTags(ctx context.Context, in tagsArgs) (tagsPayload, error) {
	limit := 100
	if in.Limit != nil {
		limit = *in.Limit
	}
	return tagsPayload{OK: true, Tags: tagCountsOf(s.mem.Tags(memory.Filter{IncludeDeleted: in.IncludeDeleted}, limit))}, nil
}

// stats is memory_stats's payload, also the ownsona://stats resource.
func (s *Server) stats() statsPayload {
	st := s.mem.Stats()
	p := statsPayload{OK: true, Total: st.Total, Active: st.Active, SoftDeleted: st.SoftDeleted, Superseded: st.Superseded, Expired: st.Expired,
		OldestCreatedAt: st.Oldest, NewestCreatedAt: st.Newest}
	if st.Active > 0 {
		p.AvgImportance = float64(int(st.ImportanceSum/float64(st.Active)*1000+0.5)) / 1000
	}
	p.TopTags = memory.TopCounts(st.Tags, 10, func(k string, n int) tagCount { return tagCount{Tag: k, Count: n} })
	p.ByProvider = memory.TopCounts(st.Providers, 0, func(k string, n int) providerCount { return providerCount{k, n} })
	es := s.mem.EmbedderStatus()
	p.Embedder.Name, p.Embedder.Model, p.Embedder.Dimensions, p.Embedder.LastError = es.Info.Name, es.Info.Model, es.Info.Dim, es.LastError
	if es.Configured {
		p.Embedder.ReembedProgress.Pending, p.Embedder.ReembedProgress.Total = es.Pending, es.Total
		p.Embedder.ReembedProgress.Done = es.Total - es.Pending
	}
	return p
}
