package console_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/oauth"
)

// TestConsole_SignIn: a signed-out browser is sent to sign in and back; a wrong username and a
// wrong password answer alike; a right password starts a session with a strict, HttpOnly cookie
// and a new id each time; signing out ends it.
func TestConsole_SignIn(t *testing.T) {
	f := MustOpen(t)
	b := f.browser()
	w := b.do(http.MethodGet, "/console/review?x=1", nil)
	if loc := w.Header().Get("Location"); w.Code != http.StatusSeeOther || loc != "/console/signin?next="+url.QueryEscape("/console/review?x=1") {
		t.Fatalf("signed out: %d to %q, want 303 to sign in", w.Code, loc)
	}
	if w := b.do(http.MethodGet, "/console", nil); w.Header().Get("Location") != "/console/memories" {
		t.Errorf("/console: to %q, want /console/memories", w.Header().Get("Location"))
	}

	var bodies []string
	for _, creds := range [][2]string{{oauth.DefaultUsername, "wrong password"}, {"someone", testPassword}} {
		tok := b.signInForm(t)
		w := b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {creds[0]}, "password": {creds[1]}, "next": {"/console/review?x=1"}})
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "Wrong username or password.") {
			t.Errorf("sign in as %q: %d, want 401 and the message\n%s", creds[0], w.Code, w.Body)
		}
		if _, ok := b.cookies[console.CookiePlain]; ok {
			t.Fatalf("a session cookie after a failed sign-in")
		}
		bodies = append(bodies, csrfRE.ReplaceAllString(w.Body.String(), ""))
	}
	if bodies[0] != bodies[1] {
		t.Error("a wrong username and a wrong password answer differently")
	}

	tok := b.signInForm(t)
	w = b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {testPassword}, "next": {"/console/review?x=1"}})
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/console/review?x=1" {
		t.Fatalf("sign in: %d to %q, want 303 back to the page asked for", w.Code, w.Header().Get("Location"))
	}
	var sess *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == console.CookiePlain {
			sess = c
		}
	}
	if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteStrictMode || sess.Path != "/" || sess.Domain != "" || sess.Secure ||
		sess.MaxAge != int(console.DefaultMaxAge/time.Second) || len(sess.Value) < 43 {
		t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, Path=/, host-only, not Secure over http, 256 bits", sess)
	}
	if _, ok := b.cookies["ownsona_device"]; !ok {
		t.Error("no device cookie after a right password (it is the OAuth sign-in's, shared)")
	}
	first := sess.Value
	b.page(t, "/console/review")
	if w := b.do(http.MethodGet, "/console/signin", nil); w.Code != http.StatusSeeOther {
		t.Errorf("the sign-in page of a signed-in browser: %d, want 303 on", w.Code)
	}
	// Fixation: a cookie planted before sign-in is replaced by a new id.
	planted := f.browser()
	planted.cookies[console.CookiePlain] = &http.Cookie{Name: console.CookiePlain, Value: "planted-by-someone-else"}
	planted.signIn(t)
	if v := planted.cookies[console.CookiePlain].Value; v == "planted-by-someone-else" || v == first {
		t.Error("signing in kept a planted session id")
	}

	body := b.mustPost(t, "/console/signout", nil)
	wantContains(t, "the page after signing out", body, "You are signed out.")
	if _, ok := b.cookies[console.CookiePlain]; ok {
		t.Error("the session cookie survived signing out")
	}
	b.cookies[console.CookiePlain] = &http.Cookie{Name: console.CookiePlain, Value: first}
	if w := b.do(http.MethodGet, "/console/memories", nil); w.Code != http.StatusSeeOther {
		t.Errorf("a signed-out session still works: %d", w.Code)
	}
}

// TestConsole_SignInNext: the page to go back to is a console path, never another site.
func TestConsole_SignInNext(t *testing.T) {
	f := MustOpen(t)
	for next, want := range map[string]string{
		"/console/trash":           "/console/trash",
		"https://evil.example/":    "/console/memories",
		"//evil.example/console/x": "/console/memories",
		"/\\evil.example":          "/console/memories",
		"/oauth/authorize":         "/console/memories",
		"":                         "/console/memories",
	} {
		b := f.browser()
		tok := b.signInForm(t)
		w := b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {testPassword}, "next": {next}})
		if got := w.Header().Get("Location"); got != want {
			t.Errorf("next %q: to %q, want %q", next, got, want)
		}
	}
}

// TestConsole_SignInThrottled: wrong passwords are throttled like the OAuth login page's (the
// same throttle): after three, the next attempt waits, 429 with Retry-After, and the password is
// not checked; after the wait the owner signs in.
func TestConsole_SignInThrottled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := MustOpen(t)
		b := f.browser()
		try := func(pw string) *http.Response {
			tok := b.signInForm(t)
			return b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {pw}}).Result()
		}
		for i := range 3 {
			if r := try("guess"); r.StatusCode != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d, want 401", i+1, r.StatusCode)
			}
		}
		r := try(testPassword)
		if r.StatusCode != http.StatusTooManyRequests || r.Header.Get("Retry-After") != "1" {
			t.Fatalf("the fourth attempt at once: %d Retry-After %q, want 429 and 1", r.StatusCode, r.Header.Get("Retry-After"))
		}
		time.Sleep(time.Second)
		if r := try(testPassword); r.StatusCode != http.StatusSeeOther {
			t.Fatalf("the right password after the wait: %d, want 303", r.StatusCode)
		}
	})
}

// TestConsole_SignInForm: the sign-in form is refused without its token, with another browser's,
// and from another site.
func TestConsole_SignInForm(t *testing.T) {
	f := MustOpen(t)
	othersToken := f.browser().signInForm(t)
	browsers := signedIn
	browsers.Open = func(testing.TB, ...func(*options)) *browser { return f.browser() } // a new one, signed out, for each row
	signIn := func(name string, token func(b *browser) string, header map[string]string, status int) scenario {
		return scenario{Name: name, Method: http.MethodPost, URL: "/console/signin", Headers: header,
			FormFor: func(b *browser) url.Values {
				return url.Values{"csrf": {token(b)}, "username": {oauth.DefaultUsername}, "password": {testPassword}}
			},
			WantStatus: status,
			After: func(t *testing.T, b *browser, _ *httptest.ResponseRecorder) {
				if _, ok := b.cookies[console.CookiePlain]; ok != (status == http.StatusSeeOther) {
					t.Errorf("session cookie set: %v", ok)
				}
			}}
	}
	browsers.Run(t, []scenario{
		signIn("no token", func(b *browser) string { b.signInForm(t); return "" }, nil, http.StatusForbidden),
		signIn("another browser's token", func(b *browser) string { b.signInForm(t); return othersToken }, nil, http.StatusForbidden),
		signIn("no sign-in cookie", func(b *browser) string { return othersToken }, nil, http.StatusForbidden),
		signIn("cross-site", func(b *browser) string { return b.signInForm(t) }, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden),
		signIn("foreign Origin", func(b *browser) string { return b.signInForm(t) }, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden),
		signIn("same-origin", func(b *browser) string { return b.signInForm(t) }, map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusSeeOther),
	})
}

// TestConsole_SecureCookies: under an https public URL the cookies are __Host- and Secure.
func TestConsole_SecureCookies(t *testing.T) {
	f := MustOpen(t, func(o *options) { o.publicURL = "https://mem.example.com" })
	b := f.browser()
	w := b.do(http.MethodGet, "/console/signin", nil)
	if c := w.Result().Cookies(); len(c) != 1 || !strings.HasPrefix(c[0].Name, "__Host-") || !c[0].Secure || c[0].Path != "/" {
		t.Fatalf("sign-in cookie %+v, want __Host-, Secure, Path=/", c)
	}
	tok := csrfRE.FindStringSubmatch(w.Body.String())[1]
	w = b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {testPassword}})
	var found bool
	for _, c := range w.Result().Cookies() {
		if c.Name == console.CookieSecure {
			found = c.Secure && c.HttpOnly && c.SameSite == http.SameSiteStrictMode && c.Path == "/" && c.Domain == ""
		}
	}
	if w.Code != http.StatusSeeOther || !found {
		t.Errorf("sign in over https: %d, cookies %v; want __Host-ownsona_console, Secure, HttpOnly, Strict", w.Code, w.Result().Cookies())
	}
}

// TestConsole_SessionExpiry: a session ends after 30 minutes unused, and 12 hours after its
// sign-in however much it is used.
func TestConsole_SessionExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := MustOpen(t)
		live := func(b *browser) bool {
			w := b.do(http.MethodGet, "/console/memories", nil)
			if w.Code == http.StatusSeeOther && !strings.HasSuffix(w.Header().Get("Location"), "&ended=1") {
				t.Errorf("an ended session is sent to sign in without saying so: %q", w.Header().Get("Location"))
			}
			return w.Code == http.StatusOK
		}
		idle := f.signedIn(t)
		time.Sleep(console.DefaultIdleTimeout - time.Second)
		if !live(idle) {
			t.Fatal("the session ended before the idle timeout")
		}
		time.Sleep(console.DefaultIdleTimeout - time.Second) // used a moment ago: still live
		if !live(idle) {
			t.Fatal("the session ended although it was used within the idle timeout")
		}
		time.Sleep(console.DefaultIdleTimeout)
		if live(idle) {
			t.Fatal("the session outlived 30 minutes unused")
		}
		if w := idle.post("/console/trash/empty", url.Values{"confirm": {"yes"}}); w.Code != http.StatusForbidden {
			t.Errorf("a form of the ended session: %d, want 403", w.Code)
		}

		busy := f.signedIn(t)
		start := time.Now()
		for time.Since(start) < console.DefaultMaxAge-20*time.Minute {
			time.Sleep(20 * time.Minute)
			if !live(busy) {
				t.Fatalf("the session ended %v after sign-in, before the absolute timeout", time.Since(start))
			}
		}
		time.Sleep(20 * time.Minute)
		if live(busy) {
			t.Fatalf("the session outlived %v", time.Since(start))
		}
	})
}

// TestConsole_CSRF: every action is refused, and changes nothing, without the session's CSRF
// token, with another one, from another site, or without a live session.
func TestConsole_CSRF(t *testing.T) {
	f := MustOpen(t)
	ids := f.remember(t, []string{"home"}, "Lives in Porto", "Drives a blue car")
	if _, err := f.mem.Forget(ids[1:], memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	a, c := ids[0], ids[1]
	before := f.snapshot(t)
	owner := f.signedIn(t)
	other := f.signedIn(t) // a second session: its token is not the first one's
	id := func(n uint64) string { return strings.TrimPrefix(memURL(n), "/console/memories/") }
	routes := []struct {
		path string
		form url.Values
		get  int // the status of a GET of the path
	}{
		{"/console/signout", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/memories/" + id(a), url.Values{"text": {"Lives in Lisbon"}, "tags": {"home"}, "importance": {"0.5"}}, http.StatusOK},
		{"/console/memories/" + id(a) + "/confirm", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/memories/" + id(a) + "/forget", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/memories/" + id(c) + "/restore", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/memories/" + id(c) + "/delete", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/memories/bulk", url.Values{"id": {id(a)}, "action": {"forget"}}, http.StatusNotFound}, // GET: the page of a memory "bulk"
		{"/console/trash/empty", url.Values{"confirm": {"yes"}}, http.StatusMethodNotAllowed},
		{"/console/review/duplicates", url.Values{"ids": {id(a) + "," + id(c)}, "keep": {id(c)}}, http.StatusMethodNotAllowed},
		{"/console/review/stale", url.Values{"id": {id(a)}, "action": {"forget"}}, http.StatusMethodNotAllowed},
		{"/console/review/tags", url.Values{"from": {"home"}, "into": {"house"}}, http.StatusMethodNotAllowed},
		{"/console/connections/clients/revoke", url.Values{"client_id": {"cl_x"}}, http.StatusMethodNotAllowed},
		{"/console/connections/tokens", url.Values{"name": {"sneaky"}, "scope": {"write"}, "expires": {"never"}, "password": {testPassword}}, http.StatusMethodNotAllowed},
		{"/console/connections/tokens/revoke", url.Values{"id": {"pat_x"}}, http.StatusMethodNotAllowed},
		{"/console/system/backup", url.Values{}, http.StatusMethodNotAllowed},
		{"/console/approvals/decide", url.Values{"id": {"x"}, "decision": {"approve"}}, http.StatusMethodNotAllowed},
		{"/console/settings/save", url.Values{"approval": {"off"}}, http.StatusMethodNotAllowed},
	}
	// refused is the route's form, with csrf, refused: nothing done, no backup sent.
	refused := func(name, path string, form url.Values, csrf string, header map[string]string) scenario {
		form = maps.Clone(form)
		form.Set("csrf", csrf)
		return scenario{Name: strings.TrimPrefix(path, "/console/") + "/" + name, Method: http.MethodPost, URL: path, Form: form, Headers: header,
			WantStatus: http.StatusForbidden, WantNoHeaders: []string{"Content-Disposition"}}
	}
	for _, rt := range routes {
		signedIn.RunOn(t, owner, []scenario{
			refused("no token", rt.path, rt.form, "", nil),
			refused("another session's token", rt.path, rt.form, other.csrf, nil),
			refused("cross-site", rt.path, rt.form, owner.csrf, map[string]string{"Sec-Fetch-Site": "cross-site"}),
			refused("same-site", rt.path, rt.form, owner.csrf, map[string]string{"Sec-Fetch-Site": "same-site"}),
			refused("foreign Origin", rt.path, rt.form, owner.csrf, map[string]string{"Origin": "https://evil.example"}),
			{Name: strings.TrimPrefix(rt.path, "/console/") + "/GET", Method: http.MethodGet, URL: rt.path, WantStatus: rt.get},
		})
		signedIn.RunOn(t, f.browser(), []scenario{refused("no session", rt.path, rt.form, owner.csrf, nil)})
	}
	if after := f.snapshot(t); after != before {
		t.Errorf("refused forms changed the file:\nbefore %s\nafter  %s", before, after)
	}
	if owner.do(http.MethodGet, "/console/memories", nil).Code != http.StatusOK {
		t.Error("a refused sign-out ended the session")
	}
	if got := f.entries(t); len(got) != 0 {
		t.Errorf("refused actions were recorded as done: %v", got)
	}
}
