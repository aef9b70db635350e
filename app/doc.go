// Package app is how ownsona starts and stops: its Config (flags over OWNSONA_* environment
// variables over defaults), Open and Close of the pieces in order, and the command table that
// Run, `ownsona help` and the admin socket read. The pieces are packages of their own:
// app/memory (the domain), app/tools (what the model sees), app/web (what the network sees),
// app/ops (what the operator types), and the leaves app/certs, app/audit, app/limit,
// app/doctor, app/memtext, app/settings (the run-time settings kept in the file) and
// app/approval (the approval gate's policy and queue). None of them imports app.
//
// The simplest use is the command line's: Run(ctx, []string{"stdio"}, app.Getenv, os.Stdin,
// os.Stdout, os.Stderr). Tests build a Config by hand and call Open:
//
//	cfg := app.NewConfig()
//	cfg.DB = filepath.Join(t.TempDir(), "ownsona.db")
//	a, err := app.Open(cfg, os.Stderr)
//	defer a.Close()
//
// Open opens the bbolt file, the run-time settings kept in it (the tool allowlist, the
// approval policy and timeout, the rate limit: Config gives them, and the file's values, which
// the console changes, apply where no flag or variable does), the memory store over it (which
// loads its caches), the approval queue and the MCP surface over the store, the audit log and
// rate limiter, and the HTTP side; Close releases them in reverse order. A settings change
// puts the allowlist and the approval policy in force at once; the rate limit, from the next
// start. The file is the only truth: see app/memory for what the caches are.
//
// The tests of this package are the acceptance gate of the whole: they drive the wired App and
// the built binary with real clients (the MCP Go SDK), golden transcripts and crash tests.
package app
