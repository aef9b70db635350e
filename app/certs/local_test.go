package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/rs/zerolog"
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
	db := kvtest.Open(t)
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
	db := kvtest.OpenFile(t, path, kv.Options{})
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

	db = kvtest.OpenFile(t, path, kv.Options{})
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
	db := kvtest.OpenFile(t, path, kv.Options{})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ro := kvtest.OpenFile(t, path, kv.Options{ReadOnly: true})
	if _, err := RootPEM(ro); err == nil {
		t.Error("RootPEM on a read-only file without a CA: got nil error")
	}
}

func TestLocalCA_certificate_renewal(t *testing.T) {
	db := kvtest.Open(t)
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

func TestLocalCA_root_constrained(t *testing.T) {
	// The root may vouch only for the configured names and the names under them, localhost
	// and loopback: a leaf for any other name, signed with the root's own key (as by someone
	// with a copy of the file), fails verification against it.
	db := kvtest.Open(t)
	MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa", "192.168.1.7"}, Logger: testLogger(t)})
	root, key := MustStoredRoot(t, db)
	if !root.PermittedDNSDomainsCritical {
		t.Error("name constraints are not critical")
	}
	if got, want := strings.Join(root.PermittedDNSDomains, " "), "localhost mem.home.arpa"; got != want {
		t.Errorf("permitted DNS domains: got %q, want %q", got, want)
	}
	var ranges []string
	for _, n := range root.PermittedIPRanges {
		ranges = append(ranges, n.String())
	}
	if got, want := strings.Join(ranges, " "), "127.0.0.0/8 192.168.1.7/32 ::1/128"; got != want {
		t.Errorf("permitted IP ranges: got %q, want %q", got, want)
	}
	roots := poolOf(root)
	for _, tc := range []struct {
		name string
		want bool // verifies
	}{
		{"mem.home.arpa", true},
		{"sub.mem.home.arpa", true}, // a DNS constraint permits the names under it
		{"localhost", true},
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"::1", true},
		{"192.168.1.7", true},
		{"example.com", false},
		{"home.arpa", false},
		{"xmem.home.arpa", false},
		{"mem.home.arpa.example.com", false},
		{"localhost.example.com", false},
		{"192.168.1.8", false},
		{"10.0.0.1", false},
		{"::2", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaf := MustSignLeaf(t, root, key, tc.name)
			_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: tc.name})
			if got := err == nil; got != tc.want {
				t.Fatalf("verified: got %v, want %v (%v)", got, tc.want, err)
			}
			var inv x509.CertificateInvalidError
			if !tc.want && (!errors.As(err, &inv) || inv.Reason != x509.CANotAuthorizedForThisName) {
				t.Errorf("got %v, want the root not authorized for this name", err)
			}
		})
	}
}

func TestManager_local_loopback(t *testing.T) {
	// Loopback connections verify through the constrained root, by name and by address, over
	// IPv4 and IPv6.
	db := kvtest.Open(t)
	m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Logger: testLogger(t)})
	roots := MustRootPool(t, db)
	addrs := map[string]string{"127.0.0.1": MustServeTLS(t, m.TLSConfig(), okHandler)}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		addrs["::1"] = serveTLS(t, ln, m.TLSConfig(), okHandler)
	}
	for _, ip := range []string{"127.0.0.1", "::1"} {
		for _, name := range []string{"localhost", ip} {
			t.Run(ip+"/"+name, func(t *testing.T) {
				addr, ok := addrs[ip]
				if !ok {
					t.Skip("no IPv6 loopback")
				}
				st, err := handshake(t, addr, name, roots)
				if err != nil {
					t.Fatalf("handshake: %v", err)
				}
				chain := st.VerifiedChains[0]
				if root := chain[len(chain)-1]; !root.PermittedDNSDomainsCritical {
					t.Errorf("verified through %q, which has no name constraints", root.Subject.CommonName)
				}
			})
		}
	}
}

func TestLocalCA_namesChange(t *testing.T) {
	// Other names make a new root, limited to them; the log says devices must trust it again,
	// and RootPEM (`ownsona ca export`, /ca.crt) gives it.
	db := kvtest.Open(t)
	MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Logger: testLogger(t)})
	first, _ := MustStoredRoot(t, db)

	t.Run("same names", func(t *testing.T) {
		var logs syncBuffer
		MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Logger: zerolog.New(&logs)})
		if got, _ := MustStoredRoot(t, db); got.SerialNumber.Cmp(first.SerialNumber) != 0 {
			t.Errorf("root replaced for the same names; log: %s", logs.String())
		}
	})

	var logs syncBuffer
	m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"notes.home.arpa", "192.168.1.7"}, Logger: zerolog.New(&logs)})
	second, _ := MustStoredRoot(t, db)
	if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
		t.Fatal("same root after the names changed")
	}
	if got, want := strings.Join(second.PermittedDNSDomains, " "), "localhost notes.home.arpa"; got != want {
		t.Errorf("permitted DNS domains: got %q, want %q", got, want)
	}
	for _, want := range []string{"local CA root replaced because the names changed", "devices must trust the new root again"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	cert, err := m.local.certificate()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
		want  bool
	}{
		{"new root", MustRootPool(t, db), true},
		{"old root", poolOf(first), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cert.Leaf.Verify(x509.VerifyOptions{Roots: tc.roots, DNSName: "notes.home.arpa"})
			if got := err == nil; got != tc.want {
				t.Errorf("the new leaf verifies: got %v, want %v (%v)", got, tc.want, err)
			}
		})
	}
	t.Run("old names refused", func(t *testing.T) {
		_, key := MustStoredRoot(t, db)
		leaf := MustSignLeaf(t, second, key, "mem.home.arpa")
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: poolOf(second), DNSName: "mem.home.arpa"}); err == nil {
			t.Error("the new root vouches for a name no longer configured")
		}
	})
}

func TestLocalCA_root_lifetime(t *testing.T) {
	// The root lives two years and is replaced 30 days (a leaf's lifetime) before it expires,
	// so no leaf outlives its root; the log says devices must trust the new one.
	synctest.Test(t, func(t *testing.T) {
		db := kvtest.Open(t)
		var logs syncBuffer
		m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: []string{"mem.home.arpa"}, Logger: zerolog.New(&logs)})
		first, _ := MustStoredRoot(t, db)
		if got, want := first.NotAfter.Sub(first.NotBefore), 2*365*24*time.Hour+time.Minute; got != want {
			t.Errorf("root lifetime: got %v, want %v", got, want)
		}
		get := func() (*x509.Certificate, *x509.Certificate) {
			t.Helper()
			cert, err := m.TLSConfig().GetCertificate(&tls.ClientHelloInfo{ServerName: "mem.home.arpa"})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := MustStoredRoot(t, db)
			if _, err := cert.Leaf.Verify(x509.VerifyOptions{DNSName: "mem.home.arpa", Roots: poolOf(root)}); err != nil {
				t.Fatalf("verify at %v: %v", time.Now(), err)
			}
			if cert.Leaf.NotAfter.After(root.NotAfter) {
				t.Errorf("leaf outlives its root: %v after %v", cert.Leaf.NotAfter, root.NotAfter)
			}
			return cert.Leaf, root
		}
		due := first.NotAfter.Add(-30 * 24 * time.Hour)

		time.Sleep(time.Until(due) - time.Minute)
		if _, root := get(); root.SerialNumber.Cmp(first.SerialNumber) != 0 {
			t.Fatalf("root replaced before it was due (at %v)", time.Now())
		}
		time.Sleep(2 * time.Minute)
		_, second := get()
		if second.SerialNumber.Cmp(first.SerialNumber) == 0 {
			t.Fatalf("root not replaced 30 days before it expires (at %v)", time.Now())
		}
		if got, want := second.NotAfter, time.Now().Add(2*365*24*time.Hour); !got.Equal(want) {
			t.Errorf("new root's NotAfter: got %v, want %v", got, want)
		}
		if want := "local CA root replaced because it expires on " + first.NotAfter.UTC().Format(time.DateOnly); !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
		if got, err := RootPEM(db); err != nil || !bytes.Equal(got, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: second.Raw})) {
			t.Errorf("RootPEM: %v, not the new root:\n%s", err, got)
		}
	})
}

func TestLocalCA_legacyRoot(t *testing.T) {
	// A file from an older ownsona holds a root without name constraints, good for ten years.
	names := []string{"mem.home.arpa"}
	t.Run("replaced on start", func(t *testing.T) {
		db := kvtest.Open(t)
		legacy := MustPutLegacyCA(t, db, names)
		var logs syncBuffer
		m := MustStart(t, Config{Mode: ModeLocal, DB: db, Names: names, Logger: zerolog.New(&logs)})
		root, _ := MustStoredRoot(t, db)
		if root.SerialNumber.Cmp(legacy.SerialNumber) == 0 || !root.PermittedDNSDomainsCritical {
			t.Fatalf("the unconstrained root was kept")
		}
		for _, want := range []string{"local CA root replaced because it could vouch for any name", "devices must trust the new root again"} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("log lacks %q:\n%s", want, logs.String())
			}
		}
		cert, err := m.local.certificate()
		if err != nil {
			t.Fatal(err)
		}
		if err := cert.Leaf.CheckSignatureFrom(root); err != nil {
			t.Errorf("the leaf is not from the new root: %v", err)
		}
	})
	t.Run("ca export first", func(t *testing.T) {
		// RootPEM replaces it too, for the names of the stored leaf (the last serve), so the
		// root exported is the one serve then keeps.
		db := kvtest.Open(t)
		legacy := MustPutLegacyCA(t, db, names)
		exported, err := RootPEM(db)
		if err != nil {
			t.Fatal(err)
		}
		root, err := parseCertPEM(exported)
		if err != nil {
			t.Fatal(err)
		}
		if root.SerialNumber.Cmp(legacy.SerialNumber) == 0 {
			t.Fatal("RootPEM gave the unconstrained root")
		}
		if got, want := strings.Join(root.PermittedDNSDomains, " "), "localhost mem.home.arpa"; got != want {
			t.Errorf("permitted DNS domains: got %q, want %q", got, want)
		}
		var logs syncBuffer
		MustStart(t, Config{Mode: ModeLocal, DB: db, Names: names, Logger: zerolog.New(&logs)})
		if got, _ := MustStoredRoot(t, db); got.SerialNumber.Cmp(root.SerialNumber) != 0 {
			t.Errorf("serve replaced the exported root; log: %s", logs.String())
		}
	})
}
