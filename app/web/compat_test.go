package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/ownsona/ownsona/app/limit"
	"github.com/ownsona/ownsona/app/web"
)

// TestServer_Compat pins the HTTP side of the compatibility modes (issue 27, item 7) through the
// real handler: each mode on (at start through Config.Compat, or at run time through SetCompat)
// and off, where the default surface stays as it was.
func TestServer_Compat(t *testing.T) {
	on := func(c web.Compat) func(*web.Config) { return func(cfg *web.Config) { cfg.Compat = c } }
	set := func(c web.Compat) func(*fixture) { return func(f *fixture) { f.SetCompat(c) } }
	// Argument tokens cross the network only over TLS: the test's requests come from a trusted
	// proxy that says so.
	behindTLS := func(cfg *web.Config) { cfg.TrustedProxies = []string{"192.0.2.0/24"} }
	https := map[string]string{"X-Forwarded-Proto": "https"}
	withArgToken := func(f *fixture) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello","access_token":"` + f.read + `"}}}`
	}
	limited := func(cfg *web.Config) { cfg.Limiter = limit.New(limit.Config{PerMinute: 1, Burst: 1, Now: cfg.Now}) }
	both := func(fs ...func(*web.Config)) func(*web.Config) {
		return func(c *web.Config) {
			for _, f := range fs {
				f(c)
			}
		}
	}
	// seedRetry checks seed 003's 429: retry_after is the Retry-After header, and the description
	// says it in words.
	seedRetry := func(t *testing.T, rec *httptest.ResponseRecorder) {
		var body struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
			RetryAfter  int    `json:"retry_after"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("body %s: %v", rec.Body, err)
		}
		if hdr := rec.Header().Get("Retry-After"); body.RetryAfter < 1 || strconv.Itoa(body.RetryAfter) != hdr {
			t.Errorf("retry_after = %d, Retry-After = %q", body.RetryAfter, hdr)
		}
		if want := fmt.Sprintf("Too many requests. Please wait %d seconds.", body.RetryAfter); body.Description != want {
			t.Errorf("error_description = %q, want %q", body.Description, want)
		}
	}
	tests := []scenario{
		// once: tokens in tool arguments.
		{
			name: "once off: an argument token is refused", method: "POST", url: "/api/mcp", config: behindTLS, headers: https,
			bodyFor: withArgToken, wantStatus: http.StatusUnauthorized,
			wantBody: []string{`"jsonrpc":"2.0"`, "OWNSONA_COMPAT=once"},
		},
		{
			name: "once on: an argument token is accepted", method: "POST", url: "/api/mcp", config: both(behindTLS, on(web.Compat{ONCE: true})),
			headers: https, bodyFor: withArgToken, wantStatus: http.StatusOK,
			wantBody: []string{`"id":7`, `"structuredContent":{"text":"hello"}`},
		},
		{
			name: "once switched on at run time", method: "POST", url: "/api/mcp", config: behindTLS, before: set(web.Compat{ONCE: true}),
			headers: https, bodyFor: withArgToken, wantStatus: http.StatusOK,
			wantBody: []string{`"structuredContent":{"text":"hello"}`},
		},
		{
			name: "once switched off at run time", method: "POST", url: "/api/mcp", config: both(behindTLS, on(web.Compat{ONCE: true})),
			before: set(web.Compat{}), headers: https, bodyFor: withArgToken, wantStatus: http.StatusUnauthorized,
		},
		{
			name: "once on: still never over plain HTTP from another machine", method: "POST", url: "/api/mcp",
			config: on(web.Compat{ONCE: true}), bodyFor: withArgToken, wantStatus: http.StatusUnauthorized,
			wantBody: []string{"plain HTTP"},
		},
		// once: the server card.
		{
			name: "once off: the card as it was", method: "GET", url: "/.well-known/mcp/server-card.json",
			wantStatus: http.StatusOK, wantBody: []string{`"remotes"`},
			wantNoBody: []string{`"transport"`, `"protocolVersion"`, `"capabilities"`},
		},
		{
			name: "once on: ONCE's card fields beside ours", method: "GET", url: "/.well-known/mcp/server-card.json",
			config:     on(web.Compat{ONCE: true}),
			wantStatus: http.StatusOK,
			wantBody: []string{`"remotes"`, `"transport":{"type":"streamable-http"}`, `"protocolVersion":"2024-11-05"`,
				`"capabilities":{"resources":{"listChanged":false},"tools":{"listChanged":false}}`},
		},
		{
			name: "once on: listChanged says what initialize says", method: "GET", url: "/.well-known/mcp/server-card.json",
			config:     func(c *web.Config) { c.Compat.ONCE = true; c.MCP.ListChanged = []string{"tools", "resources"} },
			wantStatus: http.StatusOK,
			wantBody:   []string{`"capabilities":{"resources":{"listChanged":true},"tools":{"listChanged":true}}`},
		},
		// komcp: refusals in seed 003's shape.
		{
			name: "komcp off: 401 is a JSON-RPC error", method: "POST", url: "/mcp", body: callEcho,
			wantStatus: http.StatusUnauthorized, wantBody: []string{`"jsonrpc":"2.0"`, `"code":-32600`},
		},
		{
			name: "komcp on: 401 in seed 003's shape", method: "POST", url: "/mcp", body: callEcho, config: on(web.Compat{KOmcp: true}),
			wantStatus: http.StatusUnauthorized,
			wantBody:   []string{`{"error":"unauthorized","error_description":"authorization required: `},
			wantNoBody: []string{"jsonrpc"},
			check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if got := rec.Header().Get("WWW-Authenticate"); got == "" {
					t.Error("no WWW-Authenticate challenge")
				}
			},
		},
		{
			name: "komcp on: 401 for a bad token at an alias", method: "POST", url: "/api/mcp", body: callEcho,
			headers: map[string]string{"Authorization": "Bearer osk_not-a-real-token"}, before: set(web.Compat{KOmcp: true}),
			wantStatus: http.StatusUnauthorized,
			wantBody:   []string{`"error":"unauthorized"`, `"error_description":"the personal access token is unknown, revoked or expired"`},
			wantNoBody: []string{"jsonrpc"},
		},
		{
			name: "komcp off: 403 is a JSON-RPC error", method: "POST", url: "/mcp", bearer: "read", body: callStamp,
			wantStatus: http.StatusForbidden, wantBody: []string{`"jsonrpc":"2.0"`, `"code":-32003`},
		},
		{
			name: "komcp on: 403 in seed 003's shape", method: "POST", url: "/mcp", bearer: "read", body: callStamp,
			config:     on(web.Compat{KOmcp: true}),
			wantStatus: http.StatusForbidden,
			wantBody: []string{`"error":"insufficient_scope"`, `"error_description":"Token lacks required scopes: memories:write"`,
				`"scope":"memories:read memories:write"`},
			wantNoBody: []string{"jsonrpc"},
		},
		{
			name: "komcp off: 429 is JSON-RPC error -32004", method: "POST", url: "/mcp", bearer: "read", body: callEcho, repeat: 1,
			config: limited, wantStatus: http.StatusTooManyRequests, wantBody: []string{`"code":-32004`},
		},
		{
			name: "komcp on: 429 in seed 003's shape", method: "POST", url: "/mcp", bearer: "read", body: callEcho, repeat: 1,
			config: both(limited, on(web.Compat{KOmcp: true})), wantStatus: http.StatusTooManyRequests,
			wantBody: []string{`"error":"rate_limit_exceeded"`}, wantNoBody: []string{"jsonrpc"}, check: seedRetry,
		},
		{
			name: "komcp on: a served call is unchanged", method: "POST", url: "/mcp", bearer: "read", body: callEcho,
			config: on(web.Compat{KOmcp: true}), wantStatus: http.StatusOK, wantBody: []string{`"jsonrpc":"2.0"`, `"structuredContent":{"text":"hello"}`},
		},
		// komcp: the discovery documents (the authorization server's side, switched with web's).
		{
			name: "komcp off: scopes_supported as they were", method: "GET", url: "/.well-known/oauth-protected-resource/api/mcp",
			wantStatus: http.StatusOK, wantNoBody: []string{"mcp:tools:read"},
		},
		{
			name: "komcp switched on at run time: KOmcp's scopes listed", method: "GET", url: "/.well-known/oauth-protected-resource/api/mcp",
			before: set(web.Compat{KOmcp: true}), wantStatus: http.StatusOK,
			wantBody: []string{`"mcp:tools:read"`, `"mcp:tools:execute"`, `"kura:notes:search"`},
		},
		{
			name: "komcp on at start: the authorization server lists them", method: "GET", url: "/.well-known/oauth-authorization-server",
			config: on(web.Compat{KOmcp: true}), wantStatus: http.StatusOK, wantBody: []string{`"kura:notes:search"`},
		},
		// sophon, and the docs page that says what is on.
		{
			name: "docs with no mode on", method: "GET", url: "/docs", wantStatus: http.StatusOK,
			wantBody: []string{"On here: <strong>none</strong>"},
		},
		{
			name: "docs with every mode on", method: "GET", url: "/docs", before: set(web.Compat{ONCE: true, KOmcp: true, Sophon: true}),
			wantStatus: http.StatusOK, wantBody: []string{"On here: <strong>once,komcp,sophon</strong>", "Claude refuses"},
		},
		{
			name: "sophon on: MCP refusals unchanged", method: "POST", url: "/mcp", body: callEcho, config: on(web.Compat{Sophon: true}),
			wantStatus: http.StatusUnauthorized, wantBody: []string{`"code":-32600`},
		},
	}
	for _, sc := range tests {
		t.Run(sc.name, sc.run)
	}
}

// TestServer_SetCompat: the modes switch while requests are served, without a data race (run
// with -race), and Compat reports the last switch.
func TestServer_SetCompat(t *testing.T) {
	f := MustOpenServer(t)
	h := f.Handler()
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 50 {
			f.SetCompat(web.Compat{ONCE: i%2 == 0, KOmcp: i%3 == 0})
		}
	})
	for range 4 {
		wg.Go(func() {
			for range 25 {
				for _, path := range []string{"/mcp", "/.well-known/mcp/server-card.json", "/.well-known/oauth-protected-resource"} {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, testPublicURL+path, nil))
					if rec.Code >= 500 {
						t.Errorf("%s: %d", path, rec.Code)
					}
				}
			}
		})
	}
	wg.Wait()
	want := web.Compat{ONCE: false, KOmcp: false} // i = 49
	if got := f.Compat(); got != want {
		t.Errorf("Compat() = %+v, want %+v", got, want)
	}
	if got := f.Auth().Compat().KOmcp; got != want.KOmcp {
		t.Errorf("the authorization server's komcp = %v, want %v", got, want.KOmcp)
	}
}

func TestCompat_String(t *testing.T) {
	for _, tc := range []struct {
		c    web.Compat
		want string
	}{
		{web.Compat{}, "none"},
		{web.Compat{KOmcp: true}, "komcp"},
		{web.Compat{ONCE: true, Sophon: true}, "once,sophon"},
	} {
		if got := tc.c.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.c, got, tc.want)
		}
	}
}
