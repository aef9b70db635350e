package certs

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/rs/zerolog"
)

// testLogger writes to the test's log, so that failures come with what the package said.
func testLogger(tb testing.TB) zerolog.Logger {
	return zerolog.New(zerolog.ConsoleWriter{Out: tbWriter{tb}, NoColor: true}).Level(zerolog.DebugLevel).
		With().Timestamp().Logger()
}

type tbWriter struct{ tb testing.TB }

func (w tbWriter) Write(p []byte) (int, error) {
	w.tb.Helper()
	w.tb.Log(string(p))
	return len(p), nil
}

// clock is an injected time that tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// MustServeTLS serves h with cfg on a new loopback port until the test ends, and returns
// the address.
func MustServeTLS(tb testing.TB, cfg *tls.Config, h http.Handler) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return serveTLS(tb, ln, cfg, h)
}

// serveTLS serves h with cfg on ln until the test ends, and returns the address.
func serveTLS(tb testing.TB, ln net.Listener, cfg *tls.Config, h http.Handler) string {
	tb.Helper()
	srv := &http.Server{Handler: h, TLSConfig: cfg, ReadHeaderTimeout: 5 * time.Second, ErrorLog: discardLog}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	tb.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// handshake connects to addr as serverName, verifying against roots (or not, if nil), and
// returns the connection's state.
func handshake(tb testing.TB, addr, serverName string, roots *x509.CertPool) (tls.ConnectionState, error) {
	tb.Helper()
	cfg := &tls.Config{ServerName: serverName, RootCAs: roots, InsecureSkipVerify: roots == nil}
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: cfg}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return tls.ConnectionState{}, errors.New("not a TLS connection")
	}
	return tc.ConnectionState(), nil
}

// syncBuffer is a bytes.Buffer safe for concurrent use: a logger's output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// MustStoredRoot returns the local CA's root and key kept in db.
func MustStoredRoot(tb testing.TB, db *kv.DB) (*x509.Certificate, crypto.Signer) {
	tb.Helper()
	var root *x509.Certificate
	var key crypto.Signer
	err := db.View(func(tx *kv.Tx) error {
		var err error
		root, key, err = storedRoot(tx.Bucket(bucketTLS))
		return err
	})
	if err != nil || root == nil {
		tb.Fatalf("stored root: %v, %v", root, err)
	}
	return root, key
}

// poolOf returns a pool holding the certificates.
func poolOf(certs ...*x509.Certificate) *x509.CertPool {
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool
}

// MustSignLeaf makes a server certificate for name (a DNS name or an IP address) signed by
// root's key, as whoever holds a copy of the key could.
func MustSignLeaf(tb testing.TB, root *x509.Certificate, rootKey crypto.Signer, name string) *x509.Certificate {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: randomSerial(),
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, &key.PublicKey, rootKey)
	if err != nil {
		tb.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return leaf
}

// MustPutLegacyCA stores in db what ownsona kept before its roots had name constraints: a
// root that may vouch for any name for ten years, and a leaf for names it signed. It returns
// the root.
func MustPutLegacyCA(tb testing.TB, db *kv.DB, names []string) *x509.Certificate {
	tb.Helper()
	now := time.Now()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{Organization: []string{"ownsona"}, CommonName: "ownsona local CA (legacy)"},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	root, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	err = db.Update(func(tx *kv.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketTLS)
		if err != nil {
			return err
		}
		if err := putRecord(b, keyRootCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), now); err != nil {
			return err
		}
		if err := putRecord(b, keyRootKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), now); err != nil {
			return err
		}
		_, err = newLocalCA(db, names, time.Now, zerolog.Nop()).issue(b, root, key, now)
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })

var discardLog = log.New(io.Discard, "", 0)
