package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// Listen binds the configured address synchronously (so "address in use" is an error here) and
// serves in a goroutine until Close. Without a configured public URL, the authorization server
// takes http:// and the bound loopback address as its origin.
func (a *App) Listen() error {
	ln, err := net.Listen("tcp", a.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if a.auth == nil {
		if err := a.openAuth("http://"+ln.Addr().String(), a.stderr); err != nil {
			ln.Close()
			return err
		}
	}
	a.ln = ln
	a.http = &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    8 << 10, // net/http adds 4 KiB of slack; larger headers get 431 (SECURITY.md RS-12)
	}
	go func(srv *http.Server) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error().Err(err).Msg("http server stopped")
		}
	}(a.http)
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
func (a *App) Handler() http.Handler {
	if a.auth == nil {
		panic("app: Handler before the authorization server is open")
	}
	mux := http.NewServeMux()
	mcp := a.checkOrigin(a.requireAuth(a.mcp))
	for _, p := range []string{"/mcp", "/api/mcp", "/mcp/http"} {
		mux.Handle(p, mcp)
	}
	a.auth.Routes(mux)
	mux.HandleFunc("/health", a.health)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "no such endpoint; MCP is served at /mcp"})
	})
	return a.logRequests(securityHeaders(a.checkHost(mux)))
}

// health reports liveness and whether the file answers.
func (a *App) health(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed"})
		return
	}
	now := a.now().UTC()
	err := a.db.View(func(tx *kv.Tx) error {
		if tx.Bucket(bucketMemories) == nil {
			return errors.New("memories bucket missing")
		}
		return nil
	})
	if err != nil {
		a.log.Error().Err(err).Msg("health check failed")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unhealthy", "timestamp": now, "checks": map[string]string{"database": "failed"}})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"status":    "healthy",
		"timestamp": now,
		"uptime":    float64(int(now.Sub(a.started).Seconds()*100)) / 100,
		"version":   a.cfg.Version,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
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
// be the public origin or a loopback one.
func (a *App) checkOrigin(next http.Handler) http.Handler {
	issuer := a.auth.Endpoints().Issuer
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !strings.EqualFold(o, issuer) {
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
