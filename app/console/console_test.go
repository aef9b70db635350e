package console_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/bcrypt"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/internal/httpscenario"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/vector"
)

// These tests drive the console through its real handler, as a browser would: a real
// memory.Store over a temporary file, a real oauth.Server for the password, clients and tokens,
// and a real audit.Log.

const (
	testOrigin   = "http://127.0.0.1:8080"
	testPassword = "correct horse battery staple"
)

// fastPassword is testPassword's bcrypt hash at the minimum cost: argon2id would make every
// sign-in slow under the race detector.
var fastPassword = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
})

// fixture is a console over a fresh file with everything it talks to.
type fixture struct {
	*console.Console
	db    *kv.DB
	mem   *memory.Store
	auth  *oauth.Server
	audit *audit.Log
}

// options change a fixture before it opens.
type options struct {
	publicURL string
	embedder  vector.Embedder
	maxMems   int       // memory.Config.MaxMemories; 0: its default
	log       io.Writer // the console's and the authorization server's log; nil: silent
	cfg       func(*console.Config)
}

// MustOpen opens a console on a new file, its clock time.Now (inside a synctest bubble, the
// bubble's), and closes everything at cleanup.
func MustOpen(tb testing.TB, opts ...func(*options)) *fixture {
	tb.Helper()
	o := options{publicURL: testOrigin}
	for _, fn := range opts {
		fn(&o)
	}
	f := &fixture{}
	var err error
	f.db = kvtest.Open(tb, memory.Migrations...)
	if f.mem, err = memory.Open(f.db, memory.Config{Embedder: o.embedder, MaxMemories: o.maxMems}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.mem.Close() })
	var log zerolog.Logger
	if o.log != nil {
		log = zerolog.New(o.log)
	}
	if f.auth, err = oauth.New(oauth.Config{PublicURL: o.publicURL, DB: f.db, Password: fastPassword(), Log: log}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.auth.Close)
	if f.audit, err = audit.Open(f.db, audit.Config{}); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.audit.Close() })
	cfg := console.Config{Memories: f.mem, Auth: func() *oauth.Server { return f.auth }, Audit: f.audit, Backup: f.db.Backup,
		Health:  func() (map[string]string, bool) { return map[string]string{"database": "ok", "index": "ok"}, true },
		Version: "9.9.9-test", Log: log}
	if o.cfg != nil {
		o.cfg(&cfg)
	}
	if f.Console, err = console.New(cfg); err != nil {
		tb.Fatal(err)
	}
	return f
}

func withEmbedder(e vector.Embedder) func(*options) { return func(o *options) { o.embedder = e } }

// remember stores texts with tags as the client "pat:script" and returns their ids.
func (f *fixture) remember(tb testing.TB, tags []string, texts ...string) []uint64 {
	tb.Helper()
	var drafts []memory.Draft
	for _, t := range texts {
		drafts = append(drafts, memory.Draft{Text: t, Tags: tags, Dedup: memory.DedupInsert})
	}
	res, _, err := f.mem.Remember(context.Background(), drafts, memory.Origin{Provider: "claude", Client: "pat:script"})
	if err != nil {
		tb.Fatal(err)
	}
	var ids []uint64
	for _, r := range res {
		if r.Err != nil {
			tb.Fatal(r.Err)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

func (f *fixture) get(tb testing.TB, id uint64) *memory.Memory {
	tb.Helper()
	m, err := f.mem.Get(id)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// browser keeps cookies, as a browser does for one origin.
type browser struct {
	f       *fixture
	cookies map[string]*http.Cookie
	csrf    string // the session's, read from the last page that had it
}

func (f *fixture) browser() *browser { return &browser{f: f, cookies: map[string]*http.Cookie{}} }

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// do sends a request with the browser's cookies; form, when not nil, is the urlencoded body.
// Header pairs are set on the request.
func (b *browser) do(method, target string, form url.Values, header ...string) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target, _, _ = strings.Cut(target, "#") // a browser keeps the fragment to itself
	r := httptest.NewRequest(method, testOrigin+target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	b.ServeHTTP(w, r)
	return w
}

// ServeHTTP sends r from the browser, with its address and cookies, to the console, and keeps
// the cookies and the CSRF token of the answer. A scenario's request goes through it.
func (b *browser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.RemoteAddr = "192.0.2.7:50000"
	for _, c := range b.cookies {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	rec := httptest.NewRecorder()
	b.f.ServeHTTP(rec, r)
	for _, c := range rec.Result().Cookies() {
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	if m := csrfRE.FindStringSubmatch(rec.Body.String()); m != nil && !strings.Contains(rec.Body.String(), `action="/console/signin"`) {
		b.csrf = m[1]
	}
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// scenario is one request from a browser to the console and what its answer must hold.
type scenario = httpscenario.Scenario[options, *browser]

// signedIn serves each scenario of Run from a browser signed in to a console of its own; RunOn
// and Test serve them from the browser given.
var signedIn = httpscenario.Runner[options, *browser]{
	Open: func(tb testing.TB, opts ...func(*options)) *browser {
		tb.Helper()
		return MustOpen(tb, opts...).signedIn(tb)
	},
	Handler: func(b *browser) http.Handler { return b },
	Base:    testOrigin,
}

// withCSRF is form with the session's CSRF token added, as the page's form sends it.
func withCSRF(form url.Values) func(*browser) url.Values {
	return func(b *browser) url.Values {
		v := maps.Clone(form)
		if v == nil {
			v = url.Values{}
		}
		v.Set("csrf", b.csrf)
		return v
	}
}

// leadsTo checks the page a 303 leads to: it is 200 and holds subs.
func leadsTo(subs ...string) func(*testing.T, *browser, *httptest.ResponseRecorder) {
	return func(t *testing.T, b *browser, rec *httptest.ResponseRecorder) {
		t.Helper()
		wantContains(t, "the page after "+rec.Header().Get("Location"), b.page(t, rec.Header().Get("Location")), subs...)
	}
}

// page GETs a page of the console and fails unless it is 200.
func (b *browser) page(tb testing.TB, path string) string {
	tb.Helper()
	w := b.do(http.MethodGet, path, nil)
	if w.Code != http.StatusOK {
		tb.Fatalf("GET %s: %d, want 200; Location %q\n%s", path, w.Code, w.Header().Get("Location"), w.Body)
	}
	return w.Body.String()
}

// post sends a form with the session's CSRF token, as the page's form would.
func (b *browser) post(path string, form url.Values) *httptest.ResponseRecorder {
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", b.csrf)
	}
	return b.do(http.MethodPost, path, form)
}

// mustPost posts a form and fails unless it is answered 303; it returns the next page's body.
func (b *browser) mustPost(tb testing.TB, path string, form url.Values) string {
	tb.Helper()
	w := b.post(path, form)
	if w.Code != http.StatusSeeOther {
		tb.Fatalf("POST %s: %d, want 303\n%s", path, w.Code, w.Body)
	}
	return b.page(tb, w.Header().Get("Location"))
}

// signInForm GETs the sign-in page and returns its form's CSRF token.
func (b *browser) signInForm(tb testing.TB) string {
	tb.Helper()
	w := b.do(http.MethodGet, "/console/signin", nil)
	m := csrfRE.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil {
		tb.Fatalf("sign-in page: %d\n%s", w.Code, w.Body)
	}
	return m[1]
}

// signIn signs the browser in and reads the session's CSRF token from the first page.
func (b *browser) signIn(tb testing.TB) *browser {
	tb.Helper()
	tok := b.signInForm(tb)
	w := b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {testPassword}})
	if w.Code != http.StatusSeeOther {
		tb.Fatalf("sign in: %d, want 303\n%s", w.Code, w.Body)
	}
	b.page(tb, w.Header().Get("Location"))
	if b.csrf == "" {
		tb.Fatal("no CSRF token on the first page after signing in")
	}
	return b
}

func (f *fixture) signedIn(tb testing.TB) *browser { return f.browser().signIn(tb) }

func wantContains(tb testing.TB, what, body string, subs ...string) {
	tb.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			tb.Errorf("%s lacks %q", what, s)
		}
	}
}

func wantNotContains(tb testing.TB, what, body string, subs ...string) {
	tb.Helper()
	for _, s := range subs {
		if strings.Contains(body, s) {
			tb.Errorf("%s contains %q", what, s)
		}
	}
}

// entries are the audit log's entries of the console, oldest first, as "method outcome".
func (f *fixture) entries(tb testing.TB) []string {
	tb.Helper()
	es, _, err := f.audit.Query(audit.Filter{OldestFirst: true})
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.Transport == "console" {
			out = append(out, e.Method+" "+string(e.Outcome))
		}
	}
	return out
}

// TestNew: the required fields.
func TestNew(t *testing.T) {
	f := MustOpen(t)
	for name, cfg := range map[string]console.Config{
		"no memories": {Auth: func() *oauth.Server { return f.auth }},
		"no auth":     {Memories: f.mem},
	} {
		if _, err := console.New(cfg); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// TestConsole_Headers: every response carries the page headers; the static files are served
// from a path with their digest, cacheable; an unknown path is a 404 page and a path served for
// another method is 405.
func TestConsole_Headers(t *testing.T) {
	f := MustOpen(t)
	b := f.signedIn(t)
	pageHeaders := map[string]string{
		"Content-Security-Policy": console.CSP,
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"Content-Type":            "text/html; charset=utf-8",
	}
	get := func(path string, status int) scenario {
		return scenario{Name: "GET " + path, Method: http.MethodGet, URL: path, WantStatus: status, WantHeaders: pageHeaders,
			WantNoBody: []string{"http://", "https://"}} // a page names no other origin
	}
	signedIn.RunOn(t, b, []scenario{
		get("/console/signin", http.StatusSeeOther), // signed in already: on to the console
		get("/console/memories", http.StatusOK),
		get("/console/memories/99", http.StatusNotFound),
		get("/console/trash", http.StatusOK),
		get("/console/review", http.StatusOK),
		get("/console/connections", http.StatusOK),
		get("/console/activity", http.StatusOK),
		get("/console/system", http.StatusOK),
		get("/console/nope", http.StatusNotFound),
		{Name: "GET of a POST path", Method: http.MethodGet, URL: "/console/trash/empty",
			WantStatus: http.StatusMethodNotAllowed, WantHeaders: map[string]string{"Allow": "POST"}},
	})

	body := b.page(t, "/console/memories")
	assets := regexp.MustCompile(`(?:href|src)="(/console/static/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(assets) != 3 {
		t.Fatalf("assets %v, want the icon, stylesheet and script", assets)
	}
	var static []scenario
	for _, a := range assets {
		static = append(static, scenario{Name: "GET " + a[1], Method: http.MethodGet, URL: a[1], WantStatus: http.StatusOK,
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") || rec.Body.Len() == 0 {
					t.Errorf("%v, %d bytes: want immutable and a body", rec.Header(), rec.Body.Len())
				}
				if ct := rec.Header().Get("Content-Type"); !slices.Contains([]string{"image/svg+xml", "text/css; charset=utf-8", "text/javascript; charset=utf-8"}, ct) {
					t.Errorf("Content-Type %q", ct)
				}
			}})
	}
	static = append(static, scenario{Name: "a stale asset path", Method: http.MethodGet, URL: "/console/static/000000000000/console.css",
		WantStatus: http.StatusNotFound})
	signedIn.RunOn(t, b, static)
}

// TestConsole_NotOpenYet: while the authorization server is not open, 503.
func TestConsole_NotOpenYet(t *testing.T) {
	f := MustOpen(t, func(o *options) {
		o.cfg = func(c *console.Config) { c.Auth = func() *oauth.Server { return nil } }
	})
	w := httptest.NewRecorder()
	f.ServeHTTP(w, httptest.NewRequest(http.MethodGet, testOrigin+"/console/memories", nil))
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("status %d, want 503", w.Code)
	}
}

func memURL(id uint64) string { return fmt.Sprintf("/console/memories/%d", id) }

// snapshot describes what the console can change: every memory with its tombstone, the
// personal access tokens and the registered clients.
func (f *fixture) snapshot(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	var export strings.Builder
	if err := f.mem.Export(&export, true); err != nil {
		tb.Fatal(err)
	}
	_, memories, _ := strings.Cut(export.String(), "\n") // after the header, which has the time of the export
	b.WriteString(memories)
	pats, err := f.auth.PATs().List()
	if err != nil {
		tb.Fatal(err)
	}
	for _, p := range pats {
		fmt.Fprintf(&b, "pat %s %s\n", p.ID, p.Name)
	}
	clients, err := f.auth.Grants().Clients()
	if err != nil {
		tb.Fatal(err)
	}
	for _, c := range clients {
		fmt.Fprintf(&b, "client %s %v\n", c.ID, c.AuthorizedAt)
	}
	return b.String()
}

func grantMeta(name string, redirects ...string) grant.ClientMeta {
	return grant.ClientMeta{Name: name, RedirectURIs: redirects}
}

// auditEntry is an MCP tool call by client, as web records it.
func auditEntry(client, tool string) audit.Entry {
	return audit.Entry{Client: client, ClientID: "cl_test", Transport: audit.TransportHTTP, Method: "tools/call", Tool: tool,
		Outcome: audit.OutcomeOK, Status: http.StatusOK, Duration: 3 * time.Millisecond}
}

// both runs the checks a and b, in order.
func both(a, b func(*testing.T, *browser, *httptest.ResponseRecorder)) func(*testing.T, *browser, *httptest.ResponseRecorder) {
	return func(t *testing.T, f *browser, rec *httptest.ResponseRecorder) {
		t.Helper()
		a(t, f, rec)
		b(t, f, rec)
	}
}
