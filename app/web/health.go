package web

// The unauthenticated documents: /health, the MCP server card and catalog, and the local CA's
// root certificate.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/app/certs"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/rpc"
)

// healthCache keeps the result of the database write probe for a minute: health checks come
// every few seconds, and a write each time would wear an SD card.
type healthCache struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// bucketHealth holds the one key the write probe rewrites.
const bucketHealth = "health"

// dbWritable commits a tiny write at most once a minute and reports the last result.
func (a *App) dbWritable() error {
	h := &a.health
	h.mu.Lock()
	defer h.mu.Unlock()
	now := a.now()
	if !h.at.IsZero() && now.Sub(h.at) < time.Minute && now.After(h.at) {
		return h.err
	}
	h.at = now
	h.err = a.db.Update(func(tx *kv.Tx) error {
		if tx.Bucket(bucketMemories) == nil {
			return errors.New("memories bucket missing")
		}
		b, err := tx.CreateBucketIfNotExists(bucketHealth)
		if err != nil {
			return err
		}
		return b.Put([]byte("probe"), []byte(now.UTC().Format(time.RFC3339)))
	})
	return h.err
}

// serveHealth answers {status, timestamp, uptime, version, checks}: 200 when healthy, 503 when
// the file cannot be written or the embedder fails. An index still being built is healthy:
// the exact index answers meanwhile.
func (a *App) serveHealth(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method_not_allowed"})
		return
	}
	now := a.now().UTC()
	checks := map[string]string{"database": "ok", "index": "ok", "embedder": "ok"}
	healthy := true
	if err := a.dbWritable(); err != nil {
		a.log.Error().Err(err).Msg("health check: database not writable")
		checks["database"], healthy = "failed", false
	}
	if a.svc.emb == nil {
		checks["embedder"] = "none"
	} else if _, pending, _, lastErr := a.svc.embedderStatus(); lastErr != "" {
		checks["embedder"], healthy = "failing", false
	} else if pending > 0 {
		checks["embedder"] = "re-embedding"
	}
	if a.indexBuilding() {
		checks["index"] = "building"
	}
	body := map[string]any{"status": "healthy", "timestamp": now,
		"uptime": float64(int(now.Sub(a.started).Seconds()*100)) / 100, "version": a.cfg.Version, "checks": checks}
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
func (a *App) serveServerCard(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	ep := a.auth.Endpoints()
	name := "ownsona"
	if u, err := url.Parse(ep.Issuer); err == nil {
		labels := strings.Split(u.Hostname(), ".")
		slices.Reverse(labels)
		name = strings.Join(labels, ".") + "/mcp"
	}
	card := map[string]any{
		"$schema":     serverCardSchema,
		"name":        name,
		"title":       "ownsona personal memory",
		"description": "A personal memory server: remember facts and recall them by meaning. Self-hosted; OAuth 2.1.",
		"version":     a.cfg.Version,
		"remotes": []map[string]any{
			{"type": "streamable-http", "url": ep.Resource, "supportedProtocolVersions": rpc.SupportedProtocolVersions},
			{"type": "sse", "url": strings.TrimSuffix(ep.Resource, "/mcp") + "/mcp/sse", "supportedProtocolVersions": []string{"2024-11-05"}},
		},
		"authentication": map[string]any{"required": true, "schemes": []string{"oauth2", "bearer"},
			"protectedResourceMetadata": strings.TrimSuffix(ep.Resource, "/mcp") + "/.well-known/oauth-protected-resource/mcp"},
	}
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeCacheable(w, card)
}

// serveCatalog lists the server card (the site-level catalog of the server-card extension).
func (a *App) serveCatalog(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	base := strings.TrimSuffix(a.auth.Endpoints().Resource, "/mcp")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	writeCacheable(w, map[string]any{"specVersion": "1.0", "entries": []map[string]string{{
		"identifier": base + "/mcp", "type": "application/mcp-server-card+json", "url": base + "/.well-known/mcp/server-card.json"}}})
}

// serveCACert serves the local CA's root certificate (--tls local), for devices to trust.
func (a *App) serveCACert(w http.ResponseWriter, r *http.Request) {
	if !getOnly(w, r) {
		return
	}
	if a.cfg.TLS != "local" {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not_found", "error_description": "this server does not use its own certificate authority (--tls local)"})
		return
	}
	pem, err := certs.RootPEM(a.db)
	if err != nil {
		a.log.Error().Err(err).Msg("read the local CA root")
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal_error"})
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.Header().Set("Content-Disposition", `attachment; filename="ownsona-ca.crt"`)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Write(pem)
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

// checkTools refuses an allowlist that names a tool the server does not have.
func (a *App) checkTools() error {
	for _, name := range a.cfg.Tools {
		if a.tool(name) == nil {
			var names []string
			for _, t := range a.mcp.Tools {
				names = append(names, t.Name)
			}
			return usageErr("tools: %q is not a tool of ownsona; the tools are %s", name, strings.Join(names, ", "))
		}
	}
	return nil
}

// certsInfo names the HTTPS mode for the startup log line.
func (a *App) certsInfo() string {
	if a.cfg.TLS == "off" {
		return "off"
	}
	return fmt.Sprintf("%s %s", a.cfg.TLS, strings.Join(a.cfg.Domains, ","))
}

// indexBuilding reports whether the HNSW graph is being built (the exact index answers
// meanwhile).
func (a *App) indexBuilding() bool {
	a.svc.mu.RLock()
	d := a.svc.dense
	a.svc.mu.RUnlock()
	if d == nil {
		return false
	}
	select {
	case <-d.Ready():
		return false
	default:
		return true
	}
}
