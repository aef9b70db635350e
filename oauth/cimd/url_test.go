package cimd

import (
	"net/url"
	"strings"
	"testing"
)

var metadataURLCases = []struct {
	in   string
	want bool
}{
	{"https://claude.ai/oauth/mcp-oauth-client-metadata", true},
	{"https://chatgpt.com/oauth/client.json", true},
	{"https://client.example.com:8443/c", true},
	{"https://client.example.com/a/b/", true},
	{"https://client.example.com/a%20b", true},
	{"https://client.example.com/a..b/.c", true},
	{"https://[2001:db8::1]/c", true},

	{"", false},
	{"client-123", false},
	{"http://client.example.com/c", false},
	{"HTTPS://client.example.com/c", false},
	{"Https://client.example.com/c", false},
	{"https:/client.example.com/c", false},
	{"https:///c", false},
	{"https://client.example.com", false},
	{"https://client.example.com/", false},
	{"https://client.example.com/c#", false},
	{"https://client.example.com/c#frag", false},
	{"https://client.example.com/c?", false},
	{"https://client.example.com/c?a=b", false},
	{"https://user@client.example.com/c", false},
	{"https://user:pw@client.example.com/c", false},
	{"https://client.example.com@evil.example/c", false},
	{"https://client.example.com/./c", false},
	{"https://client.example.com/a/../c", false},
	{"https://client.example.com/a/..", false},
	{"https://client.example.com/a/.", false},
	{"https://client.example.com/%2e%2e/c", false},
	{"https://client.example.com/%2E/c", false},
	{"https://client.example.com/.%2e/c", false},
	{"https://client.example.com/a%2fb", false},
	{"https://client.example.com/a%5cb", false},
	{"https://client.example.com/a%00b", false},
	{"https://client.example.com/a%zz", false},
	{"https://client.example.com/a\\b", false},
	{"https://client.example.com/a b", false},
	{"https://client.example.com/a\tb", false},
	{"https://client.example.com/é", false},
	{" https://client.example.com/c", false},
	{"https://client.example.com/c ", false},
	{"https://cl%61ude.ai/c", false},
	{"https://client.example.com:/c", false},
	{"https://client.example.com:0/c", false},
	{"https://client.example.com:65536/c", false},
	{"https://client.example.com:0443/c", false},
	{"https://client.example.com:x/c", false},
	{"https://:443/c", false},
	{"https://client.example.com/" + strings.Repeat("a", MaxClientIDLen), false},
}

func TestIsMetadataURL(t *testing.T) {
	for _, tt := range metadataURLCases {
		if got := IsMetadataURL(tt.in); got != tt.want {
			_, reason := parseMetadataURL(tt.in)
			t.Errorf("IsMetadataURL(%q) = %v, want %v (%s)", tt.in, got, tt.want, reason)
		}
	}
}

// FuzzIsMetadataURL: no panic, and an accepted client_id parses as an
// https URL with a host and a non-root path, and nothing the rules refuse.
func FuzzIsMetadataURL(f *testing.F) {
	for _, tt := range metadataURLCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !IsMetadataURL(s) {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("accepted %q, which does not parse: %v", s, err)
		}
		if u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted %q: scheme %q host %q path %q", s, u.Scheme, u.Host, u.Path)
		}
		if u.User != nil || u.Fragment != "" || u.RawQuery != "" || u.ForceQuery || u.Opaque != "" {
			t.Fatalf("accepted %q with userinfo, fragment, query or opaque part", s)
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("accepted %q with a dot segment", s)
			}
		}
		if len(s) > MaxClientIDLen {
			t.Fatalf("accepted %d bytes", len(s))
		}
	})
}

// FuzzParseDocument: no panic, and an accepted document's client_id is the
// URL and every redirect URI is non-empty.
func FuzzParseDocument(f *testing.F) {
	f.Add(`{"client_id":"https://c.example.com/x","redirect_uris":["https://c.example.com/cb"]}`)
	f.Add(`{"client_id":"https://c.example.com/x","client_id":"https://c.example.com/x","redirect_uris":[]}`)
	f.Add(`{"client_id":"https://c.example.com/x","redirect_uris":["https://c.example.com/cb"],"client_name":"\u202e"}`)
	f.Add(`[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`)
	f.Fuzz(func(t *testing.T, body string) {
		const id = "https://c.example.com/x"
		doc, err := parseDocument([]byte(body), id, nil)
		if err != nil {
			return
		}
		if doc.ClientID != id || len(doc.RedirectURIs) == 0 {
			t.Fatalf("accepted %q as %+v", body, doc)
		}
	})
}
