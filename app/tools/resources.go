package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/rpc"
)

// The resources: the recent memories, the tags, the statistics, and one memory by id.

var resources = []rpc.Resource{
	{URI: "ownsona://memories/recent", Name: "recent-memories", Title: "Recent memories", Description: "The 20 newest active memories", MIMEType: "application/json"},
	{URI: "ownsona://tags", Name: "tags", Title: "Tags", Description: "Every tag with its number of active memories", MIMEType: "application/json"},
	{URI: "ownsona://stats", Name: "stats", Title: "Statistics", Description: "memory_stats of the store", MIMEType: "application/json"},
	appResource,
}

var resourceTemplates = []rpc.ResourceTemplate{
	{URITemplate: "ownsona://memories/{id}", Name: "memory", Title: "A memory", Description: "One memory by id, tombstone included", MIMEType: "application/json"},
}

// listResources lists the resources the allowlist lets through.
func (s *Server) listResources(ctx context.Context) ([]rpc.Resource, error) {
	out := []rpc.Resource{}
	for _, r := range resources {
		if s.allowed(r.URI) {
			out = append(out, r)
		}
	}
	return out, nil
}

func jsonText(uri string, v any) ([]rpc.ResourceContents, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return []rpc.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}, nil
}

func (s *Server) readResource(ctx context.Context, uri string) ([]rpc.ResourceContents, error) {
	key := uri
	if strings.HasPrefix(uri, "ownsona://memories/") && uri != "ownsona://memories/recent" {
		key = "ownsona://memories/{id}"
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
		return jsonText(uri, map[string]any{"memories": nonNil(mems)})
	case "ownsona://tags":
		return jsonText(uri, map[string]any{"tags": s.mem.Tags(memory.Filter{}, 0)})
	case "ownsona://stats":
		return jsonText(uri, s.stats())
	}
	if rest, ok := strings.CutPrefix(uri, "ownsona://memories/"); ok {
		id, err := strconv.ParseUint(rest, 10, 64)
		if err == nil && strconv.FormatUint(id, 10) == rest {
			if m, err := s.mem.Get(id); err == nil {
				return jsonText(uri, m)
			}
		}
	}
	return nil, fmt.Errorf("%s: %w", uri, rpc.ErrResourceNotFound)
}
