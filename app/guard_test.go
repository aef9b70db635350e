package app

import (
	"github.com/ownsona/ownsona/app/memory"

	ownmcp "github.com/ownsona/ownsona/mcp"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/web"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth/policy"
)

// These tests pin what keeps the HTTP server standing (issue 5, SECURITY.md LA-05, LA-06,
// AS-21, AS-23, MT-01): rate limits per client and per address, the concurrency gate, the
// headers on every response, CORS on /mcp, the tool allowlist, /health, the server card, the
// audit log, resource subscriptions and the legacy SSE transport.

// reqOpt changes a request built by serveReq.
type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }

func withBearer(tok string) reqOpt { return withHeader("Authorization", "Bearer "+tok) }

// withRemote sets the peer address the request comes from ("ip:port").
func withRemote(addr string) reqOpt { return func(r *http.Request) { r.RemoteAddr = addr } }

func withHost(host string) reqOpt { return func(r *http.Request) { r.Host = host } }

// serveReq sends one request to h in-process. A POST to an MCP path gets the headers of a
// Streamable HTTP client (JSON, both Accept types, protocol 2025-11-25); a POST elsewhere is a
// form.
func serveReq(h http.Handler, method, target, body string, opts ...reqOpt) *httptest.ResponseRecorder {
	if !strings.Contains(target, "://") {
		target = "http://127.0.0.1" + target
	}
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if method == http.MethodPost {
		if r.URL.Path == "/mcp" || r.URL.Path == "/api/mcp" || strings.HasPrefix(r.URL.Path, "/mcp/") {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("MCP-Protocol-Version", "2025-11-25")
		} else {
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	for _, o := range opts {
		o(r)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// rateHeaders returns X-RateLimit-Limit, -Remaining and -Reset.
func rateHeaders(rec *httptest.ResponseRecorder) (limit, remaining, reset string) {
	h := rec.Header()
	return h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset")
}

// rateLimitedConfig is testConfig with 60 requests a minute (one a second) and a burst of 3.
func rateLimitedConfig(tb testing.TB, clock *fakeClock) Config {
	tb.Helper()
	cfg := testConfig(tb, clock)
	cfg.RateLimit, cfg.RateBurst = 60, 3
	return cfg
}

// wantRateLimitedMCP checks a 429 from the MCP endpoint: Retry-After in whole seconds (≥ 1)
// and a JSON-RPC error -32004 with the same retry_after and the refused request's id.
func wantRateLimitedMCP(tb testing.TB, rec *httptest.ResponseRecorder, wantRetry int, wantID string) {
	tb.Helper()
	if rec.Code != http.StatusTooManyRequests {
		tb.Fatalf("status %d, want 429: %s", rec.Code, rec.Body)
	}
	retry, err := strconv.Atoi(rec.Header().Get("Retry-After"))
	if err != nil || retry < 1 || (wantRetry > 0 && retry != wantRetry) {
		tb.Errorf("Retry-After = %q, want %d (whole seconds ≥ 1)", rec.Header().Get("Retry-After"), wantRetry)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				RetryAfter int `json:"retry_after"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		tb.Fatalf("429 body is not JSON: %s (%v)", rec.Body, err)
	}
	if env.JSONRPC != "2.0" || string(env.ID) != wantID || env.Error.Code != ownmcp.CodeRateLimited || env.Error.Data.RetryAfter != retry {
		tb.Errorf("429 body = %s, want a JSON-RPC error %d with id %s and data.retry_after %d", rec.Body, ownmcp.CodeRateLimited, wantID, retry)
	}
}

// TestRateLimit_PerToken covers LA-06's per-principal bucket: a burst, then 429 with
// Retry-After and JSON-RPC -32004; every response carries X-RateLimit-*; each token has its own
// bucket; the bucket refills with the clock.
func TestRateLimit_PerToken(t *testing.T) {
	clock := newFakeClock()
	a := MustOpen(t, rateLimitedConfig(t, clock))
	h := a.Handler()
	tokA, tokB := testPAT(t, a), testPAT(t, a)
	now := clock.Now().Unix()

	t.Run("burst then 429", func(t *testing.T) {
		for i := range 3 {
			rec := mcpRequest(h, "Bearer "+tokA, msgToolsList)
			if rec.Code != http.StatusOK {
				t.Fatalf("request %d: status %d: %s", i+1, rec.Code, rec.Body)
			}
			limit, remaining, reset := rateHeaders(rec)
			if want := []string{"60", strconv.Itoa(2 - i), strconv.FormatInt(now+int64(i)+1, 10)}; !slices.Equal([]string{limit, remaining, reset}, want) {
				t.Errorf("request %d: X-RateLimit-Limit, -Remaining, -Reset = %q, %q, %q; want %q", i+1, limit, remaining, reset, want)
			}
			if got := rec.Header().Get("Retry-After"); got != "" {
				t.Errorf("request %d: Retry-After %q on an allowed request", i+1, got)
			}
		}
		rec := mcpRequest(h, "Bearer "+tokA, msgToolsList)
		wantRateLimitedMCP(t, rec, 1, "1")
		limit, remaining, reset := rateHeaders(rec)
		if want := []string{"60", "0", strconv.FormatInt(now+3, 10)}; !slices.Equal([]string{limit, remaining, reset}, want) {
			t.Errorf("429: X-RateLimit-Limit, -Remaining, -Reset = %q, %q, %q; want %q", limit, remaining, reset, want)
		}
	})

	t.Run("another token has its own bucket", func(t *testing.T) {
		rec := mcpRequest(h, "Bearer "+tokB, msgToolsList)
		if rec.Code != http.StatusOK {
			t.Fatalf("token B while A is limited: status %d: %s", rec.Code, rec.Body)
		}
		if _, remaining, _ := rateHeaders(rec); remaining != "2" {
			t.Errorf("token B: X-RateLimit-Remaining = %q, want 2", remaining)
		}
	})

	t.Run("refill after the clock advances", func(t *testing.T) {
		wantRateLimitedMCP(t, mcpRequest(h, "Bearer "+tokA, msgToolsList), 1, "1")
		clock.Advance(time.Second) // the Retry-After
		rec := mcpRequest(h, "Bearer "+tokA, msgToolsList)
		if rec.Code != http.StatusOK {
			t.Fatalf("after Retry-After: status %d: %s", rec.Code, rec.Body)
		}
		if _, remaining, _ := rateHeaders(rec); remaining != "0" {
			t.Errorf("after one second: X-RateLimit-Remaining = %q, want 0", remaining)
		}
		wantRateLimitedMCP(t, mcpRequest(h, "Bearer "+tokA, msgToolsList), 1, "1")
		clock.Advance(3 * time.Second) // a whole burst
		rec = mcpRequest(h, "Bearer "+tokA, msgToolsList)
		if _, remaining, _ := rateHeaders(rec); rec.Code != http.StatusOK || remaining != "2" {
			t.Errorf("after a full refill: status %d, X-RateLimit-Remaining %q; want 200 and 2", rec.Code, remaining)
		}
	})

	t.Run("tool calls count too", func(t *testing.T) {
		clock.Advance(time.Minute)
		remember := func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"remember","arguments":{"text":"rate limited memory %d"}}}`, i, i)
		}
		for i := range 3 {
			if rec := mcpRequest(h, "Bearer "+tokB, remember(i)); rec.Code != http.StatusOK {
				t.Fatalf("remember %d: status %d: %s", i, rec.Code, rec.Body)
			}
		}
		wantRateLimitedMCP(t, mcpRequest(h, "Bearer "+tokB, remember(3)), 1, "3")
		clock.Advance(time.Minute)
		if got := mustOK(t, a, "count_memories", nil)["count"]; got != 3.0 {
			t.Errorf("count = %v, want 3: the refused remember must not be stored", got)
		}
	})
}

// TestRateLimit_PerAddress covers LA-06's per-address limits: unauthenticated MCP requests
// (token guessing) and the OAuth endpoints are limited by the client's address, and
// X-Forwarded-For counts only from OWNSONA_TRUSTED_PROXIES.
func TestRateLimit_PerAddress(t *testing.T) {
	clock := newFakeClock()
	cfg := rateLimitedConfig(t, clock)
	cfg.TrustedProxies = []string{"10.0.0.0/8"}
	a := MustOpen(t, cfg)
	h := a.Handler()
	pat := testPAT(t, a)

	t.Run("unauthenticated /mcp", func(t *testing.T) {
		from := withRemote("198.51.100.7:40000")
		for i := range 3 {
			rec := serveReq(h, "POST", "/mcp", msgToolsList, from)
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("request %d: status %d, want 401: %s", i+1, rec.Code, rec.Body)
			}
			if limit, remaining, _ := rateHeaders(rec); limit != "60" || remaining != strconv.Itoa(2-i) {
				t.Errorf("request %d: X-RateLimit-Limit %q, -Remaining %q; want 60, %d", i+1, limit, remaining, 2-i)
			}
		}
		// Refused before its body is read (SECURITY.md LA-11): the id is not known.
		wantRateLimitedMCP(t, serveReq(h, "POST", "/mcp", msgToolsList, from, withBearer("osk_"+strings.Repeat("A", 43))), 1, "null")
		// A valid token from the same address is limited by its own bucket, not the address's.
		if rec := serveReq(h, "POST", "/mcp", msgToolsList, from, withBearer(pat)); rec.Code != http.StatusOK {
			t.Errorf("a valid token from the limited address: status %d: %s", rec.Code, rec.Body)
		}
		// Another address is not affected.
		if rec := serveReq(h, "POST", "/mcp", msgToolsList, withRemote("198.51.100.70:40000")); rec.Code != http.StatusUnauthorized {
			t.Errorf("another address: status %d, want 401", rec.Code)
		}
	})

	t.Run("OAuth endpoints", func(t *testing.T) {
		from := withRemote("198.51.100.8:40000")
		form := url.Values{"grant_type": {"authorization_code"}, "code": {"osc_nothing"}, "client_id": {"nobody"}}.Encode()
		for i := range 3 {
			rec := serveReq(h, "POST", "/oauth/token", form, from)
			if rec.Code == http.StatusTooManyRequests {
				t.Fatalf("request %d: 429 before the burst was spent", i+1)
			}
			if limit, remaining, _ := rateHeaders(rec); limit != "60" || remaining != strconv.Itoa(2-i) {
				t.Errorf("request %d: X-RateLimit-Limit %q, -Remaining %q; want 60, %d", i+1, limit, remaining, 2-i)
			}
		}
		for _, path := range []string{"/oauth/token", "/oauth/register", "/oauth/authorize"} {
			method, body := "POST", form
			if path == "/oauth/authorize" {
				method, body = "GET", ""
			}
			rec := serveReq(h, method, path, body, from)
			if rec.Code != http.StatusTooManyRequests {
				t.Errorf("%s %s after the burst: status %d, want 429: %s", method, path, rec.Code, rec.Body)
				continue
			}
			if retry, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || retry < 1 {
				t.Errorf("%s: Retry-After = %q, want whole seconds ≥ 1", path, rec.Header().Get("Retry-After"))
			}
			var answer struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil || answer.Error != "rate_limited" {
				t.Errorf("%s: 429 body = %s, want error rate_limited", path, rec.Body)
			}
		}
		clock.Advance(time.Second)
		if rec := serveReq(h, "POST", "/oauth/token", form, from); rec.Code == http.StatusTooManyRequests {
			t.Errorf("after Retry-After: still 429")
		}
	})

	t.Run("X-Forwarded-For from a trusted proxy", func(t *testing.T) {
		proxy := withRemote("10.1.2.3:5555")
		for range 3 {
			serveReq(h, "POST", "/mcp", msgToolsList, proxy, withHeader("X-Forwarded-For", "203.0.113.5"))
		}
		wantRateLimitedMCP(t, serveReq(h, "POST", "/mcp", msgToolsList, proxy, withHeader("X-Forwarded-For", "203.0.113.5")), 1, "null")
		// Another client behind the same proxy has its own bucket; the proxy's own hops are skipped.
		for _, xff := range []string{"203.0.113.6", "203.0.113.6, 10.9.9.9", "198.18.0.1, 203.0.113.6"} {
			if rec := serveReq(h, "POST", "/mcp", msgToolsList, proxy, withHeader("X-Forwarded-For", xff)); rec.Code != http.StatusUnauthorized {
				t.Errorf("X-Forwarded-For %q: status %d, want 401 (own bucket)", xff, rec.Code)
			}
		}
		// 203.0.113.6 has now made three requests (the last hop that is not a proxy counts).
		wantRateLimitedMCP(t, serveReq(h, "POST", "/mcp", msgToolsList, proxy, withHeader("X-Forwarded-For", "203.0.113.6")), 1, "null")
	})

	t.Run("X-Forwarded-For from an untrusted peer is ignored", func(t *testing.T) {
		peer := withRemote("198.51.100.9:40000")
		for i := range 3 {
			xff := withHeader("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", 100+i))
			if rec := serveReq(h, "POST", "/oauth/token", "grant_type=x", peer, xff); rec.Code == http.StatusTooManyRequests {
				t.Fatalf("request %d: 429 before the burst was spent", i+1)
			}
		}
		rec := serveReq(h, "POST", "/oauth/token", "grant_type=x", peer, withHeader("X-Forwarded-For", "203.0.113.200"))
		if rec.Code != http.StatusTooManyRequests {
			t.Errorf("a spoofed X-Forwarded-For escaped the peer's bucket: status %d", rec.Code)
		}
	})
}

// TestRateLimit_Unlimited: discovery documents, /health and CORS preflights stay cheap and
// answer even to an address whose bucket is empty, without rate-limit headers.
func TestRateLimit_Unlimited(t *testing.T) {
	a := MustOpen(t, rateLimitedConfig(t, newFakeClock()))
	h := a.Handler()
	from := withRemote("198.51.100.20:40000")
	for range 4 {
		serveReq(h, "POST", "/oauth/token", "grant_type=x", from)
	}
	if rec := serveReq(h, "POST", "/oauth/token", "grant_type=x", from); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the address's bucket is not empty: status %d", rec.Code)
	}
	for _, path := range []string{
		"/health",
		"/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-authorization-server",
		"/.well-known/openid-configuration",
		"/.well-known/mcp/server-card.json",
		"/.well-known/mcp/catalog.json",
	} {
		t.Run(path, func(t *testing.T) {
			for i := range 10 {
				rec := serveReq(h, "GET", path, "", from)
				if rec.Code != http.StatusOK {
					t.Fatalf("request %d: status %d: %s", i+1, rec.Code, rec.Body)
				}
				if limit, _, _ := rateHeaders(rec); limit != "" {
					t.Fatalf("request %d: X-RateLimit-Limit %q on an unlimited document", i+1, limit)
				}
			}
		})
	}
	t.Run("preflight", func(t *testing.T) {
		for i := range 10 {
			rec := serveReq(h, "OPTIONS", "/mcp", "", from, withHeader("Origin", "https://claude.ai"),
				withHeader("Access-Control-Request-Method", "POST"))
			if rec.Code != http.StatusNoContent {
				t.Fatalf("preflight %d: status %d", i+1, rec.Code)
			}
		}
	})
}

// TestRateLimit_Off: RateLimit 0 never answers 429 and sets no rate-limit headers.
func TestRateLimit_Off(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	if pm, _ := a.limiter.Rate(); pm != 0 {
		t.Fatalf("RateLimit 0 made a limiter of %d/min", pm)
	}
	h := a.Handler()
	pat := testPAT(t, a)
	from := withRemote("198.51.100.30:40000")
	for i := range 50 {
		for _, rec := range []*httptest.ResponseRecorder{
			serveReq(h, "POST", "/mcp", msgToolsList, from, withBearer(pat)),
			serveReq(h, "POST", "/mcp", msgToolsList, from),
			serveReq(h, "POST", "/oauth/token", "grant_type=x", from),
		} {
			if rec.Code == http.StatusTooManyRequests {
				t.Fatalf("request %d: 429 with rate limiting off", i+1)
			}
			for _, hdr := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"} {
				if v := rec.Header().Get(hdr); v != "" {
					t.Fatalf("request %d: %s %q with rate limiting off", i+1, hdr, v)
				}
			}
		}
	}
}

// TestHandler_ConcurrencyGate covers LA-05: beyond MaxConcurrent requests in flight the next
// one gets 503 with Retry-After at once; a finished request frees its slot; event streams are
// not counted.
func TestHandler_ConcurrencyGate(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.MaxConcurrent = 1
	a := MustOpen(t, cfg)
	h := a.Handler()
	pat := patFor(t, a)

	t.Run("503 when full", func(t *testing.T) {
		// The first request holds the only slot while the server reads its body.
		pr, pw := io.Pipe()
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", pr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+pat)
		first := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { defer close(done); h.ServeHTTP(first, req) }()
		if _, err := io.WriteString(pw, `{"jsonrpc":"2.0",`); err != nil { // returns once the server reads
			t.Fatal(err)
		}
		rec := mcpRequest(h, "Bearer "+pat, msgToolsList)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("second request: status %d, Retry-After %q; want 503 and 1: %s", rec.Code, rec.Header().Get("Retry-After"), rec.Body)
		}
		io.WriteString(pw, `"id":1,"method":"ping"}`)
		pw.Close()
		select {
		case <-done:
		case <-time.After(2 * time.Minute):
			t.Fatal("the first request did not finish")
		}
		if first.Code != http.StatusOK {
			t.Errorf("first request: status %d: %s", first.Code, first.Body)
		}
		if rec := mcpRequest(h, "Bearer "+pat, msgToolsList); rec.Code != http.StatusOK {
			t.Errorf("after the first finished: status %d: %s", rec.Code, rec.Body)
		}
	})

	t.Run("event streams aside", func(t *testing.T) {
		srv := httptest.NewServer(h)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/mcp/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+pat)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if resp.StatusCode != http.StatusOK || err != nil || !strings.HasPrefix(line, "event: endpoint") {
			t.Fatalf("GET /mcp/sse: status %d, first line %q, %v", resp.StatusCode, line, err)
		}
		hr, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/mcp", strings.NewReader(msgToolsList))
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		hr.Header.Set("Authorization", "Bearer "+pat)
		r2, err := srv.Client().Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if r2.StatusCode != http.StatusOK {
			t.Errorf("POST /mcp with an event stream open and MaxConcurrent 1: status %d", r2.StatusCode)
		}
		cancel()
	})
}

// TestHandler_SecurityHeaders covers AS-21/AS-22 and issue 5's header list: every response,
// whatever its status, carries X-API-Version, nosniff, DENY, a CSP and a Referrer-Policy;
// Strict-Transport-Security only when the server is reached over HTTPS.
func TestHandler_SecurityHeaders(t *testing.T) {
	for _, srv := range []struct {
		name, publicURL, host string
		hsts                  bool
	}{
		{"plain HTTP", "http://127.0.0.1", "127.0.0.1", false},
		{"behind an HTTPS proxy", "https://mem.example.com", "mem.example.com", true},
	} {
		t.Run(srv.name, func(t *testing.T) {
			cfg := testConfig(t, newFakeClock())
			cfg.PublicURL = srv.publicURL
			a := MustOpen(t, cfg)
			h := a.Handler()
			pat := testPAT(t, a)
			base := "http://" + srv.host
			for _, tc := range []struct {
				name, method, path string
				opts               []reqOpt
				status             int
			}{
				{"health", "GET", "/health", nil, 200},
				{"health HEAD", "HEAD", "/health", nil, 200},
				{"health POST", "POST", "/health", nil, 405},
				{"protected resource metadata", "GET", "/.well-known/oauth-protected-resource/mcp", nil, 200},
				{"authorization server metadata", "GET", "/.well-known/oauth-authorization-server", nil, 200},
				{"server card", "GET", "/.well-known/mcp/server-card.json", nil, 200},
				{"catalog", "GET", "/.well-known/mcp/catalog.json", nil, 200},
				{"jwks", "GET", "/oauth/jwks.json", nil, 200},
				{"not found", "GET", "/no/such/path", nil, 404},
				{"ca.crt without --tls local", "GET", "/ca.crt", nil, 404},
				{"mcp without a token", "POST", "/mcp", nil, 401},
				{"mcp with a token", "POST", "/mcp", []reqOpt{withBearer(pat)}, 200},
				{"mcp from a foreign origin", "POST", "/mcp", []reqOpt{withBearer(pat), withHeader("Origin", "https://evil.example")}, 403},
				{"preflight", "OPTIONS", "/mcp", []reqOpt{withHeader("Origin", "https://claude.ai"), withHeader("Access-Control-Request-Method", "POST")}, 204},
				{"token endpoint error", "POST", "/oauth/token", nil, 400},
				{"rebinding host", "GET", "/health", []reqOpt{withHost("rebind.attacker.example")}, 421},
			} {
				t.Run(tc.name, func(t *testing.T) {
					body := ""
					if tc.path == "/mcp" {
						body = msgToolsList
					}
					rec := serveReq(h, tc.method, base+tc.path, body, tc.opts...)
					if rec.Code != tc.status {
						t.Errorf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
					}
					want := map[string]string{
						"X-API-Version":          web.APIVersion, // the API's semantic version; the build's is in /health
						"X-Content-Type-Options": "nosniff",
						"X-Frame-Options":        "DENY",
						"Referrer-Policy":        "no-referrer",
					}
					for k, v := range want {
						if got := rec.Header().Get(k); got != v {
							t.Errorf("%s = %q, want %q", k, got, v)
						}
					}
					if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
						t.Errorf("Content-Security-Policy = %q, want one with frame-ancestors 'none'", csp)
					}
					hsts := rec.Header().Get("Strict-Transport-Security")
					if srv.hsts && !strings.HasPrefix(hsts, "max-age=") {
						t.Errorf("Strict-Transport-Security = %q, want max-age=… under HTTPS", hsts)
					}
					if !srv.hsts && hsts != "" {
						t.Errorf("Strict-Transport-Security = %q over plain HTTP", hsts)
					}
				})
			}
		})
	}
}

// TestCORS_MCP covers issue 5's CORS allowlist and MT-01: a preflight from an allowed origin is
// answered with the headers an MCP client sends; another origin gets 403 and no
// Access-Control-Allow-Origin; actual requests from an allowed origin can read the response.
func TestCORS_MCP(t *testing.T) {
	preflight := func(h http.Handler, origin string) *httptest.ResponseRecorder {
		return serveReq(h, "OPTIONS", "/mcp", "", withHeader("Origin", origin),
			withHeader("Access-Control-Request-Method", "POST"),
			withHeader("Access-Control-Request-Headers", "authorization, content-type, mcp-session-id, mcp-protocol-version"))
	}
	wantAllowed := func(t *testing.T, rec *httptest.ResponseRecorder, origin string) {
		t.Helper()
		if rec.Code != http.StatusNoContent {
			t.Fatalf("preflight from %s: status %d, want 204: %s", origin, rec.Code, rec.Body)
		}
		h := rec.Header()
		if got := h.Get("Access-Control-Allow-Origin"); got != origin {
			t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, origin)
		}
		if got := h.Get("Access-Control-Allow-Credentials"); got != "" {
			t.Errorf("Access-Control-Allow-Credentials = %q: bearer tokens need no credentials mode", got)
		}
		allowHeaders := strings.ToLower(h.Get("Access-Control-Allow-Headers"))
		for _, want := range []string{"authorization", "content-type", "mcp-session-id", "mcp-protocol-version"} {
			if !slices.Contains(strings.Split(strings.ReplaceAll(allowHeaders, " ", ""), ","), want) {
				t.Errorf("Access-Control-Allow-Headers = %q, lacks %s", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		for _, want := range []string{"POST", "GET", "DELETE"} {
			if !strings.Contains(h.Get("Access-Control-Allow-Methods"), want) {
				t.Errorf("Access-Control-Allow-Methods = %q, lacks %s", h.Get("Access-Control-Allow-Methods"), want)
			}
		}
		if !slices.Contains(h.Values("Vary"), "Origin") {
			t.Errorf("Vary = %q, want Origin (the answer depends on it)", h.Values("Vary"))
		}
	}
	wantRefusedOrigin := func(t *testing.T, rec *httptest.ResponseRecorder) {
		t.Helper()
		if rec.Code != http.StatusForbidden {
			t.Errorf("status %d, want 403: %s", rec.Code, rec.Body)
		}
		for _, k := range []string{"Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods"} {
			if v := rec.Header().Get(k); v != "" {
				t.Errorf("%s = %q on a refused origin", k, v)
			}
		}
	}

	t.Run("default is claude.ai only", func(t *testing.T) {
		if got := NewConfig().CORSOrigins; !slices.Equal(got, []string{"https://claude.ai"}) {
			t.Errorf("NewConfig().CORSOrigins = %q, want [https://claude.ai]", got)
		}
	})

	a := MustOpen(t, testConfig(t, newFakeClock()))
	h := a.Handler()
	pat := testPAT(t, a)

	t.Run("preflight from claude.ai", func(t *testing.T) {
		wantAllowed(t, preflight(h, "https://claude.ai"), "https://claude.ai")
	})
	for _, origin := range []string{"https://evil.example", "https://claude.ai.evil.example", "http://claude.ai", "null"} {
		t.Run("preflight from "+origin, func(t *testing.T) {
			wantRefusedOrigin(t, preflight(h, origin))
		})
	}
	t.Run("POST from claude.ai", func(t *testing.T) {
		rec := serveReq(h, "POST", "/mcp", msgToolsList, withBearer(pat), withHeader("Origin", "https://claude.ai"))
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		if got := rec.Header().Get("Access-Control-Allow-Origin"); got != "https://claude.ai" {
			t.Errorf("Access-Control-Allow-Origin = %q", got)
		}
		expose := rec.Header().Get("Access-Control-Expose-Headers")
		for _, want := range []string{"Mcp-Session-Id", "WWW-Authenticate"} {
			if !strings.Contains(expose, want) {
				t.Errorf("Access-Control-Expose-Headers = %q, lacks %s", expose, want)
			}
		}
		if names := listedTools(t, rec); len(names) == 0 {
			t.Error("no tools listed")
		}
	})
	t.Run("401 from claude.ai is readable", func(t *testing.T) {
		rec := serveReq(h, "POST", "/mcp", msgToolsList, withHeader("Origin", "https://claude.ai"))
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("Access-Control-Allow-Origin") != "https://claude.ai" {
			t.Errorf("status %d, Access-Control-Allow-Origin %q; want 401 readable by the page (its WWW-Authenticate starts discovery)",
				rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
	})
	t.Run("POST from another origin", func(t *testing.T) {
		wantRefusedOrigin(t, serveReq(h, "POST", "/mcp", msgRemember, withBearer(pat), withHeader("Origin", "https://evil.example")))
		if got := mustOK(t, a, "count_memories", nil)["count"]; got != 0.0 {
			t.Errorf("count = %v after a refused cross-origin write, want 0", got)
		}
	})
	t.Run("discovery documents are readable cross-origin", func(t *testing.T) {
		for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/mcp/server-card.json"} {
			rec := serveReq(h, "GET", path, "", withHeader("Origin", "https://claude.ai"))
			if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") == "" {
				t.Errorf("%s: status %d, Access-Control-Allow-Origin %q", path, rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
			}
		}
	})

	t.Run("configured origins", func(t *testing.T) {
		c, _, err := loadConfig("serve", nil, func(k string) string {
			return map[string]string{"OWNSONA_CORS_ORIGINS": "https://claude.ai, https://app.example.com"}[k]
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.CORSOrigins, []string{"https://claude.ai", "https://app.example.com"}) {
			t.Fatalf("CORSOrigins = %q", c.CORSOrigins)
		}
		cfg := testConfig(t, newFakeClock())
		cfg.CORSOrigins = c.CORSOrigins
		b := MustOpen(t, cfg)
		hb := b.Handler()
		wantAllowed(t, preflight(hb, "https://app.example.com"), "https://app.example.com")
		wantAllowed(t, preflight(hb, "https://claude.ai"), "https://claude.ai")
		rec := serveReq(hb, "POST", "/mcp", msgToolsList, withBearer(testPAT(t, b)), withHeader("Origin", "https://app.example.com"))
		if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Errorf("POST from the configured origin: status %d, Access-Control-Allow-Origin %q", rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
		}
		wantRefusedOrigin(t, preflight(hb, "https://other.example.com"))
	})

	t.Run("malformed origin setting", func(t *testing.T) {
		for _, bad := range []string{"claude.ai", "https://claude.ai/", "ftp://claude.ai", "https://"} {
			_, _, err := loadConfig("serve", []string{"--cors-origins", bad}, func(string) string { return "" }, nil)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "cors-origins") {
				t.Errorf("--cors-origins %q: err = %v, want a usage error naming cors-origins", bad, err)
			}
		}
	})
}

// TestToolsAllowlist_HTTP covers OWNSONA_TOOLS over HTTP: hidden tools vanish from tools/list
// and calling one is refused with -32000 "tool not in allowlist"; listed tools work.
func TestToolsAllowlist_HTTP(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.Tools = []string{"recall", "remember"}
	a := MustOpen(t, cfg)
	h := a.Handler()
	pat := testPAT(t, a)
	if got := listedTools(t, mcpRequest(h, "Bearer "+pat, msgToolsList)); !slices.Equal(got, []string{"recall", "remember"}) {
		t.Errorf("tools/list = %v, want [recall remember]", got)
	}
	mustOK(t, a, "remember", map[string]any{"text": "allowlisted tools still work"})
	mustOK(t, a, "recall", map[string]any{"query": "allowlisted"})
	for _, name := range []string{"forget", "export_memories", "get_memory"} {
		t.Run(name, func(t *testing.T) {
			rec := mcpRequest(h, "Bearer "+pat, fmt.Sprintf(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":%q,"arguments":{"id":1}}}`, name))
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			_, rerr, id := rpcResponse(t, rec.Body.Bytes())
			if rerr == nil || rerr.Code != ownmcp.CodeServerError || rerr.Message != "tool not in allowlist" || string(id) != "9" {
				t.Errorf("body = %s, want id 9 and error %d \"tool not in allowlist\"", rec.Body, ownmcp.CodeServerError)
			}
		})
	}
	if got := mustOK(t, a, "recall", map[string]any{"query": "allowlisted"})["matches"].([]any); len(got) != 1 {
		t.Errorf("the refused forget changed something: recall = %v", got)
	}
}

// TestToolsAllowlist_ResourcesAndPrompts (issue 13, item 10): resources, prompts and
// completions show memories too, so the allowlist covers them: each is offered only where the
// tool whose data it shows is allowed. With OWNSONA_TOOLS=remember nothing is readable.
func TestToolsAllowlist_ResourcesAndPrompts(t *testing.T) {
	for _, tc := range []struct {
		name          string
		tools         []string
		resources     []string
		templates     int
		prompts       []string
		recentAllowed bool
		completes     bool
	}{
		{"write only", []string{"remember"}, nil, 0, nil, false, false},
		{"list and recall", []string{"remember", "list_memories", "recall"}, []string{"ownsona://memories/recent", "ui://ownsona/memories.html"}, 0,
			[]string{"recall-context", "summarize-memories"}, true, false},
		{"every tool", nil, []string{"ownsona://memories/recent", "ownsona://tags", "ownsona://stats", "ui://ownsona/memories.html"}, 1,
			[]string{"recall-context", "review-duplicates", "tidy-tags", "summarize-memories"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t, newFakeClock())
			cfg.Tools = tc.tools
			a := MustOpen(t, cfg)
			h := a.Handler()
			pat := testPAT(t, a)
			mustOK(t, a, "remember", map[string]any{"text": "My son Colby lives in Los Angeles", "tags": "family"})
			call := func(body string) (json.RawMessage, *rpcError) {
				t.Helper()
				rec := mcpRequest(h, "Bearer "+pat, body)
				result, rerr, _ := rpcResponse(t, rec.Body.Bytes())
				return result, rerr
			}
			var res struct {
				Resources []struct{ URI string }
			}
			r, _ := call(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`)
			json.Unmarshal(r, &res)
			var uris []string
			for _, x := range res.Resources {
				uris = append(uris, x.URI)
			}
			if !slices.Equal(uris, tc.resources) {
				t.Errorf("resources/list = %v, want %v", uris, tc.resources)
			}
			var tmpl struct{ ResourceTemplates []json.RawMessage }
			r, _ = call(`{"jsonrpc":"2.0","id":2,"method":"resources/templates/list"}`)
			json.Unmarshal(r, &tmpl)
			if len(tmpl.ResourceTemplates) != tc.templates {
				t.Errorf("resources/templates/list has %d templates, want %d", len(tmpl.ResourceTemplates), tc.templates)
			}
			r, rerr := call(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"ownsona://memories/recent"}}`)
			if got := rerr == nil && strings.Contains(string(r), "Colby"); got != tc.recentAllowed {
				t.Errorf("resources/read recent: %s %+v; readable %v, want %v", r, rerr, got, tc.recentAllowed)
			}
			if !tc.recentAllowed && (rerr == nil || rerr.Code != ownmcp.CodeServerError) {
				t.Errorf("resources/read recent refused with %+v, want %d", rerr, ownmcp.CodeServerError)
			}
			if _, rerr := call(`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"ownsona://memories/1"}}`); (rerr == nil) != (tc.templates == 1) {
				t.Errorf("resources/read of a memory: error %+v with get_memory allowed %v", rerr, tc.templates == 1)
			}
			var pl struct{ Prompts []struct{ Name string } }
			r, _ = call(`{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`)
			json.Unmarshal(r, &pl)
			var names []string
			for _, p := range pl.Prompts {
				names = append(names, p.Name)
			}
			if !slices.Equal(names, tc.prompts) {
				t.Errorf("prompts/list = %v, want %v", names, tc.prompts)
			}
			r, rerr = call(`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"summarize-memories","arguments":{"tag":"family"}}}`)
			if got := rerr == nil && strings.Contains(string(r), "Colby"); got != slices.Contains(tc.prompts, "summarize-memories") {
				t.Errorf("prompts/get summarize-memories: %s %+v", r, rerr)
			}
			r, _ = call(`{"jsonrpc":"2.0","id":7,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"summarize-memories"},"argument":{"name":"tag","value":"fa"}}}`)
			if got := strings.Contains(string(r), `"family"`); got != tc.completes {
				t.Errorf("completion/complete: %s; completes %v, want %v", r, got, tc.completes)
			}
		})
	}
}

// TestToolsAllowlist_UnknownName: a name that is not a tool fails at startup, naming it.
func TestToolsAllowlist_UnknownName(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.Tools = []string{"recall", "frobnicate"}
	a, err := Open(cfg, io.Discard)
	if err == nil {
		a.Close()
		t.Fatal("Open with an unknown tool in the allowlist succeeded")
	}
	var ue *UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `"frobnicate"`) || !strings.Contains(err.Error(), "tools") {
		t.Errorf("err = %v, want a usage error naming tools and \"frobnicate\"", err)
	}
	// Through the command line and the environment, too; the file stays usable.
	err = Run(context.Background(), []string{"stdio", "--db", cfg.DB}, func(k string) string {
		return map[string]string{"OWNSONA_TOOLS": "recall,frobnicate"}[k]
	}, strings.NewReader(""), io.Discard, io.Discard)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "frobnicate") {
		t.Errorf("ownsona stdio with OWNSONA_TOOLS=recall,frobnicate: err = %v", err)
	}
}

// stdioSession runs `ownsona stdio` through Run with env, sends the messages (one per line),
// and returns the responses by id once the input ends.
func stdioSession(t *testing.T, db string, env map[string]string, msgs ...string) map[string]json.RawMessage {
	t.Helper()
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := Run(ctx, []string{"stdio", "--db", db, "--log-level", "error"}, func(k string) string { return env[k] },
		strings.NewReader(strings.Join(msgs, "\n")+"\n"), &out, io.Discard)
	if err != nil {
		t.Fatalf("ownsona stdio: %v", err)
	}
	byID := map[string]json.RawMessage{}
	for line := range strings.Lines(out.String()) {
		var env struct {
			ID json.RawMessage `json:"id"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if len(env.ID) > 0 {
			byID[string(env.ID)] = json.RawMessage(line)
		}
	}
	return byID
}

// stdioInit is an initialize request from a client named allowlist-probe.
const stdioInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"allowlist-probe","version":"1.0"}}}`

// TestToolsAllowlist_Stdio: the allowlist holds over stdio too, set by OWNSONA_TOOLS.
func TestToolsAllowlist_Stdio(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ownsona.db")
	resp := stdioSession(t, db, map[string]string{"OWNSONA_TOOLS": "recall,remember"},
		stdioInit,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"forget","arguments":{"id":1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"remember","arguments":{"text":"said over stdio"}}}`,
	)
	var list struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(resp["2"], &list); err != nil {
		t.Fatalf("tools/list: %s", resp["2"])
	}
	var names []string
	for _, tool := range list.Result.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"recall", "remember"}) {
		t.Errorf("tools/list over stdio = %v, want [recall remember]", names)
	}
	_, rerr, _ := rpcResponse(t, resp["3"])
	if rerr == nil || rerr.Code != ownmcp.CodeServerError || rerr.Message != "tool not in allowlist" {
		t.Errorf("forget over stdio = %s, want error %d \"tool not in allowlist\"", resp["3"], ownmcp.CodeServerError)
	}
	if res, rerr, _ := rpcResponse(t, resp["4"]); rerr != nil || !strings.Contains(string(res), `"ok":true`) {
		t.Errorf("remember over stdio = %s", resp["4"])
	}
}

// healthBody is /health's answer.
type healthBody struct {
	Status    string            `json:"status"`
	Timestamp string            `json:"timestamp"`
	Uptime    *float64          `json:"uptime"`
	Version   string            `json:"version"`
	Checks    map[string]string `json:"checks"`
}

func getHealth(t *testing.T, h http.Handler) (int, healthBody, http.Header) {
	t.Helper()
	rec := serveReq(h, "GET", "/health", "")
	var body healthBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("/health: status %d, body %s is not JSON: %v", rec.Code, rec.Body, err)
	}
	return rec.Code, body, rec.Header()
}

// TestHealth_Checks: /health answers {status, timestamp, uptime, version, checks}; 503 and
// "unhealthy" when the embedder fails, 200 again once it recovers; GET and HEAD only.
func TestHealth_Checks(t *testing.T) {
	t.Run("healthy", func(t *testing.T) {
		clock := newFakeClock()
		cfg := testConfig(t, clock)
		cfg.Version = "1.2.3-test"
		a := MustOpen(t, cfg)
		h := a.Handler()
		clock.Advance(90 * time.Second)
		status, body, hdr := getHealth(t, h)
		if status != http.StatusOK || body.Status != "healthy" {
			t.Fatalf("status %d %+v, want 200 healthy", status, body)
		}
		if body.Timestamp != clock.Now().Format(time.RFC3339) || body.Uptime == nil || *body.Uptime != 90 || body.Version != "1.2.3-test" {
			t.Errorf("body = %+v, want timestamp %s, uptime 90, version 1.2.3-test", body, clock.Now().Format(time.RFC3339))
		}
		if body.Checks["database"] != "ok" || body.Checks["embedder"] != "ok" || (body.Checks["index"] != "ok" && body.Checks["index"] != "building") {
			t.Errorf("checks = %v", body.Checks)
		}
		if hdr.Get("Content-Type") != "application/json" || hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("Content-Type %q, Cache-Control %q", hdr.Get("Content-Type"), hdr.Get("Cache-Control"))
		}
		if rec := serveReq(h, "HEAD", "/health", ""); rec.Code != http.StatusOK {
			t.Errorf("HEAD: status %d", rec.Code)
		}
		for _, m := range []string{"POST", "PUT", "DELETE"} {
			rec := serveReq(h, m, "/health", "")
			if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
				t.Errorf("%s: status %d, Allow %q; want 405 and GET, HEAD", m, rec.Code, rec.Header().Get("Allow"))
			}
		}
	})

	t.Run("no embedder", func(t *testing.T) {
		cfg := testConfig(t, nil)
		cfg.Embedder = "none"
		status, body, _ := getHealth(t, MustOpen(t, cfg).Handler())
		if status != http.StatusOK || body.Checks["embedder"] != "none" {
			t.Errorf("status %d, checks %v; want 200 with embedder none", status, body.Checks)
		}
	})

	t.Run("failing embedder", func(t *testing.T) {
		emb := &conceptEmbedder{}
		emb.down.Store(true)
		srv := httptest.NewServer(emb)
		defer srv.Close()
		a := MustOpen(t, embedConfig(t, srv))
		h := a.Handler()
		mustOK(t, a, "remember", map[string]any{"text": "written while the embedder is down"})
		status, body, _ := getHealth(t, h)
		if status != http.StatusServiceUnavailable || body.Status != "unhealthy" || body.Checks["embedder"] != "failing" || body.Checks["database"] != "ok" {
			t.Errorf("status %d %+v, want 503 unhealthy with checks.embedder failing and database ok", status, body)
		}
		if body.Timestamp == "" || body.Uptime == nil || body.Version == "" {
			t.Errorf("unhealthy body lacks timestamp, uptime or version: %+v", body)
		}
		emb.down.Store(false)
		deadline := time.Now().Add(2 * time.Minute)
		for {
			status, body, _ = getHealth(t, h)
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still %d %+v 2 minutes after the embedder recovered", status, body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if body.Status != "healthy" || body.Checks["embedder"] != "ok" {
			t.Errorf("after recovery: %+v", body)
		}
	})
}

// TestDiscovery_ServerCard: the server card and catalog describe the configured public URL
// (never the Host header), are JSON and cacheable, and the catalog points at the card.
func TestDiscovery_ServerCard(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.PublicURL = "https://mem.example.com"
	cfg.Version = "1.2.3-test"
	a := MustOpen(t, cfg)
	h := a.Handler()
	get := func(t *testing.T, path, host string) map[string]any {
		t.Helper()
		rec := serveReq(h, "GET", "http://"+host+path, "", withHeader("X-Forwarded-Host", "evil.example"))
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", path, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
		if cc := rec.Header().Get("Cache-Control"); !strings.HasPrefix(cc, "public, max-age=") {
			t.Errorf("%s: Cache-Control %q, want public and a max-age", path, cc)
		}
		var v map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body)
		}
		return v
	}
	for _, host := range []string{"mem.example.com", "localhost:8080"} {
		t.Run("card via "+host, func(t *testing.T) {
			card := get(t, "/.well-known/mcp/server-card.json", host)
			if card["name"] != "com.example.mem/mcp" || card["version"] != "1.2.3-test" {
				t.Errorf("name %v, version %v; want com.example.mem/mcp and 1.2.3-test", card["name"], card["version"])
			}
			remotes, _ := card["remotes"].([]any)
			if len(remotes) == 0 {
				t.Fatalf("no remotes: %v", card)
			}
			first := remotes[0].(map[string]any)
			if first["url"] != "https://mem.example.com/mcp" || first["type"] != "streamable-http" {
				t.Errorf("remotes[0] = %v, want streamable-http at https://mem.example.com/mcp", first)
			}
			for _, r := range remotes {
				if u, _ := r.(map[string]any)["url"].(string); !strings.HasPrefix(u, "https://mem.example.com/") {
					t.Errorf("remote %v is not on the public URL", r)
				}
			}
			authn, _ := card["authentication"].(map[string]any)
			if authn["required"] != true || authn["protectedResourceMetadata"] != "https://mem.example.com/.well-known/oauth-protected-resource/mcp" {
				t.Errorf("authentication = %v", authn)
			}
			if strings.Contains(fmt.Sprint(card), "evil.example") || strings.Contains(fmt.Sprint(card), "localhost") {
				t.Errorf("the card reflects the request's host: %v", card)
			}
		})
	}
	t.Run("catalog", func(t *testing.T) {
		cat := get(t, "/.well-known/mcp/catalog.json", "mem.example.com")
		entries, _ := cat["entries"].([]any)
		if len(entries) != 1 {
			t.Fatalf("entries = %v", cat["entries"])
		}
		e := entries[0].(map[string]any)
		if e["url"] != "https://mem.example.com/.well-known/mcp/server-card.json" || e["identifier"] != "https://mem.example.com/mcp" {
			t.Errorf("entry = %v", e)
		}
		u, _ := url.Parse(e["url"].(string))
		if card := get(t, u.Path, "mem.example.com"); card["name"] != "com.example.mem/mcp" {
			t.Errorf("the catalog's url does not serve the card: %v", card)
		}
	})
	t.Run("GET only", func(t *testing.T) {
		for _, path := range []string{"/.well-known/mcp/server-card.json", "/.well-known/mcp/catalog.json"} {
			if rec := serveReq(h, "POST", "http://mem.example.com"+path, ""); rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("POST %s: status %d, want 405", path, rec.Code)
			}
		}
	})
}

// TestAudit_HTTP: every MCP request is in the audit log with its client, method, tool and
// outcome (ok, tool error, 401, 403, 429), and no argument content is, in the log or anywhere
// in the file.
func TestAudit_HTTP(t *testing.T) {
	clock := newFakeClock()
	cfg := rateLimitedConfig(t, clock)
	a := MustOpen(t, cfg)
	h := a.Handler()
	mkPAT := func(name string, scope ...string) string {
		t.Helper()
		tok, _, err := a.Auth().PATs().Create(name, scope, 0)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	writer := mkPAT("audit-writer", policy.ScopeRead, policy.ScopeWrite)
	reader := mkPAT("audit-reader", policy.ScopeRead)
	flood := mkPAT("audit-flood", policy.ScopeRead)
	batcher := mkPAT("audit-batch", policy.ScopeRead, policy.ScopeWrite)

	// Texts that must never reach the audit log. The first is stored as a memory; the others
	// are refused, so they must appear nowhere in the file.
	const stored = "the spare key is under the blue flowerpot by the garage"
	refusedSecret := "sk-proj-" + strings.Repeat("Zq7", 16)
	const deniedText = "a read token tried to store the violet umbrella"
	const limitedText = "a flooded request carried the orange lighthouse"

	call := func(tool, text string) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 5, "method": "tools/call",
			"params": map[string]any{"name": tool, "arguments": map[string]any{"text": text}}})
		return string(b)
	}
	steps := []struct {
		name, authz, body string
		status            int
	}{
		{"ok", writer, call("remember", stored), 200},
		{"tool error", writer, call("remember", refusedSecret), 200},
		{"list", writer, msgToolsList, 200},
		{"no token", "", msgToolsList, 401},
		{"insufficient scope", reader, call("remember", deniedText), 403},
		{"flood 1", flood, msgToolsList, 200},
		{"flood 2", flood, msgToolsList, 200},
		{"flood 3", flood, msgToolsList, 200},
		{"rate limited", flood, call("remember", limitedText), 429},
		{"batch with a failed item", batcher, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"remember_batch","arguments":{"items":[{"text":"the batch stored the copper kettle"},{"text":""}]}}}`, 200},
	}
	for _, s := range steps {
		var opts []reqOpt
		if s.authz != "" {
			opts = append(opts, withBearer(s.authz))
		}
		if rec := serveReq(h, "POST", "/mcp", s.body, append(opts, withRemote("198.51.100.40:1234"))...); rec.Code != s.status {
			t.Fatalf("%s: status %d, want %d: %s", s.name, rec.Code, s.status, rec.Body)
		}
	}

	entries, corrupt, err := a.audit.Query(audit.Filter{OldestFirst: true})
	if err != nil || corrupt != 0 {
		t.Fatalf("Query: %v (%d corrupt)", err, corrupt)
	}
	type row struct {
		client, method, tool string
		outcome              audit.Outcome
		status               int
	}
	var got []row
	for _, e := range entries {
		got = append(got, row{e.Client, e.Method, e.Tool, e.Outcome, e.Status})
		if e.Transport != audit.TransportHTTP || e.RemoteIP.String() != "198.51.100.40" || !e.Time.Equal(clock.Now()) {
			t.Errorf("entry %+v: want transport http, remote 198.51.100.40, time %v", e, clock.Now())
		}
	}
	want := []row{
		{"pat:audit-writer", "tools/call", "remember", audit.OutcomeOK, 200},
		{"pat:audit-writer", "tools/call", "remember", audit.OutcomeToolError, 200},
		{"pat:audit-writer", "tools/list", "", audit.OutcomeOK, 200},
		{"", "http:POST", "", audit.OutcomeUnauthorized, 401},
		{"pat:audit-reader", "tools/call", "remember", audit.OutcomeDenied, 403},
		{"pat:audit-flood", "tools/list", "", audit.OutcomeOK, 200},
		{"pat:audit-flood", "tools/list", "", audit.OutcomeOK, 200},
		{"pat:audit-flood", "tools/list", "", audit.OutcomeOK, 200},
		{"pat:audit-flood", "http:POST", "", audit.OutcomeRateLimited, 429},
		// A result (isError false) whose payload reports an item's error is an ok call.
		{"pat:audit-batch", "tools/call", "remember_batch", audit.OutcomeOK, 200},
	}
	// Refusals (401, 429) are aggregated per address and minute apart from the rest, and a
	// query merges them in after the served requests of the same time: compare each in order.
	split := func(rows []row) (served, refused []row) {
		for _, r := range rows {
			if r.status == 401 || r.status == 429 {
				refused = append(refused, r)
			} else {
				served = append(served, r)
			}
		}
		// Aggregates of one minute come in a fixed order of their own (address, outcome).
		slices.SortFunc(refused, func(a, b row) int { return strings.Compare(string(a.outcome), string(b.outcome)) })
		return served, refused
	}
	gotServed, gotRefused := split(got)
	wantServed, wantRefused := split(want)
	for _, c := range []struct {
		kind      string
		got, want []row
	}{{"served", gotServed, wantServed}, {"refused", gotRefused, wantRefused}} {
		if len(c.got) != len(c.want) {
			t.Fatalf("%d %s entries, want %d:\n%+v", len(c.got), c.kind, len(c.want), got)
		}
		for i := range c.want {
			g, w := c.got[i], c.want[i]
			if g.client != w.client || g.tool != w.tool || g.outcome != w.outcome || g.status != w.status ||
				(w.method != "http:POST" && g.method != w.method) {
				t.Errorf("%s entry %d = %+v, want %+v", c.kind, i, g, w)
			}
		}
	}
	a.Close()

	t.Run("ownsona audit", func(t *testing.T) {
		var out, errOut bytes.Buffer
		since := clock.Now().Add(-time.Hour).Format(time.RFC3339)
		if err := Run(context.Background(), []string{"audit", "--db", cfg.DB, "--json", "--since", since, "--client", "pat:audit-writer"},
			func(string) string { return "" }, nil, &out, &errOut); err != nil {
			t.Fatalf("ownsona audit: %v\n%s", err, errOut.String())
		}
		var outcomes []string
		for line := range strings.Lines(out.String()) {
			var e struct{ Client, Method, Tool, Outcome string }
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("not JSON: %q", line)
			}
			if e.Client != "pat:audit-writer" {
				t.Errorf("--client pat:audit-writer printed %q", line)
			}
			outcomes = append(outcomes, e.Method+" "+e.Tool+" "+e.Outcome)
		}
		if want := []string{"tools/list  ok", "tools/call remember tool_error", "tools/call remember ok"}; !slices.Equal(outcomes, want) {
			t.Errorf("ownsona audit (newest first) = %q, want %q", outcomes, want)
		}
	})

	t.Run("no content", func(t *testing.T) {
		db, err := kv.Open(cfg.DB, kv.Options{Migrations: memory.Migrations})
		if err != nil {
			t.Fatal(err)
		}
		var values [][]byte
		err = db.View(func(tx *kv.Tx) error {
			for _, name := range []string{audit.Bucket, audit.RefusedBucket} {
				b := tx.Bucket(name)
				if b == nil {
					return errors.New("no audit bucket " + name)
				}
				if err := b.ForEach(func(k, v []byte) error { values = append(values, bytes.Clone(v)); return nil }); err != nil {
					return err
				}
			}
			return nil
		})
		db.Close()
		if err != nil || len(values) != len(want) {
			t.Fatalf("audit bucket: %d values, %v", len(values), err)
		}
		for _, v := range values {
			for _, secret := range []string{stored, "flowerpot", refusedSecret, deniedText, limitedText, writer, reader, flood} {
				if bytes.Contains(v, []byte(secret)) {
					t.Errorf("an audit entry holds %q", secret)
				}
			}
		}
		file, err := os.ReadFile(cfg.DB)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{refusedSecret, deniedText, limitedText, "violet umbrella", "orange lighthouse"} {
			if bytes.Contains(file, []byte(secret)) {
				t.Errorf("the file holds %q from a request that was refused", secret)
			}
		}
		if !bytes.Contains(file, []byte("blue flowerpot")) {
			t.Error("the stored memory is not in the file: the scan would miss plain text")
		}
	})
}

// TestAudit_Stdio: tool calls over stdio are audited as client "stdio:<clientInfo.name>",
// with their outcome, and without their arguments.
func TestAudit_Stdio(t *testing.T) {
	db := filepath.Join(t.TempDir(), "ownsona.db")
	secret := "sk-proj-" + strings.Repeat("Xw4", 16)
	stdioSession(t, db, map[string]string{"OWNSONA_TOOLS": "recall,remember"},
		stdioInit,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"text":"the green bicycle is in the shed"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"remember","arguments":{"text":"`+secret+`"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"forget","arguments":{"id":1}}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"recall","arguments":{"query":""}}}`,
	)
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"audit", "--db", db, "--json", "--since", "1h"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
		t.Fatalf("ownsona audit: %v", err)
	}
	type entry struct{ Client, Transport, Method, Tool, Outcome string }
	var got []entry
	for line := range strings.Lines(out.String()) {
		var e entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		got = append(got, e)
		if strings.Contains(line, "bicycle") || strings.Contains(line, secret) {
			t.Errorf("audit line holds argument content: %s", line)
		}
	}
	has := func(tool, outcome string) bool {
		return slices.ContainsFunc(got, func(e entry) bool {
			return e.Client == "stdio:allowlist-probe" && e.Transport == "stdio" && e.Method == "tools/call" && e.Tool == tool && e.Outcome == outcome
		})
	}
	if !has("remember", "ok") {
		t.Errorf("no audit entry (ok) for the stdio remember: %+v", got)
	}
	if !has("remember", "tool_error") {
		t.Errorf("no audit entry (tool_error) for the stdio remember of a secret: %+v", got)
	}
	// Over HTTP every request is audited, refusals included; over stdio a call refused before
	// its tool runs (by the allowlist, or by argument validation) leaves no trace.
	t.Run("calls refused before the tool runs", func(t *testing.T) {
		for _, tool := range []string{"forget", "recall"} {
			if !slices.ContainsFunc(got, func(e entry) bool { return e.Tool == tool }) {
				t.Errorf("the refused stdio call of %s is not audited: %+v", tool, got)
			}
		}
	})
}

// sdkClient connects the Go SDK over Streamable HTTP to endpoint with a bearer token.
func sdkClient(t *testing.T, ctx context.Context, endpoint, token, pin string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-guard-test", Version: "1.0.0"}, opts)
	s, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerTransport{token}}}, sdkOptions(pin))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// updateRecorder collects the URIs of notifications/resources/updated.
type updateRecorder struct {
	mu   sync.Mutex
	uris []string
	ch   chan struct{}
}

func newUpdateRecorder() *updateRecorder { return &updateRecorder{ch: make(chan struct{}, 1)} }

func (u *updateRecorder) handle(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	u.mu.Lock()
	u.uris = append(u.uris, req.Params.URI)
	u.mu.Unlock()
	select {
	case u.ch <- struct{}{}:
	default:
	}
}

// seen reports whether uri was notified, and every URI so far.
func (u *updateRecorder) seen(uri string) (bool, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Contains(u.uris, uri), slices.Clone(u.uris)
}

// wait waits up to d for uri.
func (u *updateRecorder) wait(uri string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		if ok, _ := u.seen(uri); ok {
			return true
		}
		select {
		case <-u.ch:
		case <-deadline:
			ok, _ := u.seen(uri)
			return ok
		}
	}
}

// TestSubscribe_ResourceUpdated: a Go SDK client subscribed to a resource is told when another
// client's write changes it: the recent list after remember, a memory after update_memory. In
// the legacy era through resources/subscribe and the session's GET stream; in 2026-07-28
// through a subscriptions/listen stream.
func TestSubscribe_ResourceUpdated(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) { testResourceUpdated(t, era.pin, era.want) })
	}
}

func testResourceUpdated(t *testing.T, pin, wantVersion string) {
	cfg := testConfig(t, nil)
	cfg.PublicURL = ""
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + a.Addr() + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	updates := newUpdateRecorder()
	watcher := sdkClient(t, ctx, endpoint, testPAT(t, a, policy.ScopeRead), pin, &mcp.ClientOptions{ResourceUpdatedHandler: updates.handle})
	writer := sdkClient(t, ctx, endpoint, testPAT(t, a), pin, nil)
	init := watcher.InitializeResult()
	if init.ProtocolVersion != wantVersion {
		t.Fatalf("the watcher speaks %s, want %s", init.ProtocolVersion, wantVersion)
	}
	if init.Capabilities.Resources == nil || !init.Capabilities.Resources.Subscribe {
		t.Fatalf("the server does not offer resources.subscribe: %+v", init.Capabilities)
	}

	const recent = "ownsona://memories/recent"
	if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: recent}); err != nil {
		t.Fatalf("subscribe %s: %v", recent, err)
	}
	// The SDK opens its stream in the background: write until the notification comes (an
	// update before the stream is up has no way to arrive).
	var mid float64
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		p := sdkPayload(t, writer, "remember", map[string]any{"text": fmt.Sprintf("subscription test memory number %d", i)})
		mid = p["memory_id"].(float64)
		if updates.wait(recent, 250*time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			_, uris := updates.seen(recent)
			t.Fatalf("no notifications/resources/updated for %s after %d writes; got %q", recent, i+1, uris)
		}
	}

	t.Run("a memory after update_memory", func(t *testing.T) {
		uri := fmt.Sprintf("ownsona://memories/%d", int(mid))
		if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
		// In 2026-07-28 the SDK opens a stream per subscription: write until it is up.
		deadline := time.Now().Add(2 * time.Minute)
		for i := 0; ; i++ {
			sdkPayload(t, writer, "update_memory", map[string]any{"id": mid, "importance": 0.5 + float64(i%4)/10})
			if updates.wait(uri, 250*time.Millisecond) {
				break
			}
			if time.Now().After(deadline) {
				_, uris := updates.seen(uri)
				t.Fatalf("no notifications/resources/updated for %s after %d updates of it; got %q", uri, i+1, uris)
			}
		}
	})

	t.Run("not for unsubscribed resources", func(t *testing.T) {
		_, uris := updates.seen("")
		for _, u := range uris {
			if u != recent && !strings.HasPrefix(u, "ownsona://memories/") {
				t.Errorf("notified of %s, which was never subscribed", u)
			}
		}
	})
}

// TestSDK_LegacySSE drives the 2024-11-05 HTTP+SSE transport (/mcp/sse, /mcp/sse/message)
// with the Go SDK's SSE client: initialize, call tools, read their results; the calls are
// audited as transport sse.
func TestSDK_LegacySSE(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.PublicURL = ""
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-sse-test", Version: "1.0.0"}, nil)
	s, err := c.Connect(ctx, &mcp.SSEClientTransport{Endpoint: "http://" + a.Addr() + "/mcp/sse",
		HTTPClient: &http.Client{Transport: bearerTransport{patFor(t, a)}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer s.Close()
	if init := s.InitializeResult(); init.ServerInfo.Name != "ownsona" {
		t.Errorf("initialize result = %+v", init)
	}
	p := sdkPayload(t, s, "remember", map[string]any{"text": "the legacy transport still works"})
	if p["ok"] != true {
		t.Fatalf("remember = %v", p)
	}
	r := sdkPayload(t, s, "recall", map[string]any{"query": "legacy transport"})
	if m := r["matches"].([]any); len(m) != 1 || m[0].(map[string]any)["id"] != p["memory_id"] {
		t.Errorf("recall = %v", r)
	}
	if got := sdkPayload(t, s, "get_memory", map[string]any{"id": p["memory_id"]})["memory"].(map[string]any)["source_client"]; got != "pat:test" {
		t.Errorf("source_client = %v, want pat:test", got)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
		t.Error("an unknown tool succeeded")
	}
	entries, _, err := a.audit.Query(audit.Filter{Tool: "remember"})
	if err != nil || len(entries) != 1 || entries[0].Transport != audit.TransportSSE || entries[0].Client != "pat:test" {
		t.Errorf("audit of the SSE remember = %+v, %v; want one entry, transport sse, client pat:test", entries, err)
	}
	t.Run("without a token", func(t *testing.T) {
		resp, err := http.Get("http://" + a.Addr() + "/mcp/sse")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET /mcp/sse without a token: status %d, want 401", resp.StatusCode)
		}
	})
}
