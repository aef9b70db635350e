// Package app is the ownsona product: its configuration, its lifecycle, the memory service and
// the MCP tools, resources and prompts over it, the HTTP routes, and the command line.
//
// The simplest use is the command line's: Run(ctx, []string{"stdio"}, os.Getenv, os.Stdin,
// os.Stdout, os.Stderr). Tests build a Config by hand and call Open:
//
//	cfg := app.NewConfig()
//	cfg.DB = filepath.Join(t.TempDir(), "ownsona.db")
//	a, err := app.Open(cfg, os.Stderr)
//	defer a.Close()
//
// The bbolt file is the only truth. The service keeps every memory record, the BM25 index and
// the vector matrix in memory as a cache rebuilt at Open; each write commits to the file (one
// Update per logical operation) before the cache changes, so a crash loses no acknowledged
// write and no index ever names a memory the file lacks.
package app
