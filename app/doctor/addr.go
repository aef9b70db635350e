package doctor

import "net/netip"

// special are the IPv4 ranges that are not reachable on the public internet, with what each
// is and what to do instead (RFC 6890's special-purpose registry, the ones a home setup meets).
var special = []struct {
	prefix netip.Prefix
	what   string
	fix    string
}{
	{netip.MustParsePrefix("10.0.0.0/8"), "a private address", fixPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private address", fixPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private address", fixPrivate},
	{netip.MustParsePrefix("100.64.0.0/10"), "a carrier-grade NAT address (100.64.0.0/10, shared by your ISP's customers, or a Tailscale address)",
		"no port forward can reach it: use a tunnel (Cloudflare Tunnel, Tailscale Funnel, ngrok) or ask your ISP for a public IPv4 address"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback address", "point the A record at your public address (a hosts-file line for this name may be answering: check /etc/hosts)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local address", fixPrivate},
	{netip.MustParsePrefix("0.0.0.0/8"), "an unroutable address", fixPrivate},
	{netip.MustParsePrefix("192.0.0.0/24"), "a reserved address", fixPrivate},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address", fixPrivate},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address", fixPrivate},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address", fixPrivate},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address", fixPrivate},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast address", fixPrivate},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address", fixPrivate},
}

const fixPrivate = "Claude.ai and ChatGPT reach only public IPv4 addresses; point the A record at your router's public address and forward port 443 to this machine, or use a tunnel"

// classifyV4 says why a is not a public IPv4 address, and what to do; "" when it is public.
func classifyV4(a netip.Addr) (what, fix string) {
	a = a.Unmap()
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.what, s.fix
		}
	}
	return "", ""
}

// publicV6 reports whether a is a global unicast IPv6 address (2000::/3).
func publicV6(a netip.Addr) bool {
	return netip.MustParsePrefix("2000::/3").Contains(a) && !netip.MustParsePrefix("2001:db8::/32").Contains(a)
}
