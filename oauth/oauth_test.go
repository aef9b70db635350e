package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth/login"
)

func TestNewEndpoints(t *testing.T) {
	for _, tc := range []struct{ in, issuer string }{
		{"https://mem.example.com", "https://mem.example.com"},
		{"https://Mem.Example.com/", "https://mem.example.com"},
		{"https://mem.example.com:443", "https://mem.example.com"},
		{"https://mem.example.com:8443", "https://mem.example.com:8443"},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://localhost:3000/", "http://localhost:3000"},
	} {
		ep, err := NewEndpoints(tc.in)
		if err != nil || ep.Issuer != tc.issuer || ep.Resource != tc.issuer+"/mcp" {
			t.Errorf("NewEndpoints(%q) = %+v, %v; want issuer %s", tc.in, ep, err, tc.issuer)
		}
	}
	for _, bad := range []string{
		"", "mem.example.com", "http://mem.example.com", "https://mem.example.com/base",
		"https://user@mem.example.com", "https://mem.example.com?x=1", "https://mem.example.com#f", "ftp://mem.example.com",
	} {
		if _, err := NewEndpoints(bad); err == nil {
			t.Errorf("NewEndpoints(%q) accepted", bad)
		}
	}
}

// TestMetadata_IgnoresHostHeaders is SECURITY.md AS-31 and RS-10: forged Host and
// X-Forwarded-Host headers never change any URL in the documents.
func TestMetadata_IgnoresHostHeaders(t *testing.T) {
	ep, err := NewEndpoints("https://mem.example.com")
	if err != nil {
		t.Fatal(err)
	}
	h := ep.MetadataHandler()
	get := func(path string) map[string]any {
		r := httptest.NewRequest(http.MethodGet, "http://evil.example"+path, nil)
		r.Host = "evil.example"
		r.Header.Set("X-Forwarded-Host", "evil.example")
		r.Header.Set("X-Forwarded-Proto", "http")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Header().Get("Cache-Control"), "max-age") {
			t.Fatalf("%s: %d %v", path, w.Code, w.Header())
		}
		if strings.Contains(w.Body.String(), "evil") {
			t.Errorf("%s reflects the forged host: %s", path, w.Body)
		}
		var doc map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		return doc
	}
	as := get("/.well-known/oauth-authorization-server")
	oidc := get("/.well-known/openid-configuration")
	b1, _ := json.Marshal(as)
	b2, _ := json.Marshal(oidc)
	if string(b1) != string(b2) {
		t.Errorf("openid-configuration differs from oauth-authorization-server")
	}
	want := map[string]any{
		"issuer":                 "https://mem.example.com",
		"authorization_endpoint": "https://mem.example.com/oauth/authorize",
		"token_endpoint":         "https://mem.example.com/oauth/token",
		"registration_endpoint":  "https://mem.example.com/oauth/register",
		"revocation_endpoint":    "https://mem.example.com/oauth/revoke",
		"jwks_uri":               "https://mem.example.com/oauth/jwks.json",
		"authorization_response_iss_parameter_supported": true,
		"client_id_metadata_document_supported":          true,
	}
	for k, v := range want {
		if as[k] != v {
			t.Errorf("%s = %v, want %v", k, as[k], v)
		}
	}
	for k, v := range map[string]string{
		"code_challenge_methods_supported":      `["S256"]`,
		"token_endpoint_auth_methods_supported": `["none"]`,
		"response_types_supported":              `["code"]`,
		"grant_types_supported":                 `["authorization_code","refresh_token"]`,
		"scopes_supported":                      `["memories:read","memories:write","offline_access"]`,
	} {
		if b, _ := json.Marshal(as[k]); string(b) != v {
			t.Errorf("%s = %s, want %s", k, b, v)
		}
	}
	for path, resource := range map[string]string{
		"/.well-known/oauth-protected-resource":          "https://mem.example.com/mcp",
		"/.well-known/oauth-protected-resource/mcp":      "https://mem.example.com/mcp",
		"/.well-known/oauth-protected-resource/api/mcp":  "https://mem.example.com/api/mcp",
		"/.well-known/oauth-protected-resource/mcp/http": "https://mem.example.com/mcp/http",
	} {
		pr := get(path)
		servers, _ := json.Marshal(pr["authorization_servers"])
		if pr["resource"] != resource || string(servers) != `["https://mem.example.com"]` {
			t.Errorf("%s = %v", path, pr)
		}
		// RFC 9728 §2: human-readable documentation, the server's own page; and no
		// resource_signing_alg_values_supported (it is about signed responses, which ownsona
		// does not make).
		if pr["resource_documentation"] != "https://mem.example.com/docs" {
			t.Errorf("%s resource_documentation = %v", path, pr["resource_documentation"])
		}
		if _, ok := pr["resource_signing_alg_values_supported"]; ok {
			t.Errorf("%s lists resource_signing_alg_values_supported", path)
		}
		// offline_access asks the authorization server for refresh tokens; the resource knows
		// only the memories scopes.
		if scopes, _ := json.Marshal(pr["scopes_supported"]); string(scopes) != `["memories:read","memories:write"]` {
			t.Errorf("%s scopes_supported = %s", path, scopes)
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/.well-known/openid-configuration", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST metadata: %d", w.Code)
	}
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers []string
		token   string
		ok, err bool
	}{
		{"none", nil, "", false, false},
		{"bearer", []string{"Bearer abc.def-ghi_jkl~"}, "abc.def-ghi_jkl~", true, false},
		{"case-insensitive scheme", []string{"bearer tok=="}, "tok==", true, false},
		{"basic", []string{"Basic dXNlcjpwYXNz"}, "", true, true},
		{"empty", []string{"Bearer "}, "", true, true},
		{"two headers", []string{"Bearer a", "Bearer b"}, "", true, true},
		{"space inside", []string{"Bearer a b"}, "", true, true},
		{"padding in the middle", []string{"Bearer a=b"}, "", true, true},
		{"too long", []string{"Bearer " + strings.Repeat(".", 1<<20)}, "", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/mcp?access_token=fromquery", nil)
			for _, h := range tc.headers {
				r.Header.Add("Authorization", h)
			}
			tok, ok, err := BearerToken(r)
			if tok != tc.token || ok != tc.ok || (err != nil) != tc.err {
				t.Errorf("got %q %v %v, want %q %v err=%v", tok, ok, err, tc.token, tc.ok, tc.err)
			}
		})
	}
}

func TestEndpoints_Challenge(t *testing.T) {
	ep, _ := NewEndpoints("https://mem.example.com")
	for _, tc := range []struct{ path, errCode, scope, want string }{
		{"/mcp", "", "memories:read memories:write", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp", scope="memories:read memories:write"`},
		{"/mcp", "invalid_token", "", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token"`},
		{"/mcp", "insufficient_scope", "memories:write", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp", scope="memories:write", error="insufficient_scope"`},
		{"/api/mcp", "", "memories:read", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/api/mcp", scope="memories:read"`},
		{"/mcp/http", "invalid_token", "", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp/http", error="invalid_token"`},
		{"/mcp/sse", "", "", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp"`},
		{"/api/mcp/", "", "", `Bearer realm="ownsona", resource_metadata="https://mem.example.com/.well-known/oauth-protected-resource/mcp"`},
	} {
		w := httptest.NewRecorder()
		ep.ChallengeAt(w, tc.path, tc.errCode, tc.scope)
		if got := w.Header().Get("WWW-Authenticate"); got != tc.want {
			t.Errorf("%s: got  %s\nwant %s", tc.path, got, tc.want)
		}
		if tc.path == "/mcp" {
			w := httptest.NewRecorder()
			ep.Challenge(w, tc.errCode, tc.scope)
			if got := w.Header().Get("WWW-Authenticate"); got != tc.want {
				t.Errorf("Challenge: got  %s\nwant %s", got, tc.want)
			}
		}
	}
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Basic x", "Bearer a=b", "Bearer  x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", h)
		tok, _, err := BearerToken(r)
		if err == nil && tok != "" && (!isToken68(tok) || len(tok) > maxBearer || strings.ContainsAny(tok, " \t")) {
			t.Fatalf("accepted %q from %q", tok, h)
		}
	})
}

// TestNew_ShortPlainPassword (issue 13, item 13): a plain-text owner password shorter than 12
// characters is refused at start, with the length and what to do; hashes and longer ones start.
func TestNew_ShortPlainPassword(t *testing.T) {
	hash, err := login.HashPassword("short")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, password string
		ok             bool
	}{
		{"11 characters", "elevenchars", false},
		{"11 characters, not bytes", "ünïcödé pwd", false},
		{"12 characters", "twelve chars", true},
		{"a hash of a short one", hash, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := kvtest.Open(t)
			s, err := New(Config{PublicURL: "https://mem.example.com", DB: db, Password: tc.password})
			if s != nil {
				s.Close()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("New: %v, want ok %v", err, tc.ok)
			}
			if err != nil && (!strings.Contains(err.Error(), "at least 12") || !strings.Contains(err.Error(), "hash-password") || strings.Contains(err.Error(), tc.password)) {
				t.Errorf("error %q: want the rule and the way out, never the password", err)
			}
		})
	}
}

// TestNew_RefreshGrace: the refresh grace window is bounded (SECURITY.md AS-13): at most 30
// minutes, and the error names the setting's bound; zero and negative values start.
func TestNew_RefreshGrace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		grace time.Duration
		ok    bool
	}{
		{"default", 0, true},
		{"off", -1, true},
		{"30 s", 30 * time.Second, true},
		{"30 min", 30 * time.Minute, true},
		{"above 30 min", 30*time.Minute + time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := kvtest.Open(t)
			s, err := New(Config{PublicURL: "https://mem.example.com", DB: db, Password: fastPassword(), RefreshGrace: tc.grace})
			if s != nil {
				s.Close()
			}
			if tc.ok != (err == nil) {
				t.Fatalf("New: %v, want ok %v", err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "grace window") {
				t.Errorf("error %q does not name the grace window", err)
			}
		})
	}
}
