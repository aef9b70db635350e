// This file implements the address rules behind the draft's "Server-Side
// Request Forgery (SSRF) Attacks" consideration: a metadata document is only
// fetched from a public unicast address.

package cimd

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// blockedPrefixes are ranges that IsGlobalUnicast and IsPrivate let through
// but that are not a public Internet host, or that embed or translate to an
// IPv4 address that may be private.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network" (RFC 791)
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space, CGNAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments (RFC 6890)
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation (RFC 5737)
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking (RFC 2544)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and the broadcast address
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated), :: and ::1
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64 (RFC 6052)
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64 (RFC 8215)
	netip.MustParsePrefix("100::/64"),        // discard-only (RFC 6666)
	netip.MustParsePrefix("2001::/23"),       // IETF protocol assignments, Teredo
	netip.MustParsePrefix("2001:db8::/32"),   // documentation (RFC 3849)
	netip.MustParsePrefix("2002::/16"),       // 6to4, embeds an IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
}

// isPublic reports whether a is an address a metadata document may be
// fetched from: global unicast, not private (10/8, 172.16/12, 192.168/16,
// fc00::/7), not loopback, link-local (169.254/16, fe80::/10), multicast or
// unspecified, and in none of blockedPrefixes. An IPv4-mapped IPv6 address
// (::ffff:a.b.c.d) is judged as the IPv4 address it maps; an address with a
// zone is never public.
func isPublic(a netip.Addr) bool {
	if !a.IsValid() || a.Zone() != "" {
		return false
	}
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// errNotPublic is the cause of an ErrForbiddenAddress error from dialing.
var errNotPublic = errors.New("address is not public")

// checkPublic returns an error wrapping errNotPublic unless ip is public.
func checkPublic(ip net.IPAddr) (netip.Addr, error) {
	a, ok := netip.AddrFromSlice(ip.IP)
	if !ok {
		return netip.Addr{}, fmt.Errorf("%w: %q", errNotPublic, ip.String())
	}
	a = a.WithZone(ip.Zone)
	if !isPublic(a) {
		return netip.Addr{}, fmt.Errorf("%w: %s", errNotPublic, a)
	}
	return a.Unmap(), nil
}

// controlPublic is the net.Dialer Control function of the production
// dialer: a last check, on the very address the socket connects to, that it
// is public. The dialer is only ever given vetted addresses, so this never
// fails unless that invariant is broken.
func controlPublic(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q", errNotPublic, address)
	}
	if !isPublic(ap.Addr()) {
		return fmt.Errorf("%w: %s", errNotPublic, ap.Addr())
	}
	return nil
}
