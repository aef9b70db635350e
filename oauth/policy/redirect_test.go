package policy

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestMatchRedirectURI_Table(t *testing.T) {
	tests := []struct {
		name       string
		registered string
		requested  string
		want       bool
	}{
		// Accepted: exact matches of what real clients register.
		{"claude.ai callback", "https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback", true},
		{"claude.com callback", "https://claude.com/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback", true},
		{"chatgpt platform callback", "https://chatgpt.com/connector_platform_oauth_redirect", "https://chatgpt.com/connector_platform_oauth_redirect", true},
		{"chatgpt connector callback", "https://chatgpt.com/connector/oauth/abc123", "https://chatgpt.com/connector/oauth/abc123", true},
		{"cursor callback", "cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp/oauth/callback", true},
		{"loopback 127.0.0.1 same port", "http://127.0.0.1:3335/callback", "http://127.0.0.1:3335/callback", true},
		{"loopback 127.0.0.1 other port", "http://127.0.0.1:3335/callback", "http://127.0.0.1:49150/callback", true},
		{"loopback localhost other port", "http://localhost:8080/oauth/callback", "http://localhost:33418/oauth/callback", true},
		{"loopback ipv6 other port", "http://[::1]:8080/cb", "http://[::1]:9090/cb", true},
		{"loopback registered without port", "http://127.0.0.1/callback", "http://127.0.0.1:51234/callback", true},
		{"loopback requested without port", "http://localhost:51234/callback", "http://localhost/callback", true},
		{"loopback same query other port", "http://127.0.0.1:1/cb?a=1&b=2", "http://127.0.0.1:2/cb?a=1&b=2", true},
		{"https with query exact", "https://app.example/cb?x=1", "https://app.example/cb?x=1", true},

		// Refused (AS-01).
		{"trailing slash added", "https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback/", false},
		{"trailing slash removed", "https://app.example/cb/", "https://app.example/cb", false},
		{"host case", "https://claude.ai/api/mcp/auth_callback", "https://Claude.ai/api/mcp/auth_callback", false},
		{"path case", "https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/Auth_Callback", false},
		{"query added", "https://app.example/cb", "https://app.example/cb?x=1", false},
		{"query removed", "https://app.example/cb?x=1", "https://app.example/cb", false},
		{"query reordered", "https://app.example/cb?a=1&b=2", "https://app.example/cb?b=2&a=1", false},
		{"loopback query added", "http://127.0.0.1:3000/cb", "http://127.0.0.1:4000/cb?evil=1", false},
		{"loopback query removed", "http://127.0.0.1:3000/cb?a=1", "http://127.0.0.1:4000/cb", false},
		{"loopback query reordered", "http://localhost:3000/cb?a=1&b=2", "http://localhost:4000/cb?b=2&a=1", false},
		{"fragment added", "https://app.example/cb", "https://app.example/cb#frag", false},
		{"loopback fragment added", "http://127.0.0.1:3000/cb", "http://127.0.0.1:4000/cb#x", false},
		{"userinfo trick", "https://claude.ai/api/mcp/auth_callback", "https://claude.ai@evil.example/api/mcp/auth_callback", false},
		{"loopback userinfo trick", "http://127.0.0.1:3000/cb", "http://127.0.0.1:4000@evil.example/cb", false},
		{"dot-dot-semicolon", "https://app.example/cb", "https://app.example/cb/..;/evil", false},
		{"dot-dot segment", "https://app.example/cb", "https://app.example/cb/../evil", false},
		{"encoded dot-dot", "https://app.example/cb", "https://app.example/cb/%2e%2e/evil", false},
		{"loopback dot-dot port change", "http://127.0.0.1:3000/cb", "http://127.0.0.1:4000/cb/../cb", false},
		{"localhost.evil.example", "http://localhost:3000/cb", "http://localhost.evil.example:3000/cb", false},
		{"127.0.0.1.nip.io", "http://127.0.0.1:3000/cb", "http://127.0.0.1.nip.io:3000/cb", false},
		{"https to http", "https://app.example/cb", "http://app.example/cb", false},
		{"http to https loopback", "http://127.0.0.1:3000/cb", "https://127.0.0.1:3000/cb", false},
		{"port change non-loopback", "https://app.example:8443/cb", "https://app.example:9443/cb", false},
		{"port added non-loopback", "https://claude.ai/api/mcp/auth_callback", "https://claude.ai:8443/api/mcp/auth_callback", false},
		{"localhost to 127.0.0.1", "http://localhost:3000/cb", "http://127.0.0.1:3000/cb", false},
		{"127.0.0.1 to localhost", "http://127.0.0.1:3000/cb", "http://localhost:4000/cb", false},
		{"127.0.0.1 to ::1", "http://127.0.0.1:3000/cb", "http://[::1]:3000/cb", false},
		{"loopback path change", "http://127.0.0.1:3000/cb", "http://127.0.0.1:4000/cb2", false},
		{"loopback host case", "http://localhost:3000/cb", "http://LOCALHOST:4000/cb", false},
		{"loopback trailing dot host", "http://localhost:3000/cb", "http://localhost.:4000/cb", false},
		{"loopback bad port", "http://127.0.0.1:3000/cb", "http://127.0.0.1:99999/cb", false},
		{"loopback leading zero port", "http://127.0.0.1:3000/cb", "http://127.0.0.1:03000/cb", false},
		{"loopback empty port", "http://127.0.0.1:3000/cb", "http://127.0.0.1:/cb", false},
		{"percent-encoded path", "https://app.example/cb", "https://app.example/%63b", false},
		{"other host", "https://claude.ai/api/mcp/auth_callback", "https://evil.example/api/mcp/auth_callback", false},
		{"cursor other host", "cursor://anysphere.cursor-mcp/oauth/callback", "cursor://evil/oauth/callback", false},
		{"empty requested", "https://app.example/cb", "", false},
		{"empty both", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := MatchRedirectURI(tt.registered, tt.requested); got != tt.want {
				t.Errorf("MatchRedirectURI(%q, %q) = %v, want %v", tt.registered, tt.requested, got, tt.want)
			}
		})
	}
}

func TestValidateRedirectURI_Table(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		custom  []string
		wantErr string // substring of the description; "" means accepted
	}{
		{"claude.ai", "https://claude.ai/api/mcp/auth_callback", nil, ""},
		{"claude.com", "https://claude.com/api/mcp/auth_callback", nil, ""},
		{"chatgpt platform", "https://chatgpt.com/connector_platform_oauth_redirect", nil, ""},
		{"chatgpt connector", "https://chatgpt.com/connector/oauth/abc_123", nil, ""},
		{"loopback 127.0.0.1", "http://127.0.0.1:3335/callback", nil, ""},
		{"loopback localhost", "http://localhost:49150/oauth/callback", nil, ""},
		{"loopback ipv6", "http://[::1]:8080/cb", nil, ""},
		{"loopback no port", "http://127.0.0.1/callback", nil, ""},
		{"https with port and query", "https://app.example:8443/cb?tenant=a", nil, ""},
		{"https ip", "https://192.0.2.1/cb", nil, ""},
		{"cursor default", "cursor://anysphere.cursor-mcp/oauth/callback", DefaultCustomSchemes, ""},
		{"reverse-dns scheme", "com.example.app:/oauth2redirect", nil, ""},
		{"listed scheme one slash", "myapp:/cb", []string{"myapp"}, ""},
		{"https root", "https://app.example", nil, ""},

		{"empty", "", nil, "is empty"},
		{"too long", "https://app.example/" + strings.Repeat("a", 2030), nil, "longer than 2048"},
		{"javascript", "javascript:alert(1)", nil, "scheme javascript"},
		{"javascript listed", "javascript://x/%0aalert(1)", []string{"javascript"}, "encoded control"},
		{"javascript listed no escape", "javascript://x/alert(1)", []string{"javascript"}, "scheme javascript"},
		{"data", "data:text/html,hi", nil, "scheme data"},
		{"file", "file:///etc/passwd", nil, "scheme file"},
		{"vbscript", "vbscript:msgbox(1)", nil, "scheme vbscript"},
		{"uppercase javascript", "JavaScript:alert(1)", nil, "lowercase"},
		{"http non-loopback", "http://example.com/cb", nil, "loopback"},
		{"http localhost.evil", "http://localhost.evil.example/cb", nil, "loopback"},
		{"http nip.io", "http://127.0.0.1.nip.io/cb", nil, "loopback"},
		{"http 127.0.0.2", "http://127.0.0.2/cb", nil, "loopback"},
		{"fragment", "https://x/cb#f", nil, "fragment"},
		{"empty fragment", "https://x/cb#", nil, "fragment"},
		{"wildcard host", "https://*.example.com/cb", nil, "wildcard"},
		{"wildcard path", "https://app.example/*", nil, "wildcard"},
		{"wildcard port", "http://localhost:*/callback", nil, "wildcard"},
		{"custom without dot", "myapp:/cb", nil, "scheme myapp"},
		{"custom without dot default list", "myapp://cb", DefaultCustomSchemes, "scheme myapp"},
		{"userinfo", "https://claude.ai@evil.example/cb", nil, "userinfo"},
		{"userinfo loopback", "http://localhost@evil.example/cb", nil, "userinfo"},
		{"dot-dot", "https://app.example/a/../cb", nil, "dot segments"},
		{"dot", "https://app.example/a/./cb", nil, "dot segments"},
		{"encoded dot-dot", "https://app.example/a/%2e%2e/cb", nil, "dot segments"},
		{"encoded dot-dot upper", "https://app.example/a/%2E%2E/cb", nil, "dot segments"},
		{"dot-dot-semicolon", "https://app.example/a/..;/cb", nil, "dot segments"},
		{"trailing dot-dot", "https://app.example/a/..", nil, "dot segments"},
		{"encoded slash", "https://app.example/a%2f..%2fcb", nil, "encoded slash"},
		{"backslash", `https://app.example\@evil.example/cb`, nil, "backslash"},
		{"newline", "https://app.example/cb\n", nil, "control"},
		{"tab", "https://app.example/\tcb", nil, "control"},
		{"nul encoded", "https://app.example/cb%00", nil, "encoded control"},
		{"space", "https://app.example/c b", nil, "spaces"},
		{"non-ascii", "https://app.example/cb\u00e9", nil, "non-ASCII"},
		{"bad escape", "https://app.example/cb%zz", nil, "percent-encoding"},
		{"truncated escape", "https://app.example/cb%2", nil, "percent-encoding"},
		{"relative", "/callback", nil, "absolute"},
		{"no scheme", "app.example/cb", nil, "absolute"},
		{"https no host", "https:///cb", nil, "host"},
		{"https single slash", "https:/cb", nil, "host"},
		{"opaque", "com.example.app:cb", nil, "hierarchical"},
		{"uppercase scheme", "HTTPS://app.example/cb", nil, "lowercase"},
		{"uppercase host", "https://App.example/cb", nil, "host must be lowercase"},
		{"empty port", "https://app.example:/cb", nil, "empty port"},
		{"port zero", "http://127.0.0.1:0/cb", nil, "invalid port"},
		{"port too big", "http://127.0.0.1:65536/cb", nil, "invalid port"},
		{"port not numeric", "https://app.example:ab/cb", nil, "invalid port"},
		{"encoded host", "https://app%2eexample/cb", nil, "invalid host"},
		{"bracket in path", "https://app.example/[x]", nil, "'['"},
		{"angle bracket", "https://app.example/<script>", nil, "not allowed in a URI"},
		{"ws", "ws://localhost/cb", nil, "scheme ws"},
		{"http listed as custom", "http://example.com/cb", []string{"http"}, "loopback"},
		{"custom no path", "com.example.app:", nil, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRedirectURI(tt.raw, tt.custom)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateRedirectURI(%q) = %v, want nil", tt.raw, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ValidateRedirectURI(%q) = nil, want error containing %q", tt.raw, tt.wantErr)
			}
			var oe *OAuthError
			if !errors.As(err, &oe) || oe.Code != CodeInvalidRedirectURI {
				t.Fatalf("ValidateRedirectURI(%q) = %#v, want code %s", tt.raw, err, CodeInvalidRedirectURI)
			}
			if got := oe.Description; !strings.Contains(got, tt.wantErr) {
				t.Errorf("ValidateRedirectURI(%q) description = %q, want it to contain %q", tt.raw, got, tt.wantErr)
			}
		})
	}
}

// loopbackPortOnly is FuzzRedirectMatch's independent oracle: both URIs are
// http on the same loopback host literal and parse to the same path and raw
// query with no fragment or userinfo.
func loopbackPortOnly(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return false
	}
	host := func(s string) string { // the raw host literal, without port
		h := strings.TrimPrefix(s, "http://")
		if i := strings.IndexAny(h, "/?#"); i >= 0 {
			h = h[:i]
		}
		if strings.HasPrefix(h, "[") {
			return h[:strings.IndexByte(h, ']')+1]
		}
		h, _, _ = strings.Cut(h, ":")
		return h
	}
	ha, hb := host(a), host(b)
	return strings.HasPrefix(a, "http://") && strings.HasPrefix(b, "http://") &&
		ha == hb && (ha == "127.0.0.1" || ha == "[::1]" || ha == "localhost") &&
		ua.User == nil && ub.User == nil && ua.Fragment == "" && ub.Fragment == "" &&
		!strings.Contains(a, "#") && !strings.Contains(b, "#") &&
		ua.EscapedPath() == ub.EscapedPath() && ua.RawQuery == ub.RawQuery && ua.ForceQuery == ub.ForceQuery &&
		strings.TrimPrefix(a[len("http://")+len(ha):], ":"+ua.Port()) == strings.TrimPrefix(b[len("http://")+len(hb):], ":"+ub.Port())
}

func FuzzRedirectMatch(f *testing.F) {
	seeds := [][2]string{
		{"https://claude.ai/api/mcp/auth_callback", "https://claude.ai/api/mcp/auth_callback"},
		{"https://claude.ai/api/mcp/auth_callback", "https://claude.ai@evil.example/api/mcp/auth_callback"},
		{"http://127.0.0.1:3335/callback", "http://127.0.0.1:49150/callback"},
		{"http://127.0.0.1/callback", "http://127.0.0.1:49150/callback?x"},
		{"http://localhost:8080/oauth/callback", "http://localhost.evil.example:8080/oauth/callback"},
		{"http://[::1]:1/cb", "http://[::1]:2/cb"},
		{"http://127.0.0.1:3000/cb", "http://127.0.0.1:4000/cb/..;/x"},
		{"cursor://anysphere.cursor-mcp/oauth/callback", "cursor://anysphere.cursor-mcp/oauth/callback"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, registered, requested string) {
		if !MatchRedirectURI(registered, requested) {
			return
		}
		if registered == requested {
			return
		}
		if !loopbackPortOnly(registered, requested) {
			t.Fatalf("MatchRedirectURI(%q, %q) = true, but they differ in more than a loopback port", registered, requested)
		}
	})
}

func FuzzValidateRedirectURI(f *testing.F) {
	for _, s := range []string{
		"https://claude.ai/api/mcp/auth_callback",
		"http://127.0.0.1:3335/callback",
		"http://[::1]/cb",
		"cursor://anysphere.cursor-mcp/oauth/callback",
		"com.example.app:/cb",
		"javascript:alert(1)",
		"https://x/a/..;/b",
		"https://claude.ai@evil.example/",
		"http://localhost.evil.example/cb",
		"https://x/cb%2e%2e",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if ValidateRedirectURI(raw, DefaultCustomSchemes) != nil {
			return
		}
		if err := ValidateRedirectURI(raw, DefaultCustomSchemes); err != nil {
			t.Fatalf("ValidateRedirectURI(%q) accepted once, then %v", raw, err)
		}
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatalf("accepted %q, but url.Parse: %v", raw, err)
		}
		switch {
		case u.Scheme == "https":
			if u.Host == "" {
				t.Fatalf("accepted https %q without a host", raw)
			}
		case u.Scheme == "http":
			if h := u.Hostname(); h != "127.0.0.1" && h != "::1" && h != "localhost" {
				t.Fatalf("accepted http %q on non-loopback host %q", raw, h)
			}
		case u.Scheme == "cursor" || strings.Contains(u.Scheme, "."):
		default:
			t.Fatalf("accepted %q with scheme %q", raw, u.Scheme)
		}
		if u.User != nil || u.Fragment != "" || strings.ContainsAny(raw, "#*\\") {
			t.Fatalf("accepted %q with userinfo, fragment, wildcard or backslash", raw)
		}
		if refusedSchemes[u.Scheme] {
			t.Fatalf("accepted refused scheme in %q", raw)
		}
		if len(raw) > MaxRedirectURILen {
			t.Fatalf("accepted %d bytes", len(raw))
		}
	})
}
