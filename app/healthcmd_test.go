package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRun_Health: `ownsona health` exits 0 (nil) when serve's /health, found from the same
// settings serve reads, says healthy, and 1 (an error) when it does not answer or is unhealthy.
func TestRun_Health(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Version = "v0.1.0"
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := a.Addr()
	getenv := func(k string) string {
		return map[string]string{"OWNSONA_ADDR": addr, "OWNSONA_DB": cfg.DB}[k]
	}

	t.Run("healthy", func(t *testing.T) {
		var out bytes.Buffer
		if err := Run(context.Background(), []string{"health"}, getenv, nil, &out, io.Discard); err != nil {
			t.Fatalf("health: %v", err)
		}
		if !strings.HasPrefix(out.String(), "healthy: ownsona v0.1.0, up ") {
			t.Errorf("health printed %q", out.String())
		}
	})
	t.Run("every interface", func(t *testing.T) {
		_, port, _ := net.SplitHostPort(addr)
		env := func(k string) string {
			return map[string]string{"OWNSONA_ADDR": "0.0.0.0:" + port, "OWNSONA_PUBLIC_URL": "https://mem.example.com"}[k]
		}
		if err := Run(context.Background(), []string{"health"}, env, nil, io.Discard, io.Discard); err != nil {
			t.Fatalf("health with OWNSONA_ADDR 0.0.0.0:%s: %v", port, err)
		}
	})
	t.Run("unhealthy", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			json.NewEncoder(w).Encode(map[string]any{"status": "unhealthy", "checks": map[string]string{"database": "error"}})
		}))
		defer srv.Close()
		err := Run(context.Background(), []string{"health", "--url", srv.URL + "/health"}, getenv, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "database:error") {
			t.Errorf("health of an unhealthy server: %v", err)
		}
	})
	t.Run("not ownsona", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") }))
		defer srv.Close()
		err := Run(context.Background(), []string{"health", "--url", srv.URL}, getenv, nil, io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "not ownsona's /health") {
			t.Errorf("health of another server: %v", err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := ln.Addr().String()
		ln.Close()
		env := func(k string) string { return map[string]string{"OWNSONA_ADDR": closed}[k] }
		if err := Run(context.Background(), []string{"health"}, env, nil, io.Discard, io.Discard); err == nil {
			t.Errorf("health with nothing at %s: no error", closed)
		}
	})
}

func TestHealthURL(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		want string
	}{
		{"default", func(c *Config) {}, "http://127.0.0.1:8080/health"},
		{"every interface", func(c *Config) { c.Addr = "0.0.0.0:8080" }, "http://127.0.0.1:8080/health"},
		{"empty host", func(c *Config) { c.Addr = ":9000" }, "http://127.0.0.1:9000/health"},
		{"ipv6 any", func(c *Config) { c.Addr = "[::]:8080" }, "http://[::1]:8080/health"},
		{"tls local", func(c *Config) { c.TLS = "local"; c.Addr = "127.0.0.1:8443" }, "https://127.0.0.1:8443/health"},
		{"tls acme", func(c *Config) { c.TLS = "acme"; c.Domains = []string{"mem.example.com"} }, "https://127.0.0.1:443/health"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := NewConfig()
			tc.cfg(&cfg)
			got, err := healthURL(cfg)
			if err != nil || got != tc.want {
				t.Errorf("healthURL = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
