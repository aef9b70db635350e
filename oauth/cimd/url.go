// This file implements the client identifier URL rules of "OAuth Client ID
// Metadata Document" (draft-ietf-oauth-client-id-metadata-document, section
// "Client Identifier URL"), made stricter where the draft leaves a choice.

package cimd

import (
	"net/url"
	"strconv"
	"strings"
)

// MaxClientIDLen is the longest client identifier URL accepted, in bytes.
const MaxClientIDLen = 2048

// IsMetadataURL reports whether clientID is a client identifier URL, one
// whose metadata document is fetched (Fetcher.Fetch) rather than looked up
// among dynamically registered clients. It says nothing about whether the
// host may be fetched; that is the Fetcher's allowlist.
//
// Following the draft, the URL must use the https scheme (spelled in lower
// case), have a host and a path other than "/", and contain no fragment, no
// userinfo and no "." or ".." path segment (also when percent-encoded).
// A port is allowed. Stricter than the draft:
//
//   - no query, not even an empty "?": the draft allows one but discourages
//     it, no known client uses one, and without it the comparison of the
//     URL with the document's client_id has one spelling only;
//   - only printable ASCII without spaces or backslashes, at most
//     MaxClientIDLen bytes;
//   - no percent-encoding in the host, and no encoded '/', '\' or control
//     character in a path segment;
//   - a port, when present, is 1 to 65535 in decimal.
func IsMetadataURL(clientID string) bool {
	_, reason := parseMetadataURL(clientID)
	return reason == ""
}

// parseMetadataURL parses a client identifier URL, or returns why it is not
// one.
func parseMetadataURL(s string) (*url.URL, string) {
	const prefix = "https://"
	switch {
	case s == "":
		return nil, "is empty"
	case len(s) > MaxClientIDLen:
		return nil, "is too long"
	case !strings.HasPrefix(s, prefix):
		return nil, "is not an https URL"
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return nil, "contains a space, control, non-ASCII or backslash character"
		}
	}
	if strings.Contains(s, "#") {
		return nil, "has a fragment"
	}
	if strings.Contains(s, "?") {
		return nil, "has a query"
	}
	authority, _, _ := strings.Cut(s[len(prefix):], "/")
	if strings.ContainsAny(authority, "@%") {
		return nil, "has userinfo or percent-encoding in the host"
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, "is not a valid URL"
	}
	if u.Scheme != "https" || u.Opaque != "" || u.User != nil || u.Host == "" || u.Hostname() == "" {
		return nil, "has no host"
	}
	if strings.HasSuffix(u.Host, ":") {
		return nil, "has an empty port"
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || p[0] == '0' {
			return nil, "has an invalid port"
		}
	}
	path := u.EscapedPath()
	if len(path) < 2 || path[0] != '/' {
		return nil, "has no path"
	}
	for _, seg := range strings.Split(path[1:], "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return nil, "has malformed percent-encoding"
		}
		if dec == "." || dec == ".." {
			return nil, "has a dot segment"
		}
		if strings.ContainsAny(dec, "/\\") {
			return nil, "has an encoded slash or backslash"
		}
		for i := 0; i < len(dec); i++ {
			if dec[i] < ' ' || dec[i] == 0x7f {
				return nil, "has an encoded control character"
			}
		}
	}
	return u, ""
}
