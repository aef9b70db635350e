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
			Name: "once off: an argument token is refused", Method: "POST", URL: "/api/mcp", Config: behindTLS, Headers: https,
			BodyFor: withArgToken, WantStatus: http.StatusUnauthorized,
			WantBody: []string{`"jsonrpc":"2.0"`, "OWNSONA_COMPAT=once"},
		},
		{
			Name: "once on: an argument token is accepted", Method: "POST", URL: "/api/mcp", Config: both(behindTLS, on(web.Compat{ONCE: true})),
			Headers: https, BodyFor: withArgToken, WantStatus: http.StatusOK,
			WantBody: []string{`"id":7`, `"structuredContent":{"text":"hello"}`},
		},
		{
			Name: "once switched on at run time", Method: "POST", URL: "/api/mcp", Config: behindTLS, Before: set(web.Compat{ONCE: true}),
			Headers: https, BodyFor: withArgToken, WantStatus: http.StatusOK,
			WantBody: []string{`"structuredContent":{"text":"hello"}`},
		},
		{
			Name: "once switched off at run time", Method: "POST", URL: "/api/mcp", Config: both(behindTLS, on(web.Compat{ONCE: true})),
			Before: set(web.Compat{}), Headers: https, BodyFor: withArgToken, WantStatus: http.StatusUnauthorized,
		},
		{
			Name: "once on: still never over plain HTTP from another machine", Method: "POST", URL: "/api/mcp",
			Config: on(web.Compat{ONCE: true}), BodyFor: withArgToken, WantStatus: http.StatusUnauthorized,
			WantBody: []string{"plain HTTP"},
		},
		// once: the server card.
		{
			Name: "once off: the card as it was", Method: "GET", URL: "/.well-known/mcp/server-card.json",
			WantStatus: http.StatusOK, WantBody: []string{`"remotes"`},
			WantNoBody: []string{`"transport"`, `"protocolVersion"`, `"capabilities"`},
		},
		{
			Name: "once on: ONCE's card fields beside ours", Method: "GET", URL: "/.well-known/mcp/server-card.json",
			Config:     on(web.Compat{ONCE: true}),
			WantStatus: http.StatusOK,
			WantBody: []string{`"remotes"`, `"transport":{"type":"streamable-http"}`, `"protocolVersion":"2024-11-05"`,
				`"capabilities":{"resources":{"listChanged":false},"tools":{"listChanged":false}}`},
		},
		{
			Name: "once on: listChanged says what initialize says", Method: "GET", URL: "/.well-known/mcp/server-card.json",
			Config:     func(c *web.Config) { c.Compat.ONCE = true; c.MCP.ListChanged = []string{"tools", "resources"} },
			WantStatus: http.StatusOK,
			WantBody:   []string{`"capabilities":{"resources":{"listChanged":true},"tools":{"listChanged":true}}`},
		},
		// komcp: refusals in seed 003's shape.
		{
			Name: "komcp off: 401 is a JSON-RPC error", Method: "POST", URL: "/mcp", Body: callEcho,
			WantStatus: http.StatusUnauthorized, WantBody: []string{`"jsonrpc":"2.0"`, `"code":-32600`},
		},
		{
			Name: "komcp on: 401 in seed 003's shape", Method: "POST", URL: "/mcp", Body: callEcho, Config: on(web.Compat{KOmcp: true}),
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`{"error":"unauthorized","error_description":"authorization required: `},
			WantNoBody: []string{"jsonrpc"},
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if got := rec.Header().Get("WWW-Authenticate"); got == "" {
					t.Error("no WWW-Authenticate challenge")
				}
			},
		},
		{
			Name: "komcp on: 401 for a bad token at an alias", Method: "POST", URL: "/api/mcp", Body: callEcho,
			Headers: map[string]string{"Authorization": "Bearer osk_not-a-real-token"}, Before: set(web.Compat{KOmcp: true}),
			WantStatus: http.StatusUnauthorized,
			WantBody:   []string{`"error":"unauthorized"`, `"error_description":"the personal access token is unknown, revoked or expired"`},
			WantNoBody: []string{"jsonrpc"},
		},
		{
			Name: "komcp off: 403 is a JSON-RPC error", Method: "POST", URL: "/mcp", Request: withRead, Body: callStamp,
			WantStatus: http.StatusForbidden, WantBody: []string{`"jsonrpc":"2.0"`, `"code":-32003`},
		},
		{
			Name: "komcp on: 403 in seed 003's shape", Method: "POST", URL: "/mcp", Request: withRead, Body: callStamp,
			Config:     on(web.Compat{KOmcp: true}),
			WantStatus: http.StatusForbidden,
			WantBody: []string{`"error":"insufficient_scope"`, `"error_description":"Token lacks required scopes: memories:write"`,
				`"scope":"memories:read memories:write"`},
			WantNoBody: []string{"jsonrpc"},
		},
		{
			Name: "komcp off: 429 is JSON-RPC error -32004", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho, Repeat: 1,
			Config: limited, WantStatus: http.StatusTooManyRequests, WantBody: []string{`"code":-32004`},
		},
		{
			Name: "komcp on: 429 in seed 003's shape", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho, Repeat: 1,
			Config: both(limited, on(web.Compat{KOmcp: true})), WantStatus: http.StatusTooManyRequests,
			WantBody: []string{`"error":"rate_limit_exceeded"`}, WantNoBody: []string{"jsonrpc"}, Check: seedRetry,
		},
		{
			Name: "komcp on: a served call is unchanged", Method: "POST", URL: "/mcp", Request: withRead, Body: callEcho,
			Config: on(web.Compat{KOmcp: true}), WantStatus: http.StatusOK, WantBody: []string{`"jsonrpc":"2.0"`, `"structuredContent":{"text":"hello"}`},
		},
		// komcp: the discovery documents (the authorization server's side, switched with web's).
		{
			Name: "komcp off: scopes_supported as they were", Method: "GET", URL: "/.well-known/oauth-protected-resource/api/mcp",
			WantStatus: http.StatusOK, WantNoBody: []string{"mcp:tools:read"},
		},
		{
			Name: "komcp switched on at run time: KOmcp's scopes listed", Method: "GET", URL: "/.well-known/oauth-protected-resource/api/mcp",
			Before: set(web.Compat{KOmcp: true}), WantStatus: http.StatusOK,
			WantBody: []string{`"mcp:tools:read"`, `"mcp:tools:execute"`, `"kura:notes:search"`},
		},
		{
			Name: "komcp on at start: the authorization server lists them", Method: "GET", URL: "/.well-known/oauth-authorization-server",
			Config: on(web.Compat{KOmcp: true}), WantStatus: http.StatusOK, WantBody: []string{`"kura:notes:search"`},
		},
		// sophon, and the docs page that says what is on.
		{
			Name: "docs with no mode on", Method: "GET", URL: "/docs", WantStatus: http.StatusOK,
			WantBody: []string{"On here: <strong>none</strong>"},
		},
		{
			Name: "docs with every mode on", Method: "GET", URL: "/docs", Before: set(web.Compat{ONCE: true, KOmcp: true, Sophon: true}),
			WantStatus: http.StatusOK, WantBody: []string{"On here: <strong>once,komcp,sophon</strong>", "Claude refuses"},
		},
		{
			Name: "sophon on: MCP refusals unchanged", Method: "POST", URL: "/mcp", Body: callEcho, Config: on(web.Compat{Sophon: true}),
			WantStatus: http.StatusUnauthorized, WantBody: []string{`"code":-32600`},
		},
	}
	scenarios.Run(t, tests)
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
