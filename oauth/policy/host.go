// This file reads a URL's host the way a browser does: the host parser of
// the WHATWG URL Standard (§3.5 "Host parsing", with its IPv4 and IPv6
// parsers and serializers) for the special schemes http and https. A
// redirect URI is followed by the owner's browser, so the host that matters
// is the one the browser reads, not the one the string seems to name:
// https://127.1/, https://2130706433/ and https://0x7f.0.0.1/ all go to
// 127.0.0.1.

package policy

import (
	"net/netip"
	"strconv"
	"strings"
)

// IsLoopbackHost reports whether a browser sent to host reaches the
// computer it runs on, so that a consent page can say "on this computer".
// host is a URL's host without its port, as url.URL.Hostname returns it (an
// IPv6 literal with or without brackets), in any case. It is read as the
// URL Standard reads an http or https host (percent-decoding, ASCII case,
// IPv4 in shorthand, decimal, octal or hex, a trailing dot), and then
// counts as loopback when it is:
//
//   - localhost or a name under .localhost (RFC 6761 §6.3; Chrome and
//     Firefox resolve them to loopback themselves), with or without a
//     trailing dot;
//   - an IPv4 address in 127.0.0.0/8, or ::1, or either mapped into IPv6;
//   - the unspecified address 0.0.0.0 or ::, which browsers on Linux and
//     macOS connect to this computer through.
//
// It reports false for a host a browser would refuse, and for a non-ASCII
// host, which browsers map with UTS #46 (fullwidth or mathematical letters
// can spell localhost) and the standard library cannot: ValidateRedirectURI
// refuses both, so no registered redirect URI has one. Names that resolve
// to loopback through DNS (localtest.me, 127.0.0.1.nip.io) are not known
// here.
func IsLoopbackHost(host string) bool {
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	h, addr, reason := parseBrowserHost(host)
	if reason != "" {
		return false
	}
	if addr.IsValid() {
		addr = addr.Unmap()
		return addr.IsLoopback() || addr.IsUnspecified()
	}
	h = strings.TrimSuffix(h, ".")
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}

// checkWebHost refuses the host of an http or https redirect URI unless a
// browser reads it as written: an IPv4 or IPv6 literal must be in the form
// the URL Standard serializes (127.0.0.1, not 127.1, 2130706433 or
// 127.0.0.1.; [::1], not [0:0:0:0:0:0:0:1]), a host that ends in a number
// must be an IPv4 address (browsers refuse example.123), and a domain must
// have no empty label and no trailing dot (localhost. and claude.ai. name
// the same hosts as localhost and claude.ai, but not the same strings). host
// is non-empty, lowercase and made of the characters splitHostPort allows.
func checkWebHost(host string) string {
	canonical, addr, reason := parseBrowserHost(host)
	switch {
	case reason != "":
		return "host " + host + " " + reason
	case canonical != host:
		return "host " + host + " is not written as browsers write it: browsers read it as " + canonical + "; register that form"
	case addr.IsValid():
		return ""
	case strings.HasSuffix(host, "."):
		return "host " + host + " must not end in a dot"
	case strings.HasPrefix(host, ".") || strings.Contains(host, ".."):
		return "host " + host + " has an empty label"
	}
	return ""
}

// parseBrowserHost runs the URL Standard's host parser for a special scheme
// on host (an IPv6 literal in brackets) and returns the host as a browser
// serializes it and, for an IP address, the address. reason is not empty
// when a browser would refuse the host, or when host is not ASCII once
// percent-decoded (UTS #46 mapping needs tables the standard library does
// not have). ASCII domains are only lowercased: UTS #46 leaves them as they
// are, except that it refuses some A-labels (xn--…) that do not decode,
// which are let through here as written, since a browser either refuses
// them or reads them unchanged, never as another host.
func parseBrowserHost(host string) (canonical string, addr netip.Addr, reason string) {
	if strings.HasPrefix(host, "[") {
		if !strings.HasSuffix(host, "]") {
			return "", netip.Addr{}, "has an invalid IPv6 address"
		}
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", netip.Addr{}, "has an invalid IPv6 address"
		}
		return "[" + serializeIPv6(a) + "]", a, ""
	}
	domain, ok := percentDecode(host)
	if !ok {
		return "", netip.Addr{}, "is not ASCII once percent-decoded"
	}
	domain = strings.ToLower(domain)
	if domain == "" {
		return "", netip.Addr{}, "is empty"
	}
	for i := 0; i < len(domain); i++ {
		if c := domain[i]; c <= 0x20 || c == 0x7f || strings.IndexByte(`#%/:<>?@[\]^|`, c) >= 0 {
			return "", netip.Addr{}, "has a character browsers refuse in a host"
		}
	}
	if !endsInNumber(domain) {
		return domain, netip.Addr{}, ""
	}
	v4, ok := parseIPv4(domain)
	if !ok {
		return "", netip.Addr{}, "ends in a number but is not an IPv4 address, so browsers refuse it"
	}
	a := netip.AddrFrom4([4]byte{byte(v4 >> 24), byte(v4 >> 16), byte(v4 >> 8), byte(v4)})
	return a.String(), a, ""
}

// percentDecode decodes %XX sequences (leaving malformed ones as they are,
// as the URL Standard does) and reports whether the result is ASCII.
func percentDecode(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return "", false
			}
		}
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		if c >= 0x80 {
			return "", false
		}
		b = append(b, c)
	}
	return string(b), true
}

// endsInNumber is the URL Standard's "ends in a number checker": the last
// label (after dropping one empty label left by a trailing dot) is all
// decimal digits or parses as an IPv4 number (0x…, 0…).
func endsInNumber(domain string) bool {
	parts := strings.Split(domain, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// parseIPv4 is the URL Standard's IPv4 parser: one to four numbers
// separated by dots (one trailing dot allowed), each decimal, octal with a
// leading 0 or hex with 0x; every number but the last at most 255, and the
// last filling the remaining bytes.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	var v uint64
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return 0, false
			}
			v |= n << (8 * (3 - i))
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return 0, false
		}
		v += n
	}
	return uint32(v), true
}

// parseIPv4Number is the URL Standard's IPv4 number parser. Values above
// 2^32 saturate there, since the caller refuses them all.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		d := uint64(16) // not a digit in any base
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c - 'a' + 10)
		case 'A' <= c && c <= 'F':
			d = uint64(c - 'A' + 10)
		}
		if d >= base {
			return 0, false
		}
		n = min(n*base+d, 1<<33)
	}
	return n, true
}

// serializeIPv6 is the URL Standard's IPv6 serializer: lowercase hex
// without leading zeros, the first longest run of two or more zero pieces
// written "::", and an IPv4-mapped address in hex (::ffff:7f00:1), where
// netip.Addr.String writes ::ffff:127.0.0.1.
func serializeIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	compress, best := -1, 1
	for i := 0; i < 8; {
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = max(j, i+1)
	}
	var s strings.Builder
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				s.WriteString(":")
			}
			s.WriteString(":")
			i += best - 1
			continue
		}
		s.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i != 7 {
			s.WriteString(":")
		}
	}
	return s.String()
}
