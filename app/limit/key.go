package limit

import "net/netip"

// IPKey is the limiter key of a client address: "ip:" and the IPv4 address, or for IPv6 the
// /64 prefix that holds it ("ip:2001:db8:1:2::/64"), which one host or one customer commonly
// holds whole, so that hopping between its addresses gains nothing. IPv4-mapped IPv6
// addresses count as IPv4; zones are dropped. An invalid address gives "ip:invalid IP".
func IPKey(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}

// RemoteAddrKey is IPKey of an http.Request's RemoteAddr ("host:port", or a bare address). A
// RemoteAddr that is neither (a Unix socket's, say) is keyed as it is, after "ip:".
func RemoteAddrKey(remoteAddr string) string {
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return IPKey(ap.Addr())
	}
	if a, err := netip.ParseAddr(remoteAddr); err == nil {
		return IPKey(a)
	}
	return "ip:" + remoteAddr
}
