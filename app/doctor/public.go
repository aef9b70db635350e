package doctor

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ownsona/ownsona/oauth"
)

const (
	// expiryWindow is how soon before its end a certificate counts as expiring: renewal should
	// have happened by then (certmagic renews with a third of the lifetime left).
	expiryWindow = 14 * 24 * time.Hour
	// maxDocument bounds a discovery document or error body read.
	maxDocument = 1 << 20
	// fixOtherServer is the advice when a document lacks what ownsona always serves.
	fixOtherServer = "ownsona always serves this: if the document lacks it, another server (or a proxy's own page) answers; send %s to ownsona"
)

// checkPublic checks what hosted assistants meet: DNS, TLS, the discovery documents, and the
// 401 that leads them to the authorization server. checkConfig has made sure s is https.
func (c *checker) checkPublic(ctx context.Context, s site) {
	if !c.checkDNS(ctx, s) {
		c.report(warn, "the TLS and HTTP checks were skipped", "fix DNS first, then run doctor --public again")
		return
	}
	if ctx.Err() != nil {
		return
	}
	if !c.checkTLS(ctx, s) {
		c.report(warn, "the HTTP checks were skipped", "fix the TLS finding above, then run doctor --public again")
		return
	}
	prm := c.checkResourceDoc(ctx, s, s.issuer+"/.well-known/oauth-protected-resource", s.resource, "/mcp", fail)
	prmMCP := c.checkResourceDoc(ctx, s, s.issuer+"/.well-known/oauth-protected-resource/mcp", s.resource, "/mcp", fail)
	c.prm = prmMCP
	if prm != nil && prmMCP != nil && !reflect.DeepEqual(prm, prmMCP) {
		c.report(warn, "the two protected-resource documents differ", "serve the same document at /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource/mcp")
	}
	// The endpoint's aliases (clients written for ONCE are given /api/mcp): each is a resource
	// of its own name, and a client checks that its document names it (RFC 9728 §3.3). Only
	// clients given an alias depend on them, so their findings are warnings.
	for _, alias := range oauth.MCPAliases {
		c.checkResourceDoc(ctx, s, s.issuer+"/.well-known/oauth-protected-resource"+alias, s.issuer+alias, alias, warn)
	}
	c.checkServerDoc(ctx, s)
	c.checkChallenge(ctx, s, prmMCP)
}

// checkDNS checks that the host's A records are public IPv4 addresses; it reports whether
// the name resolves at all.
func (c *checker) checkDNS(ctx context.Context, s site) bool {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(s.host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		lctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
		addrs, err = c.o.LookupIP(lctx, s.host)
		cancel()
		if err != nil || len(addrs) == 0 {
			reason := "no addresses"
			if err != nil {
				reason = shortErr(err)
			}
			c.report(fail, fmt.Sprintf("%s does not resolve (%s)", s.host, reason),
				fmt.Sprintf("create an A record for %s with your public IPv4 address (your router's, with port 443 forwarded), or use a tunnel that gives you a name", s.host))
			return false
		}
	}
	var v4, v6 []string
	bad := false
	for _, a := range addrs {
		a = a.Unmap()
		if a.Is4() {
			v4 = append(v4, a.String())
			if what, fix := classifyV4(a); what != "" {
				if a.IsPrivate() {
					fix += "; if only your home network's resolver answers so (split horizon), ask a public one: doctor --resolver 1.1.1.1:53"
				}
				c.report(fail, fmt.Sprintf("public URL %s resolves to %s, %s", s.url, a, what), fix)
				bad = true
			}
			continue
		}
		v6 = append(v6, a.String())
		if !publicV6(a) {
			c.report(warn, fmt.Sprintf("%s has the IPv6 address %s, which is not a public one", s.host, a),
				"clients that prefer IPv6 will fail: remove the AAAA record, or give it this machine's global IPv6 address")
		}
	}
	if len(v4) == 0 {
		c.report(fail, fmt.Sprintf("%s has only IPv6 addresses (%s): Claude.ai reaches servers over IPv4 only", s.host, strings.Join(v6, ", ")),
			"add an A record with a public IPv4 address, or use a tunnel (Cloudflare Tunnel, Tailscale Funnel) that gives the name one")
		return true
	}
	if !bad {
		c.okf("DNS %s: %s", s.host, strings.Join(append(v4, v6...), ", "))
	}
	return true
}

// checkTLS connects to the port and checks the certificate as hosted assistants will: a chain
// to a root they trust, valid for the name, and not about to expire. It reports whether the
// HTTP checks can go on.
func (c *checker) checkTLS(ctx context.Context, s site) bool {
	addr := net.JoinHostPort(s.host, s.port)
	hctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	raw, err := c.o.DialContext(hctx, "tcp", addr)
	if err != nil {
		c.report(fail, fmt.Sprintf("nothing answers on %s (%v)", addr, shortErr(err)), c.fixPort(s))
		return false
	}
	defer raw.Close()
	if dl, ok := hctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	// The chain is verified below, by hand, so that a bad certificate can be described.
	conn := tls.Client(raw, &tls.Config{ServerName: s.host, InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err := conn.HandshakeContext(hctx); err != nil {
		c.report(fail, fmt.Sprintf("%s does not answer TLS (%v)", addr, shortErr(err)),
			fmt.Sprintf("serve HTTPS on port %s: ownsona serve --tls acme, or a proxy or tunnel that terminates TLS", s.port))
		return false
	}
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		c.report(fail, fmt.Sprintf("%s sent no certificate", addr), "serve a certificate for "+s.host)
		return false
	}
	leaf, now := certs[0], c.o.Now()
	inter := x509.NewCertPool()
	for _, ic := range certs[1:] {
		inter.AddCert(ic)
	}
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: s.host, Roots: c.o.Roots, Intermediates: inter, CurrentTime: now})
	var (
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	switch {
	case err == nil:
	case errors.As(err, &hostname):
		c.report(fail, fmt.Sprintf("the certificate on %s is for %s, not %s", addr, certNames(leaf), s.host), c.fixCert(s))
		return false
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired && now.After(leaf.NotAfter):
		c.report(fail, fmt.Sprintf("the certificate for %s expired on %s", s.host, leaf.NotAfter.UTC().Format(time.DateOnly)), c.fixRenewal())
		return false
	case errors.As(err, &unknown):
		fix := c.fixCert(s)
		if c.o.TLS == "local" {
			fix = "--tls local certificates come from ownsona's own authority, which Claude.ai and ChatGPT do not trust: use --tls acme, or --tls off behind a tunnel or proxy with a public certificate"
		}
		c.report(fail, fmt.Sprintf("the certificate for %s is not from an authority that hosted assistants trust (issuer %q)", s.host, issuerName(leaf)), fix)
		return false
	default:
		c.report(fail, fmt.Sprintf("the certificate for %s does not verify: %v", s.host, err), c.fixCert(s))
		return false
	}
	left := leaf.NotAfter.Sub(now)
	window := min(expiryWindow, leaf.NotAfter.Sub(leaf.NotBefore)/4)
	if left < window {
		c.report(fail, fmt.Sprintf("the certificate for %s expires on %s, in %s", s.host, leaf.NotAfter.UTC().Format(time.DateOnly), days(left)), c.fixRenewal())
		return true
	}
	c.okf("TLS %s: certificate for %s from %q, valid until %s (%s)", addr, s.host, issuerName(leaf), leaf.NotAfter.UTC().Format(time.DateOnly), days(left))
	return true
}

func (c *checker) fixPort(s site) string {
	if c.o.TLS == "off" {
		return fmt.Sprintf("your reverse proxy or tunnel must listen on port %s and forward to serve", s.port)
	}
	return fmt.Sprintf("check that serve runs, forward TCP port %s from your router to this machine, and open it in the firewall (e.g. sudo ufw allow %s/tcp)", s.port, s.port)
}

func (c *checker) fixCert(s site) string {
	switch c.o.TLS {
	case "acme":
		return fmt.Sprintf("check that %s is in OWNSONA_DOMAIN and that port %s reaches this serve, not another server", s.host, s.port)
	case "files":
		return fmt.Sprintf("give --cert a chain from a public CA for %s, leaf first, with its intermediates", s.host)
	case "off":
		return fmt.Sprintf("your proxy or tunnel must present a certificate from a public CA for %s", s.host)
	}
	return "use --tls acme for a certificate from a public CA"
}

func (c *checker) fixRenewal() string {
	switch c.o.TLS {
	case "acme":
		return "renewal is failing: read serve's log, and check that ports 80 and 443 reach this machine"
	case "files":
		return "replace the certificate files and restart serve"
	}
	return "renew the certificate"
}

// do sends a request without following redirects, reading at most maxDocument bytes.
func (c *checker) do(ctx context.Context, method, url string, body []byte, header http.Header) (*http.Response, []byte, error) {
	rctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, method, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "ownsona-doctor")
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocument))
	return resp, b, err
}

// getJSON fetches a discovery document and decodes it; it reports a failure and returns nil
// when it cannot.
func (c *checker) getJSON(ctx context.Context, s site, url string, doc any) bool {
	return c.getJSONAs(ctx, s, url, doc, fail)
}

// getJSONAs is getJSON reporting at level sev what keeps it from the document.
func (c *checker) getJSONAs(ctx context.Context, s site, url string, doc any, sev level) bool {
	resp, body, err := c.do(ctx, http.MethodGet, url, nil, http.Header{"Accept": {"application/json"}})
	switch {
	case err != nil:
		c.report(sev, fmt.Sprintf("GET %s: %v", url, shortErr(err)), c.fixPort(s))
		return false
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		c.report(sev, fmt.Sprintf("GET %s answered %d, a redirect to %s", url, resp.StatusCode, resp.Header.Get("Location")),
			"serve the document itself at this URL: a proxy rule (http to https, a trailing slash, another host) is redirecting it")
		return false
	case resp.StatusCode != http.StatusOK:
		c.report(sev, fmt.Sprintf("GET %s answered %d", url, resp.StatusCode),
			"a proxy in front of ownsona must pass /.well-known/ and /mcp through to it, unchanged")
		return false
	}
	if err := json.Unmarshal(body, doc); err != nil {
		c.report(sev, fmt.Sprintf("GET %s is not a JSON document (%v)", url, shortErr(err)), fmt.Sprintf(fixOtherServer, url))
		return false
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		c.report(warn, fmt.Sprintf("GET %s has Content-Type %q", url, ct), "serve it as application/json")
	}
	return true
}

// resourceDoc is the part of an RFC 9728 document that clients use.
type resourceDoc struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
}

// asResourceDoc reads the fields clients use from a decoded document; a field of another type
// reads as empty.
func asResourceDoc(m map[string]any) resourceDoc {
	var d resourceDoc
	d.Resource, _ = m["resource"].(string)
	list, _ := m["authorization_servers"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			d.AuthorizationServers = append(d.AuthorizationServers, s)
		}
	}
	return d
}

// checkResourceDoc fetches a protected-resource document and checks that it names resource
// (the public URL + path) and the issuer exactly, reporting at level sev; it returns the
// document as decoded JSON, or nil.
func (c *checker) checkResourceDoc(ctx context.Context, s site, url, resource, path string, sev level) map[string]any {
	var raw map[string]any
	if !c.getJSONAs(ctx, s, url, &raw, sev) {
		return nil
	}
	doc := asResourceDoc(raw)
	good := true
	if doc.Resource != resource {
		c.report(sev, fmt.Sprintf("%s says resource %q, not %s (the public URL + %s)", url, doc.Resource, resource, path), fixRunning)
		good = false
	}
	if !slices.Contains(doc.AuthorizationServers, s.issuer) {
		c.report(sev, fmt.Sprintf("%s lists authorization servers %q, without %s exactly", url, doc.AuthorizationServers, s.issuer), fixRunning)
		good = false
	}
	if good {
		c.okf("GET %s: resource %s, authorization server %s", url, resource, s.issuer)
	}
	return raw
}

// fixRunning is the advice when the served documents disagree with the configuration.
const fixRunning = "the server that answers was started with another public URL: give doctor and serve the same OWNSONA_PUBLIC_URL (or OWNSONA_DOMAIN), restart serve, and check that a proxy does not rewrite Host"

// serverDoc is the part of an RFC 8414 document that MCP clients rely on.
type serverDoc struct {
	Issuer                    string   `json:"issuer"`
	AuthorizationEndpoint     string   `json:"authorization_endpoint"`
	TokenEndpoint             string   `json:"token_endpoint"`
	RegistrationEndpoint      string   `json:"registration_endpoint"`
	TokenEndpointAuthMethods  []string `json:"token_endpoint_auth_methods_supported"`
	CodeChallengeMethods      []string `json:"code_challenge_methods_supported"`
	ISSParameterSupported     bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataSupported bool     `json:"client_id_metadata_document_supported"`
}

// checkServerDoc fetches the authorization-server document (RFC 8414 §3: the well-known path
// at the issuer's origin) and checks what Claude.ai and ChatGPT need of it.
func (c *checker) checkServerDoc(ctx context.Context, s site) {
	url := s.issuer + "/.well-known/oauth-authorization-server"
	var doc serverDoc
	if !c.getJSON(ctx, s, url, &doc) {
		return
	}
	c.as = &doc
	other := fmt.Sprintf(fixOtherServer, url)
	problems := c.problems
	if doc.Issuer != s.issuer {
		c.report(fail, fmt.Sprintf("%s says issuer %q, not %s byte for byte", url, doc.Issuer, s.issuer),
			"clients refuse an issuer that differs from the URL they fetched it from (RFC 8414 §3.3); "+fixRunning)
	}
	if !slices.Contains(doc.CodeChallengeMethods, "S256") {
		c.report(fail, fmt.Sprintf("%s does not offer PKCE S256 (code_challenge_methods_supported %q)", url, doc.CodeChallengeMethods),
			"MCP clients refuse an authorization server without S256; "+other)
	}
	if !doc.ISSParameterSupported {
		c.report(fail, fmt.Sprintf("%s lacks authorization_response_iss_parameter_supported: true", url), other)
	}
	if !doc.ClientIDMetadataSupported {
		c.report(fail, fmt.Sprintf("%s lacks client_id_metadata_document_supported: true", url),
			"clients that register by URL (client ID metadata documents) will not connect; "+other)
	}
	if !slices.Contains(doc.TokenEndpointAuthMethods, "none") {
		c.report(fail, fmt.Sprintf("%s does not allow public clients (token_endpoint_auth_methods_supported %q, without \"none\")", url, doc.TokenEndpointAuthMethods), other)
	}
	for _, ep := range []struct{ name, url string }{
		{"registration_endpoint", doc.RegistrationEndpoint},
		{"authorization_endpoint", doc.AuthorizationEndpoint},
		{"token_endpoint", doc.TokenEndpoint},
	} {
		if u, err := parseURL(ep.url); err != nil || (u.Scheme != "https" && (s.https || u.Scheme != "http")) || u.Host == "" {
			c.report(fail, fmt.Sprintf("%s has no absolute https %s (%q)", url, ep.name, ep.url), other)
		}
	}
	if c.problems == problems {
		c.okf("GET %s: issuer %s, PKCE S256, iss parameter, client ID metadata documents, registration", url, s.issuer)
	}
}

// checkChallenge posts an initialize request to the MCP endpoint without a token and checks
// the refusal: 401 with a WWW-Authenticate that leads to the protected-resource document.
func (c *checker) checkChallenge(ctx context.Context, s site, want map[string]any) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ownsona-doctor","version":"1"}}}`)
	resp, _, err := c.do(ctx, http.MethodPost, s.resource, body, http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}})
	what := "POST " + s.resource + " without a token"
	switch {
	case err != nil:
		c.report(fail, fmt.Sprintf("%s: %v", what, shortErr(err)), c.fixPort(s))
		return
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		c.report(fail, fmt.Sprintf("%s answered %d: the MCP endpoint is open to anyone", what, resp.StatusCode),
			"serve always asks for a token once it has a public URL: something else answers /mcp; send it to ownsona")
		return
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		c.report(fail, fmt.Sprintf("%s answered %d, a redirect to %s", what, resp.StatusCode, resp.Header.Get("Location")),
			"connectors post to the exact URL they were given: serve /mcp itself, with no redirect")
		return
	case resp.StatusCode != http.StatusUnauthorized:
		c.report(fail, fmt.Sprintf("%s answered %d, not 401", what, resp.StatusCode),
			"a proxy in front of ownsona must pass POST /mcp through to it, unchanged")
		return
	}
	header := resp.Header.Values("WWW-Authenticate")
	if len(header) == 0 {
		c.report(fail, what+" answered 401 without WWW-Authenticate", "connectors find the authorization server through it: a proxy must not strip the header")
		return
	}
	meta, found := "", false
	for _, h := range header {
		if meta, found = bearerParam(h, "resource_metadata"); found {
			break
		}
	}
	u, err := parseURL(meta)
	switch {
	case !found:
		c.report(fail, fmt.Sprintf("%s answered 401 with WWW-Authenticate %q, without a Bearer resource_metadata", what, strings.Join(header, ", ")),
			"connectors find the authorization server through resource_metadata (RFC 9728 §5.1): "+fixRunning)
		return
	case err != nil || !u.IsAbs() || (u.Scheme != "https" && (s.https || u.Scheme != "http")) || u.Host == "":
		c.report(fail, fmt.Sprintf("%s answered 401 with resource_metadata %q, not an absolute https URL", what, meta),
			"connectors need an absolute https URL there: set OWNSONA_PUBLIC_URL to the https origin connectors use")
		return
	}
	var got map[string]any
	if !c.getJSON(ctx, s, meta, &got) {
		return
	}
	switch r := asResourceDoc(got); {
	case want != nil && !reflect.DeepEqual(got, want):
		c.report(fail, fmt.Sprintf("the 401's resource_metadata %s is not the document at %s", meta, s.issuer+"/.well-known/oauth-protected-resource/mcp"), fixRunning)
		return
	case want == nil && r.Resource != s.resource: // else checked above, as the path-suffixed document
		c.report(fail, fmt.Sprintf("the 401's resource_metadata %s says resource %q, not %s", meta, r.Resource, s.resource), fixRunning)
		return
	}
	c.okf("%s: 401, resource_metadata %s", what, meta)
}

// bearerParam finds the auth-param name of the Bearer challenge in a WWW-Authenticate value
// (RFC 9110 §11.6.1: challenges separated by commas, each a scheme and auth-params, values a
// token or a quoted string).
func bearerParam(header, name string) (string, bool) {
	p := authParser{s: header}
	inBearer := false
	for {
		p.skip()
		if p.done() {
			return "", false
		}
		tok := p.token()
		if tok == "" {
			p.i++ // not a token: skip the character
			continue
		}
		p.skipSpaces()
		if p.peek() != '=' || p.peekTokenEquals() {
			// A scheme (followed by a token68 or params, or by nothing).
			inBearer = strings.EqualFold(tok, "Bearer")
			continue
		}
		p.i++ // '='
		p.skipSpaces()
		var val string
		if p.peek() == '"' {
			val = p.quoted()
		} else {
			val = p.bare()
		}
		if inBearer && strings.EqualFold(tok, name) {
			return val, true
		}
	}
}

type authParser struct {
	s string
	i int
}

func (p *authParser) done() bool { return p.i >= len(p.s) }

func (p *authParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

// peekTokenEquals reports whether '=' at i begins a token68's padding ("abc==") rather than
// a parameter's value.
func (p *authParser) peekTokenEquals() bool {
	j := p.i
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j-p.i > 1 || j == len(p.s) || p.s[j] == ','
}

func (p *authParser) skip() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *authParser) skipSpaces() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// token reads an RFC 9110 token (tchar*, here also token68's '/', '+').
func (p *authParser) token() string {
	start := p.i
	for !p.done() && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// bare reads an unquoted value: a token, leniently anything up to a comma or a space (some
// servers leave URLs unquoted).
func (p *authParser) bare() string {
	start := p.i
	for !p.done() && p.s[p.i] != ',' && p.s[p.i] != ' ' && p.s[p.i] != '\t' {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *authParser) quoted() string {
	p.i++ // the opening quote
	var b strings.Builder
	for !p.done() {
		ch := p.s[p.i]
		p.i++
		switch {
		case ch == '"':
			return b.String()
		case ch == '\\' && !p.done():
			b.WriteByte(p.s[p.i])
			p.i++
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}

func isTchar(ch byte) bool {
	return ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~/", ch) >= 0
}

// parseURL parses a URL that must not be empty.
func parseURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, errors.New("empty")
	}
	return url.Parse(s)
}

// shortErr drops the wrapping that net/http and net add around the cause.
func shortErr(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		err = oe.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

func certNames(c *x509.Certificate) string {
	names := slices.Clone(c.DNSNames)
	for _, ip := range c.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && c.Subject.CommonName != "" {
		names = append(names, c.Subject.CommonName)
	}
	if len(names) == 0 {
		return "no name"
	}
	return strings.Join(names, ", ")
}

// issuerName names a certificate's issuer the way people know it: "Let's Encrypt R11".
func issuerName(c *x509.Certificate) string {
	cn := c.Issuer.CommonName
	if len(c.Issuer.Organization) == 0 || strings.Contains(cn, c.Issuer.Organization[0]) {
		return cn
	}
	if cn == "" {
		return c.Issuer.Organization[0]
	}
	return c.Issuer.Organization[0] + " " + cn
}

func days(d time.Duration) string {
	switch n := int(d.Hours() / 24); {
	case d < 24*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()))
	case n == 1:
		return "1 day"
	default:
		return fmt.Sprintf("%d days", n)
	}
}
