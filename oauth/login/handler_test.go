package login

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/internal/httpscenario"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/rs/zerolog"
)

const (
	testUser     = "owner"
	testPassword = "s3cret-Passw0rd"
)

// testServer is a Handler with a fast fake password check and a recording
// CompleteFunc.
type testServer struct {
	h      *Handler
	log    *bytes.Buffer
	device *http.Cookie // the device cookie of the last mustLogIn

	mu       sync.Mutex
	complete []completeCall
}

type completeCall struct {
	req   Request
	allow bool
}

// mustNewTestServer returns a testServer on the clock time.Now: call it inside a synctest
// bubble, whose time stands still until the test sleeps.
func mustNewTestServer(tb testing.TB, secure bool) *testServer {
	tb.Helper()
	return mustNewTestServerWith(tb, func(c *Config) { c.Secure = secure })
}

// mustNewTestServerWith is mustNewTestServer with opt adjusting the Config.
func mustNewTestServerWith(tb testing.TB, opt func(*Config)) *testServer {
	tb.Helper()
	v, _, err := NewVerifier(testUser, "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g")
	if err != nil {
		tb.Fatal(err)
	}
	v.kdf = func(pw []byte) bool { return string(pw) == testPassword } // tests do not pay for argon2
	s := &testServer{log: new(bytes.Buffer)}
	cfg := Config{
		Verifier: v,
		Log:      zerolog.New(zerolog.SyncWriter(s.log)),
		Complete: func(ctx context.Context, req Request, allow bool) (string, error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.complete = append(s.complete, completeCall{req, allow})
			if allow {
				return req.RedirectURI + "?code=CODE&state=" + url.QueryEscape(req.State), nil
			}
			return req.RedirectURI + "?error=access_denied&state=" + url.QueryEscape(req.State), nil
		},
	}
	opt(&cfg)
	s.h, err = New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func testRequest() Request {
	return Request{
		ClientID:      "client-123",
		ClientName:    "Test App",
		RedirectURI:   "https://app.example/callback",
		Scope:         []string{"memories:read", "memories:write"},
		State:         "st-1",
		CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Resource:      "https://mem.example.com/mcp",
	}
}

var (
	txnRE  = regexp.MustCompile(`name="txn" value="([^"]+)"`)
	csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
)

// page is a response with the form fields it carries.
type page struct {
	*httptest.ResponseRecorder
	txn, csrf string
}

func newPage(tb testing.TB, rec *httptest.ResponseRecorder) page {
	tb.Helper()
	p := page{ResponseRecorder: rec}
	body := rec.Body.String()
	if m := txnRE.FindStringSubmatch(body); m != nil {
		p.txn = m[1]
	}
	if m := csrfRE.FindStringSubmatch(body); m != nil {
		p.csrf = m[1]
	}
	return p
}

// start runs Start as /authorize would, with cookies.
func (s *testServer) start(tb testing.TB, req Request, cookies ...*http.Cookie) page {
	tb.Helper()
	r := httptest.NewRequest("GET", "https://mem.example.com/oauth/authorize?client_id=x", nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	s.h.Start(rec, r, req)
	return newPage(tb, rec)
}

func (s *testServer) get(tb testing.TB, target string, cookies ...*http.Cookie) page {
	tb.Helper()
	r := httptest.NewRequest("GET", "https://mem.example.com"+target, nil)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	return newPage(tb, rec)
}

// post sends a same-origin form POST as a browser would; header adds or
// overrides request headers.
func (s *testServer) post(tb testing.TB, path string, form url.Values, header http.Header, cookies ...*http.Cookie) page {
	tb.Helper()
	return s.postFrom(tb, "", path, form, header, cookies...)
}

// postFrom is post from the address ip ("" for httptest's 192.0.2.1).
func (s *testServer) postFrom(tb testing.TB, ip, path string, form url.Values, header http.Header, cookies ...*http.Cookie) page {
	tb.Helper()
	r := httptest.NewRequest("POST", "https://mem.example.com"+path, strings.NewReader(form.Encode()))
	if ip != "" {
		r.RemoteAddr = net.JoinHostPort(ip, "40000")
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Origin", "https://mem.example.com")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	for k, vs := range header {
		r.Header[k] = vs
	}
	for _, c := range cookies {
		r.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	s.h.ServeHTTP(rec, r)
	return newPage(tb, rec)
}

func (s *testServer) login(tb testing.TB, p page, user, pw string, cookies ...*http.Cookie) page {
	tb.Helper()
	return s.loginFrom(tb, "", p, user, pw, cookies...)
}

// loginFrom is login from the address ip.
func (s *testServer) loginFrom(tb testing.TB, ip string, p page, user, pw string, cookies ...*http.Cookie) page {
	tb.Helper()
	return s.postFrom(tb, ip, PathLogin, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {user}, "password": {pw}}, nil, cookies...)
}

func sessionCookie(tb testing.TB, rec *httptest.ResponseRecorder) *http.Cookie {
	tb.Helper()
	if c := findCookie(rec, CookieSecure, CookiePlain); c != nil {
		return c
	}
	tb.Fatalf("no session cookie in %q", rec.Header().Values("Set-Cookie"))
	return nil
}

func deviceCookie(tb testing.TB, rec *httptest.ResponseRecorder) *http.Cookie {
	tb.Helper()
	if c := findCookie(rec, DeviceCookieSecure, DeviceCookiePlain); c != nil {
		return c
	}
	tb.Fatalf("no device cookie in %q", rec.Header().Values("Set-Cookie"))
	return nil
}

// findCookie returns the cookie rec sets under one of names, or nil.
func findCookie(rec *httptest.ResponseRecorder, names ...string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if slices.Contains(names, c.Name) {
			return c
		}
	}
	return nil
}

// mustLogIn starts a transaction, logs in and follows the 303; it returns
// the consent page and the session cookie.
func (s *testServer) mustLogIn(tb testing.TB, req Request) (page, *http.Cookie) {
	tb.Helper()
	p := s.start(tb, req)
	if p.Code != http.StatusOK || p.txn == "" || p.csrf == "" {
		tb.Fatalf("Start = %d with txn %q csrf %q, want 200 with both", p.Code, p.txn, p.csrf)
	}
	res := s.login(tb, p, testUser, testPassword)
	if res.Code != http.StatusSeeOther {
		tb.Fatalf("login = %d, want 303; body %s", res.Code, res.Body)
	}
	c := sessionCookie(tb, res.ResponseRecorder)
	s.device = deviceCookie(tb, res.ResponseRecorder)
	consent := s.get(tb, res.Header().Get("Location"), c)
	if consent.Code != http.StatusOK || !strings.Contains(consent.Body.String(), `value="allow"`) {
		tb.Fatalf("consent page = %d, want 200 with Allow; body %s", consent.Code, consent.Body)
	}
	return consent, c
}

func TestHandler_Flow(t *testing.T) {
	for _, tt := range []struct {
		action string
		want   string
	}{
		{"allow", "https://app.example/callback?code=CODE&state=st-1"},
		{"deny", "https://app.example/callback?error=access_denied&state=st-1"},
	} {
		t.Run(tt.action, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mustNewTestServer(t, true)
				consent, c := s.mustLogIn(t, testRequest())
				time.Sleep(ConsentDelay)
				res := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {tt.action}}, nil, c)
				if res.Code != http.StatusSeeOther {
					t.Fatalf("consent = %d, want 303; body %s", res.Code, res.Body)
				}
				if got := res.Header().Get("Location"); got != tt.want {
					t.Errorf("Location = %q, want %q", got, tt.want)
				}
				s.mu.Lock()
				last := s.complete[len(s.complete)-1]
				s.mu.Unlock()
				if want := testRequest(); last.allow != (tt.action == "allow") || !slices.Equal(last.req.Scope, want.Scope) ||
					last.req.ClientID != want.ClientID || last.req.CodeChallenge != want.CodeChallenge || last.req.Resource != want.Resource {
					t.Errorf("Complete got %+v, want %+v allow=%v", last, want, tt.action == "allow")
				}

				again := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {tt.action}}, nil, c)
				if again.Code != http.StatusForbidden {
					t.Errorf("second decision = %d, want 403", again.Code)
				}
			})
		})
	}
	t.Run("logged in: Start shows consent at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			_, c := s.mustLogIn(t, testRequest())
			p := s.start(t, testRequest(), c)
			if p.Code != http.StatusOK || !strings.Contains(p.Body.String(), `value="allow"`) {
				t.Fatalf("Start with a session = %d, want the consent page", p.Code)
			}
			time.Sleep(ConsentDelay)
			res := s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}, nil, c)
			if res.Code != http.StatusSeeOther {
				t.Errorf("consent = %d, want 303", res.Code)
			}
			if !s.h.LoggedIn(httptestRequestWith(c)) {
				t.Error("LoggedIn = false with a live session")
			}
			time.Sleep(time.Hour)
			if s.h.LoggedIn(httptestRequestWith(c)) {
				t.Error("LoggedIn = true after SessionTTL")
			}
		})
	})
	t.Run("expired transaction", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			p := s.start(t, testRequest())
			time.Sleep(11 * time.Minute)
			if res := s.login(t, p, testUser, testPassword); res.Code != http.StatusForbidden {
				t.Errorf("login after TxnTTL = %d, want 403", res.Code)
			}
			if res := s.get(t, continueURL(p.txn)); res.Code != http.StatusBadRequest {
				t.Errorf("continue after TxnTTL = %d, want 400", res.Code)
			}
		})
	})
}

func httptestRequestWith(c *http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "https://mem.example.com/oauth/authorize", nil)
	r.AddCookie(c)
	return r
}

func TestHandler_WrongUserAndWrongPassword(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		type outcome struct {
			status   int
			location string
			cookies  int
			body     string
			page     string
		}
		try := func(user, pw string) outcome {
			p := s.start(t, testRequest())
			res := s.login(t, p, user, pw)
			loc := res.Header().Get("Location")
			next := s.get(t, loc)
			if u, err := url.Parse(loc); err == nil && u.Query().Get("txn") != "" {
				loc = u.Path + "?txn=TXN" // each transaction has its own token
			}
			clean := strings.NewReplacer(next.txn, "TXN", next.csrf, "CSRF").Replace(next.Body.String())
			return outcome{res.Code, loc, len(res.Result().Cookies()), res.Body.String(), clean}
		}
		wrongUser := try("intruder", testPassword)
		wrongPW := try(testUser, "guess")
		if wrongUser != wrongPW {
			t.Errorf("wrong user → %+v\nwrong password → %+v\nwant identical", wrongUser, wrongPW)
		}
		if wrongUser.status != http.StatusSeeOther || wrongUser.cookies != 0 || !strings.Contains(wrongUser.page, msgWrong) {
			t.Errorf("wrong login → %d with %d cookies, page without %q", wrongUser.status, wrongUser.cookies, msgWrong)
		}
	})
}

// scenario is one request to a Handler and what its answer must hold.
type scenario[F any] = httpscenario.Scenario[Config, F]

// sameOrigin are the headers of post's form: a browser's, from the server's own page.
var sameOrigin = map[string]string{"Origin": "https://mem.example.com", "Sec-Fetch-Site": "same-origin"}

// headers is sameOrigin with over: a header there replaces one, an empty value removes it.
func headers(over map[string]string) map[string]string {
	h := maps.Clone(sameOrigin)
	maps.Copy(h, over)
	return h
}

// loginForms is a server with two login forms open: the one a row sends and another.
type loginForms struct {
	*testServer
	p, other page
}

// loginPosts serves each scenario to a server of its own, on https, in a synctest bubble.
var loginPosts = httpscenario.Runner[Config, *loginForms]{
	Open: func(tb testing.TB, opts ...func(*Config)) *loginForms {
		tb.Helper()
		s := mustNewTestServer(tb, true)
		return &loginForms{s, s.start(tb, testRequest()), s.start(tb, testRequest())}
	},
	Handler: func(f *loginForms) http.Handler { return f.h },
	Base:    "https://mem.example.com",
	Bubble:  true,
}

// consentForm is a server with a session and its consent page open; a row's Before may send
// another form or cookie.
type consentForm struct {
	*testServer
	tb     testing.TB
	form   page         // the consent page whose form is sent
	cookie *http.Cookie // the session cookie sent, if any
}

// consentPosts serves each scenario to a server of its own, signed in, in a synctest bubble.
var consentPosts = httpscenario.Runner[Config, *consentForm]{
	Open: func(tb testing.TB, opts ...func(*Config)) *consentForm {
		tb.Helper()
		s := mustNewTestServer(tb, true)
		consent, c := s.mustLogIn(tb, testRequest())
		return &consentForm{testServer: s, tb: tb, form: consent, cookie: c}
	},
	Handler: func(f *consentForm) http.Handler { return f.h },
	Base:    "https://mem.example.com",
	Bubble:  true,
}

// TestHandler_CSRF: each case on a server of its own.
func TestHandler_CSRF(t *testing.T) {
	t.Run("login", func(t *testing.T) {
		login := func(name string, form func(p, other page) url.Values, header map[string]string, status int) scenario[*loginForms] {
			sc := scenario[*loginForms]{Name: name, Method: http.MethodPost, URL: PathLogin, Headers: headers(header),
				FormFor: func(f *loginForms) url.Values { return form(f.p, f.other) }, WantStatus: status}
			if status != http.StatusSeeOther {
				sc.WantNoHeaders = []string{"Set-Cookie"} // a refused login sets no cookie
			}
			return sc
		}
		valid := func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}
		loginPosts.Run(t, []scenario[*loginForms]{
			login("missing token", func(p, _ page) url.Values {
				return url.Values{"txn": {p.txn}, "username": {testUser}, "password": {testPassword}}
			}, nil, http.StatusForbidden),
			login("empty token", func(p, _ page) url.Values {
				return url.Values{"txn": {p.txn}, "csrf": {""}, "username": {testUser}, "password": {testPassword}}
			}, nil, http.StatusForbidden),
			login("missing transaction", func(p, _ page) url.Values {
				return url.Values{"csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
			}, nil, http.StatusForbidden),
			login("another transaction's token", func(p, other page) url.Values {
				return url.Values{"txn": {p.txn}, "csrf": {other.csrf}, "username": {testUser}, "password": {testPassword}}
			}, nil, http.StatusForbidden),
			login("Sec-Fetch-Site cross-site", valid, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden),
			login("Sec-Fetch-Site same-site", valid, map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden),
			login("foreign Origin", valid, map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}, http.StatusForbidden),
			login("smuggled client_id", func(p, _ page) url.Values {
				return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}, "client_id": {"evil"}}
			}, nil, http.StatusBadRequest),
			login("repeated field", func(p, _ page) url.Values {
				return url.Values{"txn": {p.txn}, "csrf": {p.csrf, p.csrf}, "username": {testUser}, "password": {testPassword}}
			}, nil, http.StatusBadRequest),
			login("JSON body", valid, map[string]string{"Content-Type": "application/json"}, http.StatusBadRequest),
			login("valid", valid, nil, http.StatusSeeOther),
		})
	})

	t.Run("consent", func(t *testing.T) {
		// consent posts the form of f.form (action allow, and extra) with f.cookie; Complete must
		// not be called.
		consent := func(name string, before func(*consentForm), form func(p page) url.Values, header map[string]string, status int) scenario[*consentForm] {
			return scenario[*consentForm]{Name: name, Before: before, Method: http.MethodPost, URL: PathConsent, Headers: headers(header),
				FormFor: func(f *consentForm) url.Values { return form(f.form) },
				Request: func(f *consentForm, r *http.Request) {
					if f.cookie != nil {
						r.AddCookie(f.cookie)
					}
				},
				WantStatus: status,
				After: func(t *testing.T, f *consentForm, _ *httptest.ResponseRecorder) {
					if len(f.complete) != 0 {
						t.Error("Complete was called")
					}
				}}
		}
		allow := func(extra ...string) func(p page) url.Values {
			return func(p page) url.Values {
				v := url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}
				for i := 0; i+1 < len(extra); i += 2 {
					v.Set(extra[i], extra[i+1])
				}
				return v
			}
		}
		get := consent("GET with the form", nil, nil, nil, http.StatusMethodNotAllowed)
		get.Method, get.FormFor = http.MethodGet, nil
		get.Headers = nil // s.get sends no Origin
		get.Request = func(f *consentForm, r *http.Request) {
			r.URL.RawQuery = allow()(f.form).Encode()
			r.AddCookie(f.cookie)
		}
		consentPosts.Run(t, []scenario[*consentForm]{
			consent("missing token", nil, func(p page) url.Values { return url.Values{"txn": {p.txn}, "action": {"allow"}} }, nil, http.StatusForbidden),
			consent("another transaction's token", func(f *consentForm) {
				f.form.csrf = f.start(f.tb, testRequest(), f.cookie).csrf // the txn stays the first's
			}, allow(), nil, http.StatusForbidden),
			consent("the token from before login", func(f *consentForm) {
				f.form = f.start(f.tb, testRequest())
				f.cookie = sessionCookie(f.tb, f.login(f.tb, f.form, testUser, testPassword, f.cookie).ResponseRecorder)
			}, allow(), nil, http.StatusForbidden),
			consent("no session", func(f *consentForm) { f.cookie = nil }, allow(), nil, http.StatusForbidden),
			consent("another session", func(f *consentForm) { _, f.cookie = f.mustLogIn(f.tb, testRequest()) }, allow(), nil, http.StatusForbidden),
			consent("Sec-Fetch-Site cross-site", nil, allow(), map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden),
			consent("foreign Origin", nil, allow(), map[string]string{"Sec-Fetch-Site": "", "Origin": "https://evil.example"}, http.StatusForbidden),
			consent("smuggled redirect_uri", nil, allow("redirect_uri", "https://evil.example/cb"), nil, http.StatusBadRequest),
			consent("smuggled scope", nil, allow("scope", "memories:write"), nil, http.StatusBadRequest),
			consent("unknown action", nil, allow("action", "maybe"), nil, http.StatusBadRequest),
			get,
		})
	})

	t.Run("GET to the login endpoint", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			res := s.get(t, PathLogin)
			if res.Code != http.StatusMethodNotAllowed {
				t.Errorf("GET %s = %d, want 405", PathLogin, res.Code)
			}
			if got := res.Header().Get("Allow"); got != "POST" {
				t.Errorf("Allow = %q, want POST", got)
			}
		})
	})
}

func TestHandler_Cookie(t *testing.T) {
	for _, tt := range []struct {
		name     string
		secure   bool
		wantName string
	}{
		{"https", true, CookieSecure},
		{"plain-http loopback", false, CookiePlain},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mustNewTestServer(t, tt.secure)
				res := s.login(t, s.start(t, testRequest()), testUser, testPassword)
				raw := res.Header().Values("Set-Cookie")
				if len(raw) != 2 {
					t.Fatalf("Set-Cookie = %q, want the session and the device cookie", raw)
				}
				c := sessionCookie(t, res.ResponseRecorder)
				if c.Name != tt.wantName {
					t.Errorf("Name = %q, want %q", c.Name, tt.wantName)
				}
				if c.Secure != tt.secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteLaxMode {
					t.Errorf("cookie %q: want Secure=%v, HttpOnly, Path=/, no Domain, SameSite=Lax", c, tt.secure)
				}
				if c.MaxAge != 3600 {
					t.Errorf("MaxAge = %d, want 3600", c.MaxAge)
				}
				if len(c.Value) < 43 {
					t.Errorf("session id of %d characters, want ≥ 43 (256 bits)", len(c.Value))
				}

				// Logging in again rotates the session and ends the old one.
				res2 := s.login(t, s.start(t, testRequest()), testUser, testPassword, c)
				c2 := sessionCookie(t, res2.ResponseRecorder)
				if c2.Value == c.Value {
					t.Error("login kept the session id")
				}
				if s.h.LoggedIn(requestWith(c)) {
					t.Error("the old session still works after a new login")
				}
				if !s.h.LoggedIn(requestWith(c2)) {
					t.Error("the new session does not work")
				}
			})
		})
	}
}

func requestWith(c *http.Cookie) *http.Request {
	r := httptest.NewRequest("GET", "https://mem.example.com/", nil)
	r.AddCookie(c)
	return r
}

func TestHandler_Throttle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		p := s.start(t, testRequest())
		for i := range 3 {
			if res := s.login(t, p, testUser, "wrong"); res.Code != http.StatusSeeOther {
				t.Fatalf("wrong password %d = %d, want 303", i+1, res.Code)
			}
		}
		res := s.login(t, p, testUser, testPassword)
		if res.Code != http.StatusTooManyRequests {
			t.Fatalf("4th attempt at once = %d, want 429", res.Code)
		}
		if got := res.Header().Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After = %q, want 1", got)
		}
		if len(res.Result().Cookies()) != 0 {
			t.Error("a throttled login set a cookie, though the password was right")
		}
		time.Sleep(time.Second)
		if res := s.login(t, p, testUser, testPassword); res.Code != http.StatusSeeOther || len(res.Result().Cookies()) != 2 {
			t.Errorf("after Retry-After, the right password = %d, want 303 with the session and device cookies", res.Code)
		}
	})

	t.Run("busy", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			p := s.start(t, testRequest())
			r := httptest.NewRequest("POST", "https://mem.example.com"+PathLogin, strings.NewReader(
				url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}.Encode()))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			ctx, cancel := context.WithCancel(r.Context())
			cancel() // as if every check slot stayed taken until the deadline
			rec := httptest.NewRecorder()
			s.h.ServeHTTP(rec, r.WithContext(ctx))
			if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
				t.Errorf("busy login = %d with Retry-After %q, want 503 with Retry-After", rec.Code, rec.Header().Get("Retry-After"))
			}
		})
	})
}

// TestHandler_OnSignIn: every password check is reported once, by how it ended (the
// metrics' ownsona_sign_ins_total), whatever form made it.
func TestHandler_OnSignIn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var got []string
		s := mustNewTestServerWith(t, func(c *Config) {
			c.Secure = true
			c.OnSignIn = func(result string) { mu.Lock(); got = append(got, result); mu.Unlock() }
		})
		p := s.start(t, testRequest())
		for range 3 {
			s.login(t, p, testUser, "wrong")
		}
		s.login(t, p, testUser, testPassword) // throttled: the password is not checked
		time.Sleep(time.Second)
		s.login(t, p, testUser, testPassword)
		r := httptest.NewRequest("POST", "https://mem.example.com/console/signin", nil)
		if err := s.h.CheckOwner(httptest.NewRecorder(), r, "intruder", testPassword); !errors.Is(err, ErrWrongCredentials) {
			t.Fatalf("CheckOwner with a wrong username = %v, want ErrWrongCredentials", err)
		}
		want := []string{SignInWrong, SignInWrong, SignInWrong, SignInThrottled, SignInOK, SignInWrong}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) {
			t.Errorf("OnSignIn was told %q, want %q", got, want)
		}
	})
}

func TestHandler_LogsNoSecrets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		p := s.start(t, testRequest())
		s.login(t, p, "intruder", "a-wrong-guess")
		consent, c := s.mustLogIn(t, testRequest())
		s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {"forged"}, "action": {"allow"}}, nil, c)
		s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c) // too soon
		time.Sleep(ConsentDelay)
		s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c)
		logout := s.get(t, PathLogout, c)
		s.post(t, PathLogout, url.Values{"csrf": {logout.csrf}}, nil, c)
		logs := s.log.String()
		for _, want := range []string{"login succeeded", "login failed", "within a second", "consent", "signed out"} {
			if !strings.Contains(logs, want) {
				t.Fatalf("logs lack %q:\n%s", want, logs)
			}
		}
		for _, secret := range []string{testPassword, "a-wrong-guess", testUser, "intruder", c.Value, s.device.Value,
			consent.csrf, consent.txn, p.txn, p.csrf, logout.csrf} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain %q:\n%s", secret, logs)
			}
		}
	})
}

// continueURL is the PathContinue URL of the transaction token tok.
func continueURL(tok string) string {
	return PathContinue + "?txn=" + url.QueryEscape(tok)
}

// TestHandler_SignInFlood is issue 13 item 5: a thousand anonymous sign-in starts from forty
// /64s store nothing, so the owner's login form, opened before them, still signs in.
func TestHandler_SignInFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		owner := s.start(t, testRequest())
		time.Sleep(time.Second) // the owner's form is the oldest: the first a full store would drop
		for i := range 1000 {
			r := httptest.NewRequest("GET", "https://mem.example.com/oauth/authorize?client_id=x", nil)
			r.RemoteAddr = net.JoinHostPort(fmt.Sprintf("2001:db8:%x::%x", i%40, i), "40000")
			rec := httptest.NewRecorder()
			s.h.Start(rec, r, testRequest())
			if rec.Code != http.StatusOK {
				t.Fatalf("start %d = %d, want 200", i+1, rec.Code)
			}
		}
		res := s.login(t, owner, testUser, testPassword)
		if res.Code != http.StatusSeeOther {
			t.Fatalf("the owner's login after the flood = %d, want 303; body %s", res.Code, res.Body)
		}
		consent := s.get(t, res.Header().Get("Location"), sessionCookie(t, res.ResponseRecorder))
		if consent.Code != http.StatusOK || !strings.Contains(consent.Body.String(), `value="allow"`) {
			t.Errorf("consent page = %d, want 200 with Allow", consent.Code)
		}
	})
}

// TestHandler_Transaction: the signed transaction cannot be changed, outlive its TxnTTL (even
// re-signed by later pages), be decided twice, or grow without bound; it survives a restart on
// the same file.
func TestHandler_Transaction(t *testing.T) {
	t.Run("tampered request", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			consent, c := s.mustLogIn(t, testRequest())
			body, sig, _ := strings.Cut(consent.txn, ".")
			raw, err := base64.RawURLEncoding.DecodeString(body)
			if err != nil {
				t.Fatal(err)
			}
			evil := strings.Replace(string(raw), "https://app.example/callback", "https://evil.example/callback", 1)
			forged := base64.RawURLEncoding.EncodeToString([]byte(evil)) + "." + sig
			time.Sleep(ConsentDelay)
			for _, tok := range []string{forged, consent.txn + "x", "", "a.b"} {
				res := s.post(t, PathConsent, url.Values{"txn": {tok}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c)
				if res.Code != http.StatusForbidden {
					t.Errorf("consent with txn %.40q… = %d, want 403", tok, res.Code)
				}
			}
			if len(s.complete) != 0 {
				t.Errorf("Complete called with %+v", s.complete)
			}
		})
	})
	t.Run("expiry is kept by later pages", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			p := s.start(t, testRequest())
			time.Sleep(9 * time.Minute)
			res := s.login(t, p, testUser, testPassword)
			if res.Code != http.StatusSeeOther {
				t.Fatalf("login within TxnTTL = %d, want 303", res.Code)
			}
			c := sessionCookie(t, res.ResponseRecorder)
			consent := s.get(t, res.Header().Get("Location"), c)
			time.Sleep(time.Minute)
			if res := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c); res.Code != http.StatusForbidden {
				t.Errorf("consent after TxnTTL from Start = %d, want 403", res.Code)
			}
		})
	})
	t.Run("decided once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			consent, c := s.mustLogIn(t, testRequest())
			again := s.get(t, continueURL(consent.txn), c) // the same transaction, re-signed
			time.Sleep(ConsentDelay)
			if res := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c); res.Code != http.StatusSeeOther {
				t.Fatalf("consent = %d, want 303", res.Code)
			}
			for name, res := range map[string]page{
				"the same form":      s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c),
				"its re-signed form": s.post(t, PathConsent, url.Values{"txn": {again.txn}, "csrf": {again.csrf}, "action": {"deny"}}, nil, c),
			} {
				if res.Code != http.StatusForbidden {
					t.Errorf("%s after the decision = %d, want 403", name, res.Code)
				}
			}
			if res := s.get(t, continueURL(consent.txn), c); res.Code != http.StatusBadRequest {
				t.Errorf("its page after the decision = %d, want 400", res.Code)
			}
			if len(s.complete) != 1 {
				t.Errorf("Complete called %d times, want once", len(s.complete))
			}
		})
	})
	t.Run("too large", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			req := testRequest()
			req.State = strings.Repeat("s", maxTxn)
			if p := s.start(t, req); p.Code != http.StatusBadRequest || !strings.Contains(p.Body.String(), "too large") {
				t.Errorf("Start with a %d-byte state = %d, want 400", len(req.State), p.Code)
			}
		})
	})
	t.Run("restart", func(t *testing.T) {
		db := kvtest.Open(t)
		synctest.Test(t, func(t *testing.T) {
			p := mustNewTestServerWith(t, func(c *Config) { c.DB = db }).start(t, testRequest())
			restarted := mustNewTestServerWith(t, func(c *Config) { c.DB = db })
			if res := restarted.login(t, p, testUser, testPassword); res.Code != http.StatusSeeOther {
				t.Errorf("a form from before the restart = %d, want 303", res.Code)
			}
			if res := mustNewTestServer(t, true).login(t, p, testUser, testPassword); res.Code != http.StatusForbidden {
				t.Errorf("a form on another server's key = %d, want 403", res.Code)
			}
		})
	})
}

// TestHandler_DeviceCookie is issue 13 item 6: while 34 addresses guess three times each and
// fill the global bucket, a browser without a device cookie is refused even with the right
// password, and the owner's browser, with the device cookie of its last sign-in, signs in.
func TestHandler_DeviceCookie(t *testing.T) {
	t.Run("distributed guessing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			s.mustLogIn(t, testRequest())
			dev := s.device
			for i := range 34 {
				p := s.start(t, testRequest())
				for range 3 {
					s.loginFrom(t, fmt.Sprintf("198.51.100.%d", i+1), p, testUser, "a guess")
				}
			}
			p := s.start(t, testRequest())
			stranger := s.loginFrom(t, "203.0.113.7", p, testUser, testPassword)
			if stranger.Code != http.StatusTooManyRequests || findCookie(stranger.ResponseRecorder, CookieSecure) != nil {
				t.Errorf("without the device cookie = %d, want 429 and no session", stranger.Code)
			}
			owner := s.loginFrom(t, "203.0.113.7", p, testUser, testPassword, dev)
			if owner.Code != http.StatusSeeOther {
				t.Fatalf("with the device cookie = %d, want 303; body %s", owner.Code, owner.Body)
			}
			c := sessionCookie(t, owner.ResponseRecorder)
			if consent := s.get(t, owner.Header().Get("Location"), c); consent.Code != http.StatusOK || !strings.Contains(consent.Body.String(), `value="allow"`) {
				t.Errorf("consent page = %d, want 200 with Allow", consent.Code)
			}
		})
	})
	t.Run("its own limit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			s.mustLogIn(t, testRequest())
			dev := s.device
			p := s.start(t, testRequest())
			for i := range MaxDeviceFailures { // no growing delays: the limit is a count
				if res := s.loginFrom(t, "203.0.113.7", p, testUser, "a guess", dev); res.Code != http.StatusSeeOther {
					t.Fatalf("wrong password %d with the device cookie = %d, want 303", i+1, res.Code)
				}
			}
			res := s.loginFrom(t, "203.0.113.7", p, testUser, testPassword, dev)
			if res.Code != http.StatusTooManyRequests || res.Header().Get("Retry-After") != "3600" {
				t.Errorf("attempt %d = %d with Retry-After %q, want 429 with 3600", MaxDeviceFailures+1, res.Code, res.Header().Get("Retry-After"))
			}
			if res := s.loginFrom(t, "203.0.113.7", p, testUser, testPassword); res.Code != http.StatusSeeOther {
				t.Errorf("the same address without the device cookie = %d, want 303: its failures were the device's", res.Code)
			}
			time.Sleep(DeviceWindow)
			if res := s.loginFrom(t, "203.0.113.7", s.start(t, testRequest()), testUser, testPassword, dev); res.Code != http.StatusSeeOther {
				t.Errorf("after DeviceWindow = %d, want 303", res.Code)
			}
		})
	})
	t.Run("cookie", func(t *testing.T) {
		for _, tt := range []struct {
			name     string
			secure   bool
			wantName string
		}{
			{"https", true, DeviceCookieSecure},
			{"plain-http loopback", false, DeviceCookiePlain},
		} {
			t.Run(tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					s := mustNewTestServer(t, tt.secure)
					res := s.login(t, s.start(t, testRequest()), testUser, testPassword)
					d := deviceCookie(t, res.ResponseRecorder)
					if d.Name != tt.wantName {
						t.Errorf("Name = %q, want %q", d.Name, tt.wantName)
					}
					if d.Secure != tt.secure || !d.HttpOnly || d.Path != "/" || d.Domain != "" || d.SameSite != http.SameSiteLaxMode {
						t.Errorf("cookie %q: want Secure=%v, HttpOnly, Path=/, no Domain, SameSite=Lax", d, tt.secure)
					}
					if got, want := d.MaxAge, int(DeviceTTL/time.Second); got != want {
						t.Errorf("MaxAge = %d, want %d", got, want)
					}
					if len(d.Value) < 43 {
						t.Errorf("device cookie of %d characters, want ≥ 43 (256 bits)", len(d.Value))
					}
					// Each sign-in sets a new one; the old one no longer passes the global bucket.
					res2 := s.login(t, s.start(t, testRequest()), testUser, testPassword, d)
					d2 := deviceCookie(t, res2.ResponseRecorder)
					if d2.Value == d.Value {
						t.Error("a sign-in kept the device cookie")
					}
					if got := s.h.device(requestWith(d)); got != "" {
						t.Error("the replaced device cookie is still valid")
					}
					if got := s.h.device(requestWith(d2)); got == "" {
						t.Error("the new device cookie is not valid")
					}
				})
			})
		}
	})
	t.Run("kept hashed across a restart", func(t *testing.T) {
		db := kvtest.Open(t)
		var dev *http.Cookie
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServerWith(t, func(c *Config) { c.DB = db; c.Secure = true })
			s.mustLogIn(t, testRequest())
			dev = s.device
			restarted := mustNewTestServerWith(t, func(c *Config) { c.DB = db; c.Secure = true })
			if restarted.h.device(requestWith(dev)) == "" {
				t.Error("the device is forgotten after a restart")
			}
			time.Sleep(DeviceTTL)
			if restarted.h.device(requestWith(dev)) != "" {
				t.Error("the device cookie is valid after DeviceTTL")
			}
		})
		var file bytes.Buffer
		if _, err := db.Backup(&file); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(file.Bytes(), []byte(dev.Value)) {
			t.Error("the file holds the device cookie itself, not its digest")
		}
		if !bytes.Contains(file.Bytes(), func() []byte { d := sha256.Sum256([]byte(dev.Value)); return d[:] }()) {
			t.Error("the file lacks the device's digest")
		}
	})
}

// TestHandler_ConsentDelay is issue 13 item 8: Allow counts only once the consent page has
// been shown for ConsentDelay; sooner, the page comes back with a message and a second of its
// own. Deny is never delayed.
func TestHandler_ConsentDelay(t *testing.T) {
	allow := func(p page) url.Values {
		return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}
	}
	t.Run("allow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			consent, c := s.mustLogIn(t, testRequest())
			time.Sleep(ConsentDelay - time.Millisecond)
			soon := s.post(t, PathConsent, allow(consent), nil, c)
			if soon.Code != http.StatusBadRequest || !strings.Contains(soon.Body.String(), msgTooSoon) || soon.Header().Get("Location") != "" {
				t.Fatalf("allow %v after the page = %d, want 400 with %q", ConsentDelay-time.Millisecond, soon.Code, msgTooSoon)
			}
			if len(s.complete) != 0 {
				t.Fatal("Complete was called")
			}
			time.Sleep(time.Millisecond)
			if res := s.post(t, PathConsent, allow(soon), nil, c); res.Code != http.StatusBadRequest {
				t.Errorf("allow at once on the page shown again = %d, want 400", res.Code)
			}
			time.Sleep(ConsentDelay)
			res := s.post(t, PathConsent, allow(soon), nil, c)
			if res.Code != http.StatusSeeOther || !strings.HasPrefix(res.Header().Get("Location"), "https://app.example/callback?code=") {
				t.Errorf("allow %v after the page = %d to %q, want 303 with a code", ConsentDelay, res.Code, res.Header().Get("Location"))
			}
		})
	})
	t.Run("deny at once", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			s := mustNewTestServer(t, true)
			consent, c := s.mustLogIn(t, testRequest())
			res := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"deny"}}, nil, c)
			if res.Code != http.StatusSeeOther || !strings.Contains(res.Header().Get("Location"), "error=access_denied") {
				t.Errorf("deny at once = %d to %q, want 303 with access_denied", res.Code, res.Header().Get("Location"))
			}
		})
	})
	t.Run("the button waits too", func(t *testing.T) {
		// The browser's half, under the pages' CSP (no script): the Allow button ignores the
		// pointer and looks disabled for ConsentDelay after the page appears.
		raw, err := pageFS.ReadFile("pages.html")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			"@keyframes hold{from,to{pointer-events:none;opacity:.4}}",
			fmt.Sprintf("button.delayed{animation:hold %gs}", ConsentDelay.Seconds()),
			`<button type="submit" name="action" value="allow" class="primary delayed">Allow</button>`,
		} {
			if !strings.Contains(string(raw), want) {
				t.Errorf("pages.html lacks %q", want)
			}
		}
	})
}

// TestHandler_Logout: the consent page links to the sign-out page, whose form (same-origin,
// with the session's CSRF token) ends the session; the device cookie stays.
func TestHandler_Logout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		consent, c := s.mustLogIn(t, testRequest())
		if !strings.Contains(consent.Body.String(), `href="`+PathLogout+`"`) {
			t.Fatal("the consent page has no sign-out link")
		}
		page := s.get(t, PathLogout, c)
		if page.Code != http.StatusOK || page.csrf == "" || !strings.Contains(page.Body.String(), `action="`+PathLogout+`"`) {
			t.Fatalf("sign-out page = %d, want 200 with a form", page.Code)
		}
		for _, tt := range []struct {
			name   string
			form   url.Values
			header http.Header
			want   int
		}{
			{"no token", url.Values{}, nil, http.StatusForbidden},
			{"another session's token", url.Values{"csrf": {s.h.seal.logoutCSRF(digest("another"))}}, nil, http.StatusForbidden},
			{"cross-site", url.Values{"csrf": {page.csrf}}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
			{"a consent field", url.Values{"csrf": {page.csrf}, "txn": {consent.txn}}, nil, http.StatusBadRequest},
		} { // refused, each on its own (no t.Run inside a bubble)
			if res := s.post(t, PathLogout, tt.form, tt.header, c); res.Code != tt.want {
				t.Errorf("%s: POST %s = %d, want %d", tt.name, PathLogout, res.Code, tt.want)
			}
			if !s.h.LoggedIn(requestWith(c)) {
				t.Fatalf("%s: a refused sign-out ended the session", tt.name)
			}
		}
		if res := s.get(t, PathLogout+"?csrf="+url.QueryEscape(page.csrf), c); res.Code != http.StatusOK || !s.h.LoggedIn(requestWith(c)) {
			t.Errorf("GET with the token = %d, and signed out: want the page, still signed in", res.Code)
		}

		res := s.post(t, PathLogout, url.Values{"csrf": {page.csrf}}, nil, c)
		if res.Code != http.StatusSeeOther || res.Header().Get("Location") != PathLogout {
			t.Fatalf("sign-out = %d to %q, want 303 to %s", res.Code, res.Header().Get("Location"), PathLogout)
		}
		if gone := sessionCookie(t, res.ResponseRecorder); gone.MaxAge >= 0 || gone.Value != "" {
			t.Errorf("session cookie %q, want it deleted", gone)
		}
		if findCookie(res.ResponseRecorder, DeviceCookieSecure) != nil {
			t.Error("sign-out touched the device cookie")
		}
		if s.h.LoggedIn(requestWith(c)) {
			t.Error("the session lives on after sign-out")
		}
		time.Sleep(ConsentDelay)
		if res := s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c); res.Code != http.StatusForbidden {
			t.Errorf("consent after sign-out = %d, want 403", res.Code)
		}
		if res := s.get(t, PathLogout, c); !strings.Contains(res.Body.String(), "You are signed out") || res.csrf != "" {
			t.Errorf("sign-out page after sign-out = %d without “You are signed out”", res.Code)
		}
		if p := s.start(t, testRequest(), c); !strings.Contains(p.Body.String(), `action="`+PathLogin+`"`) {
			t.Error("Start after sign-out does not ask for the password")
		}
		if res := s.post(t, PathLogout, url.Values{}, nil, c); res.Code != http.StatusSeeOther {
			t.Errorf("sign-out when signed out = %d, want 303", res.Code)
		}
	})
}
