package app

import (
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/certs"
)

// auditCmd is `ownsona audit [--since 24h] [--client NAME] [--method M] [--tool T]
// [--outcome O] [--limit N] [--json]`: the audit log, newest first.
func auditCmd(cfg Config, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("ownsona audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	since := fs.String("since", "24h", "entries from this long ago (24h, 7d) or since this time (RFC 3339 or 2006-01-02)")
	client := fs.String("client", "", "only this client (name or id)")
	method := fs.String("method", "", "only this MCP method, e.g. tools/call")
	tool := fs.String("tool", "", "only calls of this tool")
	outcome := fs.String("outcome", "", "only this outcome: ok, error, tool_error, unauthorized, denied, rate_limited, busy")
	n := fs.Int("limit", 100, "at most this many entries (0: all)")
	asJSON := fs.Bool("json", false, "JSON Lines instead of a table")
	if err := fs.Parse(args); err != nil {
		return usageErr("audit: %v", err)
	}
	if fs.NArg() > 0 {
		return usageErr("audit: unexpected argument %q", fs.Arg(0))
	}
	now := time.Now()
	if cfg.Now != nil {
		now = cfg.Now()
	}
	from, err := audit.ParseSince(*since, now)
	if err != nil {
		return usageErr("audit: --since: %v", err)
	}
	if *n < 0 {
		return usageErr("audit: --limit: %d is negative", *n)
	}
	db, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	entries, corrupt, err := audit.Query(db, audit.Filter{Since: from, Client: *client, Method: *method, Tool: *tool,
		Outcome: audit.Outcome(*outcome), Limit: *n})
	if err != nil {
		return err
	}
	if *asJSON {
		err = audit.WriteJSONLines(stdout, entries)
	} else {
		for i := range entries {
			entries[i].Time = entries[i].Time.Local()
		}
		err = audit.WriteTable(stdout, entries)
	}
	if err != nil {
		return err
	}
	if corrupt > 0 {
		return fmt.Errorf("audit: %d entries could not be read and were skipped", corrupt)
	}
	return db.Close()
}

// caCmd is `ownsona ca export`: the local certificate authority's root (--tls local) as PEM,
// for devices to trust. It creates the authority if the file has none yet.
func caCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "export" {
		return usageErr("ca: say export (prints the root certificate of --tls local as PEM)")
	}
	db, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	pem, err := certs.RootPEM(db)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(pem); err != nil {
		return err
	}
	return db.Close()
}
