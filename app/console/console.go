package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/oauth"
)

// Defaults of Config.
const (
	DefaultIdleTimeout = 30 * time.Minute
	DefaultMaxAge      = 12 * time.Hour
	DefaultStaleAfter  = 180 * 24 * time.Hour
)

// Prefix is the path the console is served under; web mounts the Handler at Prefix and
// Prefix+"/".
const Prefix = "/console"

// AuditLog is what the console needs of the audit log (*audit.Log): the Activity page queries
// it, and each change made in the console is recorded in it.
type AuditLog interface {
	Query(f audit.Filter) (entries []audit.Entry, corrupt int, err error)
	Record(e audit.Entry)
}

var _ AuditLog = (*audit.Log)(nil)

// Config is what New needs.
type Config struct {
	// Memories is the store the console reads and changes; its changes reach MCP subscribers
	// through the store's OnChange hooks like any other writer's. Required.
	Memories *memory.Store
	// Auth returns the authorization server, whose owner password check and throttling, OAuth
	// clients and personal access tokens the console shares. It may return nil until the server
	// is open (web opens it at Listen); the console answers 503 meanwhile. Required.
	Auth func() *oauth.Server
	// Audit is read by the Activity page and records the console's changes (transport
	// "console"). If nil, the Activity page says there is no audit log.
	Audit AuditLog
	// Backup writes a consistent snapshot of the whole file to w from one read transaction
	// (kv.DB.Backup), for "download a backup now". If nil, the System page offers none.
	Backup func(w io.Writer) (int64, error)
	// Health reports the checks of /health and whether the server is healthy. If nil, the
	// System page shows none.
	Health func() (checks map[string]string, healthy bool)
	// Approvals is the queue of calls waiting for the owner (the Approvals page). If nil, the page
	// says approvals are not available.
	Approvals Approvals
	// Settings are the run-time settings (the Settings page), and Tools every tool's name in
	// the order to show them. If Settings is nil, the page says settings are not available.
	Settings Settings
	Tools    []string
	// ToolTitles are the tools' titles by name, shown beside their names on the Settings page.
	// If nil, names alone.
	ToolTitles map[string]string
	// Version is the server's version, shown on the System page.
	Version string
	// IdleTimeout ends a session not used for this long. If zero, DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxAge ends a session this long after its sign-in, used or not. If zero, DefaultMaxAge.
	MaxAge time.Duration
	// StaleAfter is how long unconfirmed a memory must be for the Review page to list it. If
	// zero, DefaultStaleAfter (180 days).
	StaleAfter time.Duration
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// Log receives sign-ins, sign-outs, refused forms and failures; never a password, token,
	// cookie or memory text. If zero, silent.
	Log zerolog.Logger
	// Backups lists the scheduled backups (serve's --backup-dir), newest first, for the System
	// page. If nil, the page says no scheduled backups are configured.
	Backups func() ([]BackupFile, error)
	// Doctor runs the doctor's local checks of the file and the configuration (never the
	// network checks of doctor --public) and returns its report, one finding a line, for the
	// System page. If nil, the page shows no findings.
	Doctor DoctorFunc
}

// Console is the owner's console: an http.Handler for Prefix and every path below it. It is
// safe for concurrent use.
type Console struct {
	cfg      Config
	mem      *memory.Store
	now      func() time.Time
	log      zerolog.Logger
	sessions *sessions
	signKey  []byte // signs the sign-in form's CSRF token; random per process
	cop      *http.CrossOriginProtection
	mux      *http.ServeMux
	started  time.Time
	imports  func() []memory.ImportJob // the System page's recent imports (SetImports); nil: none
	// backupStatus is what the last scheduled backup did (SetBackupStatus); nil: not shown.
	backupStatus func() BackupStatus
}

// New returns the console for cfg. It fails only when a required field is missing.
func New(cfg Config) (*Console, error) {
	if cfg.Memories == nil {
		return nil, errors.New("console: Config.Memories is required")
	}
	if cfg.Auth == nil {
		return nil, errors.New("console: Config.Auth is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	c := &Console{
		cfg:      cfg,
		mem:      cfg.Memories,
		now:      cfg.Now,
		log:      cfg.Log,
		sessions: newSessions(cfg.Now, cfg.IdleTimeout, cfg.MaxAge),
		signKey:  randomBytes(32),
		cop:      http.NewCrossOriginProtection(),
		mux:      http.NewServeMux(),
	}
	c.started = c.now()
	c.routes()
	return c, nil
}

// routes registers every page and action. GETs show; every change is a POST through c.action,
// which checks the session, the CSRF token and the origin first.
func (c *Console) routes() {
	m := c.mux
	m.HandleFunc("GET "+Prefix, c.home)
	m.HandleFunc("GET "+Prefix+"/{$}", c.home)
	m.HandleFunc("GET "+staticPrefix+"{file}", serveStatic)
	m.HandleFunc("GET "+Prefix+"/signin", c.getSignIn)
	m.HandleFunc("POST "+Prefix+"/signin", c.postSignIn)
	m.HandleFunc("POST "+Prefix+"/signout", c.action("signout", c.postSignOut))

	m.HandleFunc("GET "+Prefix+"/memories", c.page(c.getMemories))
	m.HandleFunc("GET "+Prefix+"/memories/{id}", c.page(c.getMemory))
	m.HandleFunc("POST "+Prefix+"/memories/{id}", c.action("update", c.postEdit))
	m.HandleFunc("POST "+Prefix+"/memories/{id}/confirm", c.action("confirm", c.postConfirm))
	m.HandleFunc("POST "+Prefix+"/memories/{id}/forget", c.action("forget", c.postForget))
	m.HandleFunc("POST "+Prefix+"/memories/{id}/restore", c.action("restore", c.postRestore))
	m.HandleFunc("POST "+Prefix+"/memories/{id}/delete", c.action("delete", c.postDelete))
	m.HandleFunc("POST "+Prefix+"/memories/bulk", c.action("bulk", c.postBulk))
	m.HandleFunc("GET "+Prefix+"/trash", c.page(c.getTrash))
	m.HandleFunc("POST "+Prefix+"/trash/empty", c.action("empty_trash", c.postEmptyTrash))

	m.HandleFunc("GET "+Prefix+"/review", c.page(c.getReview))
	m.HandleFunc("POST "+Prefix+"/review/duplicates", c.action("keep_one", c.postKeepOne))
	m.HandleFunc("POST "+Prefix+"/review/stale", c.action("review_stale", c.postStale))
	m.HandleFunc("POST "+Prefix+"/review/tags", c.action("rename_tags", c.postTags))

	m.HandleFunc("GET "+Prefix+"/connections", c.page(c.getConnections))
	m.HandleFunc("POST "+Prefix+"/connections/clients/revoke", c.action("revoke_client", c.postRevokeClient))
	m.HandleFunc("POST "+Prefix+"/connections/tokens", c.action("create_token", c.postCreateToken))
	m.HandleFunc("POST "+Prefix+"/connections/tokens/revoke", c.action("revoke_token", c.postRevokeToken))

	m.HandleFunc("GET "+Prefix+"/approvals", c.page(c.getApprovals))
	m.HandleFunc("POST "+Prefix+"/approvals/decide", c.action("decide_approval", c.postDecide))

	m.HandleFunc("GET "+Prefix+"/settings", c.page(c.getSettings))
	m.HandleFunc("POST "+Prefix+"/settings/save", c.action("save_settings", c.postSettings))

	m.HandleFunc("GET "+Prefix+"/activity", c.page(c.getActivity))
	m.HandleFunc("GET "+Prefix+"/system", c.page(c.getSystem))
	m.HandleFunc("POST "+Prefix+"/system/backup", c.action("backup", c.postBackup))
}

// CSP is the console's Content-Security-Policy: everything from this origin only (the embedded
// stylesheet, script and icon), no inline script or style, forms post here, and no framing.
const CSP = "default-src 'self'; base-uri 'none'; object-src 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP serves Prefix and every path below it, with the page headers on every response.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if c.cfg.Auth() == nil {
		c.fail(w, http.StatusServiceUnavailable, "The server is still starting. Try again in a moment.")
		return
	}
	if _, pattern := c.mux.Handler(r); pattern == "" && !c.otherMethod(r) {
		c.fail(w, http.StatusNotFound, "There is no such page in the console.")
		return
	}
	c.mux.ServeHTTP(w, r) // a path served for another method only is 405 with Allow
}

// otherMethod reports whether r's path is served for GET or POST, so that a request with the
// other method is answered 405 rather than 404.
func (c *Console) otherMethod(r *http.Request) bool {
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := c.mux.Handler(probe); pattern != "" {
			return true
		}
	}
	return false
}

func (c *Console) home(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, Prefix+"/memories", http.StatusSeeOther)
}

// ---- static files ----

//go:embed static
var staticFS embed.FS

// staticPrefix carries a digest of the embedded files, so that they can be cached for good and
// a new build's are fetched anew.
var staticPrefix = func() string {
	h := sha256.New()
	_ = fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := staticFS.ReadFile(p)
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
		return nil
	})
	return Prefix + "/static/" + hex.EncodeToString(h.Sum(nil))[:12] + "/"
}()

var staticTypes = map[string]string{
	".css": "text/css; charset=utf-8",
	".js":  "text/javascript; charset=utf-8",
	".svg": "image/svg+xml",
}

func serveStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	b, err := staticFS.ReadFile("static/" + name)
	ctype := staticTypes[path.Ext(name)]
	if err != nil || ctype == "" || strings.Contains(name, "/") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	w.Write(b)
}

// ---- pages ----

//go:embed templates
var templateFS embed.FS

// pages are the page templates, each parsed with the layout.
var pages = func() map[string]*template.Template {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		name := strings.TrimSuffix(base, ".html")
		out[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", n))
	}
	return out
}()

// view is what every page gets: the layout's fields, and the page's own in Page.
type view struct {
	Title   string
	Section string // the navigation entry that is current
	CSRF    string // "" when signed out: no navigation, no sign-out form
	User    string
	Waiting int // calls waiting for approval, shown in the navigation
	Static  string
	Flash   []flash
	Page    any
}

// flash is a message shown once, on the next page.
type flash struct {
	Error bool
	Text  string
}

// render writes page name with status; a template failure is a plain 500, logged.
func (c *Console) render(w http.ResponseWriter, status int, name string, v *view) {
	t := pages[name]
	v.Static = staticPrefix
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		c.log.Error().Err(err).Str("page", name).Msg("console page")
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// fail writes the error page with status and message, outside any session.
func (c *Console) fail(w http.ResponseWriter, status int, message string) {
	c.render(w, status, "error", &view{Title: http.StatusText(status), Page: message})
}
