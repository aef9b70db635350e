package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/mcp"
)

// The resources: the recent memories, the tags, the statistics, and one memory by id.

var resources = []mcp.Resource{
	{URI: "ownsona://memories/recent", Name: "recent-memories", Title: "Recent memories", Description: "The 20 newest active memories", MIMEType: "application/json"},
	{URI: "ownsona://tags", Name: "tags", Title: "Tags", Description: "Every tag with its number of active memories", MIMEType: "application/json"},
	{URI: "ownsona://stats", Name: "stats", Title: "Statistics", Description: "memory_stats of the store", MIMEType: "application/json"},
	appResource,
}

var resourceTemplates = []mcp.ResourceTemplate{
	{URITemplate: "ownsona://memories/{id}", Name: "memory", Title: "A memory", Description: "One memory by id, tombstone included", MIMEType: "application/json"},
	// Offered while the sophon mode is on (visible).
	{URITemplate: sophonTemplate, Name: "sophon-memory", Title: "A memory (Sophon)", Description: "A memory entry: its text", MIMEType: "text/plain"},
}

// listResources lists the resources the allowlist and the compatibility modes let through.
func (s *Server) listResources(ctx context.Context) ([]mcp.Resource, error) {
	out := []mcp.Resource{}
	for _, r := range slices.Concat(resources, []mcp.Resource{sophonResource}) {
		if s.allowed(r.URI) && s.Compat().shows(r.URI) {
			out = append(out, r)
		}
	}
	return out, nil
}

// recentPayload is the resource of the newest memories.
type recentPayload struct {
	Memories []memoryOut `json:"memories"`
	cutNote
}

func (p recentPayload) listLen() int { return len(p.Memories) }

func (p recentPayload) trimmed(n, textMax int) any {
	var cut []uint64
	q := recentPayload{}
	q.Memories, cut = firstMemories(p.Memories, n, textMax)
	q.cutNote = newCut(len(p.Memories), n, "%d more memories", "list_memories pages through them all", cut, textMax)
	return q
}

// resourceTags is the resource of the tags: list_tags's payload without "ok".
type resourceTags struct {
	Tags []tagCount `json:"tags"`
	cutNote
}

func (p resourceTags) listLen() int { return len(p.Tags) }

func (p resourceTags) trimmed(n, _ int) any {
	q := tagsPayload{Tags: p.Tags}.trimmed(n, 0).(tagsPayload)
	return resourceTags{Tags: q.Tags, cutNote: q.cutNote}
}

// resourceMemory is a memory as its resource shows it.
type resourceMemory struct {
	*memoryOut
	cutNote
}

func (p resourceMemory) listLen() int { return 1 }

func (p resourceMemory) trimmed(n, textMax int) any {
	if n == 0 {
		return resourceMemory{cutNote: memoryPayload{}.trimmed(0, -1).(memoryPayload).cutNote}
	}
	mems, cut := firstMemories([]memoryOut{*p.memoryOut}, 1, textMax)
	return resourceMemory{memoryOut: &mems[0], cutNote: newCut(1, 1, "", "", cut, textMax)}
}

// jsonText is a resource's contents: v as indented JSON, cut to the answer budget when it is
// trimmable.
func (s *Server) jsonText(uri string, v any) ([]mcp.ResourceContents, error) {
	if t, ok := v.(trimmable); ok {
		v = fit(t, s.maxResult, indentedSize)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

func (s *Server) readResource(ctx context.Context, uri string) ([]mcp.ResourceContents, error) {
	key := uri
	switch {
	case strings.HasPrefix(uri, "ownsona://memories/") && uri != "ownsona://memories/recent":
		key = "ownsona://memories/{id}"
	case strings.HasPrefix(uri, sophonListing) && uri != sophonListing:
		key = sophonTemplate
	}
	if !s.Compat().shows(key) {
		return nil, fmt.Errorf("%s: %w", uri, mcp.ErrResourceNotFound) // its mode is off
	}
	if tool, ok := readsWith[key]; ok && !s.allowed(key) {
		if key == appURI {
			tool = "recall, search_memory or list_memories"
		}
		return nil, notAllowed(uri, tool)
	}
	switch uri {
	case appURI:
		return readApp(), nil
	case "ownsona://memories/recent":
		mems, _ := s.mem.List(memory.Filter{}, memory.Page{Limit: 20})
		return s.jsonText(uri, recentPayload{Memories: memoriesOf(mems)})
	case "ownsona://tags":
		return s.jsonText(uri, resourceTags{Tags: tagCountsOf(s.mem.Tags(memory.Filter{}, 0))})
	case "ownsona://stats":
		return s.jsonText(uri, s.stats())
	}
	if key == sophonListing || key == sophonTemplate {
		return s.readSophon(uri)
	}
	if rest, ok := strings.CutPrefix(uri, "ownsona://memories/"); ok {
		id, err := strconv.ParseUint(rest, 10, 64)
		if err == nil && strconv.FormatUint(id, 10) == rest {
			if m, err := s.mem.Get(id); err == nil {
				out := memoryOf(m)
				return s.jsonText(uri, resourceMemory{memoryOut: &out})
			}
		}
	}
	return nil, fmt.Errorf("%s: %w", uri, mcp.ErrResourceNotFound)
}
