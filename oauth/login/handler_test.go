package login

import (
	"bytes"
	"context"
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

	"github.com/rs/zerolog"
)

const (
	testUser     = "owner"
	testPassword = "s3cret-Passw0rd"
)

// testServer is a Handler with a fast fake password check and a recording
// CompleteFunc.
type testServer struct {
	h   *Handler
	log *bytes.Buffer

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
	v, _, err := NewVerifier(testUser, "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaGhhc2hoYXNoaGFzaGhhc2g")
	if err != nil {
		tb.Fatal(err)
	}
	v.kdf = func(pw []byte) bool { return string(pw) == testPassword } // tests do not pay for argon2
	s := &testServer{log: new(bytes.Buffer)}
	s.h, err = New(Config{
		Verifier: v,
		Secure:   secure,
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
	})
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
	r := httptest.NewRequest("POST", "https://mem.example.com"+path, strings.NewReader(form.Encode()))
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
	return s.post(tb, PathLogin, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {user}, "password": {pw}}, nil, cookies...)
}

func sessionCookie(tb testing.TB, rec *httptest.ResponseRecorder) *http.Cookie {
	tb.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == CookieSecure || c.Name == CookiePlain {
			return c
		}
	}
	tb.Fatalf("no session cookie in %q", rec.Header().Values("Set-Cookie"))
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
			loc := strings.ReplaceAll(res.Header().Get("Location"), url.QueryEscape(p.txn), "TXN")
			next := s.get(t, res.Header().Get("Location"))
			clean := strings.NewReplacer(p.txn, "TXN", next.csrf, "CSRF").Replace(next.Body.String())
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

// TestHandler_CSRF: each case on a server of its own.
func TestHandler_CSRF(t *testing.T) {
	for _, tt := range []struct {
		name   string
		form   func(p, other page) url.Values
		header http.Header
		want   int
	}{
		{"missing token", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusForbidden},
		{"empty token", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {""}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusForbidden},
		{"missing transaction", func(p, _ page) url.Values {
			return url.Values{"csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusForbidden},
		{"another transaction's token", func(p, other page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {other.csrf}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusForbidden},
		{"Sec-Fetch-Site cross-site", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, http.Header{"Sec-Fetch-Site": {"cross-site"}}, http.StatusForbidden},
		{"Sec-Fetch-Site same-site", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, http.Header{"Sec-Fetch-Site": {"same-site"}}, http.StatusForbidden},
		{"foreign Origin", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, http.Header{"Sec-Fetch-Site": nil, "Origin": {"https://evil.example"}}, http.StatusForbidden},
		{"smuggled client_id", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}, "client_id": {"evil"}}
		}, nil, http.StatusBadRequest},
		{"repeated field", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf, p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusBadRequest},
		{"JSON body", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, http.Header{"Content-Type": {"application/json"}}, http.StatusBadRequest},
		{"valid", func(p, _ page) url.Values {
			return url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "username": {testUser}, "password": {testPassword}}
		}, nil, http.StatusSeeOther},
	} {
		t.Run("login/"+tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mustNewTestServer(t, true)
				p, other := s.start(t, testRequest()), s.start(t, testRequest())
				res := s.post(t, PathLogin, tt.form(p, other), tt.header)
				if res.Code != tt.want {
					t.Errorf("POST %s = %d, want %d; body %s", PathLogin, res.Code, tt.want, res.Body)
				}
				if tt.want != http.StatusSeeOther && len(res.Result().Cookies()) != 0 {
					t.Error("a refused login set a cookie")
				}
			})
		})
	}

	for _, tt := range []struct {
		name string
		send func(t *testing.T, s *testServer, consent page, c *http.Cookie) page
		want int
	}{
		{"missing token", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "action": {"allow"}}, nil, c)
		}, http.StatusForbidden},
		{"another transaction's token", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			other := s.start(t, testRequest(), c)
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {other.csrf}, "action": {"allow"}}, nil, c)
		}, http.StatusForbidden},
		{"the token from before login", func(t *testing.T, s *testServer, _ page, c *http.Cookie) page {
			p := s.start(t, testRequest())
			c2 := sessionCookie(t, s.login(t, p, testUser, testPassword, c).ResponseRecorder)
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}, nil, c2)
		}, http.StatusForbidden},
		{"no session", func(t *testing.T, s *testServer, p page, _ *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}, nil)
		}, http.StatusForbidden},
		{"another session", func(t *testing.T, s *testServer, p page, _ *http.Cookie) page {
			_, c2 := s.mustLogIn(t, testRequest())
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}, nil, c2)
		}, http.StatusForbidden},
		{"Sec-Fetch-Site cross-site", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}},
				http.Header{"Sec-Fetch-Site": {"cross-site"}}, c)
		}, http.StatusForbidden},
		{"foreign Origin", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}},
				http.Header{"Sec-Fetch-Site": nil, "Origin": {"https://evil.example"}}, c)
		}, http.StatusForbidden},
		{"smuggled redirect_uri", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"},
				"redirect_uri": {"https://evil.example/cb"}}, nil, c)
		}, http.StatusBadRequest},
		{"smuggled scope", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"},
				"scope": {"memories:write"}}, nil, c)
		}, http.StatusBadRequest},
		{"unknown action", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.post(t, PathConsent, url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"maybe"}}, nil, c)
		}, http.StatusBadRequest},
		{"GET with the form", func(t *testing.T, s *testServer, p page, c *http.Cookie) page {
			return s.get(t, PathConsent+"?"+url.Values{"txn": {p.txn}, "csrf": {p.csrf}, "action": {"allow"}}.Encode(), c)
		}, http.StatusMethodNotAllowed},
	} {
		t.Run("consent/"+tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := mustNewTestServer(t, true)
				n := len(s.complete)
				consent, c := s.mustLogIn(t, testRequest())
				res := tt.send(t, s, consent, c)
				if res.Code != tt.want {
					t.Errorf("got %d, want %d; body %s", res.Code, tt.want, res.Body)
				}
				if len(s.complete) != n {
					t.Error("Complete was called")
				}
			})
		})
	}

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
				if len(raw) != 1 {
					t.Fatalf("Set-Cookie = %q, want one", raw)
				}
				c := sessionCookie(t, res.ResponseRecorder)
				if c.Name != tt.wantName {
					t.Errorf("Name = %q, want %q", c.Name, tt.wantName)
				}
				if c.Secure != tt.secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" || c.SameSite != http.SameSiteLaxMode {
					t.Errorf("cookie %q: want Secure=%v, HttpOnly, Path=/, no Domain, SameSite=Lax", raw[0], tt.secure)
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
		if res := s.login(t, p, testUser, testPassword); res.Code != http.StatusSeeOther || len(res.Result().Cookies()) != 1 {
			t.Errorf("after Retry-After, the right password = %d, want 303 with a cookie", res.Code)
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

func TestHandler_LogsNoSecrets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := mustNewTestServer(t, true)
		p := s.start(t, testRequest())
		s.login(t, p, "intruder", "a-wrong-guess")
		consent, c := s.mustLogIn(t, testRequest())
		s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {"forged"}, "action": {"allow"}}, nil, c)
		s.post(t, PathConsent, url.Values{"txn": {consent.txn}, "csrf": {consent.csrf}, "action": {"allow"}}, nil, c)
		logs := s.log.String()
		if !strings.Contains(logs, "login succeeded") || !strings.Contains(logs, "login failed") {
			t.Fatalf("logs lack the login outcomes:\n%s", logs)
		}
		for _, secret := range []string{testPassword, "a-wrong-guess", testUser, "intruder", c.Value, consent.csrf, consent.txn, p.txn, p.csrf} {
			if strings.Contains(logs, secret) {
				t.Errorf("logs contain %q:\n%s", secret, logs)
			}
		}
	})
}
