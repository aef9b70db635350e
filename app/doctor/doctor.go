package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"time"
)

// DefaultTimeout bounds each network call when Options.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// Options are what doctor checks and how it reaches the network.
type Options struct {
	// DB is the path of the database file.
	DB string
	// PublicURL is the origin clients reach serve at, as serve derives it (OWNSONA_PUBLIC_URL,
	// or https://DOMAIN with --tls and OWNSONA_DOMAIN). If empty, serve answers on loopback only.
	PublicURL string
	// Issuer and Resource are the OAuth issuer and the protected resource as configured. If
	// empty, derived from PublicURL as serve derives them: the origin, and the origin + /mcp.
	Issuer, Resource string
	// TLS is serve's --tls mode: off, local, acme or files. If empty, off.
	TLS string
	// Domains are serve's --domain names, for which --tls gets certificates.
	Domains []string
	// TrustedProxies are serve's --trusted-proxies CIDRs, whose X-Forwarded-For names the client.
	TrustedProxies []string
	// Public adds the network checks of what hosted assistants need: DNS, TLS, the discovery
	// documents and the 401 of the MCP endpoint.
	Public bool
	// KnownClient, when set, adds the checks of what that client is known to need (doctor
	// --client): one of Clients
	// (claude for Claude.ai and the connectors of Claude Desktop, chatgpt, claude-code,
	// cursor). The hosted ones, claude and chatgpt, imply Public; for the others the discovery
	// documents are fetched from the public URL (loopback included) without the DNS and
	// certificate checks, unless Public asks for them.
	KnownClient string
	// Tools are the tools a client lists (ownsona's catalogue with OWNSONA_TOOLS applied), for
	// the KnownClient checks.
	Tools []Tool
	// RedirectSchemes, RedirectHosts and MetadataHosts are serve's settings of those names, for
	// the KnownClient checks of the client's redirect URIs and metadata document. If nil, serve's
	// defaults.
	RedirectSchemes, RedirectHosts, MetadataHosts []string

	// Timeout bounds each network call: a lookup, a TLS handshake, one request. If zero,
	// DefaultTimeout.
	Timeout time.Duration
	// LookupIP resolves a host name to its addresses. If nil, the system resolver's
	// LookupNetIP; ResolverAt gives one that asks a given DNS server.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// DialContext connects to "host:port" for the TLS check and, when Client is nil, for the
	// requests. If nil, a net.Dialer's.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Roots are the certificate authorities trusted. If nil, the system's, as hosted
	// assistants use.
	Roots *x509.CertPool
	// Client makes the HTTP requests; doctor never lets it follow redirects. If nil, one that
	// dials with DialContext and trusts Roots.
	Client *http.Client
	// FileSizeWarning, if set, says what to do about a database file of this size, or "" when
	// the size is fine (serve's warning about bbolt's memory map on 32-bit systems).
	FileSizeWarning func(size int64) string
	// Now is the clock for certificate validity. If nil, time.Now.
	Now func() time.Time
}

// ResolverAt returns a LookupIP that asks the DNS server at addr ("1.1.1.1:53") instead of
// the system's resolver: on a home network with split-horizon DNS it shows what the rest of
// the internet sees.
func ResolverAt(addr string) func(ctx context.Context, host string) ([]netip.Addr, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	return func(ctx context.Context, host string) ([]netip.Addr, error) { return r.LookupNetIP(ctx, "ip", host) }
}

// level is a finding's severity.
type level int

const (
	pass level = iota
	warn
	fail
)

var levelNames = [...]string{pass: "ok", warn: "warn", fail: "FAIL"}

// checker runs the checks of one Run and writes their findings as they come.
type checker struct {
	o        Options
	w        io.Writer
	err      error // the first write error
	problems int
	warnings int
	client   *http.Client
	prm      map[string]any // the protected-resource document the network checks fetched
	as       *serverDoc     // the authorization-server document they fetched
}

// Run checks the setup that o describes, writes one line per finding to w, and returns the
// number of problems (FAIL lines). err is a write error or ctx's, never a finding.
func Run(ctx context.Context, o Options, w io.Writer) (problems int, err error) {
	if r, ok := knownClient(o.KnownClient); ok && r.hosted {
		o.Public = true
	}
	c := newChecker(o, w)
	c.checkFile()
	site, siteOK := c.checkConfig()
	switch {
	case ctx.Err() != nil:
	case o.Public && siteOK:
		c.checkPublic(ctx, site)
	case o.Public:
		c.report(warn, "network checks skipped", "fix the public URL above, then run doctor --public again")
	case o.KnownClient != "" && siteOK:
		c.docsOnly(ctx, site) // a local client: the documents it reads, without DNS or certificate checks
	}
	if o.KnownClient != "" && ctx.Err() == nil {
		c.checkClient(site, siteOK)
	}
	if err := ctx.Err(); err != nil {
		return c.problems, fmt.Errorf("doctor: %w", err)
	}
	c.summary(site, siteOK)
	return c.problems, c.err
}

func newChecker(o Options, w io.Writer) *checker {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.TLS == "" {
		o.TLS = "off"
	}
	if o.DialContext == nil {
		d := &net.Dialer{Timeout: o.Timeout}
		o.DialContext = d.DialContext
	}
	if o.LookupIP == nil {
		o.LookupIP = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	c := &checker{o: o, w: w}
	if o.Client != nil {
		cl := *o.Client
		c.client = &cl
	} else {
		c.client = &http.Client{Transport: &http.Transport{
			DialContext:           o.DialContext,
			TLSClientConfig:       &tls.Config{RootCAs: o.Roots, Time: o.Now},
			TLSHandshakeTimeout:   o.Timeout,
			ResponseHeaderTimeout: o.Timeout,
			ForceAttemptHTTP2:     true,
			DisableKeepAlives:     true,
		}}
	}
	if c.client.Timeout == 0 {
		c.client.Timeout = o.Timeout
	}
	c.client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return c
}

// report writes one finding: its level, what was found, and what to change.
func (c *checker) report(l level, what, fix string) {
	switch l {
	case fail:
		c.problems++
	case warn:
		c.warnings++
	}
	line := fmt.Sprintf("%-4s %s", levelNames[l], what)
	if fix != "" {
		line += " — " + fix
	}
	if _, err := fmt.Fprintln(c.w, line); err != nil && c.err == nil {
		c.err = fmt.Errorf("doctor: write: %w", err)
	}
}

func (c *checker) okf(format string, args ...any) { c.report(pass, fmt.Sprintf(format, args...), "") }

// summary ends the report: the counts and, when all is well, the connector URL to add.
func (c *checker) summary(s site, siteOK bool) {
	var line string
	switch {
	case c.problems == 0 && c.warnings == 0:
		line = "doctor: no problems found"
	case c.problems == 0:
		line = fmt.Sprintf("doctor: no problems, %s", plural(c.warnings, "warning"))
	case c.warnings == 0:
		line = fmt.Sprintf("doctor: %s: change what the FAIL lines say", plural(c.problems, "problem"))
	default:
		line = fmt.Sprintf("doctor: %s, %s: change what the FAIL lines say", plural(c.problems, "problem"), plural(c.warnings, "warning"))
	}
	fmt.Fprintln(c.w, line)
	switch {
	case c.problems > 0 || !siteOK || !s.https:
	case c.o.Public:
		fmt.Fprintf(c.w, "connector URL: %s (add it as a custom connector in Claude.ai or ChatGPT)\n", s.resource)
	default:
		fmt.Fprintf(c.w, "connector URL: %s (doctor --public checks what Claude.ai and ChatGPT will meet there)\n", s.resource)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
