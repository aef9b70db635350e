package metrics

import (
	"strconv"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
)

// Config is what New needs.
type Config struct {
	// Tools are the names of the tools in the catalogue (aliases and compatibility modes'
	// included); a call of any other name counts as tool "other".
	Tools []string
	// Token, when set, lets a scraper that is not on this machine read /metrics with
	// "Authorization: Bearer <Token>". If empty, only loopback scrapers are served.
	Token string
	// Store is read at each scrape for the memories by state, the index and the file. If nil,
	// those families are left out.
	Store func() Store
	// Backups is read at each scrape for the last result of each kind of backup. If nil, the
	// backup families are left out.
	Backups func() []Backup
	// Version is the build's version, the label of ownsona_build_info. If empty, "dev".
	Version string
	// Now is the clock of the backups' age. If nil, time.Now.
	Now func() time.Time
}

// Store is what a scrape reads of the memory store.
type Store struct {
	// Memories by state: in recall, replaced by a newer one (supersedes), forgotten (in the
	// trash) and past their expires_at.
	Active, Superseded, Forgotten, Expired int
	// IndexBuilding is true while the HNSW graph is being built (exact search serves meanwhile).
	IndexBuilding bool
	// EmbedPending counts the memories waiting for a vector of the current embedder.
	EmbedPending int
	// EmbedFailing is true while the embedder's last attempt failed.
	EmbedFailing bool
	// FileBytes is the data the file holds, FileSize its size on disk; MaxFileBytes its cap (0:
	// none).
	FileBytes, FileSize, MaxFileBytes int64
}

// Backup is the last result of one kind of backup.
type Backup struct {
	// Target names the kind, one series each: "local" (--backup-dir) or "offsite". Keep the
	// set small and fixed: it is a label.
	Target string
	// LastSuccess is when the newest backup that succeeded was taken; zero when none is known.
	LastSuccess time.Time
	// Attempted says whether LastOK is known: a backup of this kind ran, or failed, since the
	// server started.
	Attempted bool
	// LastOK is whether the last attempt succeeded.
	LastOK bool
}

// Call is one MCP request as mcp reports it (mcp.CallInfo, with the outcome app gives it).
type Call struct {
	Method   string        // the JSON-RPC method; not an MCP method: "other"
	Tool     string        // the tool of a tools/call; not in Config.Tools: "other"
	Outcome  string        // ok, error, tool_error, denied, rejected, timed_out, …: Outcomes
	Duration time.Duration // how long the answer took
}

// Methods are the MCP methods counted by name; any other counts as "other".
var Methods = []string{"initialize", "ping", "tools/list", "tools/call", "resources/list",
	"resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
	"prompts/list", "prompts/get", "completion/complete", "logging/setLevel", "server/discover",
	"subscriptions/listen"}

// Outcomes are the outcomes counted by name (app/audit's); any other counts as "other".
var Outcomes = []string{"ok", "error", "tool_error", "denied", "rejected", "timed_out", "withdrawn",
	"cancelled", "abandoned", "input_required"}

// Routes are the classes of HTTP path counted by name; any other counts as "other".
var Routes = []string{"mcp", "sse", "oauth", "console", "upload", "health", "discovery", "metrics", "other"}

// SignIns are the results of a password check counted by name (oauth.Config.OnSignIn).
var SignIns = []string{"ok", "wrong_credentials", "throttled", "busy"}

// refusals are the HTTP statuses counted as refusals, with the reason each stands for.
var refusals = map[int]string{
	401: "unauthorized",      // no valid token, or a wrong one
	403: "forbidden",         // a scope, an origin, the console's CSRF check
	408: "too_slow",          // an upload slower than the minimum rate
	413: "too_large",         // a body or an upload over its cap
	421: "wrong_host",        // a Host that is not the public name or loopback (DNS rebinding)
	429: "rate_limited",      // a rate limit, or too many calls or streams at once
	431: "headers_too_large", // headers over the server's limit
	503: "busy",              // the concurrency bound, or no password-check slot
}

// buckets are the upper bounds of the latency histograms, in seconds: a millisecond to the
// five minutes a call may wait for the owner's approval.
var buckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// Metrics counts what ownsona serves and writes it for Prometheus. Its methods are safe for
// concurrent use.
type Metrics struct {
	cfg   Config
	set   *vm.Set
	tools map[string]bool

	// Series made on first use, so that a scrape lists what happened rather than every
	// combination; the keys are words of bounded sets, so the maps stay small.
	calls   sync.Map // callKey → *callSeries
	http    sync.Map // httpKey → *httpSeries
	signIns sync.Map // string → *vm.Counter
}

type callKey struct{ method, tool, outcome string }

// callSeries are the series one kind of call moves; the tool's are nil for other methods.
type callSeries struct {
	requests, toolCalls *vm.Counter
	latency, toolTime   *vm.PrometheusHistogram
}

type httpKey struct {
	route  string
	status int
}

// httpSeries are the series one kind of HTTP answer moves; refusals is nil for others.
type httpSeries struct{ requests, refusals *vm.Counter }

// New returns the Metrics of cfg.
func New(cfg Config) *Metrics {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	vm.ExposeMetadata(true) // TYPE lines, so that parsers know counters from gauges
	m := &Metrics{cfg: cfg, set: vm.NewSet(), tools: map[string]bool{}}
	for _, t := range cfg.Tools {
		m.tools[t] = true
	}
	return m
}

// Call counts one MCP request: ownsona_mcp_requests_total and its latency by method, and for a
// tools/call ownsona_tool_calls_total and its latency by tool.
func (m *Metrics) Call(c Call) {
	k := callKey{oneOf(c.Method, methods), "", oneOf(c.Outcome, outcomes)}
	if k.method == "tools/call" {
		k.tool = "other"
		if m.tools[c.Tool] {
			k.tool = c.Tool
		}
	}
	v, ok := m.calls.Load(k)
	if !ok {
		cs := &callSeries{
			requests: m.set.GetOrCreateCounter(name("ownsona_mcp_requests_total", "method", k.method, "outcome", k.outcome)),
			latency:  m.set.GetOrCreatePrometheusHistogramExt(name("ownsona_mcp_request_duration_seconds", "method", k.method, "", ""), buckets),
		}
		if k.tool != "" {
			cs.toolCalls = m.set.GetOrCreateCounter(name("ownsona_tool_calls_total", "tool", k.tool, "outcome", k.outcome))
			cs.toolTime = m.set.GetOrCreatePrometheusHistogramExt(name("ownsona_tool_call_duration_seconds", "tool", k.tool, "", ""), buckets)
		}
		v, _ = m.calls.LoadOrStore(k, cs)
	}
	cs, secs := v.(*callSeries), c.Duration.Seconds()
	cs.requests.Inc()
	cs.latency.Update(secs)
	if cs.toolCalls != nil {
		cs.toolCalls.Inc()
		cs.toolTime.Update(secs)
	}
}

// HTTP counts one HTTP request by route (Routes) and status, and a refusal (401, 403, 408,
// 413, 421, 429, 431, 503) by its reason.
func (m *Metrics) HTTP(route string, status int) {
	k := httpKey{oneOf(route, routes), status}
	if status < 100 || status > 599 {
		k.status = 0
	}
	v, ok := m.http.Load(k)
	if !ok {
		code := "other"
		if k.status != 0 {
			code = strconv.Itoa(k.status)
		}
		hs := &httpSeries{requests: m.set.GetOrCreateCounter(name("ownsona_http_requests_total", "route", k.route, "code", code))}
		if reason, ok := refusals[k.status]; ok {
			hs.refusals = m.set.GetOrCreateCounter(name("ownsona_http_refusals_total", "route", k.route, "reason", reason))
		}
		v, _ = m.http.LoadOrStore(k, hs)
	}
	hs := v.(*httpSeries)
	hs.requests.Inc()
	if hs.refusals != nil {
		hs.refusals.Inc()
	}
}

// SignIn counts one check of the owner's password, at the OAuth login page or the console, by
// its result (SignIns): ownsona_sign_ins_total.
func (m *Metrics) SignIn(result string) {
	result = oneOf(result, signIns)
	v, ok := m.signIns.Load(result)
	if !ok {
		v, _ = m.signIns.LoadOrStore(result, m.set.GetOrCreateCounter(name("ownsona_sign_ins_total", "result", result, "", "")))
	}
	v.(*vm.Counter).Inc()
}

// name is a series as the text format writes it: family{label1="value1",label2="value2"}.
func name(family, label1, value1, label2, value2 string) string {
	s := family + `{` + label1 + `="` + escape(value1) + `"`
	if label2 != "" {
		s += `,` + label2 + `="` + escape(value2) + `"`
	}
	return s + `}`
}

var methods, outcomes, routes, signIns = set(Methods), set(Outcomes), set(Routes), set(SignIns)

func set(words []string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words {
		out[w] = true
	}
	return out
}

// oneOf is v when set holds it, else "other".
func oneOf(v string, set map[string]bool) string {
	if set[v] {
		return v
	}
	return "other"
}

// escape makes v a label value of the text format: backslash, double quote and newline
// escaped.
func escape(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}
