package mcp

import (
	"context"
	"sync"
)

// WarnVersionHeader is the Warning of a 2026-07-28 request whose MCP-Protocol-Version header
// names an older revision (anthropics/claude-code #93290): it is served under its _meta's.
const WarnVersionHeader = "protocol-version-header"

// Warning is a client's mistake that the server tolerated, for Server.OnWarning.
type Warning struct {
	Kind    string          // WarnVersionHeader
	Owner   string          // Server.Owner of the request; "" when it has none
	Client  *Implementation // the client's _meta clientInfo; nil when it sent none
	Message string          // what was tolerated, and how the request was served
}

// maxWarned bounds the (kind, owner) pairs remembered as warned about; past it the set starts
// afresh, and an owner may be warned about again.
const maxWarned = 4096

// warnSet remembers whom OnWarning was told about.
type warnSet struct {
	mu     sync.Mutex
	warned map[string]struct{} // kind + "\x00" + owner
}

// first reports whether key is new, remembering it.
func (ws *warnSet) first(key string) bool {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if _, ok := ws.warned[key]; ok {
		return false
	}
	if ws.warned == nil || len(ws.warned) >= maxWarned {
		ws.warned = map[string]struct{}{}
	}
	ws.warned[key] = struct{}{}
	return true
}

// warnOnce tells OnWarning of a tolerated mistake of the caller of ctx, unless it was told
// of the same kind from the same owner before.
func (s *Server) warnOnce(ctx context.Context, kind string, client *Implementation, msg string) {
	if s.OnWarning == nil {
		return
	}
	owner := ""
	if s.Owner != nil {
		owner = s.Owner(ctx)
	}
	if !s.warnings.first(kind + "\x00" + owner) {
		return
	}
	s.OnWarning(ctx, Warning{Kind: kind, Owner: owner, Client: client, Message: msg})
}
