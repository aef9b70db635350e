// Package metrics is what an operator's Prometheus reads of ownsona: counters of the MCP
// requests and tool calls by outcome with their latency, of the HTTP requests and refusals, of
// the owner's sign-ins, and, read at each scrape, the memories by state, the index, the file's
// size and the last backups. It serves them at /metrics in Prometheus' text format, to a
// scraper on this machine or to one that presents the configured bearer token.
//
// The simplest use, as app wires it:
//
//	m := metrics.New(metrics.Config{
//		Tools: toolNames,                           // the catalogue; other names count as "other"
//		Token: token,                               // "" serves loopback scrapers only
//		Store: func() metrics.Store { return … },  // read at each scrape
//	})
//	m.Call(metrics.Call{Method: "tools/call", Tool: "recall", Outcome: "ok", Duration: d})
//	m.HTTP("mcp", 200)
//	mux.Handle("/metrics", m.Handler())
//
// # What it never holds
//
// No memory text, argument, token, client id or client name is a label or a value: labels are
// words from fixed sets (the tool catalogue, the MCP methods, the outcomes, the routes, the
// status codes, the backup targets the caller names), and a value outside its set counts as
// "other". The number of series is therefore bounded however clients behave.
//
// # Who may read them
//
// A request whose peer address is loopback, that names a loopback host and carries no proxy
// header (X-Forwarded-For, Forwarded, X-Real-IP and the like) is served: a scraper on this
// machine. A request through a reverse proxy on the same machine arrives from loopback too, and
// is told apart by those headers; a proxy that adds none and rewrites Host to the loopback
// address cannot be told apart, so block /metrics there or set a token. Any other request must
// carry "Authorization: Bearer <Config.Token>", compared in constant time; without a token
// configured it is 403, with one 401.
//
// # Library
//
// The counters and histograms are github.com/VictoriaMetrics/metrics's (its PrometheusHistogram
// writes the standard _bucket{le="…"} series that histogram_quantile reads); no type of it is in
// this package's API. It was chosen over prometheus/client_golang for its cost: 144 KiB more in
// the stripped linux/amd64 binary against 2.3 MiB, and about 70 ns per recorded call against
// 170 ns (see the commit that added this package). Its TYPE and HELP lines are switched on
// process-wide (metrics.ExposeMetadata), and its HELP lines are empty; docs/operations.md says
// what each family means.
//
// # Caveats
//
// A Metrics is safe for concurrent use. The recording methods never block on a scrape.
package metrics
