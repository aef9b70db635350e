package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ownsona/ownsona/oauth/cimd"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// Fuzz targets for the parsers at the trust boundary (STYLE.md 20): the registration body, the
// authorization request's query and the token endpoint's form. Their seeds run in `go test`.

// FuzzRegistration: parseRegistration never panics, and what it accepts is safe to store: one to
// maxRedirectURIs redirect URIs that policy.ValidateRedirectURI accepts (and, with an allowlist,
// only allowed https hosts), and a client_name that cimd.CheckClientName accepts.
func FuzzRegistration(f *testing.F) {
	for _, s := range []string{
		`{"redirect_uris":["https://client.example/cb"]}`,
		`{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","scope":"memories:read memories:write"}`,
		`{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback"],"token_endpoint_auth_method":"client_secret_basic"}`,
		`{"client_name":"MCP Inspector","redirect_uris":["http://localhost:6274/oauth/callback","http://127.0.0.1:6274/oauth/callback/debug"]}`,
		`{"redirect_uris":["http://[::1]:33418/callback"],"client_name":null,"grant_types":null}`,
		`{"client_id":"https://evil.example/c.json","client_secret":"x","redirect_uris":["com.example.app:/oauth"]}`,
		`{"redirect_uris":["javascript:alert(1)"]}`,
		`{"redirect_uris":["https://claude.ai@evil.example/cb"]}`,
		`{"redirect_uris":["https://client.example/cb#"]}`,
		`{"redirect_uris":["https://client.example/a/../cb"]}`,
		`{"redirect_uris":["https://client.example/%2e%2e/cb"]}`,
		`{"redirect_uris":["HTTPS://CLIENT.EXAMPLE/cb"]}`,
		`{"redirect_uris":["https://claude.ai.evil.example/cb","https://claude.ai:443/cb"]}`,
		`{"client_name":"Cla\u202eude","redirect_uris":["https://client.example/cb"]}`,
		`{"client_name":"\ud800","redirect_uris":["https://client.example/cb"]}`,
		`{"redirect_uris":["https://client.example/cb"],"redirect_uris":["https://evil.example/cb"]}`,
		`{"redirect_uris":["https://client.example/cb"],"grant_types":["client_credentials"]}`,
		`{"redirect_uris":[1,2]}`,
		`{"redirect_uris":[]}`,
		`[]`,
		`null`,
		`{}`,
		"{\"redirect_uris\":[\"https://client.example/\xff\"]}",
		``,
	} {
		f.Add([]byte(s))
	}
	open := MustOpenServer(f)
	allow := MustOpenServer(f, func(c *Config) { c.RedirectHosts = []string{"claude.ai"} })
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, fx := range []*fixture{open, allow} {
			meta, err := fx.s.parseRegistration(body)
			if err != nil {
				if code := policy.CodeOf(err); code != policy.CodeInvalidClientMetadata && code != policy.CodeInvalidRedirectURI {
					t.Fatalf("error code %q: %v", code, err)
				}
				continue
			}
			if !json.Valid(body) {
				t.Fatalf("accepted invalid JSON %q", body)
			}
			if n := len(meta.RedirectURIs); n == 0 || n > maxRedirectURIs {
				t.Fatalf("accepted %d redirect URIs", n)
			}
			for _, u := range meta.RedirectURIs {
				if err := policy.ValidateRedirectURI(u, fx.s.cfg.CustomSchemes); err != nil {
					t.Fatalf("accepted redirect URI %q: %v", u, err)
				}
				if len(fx.s.cfg.RedirectHosts) > 0 && strings.HasPrefix(u, "https://") {
					if p, err := url.Parse(u); err != nil || p.Hostname() != "claude.ai" {
						t.Fatalf("accepted %q outside the allowlist", u)
					}
				}
			}
			if why := cimd.CheckClientName(meta.Name); why != "" || !utf8.ValidString(meta.Name) {
				t.Fatalf("accepted client_name %q: %s", meta.Name, why)
			}
		}
	})
}

// FuzzAuthorizeQuery: authorizationRequest never panics, refuses with 400, and what it accepts is
// bound to a registered client and one of its redirect URIs, with a valid S256 challenge, known
// scopes and our resource — exactly what a strict parse of the query says. CLIENT_ONE and
// CLIENT_MANY in the input stand for the two registered clients.
func FuzzAuthorizeQuery(f *testing.F) {
	fx := MustOpenServer(f, func(c *Config) { c.MetadataHosts, c.Resolver = []string{}, &countingResolver{} })
	one := fx.MustRegister(f, "One", testRedirect)
	many := fx.MustRegister(f, "Many", "http://127.0.0.1/callback", "cursor://anysphere.cursor-mcp/oauth/callback",
		"https://client.example/cb?x=1")
	expand := strings.NewReplacer("CLIENT_ONE", one, "CLIENT_MANY", many)
	const ch = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM" // RFC 7636 Appendix B
	for _, s := range []string{
		authQuery("CLIENT_ONE", testRedirect, ch),
		authQuery("CLIENT_ONE", "", ch, "resource", "", "state", "", "scope", "memories:read"),
		authQuery("CLIENT_MANY", "http://127.0.0.1:49152/callback", ch, "scope", "memories:write memories:read"),
		authQuery("CLIENT_MANY", "http://localhost:49152/callback", ch),
		authQuery("CLIENT_MANY", "cursor://anysphere.cursor-mcp/oauth/callback", ch, "resource", "HTTPS://MEM.EXAMPLE.COM:443/mcp"),
		authQuery("CLIENT_MANY", "https://client.example/cb?x=1", ch, "prompt", "consent"),
		authQuery("CLIENT_MANY", "", ch),
		authQuery("CLIENT_ONE", testRedirect, ch, "response_type", "token"),
		authQuery("CLIENT_ONE", testRedirect, ch, "code_challenge_method", "plain"),
		authQuery("CLIENT_ONE", testRedirect, ch, "prompt", "none"),
		authQuery("CLIENT_ONE", testRedirect, ch, "resource", "https://other.example/mcp"),
		authQuery("https://claude.ai/oauth/client.json", "https://claude.ai/api/mcp/auth_callback", ch),
		authQuery("CLIENT_ONE", testRedirect, ch) + "&client_id=CLIENT_MANY",
		authQuery("CLIENT_ONE", testRedirect, ch) + ";client_id=CLIENT_MANY",
		"response_type=code&client_id=CLIENT_ONE&code_challenge=" + ch + "&code_challenge_method=S256&x=%zz",
		"client_id=CLIENT_ONE&client_id%00=CLIENT_MANY&response_type=code+&code_challenge=" + ch + "&code_challenge_method=S256",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		raw = expand.Replace(raw)
		req, status, err := fx.s.authorizationRequest(context.Background(), raw)
		if err != nil {
			if status != http.StatusBadRequest || policy.CodeOf(err) == policy.CodeServerError {
				t.Fatalf("refused with %d %v", status, err)
			}
			return
		}
		c, err := fx.s.Grants().Client(req.ClientID)
		if err != nil {
			t.Fatalf("accepted client %q: %v", req.ClientID, err)
		}
		if !slices.ContainsFunc(c.RedirectURIs, func(reg string) bool { return policy.MatchRedirectURI(reg, req.RedirectURI) }) {
			t.Fatalf("accepted redirect URI %q, registered %q", req.RedirectURI, c.RedirectURIs)
		}
		if err := policy.ValidateChallenge(req.CodeChallenge, policy.MethodS256); err != nil {
			t.Fatalf("accepted challenge %q: %v", req.CodeChallenge, err)
		}
		if req.Resource != testResource {
			t.Fatalf("accepted resource %q", req.Resource)
		}
		if len(req.Scope) == 0 || slices.ContainsFunc(req.Scope, func(s string) bool { return s != policy.ScopeRead && s != policy.ScopeWrite }) {
			t.Fatalf("accepted scope %q", req.Scope)
		}
		p, err := policy.ParseForm(raw, policy.AuthorizeParams)
		if err != nil {
			t.Fatalf("accepted a query that does not parse: %v", err)
		}
		if p["client_id"] != req.ClientID || p["state"] != req.State || p["code_challenge"] != req.CodeChallenge ||
			p["response_type"] != "code" || p["code_challenge_method"] != policy.MethodS256 || p["prompt"] == "none" ||
			(p["redirect_uri"] != "" && p["redirect_uri"] != req.RedirectURI) {
			t.Fatalf("accepted %+v from %v", req, p)
		}
	})
}

// FuzzTokenRequest: whatever is POSTed to /oauth/token (with or without HTTP Basic), the answer is
// never 5xx and always a no-store JSON object holding either an access token (200) or an OAuth
// error. CLIENT, CODE/VERIFIER, CODE2/VERIFIER2 and RTOKEN stand for a registered client, an
// exchanged and an unused code with their verifiers, and a live refresh token.
func FuzzTokenRequest(f *testing.F) {
	fx := MustOpenServer(f)
	// The codes come straight from the grant store, as the owner's consent issues them: a fuzz
	// target cannot run in a synctest bubble, and outside one the consent would wait a second.
	client := fx.MustRegister(f, "Fuzz", testRedirect)
	a, a2 := fx.mustIssueCode(f, client), fx.mustIssueCode(f, client)
	tk := fx.MustExchange(f, a)
	expand := strings.NewReplacer("CLIENT", a.client, "CODE2", a2.code, "CODE", a.code,
		"VERIFIER2", a2.verifier, "VERIFIER", a.verifier, "RTOKEN", tk.RT)
	redirect := url.QueryEscape(testRedirect)
	for _, s := range []struct{ body, basic string }{
		{"grant_type=authorization_code&code=CODE2&code_verifier=VERIFIER2&client_id=CLIENT&redirect_uri=" + redirect, ""},
		{"grant_type=authorization_code&code=CODE2&code_verifier=VERIFIER2&resource=https%3A%2F%2Fmem.example.com%2Fmcp", "CLIENT"},
		{"grant_type=authorization_code&code=CODE&code_verifier=VERIFIER&client_id=CLIENT", ""},
		{"grant_type=authorization_code&code=CODE2&code_verifier=VERIFIER&client_id=CLIENT", ""},
		{"grant_type=refresh_token&refresh_token=RTOKEN&client_id=CLIENT", ""},
		{"grant_type=refresh_token&refresh_token=RTOKEN&client_id=CLIENT&scope=memories%3Aread", ""},
		{"grant_type=refresh_token&refresh_token=RTOKEN&scope=admin", "CLIENT"},
		{"grant_type=refresh_token&refresh_token=RTOKEN&client_id=CLIENT&resource=https%3A%2F%2Fother.example%2Fmcp", ""},
		{"grant_type=refresh_token&refresh_token=RTOKEN&client_id=cl_other", "CLIENT"},
		{"grant_type=password&username=owner&password=x&client_id=CLIENT", ""},
		{"grant_type=client_credentials&client_id=CLIENT&client_secret=s", ""},
		{"grant_type=refresh_token&grant_type=refresh_token&refresh_token=RTOKEN&client_id=CLIENT", ""},
		{"grant_type=refresh_token&refresh_token=%zz&client_id=CLIENT", ""},
		{"grant_type=refresh_token;refresh_token=RTOKEN&client_id=CLIENT", ""},
		{"grant_type=refresh_token&refresh_token=RTOKEN&client_id=CLIENT&resource=%2Fmcp", ""},
		{"grant_type=authorization_code&code=CODE2&code_verifier=VERIFIER2&client_id=CLIENT&redirect_uri=" + redirect + "%2F", ""},
		{"grant_type=authorization_code&code=&code_verifier=&client_id=", "%zz"},
		{"", ""},
		{"&&&=&=", ":"},
		{strings.Repeat("a=b&", 5000), ""},
	} {
		f.Add(s.body, s.basic)
	}
	f.Fuzz(func(t *testing.T, body, basic string) {
		r := httptest.NewRequest(http.MethodPost, "/oauth/token", strings.NewReader(expand.Replace(body)))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic != "" {
			r.SetBasicAuth(expand.Replace(basic), "")
		}
		w := fx.serve(r)
		if w.Code >= 500 {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		if w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("headers %v", w.Header())
		}
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatalf("body %q: %v", w.Body, err)
		}
		at, hasAT := m["access_token"].(string)
		code, hasErr := m["error"].(string)
		if w.Code == http.StatusOK {
			fx.keep(at)
			rt, _ := m["refresh_token"].(string)
			fx.keep(rt)
			if !hasAT || hasErr || m["token_type"] != "Bearer" || !strings.HasPrefix(rt, token.PrefixRefresh) {
				t.Fatalf("200 with %v", m)
			}
			if _, err := fx.s.Keys().Verify(at, token.Expect{Issuer: testPublicURL, Audience: testResource}); err != nil {
				t.Fatalf("issued an access token that does not verify: %v", err)
			}
			return
		}
		known := []string{policy.CodeInvalidRequest, policy.CodeInvalidClient, policy.CodeInvalidGrant, policy.CodeUnsupportedGrantType,
			policy.CodeInvalidScope, policy.CodeInvalidTarget}
		if hasAT || !hasErr || !slices.Contains(known, code) {
			t.Fatalf("%d with %v", w.Code, m)
		}
		if (code == policy.CodeInvalidClient) != (w.Code == http.StatusUnauthorized) || w.Code != http.StatusUnauthorized && w.Code != http.StatusBadRequest {
			t.Fatalf("%d with %v", w.Code, m)
		}
	})
}

// mustIssueCode issues a code for client at testRedirect with the default scopes, as the owner's
// consent does, without the browser.
func (f *fixture) mustIssueCode(tb testing.TB, client string) authz {
	tb.Helper()
	v := newVerifier()
	code, err := f.s.Grants().IssueCode(grant.CodeRequest{ClientID: client, RedirectURI: testRedirect, Challenge: policy.ChallengeS256(v),
		Resource: f.s.ep.Resource, Scope: policy.DefaultScopes, Subject: DefaultUsername})
	if err != nil {
		tb.Fatal(err)
	}
	f.keep(v, code)
	return authz{client: client, redirect: testRedirect, verifier: v, code: code}
}
