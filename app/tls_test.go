package app

import (
	"github.com/ownsona/ownsona/app/memory"

	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ownsona/ownsona/kv"
)

// These tests run `ownsona serve` with HTTPS from the binary (issue 5, "TLS"): --tls local end
// to end with its own certificate authority, --tls files, --tls acme against Pebble (Let's
// Encrypt's test CA, in-process), and the settings' validation.

// serveWatcher is the stderr of a `serve` run through Run: it keeps the log and hands over the
// URL of its "serving MCP" line.
type serveWatcher struct {
	logs syncBuffer
	urls chan string
}

func (w *serveWatcher) Write(p []byte) (int, error) {
	w.logs.Write(p)
	for line := range bytes.Lines(p) {
		var l struct {
			Message string `json:"message"`
			URL     string `json:"url"`
		}
		if json.Unmarshal(line, &l) == nil && l.Message == "serving MCP" {
			select {
			case w.urls <- l.URL:
			default:
			}
		}
	}
	return len(p), nil
}

// runningServe is `ownsona serve` running in this process through Run.
type runningServe struct {
	URL  string // the MCP endpoint, as logged
	Base string // URL without /mcp
	logs *syncBuffer
	stop func()
}

// startServe runs Run(ctx, args, env) and waits (at most within) for it to serve; stop (also
// at cleanup) cancels its context and waits for Run to return nil.
func startServe(t *testing.T, within time.Duration, env map[string]string, args ...string) *runningServe {
	t.Helper()
	w := &serveWatcher{urls: make(chan string, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- Run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), io.Discard, w)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("ownsona %s: %v\n%s", strings.Join(args, " "), err, w.logs.String())
				}
			case <-time.After(2 * time.Minute):
				t.Errorf("ownsona serve did not stop within 2 minutes of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case u := <-w.urls:
		return &runningServe{URL: u, Base: strings.TrimSuffix(u, "/mcp"), logs: &w.logs, stop: stop}
	case err := <-errc:
		errc <- nil // for stop at cleanup: Run has returned, and this error is reported here
		t.Fatalf("ownsona %s exited before serving: %v\n%s", strings.Join(args, " "), err, w.logs.String())
	case <-time.After(within):
		cancel()
		t.Fatalf("ownsona %s did not serve within %s:\n%s", strings.Join(args, " "), within, w.logs.String())
	}
	return nil
}

// adminRun runs an ownsona command that is not serve and returns its standard output.
func adminRun(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := Run(ctx, args, func(k string) string { return env[k] }, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatalf("ownsona %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// httpsClient trusts only roots; with dialTo set, it connects there whatever the URL's host
// (the names of these tests resolve nowhere).
func httpsClient(roots *x509.CertPool, dialTo string) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}
	if dialTo != "" {
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{Timeout: 10 * time.Second}).DialContext(ctx, network, dialTo)
		}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// bearerRT adds a bearer token to every request sent through base.
type bearerRT struct {
	token string
	base  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// getTLS fetches url with c and returns the response (body read) and the server's leaf.
func getTLS(t *testing.T, c *http.Client, url string) (*http.Response, []byte, *x509.Certificate) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 {
		t.Fatalf("GET %s: not over TLS", url)
	}
	return resp, body, resp.TLS.PeerCertificates[0]
}

// sdkOverTLS connects the Go SDK to endpoint through c with a bearer token, and checks that a
// memory can be written and found.
func sdkOverTLS(t *testing.T, c *http.Client, endpoint, token, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hc := &http.Client{Transport: bearerRT{token, c.Transport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-tls-test", Version: "1.0.0"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", endpoint, err)
	}
	defer s.Close()
	p := sdkPayload(t, s, "remember", map[string]any{"text": text})
	r := sdkPayload(t, s, "recall", map[string]any{"query": text})
	if m := r["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["id"] != p["memory_id"] {
		t.Errorf("recall over HTTPS = %v, want memory %v first", r, p["memory_id"])
	}
}

// TestTLS_Local: `ownsona ca export` prints the local CA's root before the first start; `serve
// --tls local` answers HTTPS with a certificate from that root (and only clients trusting it
// connect), sends HSTS, serves the same root at /ca.crt, and serves MCP to the Go SDK with a
// personal access token; after a restart on the same file the certificate is the same one.
func TestTLS_Local(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "ownsona.db")
	env := map[string]string{"OWNSONA_LOGIN_PASSWORD": testPassword, "OWNSONA_RATE_LIMIT": "0"}
	rootPEM := adminRun(t, env, "ca", "export", "--db", dbPath)
	block, _ := pem.Decode([]byte(rootPEM))
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("ca export printed %q, want a PEM certificate", rootPEM)
	}
	root, err := x509.ParseCertificate(block.Bytes)
	if err != nil || !root.IsCA {
		t.Fatalf("ca export: %v, IsCA %v", err, root != nil && root.IsCA)
	}
	pool := x509.NewCertPool()
	pool.AddCert(root)
	client := httpsClient(pool, "")
	pat := strings.TrimSpace(adminRun(t, env, "token", "create", "--name", "tls-test", "--db", dbPath))

	args := []string{"serve", "--db", dbPath, "--addr", "127.0.0.1:0", "--tls", "local", "--log-level", "info"}
	srv := startServe(t, 30*time.Second, env, args...)
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Fatalf("serving at %q, want https://127.0.0.1:PORT/mcp", srv.URL)
	}
	resp, body, leaf := getTLS(t, client, srv.Base+"/health")
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"healthy"`) {
		t.Fatalf("/health over HTTPS: %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
		t.Errorf("Strict-Transport-Security = %q under --tls local", got)
	}
	if err := leaf.CheckSignatureFrom(root); err != nil {
		t.Errorf("the leaf is not signed by the exported root: %v", err)
	}
	if err := leaf.VerifyHostname("127.0.0.1"); err != nil {
		t.Errorf("leaf names: %v", err)
	}
	serial := leaf.SerialNumber.String()

	t.Run("untrusting client", func(t *testing.T) {
		_, err := (&http.Client{Timeout: 10 * time.Second}).Get(srv.Base + "/health")
		var ua x509.UnknownAuthorityError
		if !errors.As(err, &ua) {
			t.Errorf("a client with the system roots: err = %v, want an unknown authority", err)
		}
	})
	t.Run("ca.crt", func(t *testing.T) {
		resp, body, _ := getTLS(t, client, srv.Base+"/ca.crt")
		if resp.StatusCode != http.StatusOK || string(body) != rootPEM {
			t.Errorf("/ca.crt: %d, body equal to ca export: %v", resp.StatusCode, string(body) == rootPEM)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/x-pem-file" {
			t.Errorf("/ca.crt Content-Type %q", ct)
		}
	})
	t.Run("ca export while serving", func(t *testing.T) {
		if got := adminRun(t, env, "ca", "export", "--db", dbPath); got != rootPEM {
			t.Errorf("ca export while serving printed another root:\n%s", got)
		}
	})
	t.Run("MCP over HTTPS", func(t *testing.T) {
		sdkOverTLS(t, client, srv.URL, pat, "the local CA serves the lighthouse keeper")
	})
	srv.stop()

	srv = startServe(t, 30*time.Second, env, args...)
	resp, _, leaf = getTLS(t, client, srv.Base+"/health")
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/health after a restart: %d", resp.StatusCode)
	}
	if got := leaf.SerialNumber.String(); got != serial {
		t.Errorf("leaf serial after a restart = %s, want %s (kept in the file, not reissued)", got, serial)
	}
	if _, body, _ := getTLS(t, client, srv.Base+"/ca.crt"); string(body) != rootPEM {
		t.Error("/ca.crt changed after a restart")
	}
	sdkOverTLS(t, client, srv.URL, pat, "the restarted server still knows the lighthouse keeper")
	srv.stop()

	if got := adminRun(t, env, "ca", "export", "--db", dbPath); got != rootPEM {
		t.Errorf("ca export after serving printed another root:\n%s", got)
	}
}

// writeSelfSigned writes a self-signed certificate for 127.0.0.1 and localhost, and its key,
// as PEM files in dir.
func writeSelfSigned(t *testing.T, dir string) (certFile, keyFile string, cert *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(4711),
		Subject:               pkix.Name{CommonName: "ownsona files test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, cert
}

// TestTLS_Files: --tls files serves the given certificate; missing files fail at startup.
func TestTLS_Files(t *testing.T) {
	certFile, keyFile, cert := writeSelfSigned(t, t.TempDir())
	cfg := testConfig(t, nil)
	cfg.PublicURL = ""
	cfg.TLS, cfg.CertFile, cfg.KeyFile = "files", certFile, keyFile
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	if got := a.Auth().Endpoints().Issuer; got != "https://"+a.Addr() {
		t.Errorf("issuer = %q, want https://%s", got, a.Addr())
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	client := httpsClient(pool, "")
	resp, body, leaf := getTLS(t, client, "https://"+a.Addr()+"/health")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/health: %d %s", resp.StatusCode, body)
	}
	if !leaf.Equal(cert) {
		t.Errorf("served certificate %v, want the one in %s", leaf.Subject, certFile)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
		t.Errorf("Strict-Transport-Security = %q under --tls files", got)
	}
	if resp, _, _ := getTLS(t, client, "https://"+a.Addr()+"/ca.crt"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/ca.crt under --tls files: %d, want 404", resp.StatusCode)
	}
	sdkOverTLS(t, client, "https://"+a.Addr()+"/mcp", patFor(t, a), "the files certificate guards the orchard")

	t.Run("missing files", func(t *testing.T) {
		cfg := testConfig(t, nil)
		cfg.PublicURL = ""
		missing := filepath.Join(t.TempDir(), "nope.pem")
		cfg.TLS, cfg.CertFile, cfg.KeyFile = "files", missing, keyFile
		b := MustOpen(t, cfg)
		err := b.Listen()
		if err == nil || !strings.Contains(err.Error(), "nope.pem") {
			t.Errorf("Listen with a missing certificate file: err = %v, want one naming it", err)
		}
	})
}

// TestLoadConfig_TLS: TLS settings that cannot work fail at startup with a message that names
// the setting.
func TestLoadConfig_TLS(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown mode", []string{"--tls", "bogus"}, nil, "tls"},
		{"unknown mode from the environment", nil, map[string]string{"OWNSONA_TLS": "on"}, "tls"},
		{"acme without a domain", []string{"--tls", "acme"}, nil, "OWNSONA_DOMAIN"},
		{"files without --cert", []string{"--tls", "files", "--key", "key.pem"}, nil, "--cert"},
		{"files without --key", []string{"--tls", "files", "--cert", "cert.pem"}, nil, "--key"},
		{"domain with a scheme", []string{"--tls", "acme", "--domain", "https://mem.example.com"}, nil, "domain"},
		{"wildcard domain", []string{"--tls", "acme", "--domain", "*.example.com"}, nil, "domain"},
		{"domain with a port", []string{"--tls", "local", "--domain", "mem.lan:8443"}, nil, "domain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadConfig("serve", tc.args, func(k string) string { return tc.env[k] }, nil)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error naming %q", err, tc.want)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		for _, args := range [][]string{
			{"--tls", "off"},
			{"--tls", "local"},
			{"--tls", "local", "--domain", "mem.lan,192.168.1.5"},
			{"--tls", "acme", "--domain", "mem.example.com", "--acme-email", "me@example.com"},
			{"--tls", "files", "--cert", "c.pem", "--key", "k.pem"},
		} {
			if _, _, err := loadConfig("serve", args, func(string) string { return "" }, nil); err != nil {
				t.Errorf("%q: %v", args, err)
			}
		}
	})
	t.Run("through Run", func(t *testing.T) {
		err := Run(context.Background(), []string{"serve", "--tls", "acme", "--db", filepath.Join(t.TempDir(), "x.db")},
			func(string) string { return "" }, strings.NewReader(""), io.Discard, io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "tls acme") {
			t.Errorf("serve --tls acme without a domain: err = %v", err)
		}
	})
	t.Run("acme defaults", func(t *testing.T) {
		cfg := NewConfig()
		cfg.TLS, cfg.Domains = "acme", []string{"mem.example.com"}
		tlsDefaults(&cfg)
		if cfg.Addr != ":443" || cfg.PublicURL != "https://mem.example.com" {
			t.Errorf("acme defaults: addr %q, public URL %q; want :443 and https://mem.example.com", cfg.Addr, cfg.PublicURL)
		}
		cfg = NewConfig()
		cfg.TLS, cfg.Domains, cfg.Addr = "local", []string{"mem.lan"}, "127.0.0.1:8443"
		tlsDefaults(&cfg)
		if cfg.PublicURL != "https://mem.lan:8443" {
			t.Errorf("local with a domain on 8443: public URL %q, want https://mem.lan:8443", cfg.PublicURL)
		}
	})
}

// ---- Pebble ----

// testPebble is an ACME CA in the test process: Pebble's own packages behind an httptest
// server, validating challenges for real against the given ports on 127.0.0.1, where every name
// resolves (through a DNS server of the test's). It is app/certs' harness (acme_test.go),
// copied: test files of another package cannot be imported.
type testPebble struct {
	dirURL   string            // the ACME directory
	tlsRoot  *x509.Certificate // the directory's own HTTPS certificate
	roots    *x509.CertPool    // Pebble's issuing root
	newOrder atomic.Int32      // newOrder requests seen
}

func startTestPebble(t *testing.T, httpPort, tlsPort int) *testPebble {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_AUTHZREUSE", "0")
	t.Setenv("PEBBLE_VA_ALWAYS_VALID", "0")
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, tlsPort, false, startTestDNS(t), store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	p := &testPebble{roots: x509.NewCertPool()}
	p.roots.AddCert(authority.GetRootCert(0).Cert)
	h := front.Handler()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
			p.newOrder.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.tlsRoot = srv.Certificate()
	p.dirURL = srv.URL + wfe.DirectoryPath
	return p
}

// startTestDNS serves DNS over TCP on loopback: every name has the address 127.0.0.1.
func startTestDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Net: "tcp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		r := new(dns.Msg)
		r.SetReply(q)
		for _, question := range q.Question {
			if question.Qtype == dns.TypeA {
				r.Answer = append(r.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: question.Name, Rrtype: dns.TypeA, Class: dns.ClassINET},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		_ = w.WriteMsg(r)
	})}
	go func() { _ = srv.ActivateAndServe() }()
	t.Cleanup(func() { _ = srv.Shutdown() })
	return ln.Addr().String()
}

// freePort takes a loopback port nothing listens on and holds it until release (or cleanup).
// Pebble must know the ports it validates before the server under test opens them: holding
// them meanwhile keeps this process's own listeners (pebble's API and DNS, on port 0) off them,
// which once gave pebble's API the port serve was to listen on. Between release and serve's
// listen another process could still take it.
func freePort(t *testing.T) (port int, release func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port, func() { ln.Close() }
}

// storedACMECert reads the certificate for name that certmagic keeps in the file's "tls"
// bucket (each value is 8 bytes of modification time, then the PEM).
func storedACMECert(t *testing.T, path, name string) *x509.Certificate {
	t.Helper()
	database, err := kv.Open(path, kv.Options{Migrations: memory.Migrations})
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close()
	var cert *x509.Certificate
	err = database.View(func(tx *kv.Tx) error {
		b := tx.Bucket("tls")
		if b == nil {
			return errors.New("no tls bucket")
		}
		return b.ForEach(func(k, v []byte) error {
			if !strings.HasPrefix(string(k), "certificates/") || !strings.HasSuffix(string(k), "/"+name+"/"+name+".crt") || len(v) < 8 {
				return nil
			}
			block, _ := pem.Decode(v[8:])
			if block == nil {
				return errors.New(string(k) + ": no PEM")
			}
			cert, err = x509.ParseCertificate(block.Bytes)
			return err
		})
	})
	if err != nil {
		t.Fatalf("read the stored certificate: %v", err)
	}
	return cert
}

// TestTLS_ACME: `serve --tls acme --domain NAME --acme-ca PEBBLE --acme-ca-root PEM` obtains a
// certificate through the challenge listeners it opens, serves HTTPS with it, redirects plain
// HTTP, keeps the certificate in the file, and after a restart serves the same one without a
// new order. A handshake for another name orders nothing (SECURITY.md LA-08).
func TestTLS_ACME(t *testing.T) {
	const domain = "mem.ownsona.test"
	// The ports stay taken until serve is about to listen on them, so that pebble's own
	// listeners (its API, its DNS) cannot be given one of them meanwhile.
	httpPort, releaseHTTP := freePort(t)
	httpsPort, releaseHTTPS := freePort(t)
	p := startTestPebble(t, httpPort, httpsPort)
	dir := t.TempDir()
	caRoot := filepath.Join(dir, "pebble-tls.pem")
	if err := os.WriteFile(caRoot, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.tlsRoot.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "ownsona.db")
	mustCreateDB(t, dbPath)
	env := map[string]string{"OWNSONA_LOGIN_PASSWORD": testPassword, "OWNSONA_RATE_LIMIT": "0"}
	pat := strings.TrimSpace(adminRun(t, env, "token", "create", "--name", "acme-test", "--db", dbPath))
	args := []string{"serve", "--db", dbPath, "--tls", "acme", "--domain", domain,
		"--acme-ca", p.dirURL, "--acme-ca-root", caRoot, "--acme-email", "owner@ownsona.test",
		"--addr", "127.0.0.1:" + strconv.Itoa(httpsPort), "--http-addr", "127.0.0.1:" + strconv.Itoa(httpPort), "--log-level", "info"}

	releaseHTTP()
	releaseHTTPS()
	srv := startServe(t, 90*time.Second, env, args...)
	base := "https://" + domain + ":" + strconv.Itoa(httpsPort)
	if srv.URL != base+"/mcp" {
		t.Errorf("serving at %q, want %s/mcp", srv.URL, base)
	}
	if got := p.newOrder.Load(); got != 1 {
		t.Errorf("orders = %d, want 1", got)
	}
	client := httpsClient(p.roots, "127.0.0.1:"+strconv.Itoa(httpsPort))
	resp, body, leaf := getTLS(t, client, base+"/health")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/health over HTTPS: %d %s", resp.StatusCode, body)
	}
	if err := leaf.VerifyHostname(domain); err != nil {
		t.Errorf("the certificate: %v", err)
	}
	if got := resp.Header.Get("Strict-Transport-Security"); !strings.HasPrefix(got, "max-age=") {
		t.Errorf("Strict-Transport-Security = %q under --tls acme", got)
	}
	serial := leaf.SerialNumber.String()

	t.Run("MCP over HTTPS", func(t *testing.T) {
		sdkOverTLS(t, client, srv.URL, pat, "the ACME certificate guards the bell tower")
	})
	t.Run("plain HTTP redirects", func(t *testing.T) {
		plain := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(httpPort)+"/health?x=1", nil)
		req.Host = domain
		resp, err := plain.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != base+"/health?x=1" {
			t.Errorf("GET on the HTTP port: %d Location %q, want 308 to %s/health?x=1", resp.StatusCode, resp.Header.Get("Location"), base)
		}
		if resp.Header.Get("X-Frame-Options") != "DENY" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("the HTTP port's answer lacks the security headers: %v", resp.Header)
		}
	})
	t.Run("another name orders nothing", func(t *testing.T) {
		before := p.newOrder.Load()
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", "127.0.0.1:"+strconv.Itoa(httpsPort),
			&tls.Config{ServerName: "random.example", InsecureSkipVerify: true})
		if err == nil {
			if cert := conn.ConnectionState().PeerCertificates[0]; cert.VerifyHostname("random.example") == nil {
				t.Errorf("a certificate for random.example was served")
			}
			conn.Close()
		}
		if got := p.newOrder.Load() - before; got != 0 {
			t.Errorf("a handshake for random.example made %d orders", got)
		}
	})
	srv.stop()

	if stored := storedACMECert(t, dbPath, domain); stored == nil || stored.SerialNumber.String() != serial {
		t.Errorf("certificate in the file: %v, want serial %s", stored, serial)
	}
	before := p.newOrder.Load()
	srv = startServe(t, 60*time.Second, env, args...)
	if got := p.newOrder.Load() - before; got != 0 {
		t.Errorf("orders after a restart = %d, want 0", got)
	}
	if _, _, leaf := getTLS(t, client, base+"/health"); leaf.SerialNumber.String() != serial {
		t.Errorf("serial after a restart = %s, want %s", leaf.SerialNumber, serial)
	}
	srv.stop()
}
