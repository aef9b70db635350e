// This file implements the resource parameter of RFC 8707 (Resource
// Indicators for OAuth 2.0) and the canonical server URI of the MCP
// authorization specification ("Canonical Server URI").

package policy

import (
	"net/url"
	"strings"
)

// CanonicalResource returns the canonical form of a resource indicator, so
// that two spellings of one resource compare equal. raw must be an absolute
// https URI, or http on a loopback host (127.0.0.1, [::1], localhost), with
// a host and no fragment or userinfo (RFC 8707 §2). The canonical form has a
// lowercase scheme and host, no default port (443 for https, 80 for http),
// and no "/" for an empty path; the path and query are otherwise kept byte
// for byte (a trailing slash after a non-empty path counts). Paths with dot
// segments are refused rather than resolved.
//
// Errors are *OAuthError with code invalid_target.
func CanonicalResource(raw string) (string, error) {
	fail := func(reason string) (string, error) {
		return "", Errorf(CodeInvalidTarget, "resource %s", reason)
	}
	switch {
	case raw == "":
		return fail("is empty")
	case len(raw) > MaxRedirectURILen:
		return fail("is longer than 2048 bytes")
	}
	if reason := checkURIChars(raw); reason != "" {
		return fail(reason)
	}
	if strings.Contains(raw, "#") {
		return fail("must not contain a fragment")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fail("does not parse")
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme == "" || u.Opaque != "" {
		return fail("must be an absolute URI")
	}
	if u.User != nil {
		return fail("must not contain userinfo")
	}
	if scheme != "https" && scheme != "http" {
		return fail("must use https")
	}
	// u.Host is the raw authority without userinfo; it still holds the port.
	host, port, reason := splitHostPort(u.Host)
	if reason != "" {
		return fail(reason)
	}
	host = strings.ToLower(host)
	if host == "" {
		return fail("must have a host")
	}
	if scheme == "http" && !loopbackHosts[host] {
		return fail("must use https")
	}
	if port == "443" && scheme == "https" || port == "80" && scheme == "http" {
		port = ""
	}
	// The raw path: what follows the authority, up to the query.
	path := raw[len(u.Scheme)+len("://"):]
	if !strings.HasPrefix(raw[len(u.Scheme):], "://") {
		return fail("must have a host")
	}
	if i := strings.IndexAny(path, "/?"); i >= 0 {
		path = path[i:]
	} else {
		path = ""
	}
	path, query, hasQuery := strings.Cut(path, "?")
	if strings.ContainsAny(path, "[]") || strings.ContainsAny(query, "[]") {
		return fail("must not contain '[' or ']' outside the host")
	}
	if reason := checkPath(path); reason != "" {
		return fail(reason)
	}
	if path == "/" {
		path = ""
	}
	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteString(":")
		b.WriteString(port)
	}
	b.WriteString(path)
	if hasQuery && query != "" {
		b.WriteString("?")
		b.WriteString(query)
	}
	return b.String(), nil
}

// SameResource reports whether a and b are valid resource indicators with
// the same canonical form.
func SameResource(a, b string) bool {
	ca, err := CanonicalResource(a)
	if err != nil {
		return false
	}
	cb, err := CanonicalResource(b)
	return err == nil && ca == cb
}
