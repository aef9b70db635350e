package doctor

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/oauth"
)

const testOrigin = "https://mem.example.com"

// testCA issues certificates for the test servers; its pool stands in for the system roots.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func mustCA(tb testing.TB) *testCA {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{Organization: []string{"Test"}, CommonName: "Test Root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * 365 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue makes a leaf for names valid from notBefore to notAfter.
func (ca *testCA) issue(tb testing.TB, names []string, notBefore, notAfter time.Time) tls.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), DNSNames: names,
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		tb.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// testSite serves what ownsona serves for testOrigin: its discovery documents (from the oauth
// package itself) and the 401 of /mcp. A test case changes a part of it.
type testSite struct {
	prm, prmMCP, as map[string]any            // nil answers 404
	aliases         map[string]map[string]any // the aliases' documents by path (/api/mcp); nil answers 404
	mcp             http.HandlerFunc
	redirect        string // a path answered with 301 to testOrigin + "/elsewhere"
}

func newGoodSite(tb testing.TB) *testSite {
	tb.Helper()
	return newGoodSiteAt(tb, testOrigin)
}

// newGoodSiteAt serves what ownsona serves for origin.
func newGoodSiteAt(tb testing.TB, origin string) *testSite {
	tb.Helper()
	ep, err := oauth.NewEndpoints(origin)
	if err != nil {
		tb.Fatal(err)
	}
	s := &testSite{prm: mustDecode(tb, ep.ProtectedResourceMetadata()), prmMCP: mustDecode(tb, ep.ProtectedResourceMetadata()),
		as: mustDecode(tb, ep.AuthorizationServerMetadata()), aliases: map[string]map[string]any{}}
	for _, alias := range oauth.MCPAliases {
		s.aliases[alias] = mustDecode(tb, ep.ProtectedResourceMetadataAt(alias))
	}
	s.mcp = func(w http.ResponseWriter, r *http.Request) {
		ep.Challenge(w, "", "memories:read memories:write")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"error":"unauthorized","error_description":"authorization required"}}}`))
	}
	return s
}

func mustDecode(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

func (s *testSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == s.redirect {
		http.Redirect(w, r, testOrigin+"/elsewhere", http.StatusMovedPermanently)
		return
	}
	doc := map[string]map[string]any{
		"/.well-known/oauth-protected-resource":     s.prm,
		"/.well-known/oauth-protected-resource/mcp": s.prmMCP,
		"/.well-known/oauth-authorization-server":   s.as,
	}
	for alias, d := range s.aliases {
		doc["/.well-known/oauth-protected-resource"+alias] = d
	}
	if d, ok := doc[r.URL.Path]; ok && d != nil {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(d)
		return
	}
	if r.URL.Path == "/mcp" && s.mcp != nil {
		s.mcp(w, r)
		return
	}
	http.NotFound(w, r)
}

// startSite serves s over TLS with cert and returns the address to dial for any host.
func startSite(tb testing.TB, s http.Handler, cert tls.Certificate) string {
	tb.Helper()
	srv := httptest.NewUnstartedServer(s)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes that doctor abandons on purpose
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// dialTo connects every dial to addr, as DNS would to the server.
func dialTo(addr string) func(ctx context.Context, network, _ string) (net.Conn, error) {
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
}

func lookupStub(addrs ...string) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

// mustDB makes a real ownsona-shaped bbolt file, mode 0600, in a directory of mode 0700.
func mustDB(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "data")
	if err := os.Mkdir(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(dir, "ownsona.db")
	db, err := kv.Open(path, kv.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// goodOptions describe a correct setup of testOrigin, served at addr.
func goodOptions(tb testing.TB, addr string, ca *testCA) Options {
	return Options{DB: mustDB(tb), PublicURL: testOrigin, TLS: "acme", Domains: []string{"mem.example.com"}, Public: true,
		Timeout: 2 * time.Second, LookupIP: lookupStub("93.184.216.34", "2606:2800:220:1::1"), DialContext: dialTo(addr), Roots: ca.pool}
}

// runDoctor runs doctor and returns its output's FAIL and warn lines.
func runDoctor(tb testing.TB, o Options) (out string, fails, warns []string) {
	tb.Helper()
	var buf bytes.Buffer
	n, err := Run(context.Background(), o, &buf)
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	for line := range strings.Lines(buf.String()) {
		switch {
		case strings.HasPrefix(line, "FAIL "):
			fails = append(fails, strings.TrimSpace(line))
		case strings.HasPrefix(line, "warn "):
			warns = append(warns, strings.TrimSpace(line))
		}
	}
	if n != len(fails) {
		tb.Errorf("Run returned %d problems for %d FAIL lines:\n%s", n, len(fails), buf.String())
	}
	return buf.String(), fails, warns
}

// matchAll checks that every line contains one of want and every want is in some line.
func matchAll(tb testing.TB, kind string, lines, want []string, out string) {
	tb.Helper()
	for _, l := range lines {
		found := false
		for _, w := range want {
			found = found || strings.Contains(l, w)
		}
		if !found {
			tb.Errorf("unexpected %s line %q\n%s", kind, l, out)
		}
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || strings.Contains(l, w)
		}
		if !found {
			tb.Errorf("no %s line contains %q\n%s", kind, w, out)
		}
	}
}

func TestRun_Good(t *testing.T) {
	ca := mustCA(t)
	now := time.Now()
	addr := startSite(t, newGoodSite(t), ca.issue(t, []string{"mem.example.com"}, now.Add(-time.Hour), now.Add(90*24*time.Hour)))
	out, fails, warns := runDoctor(t, goodOptions(t, addr, ca))
	if len(fails) > 0 || len(warns) > 0 {
		t.Errorf("a good setup has findings:\n%s", out)
	}
	for _, want := range []string{
		"ok   public URL https://mem.example.com: issuer https://mem.example.com, resource https://mem.example.com/mcp",
		"ok   DNS mem.example.com: 93.184.216.34, 2606:2800:220:1::1",
		"ok   TLS mem.example.com:443: certificate for mem.example.com from \"Test Root\"",
		"ok   GET https://mem.example.com/.well-known/oauth-protected-resource: resource https://mem.example.com/mcp",
		"ok   GET https://mem.example.com/.well-known/oauth-protected-resource/mcp: ",
		"ok   GET https://mem.example.com/.well-known/oauth-protected-resource/api/mcp: resource https://mem.example.com/api/mcp, authorization server https://mem.example.com",
		"ok   GET https://mem.example.com/.well-known/oauth-protected-resource/mcp/http: resource https://mem.example.com/mcp/http, authorization server https://mem.example.com",
		"ok   GET https://mem.example.com/.well-known/oauth-authorization-server: issuer https://mem.example.com, PKCE S256",
		"ok   POST https://mem.example.com/mcp without a token: 401, resource_metadata https://mem.example.com/.well-known/oauth-protected-resource/mcp",
		"doctor: no problems found",
		"connector URL: https://mem.example.com/mcp",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRun_Findings(t *testing.T) {
	ca, other := mustCA(t), mustCA(t)
	now := time.Now()
	goodCert := ca.issue(t, []string{"mem.example.com"}, now.Add(-time.Hour), now.Add(90*24*time.Hour))
	tests := []struct {
		name  string
		opts  func(*Options)
		site  func(*testSite)
		cert  *tls.Certificate
		fails []string // each FAIL line contains one of these, and each is in a FAIL line
		warns []string
	}{
		{name: "private address", opts: func(o *Options) { o.LookupIP = lookupStub("192.168.1.20") },
			fails: []string{"FAIL public URL https://mem.example.com resolves to 192.168.1.20, a private address — Claude.ai and ChatGPT reach only public IPv4 addresses; point the A record at your router's public address and forward port 443"}},
		{name: "private 10/8 beside a public one", opts: func(o *Options) { o.LookupIP = lookupStub("93.184.216.34", "10.0.0.5") },
			fails: []string{"resolves to 10.0.0.5, a private address", "--resolver 1.1.1.1:53"}},
		{name: "CGNAT", opts: func(o *Options) { o.LookupIP = lookupStub("100.101.102.103") },
			fails: []string{"resolves to 100.101.102.103, a carrier-grade NAT address (100.64.0.0/10, shared by your ISP's customers, or a Tailscale address) — no port forward can reach it: use a tunnel"}},
		{name: "loopback", opts: func(o *Options) { o.LookupIP = lookupStub("127.0.1.1") },
			fails: []string{"resolves to 127.0.1.1, a loopback address — point the A record at your public address"}},
		{name: "link-local", opts: func(o *Options) { o.LookupIP = lookupStub("169.254.3.4") },
			fails: []string{"resolves to 169.254.3.4, a link-local address"}},
		{name: "IPv6 only", opts: func(o *Options) { o.LookupIP = lookupStub("2606:2800:220:1::1") },
			fails: []string{"FAIL mem.example.com has only IPv6 addresses (2606:2800:220:1::1): Claude.ai reaches servers over IPv4 only — add an A record"}},
		{name: "IPv6 ULA beside public IPv4", opts: func(o *Options) { o.LookupIP = lookupStub("93.184.216.34", "fd00::5") },
			warns: []string{"warn mem.example.com has the IPv6 address fd00::5, which is not a public one — clients that prefer IPv6 will fail"}},
		{name: "no such name", opts: func(o *Options) {
			o.LookupIP = func(context.Context, string) ([]netip.Addr, error) {
				return nil, &net.DNSError{Err: "no such host", Name: "mem.example.com", IsNotFound: true}
			}
		},
			fails: []string{"FAIL mem.example.com does not resolve (lookup mem.example.com: no such host) — create an A record for mem.example.com"},
			warns: []string{"the TLS and HTTP checks were skipped — fix DNS first"}},
		{name: "tls off behind a proxy without trusted proxies", opts: func(o *Options) { o.TLS = "off"; o.Domains = nil },
			fails: []string{"tls off behind a proxy or tunnel for mem.example.com, but no --trusted-proxies: every request seems to come from the proxy"}},
		{name: "tls off behind a named proxy", opts: func(o *Options) { o.TLS = "off"; o.Domains = nil; o.TrustedProxies = []string{"127.0.0.1/32"} }},
		{name: "untrusted certificate", opts: func(o *Options) { o.Roots = other.pool },
			fails: []string{"FAIL the certificate for mem.example.com is not from an authority that hosted assistants trust (issuer \"Test Root\")"},
			warns: []string{"the HTTP checks were skipped"}},
		{name: "local CA", opts: func(o *Options) { o.Roots = other.pool; o.TLS = "local" },
			fails: []string{"--tls local certificates come from ownsona's own authority, which Claude.ai and ChatGPT do not trust: use --tls acme"},
			warns: []string{"tls local: the certificate for mem.example.com comes from ownsona's own authority", "the HTTP checks were skipped"}},
		{name: "certificate for another name", cert: ptr(ca.issue(t, []string{"www.example.com"}, now.Add(-time.Hour), now.Add(90*24*time.Hour))),
			fails: []string{"FAIL the certificate on mem.example.com:443 is for www.example.com, not mem.example.com — check that mem.example.com is in OWNSONA_DOMAIN"},
			warns: []string{"the HTTP checks were skipped"}},
		{name: "certificate expired", cert: ptr(ca.issue(t, []string{"mem.example.com"}, now.Add(-90*24*time.Hour), now.Add(-24*time.Hour))),
			fails: []string{"FAIL the certificate for mem.example.com expired on " + now.Add(-24*time.Hour).UTC().Format(time.DateOnly) + " — renewal is failing"},
			warns: []string{"the HTTP checks were skipped"}},
		{name: "certificate expiring", cert: ptr(ca.issue(t, []string{"mem.example.com"}, now.Add(-80*24*time.Hour), now.Add(5*24*time.Hour+time.Hour))),
			fails: []string{"FAIL the certificate for mem.example.com expires on " + now.Add(5*24*time.Hour+time.Hour).UTC().Format(time.DateOnly) + ", in 5 days — renewal is failing: read serve's log"}},
		{name: "short-lived certificate is not expiring", cert: ptr(ca.issue(t, []string{"mem.example.com"}, now.Add(-time.Hour), now.Add(6*24*time.Hour)))},
		{name: "nothing listening", opts: func(o *Options) {
			o.DialContext = func(context.Context, string, string) (net.Conn, error) {
				return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", errConnRefused)}
			}
		},
			fails: []string{"FAIL nothing answers on mem.example.com:443 (connect: connection refused) — check that serve runs, forward TCP port 443"},
			warns: []string{"the HTTP checks were skipped"}},
		// The aliases' documents each name their own resource (RFC 9728 §3.3); only clients
		// given an alias need them, so their findings are warnings.
		{name: "an alias's document names /mcp", site: func(s *testSite) { s.aliases["/api/mcp"] = s.prmMCP },
			warns: []string{"warn https://mem.example.com/.well-known/oauth-protected-resource/api/mcp says resource \"https://mem.example.com/mcp\", not https://mem.example.com/api/mcp (the public URL + /api/mcp) — the server that answers was started with another public URL"}},
		{name: "no document for an alias", site: func(s *testSite) { delete(s.aliases, "/mcp/http") },
			warns: []string{"warn GET https://mem.example.com/.well-known/oauth-protected-resource/mcp/http answered 404"}},
		{name: "no protected-resource document at the root", site: func(s *testSite) { s.prm = nil },
			fails: []string{"FAIL GET https://mem.example.com/.well-known/oauth-protected-resource answered 404 — a proxy in front of ownsona must pass /.well-known/"}},
		{name: "resource of another URL", site: func(s *testSite) {
			s.prmMCP["resource"] = "https://mem.example.com/mcp/"
		},
			fails: []string{"FAIL https://mem.example.com/.well-known/oauth-protected-resource/mcp says resource \"https://mem.example.com/mcp/\", not https://mem.example.com/mcp (the public URL + /mcp) — the server that answers was started with another public URL"},
			warns: []string{"the two protected-resource documents differ"}},
		{name: "authorization server with a trailing slash", site: func(s *testSite) {
			s.prm["authorization_servers"] = []string{"https://mem.example.com/"}
		},
			fails: []string{"FAIL https://mem.example.com/.well-known/oauth-protected-resource lists authorization servers [\"https://mem.example.com/\"], without https://mem.example.com exactly"},
			warns: []string{"the two protected-resource documents differ"}},
		{name: "issuer with a trailing slash", site: func(s *testSite) { s.as["issuer"] = "https://mem.example.com/" },
			fails: []string{"FAIL https://mem.example.com/.well-known/oauth-authorization-server says issuer \"https://mem.example.com/\", not https://mem.example.com byte for byte — clients refuse"}},
		{name: "no S256", site: func(s *testSite) { s.as["code_challenge_methods_supported"] = []string{"plain"} },
			fails: []string{"does not offer PKCE S256 (code_challenge_methods_supported [\"plain\"]) — MCP clients refuse an authorization server without S256"}},
		{name: "no iss parameter", site: func(s *testSite) { delete(s.as, "authorization_response_iss_parameter_supported") },
			fails: []string{"lacks authorization_response_iss_parameter_supported: true — ownsona always serves this"}},
		{name: "no client ID metadata documents", site: func(s *testSite) { s.as["client_id_metadata_document_supported"] = false },
			fails: []string{"lacks client_id_metadata_document_supported: true — clients that register by URL"}},
		{name: "no public clients", site: func(s *testSite) { s.as["token_endpoint_auth_methods_supported"] = []string{"client_secret_basic"} },
			fails: []string{"does not allow public clients (token_endpoint_auth_methods_supported [\"client_secret_basic\"], without \"none\")"}},
		{name: "no registration endpoint", site: func(s *testSite) { delete(s.as, "registration_endpoint") },
			fails: []string{"has no absolute https registration_endpoint (\"\")"}},
		{name: "document redirected", site: func(s *testSite) { s.redirect = "/.well-known/oauth-authorization-server" },
			fails: []string{"FAIL GET https://mem.example.com/.well-known/oauth-authorization-server answered 301, a redirect to https://mem.example.com/elsewhere — serve the document itself"}},
		{name: "MCP open without a token", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)) }
		},
			fails: []string{"FAIL POST https://mem.example.com/mcp without a token answered 200: the MCP endpoint is open to anyone"}},
		{name: "no MCP endpoint", site: func(s *testSite) { s.mcp = nil },
			fails: []string{"FAIL POST https://mem.example.com/mcp without a token answered 404, not 401 — a proxy in front of ownsona must pass POST /mcp"}},
		{name: "401 without WWW-Authenticate", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) }
		},
			fails: []string{"answered 401 without WWW-Authenticate — connectors find the authorization server through it"}},
		{name: "401 without resource_metadata", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="ownsona"`)
				w.WriteHeader(http.StatusUnauthorized)
			}
		},
			fails: []string{"answered 401 with WWW-Authenticate \"Bearer realm=\\\"ownsona\\\"\", without a Bearer resource_metadata"}},
		{name: "relative resource_metadata", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			}
		},
			fails: []string{"answered 401 with resource_metadata \"/.well-known/oauth-protected-resource/mcp\", not an absolute https URL"}},
		{name: "http resource_metadata", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="http://mem.example.com/.well-known/oauth-protected-resource/mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
			}
		},
			fails: []string{"resource_metadata \"http://mem.example.com/.well-known/oauth-protected-resource/mcp\", not an absolute https URL"}},
		{name: "resource_metadata names another document", site: func(s *testSite) {
			s.mcp = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://mem.example.com/.well-known/oauth-authorization-server"`)
				w.WriteHeader(http.StatusUnauthorized)
			}
		},
			fails: []string{"FAIL the 401's resource_metadata https://mem.example.com/.well-known/oauth-authorization-server is not the document at https://mem.example.com/.well-known/oauth-protected-resource/mcp"}},
		{name: "public URL over http", opts: func(o *Options) { o.PublicURL = "http://mem.example.com" },
			fails: []string{"FAIL public URL http://mem.example.com is not https: Claude.ai and ChatGPT connect only over https, and serve accepts http only on loopback — use https://mem.example.com with --tls acme"},
			warns: []string{"network checks skipped"}},
		{name: "public URL with a path", opts: func(o *Options) { o.PublicURL = "https://example.com/ownsona" },
			fails: []string{"FAIL public URL https://example.com/ownsona has the path /ownsona: the OAuth issuer is an origin"},
			warns: []string{"network checks skipped"}},
		{name: "public URL on loopback", opts: func(o *Options) { o.PublicURL = "http://127.0.0.1:8080" },
			fails: []string{"FAIL public URL http://127.0.0.1:8080 is a loopback address: hosted assistants cannot reach it"},
			warns: []string{"network checks skipped"}},
		{name: "no public URL", opts: func(o *Options) { o.PublicURL = "" },
			fails: []string{"FAIL public URL not set: serve answers on loopback only"},
			warns: []string{"network checks skipped"}},
		{name: "public URL with a trailing slash", opts: func(o *Options) { o.PublicURL = "https://mem.example.com/" },
			warns: []string{"warn public URL is written https://mem.example.com/; serve uses https://mem.example.com — write it as https://mem.example.com, and give connectors exactly https://mem.example.com/mcp"}},
		{name: "public URL in capitals with :443", opts: func(o *Options) { o.PublicURL = "https://MEM.example.com:443" },
			warns: []string{"warn public URL is written https://MEM.example.com:443; serve uses https://mem.example.com"}},
		{name: "issuer of another origin", opts: func(o *Options) { o.Issuer = "https://mem.example.com/" },
			fails: []string{"FAIL issuer https://mem.example.com/ is not the public URL's origin https://mem.example.com — clients refuse"}},
		{name: "resource with a trailing slash", opts: func(o *Options) { o.Resource = "https://mem.example.com/mcp/" },
			fails: []string{"FAIL resource https://mem.example.com/mcp/ is not the public URL + /mcp (https://mem.example.com/mcp) — tokens are bound to the resource"}},
		{name: "acme for another domain", opts: func(o *Options) { o.Domains = []string{"www.example.com"} },
			fails: []string{"FAIL --tls acme gets certificates for www.example.com, but the public URL's host is mem.example.com — add mem.example.com to OWNSONA_DOMAIN"}},
		{name: "file size on 32-bit", opts: func(o *Options) { o.FileSizeWarning = func(int64) string { return "prefer a 64-bit OS" } },
			warns: []string{"is 32 KiB — prefer a 64-bit OS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site := newGoodSite(t)
			if tt.site != nil {
				tt.site(site)
			}
			cert := goodCert
			if tt.cert != nil {
				cert = *tt.cert
			}
			o := goodOptions(t, startSite(t, site, cert), ca)
			if tt.opts != nil {
				tt.opts(&o)
			}
			out, fails, warns := runDoctor(t, o)
			matchAll(t, "FAIL", fails, tt.fails, out)
			matchAll(t, "warn", warns, tt.warns, out)
			if len(tt.fails) > 0 && !strings.Contains(out, "doctor: ") {
				t.Errorf("no summary:\n%s", out)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// errConnRefused stands for ECONNREFUSED without a platform's errno.
var errConnRefused = errorString("connection refused")

type errorString string

func (e errorString) Error() string { return string(e) }

func TestRun_File(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes are not checked on Windows")
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, db string)
		fails []string
		warns []string
	}{
		{name: "good"},
		{name: "readable by others", setup: func(t *testing.T, db string) { chmod(t, db, 0o644) },
			fails: []string{"has mode 0644: other users of this machine can read your memories, tokens and signing keys — chmod 600 "}},
		{name: "directory writable by all", setup: func(t *testing.T, db string) { chmod(t, filepath.Dir(db), 0o777) },
			fails: []string{"(mode 0777) is writable by every user: anyone may replace or delete the database — keep the file in a directory of its own: sudo install -d -o ownsona -m 0700 /var/lib/ownsona"}},
		{name: "directory writable by its group", setup: func(t *testing.T, db string) { chmod(t, filepath.Dir(db), 0o770) },
			warns: []string{"(mode 0770) is writable by its group"}},
		{name: "missing", setup: func(t *testing.T, db string) { os.Remove(db) },
			warns: []string{"does not exist yet — serve creates it on its first start"}},
		{name: "not bbolt", setup: func(t *testing.T, db string) { os.WriteFile(db, []byte("SQLite format 3\x00 and more bytes"), 0o600) },
			fails: []string{"is not a bbolt database (or its first page is damaged) — check --db names ownsona's file"}},
		{name: "empty", setup: func(t *testing.T, db string) { os.WriteFile(db, nil, 0o600) },
			fails: []string{"is empty"}},
		{name: "a directory", setup: func(t *testing.T, db string) { os.Remove(db); os.Mkdir(db, 0o700) },
			fails: []string{"is a directory — --db names the file"}},
		{name: "owned by root in a directory of another user", setup: func(t *testing.T, db string) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to chown")
			}
			if err := os.Chown(filepath.Dir(db), 65534, 65534); err != nil {
				t.Skip(err)
			}
		},
			warns: []string{"belongs to root but its directory to "}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := mustDB(t)
			if tt.setup != nil {
				tt.setup(t, db)
			}
			o := Options{DB: db, PublicURL: testOrigin, TLS: "acme", Domains: []string{"mem.example.com"},
				DialContext: func(context.Context, string, string) (net.Conn, error) {
					t.Error("doctor without --public dialed")
					return nil, errConnRefused
				}}
			out, fails, warns := runDoctor(t, o)
			matchAll(t, "FAIL", fails, tt.fails, out)
			matchAll(t, "warn", warns, tt.warns, out)
		})
	}
}

func chmod(tb testing.TB, path string, mode os.FileMode) {
	tb.Helper()
	if err := os.Chmod(path, mode); err != nil {
		tb.Fatal(err)
	}
}

func TestRun_Timeouts(t *testing.T) {
	ca := mustCA(t)
	// A listener that accepts and never speaks: the handshake must give up after Timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	tests := []struct {
		name   string
		lookup func(context.Context, string) ([]netip.Addr, error)
		fails  []string
		warns  []string
	}{
		{"DNS", func(ctx context.Context, _ string) ([]netip.Addr, error) { <-ctx.Done(); return nil, ctx.Err() },
			[]string{"FAIL mem.example.com does not resolve (timed out)"}, []string{"the TLS and HTTP checks were skipped"}},
		{"TLS", lookupStub("93.184.216.34"),
			[]string{"FAIL mem.example.com:443 does not answer TLS (timed out)"}, []string{"the HTTP checks were skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := goodOptions(t, ln.Addr().String(), ca)
			o.Timeout = 200 * time.Millisecond
			o.LookupIP = tt.lookup
			// The stand-ins never answer: without the timeout doctor would wait for ever, and
			// the test binary's own timeout would fail it. No wall-clock bound here: a loaded
			// machine stretches any.
			out, fails, warns := runDoctor(t, o)
			matchAll(t, "FAIL", fails, tt.fails, out)
			matchAll(t, "warn", warns, tt.warns, out)
		})
	}
}

func TestBearerParam(t *testing.T) {
	tests := []struct {
		header, want string
		found        bool
	}{
		{`Bearer resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp", scope="memories:read memories:write"`, "https://a.example/.well-known/oauth-protected-resource/mcp", true},
		{`Bearer error="invalid_token", resource_metadata="https://a.example/x"`, "https://a.example/x", true},
		{`bearer Resource_Metadata=https://a.example/x`, "https://a.example/x", true},
		{`Basic realm="x", Bearer resource_metadata="https://a.example/\"q\""`, `https://a.example/"q"`, true},
		{`Basic resource_metadata="https://wrong.example/"`, "", false},
		{`Basic YWxhZGRpbjpvcGVuc2VzYW1l==, Bearer resource_metadata="https://a.example/x"`, "https://a.example/x", true},
		{`Bearer realm="ownsona"`, "", false},
		{``, "", false},
		{`Bearer resource_metadata="unterminated`, "unterminated", true},
	}
	for _, tt := range tests {
		got, found := bearerParam(tt.header, "resource_metadata")
		if got != tt.want || found != tt.found {
			t.Errorf("bearerParam(%q) = %q, %v, want %q, %v", tt.header, got, found, tt.want, tt.found)
		}
	}
}

func FuzzBearerParam(f *testing.F) {
	f.Add(`Bearer resource_metadata="https://a.example/x", scope="a b"`)
	f.Add(`Basic abc==, Bearer error="invalid_token"`)
	f.Add(`Bearer resource_metadata="\"\\`)
	f.Fuzz(func(t *testing.T, h string) {
		v, found := bearerParam(h, "resource_metadata")
		if !found && v != "" {
			t.Errorf("not found but %q", v)
		}
		if len(v) > len(h) {
			t.Errorf("value %q longer than the header", v)
		}
		// A value written as a quoted string comes back as written.
		q := `Bearer resource_metadata="` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(h) + `"`
		if got, ok := bearerParam(q, "resource_metadata"); !ok || got != h {
			t.Errorf("bearerParam(%q) = %q, %v, want %q", q, got, ok, h)
		}
	})
}

func TestClassifyV4(t *testing.T) {
	tests := map[string]string{
		"93.184.216.34": "", "1.1.1.1": "", "100.63.255.255": "", "100.128.0.0": "", "172.32.0.1": "",
		"10.1.2.3": "a private address", "172.16.0.1": "a private address", "172.31.255.255": "a private address", "192.168.0.1": "a private address",
		"100.64.0.1": "a carrier-grade NAT address", "100.127.255.254": "a carrier-grade NAT address",
		"127.0.0.1": "a loopback address", "169.254.169.254": "a link-local address", "0.0.0.0": "an unroutable address",
		"203.0.113.9": "a documentation address", "224.0.0.1": "a multicast address", "255.255.255.255": "a reserved address",
		"::ffff:192.168.1.1": "a private address",
	}
	for addr, want := range tests {
		got, _ := classifyV4(netip.MustParseAddr(addr))
		if !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("classifyV4(%s) = %q, want %q", addr, got, want)
		}
	}
}

// TestProxyWarning: serve warns at start of what doctor fails: an https public URL served with
// TLS off (so through a proxy or tunnel) and no trusted proxy.
func TestProxyWarning(t *testing.T) {
	for _, tc := range []struct {
		url, tls string
		proxies  []string
		warn     bool
	}{
		{"https://mem.example.com", "off", nil, true},
		{"https://mem.example.com", "", nil, true},
		{"https://mem.example.com", "off", []string{"127.0.0.1/32"}, false},
		{"https://mem.example.com", "acme", nil, false},
		{"http://127.0.0.1:8080", "off", nil, false},
		{"https://localhost:8443", "off", nil, false},
		{"", "off", nil, false},
	} {
		if got := ProxyWarning(tc.url, tc.tls, tc.proxies) != ""; got != tc.warn {
			t.Errorf("ProxyWarning(%q, %q, %v) warns %v, want %v", tc.url, tc.tls, tc.proxies, got, tc.warn)
		}
	}
}
