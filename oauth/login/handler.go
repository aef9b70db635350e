package login

import (
	"context"
	"errors"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/rs/zerolog"
)

// The paths Handler serves. Mount the Handler at each of them.
const (
	PathLogin    = "/oauth/login"    // POST: the login form
	PathConsent  = "/oauth/consent"  // POST: the consent form
	PathContinue = "/oauth/continue" // GET ?txn=…: a transaction's login or consent page
)

// Session cookie names: with the __Host- prefix when served over https,
// without it (a browser refuses __Host- cookies that are not Secure) on
// plain-http loopback.
const (
	CookieSecure = "__Host-ownsona_session"
	CookiePlain  = "ownsona_session"
)

// busyWait is how long a login waits for a free password-check slot before
// the page answers 503.
const busyWait = 2 * time.Second

// maxForm bounds a POSTed form.
const maxForm = 8 << 10

// CompleteFunc ends an authorization request once the owner has decided:
// for allow, it issues a code bound to req and returns req.RedirectURI with
// code, state and iss; otherwise it returns req.RedirectURI with
// error=access_denied, state and iss. The browser is sent there with a 303.
// An error is logged and shown as "internal error".
type CompleteFunc func(ctx context.Context, req Request, allow bool) (redirectURL string, err error)

// Config configures a Handler.
type Config struct {
	// Verifier checks the owner's credentials. Required.
	Verifier *Verifier
	// Complete issues the authorization response. Required.
	Complete CompleteFunc
	// Throttle limits password attempts. If nil, a NewThrottle(Now).
	Throttle *Throttle
	// Secure means the public URL is https: the session cookie is
	// __Host-ownsona_session and Secure. If false (plain-http loopback), it
	// is ownsona_session.
	Secure bool
	// ClientIP returns the address login attempts are throttled by. If nil,
	// the host of r.RemoteAddr; set it when behind a trusted proxy.
	ClientIP func(r *http.Request) string
	// Now is the clock. If nil, time.Now.
	Now func() time.Time
	// TxnTTL is how long a pending authorization waits for login and
	// consent. If zero, 10 minutes.
	TxnTTL time.Duration
	// SessionTTL is how long a login lasts. If zero, 1 hour.
	SessionTTL time.Duration
	// Log receives one line per login outcome and per refused form, with the
	// client IP, never a username, password, token or cookie. The zero
	// Logger is silent.
	Log zerolog.Logger
}

// Handler serves the login and consent pages and their forms. See the
// package documentation for the flow. It is safe for concurrent use.
type Handler struct {
	cfg   Config
	store *store
	cop   *http.CrossOriginProtection
	mux   *http.ServeMux
}

// New returns a Handler for cfg.
func New(cfg Config) (*Handler, error) {
	if cfg.Verifier == nil {
		return nil, errors.New("login: Config.Verifier is required")
	}
	if cfg.Complete == nil {
		return nil, errors.New("login: Config.Complete is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Throttle == nil {
		cfg.Throttle = NewThrottle(cfg.Now)
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = remoteIP
	}
	if cfg.TxnTTL == 0 {
		cfg.TxnTTL = 10 * time.Minute
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = time.Hour
	}
	h := &Handler{
		cfg:   cfg,
		store: newStore(cfg.Now, cfg.TxnTTL, cfg.SessionTTL),
		cop:   http.NewCrossOriginProtection(),
		mux:   http.NewServeMux(),
	}
	h.mux.HandleFunc("POST "+PathLogin, h.postLogin)
	h.mux.HandleFunc("POST "+PathConsent, h.postConsent)
	h.mux.HandleFunc("GET "+PathContinue, h.getContinue)
	return h, nil
}

// ServeHTTP serves PathLogin, PathContinue and PathConsent. Another method
// gets 405 with an Allow header. Every response carries the page headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setPageHeaders(w.Header(), "")
	h.mux.ServeHTTP(w, r)
}

// Start begins the login and consent for req, which the authorization
// server has fully validated: it stores req under a new transaction and
// renders the consent page when the browser has a login session, else the
// login page. The authorization server calls it from /authorize.
func (h *Handler) Start(w http.ResponseWriter, r *http.Request, req Request) {
	id := h.store.create(req)
	if sess := h.session(r); sess != "" {
		if t, ok := h.store.bind(id, sess, false); ok {
			render(w, http.StatusOK, "consent", consentCSP(t.req.RedirectURI), newConsentView(id, t))
			return
		}
	}
	t, ok := h.store.get(id)
	if !ok { // evicted at once: the store is full of pending transactions
		WriteError(w, http.StatusServiceUnavailable, "Too many sign-ins are pending. Try again in a few minutes.")
		return
	}
	render(w, http.StatusOK, "login", "", newLoginView(id, t, ""))
}

// LoggedIn reports whether r carries a live login session. The
// authorization server uses it to answer prompt=none.
func (h *Handler) LoggedIn(r *http.Request) bool {
	return h.session(r) != ""
}

const (
	msgExpired   = "This sign-in request has expired or is unknown. Go back to the app and connect again."
	msgForbidden = "This form has expired or was not sent from this site. Go back to the app and connect again."
	msgBadForm   = "The form was not understood."
	msgWrong     = "Wrong username or password."
)

// getContinue renders a transaction's page: consent when the browser is
// logged in, else login.
func (h *Handler) getContinue(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("txn")
	t, ok := h.store.get(id)
	if !ok {
		WriteError(w, http.StatusBadRequest, msgExpired)
		return
	}
	sess := h.session(r)
	if sess == "" {
		render(w, http.StatusOK, "login", "", newLoginView(id, t, h.store.takeFlash(id)))
		return
	}
	t, ok = h.store.bind(id, sess, false)
	if !ok {
		h.cfg.Log.Warn().Str("ip", h.cfg.ClientIP(r)).Msg("consent page refused: transaction of another session")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	render(w, http.StatusOK, "consent", consentCSP(t.req.RedirectURI), newConsentView(id, t))
}

// postLogin checks the owner's credentials and, when they are right, starts
// a new session and sends the browser to the consent page.
func (h *Handler) postLogin(w http.ResponseWriter, r *http.Request) {
	ip := h.cfg.ClientIP(r)
	form, ok := h.readForm(w, r, ip, "txn", "csrf", "username", "password")
	if !ok {
		return
	}
	id := form["txn"]
	t, ok := h.store.checkCSRF(id, form["csrf"])
	if !ok {
		h.cfg.Log.Warn().Str("ip", ip).Msg("login refused: unknown transaction or bad csrf token")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	if wait := h.cfg.Throttle.Allow(ip); wait > 0 {
		h.cfg.Log.Warn().Str("ip", ip).Dur("retry_after", wait).Msg("login throttled")
		w.Header().Set("Retry-After", retryAfter(wait))
		render(w, http.StatusTooManyRequests, "login", "", newLoginView(id, t,
			"Too many attempts. Try again in "+retryAfter(wait)+" seconds."))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), busyWait)
	defer cancel()
	good, err := h.cfg.Verifier.Check(ctx, form["username"], form["password"])
	if err != nil {
		h.cfg.Log.Warn().Str("ip", ip).Msg("login busy")
		w.Header().Set("Retry-After", "5")
		render(w, http.StatusServiceUnavailable, "login", "", newLoginView(id, t,
			"The server is busy. Try again in a few seconds."))
		return
	}
	if !good {
		h.cfg.Log.Info().Str("ip", ip).Msg("login failed")
		h.store.setFlash(id, msgWrong)
		seeOther(w, continueURL(id))
		return
	}
	h.cfg.Throttle.Success(ip)
	var old string
	if c, err := r.Cookie(h.cookieName()); err == nil {
		old = c.Value
	}
	sid := h.store.newSession(old) // a new id on every login (fixation)
	http.SetCookie(w, h.cookie(sid))
	if _, ok := h.store.bind(id, digest(sid), true); !ok {
		WriteError(w, http.StatusBadRequest, msgExpired)
		return
	}
	h.cfg.Log.Info().Str("ip", ip).Msg("login succeeded")
	seeOther(w, continueURL(id))
}

// postConsent takes the owner's decision on a transaction of its session.
func (h *Handler) postConsent(w http.ResponseWriter, r *http.Request) {
	ip := h.cfg.ClientIP(r)
	form, ok := h.readForm(w, r, ip, "txn", "csrf", "action")
	if !ok {
		return
	}
	var allow bool
	switch form["action"] {
	case "allow":
		allow = true
	case "deny":
	default:
		WriteError(w, http.StatusBadRequest, msgBadForm)
		return
	}
	req, ok := h.store.take(form["txn"], form["csrf"], h.session(r))
	if !ok {
		h.cfg.Log.Warn().Str("ip", ip).Msg("consent refused: no session, unknown transaction or bad csrf token")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	to, err := h.cfg.Complete(r.Context(), req, allow)
	if err != nil || to == "" {
		h.cfg.Log.Error().Err(err).Str("ip", ip).Str("client_id", req.ClientID).Msg("complete authorization")
		WriteError(w, http.StatusInternalServerError, "Internal error.")
		return
	}
	h.cfg.Log.Info().Str("ip", ip).Str("client_id", req.ClientID).Bool("allow", allow).Msg("consent")
	seeOther(w, to)
}

// readForm checks that a POST is same-origin and reads its form, which must
// be application/x-www-form-urlencoded, at most maxForm bytes, and hold
// only the named fields, each at most once. It writes the error response
// (403 for a cross-origin request, 400 otherwise) and returns false when
// not. A missing field reads as "".
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, ip string, fields ...string) (map[string]string, bool) {
	if err := h.cop.Check(r); err != nil {
		h.cfg.Log.Warn().Str("ip", ip).Str("path", r.URL.Path).Msg("cross-origin form refused")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return nil, false
	}
	form, err := parseForm(w, r, fields)
	if err != nil {
		h.cfg.Log.Info().Str("ip", ip).Str("path", r.URL.Path).Err(err).Msg("form refused")
		WriteError(w, http.StatusBadRequest, msgBadForm)
		return nil, false
	}
	return form, true
}

func parseForm(w http.ResponseWriter, r *http.Request, fields []string) (map[string]string, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, errors.New("content type is not application/x-www-form-urlencoded")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxForm))
	if err != nil {
		return nil, errors.New("form too large or unreadable")
	}
	values, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, errors.New("malformed form")
	}
	form := make(map[string]string, len(values))
	for k, vs := range values {
		if !slices.Contains(fields, k) {
			return nil, errors.New("unexpected form field") // the name may be anything: not logged
		}
		if len(vs) != 1 {
			return nil, errors.New("repeated form field " + k)
		}
		form[k] = vs[0]
	}
	return form, nil
}

// session returns the digest of r's live session, or "".
func (h *Handler) session(r *http.Request) string {
	c, err := r.Cookie(h.cookieName())
	if err != nil {
		return ""
	}
	return h.store.session(c.Value)
}

func (h *Handler) cookieName() string {
	if h.cfg.Secure {
		return CookieSecure
	}
	return CookiePlain
}

func (h *Handler) cookie(sid string) *http.Cookie {
	return &http.Cookie{
		Name:     h.cookieName(),
		Value:    sid,
		Path:     "/",
		MaxAge:   int(h.cfg.SessionTTL / time.Second),
		Secure:   h.cfg.Secure,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
}

func continueURL(id string) string {
	return PathContinue + "?txn=" + url.QueryEscape(id)
}

// seeOther answers a POST with 303 to location (SECURITY.md AS-19).
func seeOther(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusSeeOther)
}

// retryAfter formats d as whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int(math.Ceil(d.Seconds()))))
}

func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
