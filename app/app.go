package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/term"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/certs"
	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/app/metrics"
	"github.com/ownsona/ownsona/app/ops"
	"github.com/ownsona/ownsona/app/settings"
	"github.com/ownsona/ownsona/app/tools"
	"github.com/ownsona/ownsona/app/uploads"
	"github.com/ownsona/ownsona/app/web"
	"github.com/ownsona/ownsona/embedhttp"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/vector"
)

// Version is set by the build (-ldflags "-X github.com/ownsona/ownsona/app.Version=…").
var Version = "dev"

// App is one running ownsona: the file, the memory store, the MCP surface over it, and the
// HTTP side that serves them.
type App struct {
	cfg Config
	log zerolog.Logger
	now func() time.Time

	db       *kv.DB
	settings *settings.Store
	// cliImports are the command line's imports through the admin socket, for the console.
	cliImports cliImports
	approvals  *approval.Queue
	mem        *memory.Store
	tools      *tools.Server
	mcp        *mcp.Server // tools.RPC
	limiter    *limit.Limiter
	audit      *audit.Log
	web        *web.Server
	console    *console.Console  // the owner's console, mounted by web at /console
	uploads    *uploads.Service  // upload URLs of large imports and their imports
	metrics    *metrics.Metrics  // nil unless Config.Metrics (and serving over HTTP)
	backups    *backup.Scheduler // scheduled backups; nil without --backup-dir

	closeSocket func() // the admin socket's; nil when not serving
	health      healthCache
}

// Open opens the file and builds the memory store, the MCP surface and the HTTP side, in that
// order; Close releases them in reverse. With cfg.PublicURL set the authorization server opens
// here too, so Handler works before Listen.
func Open(cfg Config, stderr io.Writer) (*App, error) {
	a := &App{cfg: cfg, now: cfg.Now}
	if a.now == nil {
		a.now = time.Now
	}
	a.log = newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	emb, err := newEmbedder(cfg)
	if err != nil {
		return nil, err
	}
	if a.db, err = openDB(cfg.DB, kv.Options{Migrations: memory.Migrations, OnUpgrade: func(u kv.Upgrade) {
		a.log.Warn().Str("db", cfg.DB).Int("from_schema", u.From).Int("to_schema", u.To).Str("backup", u.Backup).
			Int64("bytes", u.Bytes).Msg("backed up the file before migrating it")
	}}); err != nil {
		return nil, err
	}
	a.settings, err = settings.Open(a.db, settings.Config{Base: cfg.runtime(), Fixed: cfg.fixedSettings(), KnownTools: tools.Names()})
	if err != nil {
		a.Close()
		var ie *settings.InvalidError
		if errors.As(err, &ie) {
			return nil, usageErr("%v", err)
		}
		return nil, err
	}
	run := a.settings.Get()
	a.mem, err = memory.Open(a.db, memory.Config{Embedder: emb, Now: a.now, Log: a.log,
		MaxTextChars: cfg.MaxTextChars, DedupThreshold: cfg.DedupThreshold, Location: cfg.loc(),
		MaxMemories: cfg.MaxMemories, MaxFileBytes: fileCap(cfg.MaxFileMB)})
	if err != nil {
		a.Close()
		return nil, err
	}
	a.uploads = uploads.New(uploads.Config{Memories: a.mem, BaseURL: a.publicOrigin, MaxBytes: int64(cfg.MaxUploadMB) << 20, Now: a.now, Log: a.log})
	a.approvals = approval.New(approval.Config{Now: a.now, OnDecision: a.approvalEnded})
	a.tools, err = tools.New(tools.Config{Memories: a.mem, Version: cfg.Version, Allowlist: run.Tools,
		Approval: run.Approval, ApprovalTimeout: run.ApprovalTimeout, Approvers: run.ApprovalBy, Approvals: a.approvals, AskOnly: cfg.standalone,
		OnCall: a.called, Log: a.log, Now: a.now, PublicURL: a.publicOrigin,
		Uploads: uploadTools{a.uploads}, Compat: toolsCompat(run.Compat), MaxResultChars: cfg.MaxResultChars, Park: web.Park})
	if err != nil {
		a.Close()
		return nil, usageErr("%v", err)
	}
	a.mcp = a.tools.RPC
	a.mcp.SetEmptyLastCursor(len(run.Compat) > 0) // seed 002's clients: with any mode on
	a.mcp.OnWarning = func(_ context.Context, w mcp.Warning) {
		ev := a.log.Warn().Str("kind", w.Kind).Str("owner", w.Owner)
		if w.Client != nil {
			ev = ev.Str("client_name", w.Client.Name).Str("client_version", w.Client.Version)
		}
		ev.Msg(w.Message)
	}
	a.limiter = limit.New(limit.Config{PerMinute: run.RateLimit, Burst: run.RateBurst, Now: cfg.Now})
	if cfg.Metrics && !cfg.standalone {
		a.metrics = a.newMetrics()
	}
	a.settings.OnChange(a.applySettings)
	a.audit, err = audit.Open(a.db, audit.Config{Now: a.now, MaxAge: cfg.AuditMaxAge, MaxEntries: cfg.AuditMaxEntries,
		OnError: func(err error) { a.log.Error().Err(err).Msg("audit log write failed") }})
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	// The owner's console; web mounts it at /console. Auth is read per request: web opens the
	// authorization server (at Listen without a public URL).
	if a.console, err = console.New(console.Config{Memories: a.mem, Auth: a.Auth, Audit: a.audit, Backup: a.db.Backup,
		Health: a.healthChecks, Approvals: a.approvals, Settings: a.settings, Tools: tools.Names(), ToolTitles: a.toolTitles(),
		Version: cfg.Version, Now: a.now, Log: a.log}); err != nil {
		a.Close()
		return nil, err
	}
	if a.backups, err = a.openBackups(); err != nil {
		a.Close()
		return nil, err
	}
	var backups func() ([]console.BackupFile, error) // the System page's; nil: no --backup-dir
	if a.backups != nil {
		backups = a.backupFiles
		a.console.SetBackupStatus(a.consoleBackupStatus)
	}
	a.console.SetSystem(backups, a.localDoctor)
	a.console.SetImports(func() []memory.ImportJob { return a.cliImports.merged(a.uploads.Jobs("")) })
	a.web, err = web.New(a.webConfig(stderr))
	if err != nil {
		a.Close()
		return nil, settingErr(err)
	}
	st := a.mem.Stats()
	a.log.Info().Str("db", cfg.DB).Int("memories", st.Total).Str("embedder", cfg.Embedder).Str("version", cfg.Version).Msg("opened")
	return a, nil
}

// openDB opens the file, naming the process that holds it when another one does.
func openDB(path string, opts kv.Options) (*kv.DB, error) {
	db, err := kv.Open(path, opts)
	if err != nil {
		return nil, ops.ServerOpenError(path, err)
	}
	return db, nil
}

func (a *App) webConfig(stderr io.Writer) web.Config {
	cfg := a.cfg
	wc := web.Config{
		Addr: cfg.Addr, HTTPAddr: cfg.HTTPAddr, TLS: cfg.TLS,
		Certs: certs.Config{Mode: certs.Mode(cfg.TLS), DB: a.db, Names: cfg.Domains, ACMEDirectory: cfg.ACMECA,
			ACMEEmail: cfg.ACMEEmail, CertFile: cfg.CertFile, KeyFile: cfg.KeyFile, Logger: a.log, Now: cfg.Now},
		ACMECARoot: cfg.ACMECARoot,
		OAuth: oauth.Config{DB: a.db, Username: cfg.LoginUsername, Password: cfg.LoginPassword,
			AccessTokenTTL: cfg.AccessTokenTTL, RefreshGrace: refreshGrace(cfg.RefreshGrace),
			CustomSchemes: cfg.RedirectSchemes, RedirectHosts: cfg.RedirectHosts,
			MetadataHosts: cfg.MetadataHosts, Now: a.now, Log: a.log},
		PublicURL:           cfg.PublicURL,
		TrustedProxies:      cfg.TrustedProxies,
		CORSOrigins:         cfg.CORSOrigins,
		MaxConcurrent:       cfg.MaxConcurrent,
		Version:             cfg.Version,
		MCP:                 a.mcp,
		Scope:               a.tools.Scope,
		Limiter:             a.limiter,
		Audit:               a.audit,
		Health:              a.healthChecks,
		Console:             a.console,
		Uploads:             uploadReceiver{a.uploads},
		RootPEM:             func() ([]byte, error) { return certs.RootPEM(a.db) },
		Log:                 a.log,
		Now:                 a.now,
		Stderr:              stderr,
		AllowArgumentTokens: cfg.AllowArgumentTokens,
		Compat:              webCompat(a.settings.Get()),
	}
	if a.metrics != nil {
		wc.Metrics, wc.OnRequest, wc.OAuth.OnSignIn = a.metrics.Handler(), a.metrics.HTTP, a.metrics.SignIn
	}
	return wc
}

// fileCap is memory's MaxFileBytes for --max-file-mb: 0 the default, negative no cap.
func fileCap(mb int) int64 {
	if mb <= 0 {
		return int64(mb)
	}
	return int64(mb) << 20
}

// refreshGrace is oauth's RefreshGrace for the setting d, where 0 means off.
func refreshGrace(d time.Duration) time.Duration {
	if d == 0 {
		return -1 // off: oauth takes zero as its default
	}
	return d
}

// toolTitles are the tools' titles by name, for the console's Settings page.
func (a *App) toolTitles() map[string]string {
	out := map[string]string{}
	for _, t := range a.tools.RPC.Tools {
		out[t.Name] = t.Title
	}
	return out
}

// toolsCompat is the tools' side of the compatibility modes.
func toolsCompat(modes []string) tools.Compat {
	return tools.Compat{ONCE: slices.Contains(modes, settings.CompatONCE), KOmcp: slices.Contains(modes, settings.CompatKOmcp),
		Sophon: slices.Contains(modes, settings.CompatSophon)}
}

// webCompat is the HTTP side of the compatibility modes.
func webCompat(s settings.Settings) web.Compat {
	return web.Compat{ONCE: s.HasCompat(settings.CompatONCE), KOmcp: s.HasCompat(settings.CompatKOmcp), Sophon: s.HasCompat(settings.CompatSophon)}
}

// settingErr turns the HTTP side's configuration mistakes into usage errors (exit status 2).
func settingErr(err error) error {
	var se *web.SettingError
	if errors.As(err, &se) {
		return usageErr("%v", err)
	}
	return err
}

// Close stops serving and releases everything in reverse order of opening; it tolerates
// partial opens and repeat calls and returns the first error.
func (a *App) Close() error {
	if a == nil {
		return nil
	}
	var errs []error
	if a.closeSocket != nil {
		a.closeSocket()
		a.closeSocket = nil
	}
	if a.mcp != nil {
		a.mcp.EndSubscriptions() // answered, so their clients know the end was intended
	}
	if a.approvals != nil {
		a.approvals.Close() // calls waiting for approval end now, unapproved
	}
	if a.web != nil {
		errs = append(errs, a.web.Close())
		a.web = nil
	}
	if a.uploads != nil {
		a.uploads.Close() // running imports end; what they stored stays
		a.uploads = nil
	}
	if a.audit != nil {
		errs = append(errs, a.audit.Close())
		a.audit = nil
	}
	if a.mem != nil {
		errs = append(errs, a.mem.Close())
		a.mem = nil
	}
	if a.db != nil {
		errs = append(errs, a.db.Close())
		a.db = nil
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Settings are the run-time settings (the console's Settings page): the tool allowlist, the
// approval policy and timeout, the rate limit and burst. Set applies them at once.
func (a *App) Settings() *settings.Store { return a.settings }

// Approvals is the queue of calls waiting for the owner's approval (the console's Approvals
// page).
func (a *App) Approvals() *approval.Queue { return a.approvals }

// applySettings puts changed run-time settings in force (settings.Store.OnChange).
func (a *App) applySettings(s settings.Settings) {
	if err := a.tools.SetAllowlist(s.Tools); err != nil { // validated by Set: cannot happen
		a.log.Error().Err(err).Msg("settings: allowlist not applied")
	}
	a.tools.SetApproval(s.Approval, s.ApprovalTimeout)
	a.tools.SetApprovers(s.ApprovalBy)
	if a.web != nil {
		a.web.SetCompat(webCompat(s))
	}
	a.tools.SetCompat(toolsCompat(s.Compat))
	a.mcp.SetEmptyLastCursor(len(s.Compat) > 0)
	if pm, burst := a.limiter.Rate(); pm != s.RateLimit || (s.RateLimit > 0 && burst != s.RateBurst) {
		a.limiter.Set(s.RateLimit, s.RateBurst) // walks every bucket: only when the rate changed
	}
	a.log.Info().Strs("tools", s.Tools).Str("approval", string(s.Approval)).Str("approval_by", string(s.ApprovalBy)).Dur("approval_timeout", s.ApprovalTimeout).
		Int("rate_limit", s.RateLimit).Int("rate_burst", s.RateBurst).Strs("compat", s.Compat).Msg("settings changed")
}

// approvalEnded logs how a request for approval ended, and puts the decision in the audit
// log: an entry with method "approval", the tool, the outcome (approved, rejected, timed_out)
// and, as its client, who decided.
func (a *App) approvalEnded(r approval.Record) {
	a.log.Info().Str("approval", r.ID).Str("tool", r.Tool).Str("client", r.Client).Str("agent", r.Agent).
		Str("outcome", string(r.Outcome)).Str("by", r.By).Msg("approval ended")
	if r.Outcome == approval.Withdrawn || a.audit == nil {
		return
	}
	a.audit.Record(audit.Entry{Time: r.At, Client: r.By, Method: "approval", Tool: r.Tool, Outcome: audit.Outcome(r.Outcome),
		Duration: r.At.Sub(r.Created)})
}

// Listen binds the configured address synchronously (so "address in use" is an error here) and
// serves in a goroutine until Close (see web.Server.Listen).
func (a *App) Listen() error { return settingErr(a.web.Listen()) }

// Addr is the address Listen bound, e.g. 127.0.0.1:8080.
func (a *App) Addr() string { return a.web.Addr() }

// Handler routes every HTTP endpoint of ownsona (see web.Server.Handler).
func (a *App) Handler() http.Handler { return a.web.Handler() }

// Auth is the authorization server; nil until Listen or a configured public URL opens it.
func (a *App) Auth() *oauth.Server { return a.web.Auth() }

// publicOrigin is the origin clients reach the server at (the authorization server's issuer:
// the configured public URL, else the listener's); "" before it is known and without a
// listener (ownsona stdio).
func (a *App) publicOrigin() string {
	if a.web == nil {
		return ""
	}
	if auth := a.web.Auth(); auth != nil {
		return auth.Endpoints().Issuer
	}
	return ""
}

func newEmbedder(cfg Config) (vector.Embedder, error) {
	switch cfg.Embedder {
	case "builtin":
		return vector.NewBuiltin(), nil
	case "openai":
		e, err := embedhttp.NewOpenAI(embedhttp.OpenAIConfig{URL: cfg.EmbedURL, Model: cfg.EmbedModel, APIKey: cfg.EmbedAPIKey, Timeout: cfg.EmbedTimeout})
		if err != nil {
			return nil, usageErr("embedder openai: %v", err)
		}
		return e, nil
	}
	if dir, ok := strings.CutPrefix(cfg.Embedder, "model2vec:"); ok {
		e, err := vector.NewModel2Vec(dir)
		if err != nil {
			return nil, usageErr("embedder %v", err)
		}
		return e, nil
	}
	return nil, nil
}

// newLogger logs to w at level, in format: json, text (zerolog's console lines, coloured only
// on a terminal) or auto (text on a terminal, JSON otherwise).
func newLogger(w io.Writer, level, format string) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(level)
	if err != nil {
		lvl = zerolog.InfoLevel
	}
	tty := isTerminal(w)
	if format == "text" || (format == "auto" && tty) {
		w = zerolog.ConsoleWriter{Out: w, NoColor: !tty, TimeFormat: time.RFC3339}
	}
	// The background embedder and request handlers log concurrently; SyncWriter keeps lines whole
	// whatever w is.
	return zerolog.New(zerolog.SyncWriter(w)).Level(lvl).With().Timestamp().Logger()
}

// isTerminal reports whether w is a terminal (a person reads it).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// called is mcp.Server.OnCall: every request, over any transport, is counted in the metrics,
// and those over stdio are audited (auditCall).
func (a *App) called(ctx context.Context, c mcp.CallInfo) {
	if a.metrics != nil {
		a.metrics.Call(metrics.Call{Method: c.Method, Tool: c.Tool, Outcome: string(callOutcome(c)), Duration: c.Duration})
	}
	a.auditCall(ctx, c)
}

// auditCall audits a request over stdio (and through the admin socket's stdio); HTTP requests
// are audited by the HTTP side, refusals before mcp included.
func (a *App) auditCall(ctx context.Context, c mcp.CallInfo) {
	if mcp.TransportFrom(ctx) != "stdio" || a.audit == nil {
		return
	}
	e := audit.Entry{Time: a.now(), Client: "stdio", Transport: audit.TransportStdio, Method: c.Method, Tool: c.Tool,
		Duration: c.Duration, Outcome: callOutcome(c), ErrorCode: c.Code}
	if ci, ok := mcp.ClientInfoFrom(ctx); ok && ci.Name != "" {
		e.Client = "stdio:" + ci.Name
		e.Agent = strings.TrimSpace(ci.Name + " " + ci.Version)
	}
	a.audit.Record(e)
}

// callOutcome is how a request ended: ok, denied, error or tool_error by its answer; a call that
// did not run as asked has mcp's word for how it ended (rejected, timed_out, withdrawn,
// cancelled, abandoned, input_required), whatever its answer looked like.
func callOutcome(c mcp.CallInfo) audit.Outcome {
	if c.Outcome != "" {
		return audit.Outcome(c.Outcome)
	}
	switch {
	case c.Code == mcp.CodeAuthorization || c.Code == mcp.CodeServerError:
		return audit.OutcomeDenied
	case c.Code != 0:
		return audit.OutcomeError
	case c.ToolError:
		return audit.OutcomeToolError
	}
	return audit.OutcomeOK
}

// healthCache keeps the result of the database write probe for a minute: health checks come
// every few seconds, and a write each time would wear an SD card.
type healthCache struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// bucketHealth holds the one key the write probe rewrites.
const bucketHealth = "health"

// dbWritable commits a tiny write at most once a minute and reports the last result.
func (a *App) dbWritable() error {
	h := &a.health
	h.mu.Lock()
	defer h.mu.Unlock()
	now := a.now()
	if !h.at.IsZero() && now.Sub(h.at) < time.Minute && now.After(h.at) {
		return h.err
	}
	h.at = now
	h.err = a.db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketHealth)
		if err != nil {
			return err
		}
		return b.Put([]byte("probe"), []byte(now.UTC().Format(time.RFC3339)))
	})
	return h.err
}

// healthChecks is /health's: the file can be written, the embedder answers, the index state.
// An index still being built is healthy: the exact index answers meanwhile.
func (a *App) healthChecks() (map[string]string, bool) {
	checks := map[string]string{"database": "ok", "index": "ok", "embedder": "ok"}
	healthy := true
	if err := a.dbWritable(); err != nil {
		a.log.Error().Err(err).Msg("health check: database not writable")
		checks["database"], healthy = "failed", false
	}
	switch es := a.mem.EmbedderStatus(); {
	case !es.Configured:
		checks["embedder"] = "none"
	case es.LastError != "":
		checks["embedder"], healthy = "failing", false
	case es.Pending > 0:
		checks["embedder"] = "re-embedding"
	}
	if a.mem.IndexBuilding() {
		checks["index"] = "building"
	}
	return checks, healthy
}
