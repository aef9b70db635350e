package ops

// `ownsona audit`: the audit log of MCP requests, newest first.

import (
	"context"
	"fmt"

	"github.com/ownsona/ownsona/app/adminsock"
	"github.com/ownsona/ownsona/app/audit"
)

func auditCmd(ctx context.Context, env *Env, args []string) error {
	fs := newFlags("audit", "audit [--since 24h] [--client NAME] [--method M] [--tool T] [--outcome O] [--limit N] [--json] [--db PATH]",
		"Prints the audit log of MCP requests, newest first: time, client, method, tool, outcome.")
	db := dbFlags(fs, env)
	since := fs.String("since", "24h", "entries from this long ago (24h, 7d) or since this time (RFC 3339 or 2006-01-02)")
	client := fs.String("client", "", "only this client (name or id)")
	method := fs.String("method", "", "only this MCP method, e.g. tools/call")
	tool := fs.String("tool", "", "only calls of this tool")
	outcome := fs.String("outcome", "", "only this outcome: ok, error, tool_error, unauthorized, denied, rate_limited, busy")
	n := fs.Int("limit", 100, "at most this many entries (0: all)")
	asJSON := fs.Bool("json", false, "JSON Lines instead of a table")
	operands, err := parse(env, fs, args)
	if err != nil {
		return err
	}
	if err := noOperands(fs, operands); err != nil {
		return err
	}
	from, err := audit.ParseSince(*since, env.now())
	if err != nil {
		return Usagef("audit: --since: %v", err)
	}
	if *n < 0 {
		return Usagef("audit: --limit: %d is negative", *n)
	}
	if handled, err := env.forward(ctx, *db, adminsock.Call{Args: append([]string{"audit"}, args...)}, nil); handled {
		return err
	}
	kdb, _, done, err := env.openDB(*db, false)
	if err != nil {
		return err
	}
	defer done()
	entries, corrupt, err := audit.Query(kdb, audit.Filter{Since: from, Client: *client, Method: *method, Tool: *tool,
		Outcome: audit.Outcome(*outcome), Limit: *n})
	if err != nil {
		return err
	}
	if *asJSON {
		err = audit.WriteJSONLines(env.Stdout, entries)
	} else {
		for i := range entries {
			entries[i].Time = entries[i].Time.Local()
		}
		err = audit.WriteTable(env.Stdout, entries)
	}
	if err != nil {
		return err
	}
	if corrupt > 0 {
		return fmt.Errorf("audit: skipped %s that could not be read", plural(corrupt, "entry", "entries"))
	}
	return done()
}
