// This file implements redirect URI policy: registration rules from OAuth 2.1
// §2.3.1 and §8.4.2, RFC 9700 §2.1 and §4.1.3 and RFC 8252 §7 (native apps;
// §7.1 for private-use schemes), hosts read as the WHATWG URL Standard reads
// them (host.go), and matching at /authorize and /token by exact string
// comparison, with the loopback port exception of RFC 8252 §7.3.

package policy

import (
	_ "embed"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// MaxRedirectURILen is the longest redirect URI accepted, in bytes.
const MaxRedirectURILen = 2048

// DefaultCustomSchemes are the private-use URI schemes without a '.' that
// registration accepts by default: Cursor registers
// cursor://anysphere.cursor-mcp/oauth/callback.
var DefaultCustomSchemes = []string{"cursor"}

// refusedSchemes are never accepted, whatever the custom scheme list says.
var refusedSchemes = map[string]bool{
	"javascript": true, "data": true, "file": true, "vbscript": true,
	"blob": true, "about": true, "filesystem": true, "view-source": true,
	"ws": true, "wss": true, "ftp": true, "mailto": true,
}

// loopbackHosts are the host literals for which http is allowed and the
// port is free (RFC 8252 §7.3). The match is exact; other spellings a
// browser reads as one of them ("LOCALHOST", "localhost.", "127.1",
// "[0::1]") are refused at registration with a reason naming the form to
// use, and 127.0.0.2 or *.localhost need https.
var loopbackHosts = map[string]bool{"127.0.0.1": true, "[::1]": true, "localhost": true}

// ValidateRedirectURI reports whether raw may be registered as a redirect
// URI, by dynamic client registration or in a client ID metadata document.
// It accepts:
//
//   - https URIs with a host;
//   - http URIs whose host is exactly 127.0.0.1, [::1] or localhost, with
//     any port or none;
//   - private-use schemes (RFC 8252 §7.1) listed in customSchemes, or that
//     are reverse domain names (com.example.app:/cb): they contain a '.'
//     and do not read as a domain name written forward (see
//     checkCustomScheme: claude.ai:/cb is refused). A nil list allows only
//     the reverse domain names; callers pass DefaultCustomSchemes unless
//     configured otherwise.
//
// The host of an http or https URI must be written as a browser reads it
// (WHATWG URL Standard): an IPv4 address in dotted decimal (not 127.1,
// 2130706433, 0x7f.0.0.1 or 0177.0.0.1), an IPv6 address as browsers
// serialize it ([::1], [::ffff:7f00:1]), no number as the last label of a
// name, no trailing dot (localhost.) and no empty label. Such a URI is
// refused, not rewritten, so that what a client registered is what it sends
// at /authorize; the reason names the form to register instead. Real
// clients (Claude.ai, ChatGPT, Cursor, http://127.0.0.1:PORT and
// http://localhost:PORT) already register these forms.
//
// It refuses javascript:, data:, file:, vbscript: and similar schemes
// always, and in any scheme: relative or opaque URIs, fragments (even an
// empty one), userinfo, a '*' anywhere, dot segments in the path (/../, /./,
// %2e%2e, ..;/), encoded slashes or backslashes in the path, backslashes,
// spaces, control and non-ASCII characters (raw or percent-encoded),
// malformed percent-encoding, a percent-encoded host, an uppercase scheme
// or host, an empty or invalid port, and anything longer than
// MaxRedirectURILen.
//
// The error is an *OAuthError with code invalid_redirect_uri whose
// description names the reason.
func ValidateRedirectURI(raw string, customSchemes []string) error {
	if err := validateRedirectURI(raw, customSchemes); err != "" {
		return Errorf(CodeInvalidRedirectURI, "redirect_uri %s", err)
	}
	return nil
}

// validateRedirectURI returns the reason raw is refused, or "".
func validateRedirectURI(raw string, customSchemes []string) string {
	switch {
	case raw == "":
		return "is empty"
	case len(raw) > MaxRedirectURILen:
		return "is longer than 2048 bytes"
	}
	if reason := checkURIChars(raw); reason != "" {
		return reason
	}
	if strings.Contains(raw, "#") {
		return "must not contain a fragment"
	}
	if strings.Contains(raw, "*") {
		return "must not contain a wildcard '*'"
	}
	scheme, rest, ok := strings.Cut(raw, ":")
	if !ok || scheme == "" || strings.ContainsAny(scheme, "/?") {
		return "must be an absolute URI"
	}
	if !validScheme(scheme) {
		return "has an invalid scheme"
	}
	if scheme != strings.ToLower(scheme) {
		return "scheme must be lowercase"
	}
	if refusedSchemes[scheme] {
		return "scheme " + scheme + " is not allowed"
	}
	authority, hasAuthority := "", strings.HasPrefix(rest, "//")
	path := rest
	if hasAuthority {
		authority = rest[2:]
		if i := strings.IndexAny(authority, "/?"); i >= 0 {
			authority, path = authority[:i], authority[i:]
		} else {
			path = ""
		}
	} else if rest != "" && rest[0] != '/' && rest[0] != '?' {
		return "must be a hierarchical URI (scheme:/path or scheme://host/path)"
	}
	if strings.Contains(authority, "@") {
		return "must not contain userinfo"
	}
	if strings.ContainsAny(path, "[]") {
		return "must not contain '[' or ']' outside the host"
	}
	path, _, _ = strings.Cut(path, "?")
	if reason := checkPath(path); reason != "" {
		return reason
	}
	host, _, reason := splitHostPort(authority)
	if reason != "" {
		return reason
	}
	if host != strings.ToLower(host) {
		return "host must be lowercase"
	}

	if (scheme == "https" || scheme == "http") && host != "" {
		if reason := checkWebHost(host); reason != "" {
			return reason
		}
	}

	switch scheme {
	case "https":
		if host == "" {
			return "must have a host"
		}
	case "http":
		if !loopbackHosts[host] {
			return "with http must use a loopback host (127.0.0.1, [::1] or localhost); use https"
		}
	default:
		if reason := checkCustomScheme(scheme, customSchemes); reason != "" {
			return reason
		}
		if !hasAuthority && path == "" {
			return "must have a path"
		}
	}
	// Belt and braces: what we accept, the standard parser must read the
	// same way.
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Scheme != scheme {
		return "does not parse"
	}
	return ""
}

// checkCustomScheme returns why the private-use scheme (lowercase, not
// http or https) is refused, or "". A scheme listed in list is accepted as
// it is. Otherwise it must be a reverse domain name (RFC 8252 §7.1: "a
// domain name under [the app's] control, expressed in reverse order", as
// RFC 7595 §3.8 recommends): it contains a '.', has no empty label, and
// does not read as a domain name written forward. Forward means that its
// last label is a top-level domain and its first is not (claude.ai,
// chatgpt.com, claude.de), whereas a reverse name starts with its TLD
// (com.example.app, ai.claude, de.example.app). Labels are TLDs when they
// are two letters (country codes) or in tlds.txt.
//
// The rule cannot tell the two orders apart when both ends are TLDs: it
// accepts com.example.app (which must work), and so also my.claude.ai and
// com.claude.ai, the reverse of claude.my and ai.claude.com. The consent
// page shows any custom scheme as an app on the device, not as a website.
func checkCustomScheme(scheme string, list []string) string {
	for _, s := range list {
		if strings.EqualFold(s, scheme) {
			return ""
		}
	}
	if !strings.Contains(scheme, ".") {
		return "scheme " + scheme + " is not allowed (a private-use scheme must be a reverse domain name such as com.example.app, or be configured)"
	}
	labels := strings.Split(scheme, ".")
	if slices.Contains(labels, "") {
		return "scheme " + scheme + " is not a reverse domain name: it has an empty label"
	}
	if first, last := labels[0], labels[len(labels)-1]; tldLike(last) && !tldLike(first) {
		return "scheme " + scheme + " is a domain name, not a private-use scheme: RFC 8252 §7.1 asks for a domain the app's maker controls written in reverse, such as " + reverseLabels(labels)
	}
	return ""
}

// reverseLabels joins labels in reverse order with dots.
func reverseLabels(labels []string) string {
	r := make([]string, len(labels))
	for i, l := range labels {
		r[len(labels)-1-i] = l
	}
	return strings.Join(r, ".")
}

//go:embed tlds.txt
var tldFile string

// tldSet is the set of labels in tlds.txt, built on first use.
var tldSet = sync.OnceValue(func() map[string]bool {
	set := make(map[string]bool, 1200)
	for _, line := range strings.Split(tldFile, "\n") {
		if line = strings.TrimSpace(line); line != "" && line[0] != '#' {
			set[line] = true
		}
	}
	return set
})

// tldLike reports whether label (lowercase) is a top-level domain: any two
// ASCII letters (ISO 3166 codes are reserved for country-code TLDs, so
// every one is a TLD or may become one), or a longer one in tlds.txt.
func tldLike(label string) bool {
	if len(label) == 2 && 'a' <= label[0] && label[0] <= 'z' && 'a' <= label[1] && label[1] <= 'z' {
		return true
	}
	return tldSet()[label]
}

// validScheme reports whether s is ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
// (RFC 3986 §3.1).
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

// checkURIChars refuses any byte that may not appear in a URI (RFC 3986
// §2), a backslash, and percent-encoding that is malformed or encodes a
// control character.
func checkURIChars(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c == 0x7f:
			return "must not contain control characters"
		case c >= 0x80:
			return "must not contain non-ASCII characters"
		case c == ' ':
			return "must not contain spaces"
		case c == '\\':
			return "must not contain a backslash"
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "has malformed percent-encoding"
			}
			if b := unhex(s[i+1])<<4 | unhex(s[i+2]); b < 0x20 || b == 0x7f {
				return "must not contain encoded control characters"
			}
		case strings.IndexByte(`"<>^{|}`+"`", c) >= 0:
			return "contains a character not allowed in a URI"
		}
	}
	return ""
}

// checkPath refuses dot segments, including encoded ones (%2e%2e) and ones
// hidden behind a path parameter (..;/), and encoded slashes and
// backslashes, which some servers decode before normalizing.
func checkPath(path string) string {
	lower := strings.ToLower(path)
	if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") {
		return "path must not contain an encoded slash or backslash"
	}
	for _, seg := range strings.Split(lower, "/") {
		seg, _, _ = strings.Cut(seg, ";")
		seg = strings.ReplaceAll(seg, "%2e", ".")
		if seg == "." || seg == ".." {
			return "path must not contain dot segments"
		}
	}
	return ""
}

// splitHostPort splits an authority without userinfo into host and port,
// refusing an empty or non-numeric port, a port out of 1–65535 or with a
// leading zero, and a host with characters other than letters, digits,
// '-', '.', '_' (or, in brackets, an IPv6 literal).
func splitHostPort(authority string) (host, port, reason string) {
	host = authority
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", "", "has an invalid host"
		}
		host = authority[:end+1]
		for _, c := range host[1:end] {
			if !(isHex(byte(c)) || c == ':' || c == '.') {
				return "", "", "has an invalid host"
			}
		}
		if end == 1 {
			return "", "", "has an invalid host"
		}
		switch after := authority[end+1:]; {
		case after == "":
			return host, "", ""
		case after[0] != ':':
			return "", "", "has an invalid host"
		default:
			port = after[1:]
		}
	} else {
		var hasPort bool
		host, port, hasPort = strings.Cut(authority, ":")
		if hasPort && port == "" {
			return "", "", "has an empty port"
		}
		if strings.Contains(host, "%") {
			return "", "", "host must not be percent-encoded"
		}
		for i := 0; i < len(host); i++ {
			c := host[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
				return "", "", "has an invalid host"
			}
		}
		if !hasPort {
			return host, "", ""
		}
	}
	if !validPort(port) {
		return "", "", "has an invalid port"
	}
	return host, port, ""
}

// validPort reports whether p is a decimal port in 1–65535 without a
// leading zero.
func validPort(p string) bool {
	if p == "" || len(p) > 5 || p[0] == '0' {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// MatchRedirectURI reports whether the redirect_uri sent at /authorize or
// /token (requested) matches a registered one. They match when they are
// byte-for-byte equal, or when both are http URIs on the same loopback host
// literal (127.0.0.1, [::1] or localhost) that differ only in the port,
// which may also be absent from either (RFC 8252 §7.3). Nothing else is
// normalized: case, trailing slashes, query order and percent-encoding all
// count. An empty string matches nothing.
//
// MatchRedirectURI does not check that registered is acceptable; that is
// ValidateRedirectURI's job at registration.
func MatchRedirectURI(registered, requested string) bool {
	if registered == "" || requested == "" {
		return false
	}
	if registered == requested {
		return true
	}
	rh, rp, rrest, ok1 := splitLoopback(registered)
	qh, qp, qrest, ok2 := splitLoopback(requested)
	if !ok1 || !ok2 || rh != qh || rrest != qrest || rp == qp {
		return false
	}
	// The port is the only difference; the rest must still be a URI we
	// would have accepted at registration.
	return validateRedirectURI(requested, nil) == ""
}

// splitLoopback splits "http://" host [":" port] rest, where host is a
// loopback literal, port is valid or empty and rest is empty or starts with
// '/' or '?'.
func splitLoopback(s string) (host, port, rest string, ok bool) {
	after, found := strings.CutPrefix(s, "http://")
	if !found {
		return "", "", "", false
	}
	authority := after
	if i := strings.IndexAny(after, "/?#"); i >= 0 {
		authority, rest = after[:i], after[i:]
	}
	host = authority
	if strings.HasPrefix(authority, "[") {
		if end := strings.IndexByte(authority, ']'); end >= 0 {
			host, port = authority[:end+1], authority[end+1:]
		}
	} else if i := strings.IndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	if !loopbackHosts[host] {
		return "", "", "", false
	}
	if port != "" {
		p, found := strings.CutPrefix(port, ":")
		if !found || !validPort(p) {
			return "", "", "", false
		}
		port = p
	}
	return host, port, rest, true
}
