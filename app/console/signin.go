package console

import (
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/ownsona/ownsona/oauth"
)

// signinPage is the sign-in form's data.
type signinPage struct {
	Token   string // the form's CSRF token, bound to the sign-in cookie
	Next    string
	Message string
	Error   bool
}

// getSignIn shows the sign-in form, or sends a signed-in browser on.
func (c *Console) getSignIn(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	next := safeBack(q.Get("next"), Prefix+"/memories")
	if sess, _ := c.session(r); sess != nil {
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	var msg string
	switch {
	case q.Get("ended") != "":
		msg = "Your session has ended. Sign in again."
	case q.Get("out") != "":
		msg = "You are signed out."
	}
	c.signinForm(w, http.StatusOK, next, msg, false)
}

// signinForm renders the sign-in page with a new sign-in cookie and the token that goes with it.
func (c *Console) signinForm(w http.ResponseWriter, status int, next, msg string, isErr bool) {
	nonce := hex.EncodeToString(randomBytes(16))
	http.SetCookie(w, c.cookie(c.signinCookieName(), nonce, signinTTL))
	c.render(w, status, "signin", &view{Title: "Sign in", Page: signinPage{Token: c.signinToken(nonce), Next: next, Message: msg, Error: isErr}})
}

// postSignIn checks the owner's username and password through the authorization server (one
// check and one throttle for every sign-in form) and starts a session.
func (c *Console) postSignIn(w http.ResponseWriter, r *http.Request) {
	if err := c.cop.Check(r); err != nil {
		c.log.Warn().Msg("console: cross-origin sign-in refused")
		c.fail(w, http.StatusForbidden, "This form was not sent from this console.")
		return
	}
	form, err := readForm(w, r)
	if err != nil {
		c.fail(w, http.StatusBadRequest, "The form was not understood.")
		return
	}
	next := safeBack(form.Get("next"), Prefix+"/memories")
	if !c.checkSigninToken(r, form.Get("csrf")) {
		c.log.Warn().Msg("console: sign-in form with a bad csrf token refused")
		c.signinForm(w, http.StatusForbidden, next, "This sign-in form has expired or was not sent from this console. Sign in again.", true)
		return
	}
	var throttled *oauth.ThrottledError
	switch err := c.cfg.Auth().CheckOwner(w, r, form.Get("username"), form.Get("password")); {
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		c.signinForm(w, http.StatusTooManyRequests, next, "Too many attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.", true)
		return
	case errors.Is(err, oauth.ErrLoginBusy):
		w.Header().Set("Retry-After", "5")
		c.signinForm(w, http.StatusServiceUnavailable, next, "The server is busy. Try again in a few seconds.", true)
		return
	case err != nil:
		c.signinForm(w, http.StatusUnauthorized, next, "Wrong username or password.", true)
		return
	}
	var old string
	if ck, err := r.Cookie(c.cookieName()); err == nil {
		old = ck.Value
	}
	value, _ := c.sessions.start(old)
	http.SetCookie(w, c.cookie(c.cookieName(), value, c.cfg.MaxAge))
	http.SetCookie(w, c.cookie(c.signinCookieName(), "", -1))
	c.log.Info().Msg("console: signed in")
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// postSignOut ends the session and deletes its cookie.
func (c *Console) postSignOut(q *req) string {
	if ck, err := q.r.Cookie(c.cookieName()); err == nil {
		c.sessions.end(ck.Value)
	}
	http.SetCookie(q.w, c.cookie(c.cookieName(), "", -1))
	c.log.Info().Msg("console: signed out")
	return Prefix + "/signin?out=1"
}
