package login

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
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

	"github.com/ownsona/ownsona/kv"
)

// The paths Handler serves. Mount the Handler at each of them.
const (
	PathLogin    = "/oauth/login"    // POST: the login form
	PathConsent  = "/oauth/consent"  // POST: the consent form
	PathContinue = "/oauth/continue" // GET ?txn=…: a transaction's login or consent page
	PathLogout   = "/oauth/logout"   // GET: the sign-out page; POST: its form
)

// Session cookie names: with the __Host- prefix when served over https,
// without it (a browser refuses __Host- cookies that are not Secure) on
// plain-http loopback.
const (
	CookieSecure = "__Host-ownsona_session"
	CookiePlain  = "ownsona_session"
)

// ConsentDelay is how long the consent page must have been shown before
// Allow counts: the button ignores the pointer until then (a CSS animation,
// see pages.html), and a POST sooner than that is refused and the page shown
// again. A click meant for something else that lands on Allow as the page
// appears (clickjacking by a window opened under the pointer) decides
// nothing. Deny is never delayed.
const ConsentDelay = time.Second

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
	// DB keeps, in Bucket, the key that signs transactions and the digests
	// of the device cookies, so that an open sign-in form and a device
	// survive a restart. If nil, the key is random per Handler and devices
	// are remembered in memory only.
	DB *kv.DB
	// Throttle limits password attempts. If nil, a NewThrottle(Now).
	Throttle *Throttle
	// Secure means the public URL is https: the cookies are
	// __Host-ownsona_session and __Host-ownsona_device, and Secure. If false
	// (plain-http loopback), they are ownsona_session and ownsona_device.
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
	// OnSignIn, when set, is told how each check of the owner's password
	// ended, at the login page or through CheckOwner: SignInOK,
	// SignInWrong, SignInThrottled or SignInBusy; never who tried. For
	// metrics; it must not block.
	OnSignIn func(result string)
}

// Handler serves the login and consent pages and their forms. See the
// package documentation for the flow. It is safe for concurrent use.
type Handler struct {
	cfg     Config
	store   *store
	seal    *sealer
	devices *devices
	cop     *http.CrossOriginProtection
	mux     *http.ServeMux
}

// New returns a Handler for cfg. It fails only when cfg lacks a required
// field or cfg.DB cannot be read or written.
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
	key, err := loadKey(cfg.DB)
	if err != nil {
		return nil, fmt.Errorf("login: transaction key: %w", err)
	}
	devs, err := openDevices(cfg.DB, cfg.Now)
	if err != nil {
		return nil, fmt.Errorf("login: devices: %w", err)
	}
	h := &Handler{
		cfg:     cfg,
		store:   newStore(cfg.Now, cfg.SessionTTL),
		seal:    &sealer{key: key},
		devices: devs,
		cop:     http.NewCrossOriginProtection(),
		mux:     http.NewServeMux(),
	}
	h.mux.HandleFunc("POST "+PathLogin, h.postLogin)
	h.mux.HandleFunc("POST "+PathConsent, h.postConsent)
	h.mux.HandleFunc("GET "+PathContinue, h.getContinue)
	h.mux.HandleFunc("GET "+PathLogout, h.getLogout)
	h.mux.HandleFunc("POST "+PathLogout, h.postLogout)
	return h, nil
}

// ServeHTTP serves PathLogin, PathContinue, PathConsent and PathLogout.
// Another method gets 405 with an Allow header. Every response carries the
// page headers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setPageHeaders(w.Header(), "")
	h.mux.ServeHTTP(w, r)
}

// Start begins the login and consent for req, which the authorization
// server has fully validated: it renders the consent page when the browser
// has a login session, else the login page, each carrying req in a new
// signed transaction. Nothing is stored. The authorization server calls it
// from /authorize.
func (h *Handler) Start(w http.ResponseWriter, r *http.Request, req Request) {
	now := h.cfg.Now()
	t := txn{ID: newID(), Exp: now.Add(h.cfg.TxnTTL).Unix(), Req: toWire(req)}
	largest := t // as the later pages re-sign it, so that none of them outgrows maxTxn
	largest.Sess, largest.Shown, largest.Msg = h.seal.sessionTag(""), now.UnixMilli(), msgCodeWrong
	if _, ok := h.sealFor(w, largest); !ok {
		return
	}
	h.show(w, r, t)
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
	msgTooLarge  = "This authorization request is too large to sign in with (its state or the app's name is too long)."
	msgTooSoon   = "You chose Allow less than a second after this page appeared. Check the request, then choose again."
	msgFull      = "Too many sign-ins were completed in the last minutes. Try again in a few minutes."
)

// show renders t's page for r's browser: the consent page, bound to its
// session, when it has one; else the login page.
func (h *Handler) show(w http.ResponseWriter, r *http.Request, t txn) {
	if sess := h.session(r); sess != "" {
		h.renderConsent(w, http.StatusOK, t, sess, "")
		return
	}
	var msg string
	if t.Msg == msgCodeWrong {
		msg = msgWrong
	}
	h.renderLogin(w, http.StatusOK, t, msg)
}

// renderLogin renders the login page of t, with msg as an alert.
func (h *Handler) renderLogin(w http.ResponseWriter, status int, t txn, msg string) {
	t.Sess, t.Shown, t.Msg = "", 0, ""
	tok, ok := h.sealFor(w, t)
	if !ok {
		return
	}
	render(w, status, "login", "", newLoginView(t.Req, tok, h.seal.csrf(tok), msg))
}

// renderConsent renders the consent page of t for the session with digest
// sess, with msg as an alert; the transaction records when.
func (h *Handler) renderConsent(w http.ResponseWriter, status int, t txn, sess, msg string) {
	t.Sess, t.Shown, t.Msg = h.seal.sessionTag(sess), h.cfg.Now().UnixMilli(), ""
	tok, ok := h.sealFor(w, t)
	if !ok {
		return
	}
	render(w, status, "consent", consentCSP(t.Req.RedirectURI), newConsentView(t.Req, tok, h.seal.csrf(tok), msg))
}

// sealFor seals t, or writes the error page and returns false.
func (h *Handler) sealFor(w http.ResponseWriter, t txn) (string, bool) {
	tok, err := h.seal.seal(t)
	switch {
	case errors.Is(err, errTooLarge):
		WriteError(w, http.StatusBadRequest, msgTooLarge)
		return "", false
	case err != nil:
		h.cfg.Log.Error().Err(err).Msg("seal transaction")
		WriteError(w, http.StatusInternalServerError, "Internal error.")
		return "", false
	}
	return tok, true
}

// open returns the live, undecided transaction of tok.
func (h *Handler) open(tok string) (txn, bool) {
	t, ok := h.seal.open(tok, h.cfg.Now())
	if !ok || h.store.isDecided(t.ID) {
		return txn{}, false
	}
	return t, true
}

// boundTo reports whether t's consent page was shown to the session with
// digest sess.
func (h *Handler) boundTo(t txn, sess string) bool {
	return sess != "" && t.Sess != "" && subtle.ConstantTimeCompare([]byte(t.Sess), []byte(h.seal.sessionTag(sess))) == 1
}

// getContinue renders a transaction's page: consent when the browser is
// logged in, else login.
func (h *Handler) getContinue(w http.ResponseWriter, r *http.Request) {
	t, ok := h.open(r.URL.Query().Get("txn"))
	if !ok {
		WriteError(w, http.StatusBadRequest, msgExpired)
		return
	}
	if sess := h.session(r); sess != "" && t.Sess != "" && !h.boundTo(t, sess) {
		h.cfg.Log.Warn().Str("ip", h.cfg.ClientIP(r)).Msg("consent page refused: transaction of another session")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	h.show(w, r, t)
}

// postLogin checks the owner's credentials and, when they are right, starts
// a new session, sets a new device cookie and sends the browser to the
// consent page.
func (h *Handler) postLogin(w http.ResponseWriter, r *http.Request) {
	ip := h.cfg.ClientIP(r)
	form, ok := h.readForm(w, r, ip, "txn", "csrf", "username", "password")
	if !ok {
		return
	}
	t, ok := h.open(form["txn"])
	if !ok || !h.seal.checkCSRF(form["txn"], form["csrf"]) {
		h.cfg.Log.Warn().Str("ip", ip).Msg("login refused: unknown transaction or bad csrf token")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	var throttled *ThrottledError
	switch err := h.checkOwner(w, r, ip, form["username"], form["password"]); {
	case errors.As(err, &throttled):
		w.Header().Set("Retry-After", throttled.RetryAfterSeconds())
		h.renderLogin(w, http.StatusTooManyRequests, t, "Too many attempts. Try again in "+throttled.RetryAfterSeconds()+" seconds.")
		return
	case errors.Is(err, ErrBusy):
		w.Header().Set("Retry-After", "5")
		h.renderLogin(w, http.StatusServiceUnavailable, t, "The server is busy. Try again in a few seconds.")
		return
	case err != nil:
		t.Sess, t.Shown, t.Msg = "", 0, msgCodeWrong
		h.seeOtherContinue(w, t)
		return
	}
	var old string
	if c, err := r.Cookie(h.cookieName()); err == nil {
		old = c.Value
	}
	sid := h.store.newSession(old) // a new id on every login (fixation)
	http.SetCookie(w, h.cookie(h.cookieName(), sid, h.cfg.SessionTTL))
	t.Sess, t.Shown, t.Msg = "", 0, ""
	h.seeOtherContinue(w, t)
}

// seeOtherContinue answers a POST with 303 to t's PathContinue.
func (h *Handler) seeOtherContinue(w http.ResponseWriter, t txn) {
	tok, ok := h.sealFor(w, t)
	if !ok {
		return
	}
	seeOther(w, PathContinue+"?txn="+url.QueryEscape(tok))
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
	sess := h.session(r)
	t, ok := h.open(form["txn"])
	if !ok || !h.seal.checkCSRF(form["txn"], form["csrf"]) || !h.boundTo(t, sess) || t.Shown == 0 {
		h.cfg.Log.Warn().Str("ip", ip).Msg("consent refused: no session, unknown or decided transaction, or bad csrf token")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	if allow && h.cfg.Now().Sub(t.shownAt()) < ConsentDelay {
		h.cfg.Log.Warn().Str("ip", ip).Msg("consent refused: allowed within a second of the page")
		h.renderConsent(w, http.StatusBadRequest, t, sess, msgTooSoon)
		return
	}
	switch first, full := h.store.decide(t.ID, t.expires()); {
	case full:
		h.cfg.Log.Warn().Str("ip", ip).Msg("consent refused: too many decided transactions")
		w.Header().Set("Retry-After", "60")
		WriteError(w, http.StatusServiceUnavailable, msgFull)
		return
	case !first:
		h.cfg.Log.Warn().Str("ip", ip).Msg("consent refused: transaction already decided")
		WriteError(w, http.StatusForbidden, msgForbidden)
		return
	}
	req := t.Req.request()
	to, err := h.cfg.Complete(r.Context(), req, allow)
	if err != nil || to == "" {
		h.cfg.Log.Error().Err(err).Str("ip", ip).Str("client_id", req.ClientID).Msg("complete authorization")
		WriteError(w, http.StatusInternalServerError, "Internal error.")
		return
	}
	h.cfg.Log.Info().Str("ip", ip).Str("client_id", req.ClientID).Bool("allow", allow).Msg("consent")
	seeOther(w, to)
}

// getLogout renders the sign-out page, or says the browser is signed out.
func (h *Handler) getLogout(w http.ResponseWriter, r *http.Request) {
	v := logoutView{Action: PathLogout}
	if sess := h.session(r); sess != "" {
		v.SignedIn, v.CSRF = true, h.seal.logoutCSRF(sess)
	}
	render(w, http.StatusOK, "logout", "", v)
}

// postLogout ends the browser's login session and sends it to the sign-out
// page. The device cookie stays: it only lets this browser past the global
// login throttle.
func (h *Handler) postLogout(w http.ResponseWriter, r *http.Request) {
	ip := h.cfg.ClientIP(r)
	form, ok := h.readForm(w, r, ip, "csrf")
	if !ok {
		return
	}
	if sess := h.session(r); sess != "" {
		want := h.seal.logoutCSRF(sess)
		if form["csrf"] == "" || subtle.ConstantTimeCompare([]byte(form["csrf"]), []byte(want)) != 1 {
			h.cfg.Log.Warn().Str("ip", ip).Msg("sign-out refused: bad csrf token")
			WriteError(w, http.StatusForbidden, msgForbidden)
			return
		}
		h.store.endSession(sess)
		h.cfg.Log.Info().Str("ip", ip).Msg("signed out")
	}
	http.SetCookie(w, h.cookie(h.cookieName(), "", -1))
	seeOther(w, PathLogout)
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

// device returns the digest of r's valid device cookie, or "".
func (h *Handler) device(r *http.Request) string {
	c, err := r.Cookie(h.deviceCookieName())
	if err != nil {
		return ""
	}
	return h.devices.valid(c.Value)
}

func (h *Handler) cookieName() string {
	if h.cfg.Secure {
		return CookieSecure
	}
	return CookiePlain
}

func (h *Handler) deviceCookieName() string {
	if h.cfg.Secure {
		return DeviceCookieSecure
	}
	return DeviceCookiePlain
}

// cookie is a cookie of ours: host-only, whole site, HttpOnly, SameSite=Lax,
// Secure over https. A negative ttl deletes it.
func (h *Handler) cookie(name, value string, ttl time.Duration) *http.Cookie {
	maxAge := -1
	if ttl >= 0 {
		maxAge = int(ttl / time.Second)
	}
	return &http.Cookie{
		Name:     name,
		Value:    value,
		Path:     "/",
		MaxAge:   maxAge,
		Secure:   h.cfg.Secure,
		HttpOnly: true,
		SameSite: http.SameSiteLaxMode,
	}
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
