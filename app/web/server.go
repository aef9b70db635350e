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
	"strconv"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/certs"
)

// Listen binds the configured address synchronously (so "address in use" is an error here) and
// serves in a goroutine until Close. Without a configured public URL, the authorization server
// takes the bound loopback address as its origin (https:// under TLS). Under TLS, certificates
// are ready when it returns: loaded from the file, made by the local CA, read from files, or
// obtained from the ACME CA (its challenges are answered by the listeners already open).
func (a *App) Listen() error {
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	tlsOn := a.cfg.TLS != "off"
	if a.auth == nil {
		scheme := "http://"
		if tlsOn {
			scheme = "https://"
		}
		if err := a.openAuth(scheme+ln.Addr().String(), a.stderr); err != nil {
			ln.Close()
			return err
		}
	}
	base, stop := context.WithCancel(context.Background())
	a.stopBase = stop
	a.ln = ln
	a.http = &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second, // event streams lift it (rpc)
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    8 << 10, // net/http adds 4 KiB of slack; larger headers get 431 (SECURITY.md RS-12)
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          log.New(io.Discard, "", 0), // TLS handshake noise from scanners
	}
	if tlsOn {
		if err := a.openCerts(ln); err != nil {
			ln.Close()
			return err
		}
		a.http.TLSConfig = a.certs.TLSConfig()
	}
	go func(srv *http.Server) {
		var err error
		if srv.TLSConfig != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error().Err(err).Msg("http server stopped")
		}
	}(a.http)
	if tlsOn {
		if err := a.listen80(base); err != nil {
			return err
		}
		if err := a.certs.Start(base); err != nil {
			return fmt.Errorf("tls %s: %w", a.cfg.TLS, err)
		}
	}
	return nil
}

// openCerts makes the certificate manager for the configured mode.
func (a *App) openCerts(ln net.Listener) error {
	cfg := certs.Config{Mode: certs.Mode(a.cfg.TLS), DB: a.db, Names: a.cfg.Domains, ACMEDirectory: a.cfg.ACMECA,
		ACMEEmail: a.cfg.ACMEEmail, CertFile: a.cfg.CertFile, KeyFile: a.cfg.KeyFile, Logger: a.log, Now: a.cfg.Now}
	if _, port, err := net.SplitHostPort(ln.Addr().String()); err == nil {
		cfg.HTTPSPort, _ = strconv.Atoi(port)
		cfg.ChallengeTLSPort = cfg.HTTPSPort
	}
	// HTTP-01 is answered by our :80 listener (listen80), wherever --http-addr puts it, so
	// certmagic never binds a port of its own.
	if addr := a.httpAddr(); addr != "" {
		if _, port, err := net.SplitHostPort(addr); err == nil {
			cfg.ChallengeHTTPPort, _ = strconv.Atoi(port)
		}
	}
	if a.cfg.ACMECARoot != "" {
		pem, err := os.ReadFile(a.cfg.ACMECARoot)
		if err != nil {
			return usageErr("acme-ca-root: %v", err)
		}
		cfg.ACMERoots = x509.NewCertPool()
		if !cfg.ACMERoots.AppendCertsFromPEM(pem) {
			return usageErr("acme-ca-root: %s holds no PEM certificate", a.cfg.ACMECARoot)
		}
	}
	m, err := certs.New(cfg)
	if err != nil {
		return usageErr("tls %s: %v", a.cfg.TLS, err)
	}
	a.certs = m
	return nil
}

// httpAddr is the plain-HTTP listener's address: --http-addr, else :80 with --tls acme; "" for
// none.
func (a *App) httpAddr() string {
	switch {
	case a.cfg.HTTPAddr == "off":
		return ""
	case a.cfg.HTTPAddr == "" && a.cfg.TLS == "acme":
		return ":80"
	}
	return a.cfg.HTTPAddr
}

// listen80 opens the plain-HTTP listener that answers ACME HTTP-01 challenges and redirects
// everything else to https: :80 by default with --tls acme, where the CA connects.
func (a *App) listen80(base context.Context) error {
	addr := a.httpAddr()
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen %s for ACME challenges and the redirect to https: %w (set --http-addr, or off)", addr, err)
	}
	a.http80 = &http.Server{
		Handler:           securityHeaders(a.certs.HTTPHandler()),
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
			a.log.Error().Err(err).Msg("http redirect server stopped")
		}
	}(a.http80)
	return nil
}

// Addr is the address Listen bound, e.g. 127.0.0.1:8080.
func (a *App) Addr() string {
	if a.ln == nil {
		return ""
	}
	return a.ln.Addr().String()
}

// Handler routes every HTTP endpoint of ownsona. The authorization server must be open (Listen
// or a configured public URL): there is no unauthenticated MCP over HTTP.
//
// Every request passes, outermost first: the request log, the security headers, the Host check
// (DNS rebinding), the concurrency gate, the per-address rate limit of non-MCP endpoints; MCP
// requests then pass CORS, the Origin check, the audit log and the token check (with its
// per-client rate limit).
func (a *App) Handler() http.Handler {
	if a.auth == nil {
		panic("app: Handler before the authorization server is open")
	}
	mux := http.NewServeMux()
	guard := func(h http.Handler) http.Handler { return a.cors(a.checkOrigin(a.auditMCP(a.requireAuth(h)))) }
	mcp := guard(a.mcp)
	for _, p := range []string{"/mcp", "/api/mcp", "/mcp/http"} {
		mux.Handle(p, mcp)
	}
	mux.Handle("/mcp/sse", guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mcp.ServeLegacySSE(w, r, "/mcp/sse/message")
	})))
	mux.Handle("/mcp/sse/message", guard(http.HandlerFunc(a.mcp.ServeLegacyMessage)))
	a.auth.Routes(mux)
	mux.HandleFunc("/health", a.serveHealth)
	mux.HandleFunc("/.well-known/mcp/server-card.json", a.serveServerCard)
	mux.HandleFunc("/.well-known/mcp/catalog.json", a.serveCatalog)
	mux.HandleFunc("/ca.crt", a.serveCACert)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no such endpoint; MCP is served at /mcp"})
	})
	return a.logRequests(a.securityHeaders(a.checkHost(a.gate(a.limitIP(mux)))))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// securityHeaders sets the headers every response carries, and HSTS under TLS.
func (a *App) securityHeaders(next http.Handler) http.Handler {
	hsts := a.cfg.TLS != "off" || strings.HasPrefix(a.auth.Endpoints().Issuer, "https://")
	next = securityHeaders(next)
	if !hsts {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Strict-Transport-Security", "max-age=31536000")
		next.ServeHTTP(w, r)
	})
}

func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-API-Version", Version)
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether host (no port) names this machine.
func loopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHost defends against DNS rebinding: the Host must be the public URL's host or a loopback
// name, so a page on another name that resolves to this server cannot talk to it.
func (a *App) checkHost(next http.Handler) http.Handler {
	public := ""
	if u, err := url.Parse(a.auth.Endpoints().Issuer); err == nil {
		public = u.Hostname()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !loopbackHost(host) && !strings.EqualFold(strings.TrimSuffix(host, "."), public) {
			writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": "misdirected_request",
				"error_description": "this server answers only to its public name and to localhost, 127.0.0.1 and [::1]"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkOrigin refuses browser requests to MCP from pages of other origins: a present Origin must
// be the public origin, a loopback one or one of the CORS origins.
func (a *App) checkOrigin(next http.Handler) http.Handler {
	issuer := a.auth.Endpoints().Issuer
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, issuer) && !a.corsAllowed(o) {
			u, err := url.Parse(o)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !loopbackHost(u.Hostname()) {
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
func (a *App) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(sw, r)
		a.log.Debug().Str("request_id", id).Str("method", r.Method).Str("path", r.URL.Path).
			Int("status", sw.status).Dur("duration", time.Since(start)).Msg("http request")
	})
}
