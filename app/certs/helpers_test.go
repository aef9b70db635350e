package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/rs/zerolog"
)

// MustOpenDB opens the kv file at path (a new one in a temp dir if path is empty) and closes
// it when the test ends.
func MustOpenDB(tb testing.TB, path string) *kv.DB {
	tb.Helper()
	if path == "" {
		path = filepath.Join(tb.TempDir(), "ownsona.db")
	}
	db, err := kv.Open(path, kv.Options{})
	if err != nil {
		tb.Fatalf("kv.Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return db
}

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

var okHandler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })

var discardLog = log.New(io.Discard, "", 0)
