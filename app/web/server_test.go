package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/app/web"
	"github.com/ownsona/ownsona/internal/httpscenario"
	"github.com/ownsona/ownsona/jsonrpc"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/mcp"
	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/policy"
)

const (
	testPublicURL = "http://127.0.0.1:8080"
	testVersion   = "9.9.9-test"
	testOrigin    = "https://app.example.com" // the one configured CORS origin
)

// fastPassword is a bcrypt hash at the minimum cost: oauth.New would otherwise generate a
// password and hash it with argon2id, which is slow under the race detector.
var fastPassword = sync.OnceValue(func() string {
	h, err := bcrypt.GenerateFromPassword([]byte("correct horse battery staple"), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	return string(h)
})

// newMCP is an mcp.Server with two tools and no memories: echo (read-only, memories:read) and
// stamp (memories:write), and the scope function app/tools would give for them.
func newMCP() (*mcp.Server, func(string) (string, bool)) {
	yes := true
	echo := func(ctx context.Context, args json.RawMessage) (*mcp.ToolResult, error) {
		var a struct {
			Text string `json:"text"`
		}
		if err := json.Unmarshal(args, &a); err != nil {
			return nil, err
		}
		return &mcp.ToolResult{Structured: map[string]string{"text": a.Text}}, nil
	}
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)
	mcp := &mcp.Server{
		Info: mcp.Implementation{Name: "web-test", Version: testVersion},
		Tools: []*mcp.Tool{
			{Name: "echo", Description: "Echoes text.", InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &yes}, Handler: echo},
			{Name: "stamp", Description: "Pretends to write.", InputSchema: schema, Handler: echo},
		},
	}
	scope := func(tool string) (string, bool) {
		switch tool {
		case "echo":
			return policy.ScopeRead, true
		case "stamp":
			return policy.ScopeWrite, true
		}
		return policy.ScopeWrite, false
	}
	return mcp, scope
}

// fixture is a Server over a temporary kv file, with personal access tokens of each scope.
type fixture struct {
	*web.Server
	db          *kv.DB
	read, write string // PATs
}

// MustOpenServer returns a Server for testPublicURL with the two-tool MCP server, rate limiting
// off, TLS off and cfg changed by opts. It is closed when the test ends. Its clock is time.Now:
// in a synctest bubble (as every scenario runs), 2000-01-01 00:00 UTC until the test sleeps.
func MustOpenServer(tb testing.TB, opts ...func(*web.Config)) *fixture {
	tb.Helper()
	f := &fixture{}
	db := kvtest.Open(tb)
	f.db = db
	mcp, scope := newMCP()
	cfg := web.Config{
		Addr:        "127.0.0.1:0",
		OAuth:       oauth.Config{DB: db, Password: fastPassword()},
		PublicURL:   testPublicURL,
		CORSOrigins: []string{testOrigin},
		Version:     testVersion,
		MCP:         mcp,
		Scope:       scope,
		Health:      func() (map[string]string, bool) { return map[string]string{"database": "ok"}, true },
		Now:         time.Now,
		Stderr:      io.Discard,
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := web.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	f.Server = s
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	if s.Auth() != nil {
		f.read = f.mustPAT(tb, "reader", policy.ScopeRead)
		f.write = f.mustPAT(tb, "writer", policy.ScopeRead, policy.ScopeWrite)
	}
	return f
}

func (f *fixture) mustPAT(tb testing.TB, name string, scope ...string) string {
	tb.Helper()
	tok, _, err := f.Auth().PATs().Create(name, scope, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return tok
}

// browserAccept is what Chromium sends when it navigates to a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"

const (
	callEcho  = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	callStamp = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stamp","arguments":{"text":"hello"}}}`
	// callEchoModern is callEcho as a 2026-07-28 client sends it.
	callEchoModern = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"claude-code","version":"2.1.4"}}}}`
)

// scenario is one HTTP request against a fresh Server and what its answer must hold.
type scenario = httpscenario.Scenario[web.Config, *fixture]

// scenarios serves each scenario on a Server of its own in a synctest bubble: in-process, through
// the handler, on the bubble's clock. A path is a URL on testPublicURL.
var scenarios = httpscenario.Runner[web.Config, *fixture]{
	Open:    MustOpenServer,
	Handler: func(f *fixture) http.Handler { return f.Handler() },
	Base:    testPublicURL,
	Bubble:  true,
}

// withRead and withWrite send the fixture's PAT of that scope.
func withRead(f *fixture, r *http.Request)  { r.Header.Set("Authorization", "Bearer "+f.read) }
func withWrite(f *fixture, r *http.Request) { r.Header.Set("Authorization", "Bearer "+f.write) }

// withConsole mounts a stand-in console that names each request and sets its own CSP.
func withConsole(c *web.Config) {
	c.Console = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprintf(w, "console %s %s", r.Method, r.URL.Path)
	})
}

// TestServer_Handler pins what the network sees: statuses, bodies and headers of each route and
// of each middleware's refusals.
func TestServer_Handler(t *testing.T) {
	allScopes := policy.FormatScope(policy.DefaultScopes)
	// RFC 6750 §3: the realm comes first; seed 003 names one.
	challenge := `Bearer realm="ownsona", resource_metadata="` + testPublicURL + `/.well-known/oauth-protected-resource/mcp"`
	challengeAt := func(alias string) string {
		return `Bearer realm="ownsona", resource_metadata="` + testPublicURL + `/.well-known/oauth-protected-resource` + alias + `"`
	}
	limited := func(c *web.Config) {
		c.Limiter = limit.New(limit.Config{PerMinute: 1, Burst: 1, Now: c.Now})
	}
	scenarios.Run(t, []scenario{
		{
			Name: "health", Method: "GET", URL: "/health",
			Before:     func(*fixture) { time.Sleep(90 * time.Second) },
			WantStatus: http.StatusOK,
			WantBody: []string{`"status":"healthy"`, `"checks":{"database":"ok"}`, `"uptime":90`,
				`"timestamp":"2000-01-01T00:01:30Z"`, `"version":"9.9.9-test"`},
			WantHeaders: map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"},
		},
		{
			Name: "health unhealthy", Method: "GET", URL: "/health",
			Config: func(c *web.Config) {
				c.Health = func() (map[string]string, bool) {
					return map[string]string{"database": "failed", "embedder": "ok"}, false
				}
			},
			WantStatus: http.StatusServiceUnavailable,
			WantBody:   []string{`"status":"unhealthy"`, `"checks":{"database":"failed","embedder":"ok"}`},
		},
		{
			Name: "health without checks", Method: "GET", URL: "/health",
			Config:     func(c *web.Config) { c.Health = nil },
			WantStatus: http.StatusOK,
			WantBody:   []string{`"status":"healthy"`, `"checks":{}`},
		},
		{
			Name: "health refuses POST", Method: "POST", URL: "/health",
			WantStatus:  http.StatusMethodNotAllowed,
			WantBody:    []string{`{"error":"method_not_allowed"}`},
			WantHeaders: map[string]string{"Allow": "GET, HEAD"},
		},
		{
			Name: "unknown path", Method: "GET", URL: "/nope",
			WantStatus:  http.StatusNotFound,
			WantBody:    []string{`{"error":"not_found","error_description":"no such endpoint; MCP is served at /mcp"}`},
			WantHeaders: map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"},
		},
		{
			Name: "no console configured", Method: "GET", URL: "/console/memories",
			WantStatus: http.StatusNotFound,
			WantBody:   []string{`"error":"not_found"`},
		},
		{
			Name: "console mounted", Method: "GET", URL: "/console",
			Config:      withConsole,
			WantStatus:  http.StatusTeapot,
			WantBody:    []string{"console GET /console"},
			WantHeaders: map[string]string{"X-Frame-Options": "DENY", "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'"},
		},
		{
			Name: "console mounted below", Method: "POST", URL: "/console/memories/7/forget",
			Config:     withConsole,
			WantStatus: http.StatusTeapot,
			WantBody:   []string{"console POST /console/memories/7/forget"},
		},
		{
			Name: "console behind the Host check", Method: "GET", URL: "/console",
			Config:     withConsole,
			Headers:    map[string]string{"Host": "rebind.example.com"},
			WantStatus: http.StatusMisdirectedRequest,
		},
		{
			Name: "console rate-limited per address", Method: "GET", URL: "/console", Repeat: 1,
			Config:     func(c *web.Config) { withConsole(c); limited(c) },
			WantStatus: http.StatusTooManyRequests,
		},
		// Issue 30, item 2: a browser finds the console; clients' answers do not change.
		{
			Name: "browser at / goes to the console", Method: "GET", URL: "/",
			Config:      withConsole,
			Headers:     map[string]string{"Accept": browserAccept},
			WantStatus:  http.StatusFound,
			WantHeaders: map[string]string{"Location": "/console", "Vary": "Accept"},
		},
		{
			Name: "JSON client at / with a console", Method: "GET", URL: "/",
			Config:     withConsole,
			Headers:    map[string]string{"Accept": "application/json"},
			WantStatus: http.StatusNotFound,
			WantBody:   []string{`"error":"not_found"`},
		},
		{
			Name: "client without Accept at /", Method: "GET", URL: "/",
			Config:     withConsole,
			WantStatus: http.StatusNotFound,
			WantBody:   []string{`"error":"not_found"`},
		},
		{
			Name: "browser at / without a console", Method: "GET", URL: "/",
			Headers:    map[string]string{"Accept": browserAccept},
			WantStatus: http.StatusNotFound,
			WantBody:   []string{`"error":"not_found"`},
		},
		{
			Name: "browser at a path below /", Method: "GET", URL: "/nope",
			Config:     withConsole,
			Headers:    map[string]string{"Accept": browserAccept},
			WantStatus: http.StatusNotFound,
		},
		{
			Name: "browser at /mcp", Method: "GET", URL: "/mcp",
			Config:      withConsole,
			Headers:     map[string]string{"Accept": browserAccept},
			WantStatus:  http.StatusUnauthorized,
			WantBody:    []string{`<a href="/console">`, `<a href="/docs">`, `<code>` + testPublicURL + `/mcp</code>`},
			WantNoBody:  []string{"<script", "<style", "jsonrpc"},
			WantHeaders: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, challenge) {
					t.Errorf("WWW-Authenticate = %s, want the challenge a client gets", got)
				}
			},
		},
		{
			Name: "browser at /mcp without a console", Method: "GET", URL: "/mcp",
			Headers:    map[string]string{"Accept": browserAccept},
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`<a href="/docs">`},
			WantNoBody: []string{"/console"},
		},
		{
			Name: "MCP client's GET at /mcp", Method: "GET", URL: "/mcp",
			Config:      withConsole,
			Headers:     map[string]string{"Accept": "text/event-stream"},
			WantStatus:  http.StatusUnauthorized,
			WantBody:    []string{`"jsonrpc":"2.0"`},
			WantHeaders: map[string]string{"Content-Type": "application/json"},
		},
		{
			Name: "GET at /mcp that takes HTML and event streams", Method: "GET", URL: "/mcp",
			Config:     withConsole,
			Headers:    map[string]string{"Accept": "text/html, text/event-stream"},
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`"jsonrpc":"2.0"`},
		},
		{
			Name: "POST at /mcp that takes HTML", Method: "POST", URL: "/mcp", Body: callEcho,
			Config:     withConsole,
			Headers:    map[string]string{"Accept": "text/html"},
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`"jsonrpc":"2.0"`},
		},
		{
			Name: "browser at /mcp with a bad token", Method: "GET", URL: "/mcp",
			Config:     withConsole,
			Headers:    map[string]string{"Accept": browserAccept, "Authorization": "Bearer nope"},
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`"jsonrpc":"2.0"`},
		},
		{
			Name: "consoles is not the console", Method: "GET", URL: "/consoles",
			Config:     withConsole,
			WantStatus: http.StatusNotFound,
		},
		{
			Name: "security headers", Method: "GET", URL: "/health",
			WantStatus: http.StatusOK,
			WantHeaders: map[string]string{
				"X-Content-Type-Options":  "nosniff",
				"X-Frame-Options":         "DENY",
				"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
				"Referrer-Policy":         "no-referrer",
				"X-XSS-Protection":        "1; mode=block",
				"X-API-Version":           web.APIVersion, // the API's semantic version, not the build's
			},
			WantNoHeaders: []string{"Strict-Transport-Security"}, // plain http on loopback
		},
		{
			Name: "security headers on a refusal", Method: "GET", URL: "/nope",
			WantStatus: http.StatusNotFound,
			WantHeaders: map[string]string{"X-Content-Type-Options": "nosniff", "X-API-Version": web.APIVersion,
				"X-XSS-Protection": "1; mode=block"},
		},
		{
			Name: "HSTS under TLS", Method: "GET", URL: "/health",
			Config:      func(c *web.Config) { c.TLS = "local" },
			WantStatus:  http.StatusOK,
			WantHeaders: map[string]string{"Strict-Transport-Security": "max-age=31536000; includeSubDomains"},
		},
		{
			Name: "HSTS behind an https public URL", Method: "GET", URL: "/health",
			Config:      func(c *web.Config) { c.PublicURL = "https://mem.example.com" },
			Headers:     map[string]string{"Host": "mem.example.com"},
			WantStatus:  http.StatusOK,
			WantHeaders: map[string]string{"Strict-Transport-Security": "max-age=31536000; includeSubDomains"},
		},
		{
			Name: "developer docs", Method: "GET", URL: "/docs",
			WantStatus: http.StatusOK,
			WantBody: []string{"<code>" + testPublicURL + "/mcp</code>", "<code>" + testPublicURL + "/api/mcp</code>",
				"<code>" + testPublicURL + "/.well-known/oauth-protected-resource/mcp</code>", "memories:read"},
			WantHeaders: map[string]string{"Content-Type": "text/html; charset=utf-8"},
		},
		{
			Name: "protected resource metadata names the docs", Method: "GET", URL: "/.well-known/oauth-protected-resource",
			WantStatus: http.StatusOK,
			WantBody:   []string{`"resource_documentation": "` + testPublicURL + `/docs"`},
		},
		{
			Name: "server card preflight", Method: "OPTIONS", URL: "/.well-known/mcp/server-card.json",
			Headers:    map[string]string{"Origin": "https://other.example.com", "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "mcp-protocol-version"},
			WantStatus: http.StatusNoContent,
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Max-Age": "86400",
				"Access-Control-Allow-Headers": "MCP-Protocol-Version"},
			WantNoHeaders: []string{"Access-Control-Allow-Credentials"},
		},
		{
			Name: "metadata preflight", Method: "OPTIONS", URL: "/.well-known/oauth-protected-resource/api/mcp",
			Headers:     map[string]string{"Origin": "https://other.example.com", "Access-Control-Request-Method": "GET"},
			WantStatus:  http.StatusNoContent,
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Max-Age": "86400"},
		},
		{
			Name: "token endpoint preflight", Method: "OPTIONS", URL: "/oauth/token",
			Headers:     map[string]string{"Origin": "https://other.example.com", "Access-Control-Request-Method": "POST"},
			WantStatus:  http.StatusNoContent,
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "*", "Access-Control-Max-Age": "86400"},
		},
		{
			Name: "foreign Host", Method: "GET", URL: "/health",
			Headers:    map[string]string{"Host": "rebind.example.com"},
			WantStatus: http.StatusMisdirectedRequest,
			WantBody:   []string{`"error":"misdirected_request"`},
		},
		{
			Name: "localhost Host", Method: "GET", URL: "/health",
			Headers:    map[string]string{"Host": "localhost:8080"},
			WantStatus: http.StatusOK,
		},
		{
			Name: "foreign Origin", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho,
			Headers:    map[string]string{"Origin": "https://evil.example.com"},
			WantStatus: http.StatusForbidden,
			WantBody:   []string{`{"error":"forbidden_origin","error_description":"requests from this origin are not allowed"}`},
		},
		{
			Name: "preflight from an allowed origin", Method: "OPTIONS", URL: "/mcp",
			Headers:    map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "POST"},
			WantStatus: http.StatusNoContent,
			WantHeaders: map[string]string{
				"Access-Control-Allow-Origin":  testOrigin,
				"Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
				"Access-Control-Max-Age":       "86400", // seed 003
				"Vary":                         "Origin",
			},
		},
		{
			Name: "preflight from a loopback origin", Method: "OPTIONS", URL: "/mcp",
			Headers:     map[string]string{"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"},
			WantStatus:  http.StatusNoContent,
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "http://localhost:6274"},
		},
		{
			Name: "preflight from another origin", Method: "OPTIONS", URL: "/mcp",
			Headers:       map[string]string{"Origin": "https://other.example.com", "Access-Control-Request-Method": "POST"},
			WantStatus:    http.StatusForbidden,
			WantBody:      []string{`"error":"forbidden_origin"`},
			WantNoHeaders: []string{"Access-Control-Allow-Origin"},
		},
		{
			Name: "MCP without a token", Method: "POST", URL: "/mcp", Body: callEcho,
			WantStatus:  http.StatusUnauthorized,
			WantBody:    []string{`"code":-32600`, `"message":"Invalid Request"`, `"error":"unauthorized"`},
			WantHeaders: map[string]string{"WWW-Authenticate": challenge + `, scope="` + allScopes + `"`},
		},
		{
			Name: "MCP with an unknown token", Method: "POST", URL: "/api/mcp", Body: callEcho,
			Headers:     map[string]string{"Authorization": "Bearer osk_not-a-real-token"},
			WantStatus:  http.StatusUnauthorized,
			WantBody:    []string{`"error":"invalid_token"`},
			WantHeaders: map[string]string{"WWW-Authenticate": challengeAt("/api/mcp") + `, scope="` + allScopes + `", error="invalid_token"`},
		},
		{
			Name: "MCP alias /mcp/http without a token", Method: "POST", URL: "/mcp/http", Body: callEcho,
			WantStatus:  http.StatusUnauthorized,
			WantHeaders: map[string]string{"WWW-Authenticate": challengeAt("/mcp/http") + `, scope="` + allScopes + `"`},
		},
		{
			Name: "legacy SSE without a token points at the /mcp metadata", Method: "GET", URL: "/mcp/sse",
			WantStatus:  http.StatusUnauthorized,
			WantHeaders: map[string]string{"WWW-Authenticate": challenge + `, scope="` + allScopes + `"`},
		},
		{
			Name: "protected resource metadata of /api/mcp", Method: "GET", URL: "/.well-known/oauth-protected-resource/api/mcp",
			WantStatus: http.StatusOK,
			WantBody:   []string{`"resource": "` + testPublicURL + `/api/mcp"`},
		},
		{
			Name: "protected resource metadata of /mcp/http", Method: "GET", URL: "/.well-known/oauth-protected-resource/mcp/http",
			WantStatus: http.StatusOK,
			WantBody:   []string{`"resource": "` + testPublicURL + `/mcp/http"`},
		},
		{
			Name: "read token calls a write tool at an alias", Method: "POST", URL: "/api/mcp", Request: withRead, Body: callStamp,
			WantStatus:  http.StatusForbidden,
			WantBody:    []string{`"error":"insufficient_scope"`},
			WantHeaders: map[string]string{"WWW-Authenticate": challengeAt("/api/mcp") + `, scope="` + allScopes + `", error="insufficient_scope"`},
		},
		{
			Name: "read token calls a read tool", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho,
			WantStatus:    http.StatusOK,
			WantBody:      []string{`"id":1`, `"structuredContent":{"text":"hello"}`},
			WantNoHeaders: []string{"WWW-Authenticate"},
		},
		{
			Name: "read token calls a write tool", Method: "POST", URL: "/mcp", Request: withRead, Body: callStamp,
			WantStatus: http.StatusForbidden,
			WantBody: []string{`"id":2`, `"code":-32003`, `"error":"insufficient_scope"`,
				`"error_description":"tool stamp needs the scope memories:write"`},
			WantHeaders: map[string]string{"WWW-Authenticate": challenge + `, scope="` + allScopes + `", error="insufficient_scope"`},
		},
		{
			Name: "write token calls a write tool", Method: "POST", URL: "/mcp/http", Request: withWrite, Body: callStamp,
			WantStatus: http.StatusOK,
			WantBody:   []string{`"id":2`, `"structuredContent":{"text":"hello"}`},
		},
		{
			Name: "MCP rate limit per client", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho,
			Config: limited, Repeat: 1,
			WantStatus: http.StatusTooManyRequests,
			WantBody:   []string{`"code":-32004`, `"message":"rate limit exceeded"`, `"retry_after":60`},
			WantHeaders: map[string]string{"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0", "Retry-After": "60",
				"Content-Type": "application/json"},
		},
		{
			Name: "MCP under the rate limit", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho,
			Config:      limited,
			WantStatus:  http.StatusOK,
			WantHeaders: map[string]string{"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0"},
		},
		{
			Name: "rate limit per address", Method: "GET", URL: "/nope",
			Config: limited, Repeat: 1,
			WantStatus:  http.StatusTooManyRequests,
			WantBody:    []string{`"error":"rate_limited"`, `retry in 60 s`},
			WantHeaders: map[string]string{"X-RateLimit-Limit": "1", "Retry-After": "60"},
		},
		{
			Name: "health is not rate limited", Method: "GET", URL: "/health",
			Config: limited, Repeat: 3,
			WantStatus:    http.StatusOK,
			WantNoHeaders: []string{"X-RateLimit-Limit"},
		},
		{
			Name: "server card", Method: "GET", URL: "/.well-known/mcp/server-card.json",
			WantStatus: http.StatusOK,
			WantBody: []string{`"name":"127.0.0.1/mcp"`, `"version":"9.9.9-test"`,
				`{"supportedProtocolVersions":`, `"type":"streamable-http","url":"http://127.0.0.1:8080/mcp"`,
				`"url":"http://127.0.0.1:8080/mcp/sse"`,
				`"protectedResourceMetadata":"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"`},
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300",
				"Content-Type": "application/json"},
		},
		{
			Name: "catalog", Method: "GET", URL: "/.well-known/mcp/catalog.json",
			WantStatus: http.StatusOK,
			WantBody: []string{`{"entries":[{"identifier":"http://127.0.0.1:8080/mcp","type":"application/mcp-server-card+json",` +
				`"url":"http://127.0.0.1:8080/.well-known/mcp/server-card.json"}],"specVersion":"1.0"}`},
			WantHeaders: map[string]string{"Access-Control-Allow-Origin": "*", "Cache-Control": "public, max-age=300"},
		},
		{
			Name: "catalog refuses POST", Method: "POST", URL: "/.well-known/mcp/catalog.json",
			WantStatus:  http.StatusMethodNotAllowed,
			WantHeaders: map[string]string{"Allow": "GET, HEAD"},
		},
		{
			Name: "CA certificate with TLS off", Method: "GET", URL: "/ca.crt",
			WantStatus: http.StatusNotFound,
			WantBody:   []string{`"error":"not_found"`, `(--tls local)`},
		},
		{
			Name: "CA certificate with TLS local", Method: "GET", URL: "/ca.crt",
			Config: func(c *web.Config) {
				c.TLS = "local"
				c.RootPEM = func() ([]byte, error) { return []byte("-----BEGIN CERTIFICATE-----\n"), nil }
			},
			WantStatus: http.StatusOK,
			WantBody:   []string{"-----BEGIN CERTIFICATE-----"},
			WantHeaders: map[string]string{"Content-Type": "application/x-pem-file",
				"Content-Disposition": `attachment; filename="ownsona-ca.crt"`, "Cache-Control": "public, max-age=3600"},
		},
		{
			Name: "CA certificate that cannot be read", Method: "GET", URL: "/ca.crt",
			Config: func(c *web.Config) {
				c.TLS = "local"
				c.RootPEM = func() ([]byte, error) { return nil, errors.New("no root yet") }
			},
			WantStatus: http.StatusInternalServerError,
			WantBody:   []string{`{"error":"internal_error"}`},
		},
		{
			Name: "OAuth metadata", Method: "GET", URL: "/.well-known/oauth-protected-resource/mcp",
			WantStatus: http.StatusOK,
			WantBody:   []string{`"resource": "http://127.0.0.1:8080/mcp"`},
		},
	})
}

// TestServer_Audit: an MCP request is recorded with its client, the client software's own name
// when the request carries one (initialize's clientInfo, a 2026-07-28 request's _meta), method,
// tool and outcome.
func TestServer_Audit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log *audit.Log
		f := MustOpenServer(t, func(c *web.Config) {
			var err error
			if log, err = audit.Open(c.OAuth.DB, audit.Config{Now: c.Now}); err != nil {
				t.Fatal(err)
			}
			c.Audit = log
		})
		t.Cleanup(func() { log.Close() })
		h := f.Handler()
		for _, sc := range []scenario{
			{Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho},
			{Method: "POST", URL: "/mcp", Request: withRead, Body: callStamp},
			{Method: "POST", URL: "/mcp", Body: callEcho},
			{Method: "POST", URL: "/mcp", Request: withRead, Body: callEchoModern,
				Headers: map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}},
			{Method: "POST", URL: "/mcp", Request: withRead, Body: `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":5}}`},
		} {
			h.ServeHTTP(httptest.NewRecorder(), scenarios.NewRequest(f, sc))
		}
		entries, corrupt, err := log.Query(audit.Filter{OldestFirst: true})
		if err != nil || corrupt != 0 {
			t.Fatalf("Query: %v (%d corrupt)", err, corrupt)
		}
		var got []string
		for _, e := range entries {
			got = append(got, fmt.Sprintf("%s|%s|%s|%s|%s|%d|%d", e.Client, e.Agent, e.Method, e.Tool, e.Outcome, e.Status, e.ErrorCode))
		}
		want := []string{
			fmt.Sprintf("pat:reader||tools/call|echo|%s|200|0", audit.OutcomeOK),
			fmt.Sprintf("pat:reader||tools/call|stamp|%s|403|%d", audit.OutcomeDenied, mcp.CodeAuthorization),
			fmt.Sprintf("pat:reader|claude-code 2.1.4|tools/call|echo|%s|200|0", audit.OutcomeOK),
			// A malformed _meta hides neither the method nor the tool from the record.
			fmt.Sprintf("pat:reader||tools/call|echo|%s|200|%d", audit.OutcomeError, jsonrpc.CodeInvalidParams),
			// No principal: the token check refused it. Refusals are aggregated per minute, and
			// come after the served requests of the same time.
			fmt.Sprintf("||http:POST||%s|401|0", audit.OutcomeUnauthorized),
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// failingBody is a request body whose connection fails after a few bytes.
type failingBody struct{ sent bool }

func (b *failingBody) Read(p []byte) (int, error) {
	if !b.sent {
		b.sent = true
		return copy(p, `{"jsonrpc":"2.0","id":1,`), nil
	}
	return 0, errors.New("connection reset by peer")
}

// TestServer_UnreadableBody: an MCP body that cannot be read is refused with 400 and JSON-RPC's
// own message for -32600, "Invalid Request", as mcp answers (mcp/doc.go, "Errors"); what went
// wrong is in data, with the OAuth-style error code.
func TestServer_UnreadableBody(t *testing.T) {
	f := MustOpenServer(t)
	req := httptest.NewRequest(http.MethodPost, testPublicURL+"/mcp", &failingBody{})
	req.Header.Set("Authorization", "Bearer "+f.read)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	rec := httptest.NewRecorder()
	f.Handler().ServeHTTP(rec, req)
	var env struct {
		Error jsonrpc.Error `json:"error"`
	}
	json.Unmarshal(rec.Body.Bytes(), &env)
	data, _ := env.Error.Data.(map[string]any)
	desc, _ := data["error_description"].(string)
	if rec.Code != http.StatusBadRequest || env.Error.Code != jsonrpc.CodeInvalidRequest || env.Error.Message != jsonrpc.MessageInvalidRequest ||
		data["error"] != "invalid_request" || !strings.Contains(desc, "could not read the request body: connection reset by peer") {
		t.Errorf("got %d %s; want 400, -32600 %q, data {error: invalid_request, error_description naming the failure}", rec.Code, rec.Body, jsonrpc.MessageInvalidRequest)
	}
}

// TestServer_Listen serves /health over real TCP on a loopback port, with the authorization
// server opened for the bound address; Close returns nil, also when repeated.
func TestServer_Listen(t *testing.T) {
	f := MustOpenServer(t, func(c *web.Config) { c.PublicURL = "" })
	if f.Auth() != nil {
		t.Fatal("Auth before Listen without a public URL is not nil")
	}
	if err := f.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := f.Addr()
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("Addr = %q, want 127.0.0.1 and a bound port", addr)
	}
	if got, want := f.Auth().Endpoints().Issuer, "http://"+addr; got != want {
		t.Errorf("issuer = %q, want %q", got, want)
	}
	if got := f.TLSInfo(); got != "off" {
		t.Errorf("TLSInfo = %q, want off", got)
	}
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"status":"healthy"`) {
		t.Errorf("GET /health = %d %s", resp.StatusCode, body)
	}
	for i := range 2 {
		if err := f.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
	if f.Auth() != nil {
		t.Error("Auth after Close is not nil")
	}
	if _, err := http.Get("http://" + addr + "/health"); err == nil {
		t.Error("GET /health after Close succeeded")
	}
}

// TestServer_Close: a nil Server and one never listening close without error.
func TestServer_Close(t *testing.T) {
	var s *web.Server
	if err := s.Close(); err != nil {
		t.Errorf("nil Close: %v", err)
	}
	f := MustOpenServer(t)
	if err := f.Close(); err != nil {
		t.Errorf("Close before Listen: %v", err)
	}
}

// TestNew_SettingError: configuration mistakes found while opening name their setting.
func TestNew_SettingError(t *testing.T) {
	t.Run("oauth", func(t *testing.T) {
		mcp, _ := newMCP()
		_, err := web.New(web.Config{PublicURL: "http://mem.example.com", MCP: mcp, OAuth: oauth.Config{DB: nil}})
		var se *web.SettingError
		if !errors.As(err, &se) || se.Setting != "oauth" || !strings.HasPrefix(err.Error(), "oauth: ") {
			t.Errorf("err = %v, want a SettingError for oauth", err)
		}
	})
	t.Run("acme-ca-root", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "missing.pem")
		f := MustOpenServer(t, func(c *web.Config) { c.PublicURL, c.TLS, c.ACMECARoot = "", "local", missing })
		err := f.Listen()
		var se *web.SettingError
		if !errors.As(err, &se) || se.Setting != "acme-ca-root" || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want a SettingError for acme-ca-root wrapping ErrNotExist", err)
		}
	})
	t.Run("acme-ca-root without certificates", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty.pem")
		if err := os.WriteFile(empty, []byte("not pem"), 0o600); err != nil {
			t.Fatal(err)
		}
		f := MustOpenServer(t, func(c *web.Config) { c.PublicURL, c.TLS, c.ACMECARoot = "", "local", empty })
		err := f.Listen()
		if want := "acme-ca-root: " + empty + " holds no PEM certificate"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
	})
	t.Run("tls", func(t *testing.T) {
		f := MustOpenServer(t, func(c *web.Config) { c.PublicURL, c.TLS = "", "files" }) // no cert or key file
		err := f.Listen()
		var se *web.SettingError
		if !errors.As(err, &se) || se.Setting != "tls files" {
			t.Errorf("err = %v, want a SettingError for tls files", err)
		}
	})
	t.Run("no MCP server", func(t *testing.T) {
		if _, err := web.New(web.Config{}); err == nil {
			t.Error("New without an MCP server succeeded")
		}
	})
}

// TestNew_GeneratedPassword: without a configured password, the generated one is shown once on
// Stderr with the login name and the file that keeps its hash.
func TestNew_GeneratedPassword(t *testing.T) {
	var stderr strings.Builder
	f := MustOpenServer(t, func(c *web.Config) {
		c.OAuth.Password = ""
		c.Stderr = &stderr
	})
	for _, want := range []string{"no OWNSONA_LOGIN_PASSWORD was set", "username:  " + f.Auth().Username(), f.db.Path()} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestNew_GeneratedPasswordNotice (issue 30, item 2): the notice names the file by its absolute
// path, also when it was opened by a relative one, and the console's address when there is one.
func TestNew_GeneratedPasswordNotice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	db := kvtest.OpenFile(t, "rel.db", kv.Options{})
	var stderr strings.Builder
	mcp, _ := newMCP()
	s, err := web.New(web.Config{OAuth: oauth.Config{DB: db}, PublicURL: testPublicURL, MCP: mcp, Stderr: &stderr,
		Console: http.NotFoundHandler()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, want := range []string{"stored in " + filepath.Join(dir, "rel.db") + ".", "console (" + testPublicURL + "/console)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestHandler_Panics: Handler needs the authorization server.
func TestHandler_Panics(t *testing.T) {
	f := MustOpenServer(t, func(c *web.Config) { c.PublicURL = "" })
	defer func() {
		if recover() == nil {
			t.Error("Handler without an authorization server did not panic")
		}
	}()
	f.Handler()
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "[::1]": true,
		"mem.example.com": false, "192.168.1.5": false, "": false, "localhost.evil.com": false, "[::2]": false,
	} {
		if got := web.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestServer_OnRequest: every request is reported once with its path's class, never the path,
// and its status; /metrics is mounted only when a handler is given.
func TestServer_OnRequest(t *testing.T) {
	type seen struct {
		route  string
		status int
	}
	var mu sync.Mutex
	var got []seen
	report := func(c *web.Config) {
		c.OnRequest = func(route string, status int) { mu.Lock(); got = append(got, seen{route, status}); mu.Unlock() }
	}
	tests := []struct {
		name, method, path string
		host               string
		metrics            bool
		want               seen
	}{
		{"health", "GET", "/health", "", false, seen{"health", 200}},
		{"mcp without a token", "POST", "/mcp", "", false, seen{"mcp", 401}},
		{"alias", "POST", "/api/mcp", "", false, seen{"mcp", 401}},
		{"oauth metadata", "GET", "/.well-known/oauth-authorization-server", "", false, seen{"oauth", 200}},
		{"server card", "GET", "/.well-known/mcp/server-card.json", "", false, seen{"discovery", 200}},
		{"unknown path", "GET", "/secret/text/here", "", false, seen{"other", 404}},
		{"wrong host", "GET", "/health", "evil.example", false, seen{"health", 421}},
		{"metrics off", "GET", "/metrics", "", false, seen{"metrics", 404}},
		{"metrics on", "GET", "/metrics", "", true, seen{"metrics", 299}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = nil
			opts := []func(*web.Config){report}
			if tt.metrics {
				opts = append(opts, func(c *web.Config) {
					c.Metrics = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
				})
			}
			f := MustOpenServer(t, opts...)
			r := httptest.NewRequest(tt.method, testPublicURL+tt.path, strings.NewReader(`{}`))
			if tt.host != "" {
				r.Host = tt.host
			}
			rec := httptest.NewRecorder()
			f.Handler().ServeHTTP(rec, r)
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("OnRequest was told %v, want [%v] (status %d)", got, tt.want, rec.Code)
			}
		})
	}
}
