package login

// The owner's password check as every sign-in form of this server makes it: the login page's,
// and the console's (through oauth.Server.CheckOwner). One check, one throttle, one set of
// device cookies, so that a guesser gains nothing by choosing the other form.

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// ErrWrongCredentials is a wrong username or a wrong password: the two are never told apart.
var ErrWrongCredentials = errors.New("wrong username or password")

// How a check of the owner's password ended, for Config.OnSignIn.
const (
	SignInOK        = "ok"                // the owner's username and password
	SignInWrong     = "wrong_credentials" // a wrong username or password
	SignInThrottled = "throttled"         // refused before the check, after earlier failures
	SignInBusy      = "busy"              // no check slot freed up in time
)

// ThrottledError is a password attempt refused by the Throttle before the password was checked:
// answer 429 with Retry-After.
type ThrottledError struct {
	RetryAfter time.Duration // how long until the next attempt may be made (> 0)
}

func (e *ThrottledError) Error() string {
	return "too many sign-in attempts; try again in " + retryAfter(e.RetryAfter) + " seconds"
}

// RetryAfterSeconds is RetryAfter as the whole seconds of a Retry-After header, rounded up.
func (e *ThrottledError) RetryAfterSeconds() string { return retryAfter(e.RetryAfter) }

// CheckOwner checks username and password sent by r's browser to another sign-in form of this
// server, exactly as PathLogin does: a browser with a valid device cookie is limited by its own
// device budget, any other by its address (Config.ClientIP) and the global bucket, and the
// attempt counts as a failure until the password proves right. A right one forgets the failures
// and sets a new device cookie on w, so call it before writing the response. It returns nil for
// the owner; ErrWrongCredentials; a *ThrottledError, when the password was not checked; or
// ErrBusy, when no check slot freed up within two seconds (answer 503). It logs the outcome with
// the address, never the username or password. A session is the caller's to start.
func (h *Handler) CheckOwner(w http.ResponseWriter, r *http.Request, username, password string) error {
	return h.checkOwner(w, r, h.cfg.ClientIP(r), username, password)
}

func (h *Handler) checkOwner(w http.ResponseWriter, r *http.Request, ip, username, password string) error {
	err := h.checkOwnerOnce(w, r, ip, username, password)
	if h.cfg.OnSignIn != nil {
		result := SignInOK
		var throttled *ThrottledError
		switch {
		case errors.As(err, &throttled):
			result = SignInThrottled
		case errors.Is(err, ErrBusy):
			result = SignInBusy
		case err != nil:
			result = SignInWrong
		}
		h.cfg.OnSignIn(result)
	}
	return err
}

func (h *Handler) checkOwnerOnce(w http.ResponseWriter, r *http.Request, ip, username, password string) error {
	dev := h.device(r)
	var wait time.Duration
	if dev != "" {
		wait = h.cfg.Throttle.AllowDevice(dev)
	} else {
		wait = h.cfg.Throttle.Allow(ip)
	}
	if wait > 0 {
		h.cfg.Log.Warn().Str("ip", ip).Bool("device", dev != "").Dur("retry_after", wait).Msg("login throttled")
		return &ThrottledError{RetryAfter: wait}
	}
	ctx, cancel := context.WithTimeout(r.Context(), busyWait)
	defer cancel()
	good, err := h.cfg.Verifier.Check(ctx, username, password)
	if err != nil {
		h.cfg.Log.Warn().Str("ip", ip).Msg("login busy")
		return ErrBusy
	}
	if !good {
		h.cfg.Log.Info().Str("ip", ip).Bool("device", dev != "").Msg("login failed")
		return ErrWrongCredentials
	}
	if dev != "" {
		h.cfg.Throttle.SuccessDevice(dev)
	} else {
		h.cfg.Throttle.Success(ip)
	}
	if value, _, err := h.devices.issue(dev); err != nil {
		h.cfg.Log.Error().Err(err).Str("ip", ip).Msg("remember device") // the sign-in stands; the browser gets no device cookie
	} else {
		http.SetCookie(w, h.cookie(h.deviceCookieName(), value, DeviceTTL))
	}
	h.cfg.Log.Info().Str("ip", ip).Bool("device", dev != "").Msg("login succeeded")
	return nil
}
