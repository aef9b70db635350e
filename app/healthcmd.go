package app

// `ownsona health`: the container's HEALTHCHECK, which has no curl in a scratch image.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ownsona/ownsona/app/ops"
)

func runHealth(ctx context.Context, env *ops.Env, args []string) error {
	var rawURL string
	var timeout time.Duration
	extra := func(fs *flag.FlagSet) {
		fs.StringVar(&rawURL, "url", "", "the /health to ask (default: serve's, from OWNSONA_ADDR and OWNSONA_TLS, on loopback)")
		fs.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	}
	cfg, done, err := configFor("health", env, args, extra)
	if done || err != nil {
		return err
	}
	if timeout <= 0 {
		return usageErr("health: --timeout: %s is not positive", timeout)
	}
	if rawURL == "" {
		if rawURL, err = healthURL(cfg); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return usageErr("health: --url: %v", err)
	}
	client := &http.Client{Transport: &http.Transport{
		Proxy: nil, // the server is local: never through HTTP_PROXY
		// The probe asks only whether the local process answers and sends nothing secret, so the
		// certificate, made for the public name (or by the local CA), is not checked here.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: healthServerName(cfg)},
	}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return fmt.Errorf("health: %s: %w", rawURL, err)
	}
	var h struct {
		Status  string            `json:"status"`
		Version string            `json:"version"`
		Uptime  float64           `json:"uptime"`
		Checks  map[string]string `json:"checks"`
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("health: %s answered %s, not ownsona's /health: %.200q", rawURL, resp.Status, body)
	}
	if resp.StatusCode != http.StatusOK || h.Status != "healthy" {
		return fmt.Errorf("health: %s answered %s: %s %v", rawURL, resp.Status, h.Status, h.Checks)
	}
	_, err = fmt.Fprintf(env.Stdout, "healthy: ownsona %s, up %s\n", h.Version, time.Duration(h.Uptime*float64(time.Second)).Round(time.Second))
	return err
}

// healthURL is serve's /health as seen from the same machine: its listen address, with the
// unspecified address (every interface) replaced by loopback, over HTTPS when --tls is on.
func healthURL(cfg Config) (string, error) {
	tlsDefaults(&cfg)
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return "", usageErr("health: addr: %q is not host:port (%v)", cfg.Addr, err)
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	scheme := "http"
	if cfg.TLS != "" && cfg.TLS != "off" {
		scheme = "https"
	}
	return scheme + "://" + net.JoinHostPort(host, port) + "/health", nil
}

// healthServerName is the name to ask a TLS listener for: the certificate's first domain, or
// localhost, which the local CA's certificate always covers.
func healthServerName(cfg Config) string {
	if len(cfg.Domains) > 0 {
		return strings.TrimSpace(cfg.Domains[0])
	}
	return "localhost"
}
