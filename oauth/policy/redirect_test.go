package policy

import (
	"errors"
	"net/netip"
	"net/url"
	"slices"
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
		{"https loopback ipv4", "https://127.0.0.1/cb", nil, ""},
		{"https loopback ipv6", "https://[::1]/cb", nil, ""},
		{"https ipv4-mapped ipv6 in hex", "https://[::ffff:7f00:1]/cb", nil, ""},
		{"https ipv6 compressed", "https://[2001:db8::1:0:0:1]/cb", nil, ""},
		{"https ipv6 single zero not compressed", "https://[2001:db8:0:1:1:1:1:1]/cb", nil, ""},
		{"https label of digits not last", "https://123.example/cb", nil, ""},
		{"https label 0x not last", "https://0x1.example/cb", nil, ""},
		{"https last label digits and letters", "https://app.1a/cb", nil, ""},
		{"https a-label", "https://xn--bcher-kva.example/cb", nil, ""},
		{"reverse-dns scheme of claude.ai", "ai.claude:/cb", nil, ""},
		{"reverse-dns scheme ccTLD first", "de.example.app:/cb", nil, ""},
		{"reverse-dns scheme google", "com.googleusercontent.apps.123-abc:/oauth2redirect", nil, ""},
		{"reverse-dns scheme expo", "host.exp.exponent://cb", nil, ""},
		{"dotted scheme without a TLD at either end", "msauth.com.contoso.myapp://auth", nil, ""},
		{"forward-domain scheme listed", "claude.ai:/api/mcp/auth_callback", []string{"claude.ai"}, ""},

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
		{"encoded host", "https://app%2eexample/cb", nil, "percent-encoded"},
		{"bracket in path", "https://app.example/[x]", nil, "'['"},
		{"angle bracket", "https://app.example/<script>", nil, "not allowed in a URI"},
		{"ws", "ws://localhost/cb", nil, "scheme ws"},
		{"http listed as custom", "http://example.com/cb", []string{"http"}, "loopback"},
		{"custom no path", "com.example.app:", nil, "path"},

		// Hosts a browser reads differently (WHATWG URL host parsing).
		{"https ipv4 shorthand", "https://127.1/cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 decimal", "https://2130706433/cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 octal", "https://0177.0.0.1/cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 hex", "https://0x7f.0.0.1/cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 hex whole", "https://0x7f000001/cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 leading zero", "https://192.0.2.010/cb", nil, "browsers read it as 192.0.2.8"},
		{"https ipv4 trailing dot", "https://127.0.0.1./cb", nil, "browsers read it as 127.0.0.1"},
		{"https ipv4 zero", "https://0/cb", nil, "browsers read it as 0.0.0.0"},
		{"https ipv4 0x alone", "https://1.0x/cb", nil, "browsers read it as 1.0.0.0"},
		{"https ipv4 out of range", "https://256.0.0.1/cb", nil, "not an IPv4 address"},
		{"https ipv4 too many parts", "https://1.2.3.4.5/cb", nil, "not an IPv4 address"},
		{"https ipv4 too big", "https://4294967296/cb", nil, "not an IPv4 address"},
		{"https ipv4 bad octal", "https://08.0.0.1/cb", nil, "not an IPv4 address"},
		{"https domain ending in a number", "https://example.123/cb", nil, "not an IPv4 address"},
		{"https domain ending in a hex number", "https://example.0x1f/cb", nil, "not an IPv4 address"},
		{"https localhost trailing dot", "https://localhost./cb", nil, "must not end in a dot"},
		{"https domain trailing dot", "https://claude.ai./api/mcp/auth_callback", nil, "must not end in a dot"},
		{"https empty label", "https://app..example/cb", nil, "empty label"},
		{"https leading dot", "https://.app.example/cb", nil, "empty label"},
		{"https ipv6 uncompressed", "https://[0:0:0:0:0:0:0:1]/cb", nil, "browsers read it as [::1]"},
		{"https ipv6 leading zeros", "https://[::0001]/cb", nil, "browsers read it as [::1]"},
		{"https ipv6 uppercase", "https://[::FFFF:7F00:1]/cb", nil, "host must be lowercase"},
		{"https ipv4-mapped dotted", "https://[::ffff:127.0.0.1]/cb", nil, "browsers read it as [::ffff:7f00:1]"},
		{"https ipv6 single zero compressed", "https://[2001:db8::1:1:1:1:1]/cb", nil, "browsers read it as [2001:db8:0:1:1:1:1:1]"},
		{"https ipv6 invalid", "https://[1::2::3]/cb", nil, "invalid IPv6"},
		{"https ipv6 zone", "https://[fe80::1%25lo]/cb", nil, "invalid host"},
		{"https percent-encoded host", "https://%31%32%37.0.0.1/cb", nil, "percent-encoded"},
		{"http ipv4 shorthand", "http://127.1:3000/cb", nil, "browsers read it as 127.0.0.1"},
		{"http localhost trailing dot", "http://localhost.:3000/cb", nil, "must not end in a dot"},
		{"http ipv6 uncompressed", "http://[0:0:0:0:0:0:0:1]:3000/cb", nil, "browsers read it as [::1]"},

		// Private-use schemes must be reverse domain names (RFC 8252 §7.1).
		{"forward-domain scheme claude.ai", "claude.ai:/api/mcp/auth_callback", nil, "scheme claude.ai is a domain name"},
		{"forward-domain scheme names its reverse", "claude.ai:/api/mcp/auth_callback", nil, "such as ai.claude"},
		{"forward-domain scheme with authority", "claude.ai://api/mcp/auth_callback", DefaultCustomSchemes, "scheme claude.ai is a domain name"},
		{"forward-domain scheme chatgpt.com", "chatgpt.com:/connector_platform_oauth_redirect", nil, "scheme chatgpt.com is a domain name"},
		{"forward-domain scheme ccTLD", "claude.de:/cb", nil, "scheme claude.de is a domain name"},
		{"forward-domain scheme special-use TLD", "claude.localhost:/cb", nil, "scheme claude.localhost is a domain name"},
		{"forward-domain scheme subdomain", "api.anthropic.com:/cb", nil, "is a domain name"},
		{"scheme with empty label", "com..app:/cb", nil, "empty label"},
		{"scheme ending in a dot", "com.example.:/cb", nil, "empty label"},
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
		"https://127.1/cb",
		"https://2130706433/cb",
		"https://0x7f.0.0.1/cb",
		"https://localhost./cb",
		"https://[0:0::1]/cb",
		"https://[::ffff:7f00:1]/cb",
		"https://example.123/cb",
		"claude.ai:/api/mcp/auth_callback",
		"ai.claude:/cb",
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
			checkBrowserForm(t, raw, u)
		case u.Scheme == "http":
			if h := u.Hostname(); h != "127.0.0.1" && h != "::1" && h != "localhost" {
				t.Fatalf("accepted http %q on non-loopback host %q", raw, h)
			}
			if !IsLoopbackHost(u.Hostname()) {
				t.Fatalf("accepted http %q, but IsLoopbackHost(%q) = false", raw, u.Hostname())
			}
			checkBrowserForm(t, raw, u)
		case u.Scheme == "cursor":
		case strings.Contains(u.Scheme, "."):
			labels := strings.Split(u.Scheme, ".")
			if slices.Contains(labels, "") || tldLike(labels[len(labels)-1]) && !tldLike(labels[0]) {
				t.Fatalf("accepted %q, whose scheme is not a reverse domain name", raw)
			}
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

// checkBrowserForm fails unless the host of an accepted http or https URI is
// written the way browsers write it, judged by the standard library rather
// than by parseBrowserHost: an IP literal is in netip's form (an
// IPv4-mapped one in hex), and a name has no empty label, no trailing dot
// and no last label that a browser would read as a number.
func checkBrowserForm(t *testing.T, raw string, u *url.URL) {
	t.Helper()
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		a, err := netip.ParseAddr(h)
		switch {
		case err != nil || !a.Is6() || a.Zone() != "":
			t.Fatalf("accepted %q with IPv6 host %q that netip refuses: %v", raw, h, err)
		case a.Is4In6() && (!strings.HasPrefix(h, "::ffff:") || strings.Contains(h, ".")):
			t.Fatalf("accepted %q with IPv4-mapped host %q not in hex", raw, h)
		case !a.Is4In6() && a.String() != h:
			t.Fatalf("accepted %q with IPv6 host %q, which browsers write %q", raw, h, a.String())
		}
		return
	}
	labels := strings.Split(h, ".")
	if slices.Contains(labels, "") {
		t.Fatalf("accepted %q with an empty label or trailing dot in host %q", raw, h)
	}
	last := labels[len(labels)-1]
	hex, isHex := strings.CutPrefix(last, "0x")
	if strings.Trim(last, "0123456789") != "" && !(isHex && strings.Trim(hex, "0123456789abcdef") == "") {
		return // a name
	}
	if a, err := netip.ParseAddr(h); err != nil || !a.Is4() || a.String() != h {
		t.Fatalf("accepted %q with host %q, which browsers read as an IPv4 address", raw, h)
	}
}
