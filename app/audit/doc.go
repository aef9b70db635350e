// Package audit is the audit log of MCP requests, kept in the one database file: who called
// which method or tool, from where, how it ended and how long it took — never what was said.
//
// The simplest use:
//
//	log, err := audit.Open(db, audit.Config{}) // 90 days, 100,000 entries
//	defer log.Close()                          // before db.Close: writes what is pending
//	// per request, after answering:
//	log.Record(audit.Entry{Client: p.Name, ClientID: p.ClientID, RemoteIP: ip,
//		Transport: audit.TransportHTTP, Method: "tools/call", Tool: "recall",
//		Outcome: audit.OutcomeOK, Status: 200, Duration: time.Since(start),
//		RequestBytes: n, ResponseBytes: m})
//
// and for `ownsona audit [--since 24h] [--client NAME] [--json]`, on a DB opened read-only:
//
//	since, err := audit.ParseSince(flagSince, time.Now()) // "24h", "7d", RFC 3339, a date
//	entries, corrupt, err := audit.Query(db, audit.Filter{Since: since, Client: flagClient})
//	err = audit.WriteTable(os.Stdout, entries) // or WriteJSONLines
//
// # What an entry holds
//
// Entry has no field for arguments, memory text, tokens or results, and its strings are
// bounded when stored: Method, Tool, Transport and Outcome keep only [A-Za-z0-9_./:-] (any
// other character becomes '?') and 64 or 32 characters; Client (128 characters) and ClientID
// (256) keep printable characters only. Longer values are cut and end in "…". So a hostile
// client can neither smuggle text into the log nor, through a registered client name, send
// escape sequences to the terminal of whoever reads it. Times are stored in UTC.
//
// # Calls that did not run as asked
//
// An answer can look like any other while the call did not run as asked: a 200 whose stream
// ended because the client went, an isError result because nobody approved. The outcome then
// says so, in mcp.CallInfo.Outcome's words, which the HTTP side (through mcp.CallTrace) and
// the stdio side (mcp.Server.OnCall) copy: OutcomeRejected, OutcomeTimedOut and
// OutcomeWithdrawn (the approval gate: nothing changed), OutcomeCancelled (notifications/
// cancelled), OutcomeAbandoned (the client went before the answer) and OutcomeInputRequired (a
// 2026-07-28 round that asked the client; its retry is an entry of its own).
//
// # Recording never slows a request
//
// Record puts the entry in a bounded buffer (Config.BufferSize, 4096) and returns; it never
// waits for the disk. One goroutine writes: every Config.BatchSize (256) entries or every
// Config.FlushInterval (1 s), whichever comes first, in one Update (one fsync). When the
// buffer is full, because the disk is slow or a flood outpaces it, entries are dropped and
// counted (Stats.Dropped) rather than making requests wait. Flush commits what was recorded
// before it; Close commits what is pending and stops the writer. A failed write loses its
// batch, counted in Stats.Failed and passed to Config.OnError.
//
// # The bucket
//
// Bucket ("mcp_audit") maps a 16-byte key — the entry's time in Unix nanoseconds, then the
// bucket's NextSequence, both big-endian — to the encoded entry. Keys sort by time, so a query
// by time is a cursor seek, and the oldest entry is always the first key. The value is a
// version byte (1) and a compact binary layout (see encodeEntry); a value that does not
// decode is skipped by Query and counted, never a panic.
//
// # Refusals
//
// Requests refused before they were served — no valid token (401), rate limited (429), the
// server busy (503): Entry.Refusal — are what an anonymous flood produces. Record counts each
// into an aggregate of its address (IPv6 by /64), client, method, outcome and minute, kept in
// memory (at most 10,000 groups; more are dropped and counted) and written once its minute is
// over (or at Flush and Close) as one entry whose Count says how many requests it stands for,
// to RefusedBucket, which has its own bound (Config.MaxRefused, 20,000). So a flood costs the
// file one entry per address and minute, and however long it lasts it never pushes the
// record of real use out of Bucket. Query merges both buckets in time order.
//
// # Bounds
//
// The file keeps at most Config.MaxEntries entries (100,000) and none older than
// Config.MaxAge (90 days). The writer prunes in the same Update as each batch, deleting from
// the first key while entries are too many or too old, at most max(1024, 2×batch) a time: the
// work is proportional to what was added, never a scan. When idle, the writer checks in memory
// each interval whether pruning is due (it keeps the count and the oldest time) and only then
// touches the file. Open reads the count once.
//
// # Queries
//
// Query and Log.Query return the entries matching a Filter (time range, client name or id,
// method, tool, outcome), newest first unless Filter.OldestFirst, at most Filter.Limit.
//
// # Caveats
//
// The count and oldest time are the writer's: do not write to Bucket from elsewhere while a
// Log is open. Entries still in the buffer when the process dies are lost; the log is a
// record of activity, not a transaction journal.
package audit
