package doctor_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app"
	"github.com/ownsona/ownsona/app/doctor"
)

// TestRun_Ownsona runs doctor --public against a real ownsona serving https://mem.example.com
// with --tls local: with the local authority's root trusted it finds no problem; with the
// system's roots, as Claude.ai sees it, it says to use --tls acme.
func TestRun_Ownsona(t *testing.T) {
	cfg := app.NewConfig()
	cfg.DB = filepath.Join(t.TempDir(), "ownsona.db")
	cfg.Addr = "127.0.0.1:0"
	cfg.LogLevel = "error"
	cfg.PublicURL = "https://mem.example.com"
	cfg.TLS = "local"
	cfg.Domains = []string{"mem.example.com"}
	cfg.LoginPassword = "correct horse battery staple"
	a, err := app.Open(cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	roots := localRoot(t, a.Addr())
	opts := doctor.Options{DB: cfg.DB, PublicURL: cfg.PublicURL, TLS: cfg.TLS, Domains: cfg.Domains, Public: true, Timeout: 5 * time.Second,
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("93.184.216.34")}, nil
		},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, a.Addr())
		}}

	t.Run("trusting the local authority", func(t *testing.T) {
		o := opts
		o.Roots = roots
		var out bytes.Buffer
		n, err := doctor.Run(context.Background(), o, &out)
		if err != nil || n != 0 {
			t.Fatalf("Run = %d, %v:\n%s", n, err, &out)
		}
		for _, want := range []string{
			"ok   GET https://mem.example.com/.well-known/oauth-protected-resource: ",
			"ok   GET https://mem.example.com/.well-known/oauth-protected-resource/mcp: ",
			"ok   GET https://mem.example.com/.well-known/oauth-authorization-server: ",
			"ok   POST https://mem.example.com/mcp without a token: 401, resource_metadata https://mem.example.com/.well-known/oauth-protected-resource/mcp",
			"warn tls local: the certificate for mem.example.com comes from ownsona's own authority",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("output lacks %q:\n%s", want, &out)
			}
		}
	})
	t.Run("as hosted assistants see it", func(t *testing.T) {
		var out bytes.Buffer
		n, err := doctor.Run(context.Background(), opts, &out)
		if err != nil || n != 1 {
			t.Fatalf("Run = %d, %v, want 1 problem:\n%s", n, err, &out)
		}
		if want := "--tls local certificates come from ownsona's own authority, which Claude.ai and ChatGPT do not trust: use --tls acme"; !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, &out)
		}
	})
}

// localRoot fetches the local authority's root from the server's /ca.crt.
func localRoot(tb testing.TB, addr string) *x509.CertPool {
	tb.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := c.Get("https://" + addr + "/ca.crt")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	pem, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET /ca.crt: %d, %v", resp.StatusCode, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		tb.Fatalf("/ca.crt holds no certificate: %q", pem)
	}
	return pool
}
