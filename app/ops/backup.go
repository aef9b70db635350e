package ops

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/certs"
	"github.com/ownsona/ownsona/kv"
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
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
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
	return done()
}

// caCmd is `ownsona ca export`: the local certificate authority's root (--tls local) as PEM,
// for devices to trust. It creates the authority if the file has none yet.
func caCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "export" {
		return usageErr("ca: say export (prints the root certificate of --tls local as PEM)")
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	pem, err := certs.RootPEM(db)
	if err != nil {
		return err
	}
	if _, err := stdout.Write(pem); err != nil {
		return err
	}
	return done()
}

// flagArg reads `--name VALUE` or `--name=VALUE` (the only flag) from args.
func flagArg(cmd, name string, args []string) (string, error) {
	fs := flag.NewFlagSet("ownsona "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	v := fs.String(name, "", "")
	if err := fs.Parse(args); err != nil {
		return "", usageErr("%s: %v", cmd, err)
	}
	if fs.NArg() > 0 {
		return "", usageErr("%s: unexpected argument %q", cmd, fs.Arg(0))
	}
	if *v == "" {
		return "", usageErr("%s: --%s FILE is required", cmd, name)
	}
	return *v, nil
}

// absFrom resolves a path given on the command line: relative to the command's directory
// (which is not the server's when the command came through the admin socket).
func absFrom(cfg Config, p string) string {
	if filepath.IsAbs(p) || cfg.cwd == "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return p
		}
		return abs
	}
	return filepath.Join(cfg.cwd, p)
}

// backupCmd is `ownsona backup --to FILE`: a consistent, verified snapshot of the file, also
// while the server runs (through its admin socket).
func backupCmd(cfg Config, args []string, stdout io.Writer) error {
	to, err := flagArg("backup", "to", args)
	if err != nil {
		return err
	}
	to = absFrom(cfg, to)
	if same, _ := samePath(to, cfg.DB); same {
		return usageErr("backup: --to %s is the database itself", to)
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	n, err := db.BackupFile(to)
	if err != nil {
		return err
	}
	if err := checkDB(to); err != nil {
		return fmt.Errorf("backup: %s was written but does not check: %w", to, err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes, checked)\n", cfg.DB, to, n)
	return done()
}

func samePath(a, b string) (bool, error) {
	fa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(fa, fb), nil
}

// checkCmd is `ownsona check [FILE]`: bbolt's page check and ownsona's own (every vector has its
// memory, every record decodes, the schema version is known, OAuth records are consistent).
// Without FILE it checks the database, through the server when it runs.
func checkCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) > 1 {
		return usageErr("check: takes at most one FILE")
	}
	if len(args) == 1 {
		p := absFrom(cfg, args[0])
		if err := checkDB(p); err != nil {
			return fmt.Errorf("check %s: %w", p, err)
		}
		fmt.Fprintf(stdout, "%s: ok\n", p)
		return nil
	}
	db, done, err := openAdmin(cfg)
	if err != nil {
		return err
	}
	defer done()
	if err := db.Check(); err != nil {
		return fmt.Errorf("check %s: %w", cfg.DB, err)
	}
	report, err := checkContents(db)
	if err != nil {
		return fmt.Errorf("check %s: %w", cfg.DB, err)
	}
	fmt.Fprintf(stdout, "%s: ok (%s)\n", cfg.DB, report)
	return done()
}

// checkDB checks a file that no process has open: pages, then contents, read-only.
func checkDB(path string) error {
	if err := kv.CheckFile(path); err != nil {
		return err
	}
	db, err := kv.Open(path, kv.Options{ReadOnly: true, Migrations: migrations, Timeout: -1})
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = checkContents(db)
	return err
}

// restoreCmd is `ownsona restore --from FILE`: with the server stopped, checks FILE, keeps the
// current file as DB.bak-<time>, and puts a verified copy of FILE in its place.
func restoreCmd(cfg Config, args []string, stdout io.Writer) error {
	from, err := flagArg("restore", "from", args)
	if err != nil {
		return err
	}
	from = absFrom(cfg, from)
	if err := checkDB(from); err != nil {
		return fmt.Errorf("restore: %s does not check, nothing changed: %w", from, err)
	}
	// Hold the current file's lock while swapping, so that no server starts meanwhile.
	var bak string
	if _, err := os.Stat(cfg.DB); err == nil {
		_, done, err := openAdmin(cfg)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		defer done()
		bak = fmt.Sprintf("%s.bak-%s", cfg.DB, time.Now().UTC().Format("20060102T150405Z"))
		if err := kv.CopyFile(cfg.DB, bak); err != nil {
			return fmt.Errorf("restore: keeping the current file: %w", err)
		}
	}
	if err := kv.CopyFile(from, cfg.DB); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if bak != "" {
		fmt.Fprintf(stdout, "restored %s from %s; the previous file is %s\n", cfg.DB, from, bak)
	} else {
		fmt.Fprintf(stdout, "restored %s from %s\n", cfg.DB, from)
	}
	return nil
}

// compactCmd is `ownsona compact`: with the server stopped, rewrites the file without free
// pages and swaps it in; a crash at any moment leaves the old or the new file whole.
func compactCmd(cfg Config, args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usageErr("compact: takes no arguments")
	}
	if c, err := net.DialTimeout("unix", socketPath(cfg.DB), time.Second); err == nil {
		c.Close()
		return usageErr("compact: a server runs on %s; stop it first", cfg.DB)
	}
	// Take and release the lock to learn that no process holds the file.
	_, done, err := openAdmin(cfg)
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if err := done(); err != nil {
		return err
	}
	// Temporary files of compactions that were killed are garbage: no process holds the file.
	if old, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg.DB), "."+filepath.Base(cfg.DB)+".tmp-*")); len(old) > 0 {
		for _, f := range old {
			os.Remove(f)
		}
	}
	before, after, err := kv.Compact(cfg.DB, cfg.DB)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "compacted %s: %d → %d bytes\n", cfg.DB, before, after)
	return nil
}
