package web

// The unauthenticated documents: /health, the MCP server card and catalog, and the local CA's
// root certificate.

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/ownsona/ownsona/mcp"
)

// serveHealth answers {status, timestamp, uptime, version, checks}: 200 with the checks
// Config.Health reports when it says healthy, 503 and "unhealthy" when not.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed"})
		return
	}
	now := s.now().UTC()
	var checks map[string]string
	healthy := true
	if s.cfg.Health != nil {
		checks, healthy = s.cfg.Health()
	}
	if checks == nil {
		checks = map[string]string{} // {} rather than null
	}
	body := map[string]any{"status": "healthy", "timestamp": now,
		"uptime": float64(int(now.Sub(s.started).Seconds()*100)) / 100, "version": s.cfg.Version, "checks": checks}
	status := http.StatusOK
	if !healthy {
		body["status"], status = "unhealthy", http.StatusServiceUnavailable
	}
	writeJSON(w, status, body)
}

// serverCardSchema is the JSON schema of MCP server cards (SEP-2127).
const serverCardSchema = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// serveServerCard describes the server for discovery before connecting (SEP-2127): its name,
// version and endpoints. It lists no tools: tools/list, behind the token, is the truth.
func (s *Server) serveServerCard(w http.ResponseWriter, r *http.Request) {
	if preflight(w, r) || !getOnly(w, r) {
		return
	}
	ep := s.auth.Endpoints()
	card := map[string]any{
		"$schema":     serverCardSchema,
		"name":        serverCardName(ep.Issuer),
		"title":       "ownsona personal memory",
		"description": "A personal memory server: remember facts and recall them by meaning. Self-hosted; OAuth 2.1.",
		"version":     s.cfg.Version,
		"remotes": []map[string]any{
			{"type": "streamable-http", "url": ep.Resource, "supportedProtocolVersions": mcp.AllProtocolVersions()},
			{"type": "sse", "url": strings.TrimSuffix(ep.Resource, "/mcp") + "/mcp/sse", "supportedProtocolVersions": []string{"2024-11-05"}},
		},
		"authentication": map[string]any{"required": true, "schemes": []string{"oauth2", "bearer"},
			"protectedResourceMetadata": ep.ResourceMetadata},
	}
	if s.Compat().ONCE {
		s.onceCard(card)
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeCacheable(w, card)
}

// serverCardName is the card's name for the public origin issuer: the host's labels reversed,
// as reverse-DNS names go ("mem.example.com" → "com.example.mem/mcp"), but an IP address as it
// is ("192.0.2.7/mcp", "2001:db8::1/mcp"): its octets reversed name nothing.
func serverCardName(issuer string) string {
	u, err := url.Parse(issuer)
	if err != nil || u.Hostname() == "" {
		return "ownsona"
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return host + "/mcp"
	}
	labels := strings.Split(host, ".")
	slices.Reverse(labels)
	return strings.Join(labels, ".") + "/mcp"
}

// serveCatalog lists the server card (the site-level catalog of the server-card extension).
func (s *Server) serveCatalog(w http.ResponseWriter, r *http.Request) {
	if preflight(w, r) || !getOnly(w, r) {
		return
	}
	base := strings.TrimSuffix(s.auth.Endpoints().Resource, "/mcp")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeCacheable(w, map[string]any{"specVersion": "1.0", "entries": []map[string]string{{
		"identifier": base + "/mcp", "type": "application/mcp-server-card+json", "url": base + "/.well-known/mcp/server-card.json"}}})
}

// serveCACert serves the local CA's root certificate (--tls local), for devices to trust.
func (s *Server) serveCACert(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	if s.cfg.TLS != "local" || s.cfg.RootPEM == nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "this server does not use its own certificate authority (--tls local)"})
		return
	}
	pem, err := s.cfg.RootPEM()
	if err != nil {
		s.log.Error().Err(err).Msg("read the local CA root")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_error"})
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="ownsona-ca.crt"`)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(pem)
}

// preflight answers a CORS preflight for a public document that any origin may read (never
// with credentials), as the discovery documents do, and reports whether it did.
func preflight(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodOptions {
		return false
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
	return true
}

func getOnly(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed"})
	return false
}

// writeCacheable answers a public document that clients and proxies may keep five minutes.
func writeCacheable(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_ = json.NewEncoder(w).Encode(v)
}
