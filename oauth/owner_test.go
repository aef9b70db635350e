package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/oauth/login"
)

// TestServer_CheckOwner: another sign-in form shares the login page's password check and
// throttle. Failures at either count against both; a right password sets the device cookie,
// which then lets that browser past the address's delays at both forms.
func TestServer_CheckOwner(t *testing.T) {
	t.Parallel()
	f := MustOpenServer(t)
	const ip = "203.0.113.9"
	check := func(b *browser, user, pw string) (*httptest.ResponseRecorder, error) {
		r := httptest.NewRequest(http.MethodPost, "/console/signin", nil)
		r.RemoteAddr = ip + ":40000"
		for _, c := range b.cookies {
			r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
		w := httptest.NewRecorder()
		err := f.s.CheckOwner(w, r, user, pw)
		for _, c := range w.Result().Cookies() {
			f.keep(c.Value)
			b.cookies[c.Name] = c
		}
		return w, err
	}
	stranger := f.browser()
	if _, err := check(stranger, DefaultUsername, "wrong"); !errors.Is(err, ErrWrongCredentials) {
		t.Fatalf("a wrong password: %v, want ErrWrongCredentials", err)
	}
	if _, err := check(stranger, "someone", testPassword); !errors.Is(err, ErrWrongCredentials) {
		t.Fatalf("a wrong username: %v, want the same ErrWrongCredentials", err)
	}
	if _, err := check(stranger, DefaultUsername, "wrong again"); !errors.Is(err, ErrWrongCredentials) {
		t.Fatalf("a third wrong password: %v", err)
	}
	// Three failures from the address: the next attempt waits a second, at this form…
	var throttled *ThrottledError
	if _, err := check(stranger, DefaultUsername, testPassword); !errors.As(err, &throttled) || throttled.RetryAfterSeconds() != "1" {
		t.Fatalf("the fourth attempt at once: %v, want a ThrottledError of 1 s", err)
	}
	// …and at the OAuth login page, which shares the throttle.
	client := f.MustRegister(t, "App", testRedirect)
	r := httptest.NewRequest(http.MethodGet, "/oauth/authorize?"+authQuery(client, testRedirect, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), nil)
	r.RemoteAddr = ip + ":40001"
	_, txn, csrf := formFields(f.serve(r).Body.String())
	r = httptest.NewRequest(http.MethodPost, login.PathLogin, strings.NewReader(url.Values{"txn": {txn}, "csrf": {csrf},
		"username": {DefaultUsername}, "password": {testPassword}}.Encode()))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.RemoteAddr = ip + ":40001"
	if w := f.serve(r); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "1" {
		t.Errorf("the login page after three failures at the other form: %d Retry-After %q, want 429 and 1", w.Code, w.Header().Get("Retry-After"))
	}

	f.clock.Add(time.Second)
	w, err := check(stranger, DefaultUsername, testPassword)
	if err != nil {
		t.Fatalf("the right password after the wait: %v", err)
	}
	dev := w.Result().Cookies()
	if len(dev) != 1 || dev[0].Name != login.DeviceCookieSecure || !dev[0].HttpOnly || !dev[0].Secure {
		t.Fatalf("cookies after a right password: %v, want the device cookie only", dev)
	}
	// The browser that signed in is limited by its device from now on, not by its address.
	for range 4 {
		check(stranger, DefaultUsername, "a slip")
	}
	if _, err := check(stranger, DefaultUsername, testPassword); err != nil {
		t.Errorf("the owner's browser after four slips: %v, want signed in (its device budget is %d)", err, login.MaxDeviceFailures)
	}
}
