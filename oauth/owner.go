// The owner's password check for sign-in forms other than the OAuth login page (the console's),
// shared with that page: the same verifier, throttling and device cookies.

package oauth

import (
	"net/http"

	"github.com/ownsona/ownsona/oauth/login"
)

// Errors of CheckOwner besides a *ThrottledError.
var (
	// ErrWrongCredentials: a wrong username or a wrong password; the two are never told apart.
	ErrWrongCredentials = login.ErrWrongCredentials
	// ErrLoginBusy: too many password checks were running to start this one within two seconds;
	// answer 503 and let the owner retry.
	ErrLoginBusy = login.ErrBusy
)

// ThrottledError is a sign-in attempt refused before the password was checked, because of
// earlier failures from the same browser, address or everywhere: answer 429 with a Retry-After
// of RetryAfterSeconds().
type ThrottledError = login.ThrottledError

// CheckOwner checks the owner's username and password that r's browser sent to another sign-in
// form of this server, exactly as the OAuth login page checks its own: one password, one
// throttle (per device cookie, else per address and globally, kept across restarts), one set of
// device cookies. A right password forgets the failures and sets a new device cookie on w, so
// call it before writing the response; starting a session is the caller's business. It returns
// nil for the owner, ErrWrongCredentials, a *ThrottledError, or ErrLoginBusy. It is safe for
// concurrent use.
func (s *Server) CheckOwner(w http.ResponseWriter, r *http.Request, username, password string) error {
	return s.pages.CheckOwner(w, r, username, password)
}
