package web

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/certs"
	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
)

// Config is what the HTTP side needs; app fills it.
type Config struct {
	// Addr is the listen address, e.g. 127.0.0.1:8080 or :443.
	Addr string
	// HTTPAddr is the plain-HTTP listener that answers ACME HTTP-01 challenges and redirects
	// everything else to https. If empty, :80 with TLS "acme" and none otherwise; "off" is none.
	HTTPAddr string
	// TLS is off, local, acme or files. If empty, off.
	TLS string
	// Certs is the certificate manager's configuration without its ports: web sets Mode to
	// certs.Mode(TLS), HTTPSPort and ChallengeTLSPort from the bound address, ChallengeHTTPPort
	// from HTTPAddr, ACMERoots from ACMECARoot, and Logger and Now when they are unset. The
	// caller fills DB, Names and the mode's own settings. Unused with TLS off.
	Certs certs.Config
	// ACMECARoot is a PEM file of extra roots for the ACME directory's own HTTPS (a test CA).
	// If empty, the system's roots.
	ACMECARoot string
	// OAuth is the authorization server's configuration without PublicURL and ClientIP, which
	// web sets. The caller fills DB and the owner's login; Now is web's clock when unset.
	OAuth oauth.Config
	// PublicURL, when set, opens the authorization server in New, so Handler works without
	// Listen. If empty, Listen opens it for the bound address (https:// under TLS).
	PublicURL string
	// TrustedProxies are the CIDRs (10.0.0.0/8, 127.0.0.1/32) of reverse proxies whose
	// X-Forwarded-For is believed; malformed ones match nothing. If empty, the client is always
	// RemoteAddr.
	TrustedProxies []string
	// CORSOrigins are the browser origins, besides loopback ones, allowed to call MCP.
	CORSOrigins []string
	// MaxConcurrent bounds the authenticated MCP requests served at once (event streams
	// aside); beyond it 503. One principal holds at most half of them (at least 2), beyond
	// that 429; calls waiting for the owner's approval are parked outside them (Park), as
	// many again at most. Other requests with a body (OAuth, MCP without a valid token) share
	// a quarter of it (at least 8), at most 8 per address. If zero or negative, unbounded.
	MaxConcurrent int
	// Version is the build's version, for /health and the server card. The X-API-Version
	// header carries APIVersion instead.
	Version string
	// MCP is served at /mcp, /api/mcp and /mcp/http, and over the legacy SSE transport at
	// /mcp/sse and /mcp/sse/message. Required.
	MCP *mcp.Server
	// Scope is the scope a tool needs and whether the tool exists, so that a call a token may
	// not make is refused with 403 and a step-up challenge before it reaches MCP. If nil, only
	// MCP's own Permit refuses such calls (inside a 200 answer).
	Scope func(tool string) (scope string, known bool)
	// AllowArgumentTokens lets a tools/call without an Authorization header carry its token
	// as the argument access_token or accessToken (seed 001's compatibility clients): verified
	// like a header token and removed before the tool sees its arguments; never over plain
	// HTTP from another machine. If false, such a call is refused with 401, unless the once
	// compatibility mode is on, which allows them the same way.
	AllowArgumentTokens bool
	// Compat are the compatibility modes at start (compat.go); SetCompat changes them. The zero
	// value is none.
	Compat Compat
	// Limiter is the rate limit per client and per address. If nil, no rate limiting.
	Limiter *limit.Limiter
	// Audit records every MCP request. If nil, none is recorded.
	Audit *audit.Log
	// Health reports the checks of /health (e.g. {"database":"ok","index":"building",
	// "embedder":"none"}) and whether the server is healthy (200, else 503). If nil, no checks
	// and always healthy.
	Health func() (checks map[string]string, healthy bool)
	// RootPEM returns the local CA's root certificate for /ca.crt (TLS "local" only). If nil,
	// /ca.crt is 404 as under other modes.
	RootPEM func() ([]byte, error)
	// Uploads takes the files of large imports at UploadPath + id (upload.go), each with its
	// own one-time token instead of an access token, its own size cap, one transfer per URL at
	// a time, a pool of its own (two bodies at once) and a minimum transfer rate (16 KiB/s over
	// each 30 s) instead of the read timeout. If nil, those paths are 404 like any unknown one.
	Uploads UploadReceiver
	// Console is the owner's console (app/console), served at /console and every path below it
	// behind the same security headers, Host check, gate and per-address rate limit as the OAuth
	// pages; it sets its own Content-Security-Policy. If nil, those paths are 404 like any
	// unknown one.
	Console http.Handler
	// Metrics serves /metrics (app/metrics: it decides who may read it). If nil, /metrics is
	// 404 like any unknown path.
	Metrics http.Handler
	// OnRequest, when set, is told of every request once its answer is written: the class of
	// its path (mcp, sse, oauth, console, upload, health, discovery, metrics or other) and its
	// status. For metrics; it must not block.
	OnRequest func(route string, status int)
	// Log receives one debug line per request and the refusals worth knowing; never a token.
	// If zero, silent.
	Log zerolog.Logger
	// Now is the clock of /health, the audit log and, when theirs are unset, the authorization
	// server and the certificates. If nil, time.Now.
	Now func() time.Time
	// Stderr is where a generated login password is shown, once, to the person starting the
	// server. If nil, os.Stderr.
	Stderr io.Writer
}

// Server is ownsona's HTTP side. New, Listen and Close are called in that order from one
// goroutine, and the accessors not while Listen or Close run; the handler it serves is safe for
// concurrent use.
type Server struct {
	cfg     Config
	log     zerolog.Logger
	now     func() time.Time
	started time.Time

	auth   *oauth.Server // nil until New (with PublicURL) or Listen opens it
	authMu sync.Mutex    // held while auth is set or cleared, and by SetCompat
	compat atomic.Pointer[Compat]
	certs  *certs.Manager // nil until Listen, and with TLS off

	ln       net.Listener
	http     *http.Server
	http80   *http.Server       // the ACME challenge and redirect listener; nil when none
	stopBase context.CancelFunc // ends the servers' base context: event streams close
	pools    *pools

	uploadRate uploadRate // the minimum rate of upload bodies (upload.go); tests shorten it

	connsMu sync.Mutex
	active  map[net.Conn]struct{} // connections in a request (http.StateActive): ActiveConns
}

// SettingError is a configuration mistake found while opening: an unreadable acme-ca-root
// file, a TLS configuration the certificate manager refuses, an OAuth configuration the
// authorization server refuses. Setting names the setting (for tls, with its mode: "tls acme").
type SettingError struct {
	Setting string
	Err     error
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Err.Error() }

func (e *SettingError) Unwrap() error { return e.Err }

// New checks cfg and, when cfg.PublicURL is set, opens the authorization server. It binds
// nothing: Listen does.
func New(cfg Config) (*Server, error) {
	if cfg.MCP == nil {
		return nil, errors.New("web: no MCP server")
	}
	if cfg.TLS == "" {
		cfg.TLS = "off"
	}
	s := &Server{cfg: cfg, log: cfg.Log, now: cfg.Now, pools: newPools(cfg.MaxConcurrent), uploadRate: defaultUploadRate}
	s.compat.Store(&cfg.Compat)
	if s.now == nil {
		s.now = time.Now
	}
	s.started = s.now()
	if cfg.PublicURL != "" {
		if err := s.openAuth(cfg.PublicURL); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Listen binds the configured address synchronously (so "address in use" is an error here) and
// serves in a goroutine until Close. Without a configured public URL, the authorization server
// takes the bound loopback address as its origin (https:// under TLS). Under TLS, certificates
// are ready when it returns: loaded from the file, made by the local CA, read from files, or
// obtained from the ACME CA (its challenges are answered by the listeners already open). Call it
// once; after an error, Close releases what it opened.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	tlsOn := s.cfg.TLS != "off"
	if s.auth == nil {
		scheme := "http://"
		if tlsOn {
			scheme = "https://"
		}
		if err := s.openAuth(scheme + ln.Addr().String()); err != nil {
			ln.Close()
			return err
		}
	}
	base, stop := context.WithCancel(context.Background())
	s.stopBase = stop
	s.ln = ln
	s.http = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second, // event streams lift it (mcp)
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    8 << 10, // net/http adds 4 KiB of slack; larger headers get 431 (SECURITY.md RS-12)
		BaseContext:       func(net.Listener) context.Context { return base },
		ConnState:         s.trackConn,
		ErrorLog:          log.New(io.Discard, "", 0), // TLS handshake noise from scanners
	}
	if tlsOn {
		if err := s.openCerts(ln); err != nil {
			ln.Close()
			return err
		}
		s.http.TLSConfig = s.certs.TLSConfig()
	}
	go func(srv *http.Server) {
		var err error
		if srv.TLSConfig != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("http server stopped")
		}
	}(s.http)
	if tlsOn {
		if err := s.listen80(base); err != nil {
			return err
		}
		if err := s.certs.Start(base); err != nil {
			return fmt.Errorf("tls %s: %w", s.cfg.TLS, err)
		}
	}
	return nil
}

// Close stops serving: it ends the base context (so event streams end and Shutdown need not
// wait for them), shuts the listeners down within 5 s, then closes the certificate manager and
// the authorization server. It tolerates a nil Server, partial opens and repeat calls, and
// returns the first error.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	var errs []error
	if s.stopBase != nil {
		s.stopBase()
	}
	for _, srv := range []**http.Server{&s.http, &s.http80} {
		if *srv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			err := (*srv).Shutdown(ctx)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				// Connections that never finished their request (slow or stuck clients) are
				// cut rather than waited for: nothing acknowledged depends on them.
				s.log.Warn().Msg("connections still open after 5 s at shutdown were closed")
				err = (*srv).Close()
			}
			errs = append(errs, err)
			*srv = nil
		}
	}
	if s.certs != nil {
		errs = append(errs, s.certs.Close())
		s.certs = nil
	}
	s.authMu.Lock()
	if s.auth != nil {
		s.auth.Close()
		s.auth = nil
	}
	s.authMu.Unlock()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// openCerts makes the certificate manager for the configured mode.
func (s *Server) openCerts(ln net.Listener) error {
	cfg := s.cfg.Certs
	cfg.Mode = certs.Mode(s.cfg.TLS)
	if reflect.ValueOf(cfg.Logger).IsZero() { // unset: zerolog.Logger is not comparable
		cfg.Logger = s.log
	}
	if cfg.Now == nil {
		cfg.Now = s.cfg.Now
	}
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		cfg.HTTPSPort, _ = strconv.Atoi(port)
		cfg.ChallengeTLSPort = cfg.HTTPSPort
	}
	// HTTP-01 is answered by our :80 listener (listen80), wherever HTTPAddr puts it, so
	// certmagic never binds a port of its own.
	if addr := s.httpAddr(); addr != "" {
		if _, port, err := net.SplitHostPort(addr); err == nil {
			cfg.ChallengeHTTPPort, _ = strconv.Atoi(port)
		}
	}
	if s.cfg.ACMECARoot != "" {
		pem, err := os.ReadFile(s.cfg.ACMECARoot)
		if err != nil {
			return &SettingError{Setting: "acme-ca-root", Err: err}
		}
		cfg.ACMERoots = x509.NewCertPool()
		if !cfg.ACMERoots.AppendCertsFromPEM(pem) {
			return &SettingError{Setting: "acme-ca-root", Err: fmt.Errorf("%s holds no PEM certificate", s.cfg.ACMECARoot)}
		}
	}
	m, err := certs.New(cfg)
	if err != nil {
		return &SettingError{Setting: "tls " + s.cfg.TLS, Err: err}
	}
	s.certs = m
	return nil
}

// httpAddr is the plain-HTTP listener's address: HTTPAddr, else :80 with TLS acme; "" for none.
func (s *Server) httpAddr() string {
	switch {
	case s.cfg.HTTPAddr == "off":
		return ""
	case s.cfg.HTTPAddr == "" && s.cfg.TLS == "acme":
		return ":80"
	}
	return s.cfg.HTTPAddr
}

// listen80 opens the plain-HTTP listener that answers ACME HTTP-01 challenges and redirects
// everything else to https: :80 by default with TLS acme, where the CA connects.
func (s *Server) listen80(base context.Context) error {
	addr := s.httpAddr()
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s for ACME challenges and the redirect to https: %w (set --http-addr, or off)", addr, err)
	}
	s.http80 = &http.Server{
		Handler:           s.baseHeaders(s.certs.HTTPHandler()),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    8 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	go func(srv *http.Server) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Msg("http redirect server stopped")
		}
	}(s.http80)
	return nil
}

// trackConn keeps the set of connections in a request, for ActiveConns.
func (s *Server) trackConn(c net.Conn, st http.ConnState) {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	if st != http.StateActive {
		delete(s.active, c)
		return
	}
	if s.active == nil {
		s.active = map[net.Conn]struct{}{}
	}
	s.active[c] = struct{}{}
}

// ActiveConns is how many connections of the listener Listen opened are in a request: their
// headers were read and the answer is not finished (http.StateActive; event streams count
// while they last). A test waits on it to know that the server holds a request it sent.
func (s *Server) ActiveConns() int {
	s.connsMu.Lock()
	defer s.connsMu.Unlock()
	return len(s.active)
}

// Addr is the address Listen bound, e.g. 127.0.0.1:8080; "" before Listen.
func (s *Server) Addr() string {
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// Auth is the authorization server, for the operator's commands (personal access tokens) and
// the startup log line; nil until New (with a PublicURL) or Listen opens it, and after Close.
func (s *Server) Auth() *oauth.Server { return s.auth }

// TLSInfo names the HTTPS mode and its names for the startup log line: "off", or e.g.
// "acme mem.example.com".
func (s *Server) TLSInfo() string {
	if s.cfg.TLS == "off" {
		return "off"
	}
	return fmt.Sprintf("%s %s", s.cfg.TLS, strings.Join(s.cfg.Certs.Names, ","))
}

// Handler routes every HTTP endpoint of ownsona. The authorization server must be open (Listen
// or a configured public URL): there is no unauthenticated MCP over HTTP.
//
// Every request passes, outermost first: the request log, the security headers, the Host check
// (DNS rebinding), the concurrency gate, the per-address rate limit of non-MCP endpoints; MCP
// requests then pass CORS, the Origin check, the audit log and the token check (with its
// per-client rate limit).
func (s *Server) Handler() http.Handler {
	if s.auth == nil {
		panic("web: Handler before the authorization server is open")
	}
	mcp := s.cfg.MCP
	mux := http.NewServeMux()
	guard := func(h http.Handler) http.Handler { return s.cors(s.checkOrigin(s.auditMCP(s.requireAuth(h)))) }
	guarded := guard(mcp)
	for _, p := range []string{"/mcp", "/api/mcp", "/mcp/http"} {
		mux.Handle(p, guarded)
	}
	mux.Handle("/mcp/sse", guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mcp.ServeLegacySSE(w, r, "/mcp/sse/message")
	})))
	mux.Handle("/mcp/sse/message", guard(http.HandlerFunc(mcp.ServeLegacyMessage)))
	s.auth.Routes(mux)
	mux.HandleFunc("/health", s.serveHealth)
	mux.HandleFunc("/.well-known/mcp/server-card.json", s.serveServerCard)
	mux.HandleFunc("/.well-known/mcp/catalog.json", s.serveCatalog)
	mux.HandleFunc("/ca.crt", s.serveCACert)
	mux.HandleFunc(oauth.DocsPath, s.serveDocs)
	if s.cfg.Uploads != nil {
		mux.HandleFunc(UploadPath, s.serveUpload)
	}
	if s.cfg.Console != nil {
		mux.Handle("/console", s.cfg.Console)
		mux.Handle("/console/", s.cfg.Console)
	}
	if s.cfg.Metrics != nil {
		mux.Handle("/metrics", s.cfg.Metrics)
	}
	mux.HandleFunc("/", s.serveRoot)
	return s.logRequests(s.securityHeaders(s.checkHost(s.gate(s.limitIP(mux)))))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// securityHeaders sets the headers every response carries, and HSTS under TLS.
func (s *Server) securityHeaders(next http.Handler) http.Handler {
	hsts := s.cfg.TLS != "off" || strings.HasPrefix(s.auth.Endpoints().Issuer, "https://")
	next = s.baseHeaders(next)
	if !hsts {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000; includeSubDomains")
		next.ServeHTTP(w, r)
	})
}

// APIVersion is the semantic version of what clients see over HTTP: the MCP endpoint and its
// aliases, the tools' names, arguments and payloads (TOOLS.md), the OAuth endpoints and the
// discovery documents. It goes into the X-API-Version header of every response (seed 003); the
// build's version stays in /health, the server card and `ownsona version`. Bump the major
// version when a client written against the previous one could break (an endpoint, tool,
// argument or payload field removed or changing meaning, a default that refuses what was
// accepted); the minor version for additions (a tool, an optional argument or field, an
// endpoint, a compatibility mode); the patch version for fixes that change no documented shape.
const APIVersion = "1.0.0"

// baseHeaders sets the headers every response carries, on both listeners.
func (s *Server) baseHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-XSS-Protection", "1; mode=block") // seed 003; harmless where browsers dropped the filter
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-API-Version", APIVersion)
		next.ServeHTTP(w, r)
	})
}

// LoopbackHost reports whether host (no port; IPv6 with or without brackets) names this
// machine: localhost or a loopback address.
func LoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHost defends against DNS rebinding: the Host must be the public URL's host or a loopback
// name, so a page on another name that resolves to this server cannot talk to it.
func (s *Server) checkHost(next http.Handler) http.Handler {
	public := ""
	if u, err := url.Parse(s.auth.Endpoints().Issuer); err == nil {
		public = u.Hostname()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]") // an IPv6 literal without a port
		if !LoopbackHost(host) && !strings.EqualFold(strings.TrimSuffix(host, "."), public) {
			writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": "misdirected_request",
				"error_description": "this server answers only to its public name and to localhost, 127.0.0.1 and [::1]"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests to MCP from pages of other origins: a present Origin must
// be the public origin, a loopback one or one of the CORS origins.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	issuer := s.auth.Endpoints().Issuer
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, issuer) && !s.corsAllowed(o) {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !LoopbackHost(u.Hostname()) {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden_origin", "error_description": "requests from this origin are not allowed"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// logRequests logs one line per request with a request id; never headers or bodies.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(sw, r)
		s.log.Debug().Str("request_id", id).Str("method", r.Method).Str("path", r.URL.Path).
			Int("status", sw.status).Dur("duration", time.Since(start)).Msg("http request")
		if s.cfg.OnRequest != nil {
			s.cfg.OnRequest(route(r.URL.Path), sw.status)
		}
	})
}

// route is the class of path that Config.OnRequest is told: a word of a fixed set, never the
// path itself.
func route(p string) string {
	switch {
	case isMCPPath(p):
		return "mcp"
	case strings.HasPrefix(p, UploadPath):
		return "upload"
	case p == "/mcp/sse" || p == "/mcp/sse/message":
		return "sse"
	case strings.HasPrefix(p, "/oauth/") || strings.HasPrefix(p, "/.well-known/oauth-") || p == "/.well-known/openid-configuration":
		return "oauth"
	case p == "/console" || strings.HasPrefix(p, "/console/"):
		return "console"
	case p == "/health":
		return "health"
	case strings.HasPrefix(p, "/.well-known/") || p == oauth.DocsPath || p == "/ca.crt":
		return "discovery"
	case p == "/metrics":
		return "metrics"
	}
	return "other"
}
