package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
)

// MustRootPool returns a pool holding db's local CA root.
func MustRootPool(tb testing.TB, db *kv.DB) *x509.CertPool {
	tb.Helper()
	pemBytes, err := RootPEM(db)
	if err != nil {
		tb.Fatalf("RootPEM: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		tb.Fatalf("RootPEM gave no certificate: %q", pemBytes)
	}
	return pool
}

// MustStart makes a Manager from cfg, starts it and closes it when the test ends.
func MustStart(tb testing.TB, cfg Config) *Manager {
	tb.Helper()
	m, err := New(cfg)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() { _ = m.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		tb.Fatalf("Start: %v", err)
	}
	return m
}

func TestManager_local_handshake(t *testing.T) {
	db := MustOpenDB(t, "")
	m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa", "192.168.1.7"}, Logger: testLogger(t)})
	addr := MustServeTLS(t, m.TLSConfig(), okHandler)
	roots := MustRootPool(t, db)
	for _, name := range []string{"", "localhost", "127.0.0.1", "mem.home.arpa", "192.168.1.7", "::1"} {
		t.Run(name, func(t *testing.T) {
			st, err := handshake(t, addr, name, roots)
			if err != nil {
				t.Fatalf("handshake: %v", err)
			}
			if got, want := st.NegotiatedProtocol, ""; got != want {
				t.Errorf("ALPN without offers: got %q, want %q", got, want)
			}
		})
	}
	t.Run("not our name", func(t *testing.T) {
		if _, err := handshake(t, addr, "example.com", roots); err == nil {
			t.Error("handshake as example.com verified")
		}
	})
	t.Run("h2 request", func(t *testing.T) {
		c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			ForceAttemptHTTP2: true,
		}}
		defer c.CloseIdleConnections()
		resp, err := c.Get("https://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.Proto != "HTTP/2.0" || string(body) != "ok" {
			t.Errorf("got %s %q, want HTTP/2.0 \"ok\"", resp.Proto, body)
		}
	})
	t.Run("TLS 1.1 refused", func(t *testing.T) {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MaxVersion: tls.VersionTLS11})
		if err == nil {
			conn.Close()
			t.Error("TLS 1.1 handshake succeeded")
		}
	})
}

func TestRootPEM_reopen(t *testing.T) {
	// The root and the leaf are created once and kept in the file: reopening it serves the
	// same leaf, which still verifies against the root exported before.
	path := filepath.Join(t.TempDir(), "ownsona.db")
	db, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	root1, err := RootPEM(db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Config{Mode: ModeLocal, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	leaf1, err := m.local.certificate()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = MustOpenDB(t, path)
	root2, err := RootPEM(db)
	if err != nil {
		t.Fatal(err)
	}
	if string(root1) != string(root2) {
		t.Errorf("root changed across reopening:\n%s\n%s", root1, root2)
	}
	m = MustStart(t, Config{Mode: ModeLocal, DB: db})
	addr := MustServeTLS(t, m.TLSConfig(), okHandler)
	st, err := handshake(t, addr, "localhost", MustRootPool(t, db))
	if err != nil {
		t.Fatalf("handshake: %v", err)
	}
	if got, want := st.PeerCertificates[0].SerialNumber, leaf1.Leaf.SerialNumber; got.Cmp(want) != 0 {
		t.Errorf("leaf serial after reopening: got %x, want %x (reissued)", got, want)
	}
}

func TestRootPEM_readOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ownsona.db")
	db, err := kv.Open(path, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro, err := kv.Open(path, kv.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := RootPEM(ro); err == nil {
		t.Error("RootPEM on a read-only file without a CA: got nil error")
	}
}

func TestLocalCA_certificate_renewal(t *testing.T) {
	db := MustOpenDB(t, "")
	c := newClock()
	m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Now: c.Now})
	roots := MustRootPool(t, db)
	get := func() *x509.Certificate {
		t.Helper()
		cert, err := m.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: "mem.home.arpa"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cert.Leaf.Verify(x509.VerifyOptions{DNSName: "mem.home.arpa", Roots: roots, CurrentTime: c.Now()})
		if err != nil {
			t.Fatalf("verify at %v: %v", c.Now(), err)
		}
		return cert.Leaf
	}
	first := get()
	if got, want := first.NotAfter.Sub(first.NotBefore), leafLifetime+backdate; got != want {
		t.Errorf("lifetime: got %v, want %v", got, want)
	}
	renewAt := first.NotBefore.Add(first.NotAfter.Sub(first.NotBefore) * 2 / 3)

	c.Add(renewAt.Sub(c.Now()) - time.Minute)
	if got := get(); got.SerialNumber.Cmp(first.SerialNumber) != 0 {
		t.Fatalf("renewed before 2/3 of the lifetime (at %v)", c.Now())
	}
	c.Add(2 * time.Minute)
	second := get()
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatalf("not renewed after 2/3 of the lifetime (at %v)", c.Now())
	}
	if !second.NotBefore.Equal(c.Now().Add(-backdate)) {
		t.Errorf("renewed NotBefore: got %v, want %v", second.NotBefore, c.Now().Add(-backdate))
	}

	// The renewed leaf is the one in the file: a new Manager serves it without issuing.
	m2 := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Now: c.Now})
	cert, err := m2.local.certificate()
	if err != nil {
		t.Fatal(err)
	}
	if cert.Leaf.SerialNumber.Cmp(second.SerialNumber) != 0 {
		t.Errorf("stored leaf: got serial %x, want %x", cert.Leaf.SerialNumber, second.SerialNumber)
	}

	// Other names: a new leaf that has them.
	m3 := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"other.home.arpa"}, Now: c.Now})
	cert, err = m3.local.certificate()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(cert.Leaf.DNSNames, ","); got != "localhost,other.home.arpa" {
		t.Errorf("DNS names: got %s", got)
	}
	if got := cert.Leaf.IPAddresses; len(got) != 2 || !got[0].Equal(net.IPv6loopback) && !got[1].Equal(net.IPv6loopback) {
		t.Errorf("IP addresses: got %v, want 127.0.0.1 and ::1", got)
	}
}
