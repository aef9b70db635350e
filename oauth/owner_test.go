package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ownsona/ownsona/oauth/login"
)

// TestServer_CheckOwner: another sign-in form shares the login page's password check and
// throttle. Failures at either count against both; a right password sets the device cookie,
// which then lets that browser past the address's delays at both forms.
func TestServer_CheckOwner(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
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

		time.Sleep(time.Second)
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
	})
}

// TestServer_ReplaceOwnerPassword (issue 30, item 7): a password set while the server runs
// takes effect at once, at every sign-in form: the new one signs in, the old one no longer
// does. OWNSONA_LOGIN_PASSWORD still wins; a plain-text password is refused.
func TestServer_ReplaceOwnerPassword(t *testing.T) {
	t.Parallel()
	check := func(f *fixture, pw string) error {
		r := httptest.NewRequest(http.MethodPost, "/console/signin", nil)
		r.RemoteAddr = "203.0.113.10:40000"
		return f.s.CheckOwner(httptest.NewRecorder(), r, DefaultUsername, pw)
	}
	const newPW = "a new owner passphrase"
	hash, err := bcrypt.GenerateFromPassword([]byte(newPW), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("stored password", func(t *testing.T) {
		f := MustOpenServer(t, func(c *Config) { c.Password = "" })
		old := f.s.GeneratedPassword()
		if err := check(f, old); err != nil {
			t.Fatalf("the generated password before: %v", err)
		}
		if err := f.s.ReplaceOwnerPassword(string(hash)); err != nil {
			t.Fatal(err)
		}
		if err := check(f, newPW); err != nil {
			t.Errorf("the new password at once: %v, want nil", err)
		}
		if err := check(f, old); !errors.Is(err, ErrWrongCredentials) {
			t.Errorf("the old password after: %v, want ErrWrongCredentials", err)
		}
		if err := f.s.ReplaceOwnerPassword(newPW); err == nil {
			t.Error("a plain-text password was taken as a hash")
		}
	})
	t.Run("configured password wins", func(t *testing.T) {
		f := MustOpenServer(t)
		if err := f.s.ReplaceOwnerPassword(string(hash)); !errors.Is(err, ErrPasswordConfigured) {
			t.Errorf("ReplaceOwnerPassword = %v, want ErrPasswordConfigured", err)
		}
		if err := check(f, testPassword); err != nil {
			t.Errorf("the configured password after: %v, want nil", err)
		}
	})
}
