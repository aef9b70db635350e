package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// MustWritePair writes a new self-signed certificate for name and its key to the two files,
// each replaced by a rename as certbot and friends do, and returns the certificate's serial.
func MustWritePair(tb testing.TB, certFile, keyFile, name string, serial int64) *big.Int {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	mustReplace(tb, certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	mustReplace(tb, keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return tmpl.SerialNumber
}

func mustReplace(tb testing.TB, name string, data []byte) {
	tb.Helper()
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, name); err != nil {
		tb.Fatal(err)
	}
}

func TestManager_files(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "fullchain.pem"), filepath.Join(dir, "privkey.pem")
	first := MustWritePair(t, certFile, keyFile, "files.test", 1)
	c := newClock()
	m := MustStart(t, Config{Mode: ModeFiles, CertFile: certFile, KeyFile: keyFile, Now: c.Now, Logger: testLogger(t)})
	addr := MustServeTLS(t, m.TLSConfig(), okHandler)
	serial := func() *big.Int {
		t.Helper()
		st, err := handshake(t, addr, "files.test", nil)
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		return st.PeerCertificates[0].SerialNumber
	}
	if got := serial(); got.Cmp(first) != 0 {
		t.Fatalf("serial: got %v, want %v", got, first)
	}

	second := MustWritePair(t, certFile, keyFile, "files.test", 2)
	c.Add(fileCheckInterval - time.Second)
	if got := serial(); got.Cmp(first) != 0 {
		t.Errorf("within a minute of the last check: got serial %v, want %v", got, first)
	}
	c.Add(time.Second)
	if got := serial(); got.Cmp(second) != 0 {
		t.Errorf("a minute after the last check: got serial %v, want %v", got, second)
	}

	// In place (same inode), as an editor or cp would.
	third := MustWritePair(t, certFile+".new", keyFile+".new", "files.test", 3)
	for _, f := range [][2]string{{certFile + ".new", certFile}, {keyFile + ".new", keyFile}} {
		data, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f[1], data, 0o600); err != nil {
			t.Fatal(err)
		}
		// The same size as before, so only the time tells: make sure it differs even on a
		// file system with coarse timestamps.
		later := time.Now().Add(time.Minute)
		if err := os.Chtimes(f[1], later, later); err != nil {
			t.Fatal(err)
		}
	}
	c.Add(fileCheckInterval)
	if got := serial(); got.Cmp(third) != 0 {
		t.Errorf("after rewriting in place: got serial %v, want %v", got, third)
	}

	// A broken pair keeps the last good certificate, and is tried again at the next check.
	if err := os.WriteFile(keyFile, []byte("half written"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.Add(fileCheckInterval)
	if got := serial(); got.Cmp(third) != 0 {
		t.Errorf("with a broken key: got serial %v, want %v", got, third)
	}
	fourth := MustWritePair(t, certFile, keyFile, "files.test", 4)
	c.Add(fileCheckInterval)
	if got := serial(); got.Cmp(fourth) != 0 {
		t.Errorf("after the fix: got serial %v, want %v", got, fourth)
	}
}

func TestManager_Start_files(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	m, err := New(Config{Mode: ModeFiles, CertFile: certFile, KeyFile: keyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Start(t.Context()); err == nil {
		t.Error("Start without the files: got nil error")
	}
	MustWritePair(t, certFile, keyFile, "files.test", 1)
	if err := m.Start(t.Context()); err != nil {
		t.Errorf("Start with the files: %v", err)
	}
}
