package app

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler_HostOriginHealth(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	h := a.Handler()
	do := func(method, target, host, origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		r.Host = host
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer "+patFor(t, a))
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, tc := range []struct {
		name, method, target, host, origin string
		status                             int
	}{
		{"loopback host", "POST", "/mcp", "127.0.0.1:8080", "", 200},
		{"localhost host", "POST", "/api/mcp", "localhost:8080", "", 200},
		{"ipv6 loopback", "POST", "/mcp/http", "[::1]:8080", "", 200},
		{"rebinding host", "POST", "/mcp", "rebind.attacker.example:8080", "", http.StatusMisdirectedRequest},
		{"foreign origin", "POST", "/mcp", "127.0.0.1:8080", "https://evil.example", http.StatusForbidden},
		{"loopback origin", "POST", "/mcp", "127.0.0.1:8080", "http://localhost:3000", 200},
		{"null origin", "POST", "/mcp", "127.0.0.1:8080", "null", http.StatusForbidden},
		{"GET /mcp without an event stream", "GET", "/mcp", "127.0.0.1", "", http.StatusNotAcceptable},
		{"unknown path", "GET", "/admin", "127.0.0.1", "", http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(tc.method, tc.target, tc.host, tc.origin)
			if w.Code != tc.status {
				t.Errorf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			for _, hdr := range []string{"X-Content-Type-Options", "X-Frame-Options", "Content-Security-Policy", "Referrer-Policy", "X-API-Version"} {
				if w.Header().Get(hdr) == "" {
					t.Errorf("missing %s", hdr)
				}
			}
		})
	}
	t.Run("health", func(t *testing.T) {
		w := do("GET", "/health", "127.0.0.1", "")
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 200 {
			t.Fatalf("health: %d %s", w.Code, w.Body)
		}
		if body["status"] != "healthy" || body["timestamp"] != "2026-11-22T09:30:00Z" || body["version"] == nil || body["uptime"] == nil {
			t.Errorf("health = %v", body)
		}
	})
}

// TestLogs_NoSecrets runs writes, searches and a failing embedder with logs captured at debug
// level: no memory text and no API key may appear in them.
func TestLogs_NoSecrets(t *testing.T) {
	emb := &conceptEmbedder{}
	emb.down.Store(true)
	srv := httptest.NewServer(emb)
	defer srv.Close()
	cfg := embedConfig(t, srv)
	cfg.LogLevel = "debug"
	var logs bytes.Buffer
	a, err := Open(cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	mustOK(t, a, "remember", map[string]any{"text": "my therapist appointment is on thursday"})
	mustOK(t, a, "recall", map[string]any{"query": "therapist"})
	callTool(t, a, "remember", map[string]any{"text": "key AKIA" + "IOSFODNN7EXAMPLE"})
	a.Close()
	out := logs.String()
	if !strings.Contains(out, "embedding failed") {
		t.Fatalf("the test did not exercise the embedder's failure path; logs:\n%s", out)
	}
	for _, secret := range []string{"therapist", "test-key", "AKIA", "IOSFODNN7EXAMPLE"} {
		if strings.Contains(out, secret) {
			t.Errorf("logs contain %q:\n%s", secret, out)
		}
	}
}
