package oauth

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/crypto/bcrypt"

	"github.com/ownsona/ownsona/internal/httpscenario"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth/cimd"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/login"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// The assembled authorization server under test: these tests drive Server.Routes and
// Server.Authenticate over HTTP, as a browser and a client would, for SECURITY.md §2.1 (AS-*) and
// §2.2 (RS-*). The parts (policy, token, grant, login, cimd) have their own unit tests.

const (
	testPublicURL = "https://mem.example.com"
	testResource  = "https://mem.example.com/mcp"
	testPassword  = "correct horse battery staple"
	testRedirect  = "https://client.example/cb"
	testState     = "st-8a1b"
)

// fastPassword is a bcrypt hash at the minimum cost of testPassword. Most tests configure it
// rather than the plain text, which New would hash with argon2id (19 MiB, about 200 ms under the
// race detector) and every login would check the same way; TestServer_Flow uses the plain text.
var fastPassword = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
})

// syncBuffer is a log sink that many goroutines may write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// fixture is a Server on a temporary file, mounted on a mux with a dummy /mcp guarded by
// Authenticate.
type fixture struct {
	tb     testing.TB
	opened time.Time // when MustOpenServer opened it
	cfg    Config
	path   string
	db     *kv.DB
	s      *Server
	mux    *http.ServeMux
	logs   *syncBuffer
	ips    atomic.Uint32

	mu      sync.Mutex
	secrets []string // tokens, codes, cookies and passwords seen: none may be logged (RS-14)
}

// MustOpenServer opens a Server for testPublicURL on a new database file, on the real time
// functions and with a captured log; opts adjust its Config. A test that authorizes opens it in a
// testing/synctest bubble, where time is the bubble's: login.ConsentDelay, which the owner must
// wait before allowing, and any time.Sleep pass at once. Cleanup closes it and fails the test if any secret the
// fixture saw appears in the log (SECURITY.md RS-14).
func MustOpenServer(tb testing.TB, opts ...func(*Config)) *fixture {
	tb.Helper()
	f := &fixture{tb: tb, opened: time.Now(), path: filepath.Join(tb.TempDir(), "ownsona.db"), logs: new(syncBuffer)}
	db := kvtest.OpenFile(tb, f.path, kv.Options{})
	f.db = db
	f.cfg = Config{PublicURL: testPublicURL, DB: db, Password: fastPassword(), Log: zerolog.New(f.logs)}
	for _, o := range opts {
		o(&f.cfg)
	}
	s, err := New(f.cfg)
	if err != nil {
		tb.Fatal(err)
	}
	f.s = s
	f.mux = http.NewServeMux()
	s.Routes(f.mux)
	guarded := func(w http.ResponseWriter, r *http.Request) {
		p, ref := s.Authenticate(r)
		if ref != nil {
			s.Challenge(w, r, ref)
			http.Error(w, ref.Description, ref.Status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p)
	}
	for _, path := range append([]string{MCPPath}, MCPAliases...) {
		f.mux.HandleFunc(path, guarded)
	}
	tb.Cleanup(func() {
		s.Close()
		logs := f.logs.String()
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, sec := range f.secrets {
			if sec != "" && strings.Contains(logs, sec) {
				tb.Errorf("RS-14: a secret (%.10s…) appears in the log", sec)
			}
		}
	})
	return f
}

// keep records secrets that must never be logged.
func (f *fixture) keep(secrets ...string) {
	f.mu.Lock()
	f.secrets = append(f.secrets, secrets...)
	f.mu.Unlock()
}

func (f *fixture) serve(r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, r)
	return w
}

func (f *fixture) post(path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return f.serve(r)
}

// count returns the number of records in a bucket.
func (f *fixture) count(tb testing.TB, bucket string) int {
	tb.Helper()
	n := 0
	err := f.db.View(func(tx *kv.Tx) error {
		b := tx.Bucket(bucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(_, _ []byte) error { n++; return nil })
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// withPairs returns base with pairs ("name", "value", …) set; an empty value deletes the name.
func withPairs(base url.Values, pairs ...string) url.Values {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			base.Del(pairs[i])
		} else {
			base.Set(pairs[i], pairs[i+1])
		}
	}
	return base
}

// scenario is one request to the server's routes and what its answer must hold.
type scenario = httpscenario.Scenario[Config, *fixture]

// scenarios serves scenarios through a fixture's routes.
var scenarios = httpscenario.Runner[Config, *fixture]{
	Open:    MustOpenServer,
	Handler: func(f *fixture) http.Handler { return f.mux },
}

// jsonHeaders are the headers of every JSON answer of the token, registration and revocation
// endpoints (SECURITY.md AS-33).
var jsonHeaders = map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}

// oauthError is the member of an OAuth JSON error answer that names code.
func oauthError(code string) string { return `"error":"` + code + `"` }

// fromNewAddress sends a request from an address of its own, so that tests registering many
// clients stay under the per-IP limit.
func fromNewAddress(f *fixture, r *http.Request) {
	r.RemoteAddr = net.JoinHostPort(fmt.Sprintf("2001:db8:%x::1", f.ips.Add(1)), "40000") // a /64 of its own: the limiter counts IPv6 by /64
}

// ---- the token endpoint ----

// oauthJSON decodes a JSON response of the token, registration or revocation endpoint, checking
// the headers each must carry (SECURITY.md AS-33). It reports problems with Errorf only, so that
// goroutines may use it.
func (f *fixture) oauthJSON(tb testing.TB, w *httptest.ResponseRecorder) map[string]any {
	tb.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json (status %d, body %s)", ct, w.Code, w.Body)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		tb.Errorf("Cache-Control = %q, want no-store", cc)
	}
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		tb.Errorf("body %q: %v", w.Body, err)
		return map[string]any{}
	}
	for _, k := range []string{"access_token", "refresh_token"} {
		if s, ok := m[k].(string); ok {
			f.keep(s)
		}
	}
	return m
}

// tokenRaw POSTs body to /oauth/token.
func (f *fixture) tokenRaw(tb testing.TB, body string) (int, map[string]any) {
	tb.Helper()
	w := f.post("/oauth/token", body)
	return w.Code, f.oauthJSON(tb, w)
}

// wantError checks an OAuth JSON error response.
func wantError(tb testing.TB, status int, body map[string]any, wantStatus int, wantCode string) {
	tb.Helper()
	if status != wantStatus || body["error"] != wantCode {
		tb.Errorf("got %d %v, want %d %s", status, body, wantStatus, wantCode)
	}
	if _, ok := body["access_token"]; ok {
		tb.Errorf("an error response carries an access token: %v", body)
	}
}

// tokens are what a successful token response holds.
type tokens struct {
	AT, RT string
	Body   map[string]any
}

func (f *fixture) mustTokens(tb testing.TB, status int, body map[string]any) tokens {
	tb.Helper()
	if status != http.StatusOK {
		tb.Fatalf("token request: %d %v", status, body)
	}
	at, _ := body["access_token"].(string)
	rt, _ := body["refresh_token"].(string)
	if at == "" || !strings.HasPrefix(rt, token.PrefixRefresh) {
		tb.Fatalf("token response without tokens: %v", body)
	}
	return tokens{AT: at, RT: rt, Body: body}
}

// exchange redeems a's code; pairs adjust the request.
func (f *fixture) exchange(tb testing.TB, a authz, pairs ...string) (int, map[string]any) {
	tb.Helper()
	q := withPairs(url.Values{"grant_type": {"authorization_code"}, "code": {a.code}, "code_verifier": {a.verifier},
		"client_id": {a.client}, "redirect_uri": {a.redirect}}, pairs...)
	return f.tokenRaw(tb, q.Encode())
}

func (f *fixture) MustExchange(tb testing.TB, a authz, pairs ...string) tokens {
	tb.Helper()
	status, body := f.exchange(tb, a, pairs...)
	return f.mustTokens(tb, status, body)
}

// refresh redeems rt for client; pairs adjust the request.
func (f *fixture) refresh(tb testing.TB, client, rt string, pairs ...string) (int, map[string]any) {
	tb.Helper()
	q := withPairs(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}}, pairs...)
	return f.tokenRaw(tb, q.Encode())
}

func (f *fixture) MustRefresh(tb testing.TB, client, rt string, pairs ...string) tokens {
	tb.Helper()
	status, body := f.refresh(tb, client, rt, pairs...)
	return f.mustTokens(tb, status, body)
}

// ---- registration ----

// registerRaw POSTs body to /oauth/register from ip, or from a new address when ip is "", so that
// tests registering many clients stay under the per-IP limit.
func (f *fixture) registerRaw(body, ip string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if ip == "" {
		fromNewAddress(f, r)
	} else {
		r.RemoteAddr = net.JoinHostPort(ip, "40000")
	}
	return f.serve(r)
}

// MustRegister registers a client named name with redirect URIs and returns its client_id.
func (f *fixture) MustRegister(tb testing.TB, name string, uris ...string) string {
	tb.Helper()
	meta := map[string]any{"redirect_uris": uris}
	if name != "" {
		meta["client_name"] = name
	}
	body, _ := json.Marshal(meta)
	w := f.registerRaw(string(body), "")
	m := f.oauthJSON(tb, w)
	id, _ := m["client_id"].(string)
	if w.Code != http.StatusCreated || id == "" {
		tb.Fatalf("register: %d %s", w.Code, w.Body)
	}
	return id
}

// ---- the browser ----

// browser is the owner's browser: it keeps the session cookie.
type browser struct {
	f       *fixture
	cookies map[string]*http.Cookie
}

func (f *fixture) browser() *browser { return &browser{f: f, cookies: map[string]*http.Cookie{}} }

// do sends a request with the browser's cookies and a form body when form is not nil.
func (b *browser) do(method, target string, form url.Values, hdr map[string]string) *httptest.ResponseRecorder {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	r := httptest.NewRequest(method, target, body)
	if form != nil {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	for _, c := range b.cookies {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	w := b.f.serve(r)
	for _, c := range w.Result().Cookies() {
		b.f.keep(c.Value)
		if c.MaxAge < 0 {
			delete(b.cookies, c.Name)
		} else {
			b.cookies[c.Name] = c
		}
	}
	return w
}

var (
	formActionRE = regexp.MustCompile(`<form method="post" action="([^"]*)">`)
	hiddenRE     = regexp.MustCompile(`<input type="hidden" name="(txn|csrf)" value="([^"]*)">`)
)

// formFields returns the action and hidden fields of the login or consent page in body, or
// empty strings when it has no form.
func formFields(body string) (action, txn, csrf string) {
	if m := formActionRE.FindStringSubmatch(body); m != nil {
		action = m[1]
	}
	for _, m := range hiddenRE.FindAllStringSubmatch(body, -1) {
		switch m[1] {
		case "txn":
			txn = m[2]
		case "csrf":
			csrf = m[2]
		}
	}
	return action, txn, csrf
}

// toConsent opens /oauth/authorize?query, signs in when the login page shows (each step
// answering as AS-19 requires), and returns the consent form's txn and csrf.
func (b *browser) toConsent(tb testing.TB, query string) (txn, csrf string) {
	tb.Helper()
	w := b.do(http.MethodGet, "/oauth/authorize?"+query, nil, nil)
	if w.Code != http.StatusOK || w.Header().Get("Location") != "" {
		tb.Fatalf("GET /oauth/authorize?%s: %d %v %s", query, w.Code, w.Header(), w.Body)
	}
	action, txn, csrf := formFields(w.Body.String())
	if action == login.PathLogin {
		w = b.do(http.MethodPost, login.PathLogin, url.Values{"txn": {txn}, "csrf": {csrf},
			"username": {DefaultUsername}, "password": {testPassword}}, nil)
		loc := w.Header().Get("Location")
		if w.Code != http.StatusSeeOther || !strings.HasPrefix(loc, login.PathContinue+"?txn=") {
			tb.Fatalf("AS-19: POST %s: %d %q, want 303 to %s", login.PathLogin, w.Code, loc, login.PathContinue)
		}
		w = b.do(http.MethodGet, loc, nil, nil)
		if w.Code != http.StatusOK {
			tb.Fatalf("GET %s: %d %s", loc, w.Code, w.Body)
		}
		action, txn, csrf = formFields(w.Body.String())
	}
	if action != login.PathConsent || txn == "" || csrf == "" {
		tb.Fatalf("expected the consent page, got %s", w.Body)
	}
	return txn, csrf
}

// decide posts the owner's decision ("allow" or "deny") and returns where the browser is sent.
// Allow waits login.ConsentDelay first, as the owner reading the page does.
func (b *browser) decide(tb testing.TB, txn, csrf, action string) *url.URL {
	tb.Helper()
	if action == "allow" {
		b.f.waitConsentDelay()
	}
	w := b.do(http.MethodPost, login.PathConsent, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {action}}, nil)
	if w.Code != http.StatusSeeOther {
		tb.Fatalf("AS-19: POST %s: %d %s, want 303", login.PathConsent, w.Code, w.Body)
	}
	u, err := url.Parse(w.Header().Get("Location"))
	if err != nil {
		tb.Fatal(err)
	}
	if c := u.Query().Get("code"); c != "" {
		b.f.keep(c)
	}
	return u
}

// waitConsentDelay lets login.ConsentDelay pass: at once in a synctest bubble, in a second outside.
func (f *fixture) waitConsentDelay() { time.Sleep(login.ConsentDelay) }

// authorize runs the whole browser step and returns the redirect to the client.
func (b *browser) authorize(tb testing.TB, query string) *url.URL {
	tb.Helper()
	txn, csrf := b.toConsent(tb, query)
	return b.decide(tb, txn, csrf, "allow")
}

// newVerifier returns a new PKCE code_verifier of 43 characters.
func newVerifier() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// authQuery is a valid authorization request for client; pairs adjust it.
func authQuery(client, redirect, challenge string, pairs ...string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "state": {testState}, "resource": {testResource}}
	return withPairs(q, pairs...).Encode()
}

// authz is an approved authorization request and its code.
type authz struct {
	client, redirect, verifier, code string
	b                                *browser
}

// MustAuthorize registers a client and has the owner approve it in a new browser; pairs adjust
// the authorization request.
func (f *fixture) MustAuthorize(tb testing.TB, pairs ...string) authz {
	tb.Helper()
	client := f.MustRegister(tb, "Test Client", testRedirect)
	return f.MustAuthorizeClient(tb, f.browser(), client, testRedirect, pairs...)
}

// MustAuthorizeClient has the owner approve client in browser b.
func (f *fixture) MustAuthorizeClient(tb testing.TB, b *browser, client, redirect string, pairs ...string) authz {
	tb.Helper()
	v := newVerifier()
	f.keep(v)
	loc := b.authorize(tb, authQuery(client, redirect, policy.ChallengeS256(v), pairs...))
	code := loc.Query().Get("code")
	if !strings.HasPrefix(code, token.PrefixCode) {
		tb.Fatalf("no code in %s", loc)
	}
	return authz{client: client, redirect: redirect, verifier: v, code: code, b: b}
}

// ---- the resource server ----

// mcp sends a request to /mcp with bearer at (none when empty).
func (f *fixture) mcp(at string) *httptest.ResponseRecorder { return f.mcpAt("/mcp", at) }

// mcpAt sends a request to path, the MCP endpoint or an alias, with bearer at (none when empty).
func (f *fixture) mcpAt(path, at string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader("{}"))
	if at != "" {
		r.Header.Set("Authorization", "Bearer "+at)
	}
	return f.serve(r)
}

// wantAuthorized checks that at is accepted and returns the principal.
func (f *fixture) wantAuthorized(tb testing.TB, at string) Principal {
	tb.Helper()
	w := f.mcp(at)
	var p Principal
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &p) != nil {
		tb.Errorf("/mcp: %d %s, want 200", w.Code, strings.TrimSpace(w.Body.String()))
	}
	return p
}

// wantRefused checks that at is refused with 401 invalid_token and the RFC 9728 challenge.
func (f *fixture) wantRefused(tb testing.TB, at string) string {
	tb.Helper()
	w := f.mcp(at)
	challenge := w.Header().Get("WWW-Authenticate")
	if w.Code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
		!strings.Contains(challenge, `resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp"`) {
		tb.Errorf("/mcp: %d %q %s, want 401 invalid_token", w.Code, challenge, strings.TrimSpace(w.Body.String()))
	}
	return w.Body.String()
}

// jwtPart decodes the header (0) or the claims (1) of a JWT.
func jwtPart(tb testing.TB, tok string, i int) map[string]any {
	tb.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		tb.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// wantPageHeaders checks the headers of an HTML page or a response of the login pages
// (SECURITY.md AS-21, AS-22).
func wantPageHeaders(tb testing.TB, what string, w *httptest.ResponseRecorder) {
	tb.Helper()
	h := w.Header()
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		tb.Errorf("%s: AS-21: Content-Security-Policy = %q", what, csp)
	}
	for k, v := range map[string]string{"X-Frame-Options": "DENY", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
		if got := h.Get(k); got != v {
			tb.Errorf("%s: %s = %q, want %q", what, k, got, v)
		}
	}
	// Only a same-origin path may be linked (the consent page's sign-out link).
	if strings.HasPrefix(h.Get("Content-Type"), "text/html") && regexp.MustCompile(`(?i)\s(src|href)\s*=\s*["']?(//|[^/"'])`).MatchString(w.Body.String()) {
		tb.Errorf("%s: AS-22: the page loads or links something: %s", what, w.Body)
	}
}

// bubbleRow is a row of a table that bubbleTable runs.
type bubbleRow struct {
	name string
	test func(t *testing.T)
}

// bubbleTable runs the rows of a table whose fixture an authorization set up, each as a parallel
// subtest in a testing/synctest bubble of its own, where login.ConsentDelay passes at once. A
// bubble cannot start subtests, so each row has a fixture of its own: setup, run in the row's
// bubble, opens it, does what the rows share and returns them, and then, what must hold after
// each row on its fixture (nil: nothing); it runs once first to learn the rows' names.
func bubbleTable(t *testing.T, setup func(t *testing.T) (rows []bubbleRow, then func(t *testing.T))) {
	t.Helper()
	var names []string
	synctest.Test(t, func(t *testing.T) {
		rows, _ := setup(t)
		for _, r := range rows {
			names = append(names, r.name)
		}
	})
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				rows, then := setup(t)
				if len(rows) != len(names) || rows[i].name != name {
					t.Fatalf("setup returned other rows than %q", names)
				}
				rows[i].test(t)
				if then != nil {
					then(t)
				}
			})
		})
	}
}

// ---- tests ----

// TestServer_Flow is the happy path with the configured plain-text password: registration,
// authorization, login, consent, code exchange, /mcp and a refresh (AS-19, AS-28 warning, AS-33,
// AS-34 default audience).
func TestServer_Flow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t, func(c *Config) { c.Password = testPassword })
		f.keep(testPassword)
		a := f.MustAuthorize(t)
		tk := f.MustExchange(t, a)

		p := f.wantAuthorized(t, tk.AT)
		if p.Kind != "oauth" || p.ClientID != a.client || p.Name != "Test Client" || !slices.Equal(p.Scope, policy.DefaultScopes) {
			t.Errorf("principal = %+v", p)
		}
		hdr, claims := jwtPart(t, tk.AT, 0), jwtPart(t, tk.AT, 1)
		if hdr["typ"] != "at+jwt" || hdr["alg"] != "EdDSA" || hdr["kid"] != f.s.Keys().ActiveKID() {
			t.Errorf("header = %v", hdr)
		}
		if claims["iss"] != testPublicURL || claims["aud"] != testResource || claims["sub"] != DefaultUsername ||
			claims["client_id"] != a.client || claims["scope"] != "memories:read memories:write" ||
			!strings.HasPrefix(fmt.Sprint(claims["grant_id"]), grant.GrantIDPrefix) {
			t.Errorf("claims = %v", claims)
		}

		for _, name := range []string{login.CookieSecure, login.DeviceCookieSecure} { // the session, and the device that signed in
			c := a.b.cookies[name]
			if c == nil || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" || len(a.b.cookies) != 2 {
				t.Errorf("AS-24: cookies %v", a.b.cookies)
			}
		}

		tk2 := f.MustRefresh(t, a.client, tk.RT)
		if tk2.RT == tk.RT || tk2.AT == tk.AT {
			t.Errorf("refresh did not rotate")
		}
		f.wantAuthorized(t, tk2.AT)
		if !strings.Contains(f.logs.String(), login.PlainTextWarning) {
			t.Errorf("AS-28: no warning for the plain-text password in the log")
		}
	})
}

// TestServer_AuthorizeRefused is SECURITY.md AS-02, AS-05 (a–c), AS-18, AS-25 (prompt=none),
// AS-34 and AS-35 at /authorize, and AS-36 (response_type=token): an invalid request gets our
// own HTML error page, never a redirect, from an anonymous browser and from a logged-in one,
// and no code is issued, when the client or its redirect URI is not known good (every case,
// for a client the owner has approved) or when the redirect URI is not one this server trusts
// (the cases after the client and redirect checks, for a new client at a host of its own:
// nobody can make this server an open redirector, RFC 9700 §4.11.2).
func TestServer_AuthorizeRefused(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		one := f.MustRegister(t, "One", testRedirect)
		several := f.MustRegister(t, "Several", testRedirect, "https://client.example/other")
		fresh := f.MustRegister(t, "Fresh", testRedirect) // never approved, redirecting to its own host
		ch := policy.ChallengeS256(newVerifier())
		base := func(pairs ...string) string { return authQuery(one, testRedirect, ch, pairs...) }

		// Refused before the client and its redirect URI are known good: always the page.
		cases := []struct{ name, query, code string }{
			{"AS-02 unknown client", base("client_id", "cl_unknown"), policy.CodeInvalidClient},
			{"no client_id", base("client_id", ""), policy.CodeInvalidRequest},
			{"AS-02 unregistered redirect_uri", base("redirect_uri", "https://evil.example/cb"), policy.CodeInvalidRequest},
			{"AS-02 redirect_uri with a trailing slash", base("redirect_uri", testRedirect+"/"), policy.CodeInvalidRequest},
			{"AS-02 redirect_uri of another client", base("redirect_uri", "https://client.example/other"), policy.CodeInvalidRequest},
			{"AS-02 several registered, none sent", authQuery(several, "", ch), policy.CodeInvalidRequest},
			{"AS-35 duplicate client_id", base() + "&client_id=" + one, policy.CodeInvalidRequest},
			{"AS-35 duplicate redirect_uri", base() + "&redirect_uri=" + url.QueryEscape(testRedirect), policy.CodeInvalidRequest},
			{"AS-35 duplicate code_challenge", base() + "&code_challenge=" + ch, policy.CodeInvalidRequest},
			{"AS-35 duplicate state", base() + "&state=other", policy.CodeInvalidRequest},
			{"AS-35 duplicate resource", base() + "&resource=" + url.QueryEscape(testResource), policy.CodeInvalidRequest},
			{"AS-35 duplicate empty state", base("state", "") + "&state=&state=", policy.CodeInvalidRequest},
			{"malformed percent-encoding", base() + "&x=%zz", policy.CodeInvalidRequest},
		}
		// Refused after them: the page for the fresh client only (TestServer_AuthorizeErrorRedirect
		// has the redirects).
		for _, tc := range afterClientChecks {
			cases = append(cases, struct{ name, query, code string }{tc.name, authQuery(fresh, testRedirect, ch, tc.pairs...), tc.code})
		}

		loggedIn := f.browser()
		f.MustAuthorizeClient(t, loggedIn, one, testRedirect) // logs in, and issues one code
		codes := f.count(t, grant.BucketCodes)
		for _, who := range []struct {
			name string
			b    *browser
		}{{"anonymous", f.browser()}, {"logged in", loggedIn}} {
			for _, tc := range cases {
				rows = append(rows, bubbleRow{who.name + "/" + tc.name, func(t *testing.T) {
					w := who.b.do(http.MethodGet, "/oauth/authorize?"+tc.query, nil, nil)
					if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" ||
						w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
						t.Errorf("got %d %v, want an HTML 400 page without Location", w.Code, w.Header())
					}
					if action, _, _ := formFields(w.Body.String()); action != "" {
						t.Errorf("the error page has a form to %s", action)
					}
					if strings.Contains(w.Body.String(), "client.example") {
						t.Errorf("the error page links back to the client: %s", w.Body)
					}
					wantPageHeaders(t, "error page", w)
					_, status, err := f.s.authorizationRequest(context.Background(), tc.query)
					if got := policy.CodeOf(err); got != tc.code || status != http.StatusBadRequest {
						t.Errorf("authorizationRequest: %d %q (%v), want %s", status, got, err, tc.code)
					}
					if tc.code == policy.CodeUnsupportedResponseType && !strings.Contains(f.logs.String(), `"error":"unsupported_response_type"`) {
						t.Errorf("AS-36: the refusal of %s is not logged as unsupported_response_type", tc.query)
					}
				}})
			}
		}
		return rows, func(t *testing.T) {
			if got := f.count(t, grant.BucketCodes); got != codes {
				t.Errorf("%d codes stored after the refused requests, want %d", got, codes)
			}
		}
	})
}

// afterClientChecks are authorization requests that are wrong once the client and its redirect
// URI are known good (pairs adjust authQuery), and their error codes.
var afterClientChecks = []struct {
	name  string
	pairs []string
	code  string
}{
	{"AS-36 response_type=token", []string{"response_type", "token"}, policy.CodeUnsupportedResponseType},
	{"AS-36 response_type=code id_token", []string{"response_type", "code id_token"}, policy.CodeUnsupportedResponseType},
	{"no response_type", []string{"response_type", ""}, policy.CodeInvalidRequest},
	{"AS-05a no code_challenge", []string{"code_challenge", ""}, policy.CodeInvalidRequest},
	{"AS-05b method plain", []string{"code_challenge_method", "plain", "code_challenge", strings.Repeat("p", 43)}, policy.CodeInvalidRequest},
	{"AS-05b no method", []string{"code_challenge_method", ""}, policy.CodeInvalidRequest},
	{"AS-05c short challenge", []string{"code_challenge", strings.Repeat("A", 42)}, policy.CodeInvalidRequest},
	{"AS-05c challenge not base64url", []string{"code_challenge", strings.Repeat("+", 43)}, policy.CodeInvalidRequest},
	{"AS-18 invalid scope", []string{"scope", "memories:read admin"}, policy.CodeInvalidScope},
	{"AS-18 prompt=none", []string{"prompt", "none"}, policy.CodeConsentRequired},
	{"AS-34 foreign resource", []string{"resource", "https://other.example/mcp"}, policy.CodeInvalidTarget},
	{"AS-34 relative resource", []string{"resource", "/mcp"}, policy.CodeInvalidTarget},
	{"AS-34 resource with a fragment", []string{"resource", testResource + "#x"}, policy.CodeInvalidTarget},
	{"AS-34 resource on http", []string{"resource", "http://mem.example.com/mcp"}, policy.CodeInvalidTarget},
}

// TestServer_AuthorizeErrorRedirect is RFC 6749 §4.1.2.1 with RFC 9207 (SECURITY.md AS-32): once
// the client and its redirect URI are known good, and the redirect URI is one this server
// trusts, an invalid request goes back to the client as a 302 with error, error_description,
// state (when sent) and iss, each once, appended to the redirect URI's own query, from an
// anonymous browser; no code is issued. Trusted: loopback, an allowlisted app scheme, the
// hosted assistants' callbacks, the redirect host allowlist, and any redirect URI of a client
// the owner has approved before.
func TestServer_AuthorizeErrorRedirect(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t, func(c *Config) {
			c.RedirectHosts = []string{"client.example", "apps.example", "claude.ai", "chatgpt.com"}
		})
		const (
			loopback = "http://127.0.0.1:49152/oauth/callback"
			claude   = "https://claude.ai/api/mcp/auth_callback"
			chatgpt  = "https://chatgpt.com/connector_platform_oauth_redirect"
			cursor   = "cursor://anysphere.cursor-mcp/oauth/callback"
			allowed  = "https://apps.example/cb?tenant=a%20b&x=1"
		)
		approved := f.MustRegister(t, "Approved", testRedirect)
		f.MustAuthorizeClient(t, f.browser(), approved, testRedirect)
		clients := []struct{ name, client, redirect string }{
			{"approved client", approved, testRedirect},
			{"loopback", f.MustRegister(t, "Loopback", loopback), loopback},
			{"claude.ai", f.MustRegister(t, "Claude", claude), claude},
			{"chatgpt.com", f.MustRegister(t, "ChatGPT", chatgpt), chatgpt},
			{"cursor scheme", f.MustRegister(t, "Cursor", cursor), cursor},
			{"allowlisted host with a query", f.MustRegister(t, "Apps", allowed), allowed},
		}
		codes := f.count(t, grant.BucketCodes)
		b := f.browser()
		ch := policy.ChallengeS256(newVerifier())
		for _, c := range clients {
			for _, tc := range afterClientChecks {
				rows = append(rows, bubbleRow{c.name + "/" + tc.name, func(t *testing.T) {
					w := b.do(http.MethodGet, "/oauth/authorize?"+authQuery(c.client, c.redirect, ch, tc.pairs...), nil, nil)
					if w.Code != http.StatusFound || w.Header().Get("Cache-Control") != "no-store" {
						t.Fatalf("got %d %v, want a 302 to the client", w.Code, w.Header())
					}
					loc := w.Header().Get("Location")
					own, _, _ := strings.Cut(c.redirect, "?")
					ownQuery := strings.TrimPrefix(c.redirect, own)
					if !strings.HasPrefix(loc, own+"?") || (ownQuery != "" && !strings.HasPrefix(loc, c.redirect+"&")) {
						t.Fatalf("Location %s, want %s with the error appended", loc, c.redirect)
					}
					u, err := url.Parse(loc)
					if err != nil {
						t.Fatal(err)
					}
					q, err := url.ParseQuery(u.RawQuery)
					if err != nil {
						t.Fatalf("Location query %q: %v", u.RawQuery, err)
					}
					want := map[string]string{"error": tc.code, "iss": testPublicURL, "state": testState}
					if ownQuery != "" {
						want["tenant"], want["x"] = "a b", "1"
					}
					for k, vs := range q {
						if k == "error_description" {
							if len(vs) != 1 || vs[0] == "" {
								t.Errorf("error_description %q", vs)
							}
							continue
						}
						if len(vs) != 1 || vs[0] != want[k] {
							t.Errorf("%s = %q, want %q once", k, vs, want[k])
						}
						delete(want, k)
					}
					if len(want) > 0 || q.Get("error_description") == "" {
						t.Errorf("missing %v in %s", want, loc)
					}
				}})
			}
		}
		rows = append(rows, bubbleRow{"no state", func(t *testing.T) {
			w := b.do(http.MethodGet, "/oauth/authorize?"+authQuery(approved, testRedirect, ch, "state", "", "scope", "everything"), nil, nil)
			u, _ := url.Parse(w.Header().Get("Location"))
			if q := u.Query(); w.Code != http.StatusFound || q.Has("state") || q.Get("error") != policy.CodeInvalidScope || q.Get("iss") != testPublicURL {
				t.Errorf("got %d %s", w.Code, w.Header().Get("Location"))
			}
		}})
		rows = append(rows, bubbleRow{"trustedRedirect", func(t *testing.T) {
			g := MustOpenServer(t) // no redirect host allowlist
			newClient := g.MustRegister(t, "New", "https://client.example/new")
			for _, tc := range []struct {
				client, redirect string
				want             bool
			}{
				{"https://claude.ai/oauth/mcp-client.json", "https://anything.example/cb", true}, // a metadata document's
				{newClient, "https://client.example/new", false},
				{newClient, "https://claude.com/api/mcp/auth_callback", true},
				{newClient, "http://localhost:1/cb", true},
				{newClient, "http://[::1]:1/cb", true},
				{newClient, "http://client.example/cb", false},
				{"cl_unknown", "https://client.example/new", false},
			} {
				if got := g.s.trustedRedirect(tc.client, tc.redirect); got != tc.want {
					t.Errorf("trustedRedirect(%s, %s) = %v, want %v", tc.client, tc.redirect, got, tc.want)
				}
			}
		}})
		return rows, func(t *testing.T) {
			if got := f.count(t, grant.BucketCodes); got != codes {
				t.Errorf("%d codes stored after the refused requests, want %d", got, codes)
			}
		}
	})
}

// TestServer_AuthorizeIgnoresUnknownParams is SECURITY.md AS-35: unknown parameters are ignored,
// and an empty one counts as omitted.
func TestServer_AuthorizeIgnoresUnknownParams(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		client := f.MustRegister(t, "", testRedirect)
		v := newVerifier()
		q := authQuery(client, testRedirect, policy.ChallengeS256(v)) + "&nonce=1&nonce=2&foo=bar&Client_ID=x&scope="
		loc := f.browser().authorize(t, q)
		code := loc.Query().Get("code")
		tk := f.MustExchange(t, authz{client: client, redirect: testRedirect, verifier: v, code: code}, "unknown", "x")
		if tk.Body["scope"] != "memories:read memories:write" {
			t.Errorf("an empty scope did not mean the default scopes: %v", tk.Body)
		}
	})
}

// TestServer_PKCEAtToken is SECURITY.md AS-05 (d–f): a token request without the right verifier
// fails and changes nothing.
func TestServer_PKCEAtToken(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		for _, tc := range []struct {
			name, verifier string
			codes          []string
		}{
			// Missing: invalid_request (a required parameter is missing, RFC 6749 §5.2) or invalid_grant.
			{"missing", "", []string{policy.CodeInvalidRequest, policy.CodeInvalidGrant}},
			{"wrong", newVerifier(), []string{policy.CodeInvalidGrant}},
			{"42 characters", a.verifier[:42], []string{policy.CodeInvalidGrant}},
			{"129 characters", a.verifier + strings.Repeat("a", 86), []string{policy.CodeInvalidGrant}},
			{"illegal characters", a.verifier[:42] + "+", []string{policy.CodeInvalidGrant}},
			{"the challenge itself (plain)", policy.ChallengeS256(a.verifier), []string{policy.CodeInvalidGrant}},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				status, body := f.exchange(t, a, "code_verifier", tc.verifier)
				if status != http.StatusBadRequest || !slices.Contains(tc.codes, fmt.Sprint(body["error"])) {
					t.Errorf("got %d %v, want 400 %v", status, body, tc.codes)
				}
			}})
		}
		return rows, func(t *testing.T) {
			f.wantAuthorized(t, f.MustExchange(t, a).AT)
		}
	})
}

// TestServer_CodeReuse is SECURITY.md AS-06: a code exchanged again fails, and kills what the
// first exchange issued.
func TestServer_CodeReuse(t *testing.T) {
	t.Parallel()
	for _, after := range []time.Duration{0, 30 * time.Second, 2 * time.Minute} {
		t.Run(after.String(), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := MustOpenServer(t)
				a := f.MustAuthorize(t)
				tk := f.MustExchange(t, a)
				f.wantAuthorized(t, tk.AT)
				time.Sleep(after)
				status, body := f.exchange(t, a)
				wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
				f.wantRefused(t, tk.AT)
				status, body = f.refresh(t, a.client, tk.RT)
				wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
				ev, err := f.s.Grants().Events(0)
				if err != nil || len(ev) != 1 || ev[0].Kind != grant.EventCodeReuse {
					t.Errorf("audit events = %+v, %v; want one %s", ev, err, grant.EventCodeReuse)
				}
			})
		})
	}
}

// TestServer_CodeReplayWithoutProof is SECURITY.md AS-07: a replay that fails a binding check is
// refused and does not revoke the rightful client's tokens.
func TestServer_CodeReplayWithoutProof(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		tk := f.MustExchange(t, a)
		other := f.MustRegister(t, "Other", testRedirect)
		for _, tc := range []struct {
			name   string
			pairs  []string
			status int
			code   string
		}{
			{"wrong verifier", []string{"code_verifier", newVerifier()}, 400, policy.CodeInvalidGrant},
			{"no verifier", []string{"code_verifier", ""}, 400, policy.CodeInvalidRequest},
			{"another client", []string{"client_id", other}, 400, policy.CodeInvalidGrant},
			{"unknown client", []string{"client_id", "cl_unknown"}, 401, policy.CodeInvalidClient},
			{"another redirect_uri", []string{"redirect_uri", "https://client.example/other"}, 400, policy.CodeInvalidGrant},
			{"foreign resource", []string{"resource", "https://other.example/mcp"}, 400, policy.CodeInvalidTarget},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				status, body := f.exchange(t, a, tc.pairs...)
				wantError(t, status, body, tc.status, tc.code)
			}})
		}
		return rows, func(t *testing.T) {
			f.wantAuthorized(t, tk.AT)
			f.wantAuthorized(t, f.MustRefresh(t, a.client, tk.RT).AT)
			if ev, _ := f.s.Grants().Events(0); len(ev) != 0 {
				t.Errorf("audit events after failed replays: %+v", ev)
			}
		}
	})
}

// TestServer_CodeExpiry is SECURITY.md AS-08: a code lives 60 seconds.
func TestServer_CodeExpiry(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		a1 := f.MustAuthorize(t)
		time.Sleep(59 * time.Second)
		f.MustExchange(t, a1)
		a2 := f.MustAuthorize(t)
		time.Sleep(61 * time.Second)
		status, body := f.exchange(t, a2)
		wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
	})
}

// TestServer_CodeBinding is SECURITY.md AS-09: a code is bound to its client, redirect URI and
// resource; a mismatch changes nothing.
func TestServer_CodeBinding(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		other := f.MustRegister(t, "Other", testRedirect)
		for _, tc := range []struct {
			name  string
			pairs []string
			code  string
		}{
			{"another client", []string{"client_id", other}, policy.CodeInvalidGrant},
			{"another redirect_uri", []string{"redirect_uri", "https://client.example/cb2"}, policy.CodeInvalidGrant},
			{"redirect_uri with another case", []string{"redirect_uri", "https://CLIENT.example/cb"}, policy.CodeInvalidGrant},
			{"foreign resource", []string{"resource", "https://other.example/mcp"}, policy.CodeInvalidTarget},
			{"another path of ours", []string{"resource", "https://mem.example.com/other"}, policy.CodeInvalidTarget},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				status, body := f.exchange(t, a, tc.pairs...)
				wantError(t, status, body, http.StatusBadRequest, tc.code)
			}})
		}
		return rows, func(t *testing.T) {
			tk := f.MustExchange(t, a, "resource", "HTTPS://MEM.EXAMPLE.COM/mcp")
			if aud := jwtPart(t, tk.AT, 1)["aud"]; aud != testResource {
				t.Errorf("aud = %v", aud)
			}
		}
	})
}

// TestServer_RefreshRotation is SECURITY.md AS-11: each refresh rotates; a rotated token presented
// after the grace window revokes the family, with an audit event.
func TestServer_RefreshRotation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		t0 := f.MustExchange(t, a)
		t1 := f.MustRefresh(t, a.client, t0.RT)
		f.wantAuthorized(t, t1.AT)
		time.Sleep(grant.DefaultGraceWindow + time.Second)
		status, body := f.refresh(t, a.client, t0.RT)
		wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
		status, body = f.refresh(t, a.client, t1.RT)
		wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
		f.wantRefused(t, t1.AT)
		f.wantRefused(t, t0.AT)
		ev, err := f.s.Grants().Events(0)
		if err != nil || len(ev) != 1 || ev[0].Kind != grant.EventRefreshReuse || ev[0].ClientID != a.client {
			t.Errorf("audit events = %+v, %v", ev, err)
		}
	})
}

// TestServer_ParallelRefresh is SECURITY.md AS-12 and AS-13: 2, 5 and 10 refreshes with one token
// at once. None fails: one rotates and the others, inside the grace window, get the same
// successor, so every racer holds the family's one working refresh token, and each a working
// access token. Past the window the rotated token revokes the family.
func TestServer_ParallelRefresh(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 5, 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := MustOpenServer(t)
				a := f.MustAuthorize(t)
				t0 := f.MustExchange(t, a)

				type result struct {
					status int
					body   map[string]any
				}
				results := make([]result, n)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						<-start
						results[i].status, results[i].body = f.refreshFrom(t, fmt.Sprintf("198.51.100.%d", i+1), a.client, t0.RT)
					})
				}
				close(start)
				wg.Wait()

				var won []tokens
				for _, r := range results {
					if r.status != http.StatusOK {
						t.Fatalf("a racing refresh failed: %d %v", r.status, r.body)
					}
					won = append(won, tokens{AT: r.body["access_token"].(string), RT: r.body["refresh_token"].(string)})
				}
				for _, w := range won {
					if w.RT != won[0].RT {
						t.Fatal("racing refreshes got different refresh tokens")
					}
					f.wantAuthorized(t, w.AT)
				}
				time.Sleep(grant.DefaultGraceWindow + time.Second)
				f.MustRefresh(t, a.client, won[0].RT)
				status, body := f.refresh(t, a.client, t0.RT)
				wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
				f.wantRefused(t, won[0].AT)
			})
		})
	}
}

// copyServer returns a fixture on a consistent copy of f's file, with f's configuration.
func (f *fixture) copyServer(tb testing.TB) *fixture {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "copy.db")
	out, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := f.db.Backup(out); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	c := &fixture{tb: tb, path: path, logs: new(syncBuffer)}
	c.db = kvtest.OpenFile(tb, path, kv.Options{})
	cfg := f.cfg
	cfg.DB, cfg.Log = c.db, zerolog.New(c.logs)
	if c.s, err = New(cfg); err != nil {
		tb.Fatal(err)
	}
	c.mux = http.NewServeMux()
	c.s.Routes(c.mux)
	tb.Cleanup(func() { c.s.Close() })
	return c
}

// refreshFrom redeems rt for client from the address ip, as a client behind another egress
// address or another process does.
func (f *fixture) refreshFrom(tb testing.TB, ip, client, rt string) (int, map[string]any) {
	tb.Helper()
	body := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {client}}.Encode()
	r := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = net.JoinHostPort(ip, "443")
	w := f.serve(r)
	return w.Code, f.oauthJSON(tb, w)
}

// mustRefreshFrom is refreshFrom that fails tb unless it succeeds.
func (f *fixture) mustRefreshFrom(tb testing.TB, ip, client, rt string) tokens {
	tb.Helper()
	status, body := f.refreshFrom(tb, ip, client, rt)
	return f.mustTokens(tb, status, body)
}

// TestServer_RefreshGraceWindow is SECURITY.md AS-13 (and AS-11, RFC 9700 §4.14.2) in a synctest
// bubble, with the server on the real time functions and the refreshes coming through /oauth/token
// from two addresses, as Claude.ai's two egress addresses and Claude Code's processes send them:
// a replay of the rotated token inside the window gets the successor already issued and a fresh
// access token, and revokes nothing; once the successor was used, or after the window, a replay
// revokes the family.
func TestServer_RefreshGraceWindow(t *testing.T) {
	t.Parallel()
	const ipA, ipB = "203.0.113.10", "198.51.100.20"
	t.Run("replays at 0 s, 10 s and 50 s from another address", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			t1 := f.mustRefreshFrom(t, ipA, a.client, t0.RT)
			for _, wait := range []time.Duration{0, 10 * time.Second, 40 * time.Second} {
				time.Sleep(wait)
				got := f.mustRefreshFrom(t, ipB, a.client, t0.RT)
				if got.RT != t1.RT {
					t.Fatalf("replay after %v: another refresh token, want the successor already issued", wait)
				}
				if got.AT == t1.AT {
					t.Fatal("replay: the same access token, want a fresh one")
				}
				f.wantAuthorized(t, got.AT)
				f.wantAuthorized(t, t1.AT)
			}
			t2 := f.mustRefreshFrom(t, ipB, a.client, t1.RT) // the successor works, from either address
			f.wantAuthorized(t, t2.AT)
			if ev, _ := f.s.Grants().Events(0); len(ev) != 0 {
				t.Errorf("audit events after replays inside the window: %+v", ev)
			}
		})
	})
	t.Run("two concurrent refreshes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			var got [2]tokens
			var wg sync.WaitGroup
			for i, ip := range []string{ipA, ipB} {
				wg.Go(func() {
					status, body := f.refreshFrom(t, ip, a.client, t0.RT)
					if status != http.StatusOK {
						t.Errorf("refresh from %s: %d %v", ip, status, body)
						return
					}
					got[i] = tokens{AT: body["access_token"].(string), RT: body["refresh_token"].(string)}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			if got[0].RT != got[1].RT {
				t.Fatal("the two racers hold different refresh tokens")
			}
			f.wantAuthorized(t, got[0].AT)
			f.wantAuthorized(t, got[1].AT)
			time.Sleep(time.Hour) // long past the window: the token both hold still works
			f.mustRefreshFrom(t, ipA, a.client, got[1].RT)
		})
	})
	t.Run("chains across two processes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			p := f.MustExchange(t, a)
			c := f.mustRefreshFrom(t, ipA, a.client, p.RT) // A rotates P → C
			time.Sleep(5 * time.Second)
			if got := f.mustRefreshFrom(t, ipB, a.client, p.RT); got.RT != c.RT { // B replays P: C
				t.Fatal("B's replay of P did not get C")
			}
			time.Sleep(5 * time.Second)
			c2 := f.mustRefreshFrom(t, ipA, a.client, c.RT) // A uses C → C2
			time.Sleep(5 * time.Second)
			if got := f.mustRefreshFrom(t, ipB, a.client, c.RT); got.RT != c2.RT { // B uses C: C2
				t.Fatal("B's refresh with C within C's window did not get C2")
			}
			f.wantAuthorized(t, c2.AT)
		})
	})
	t.Run("replay once the successor was used", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			t1 := f.mustRefreshFrom(t, ipA, a.client, t0.RT)
			t2 := f.mustRefreshFrom(t, ipA, a.client, t1.RT)
			time.Sleep(10 * time.Second)
			status, body := f.refreshFrom(t, ipB, a.client, t0.RT)
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
			f.wantRefused(t, t2.AT)
			status, body = f.refresh(t, a.client, t2.RT)
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
			if ev, _ := f.s.Grants().Events(0); len(ev) != 1 || ev[0].Kind != grant.EventRefreshReuse {
				t.Errorf("audit events = %+v, want one refresh_reuse", ev)
			}
		})
	})
	t.Run("replay after the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			t1 := f.mustRefreshFrom(t, ipA, a.client, t0.RT)
			time.Sleep(grant.DefaultGraceWindow + time.Millisecond)
			status, body := f.refreshFrom(t, ipB, a.client, t0.RT)
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
			f.wantRefused(t, t1.AT)
		})
	})
	t.Run("a configured window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t, func(c *Config) { c.RefreshGrace = 30 * time.Second })
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			t1 := f.mustRefreshFrom(t, ipA, a.client, t0.RT)
			time.Sleep(30 * time.Second)
			f.mustRefreshFrom(t, ipB, a.client, t0.RT)
			time.Sleep(time.Second)
			status, body := f.refreshFrom(t, ipB, a.client, t0.RT)
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidGrant)
			f.wantRefused(t, t1.AT)
		})
	})
	t.Run("the sealed successor is dropped after the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			f.MustRefresh(t, a.client, t0.RT)
			time.Sleep(grant.DefaultGraceWindow + closeEvery)
			synctest.Wait() // the server's minute tick has closed the window
			if n, err := f.s.Grants().CloseWindows(time.Now()); n != 0 || err != nil {
				t.Fatalf("a window was still open: %d, %v", n, err)
			}
		})
	})
	t.Run("access token expiry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t)
			tk := f.MustExchange(t, f.MustAuthorize(t))
			time.Sleep(DefaultAccessTokenTTL + token.MaxLeeway - time.Second)
			f.wantAuthorized(t, tk.AT)
			time.Sleep(time.Second)
			f.wantRefused(t, tk.AT)
		})
	})
}

// TestServer_RefreshBinding is SECURITY.md AS-14 and AS-15: a refresh token works only for its
// client, never widens the scope and never changes the resource; failures change nothing.
func TestServer_RefreshBinding(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t, "scope", policy.ScopeRead)
		tk := f.MustExchange(t, a)
		other := f.MustRegister(t, "Other", testRedirect)
		for _, tc := range []struct {
			name   string
			pairs  []string
			status int
			code   string
		}{
			{"AS-14 another client", []string{"client_id", other}, 400, policy.CodeInvalidGrant},
			{"unknown client", []string{"client_id", "cl_unknown"}, 401, policy.CodeInvalidClient},
			{"AS-15 scope beyond the grant", []string{"scope", policy.ScopeWrite}, 400, policy.CodeInvalidScope},
			{"AS-15 scope beyond the grant, with the granted one", []string{"scope", "memories:read memories:write"}, 400, policy.CodeInvalidScope},
			{"unknown scope", []string{"scope", "admin"}, 400, policy.CodeInvalidScope},
			{"AS-15 another resource", []string{"resource", "https://other.example/mcp"}, 400, policy.CodeInvalidTarget},
			{"relative resource", []string{"resource", "/mcp"}, 400, policy.CodeInvalidTarget},
			{"an access token as refresh token (RS-11)", []string{"refresh_token", tk.AT}, 400, policy.CodeInvalidGrant},
			{"a code as refresh token", []string{"refresh_token", a.code}, 400, policy.CodeInvalidGrant},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				status, body := f.refresh(t, a.client, tk.RT, tc.pairs...)
				wantError(t, status, body, tc.status, tc.code)
			}})
		}
		return rows, func(t *testing.T) {
			tk = f.MustRefresh(t, a.client, tk.RT, "resource", "HTTPS://MEM.EXAMPLE.COM/mcp")
			if c := jwtPart(t, tk.AT, 1); c["aud"] != testResource || c["scope"] != policy.ScopeRead || tk.Body["scope"] != policy.ScopeRead {
				t.Errorf("claims %v, response %v", c, tk.Body)
			}
			tk = f.MustRefresh(t, a.client, tk.RT)
			f.wantAuthorized(t, tk.AT)

			// Narrowing is allowed, and does not narrow the grant.
			b := f.MustAuthorize(t)
			tb := f.MustExchange(t, b)
			tb = f.MustRefresh(t, b.client, tb.RT, "scope", policy.ScopeRead)
			if tb.Body["scope"] != policy.ScopeRead || jwtPart(t, tb.AT, 1)["scope"] != policy.ScopeRead {
				t.Errorf("narrowed refresh: %v", tb.Body)
			}
			tb = f.MustRefresh(t, b.client, tb.RT)
			if tb.Body["scope"] != "memories:read memories:write" {
				t.Errorf("the grant was narrowed: %v", tb.Body)
			}
		}
	})
}

// TestServer_LoginAndConsentForms is SECURITY.md AS-19 and AS-20 on the assembled server: 303
// after each POST, and a consent POST is refused without its CSRF token, with another
// transaction's, from another origin or session, with a smuggled field, or as a GET; none of
// these decide the transaction.
func TestServer_LoginAndConsentForms(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		client := f.MustRegister(t, "Forms", testRedirect)
		query := func() string { return authQuery(client, testRedirect, policy.ChallengeS256(newVerifier())) }
		b := f.browser()
		txn, csrf := b.toConsent(t, query()) // checks the 303 of the login POST
		txn2, csrf2 := b.toConsent(t, query())
		other := f.browser()
		other.toConsent(t, query()) // another logged-in browser

		// Login without a csrf token.
		w := f.browser().do(http.MethodGet, "/oauth/authorize?"+query(), nil, nil)
		_, ltxn, _ := formFields(w.Body.String())
		w = f.browser().do(http.MethodPost, login.PathLogin, url.Values{"txn": {ltxn}, "username": {DefaultUsername}, "password": {testPassword}}, nil)
		if w.Code != http.StatusForbidden {
			t.Errorf("login without csrf: %d, want 403", w.Code)
		}

		for _, tc := range []struct {
			name   string
			b      *browser
			method string
			form   url.Values
			hdr    map[string]string
			status int
		}{
			{"no csrf", b, http.MethodPost, url.Values{"txn": {txn}, "action": {"allow"}}, nil, http.StatusForbidden},
			{"another transaction's csrf", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf2}, "action": {"allow"}}, nil, http.StatusForbidden},
			{"another session", other, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}}, nil, http.StatusForbidden},
			{"no session", f.browser(), http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}}, nil, http.StatusForbidden},
			{"foreign Origin", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}},
				map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
			{"cross-site", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}},
				map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
			{"smuggled client_id", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}, "client_id": {client}}, nil, http.StatusBadRequest},
			{"smuggled redirect_uri", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}, "redirect_uri": {"https://evil.example/cb"}}, nil, http.StatusBadRequest},
			{"smuggled scope", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}, "scope": {"memories:write"}}, nil, http.StatusBadRequest},
			{"repeated action", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"deny", "allow"}}, nil, http.StatusBadRequest},
			{"unknown action", b, http.MethodPost, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"yes"}}, nil, http.StatusBadRequest},
			{"GET with the fields", b, http.MethodGet, nil, nil, http.StatusMethodNotAllowed},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				target := login.PathConsent
				if tc.method == http.MethodGet {
					target += "?" + url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}}.Encode()
				}
				w := tc.b.do(tc.method, target, tc.form, tc.hdr)
				if w.Code != tc.status || w.Header().Get("Location") != "" {
					t.Errorf("got %d %v, want %d without Location", w.Code, w.Header(), tc.status)
				}
				wantPageHeaders(t, tc.name, w)
			}})
		}
		return rows, func(t *testing.T) {
			if w := b.do(http.MethodGet, login.PathLogin, nil, nil); w.Code != http.StatusMethodNotAllowed {
				t.Errorf("GET %s: %d, want 405", login.PathLogin, w.Code)
			}
			if got := f.count(t, grant.BucketCodes); got != 0 {
				t.Fatalf("%d codes issued by refused forms", got)
			}
			// The transaction is still undecided: its own form works once.
			if loc := b.decide(t, txn, csrf, "allow"); loc.Query().Get("code") == "" {
				t.Errorf("no code: %s", loc)
			}
			w = b.do(http.MethodPost, login.PathConsent, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}}, nil)
			if w.Code != http.StatusForbidden {
				t.Errorf("a second decision: %d, want 403", w.Code)
			}
			if loc := b.decide(t, txn2, csrf2, "deny"); loc.Query().Get("error") != policy.CodeAccessDenied {
				t.Errorf("deny: %s", loc)
			}
		}
	})
}

// TestServer_PageHeaders is SECURITY.md AS-21 and AS-22: every page of the flow forbids framing,
// caching and referrers, and loads nothing.
func TestServer_PageHeaders(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		client := f.MustRegister(t, "Pages", testRedirect)
		q := authQuery(client, testRedirect, policy.ChallengeS256(newVerifier()))
		b := f.browser()
		check := func(what string, w *httptest.ResponseRecorder, status int) {
			t.Helper()
			if w.Code != status {
				t.Errorf("%s: %d, want %d", what, w.Code, status)
			}
			wantPageHeaders(t, what, w)
		}
		check("authorize error page", b.do(http.MethodGet, "/oauth/authorize?client_id=cl_nope", nil, nil), 400)
		check("authorize OPTIONS", b.do(http.MethodOptions, "/oauth/authorize?"+q, nil, nil), 405)
		check("authorize POST", b.do(http.MethodPost, "/oauth/authorize", url.Values{"client_id": {client}}, nil), 405)
		w := b.do(http.MethodGet, "/oauth/authorize?"+q, nil, nil)
		check("login page", w, 200)
		_, txn, csrf := formFields(w.Body.String())
		w = b.do(http.MethodPost, login.PathLogin, url.Values{"txn": {txn}, "csrf": {csrf}, "username": {"owner"}, "password": {"wrong"}}, nil)
		check("wrong password", w, 303)
		check("login page again", b.do(http.MethodGet, w.Header().Get("Location"), nil, nil), 200)
		check("unknown transaction", b.do(http.MethodGet, login.PathContinue+"?txn=nope", nil, nil), 400)
		txn, csrf = b.toConsent(t, q)
		check("consent page", b.do(http.MethodGet, login.PathContinue+"?txn="+url.QueryEscape(txn), nil, nil), 200)
		check("consent page at /authorize", b.do(http.MethodGet, "/oauth/authorize?"+q, nil, nil), 200)
		check("consent refused", b.do(http.MethodPost, login.PathConsent, url.Values{"txn": {txn}, "action": {"allow"}}, nil), 403)
		check("consent GET", b.do(http.MethodGet, login.PathConsent, nil, nil), 405)
		f.waitConsentDelay()
		check("consent", b.do(http.MethodPost, login.PathConsent, url.Values{"txn": {txn}, "csrf": {csrf}, "action": {"allow"}}, nil), 303)
	})
}

// TestServer_CORS is SECURITY.md AS-23: the pages never allow cross-origin reads; the JSON
// endpoints do, never with credentials.
func TestServer_CORS(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	client := f.MustRegister(t, "", testRedirect)
	q := authQuery(client, testRedirect, policy.ChallengeS256(newVerifier()))
	origin := map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}
	cors := func(method, target string, form url.Values, status int) scenario {
		name, _, _ := strings.Cut(target, "?")
		return scenario{Name: method + " " + name, Method: method, URL: target, Form: form, Headers: origin,
			WantStatus: status, WantNoHeaders: []string{"Access-Control-Allow-Credentials"}}
	}
	// refused: no cross-origin read.
	refused := func(method, target string, form url.Values, status int) scenario {
		sc := cors(method, target, form, status)
		sc.WantNoHeaders = append(sc.WantNoHeaders, "Access-Control-Allow-Origin")
		return sc
	}
	// allowed: any origin reads it; seed 003: a preflight answer may be cached a day.
	allowed := func(method, target string, form url.Values, status int) scenario {
		sc := cors(method, target, form, status)
		sc.WantHeaders = map[string]string{"Access-Control-Allow-Origin": "*"}
		if method == http.MethodOptions {
			sc.WantHeaders["Access-Control-Max-Age"] = "86400"
		}
		return sc
	}
	scenarios.RunOn(t, f, []scenario{
		refused(http.MethodOptions, "/oauth/authorize?"+q, nil, http.StatusMethodNotAllowed),
		refused(http.MethodGet, "/oauth/authorize?"+q, nil, http.StatusOK),
		refused(http.MethodGet, "/oauth/authorize?client_id=cl_nope", nil, http.StatusBadRequest),
		refused(http.MethodOptions, login.PathLogin, nil, http.StatusMethodNotAllowed),
		refused(http.MethodOptions, login.PathConsent, nil, http.StatusMethodNotAllowed),
		allowed(http.MethodOptions, "/oauth/token", nil, http.StatusNoContent),
		allowed(http.MethodPost, "/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {client}}, http.StatusBadRequest),
		allowed(http.MethodOptions, "/oauth/register", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/oauth/revoke", nil, http.StatusNoContent),
		allowed(http.MethodGet, "/oauth/jwks.json", nil, http.StatusOK),
		allowed(http.MethodGet, "/.well-known/oauth-authorization-server", nil, http.StatusOK),
		allowed(http.MethodOptions, "/.well-known/oauth-protected-resource/mcp", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/.well-known/oauth-protected-resource/api/mcp", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/.well-known/oauth-protected-resource", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/.well-known/oauth-authorization-server", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/.well-known/openid-configuration", nil, http.StatusNoContent),
		allowed(http.MethodOptions, "/oauth/jwks.json", nil, http.StatusNoContent),
	})
}

// TestServer_ConsentAlwaysShown is SECURITY.md AS-25: a logged-in browser sees the consent page
// for a new client and for one it approved before, and prompt=none gets no code.
func TestServer_ConsentAlwaysShown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		a := f.MustAuthorize(t) // the browser is now logged in
		fresh := f.MustRegister(t, "Fresh", "https://fresh.example/cb")
		codes := f.count(t, grant.BucketCodes)
		for _, q := range []string{
			authQuery(fresh, "https://fresh.example/cb", policy.ChallengeS256(newVerifier())),
			authQuery(a.client, testRedirect, policy.ChallengeS256(newVerifier())),
		} {
			w := a.b.do(http.MethodGet, "/oauth/authorize?"+q, nil, nil)
			if action, _, _ := formFields(w.Body.String()); w.Code != http.StatusOK || action != login.PathConsent || w.Header().Get("Location") != "" {
				t.Errorf("got %d %q %v, want the consent page", w.Code, action, w.Header())
			}
			// prompt=none: no code; the approved client hears consent_required (AS-25), the new one
			// at a host of its own gets the error page (AS-18).
			w = a.b.do(http.MethodGet, "/oauth/authorize?"+q+"&prompt=none", nil, nil)
			loc, _ := url.Parse(w.Header().Get("Location"))
			switch {
			case strings.Contains(q, fresh):
				if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
					t.Errorf("prompt=none, new client: %d %v", w.Code, w.Header())
				}
			case w.Code != http.StatusFound || loc.Query().Get("error") != policy.CodeConsentRequired || loc.Query().Has("code"):
				t.Errorf("prompt=none, approved client: %d %v", w.Code, w.Header())
			}
		}
		if got := f.count(t, grant.BucketCodes); got != codes {
			t.Errorf("a code was issued without consent")
		}
	})
}

// TestServer_Registration is SECURITY.md AS-03 and AS-29: what dynamic client registration
// accepts, refuses, and answers.
func TestServer_Registration(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	uris := func(u ...string) string { b, _ := json.Marshal(u); return string(b) }
	many := make([]string, 11)
	for i := range many {
		many[i] = fmt.Sprintf("https://client.example/cb%d", i)
	}
	long := "https://client.example/" + strings.Repeat("a", 2100)
	// reg registers body from an address of its own: a 201 with the registration (AS-29), or status
	// with the error code and no client.
	reg := func(name, body string, status int, code string) scenario {
		sc := scenario{Name: name, Method: http.MethodPost, URL: "/oauth/register", Body: body,
			Headers: map[string]string{"Content-Type": "application/json"}, Request: fromNewAddress,
			WantStatus: status, WantHeaders: jsonHeaders}
		if status == http.StatusCreated {
			sc.Check = func(t *testing.T, rec *httptest.ResponseRecorder) { wantRegistration(t, f, rec.Body.Bytes(), body) }
		} else {
			sc.WantBody, sc.WantNoBody = []string{oauthError(code)}, []string{`"client_id":`}
		}
		return sc
	}
	scenarios.RunOn(t, f, []scenario{
		reg("minimal", `{"redirect_uris":["https://client.example/cb"]}`, 201, ""),
		reg("client_name of 128", `{"client_name":"`+strings.Repeat("n", 128)+`","redirect_uris":["https://client.example/cb"]}`, 201, ""),
		reg("client_name of 129", `{"client_name":"`+strings.Repeat("n", 129)+`","redirect_uris":["https://client.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("client_name with a control character", `{"client_name":"Cl\u0007aude","redirect_uris":["https://client.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("client_name with a newline", `{"client_name":"Claude\nApproved","redirect_uris":["https://client.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("client_name with an RTL override", `{"client_name":"Cla\u202eude","redirect_uris":["https://client.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("client_name not a string", `{"client_name":1,"redirect_uris":["https://client.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("10 redirect_uris", `{"redirect_uris":`+uris(many[:10]...)+`}`, 201, ""),
		reg("11 redirect_uris", `{"redirect_uris":`+uris(many...)+`}`, 400, policy.CodeInvalidRedirectURI),
		reg("a 2.1 KiB redirect URI", `{"redirect_uris":`+uris(long)+`}`, 400, policy.CodeInvalidRedirectURI),
		reg("no redirect_uris", `{"client_name":"x"}`, 400, policy.CodeInvalidRedirectURI),
		reg("empty redirect_uris", `{"redirect_uris":[]}`, 400, policy.CodeInvalidRedirectURI),
		reg("null redirect_uris", `{"redirect_uris":null}`, 400, policy.CodeInvalidRedirectURI),
		reg("redirect_uris a string", `{"redirect_uris":"https://client.example/cb"}`, 400, policy.CodeInvalidRedirectURI),
		reg("grant_types client_credentials", `{"redirect_uris":["https://client.example/cb"],"grant_types":["client_credentials"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("grant_types implicit", `{"redirect_uris":["https://client.example/cb"],"grant_types":["authorization_code","implicit"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("grant_types password", `{"redirect_uris":["https://client.example/cb"],"grant_types":["password"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("grant_types ours", `{"redirect_uris":["https://client.example/cb"],"grant_types":["authorization_code","refresh_token"]}`, 201, ""),
		reg("response_types token", `{"redirect_uris":["https://client.example/cb"],"response_types":["token"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("client_secret_basic", `{"redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, 201, ""),
		reg("private_key_jwt", `{"redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"private_key_jwt","jwks_uri":"https://client.example/jwks"}`, 201, ""),
		reg("a proposed client_id and secret", `{"client_id":"https://evil.example/client.json","client_secret":"s3cret","redirect_uris":["https://client.example/cb"]}`, 201, ""),
		reg("unknown metadata", `{"redirect_uris":["https://client.example/cb"],"logo_uri":"https://client.example/l.png","x_custom":{"a":[1,{"b":null}]},"software_statement":"eyJ"}`, 201, ""),
		reg("AS-03 javascript:", `{"redirect_uris":["javascript:alert(1)"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 data:", `{"redirect_uris":["data:text/html,<script>alert(1)</script>"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 file:", `{"redirect_uris":["file:///etc/passwd"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 vbscript:", `{"redirect_uris":["vbscript:msgbox"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 http on a public host", `{"redirect_uris":["http://client.example/cb"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 fragment", `{"redirect_uris":["https://client.example/cb#f"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 empty fragment", `{"redirect_uris":["https://client.example/cb#"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 userinfo", `{"redirect_uris":["https://claude.ai@evil.example/cb"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 wildcard", `{"redirect_uris":["https://*.client.example/cb"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 wildcard path", `{"redirect_uris":["https://client.example/*"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 custom scheme without a dot", `{"redirect_uris":["myapp:/cb"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("AS-03 one bad among good", `{"redirect_uris":["https://client.example/cb","javascript:x"]}`, 400, policy.CodeInvalidRedirectURI),
		reg("loopback IPv4 with a port", `{"redirect_uris":["http://127.0.0.1:1234/cb"]}`, 201, ""),
		reg("loopback localhost", `{"redirect_uris":["http://localhost/callback"]}`, 201, ""),
		reg("loopback IPv6", `{"redirect_uris":["http://[::1]:8080/cb"]}`, 201, ""),
		reg("Cursor", `{"redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback"]}`, 201, ""),
		reg("dotted custom scheme", `{"redirect_uris":["com.example.app:/oauth"]}`, 201, ""),
		reg("Claude", `{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"]}`, 201, ""),
		reg("empty body", ``, 400, policy.CodeInvalidClientMetadata),
		reg("not JSON", `redirect_uris=https://client.example/cb`, 400, policy.CodeInvalidClientMetadata),
		reg("an array", `[{"redirect_uris":["https://client.example/cb"]}]`, 400, policy.CodeInvalidClientMetadata),
		reg("null", `null`, 400, policy.CodeInvalidClientMetadata),
		reg("duplicate keys", `{"redirect_uris":["https://client.example/cb"],"redirect_uris":["https://evil.example/cb"]}`, 400, policy.CodeInvalidClientMetadata),
		reg("trailing data", `{"redirect_uris":["https://client.example/cb"]} {}`, 400, policy.CodeInvalidClientMetadata),
	})

	t.Run("text/plain", func(t *testing.T) {
		r := httptest.NewRequest(http.MethodPost, "/oauth/register", strings.NewReader(`{"redirect_uris":["https://client.example/cb"]}`))
		r.Header.Set("Content-Type", "text/plain")
		if w := f.serve(r); w.Code != http.StatusBadRequest {
			t.Errorf("got %d %s", w.Code, w.Body)
		}
	})
	t.Run("16 KiB", func(t *testing.T) {
		body := `{"redirect_uris":["https://client.example/cb"]}`
		body += strings.Repeat(" ", 16<<10-len(body))
		if w := f.registerRaw(body, ""); w.Code != http.StatusCreated {
			t.Errorf("a body of exactly 16 KiB: %d %s", w.Code, w.Body)
		}
		w := f.registerRaw(body+" ", "")
		if m := f.oauthJSON(t, w); w.Code != http.StatusRequestEntityTooLarge || m["error"] == nil {
			t.Errorf("a body of 16 KiB + 1: %d %s", w.Code, w.Body)
		}
	})
}

// wantRegistration checks a 201 registration response (SECURITY.md AS-29).
func wantRegistration(t *testing.T, f *fixture, resp []byte, request string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(resp))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	json.Unmarshal([]byte(request), &req)
	id, _ := m["client_id"].(string)
	if !strings.HasPrefix(id, grant.ClientIDPrefix) || strings.HasPrefix(id, "https://") {
		t.Errorf("client_id = %q", id)
	}
	n, err := m["client_id_issued_at"].(json.Number).Int64()
	if from, to := f.opened.Unix(), time.Now().Unix(); err != nil || n < from || n > to {
		t.Errorf("client_id_issued_at = %#v, want an integer from %d to %d", m["client_id_issued_at"], from, to)
	}
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			t.Errorf("%s is null", k)
		case string:
			if v == "" {
				t.Errorf("%s is empty", k)
			}
		case []any:
			if len(v) == 0 {
				t.Errorf("%s is empty", k)
			}
		}
	}
	for _, k := range []string{"client_secret", "client_secret_expires_at", "registration_access_token", "jwks_uri", "x_custom"} {
		if _, ok := m[k]; ok {
			t.Errorf("the response has %s", k)
		}
	}
	if m["token_endpoint_auth_method"] != "none" {
		t.Errorf("token_endpoint_auth_method = %v", m["token_endpoint_auth_method"])
	}
	if g, _ := json.Marshal(m["grant_types"]); string(g) != `["authorization_code","refresh_token"]` {
		t.Errorf("grant_types = %s", g)
	}
	if r, _ := json.Marshal(m["response_types"]); string(r) != `["code"]` {
		t.Errorf("response_types = %s", r)
	}
	if _, named := req["client_name"]; !named {
		if _, ok := m["client_name"]; ok {
			t.Errorf("client_name present without one requested: %v", m["client_name"])
		}
	} else if m["client_name"] != req["client_name"] {
		t.Errorf("client_name = %v, want %v", m["client_name"], req["client_name"])
	}
	got, _ := json.Marshal(m["redirect_uris"])
	want, _ := json.Marshal(req["redirect_uris"])
	if string(got) != string(want) {
		t.Errorf("redirect_uris = %s, want %s", got, want)
	}
	c, err := f.s.Grants().Client(id)
	if err != nil {
		t.Fatalf("the client is not stored: %v", err)
	}
	if b, _ := json.Marshal(c.RedirectURIs); string(b) != string(want) {
		t.Errorf("stored redirect URIs %s", b)
	}
}

// TestServer_RegistrationRateLimit is SECURITY.md AS-29: 20 registrations per hour per address.
func TestServer_RegistrationRateLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		const ip = "203.0.113.7"
		body := `{"redirect_uris":["https://client.example/cb"]}`
		for i := range DefaultRegistrationsPerHour {
			if w := f.registerRaw(body, ip); w.Code != http.StatusCreated {
				t.Fatalf("registration %d: %d %s", i+1, w.Code, w.Body)
			}
		}
		time.Sleep(59 * time.Minute)
		w := f.registerRaw(body, ip)
		m := f.oauthJSON(t, w)
		ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
		if w.Code != http.StatusTooManyRequests || m["error"] != policy.CodeTemporarilyUnavailable || err != nil || ra < 1 || ra > 61 {
			t.Errorf("registration 21: %d %v %s, want 429 with Retry-After ≤ 61", w.Code, w.Header(), w.Body)
		}
		if w := f.registerRaw(body, "203.0.113.8"); w.Code != http.StatusCreated {
			t.Errorf("another address: %d", w.Code)
		}
		time.Sleep(time.Minute)
		if w := f.registerRaw(body, ip); w.Code != http.StatusCreated {
			t.Errorf("after an hour: %d %s", w.Code, w.Body)
		}
	})
}

// TestServer_RegistrationLimiterFlood: whoever holds an IPv6 /64 (every host that has IPv6 does)
// must not be able to stop everyone else from registering. The limiter keys on the whole address
// and, once it tracks 10000 live addresses, refuses every new one for an hour; requests that fail
// validation count too, so this costs 10000 tiny POSTs and no database writes.
func TestServer_RegistrationLimiterFlood(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	for i := range 10000 {
		f.registerRaw("x", fmt.Sprintf("2001:db8:1:1::%x", i+1))
	}
	if w := f.registerRaw(`{"redirect_uris":["https://client.example/cb"]}`, "198.51.100.9"); w.Code != http.StatusCreated {
		t.Errorf("a registration from another network after the flood: %d %v %s", w.Code, w.Header(), w.Body)
	}
}

// TestServer_TokenInvalidClientChallenge: RFC 6749 §5.2 — a client that authenticated with the
// Authorization header and is refused with invalid_client gets 401 with a WWW-Authenticate header
// for the scheme it used.
func TestServer_TokenInvalidClientChallenge(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	r := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader("grant_type=refresh_token&refresh_token=osr_x"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.SetBasicAuth("cl_unknown", "")
	w := f.serve(r)
	if w.Code != http.StatusUnauthorized || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic") {
		t.Errorf("got %d WWW-Authenticate %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestServer_RegistrationRedirectHosts is SECURITY.md AS-04 with its opt-in allowlist.
func TestServer_RegistrationRedirectHosts(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t, func(c *Config) { c.RedirectHosts = []string{"claude.ai"} })
	register := func(uri string) scenario {
		return scenario{Name: uri, Method: http.MethodPost, URL: "/oauth/register", Body: `{"redirect_uris":["` + uri + `"]}`,
			Request: fromNewAddress, WantHeaders: jsonHeaders}
	}
	accepted := func(uri string) scenario { sc := register(uri); sc.WantStatus = http.StatusCreated; return sc }
	refused := func(uri string) scenario {
		sc := register(uri)
		sc.WantStatus, sc.WantBody = http.StatusBadRequest, []string{oauthError(policy.CodeInvalidRedirectURI)}
		return sc
	}
	scenarios.RunOn(t, f, []scenario{
		refused("https://evil.example/cb"),
		refused("https://claude.com/api/mcp/auth_callback"),
		refused("https://claude.ai.evil.example/cb"),
		accepted("https://claude.ai/api/mcp/auth_callback"),
		accepted("https://claude.ai:443/api/mcp/auth_callback"),
		accepted("http://localhost:33418/callback"),
		accepted("cursor://anysphere.cursor-mcp/oauth/callback"),
	})
}

// countingResolver answers every host with addr and counts the lookups.
type countingResolver struct {
	addr  net.IP
	calls atomic.Int32
}

func (r *countingResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.calls.Add(1)
	if r.addr == nil {
		return nil, errors.New("no such host")
	}
	return []net.IPAddr{{IP: r.addr}}, nil
}

// TestServer_MetadataDocumentClient is SECURITY.md AS-30 at /authorize: a client ID metadata
// document URL on a host that is not allowed is refused before any lookup, and one whose host
// resolves to loopback is refused without a connection; both on our error page.
func TestServer_MetadataDocumentClient(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":"https://%s/client.json","redirect_uris":["%s"]}`, r.Host, testRedirect)
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	ch := policy.ChallengeS256(newVerifier())

	for _, tc := range []struct {
		name, clientID string
		hosts          []string
		resolver       *countingResolver
		lookups        bool
	}{
		{"host not allowed", "https://evil.example/client.json", nil, &countingResolver{}, false},
		{"host not allowed (a port)", fmt.Sprintf("https://evil.example:%d/client.json", port), []string{"meta.example"}, &countingResolver{}, false},
		{"no path", "https://claude.ai", nil, &countingResolver{}, false},
		{"http", "http://claude.ai/client.json", nil, &countingResolver{}, false},
		{"resolves to loopback", fmt.Sprintf("https://meta.example:%d/client.json", port), []string{"meta.example"},
			&countingResolver{addr: net.IPv4(127, 0, 0, 1)}, true},
		{"resolves to a private address", fmt.Sprintf("https://meta.example:%d/client.json", port), []string{"meta.example"},
			&countingResolver{addr: net.IPv4(10, 0, 0, 1)}, true},
		{"resolves to IPv4-mapped loopback", fmt.Sprintf("https://meta.example:%d/client.json", port), []string{"meta.example"},
			&countingResolver{addr: net.ParseIP("::ffff:127.0.0.1")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := MustOpenServer(t, func(c *Config) { c.MetadataHosts, c.Resolver = tc.hosts, tc.resolver })
			w := f.browser().do(http.MethodGet, "/oauth/authorize?"+authQuery(tc.clientID, testRedirect, ch), nil, nil)
			if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
				t.Errorf("got %d %v, want the error page", w.Code, w.Header())
			}
			if n := tc.resolver.calls.Load(); (n > 0) != tc.lookups {
				t.Errorf("%d lookups", n)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the metadata server was fetched %d times", n)
			}
		})
	}
}

// fakeDocuments stands in for the client ID metadata document fetcher: it knows one document.
type fakeDocuments struct{ doc cimd.Document }

func (d fakeDocuments) Fetch(_ context.Context, clientID string) (*cimd.Document, error) {
	if clientID != d.doc.ClientID {
		return nil, &cimd.Error{Kind: cimd.ErrHostNotAllowed, ClientID: clientID}
	}
	doc := d.doc
	return &doc, nil
}

// TestServer_ClaudeRegistrationPaths is issue 27, item 3 (SECURITY.md AS-29, AS-30, AS-31).
// Claude uses a client ID metadata document only when the authorization server's metadata says
// client_id_metadata_document_supported: true and lists "none" in
// token_endpoint_auth_methods_supported; otherwise it registers anew on every connection
// (../shared/E2E-NOTES.md; lion-reader#1519, home-assistant#179326), which fills the client
// table. Both paths then sign in: a client identified by its metadata document (fetched and
// checked by package cimd, TestFetcher_Fetch and its siblings; a stand-in here) and, beside it,
// one that registered (as TestServer_Flow and TestServer_Registration do at length).
func TestServer_ClaudeRegistrationPaths(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		rows = append(rows, bubbleRow{"the metadata meets Claude's rule", func(t *testing.T) {
			w := f.serve(httptest.NewRequest(http.MethodGet, "/.well-known/oauth-authorization-server", nil))
			var as struct {
				CIMD         bool     `json:"client_id_metadata_document_supported"`
				AuthMethods  []string `json:"token_endpoint_auth_methods_supported"`
				Registration string   `json:"registration_endpoint"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &as); err != nil || w.Code != http.StatusOK {
				t.Fatalf("metadata: %d %s", w.Code, w.Body)
			}
			if !as.CIMD || !slices.Contains(as.AuthMethods, "none") {
				t.Errorf("client_id_metadata_document_supported = %v, token_endpoint_auth_methods_supported = %v: "+
					"Claude would register anew on every connection", as.CIMD, as.AuthMethods)
			}
			if as.Registration != testPublicURL+"/oauth/register" {
				t.Errorf("registration_endpoint = %q: clients that register need it", as.Registration)
			}
		}})
		rows = append(rows, bubbleRow{"a metadata-document client signs in without registering", func(t *testing.T) {
			const clientID = "https://claude.ai/oauth/mcp-oauth-client-metadata"
			const redirect = "https://claude.ai/api/mcp/auth_callback"
			f.s.docs = fakeDocuments{cimd.Document{ClientID: clientID, ClientName: "Claude", RedirectURIs: []string{redirect}}}
			registered := f.count(t, grant.BucketClients)
			a := f.MustAuthorizeClient(t, f.browser(), clientID, redirect)
			tk := f.MustExchange(t, a)
			if p := f.wantAuthorized(t, tk.AT); p.ClientID != clientID || p.Name != "Claude" {
				t.Errorf("principal = %+v", p)
			}
			f.wantAuthorized(t, f.MustRefresh(t, clientID, tk.RT).AT)
			if n := f.count(t, grant.BucketClients) - registered; n != 1 {
				t.Errorf("%d client records added, want the one the document names", n)
			}
		}})
		rows = append(rows, bubbleRow{"a registered client signs in beside it", func(t *testing.T) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			f.wantAuthorized(t, tk.AT)
			f.wantAuthorized(t, f.MustRefresh(t, a.client, tk.RT).AT)
		}})
		return rows, nil
	})
}

// TestServer_Metadata is SECURITY.md AS-31 and RS-10 through the mounted routes: forged Host and
// X-Forwarded-Host headers change nothing in the four discovery documents and the JWKS.
func TestServer_Metadata(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	get := func(path string) map[string]any {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "https://evil.example"+path, nil)
		r.Host = "evil.example"
		r.Header.Set("X-Forwarded-Host", "evil.example")
		r.Header.Set("X-Forwarded-Proto", "http")
		r.Header.Set("Forwarded", "host=evil.example;proto=http")
		w := f.serve(r)
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), "evil") {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return m
	}
	for _, path := range []string{"/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		as := get(path)
		for k, want := range map[string]string{
			"issuer":                 testPublicURL,
			"authorization_endpoint": testPublicURL + "/oauth/authorize",
			"token_endpoint":         testPublicURL + "/oauth/token",
			"registration_endpoint":  testPublicURL + "/oauth/register",
			"revocation_endpoint":    testPublicURL + "/oauth/revoke",
			"jwks_uri":               testPublicURL + "/oauth/jwks.json",
		} {
			if as[k] != want {
				t.Errorf("%s: %s = %v, want %s", path, k, as[k], want)
			}
		}
		if as["authorization_response_iss_parameter_supported"] != true || as["client_id_metadata_document_supported"] != true {
			t.Errorf("%s: flags %v", path, as)
		}
		for k, want := range map[string]string{
			"code_challenge_methods_supported":      "S256",
			"response_types_supported":              "code",
			"token_endpoint_auth_methods_supported": "none",
		} {
			if list, _ := as[k].([]any); !slices.Contains(list, any(want)) {
				t.Errorf("%s: %s = %v, want it to contain %s", path, k, as[k], want)
			}
		}
		if list, _ := as["code_challenge_methods_supported"].([]any); len(list) != 1 {
			t.Errorf("AS-05g: code_challenge_methods_supported = %v", list)
		}
	}
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":          testResource,
		"/.well-known/oauth-protected-resource/mcp":      testResource,
		"/.well-known/oauth-protected-resource/api/mcp":  testPublicURL + "/api/mcp",
		"/.well-known/oauth-protected-resource/mcp/http": testPublicURL + "/mcp/http",
	} {
		pr := get(path)
		servers, _ := json.Marshal(pr["authorization_servers"])
		if pr["resource"] != resource || string(servers) != `["https://mem.example.com"]` {
			t.Errorf("%s: %v", path, pr)
		}
	}
	keys, _ := get("/oauth/jwks.json")["keys"].([]any)
	if len(keys) == 0 {
		t.Fatal("empty JWKS")
	}
	for _, k := range keys {
		if _, ok := k.(map[string]any)["d"]; ok {
			t.Errorf("the JWKS holds a private key")
		}
	}
	w := f.mcp("")
	if w.Code != http.StatusUnauthorized || w.Header().Get("WWW-Authenticate") !=
		`Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp", scope="memories:read memories:write"` {
		t.Errorf("RS-09, RFC 6750 §3 realm first: /mcp without a token: %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

// TestServer_AuthorizationResponse is SECURITY.md AS-32: the redirect after Allow or Deny carries
// iss, and code or error, and state, each once, keeps the redirect URI's own query, and echoes
// nothing else.
func TestServer_AuthorizationResponse(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		const withQuery = "https://client.example/cb?tenant=a%20b"
		client := f.MustRegister(t, "Response", testRedirect, withQuery)
		b := f.browser()
		for _, tc := range []struct {
			name, redirect, action string
			want                   []string
		}{
			{"allow", testRedirect, "allow", []string{"code", "iss", "state"}},
			{"deny", testRedirect, "deny", []string{"error", "error_description", "iss", "state"}},
			{"allow with the redirect's own query", withQuery, "allow", []string{"code", "iss", "state", "tenant"}},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				txn, csrf := b.toConsent(t, authQuery(client, tc.redirect, policy.ChallengeS256(newVerifier())))
				loc := b.decide(t, txn, csrf, tc.action)
				base := *loc
				base.RawQuery = ""
				if want, _ := url.Parse(tc.redirect); base.String() != strings.Split(tc.redirect, "?")[0] || (want.RawQuery != "" && !strings.HasPrefix(loc.RawQuery, want.RawQuery+"&")) {
					t.Errorf("redirected to %s, want %s", loc, tc.redirect)
				}
				q, err := url.ParseQuery(loc.RawQuery)
				if err != nil {
					t.Fatal(err)
				}
				var names []string
				for k, vs := range q {
					names = append(names, k)
					if len(vs) != 1 {
						t.Errorf("%s appears %d times", k, len(vs))
					}
				}
				slices.Sort(names)
				if !slices.Equal(names, tc.want) {
					t.Errorf("parameters %v, want %v", names, tc.want)
				}
				if q.Get("iss") != testPublicURL || q.Get("state") != testState {
					t.Errorf("iss %q state %q", q.Get("iss"), q.Get("state"))
				}
				if tc.action == "deny" && q.Get("error") != policy.CodeAccessDenied {
					t.Errorf("error = %q", q.Get("error"))
				}
			}})
		}
		rows = append(rows, bubbleRow{"no state", func(t *testing.T) {
			loc := b.authorize(t, authQuery(client, testRedirect, policy.ChallengeS256(newVerifier()), "state", ""))
			if _, ok := loc.Query()["state"]; ok || loc.Query().Get("iss") != testPublicURL {
				t.Errorf("redirect %s", loc)
			}
		}})
		return rows, nil
	})
}

// TestServer_TokenResponse is SECURITY.md AS-33: the token response and the endpoint's errors.
func TestServer_TokenResponse(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		w := f.post("/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {a.code},
			"code_verifier": {a.verifier}, "client_id": {a.client}}.Encode())
		m := f.oauthJSON(t, w)
		if w.Code != http.StatusOK || w.Header().Get("Pragma") != "no-cache" {
			t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
		}
		if m["token_type"] != "Bearer" || m["expires_in"] != float64(DefaultAccessTokenTTL/time.Second) ||
			m["scope"] != "memories:read memories:write" || m["id_token"] != nil {
			t.Errorf("token response %v", m)
		}
		if len(m) != 5 {
			t.Errorf("token response fields %v", m)
		}
		rt := m["refresh_token"].(string)

		basic := func(user, pass string) func(*fixture, *http.Request) {
			return func(_ *fixture, r *http.Request) { r.SetBasicAuth(user, pass) }
		}
		// tokenError sends body to /oauth/token as ctype ("": a form, "-": none) and wants the OAuth
		// error code with status.
		tokenError := func(name, method, ctype, body string, adjust func(*fixture, *http.Request), status int, code string) scenario {
			switch ctype {
			case "":
				ctype = "application/x-www-form-urlencoded"
			case "-":
				ctype = ""
			}
			return scenario{Name: name, Method: method, URL: "/oauth/token", Body: body,
				Headers: map[string]string{"Content-Type": ctype}, Request: adjust,
				WantStatus: status, WantBody: []string{oauthError(code)}, WantNoBody: []string{"access_token"}, WantHeaders: jsonHeaders}
		}
		for _, sc := range []scenario{
			tokenError("unknown client", "POST", "", "grant_type=refresh_token&refresh_token="+rt+"&client_id=cl_unknown", nil, 401, policy.CodeInvalidClient),
			tokenError("unknown client in Basic", "POST", "", "grant_type=refresh_token&refresh_token="+rt, basic("cl_unknown", ""), 401, policy.CodeInvalidClient),
			tokenError("different clients in body and Basic", "POST", "", "grant_type=refresh_token&refresh_token="+rt+"&client_id="+a.client, basic("cl_other", ""), 400, policy.CodeInvalidRequest),
			tokenError("no client", "POST", "", "grant_type=refresh_token&refresh_token="+rt, nil, 400, policy.CodeInvalidRequest),
			tokenError("no grant_type", "POST", "", "refresh_token="+rt+"&client_id="+a.client, nil, 400, policy.CodeInvalidRequest),
			tokenError("no code", "POST", "", "grant_type=authorization_code&code_verifier="+a.verifier+"&client_id="+a.client, nil, 400, policy.CodeInvalidRequest),
			tokenError("no refresh_token", "POST", "", "grant_type=refresh_token&client_id="+a.client, nil, 400, policy.CodeInvalidRequest),
			tokenError("JSON body", "POST", "application/json", `{"grant_type":"refresh_token"}`, nil, 400, policy.CodeInvalidRequest),
			tokenError("no Content-Type", "POST", "-", "grant_type=refresh_token", nil, 400, policy.CodeInvalidRequest),
			tokenError("too large", "POST", "", "grant_type=refresh_token&x="+strings.Repeat("a", 16<<10), nil, 400, policy.CodeInvalidRequest),
			tokenError("GET", "GET", "", "", nil, 405, policy.CodeInvalidRequest),
			tokenError("query string", "GET", "", "", func(_ *fixture, r *http.Request) {
				r.URL.RawQuery = "grant_type=refresh_token&refresh_token=" + rt + "&client_id=" + a.client
			}, 405, policy.CodeInvalidRequest),
		} {
			rows = append(rows, bubbleRow{sc.Name, func(t *testing.T) { scenarios.Test(t, f, sc) }})
		}
		rows = append(rows, bubbleRow{"Basic with the client_id", func(t *testing.T) {
			// Basic with our client and an empty secret is how some libraries send a public client.
			r := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader("grant_type=refresh_token&refresh_token="+rt))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.SetBasicAuth(a.client, "")
			if w := f.serve(r); w.Code != http.StatusOK {
				t.Errorf("Basic with the client_id: %d %s", w.Code, w.Body)
			} else {
				f.oauthJSON(t, w)
			}
		}})
		return rows, nil
	})
}

// TestServer_ResourceIndicator is SECURITY.md AS-34: the resource names the audience, defaults to
// the MCP URL, is compared in canonical form, and anything else is invalid_target.
func TestServer_ResourceIndicator(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		client := f.MustRegister(t, "", testRedirect)
		b := f.browser()
		for _, tc := range []struct {
			name, atAuthorize, atToken string
			code                       string // "" when accepted
		}{
			{"none", "", "", ""},
			{"ours", testResource, testResource, ""},
			{"ours at /authorize only", testResource, "", ""},
			{"ours at /token only", "", testResource, ""},
			{"upper-case scheme and host", "HTTPS://MEM.EXAMPLE.COM/mcp", "HTTPS://Mem.Example.Com/mcp", ""},
			{"default port", "https://mem.example.com:443/mcp", "https://mem.example.com:443/mcp", ""},
			{"foreign at /token", testResource, "https://other.example/mcp", policy.CodeInvalidTarget},
			{"relative at /token", "", "/mcp", policy.CodeInvalidTarget},
			{"fragment at /token", "", testResource + "#f", policy.CodeInvalidTarget},
			{"trailing slash at /token", "", testResource + "/", policy.CodeInvalidTarget},
			{"path case at /token", "", "https://mem.example.com/MCP", policy.CodeInvalidTarget},
			{"issuer at /token", "", testPublicURL, policy.CodeInvalidTarget},
			{"userinfo at /token", "", "https://user@mem.example.com/mcp", policy.CodeInvalidTarget},
			{"alias /api/mcp", testPublicURL + "/api/mcp", testPublicURL + "/api/mcp", ""},
			{"alias /mcp/http", testPublicURL + "/mcp/http", testPublicURL + "/mcp/http", ""},
			{"alias at /authorize, canonical at /token", testPublicURL + "/api/mcp", testResource, ""},
			{"canonical at /authorize, alias at /token", testResource, "HTTPS://MEM.EXAMPLE.COM/mcp/http", ""},
			{"alias with a trailing slash", "", testPublicURL + "/api/mcp/", policy.CodeInvalidTarget},
			{"alias on another host", "", "https://other.example/api/mcp", policy.CodeInvalidTarget},
			{"a prefix of an alias", "", testPublicURL + "/api", policy.CodeInvalidTarget},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				v := newVerifier()
				loc := b.authorize(t, authQuery(client, testRedirect, policy.ChallengeS256(v), "resource", tc.atAuthorize))
				a := authz{client: client, redirect: testRedirect, verifier: v, code: loc.Query().Get("code")}
				status, body := f.exchange(t, a, "resource", tc.atToken)
				if tc.code != "" {
					wantError(t, status, body, http.StatusBadRequest, tc.code)
					return
				}
				tk := f.mustTokens(t, status, body)
				if aud := jwtPart(t, tk.AT, 1)["aud"]; aud != testResource {
					t.Errorf("aud = %v, want %s", aud, testResource)
				}
				f.wantAuthorized(t, tk.AT)
			}})
		}
		return rows, nil
	})
}

// TestServer_ResourceAliases (issue 27, item 5; SECURITY.md AS-34, RS-01, RS-09, RS-10): the MCP
// endpoint's aliases /api/mcp and /mcp/http are each a resource for discovery — metadata naming
// itself, a 401 pointing at it, accepted as resource on authorize and token — and one resource
// for tokens: a token obtained for any path is good at every path (its aud is the canonical
// /mcp), and a token for another resource is refused at every path.
func TestServer_ResourceAliases(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		paths := append([]string{MCPPath}, MCPAliases...)
		for _, p := range paths {
			rows = append(rows, bubbleRow{"metadata and challenge at " + p, func(t *testing.T) {
				w := f.serve(httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource"+p, nil))
				var pr map[string]any
				if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &pr) != nil {
					t.Fatalf("metadata: %d %s", w.Code, w.Body)
				}
				if pr["resource"] != testPublicURL+p {
					t.Errorf("resource = %v, want %s (RFC 9728 §3.3: the URL the client was given)", pr["resource"], testPublicURL+p)
				}
				w = f.mcpAt(p, "")
				want := `resource_metadata="` + testPublicURL + "/.well-known/oauth-protected-resource" + p + `"`
				if got := w.Header().Get("WWW-Authenticate"); w.Code != http.StatusUnauthorized || !strings.Contains(got, want) {
					t.Errorf("401 at %s: %d %q, want %s", p, w.Code, got, want)
				}
			}})
		}
		rows = append(rows, bubbleRow{"the bare document is the /mcp one", func(t *testing.T) {
			bare := f.serve(httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource", nil))
			mcp := f.serve(httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
			if bare.Code != http.StatusOK || bare.Body.String() != mcp.Body.String() {
				t.Errorf("bare document %d %s, want the /mcp one %s", bare.Code, bare.Body, mcp.Body)
			}
		}})
		for _, p := range paths {
			rows = append(rows, bubbleRow{"a token for " + p + " is good at every path", func(t *testing.T) {
				a := f.MustAuthorize(t, "resource", testPublicURL+p)
				tk := f.MustExchange(t, a, "resource", testPublicURL+p)
				if aud := jwtPart(t, tk.AT, 1)["aud"]; aud != testResource {
					t.Errorf("aud = %v, want the canonical %s", aud, testResource)
				}
				rt := f.MustRefresh(t, a.client, tk.RT, "resource", testPublicURL+p)
				for _, q := range paths {
					for _, at := range []string{tk.AT, rt.AT} {
						if w := f.mcpAt(q, at); w.Code != http.StatusOK {
							t.Errorf("token for %s at %s: %d %s", p, q, w.Code, w.Body)
						}
					}
				}
			}})
		}
		rows = append(rows, bubbleRow{"a token for another resource is refused at every path", func(t *testing.T) {
			tk := f.MustExchange(t, f.MustAuthorize(t))
			claims := jwtPart(t, tk.AT, 1)
			now := time.Now()
			for _, aud := range []string{"https://other.example/mcp", "https://other.example/api/mcp", testPublicURL + "/api/mcp", testPublicURL} {
				at, err := f.s.Keys().Mint(token.Claims{Issuer: testPublicURL, Subject: "owner", Audience: aud,
					ClientID: claims["client_id"].(string), Scope: []string{policy.ScopeRead}, GrantID: claims["grant_id"].(string),
					IssuedAt: now, Expiry: now.Add(time.Hour)})
				if err != nil {
					t.Fatal(err)
				}
				f.keep(at)
				for _, q := range paths {
					w := f.mcpAt(q, at)
					if w.Code != http.StatusUnauthorized || !strings.Contains(w.Header().Get("WWW-Authenticate"), `error="invalid_token"`) {
						t.Errorf("aud %s at %s: %d %q, want 401 invalid_token", aud, q, w.Code, w.Header().Get("WWW-Authenticate"))
					}
				}
			}
		}})
		return rows, nil
	})
}

// TestServer_TokenParameterPollution is SECURITY.md AS-35 at /token: a repeated parameter is
// invalid_request; unknown ones are ignored.
func TestServer_TokenParameterPollution(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		base := url.Values{"grant_type": {"authorization_code"}, "code": {a.code}, "code_verifier": {a.verifier},
			"client_id": {a.client}, "redirect_uri": {a.redirect}, "resource": {testResource}}
		for _, name := range []string{"grant_type", "code", "code_verifier", "client_id", "redirect_uri", "resource", "scope", "client_secret"} {
			rows = append(rows, bubbleRow{name, func(t *testing.T) {
				body := base.Encode() + "&" + name + "=" + url.QueryEscape(base.Get(name))
				if name == "scope" || name == "client_secret" {
					body += "&" + name + "=x"
				}
				status, m := f.tokenRaw(t, body)
				wantError(t, status, m, http.StatusBadRequest, policy.CodeInvalidRequest)
			}})
		}
		return rows, func(t *testing.T) {
			status, m := f.tokenRaw(t, base.Encode()+"&foo=1&foo=2&nonce=x&Code=osc_x")
			tk := f.mustTokens(t, status, m)
			status, m = f.refresh(t, a.client, tk.RT, "foo", "bar")
			f.mustTokens(t, status, m)
		}
	})
}

// TestServer_LegacyGrants is SECURITY.md AS-36 at /token: only authorization_code and
// refresh_token.
func TestServer_LegacyGrants(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	client := f.MustRegister(t, "", testRedirect)
	for _, gt := range []string{"password", "client_credentials", "implicit", "urn:ietf:params:oauth:grant-type:device_code",
		"urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:token-exchange", "Authorization_Code"} {
		status, m := f.tokenRaw(t, url.Values{"grant_type": {gt}, "client_id": {client}, "username": {DefaultUsername},
			"password": {testPassword}, "client_secret": {"x"}}.Encode())
		wantError(t, status, m, http.StatusBadRequest, policy.CodeUnsupportedGrantType)
	}
}

// TestServer_SecretsAtRest is SECURITY.md AS-17: the file holds no code, refresh token, personal
// access token or password, only their hashes.
func TestServer_SecretsAtRest(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t, func(c *Config) { c.Password = testPassword })
		a := f.MustAuthorize(t)
		t0 := f.MustExchange(t, a)
		t1 := f.MustRefresh(t, a.client, t0.RT)
		pat, _, err := f.s.PATs().Create("backup", policy.DefaultScopes, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.wantAuthorized(t, pat)
		f.s.Close()
		if err := f.db.Close(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		for name, secret := range map[string]string{
			"code": a.code, "first refresh token": t0.RT, "second refresh token": t1.RT, "PAT": pat,
			"access token": t1.AT, "verifier": a.verifier, "password": testPassword,
		} {
			// The random part alone, too: the prefix says nothing.
			for _, s := range []string{secret, secret[4:]} {
				if bytes.Contains(raw, []byte(s)) {
					t.Errorf("the file contains the %s", name)
				}
			}
		}
		h := token.HashToken(t0.RT)
		if !bytes.Contains(raw, h[:]) {
			t.Errorf("the file does not contain the refresh token's hash: is it stored at all?")
		}
	})
}

// TestServer_GeneratedPassword: without a configured password one is generated, shown once, and
// only its hash is stored; the next start does not generate another.
func TestServer_GeneratedPassword(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t, func(c *Config) { c.Password = "" })
	pw := f.s.GeneratedPassword()
	if len(pw) < 20 {
		t.Fatalf("generated password %q", pw)
	}
	f.keep(pw)
	again := f.copyServer(t)
	if again.s.GeneratedPassword() != "" {
		t.Errorf("a second start generated another password")
	}
	f.s.Close()
	f.db.Close()
	raw, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(pw)) || !bytes.Contains(raw, []byte("$argon2id$")) {
		t.Errorf("the file holds the generated password, or no hash of it")
	}
}

// TestServer_RevokeAll is SECURITY.md AS-17 "revoke-all": every access token fails at once and
// every refresh token is refused.
func TestServer_RevokeAll(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		type granted struct {
			a  authz
			tk tokens
		}
		var all []granted
		for range 3 {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			f.wantAuthorized(t, tk.AT)
			all = append(all, granted{a, tk})
		}
		n, err := f.s.Grants().RevokeAll()
		if err != nil || n != len(all) {
			t.Fatalf("RevokeAll = %d, %v", n, err)
		}
		for _, g := range all {
			f.wantRefused(t, g.tk.AT)
			status, m := f.refresh(t, g.a.client, g.tk.RT)
			wantError(t, status, m, http.StatusBadRequest, policy.CodeInvalidGrant)
		}
	})
}

// TestServer_KeyRotation is SECURITY.md AS-37: after Rotate new tokens carry the new kid, old ones
// keep working until the old key retires, and the JWKS lists both meanwhile.
func TestServer_KeyRotation(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		tk := f.MustExchange(t, a)
		claims := jwtPart(t, tk.AT, 1)
		now := time.Now()
		long, err := f.s.Keys().Mint(token.Claims{Issuer: testPublicURL, Subject: DefaultUsername, Audience: testResource,
			ClientID: a.client, Scope: policy.DefaultScopes, GrantID: claims["grant_id"].(string), Expiry: now.Add(token.MaxAccessTokenTTL)})
		if err != nil {
			t.Fatal(err)
		}
		f.keep(long)
		oldKID := jwtPart(t, tk.AT, 0)["kid"]

		if err := f.s.Keys().Rotate(); err != nil {
			t.Fatal(err)
		}
		tk2 := f.MustRefresh(t, a.client, tk.RT)
		newKID := jwtPart(t, tk2.AT, 0)["kid"]
		if newKID == oldKID || newKID != f.s.Keys().ActiveKID() {
			t.Errorf("kid after rotation %v, before %v", newKID, oldKID)
		}
		f.wantAuthorized(t, tk.AT)
		f.wantAuthorized(t, tk2.AT)
		if kids := jwksKIDs(t, f); !slices.Contains(kids, oldKID.(string)) || !slices.Contains(kids, newKID.(string)) {
			t.Errorf("JWKS kids %v during the overlap", kids)
		}

		time.Sleep(token.MaxAccessTokenTTL - time.Minute)
		f.wantAuthorized(t, long)
		time.Sleep(token.RetireAfter - token.MaxAccessTokenTTL + time.Minute + time.Second)
		if body := f.wantRefused(t, long); !strings.Contains(body, token.ErrUnknownKey.Error()) {
			t.Errorf("after retirement: %s, want %q", body, token.ErrUnknownKey)
		}
		if kids := jwksKIDs(t, f); slices.Contains(kids, oldKID.(string)) {
			t.Errorf("the retired kid is still published: %v", kids)
		}
	})
}

func jwksKIDs(t *testing.T, f *fixture) []string {
	t.Helper()
	w := f.serve(httptest.NewRequest(http.MethodGet, "/oauth/jwks.json", nil))
	var set struct {
		Keys []struct {
			KID string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.KID)
	}
	return kids
}

// forge builds a JWT with header and the claims of valid, signed by sign (the signature segment).
func forge(t *testing.T, valid string, header map[string]any, sign func(input string) string) string {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	input := base64.RawURLEncoding.EncodeToString(h) + "." + strings.Split(valid, ".")[1]
	return input + "." + sign(input)
}

// TestServer_Authenticate is SECURITY.md RS-01 to RS-08 and RS-11: tokens that are correctly
// signed but wrong, forged, or not access tokens at all are refused with 401 invalid_token.
func TestServer_Authenticate(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		a := f.MustAuthorize(t)
		tk := f.MustExchange(t, a)
		gid := jwtPart(t, tk.AT, 1)["grant_id"].(string)
		kid := f.s.Keys().ActiveKID()
		now := time.Now()
		base := token.Claims{Issuer: testPublicURL, Subject: DefaultUsername, Audience: testResource, ClientID: a.client,
			Scope: policy.DefaultScopes, GrantID: gid, Expiry: now.Add(time.Hour)}
		mint := func(adjust func(*token.Claims)) string {
			c := base
			adjust(&c)
			at, err := f.s.Keys().Mint(c)
			if err != nil {
				t.Fatal(err)
			}
			f.keep(at)
			return at
		}
		var pub []byte
		{
			var set struct {
				Keys []struct{ KID, X string } `json:"keys"`
			}
			json.Unmarshal(f.s.Keys().JWKS(), &set)
			for _, k := range set.Keys {
				if k.KID == kid {
					pub, _ = base64.RawURLEncoding.DecodeString(k.X)
				}
			}
			if len(pub) != 32 {
				t.Fatalf("no Ed25519 public key for %s in %s", kid, f.s.Keys().JWKS())
			}
		}
		hs256 := func(key []byte) func(string) string {
			return func(input string) string {
				m := hmac.New(sha256.New, key)
				m.Write([]byte(input))
				return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
			}
		}
		realSig := func(string) string { return strings.Split(tk.AT, ".")[2] }
		empty := func(string) string { return "" }
		hdr := func(pairs ...any) map[string]any {
			m := map[string]any{"alg": "EdDSA", "typ": "at+jwt", "kid": kid}
			for i := 0; i+1 < len(pairs); i += 2 {
				if pairs[i+1] == nil {
					delete(m, pairs[i].(string))
				} else {
					m[pairs[i].(string)] = pairs[i+1]
				}
			}
			return m
		}

		if p := f.wantAuthorized(t, mint(func(*token.Claims) {})); p.GrantID != gid {
			t.Fatalf("a token minted by hand is refused: %+v", p)
		}
		for _, tc := range []struct{ name, at string }{
			{"RS-01 another audience", mint(func(c *token.Claims) { c.Audience = "https://other.example/mcp" })},
			{"RS-01 the issuer as audience", mint(func(c *token.Claims) { c.Audience = testPublicURL })},
			{"RS-01 audience with a trailing slash", mint(func(c *token.Claims) { c.Audience = testResource + "/" })},
			{"RS-02 issuer with a trailing slash", mint(func(c *token.Claims) { c.Issuer = testPublicURL + "/" })},
			{"RS-02 issuer on http", mint(func(c *token.Claims) { c.Issuer = "http://mem.example.com" })},
			{"RS-02 another issuer", mint(func(c *token.Claims) { c.Issuer = "https://evil.example" })},
			{"RS-06 not yet valid", mint(func(c *token.Claims) { c.NotBefore = now.Add(2 * time.Minute) })},
			{"RS-06 issued in the future", mint(func(c *token.Claims) { c.IssuedAt = now.Add(2 * time.Minute) })},
			{"RS-07 unknown grant", mint(func(c *token.Claims) { c.GrantID = "gr_unknown" })},
			{"RS-03 alg none", forge(t, tk.AT, hdr("alg", "none"), empty)},
			{"RS-03 alg None", forge(t, tk.AT, hdr("alg", "None"), empty)},
			{"RS-03 alg NONE with the signature", forge(t, tk.AT, hdr("alg", "NONE"), realSig)},
			{"RS-03 HS256 keyed with the public key", forge(t, tk.AT, hdr("alg", "HS256"), hs256(pub))},
			{"RS-03 HS256 keyed with the JWKS", forge(t, tk.AT, hdr("alg", "HS256"), hs256(f.s.Keys().JWKS()))},
			{"RS-03 RS256", forge(t, tk.AT, hdr("alg", "RS256"), realSig)},
			{"RS-03 ES256 header on an EdDSA key", forge(t, tk.AT, hdr("alg", "ES256"), realSig)},
			{"RS-04 typ JWT", forge(t, tk.AT, hdr("typ", "JWT"), realSig)},
			{"RS-04 no typ", forge(t, tk.AT, hdr("typ", nil), realSig)},
			{"RS-05 unknown kid", forge(t, tk.AT, hdr("kid", "nope"), realSig)},
			{"RS-05 kid with a path", forge(t, tk.AT, hdr("kid", "../../etc/passwd"), realSig)},
			{"RS-05 no kid", forge(t, tk.AT, hdr("kid", nil), realSig)},
			{"RS-05 crit", forge(t, tk.AT, hdr("crit", []string{"exp"}), realSig)},
			{"RS-05 jku", forge(t, tk.AT, hdr("jku", "https://evil.example/jwks"), realSig)},
			{"RS-05 embedded jwk", forge(t, tk.AT, hdr("jwk", map[string]string{"kty": "OKP", "crv": "Ed25519", "x": "AAAA"}), realSig)},
			{"signature of another token", strings.Join(strings.Split(tk.AT, ".")[:2], ".") + "." + strings.Split(mint(func(c *token.Claims) { c.Scope = []string{policy.ScopeRead} }), ".")[2]},
			{"signature cut", tk.AT[:len(tk.AT)-2]},
			{"RS-11 a refresh token", tk.RT},
			{"RS-11 a code", a.code},
			{"RS-12 too long", strings.Repeat("a", 9<<10)},
			{"RS-12 many segments", strings.Repeat("a.", 10000) + "a"},
			{"four segments", tk.AT + ".x"},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				f.wantRefused(t, tc.at)
			}})
		}

		rows = append(rows, bubbleRow{"RS-06 expiry with leeway", func(t *testing.T) {
			at := mint(func(c *token.Claims) { c.Expiry = now.Add(2 * time.Minute) })
			time.Sleep(2*time.Minute + token.MaxLeeway - time.Second)
			f.wantAuthorized(t, at)
			time.Sleep(time.Second)
			f.wantRefused(t, at)
		}})
		rows = append(rows, bubbleRow{"RS-08 token in the query or body", func(t *testing.T) {
			for _, r := range []*http.Request{
				httptest.NewRequest(http.MethodPost, "/mcp?access_token="+url.QueryEscape(tk.AT), nil),
				httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader("access_token="+url.QueryEscape(tk.AT))),
			} {
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if w := f.serve(r); w.Code != http.StatusUnauthorized || strings.Contains(w.Header().Get("WWW-Authenticate"), "error=") {
					t.Errorf("%s: %d %q", r.URL, w.Code, w.Header().Get("WWW-Authenticate"))
				}
			}
		}})
		rows = append(rows, bubbleRow{"RS-08 case-insensitive scheme", func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header.Set("Authorization", "bEARER "+tk.AT)
			if w := f.serve(r); w.Code != http.StatusOK {
				t.Errorf("%d %s", w.Code, w.Body)
			}
		}})
		rows = append(rows, bubbleRow{"RS-07 revoked grant", func(t *testing.T) {
			fresh := mint(func(*token.Claims) {})
			if err := f.s.Grants().RevokeGrant(gid); err != nil {
				t.Fatal(err)
			}
			f.wantRefused(t, fresh)
			f.wantRefused(t, tk.AT)
		}})
		return rows, nil
	})
}

// TestServer_Revocation is RFC 7009 at /oauth/revoke: a refresh token revokes its family, an
// access token its grant, at once; an unknown token is not an error.
func TestServer_Revocation(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		revoke := func(t *testing.T, form url.Values) {
			t.Helper()
			w := f.post("/oauth/revoke", form.Encode())
			if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("revoke: %d %v %s", w.Code, w.Header(), w.Body)
			}
		}
		rows = append(rows, bubbleRow{"refresh token", func(t *testing.T) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			revoke(t, url.Values{"token": {tk.RT}, "token_type_hint": {"refresh_token"}, "client_id": {a.client}})
			f.wantRefused(t, tk.AT)
			status, m := f.refresh(t, a.client, tk.RT)
			wantError(t, status, m, http.StatusBadRequest, policy.CodeInvalidGrant)
		}})
		rows = append(rows, bubbleRow{"rotated refresh token", func(t *testing.T) {
			a := f.MustAuthorize(t)
			t0 := f.MustExchange(t, a)
			t1 := f.MustRefresh(t, a.client, t0.RT)
			revoke(t, url.Values{"token": {t0.RT}})
			f.wantRefused(t, t1.AT)
		}})
		rows = append(rows, bubbleRow{"access token", func(t *testing.T) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			revoke(t, url.Values{"token": {tk.AT}, "token_type_hint": {"access_token"}, "client_id": {a.client}})
			f.wantRefused(t, tk.AT)
			status, m := f.refresh(t, a.client, tk.RT)
			wantError(t, status, m, http.StatusBadRequest, policy.CodeInvalidGrant)
		}})
		rows = append(rows, bubbleRow{"access token of another client", func(t *testing.T) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			revoke(t, url.Values{"token": {tk.AT}, "client_id": {"cl_someone_else"}})
			f.wantAuthorized(t, tk.AT)
		}})
		rows = append(rows, bubbleRow{"unknown tokens", func(t *testing.T) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			for _, tok := range []string{"osr_unknown", "garbage", "a.b.c", "osk_unknown", a.code, strings.Repeat("x", 4000)} {
				revoke(t, url.Values{"token": {tok}})
			}
			f.wantAuthorized(t, tk.AT)
		}})
		rows = append(rows, bubbleRow{"malformed", func(t *testing.T) {
			for _, body := range []string{"", "token=a&token=b", "token_type_hint=refresh_token"} {
				w := f.post("/oauth/revoke", body)
				wantError(t, w.Code, f.oauthJSON(t, w), http.StatusBadRequest, policy.CodeInvalidRequest)
			}
			w := f.serve(httptest.NewRequest(http.MethodGet, "/oauth/revoke?token=x", nil))
			if w.Code != http.StatusMethodNotAllowed {
				t.Errorf("GET: %d", w.Code)
			}
		}})
		return rows, nil
	})
}

// TestServer_SignInUnderAttack is issue 13 items 5, 6 and 8 on the assembled server: while a
// thousand anonymous sign-in starts come from forty /64s and 34 addresses guess three times each,
// the owner's open login form, in the browser that signed in before (its device cookie), still
// signs in and allows; a browser without the device cookie is throttled; and the owner can sign
// out.
func TestServer_SignInUnderAttack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := MustOpenServer(t)
		client := f.MustRegister(t, "Owner's app", testRedirect)
		query := func() string { return authQuery(client, testRedirect, policy.ChallengeS256(newVerifier())) }
		from := func(ip string, r *http.Request) *httptest.ResponseRecorder {
			r.RemoteAddr = net.JoinHostPort(ip, "40000")
			return f.serve(r)
		}
		owner := f.browser()
		owner.authorize(t, query()) // signed in once: the browser keeps its device cookie
		time.Sleep(time.Hour)       // the session has ended
		w := owner.do(http.MethodGet, "/oauth/authorize?"+query(), nil, nil)
		action, txn, csrf := formFields(w.Body.String())
		if action != login.PathLogin {
			t.Fatalf("the owner's page after the session ended: %s, want the login form", action)
		}

		for i := range 1000 {
			if w := from(fmt.Sprintf("2001:db8:%x::%x", i%40, i), httptest.NewRequest(http.MethodGet, "/oauth/authorize?"+query(), nil)); w.Code != http.StatusOK {
				t.Fatalf("anonymous start %d: %d", i+1, w.Code)
			}
		}
		for i := range 34 {
			ip := fmt.Sprintf("198.51.100.%d", i+1)
			_, ltxn, lcsrf := formFields(from(ip, httptest.NewRequest(http.MethodGet, "/oauth/authorize?"+query(), nil)).Body.String())
			for range 3 {
				r := httptest.NewRequest(http.MethodPost, login.PathLogin, strings.NewReader(url.Values{"txn": {ltxn}, "csrf": {lcsrf},
					"username": {DefaultUsername}, "password": {"a guess"}}.Encode()))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				from(ip, r)
			}
		}

		login1 := url.Values{"txn": {txn}, "csrf": {csrf}, "username": {DefaultUsername}, "password": {testPassword}}
		if w := f.browser().do(http.MethodPost, login.PathLogin, login1, nil); w.Code != http.StatusTooManyRequests {
			t.Errorf("the right password from a browser without the device cookie: %d, want 429", w.Code)
		}
		w = owner.do(http.MethodPost, login.PathLogin, login1, nil)
		if w.Code != http.StatusSeeOther {
			t.Fatalf("the owner's form after the attack: %d, want 303; %s", w.Code, w.Body)
		}
		_, txn, csrf = formFields(owner.do(http.MethodGet, w.Header().Get("Location"), nil, nil).Body.String())
		if loc := owner.decide(t, txn, csrf, "allow"); loc.Query().Get("code") == "" {
			t.Errorf("no code: %s", loc)
		}

		_, _, lcsrf := formFields(owner.do(http.MethodGet, login.PathLogout, nil, nil).Body.String())
		if w := owner.do(http.MethodPost, login.PathLogout, url.Values{"csrf": {lcsrf}}, nil); w.Code != http.StatusSeeOther {
			t.Fatalf("sign-out: %d, want 303", w.Code)
		}
		if _, ok := owner.cookies[login.CookieSecure]; ok {
			t.Error("the session cookie survived sign-out")
		}
		if action, _, _ := formFields(owner.do(http.MethodGet, "/oauth/authorize?"+query(), nil, nil).Body.String()); action != login.PathLogin {
			t.Errorf("after sign-out /authorize shows %s, want the login form", action)
		}
	})
}

// TestServer_OfflineAccess: offline_access is accepted at registration, authorization and the
// token endpoint; a refresh token is issued with or without it; it never widens the memories
// scopes and never reaches the access token, while the granted scope string echoes it.
func TestServer_OfflineAccess(t *testing.T) {
	t.Parallel()
	bubbleTable(t, func(t *testing.T) ([]bubbleRow, func(t *testing.T)) {
		var rows []bubbleRow
		f := MustOpenServer(t)
		w := f.registerRaw(`{"client_name":"Offline","redirect_uris":["`+testRedirect+`"],"scope":"memories:read offline_access"}`, "")
		if w.Code != http.StatusCreated {
			t.Fatalf("registration with offline_access: %d %s", w.Code, w.Body)
		}
		client := f.MustRegister(t, "Offline", testRedirect)
		for _, tc := range []struct {
			name, scope, granted string
			resource             []string
		}{
			{"read and offline_access", "memories:read offline_access", "memories:read offline_access", []string{policy.ScopeRead}},
			{"offline_access alone", "offline_access", "memories:read memories:write offline_access", []string{policy.ScopeRead, policy.ScopeWrite}},
			{"without offline_access", "memories:read", "memories:read", []string{policy.ScopeRead}},
		} {
			rows = append(rows, bubbleRow{tc.name, func(t *testing.T) {
				a := f.MustAuthorizeClient(t, f.browser(), client, testRedirect, "scope", tc.scope)
				tk := f.MustExchange(t, a)
				if tk.Body["scope"] != tc.granted || tk.RT == "" {
					t.Errorf("token response scope %v, refresh token %q; want %q and a refresh token", tk.Body["scope"], tk.RT, tc.granted)
				}
				if claims := jwtPart(t, tk.AT, 1); claims["scope"] != policy.FormatScope(tc.resource) {
					t.Errorf("access token scope claim %v, want %q", claims["scope"], policy.FormatScope(tc.resource))
				}
				if p := f.wantAuthorized(t, tk.AT); !slices.Equal(p.Scope, tc.resource) {
					t.Errorf("principal scope %v, want %v", p.Scope, tc.resource)
				}
				// A refresh asking for offline_access alone keeps the grant's memories scopes.
				rt := f.MustRefresh(t, client, tk.RT, "scope", "offline_access")
				if s := fmt.Sprint(rt.Body["scope"]); !strings.Contains(s, "offline_access") || jwtPart(t, rt.AT, 1)["scope"] != policy.FormatScope(tc.resource) {
					t.Errorf("refresh with offline_access: scope %q, claim %v", s, jwtPart(t, rt.AT, 1)["scope"])
				}
				// It never widens: write on a read grant is still invalid_scope.
				if len(tc.resource) == 1 {
					if status, body := f.refresh(t, client, rt.RT, "scope", "memories:write offline_access"); status != http.StatusBadRequest || body["error"] != policy.CodeInvalidScope {
						t.Errorf("widening refresh: %d %v", status, body)
					}
				}
			}})
		}
		return rows, nil
	})
}
