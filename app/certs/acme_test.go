package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

// pebble is an ACME CA running in the test process: Pebble's own packages behind an
// httptest server, validating challenges for real against the given ports on 127.0.0.1,
// where every name resolves (through a DNS server of the test's).
type pebble struct {
	dirURL  string         // the ACME directory
	tlsRoot *x509.CertPool // for the directory's HTTPS
	roots   *x509.CertPool // Pebble's issuing root
	orders  atomic.Int32   // newOrder requests seen
}

func startPebble(t *testing.T, httpPort, tlsPort int) *pebble {
	t.Helper()
	// Fast and deterministic: no random validation sleeps, no rejected nonces, and every
	// order validated afresh (no authorization reuse).
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_AUTHZREUSE", "0")
	t.Setenv("PEBBLE_VA_ALWAYS_VALID", "0")

	logger := log.New(io.Discard, "", 0)
	if testing.Verbose() {
		logger = log.New(tbWriter{t}, "pebble ", 0)
	}
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": {Description: "default"}})
	validator := va.New(logger, httpPort, tlsPort, false, startDNS(t), store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)

	p := &pebble{roots: x509.NewCertPool(), tlsRoot: x509.NewCertPool()}
	p.roots.AddCert(authority.GetRootCert(0).Cert)
	h := front.Handler()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
			p.orders.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	srv.Config.ErrorLog = discardLog
	srv.StartTLS()
	t.Cleanup(srv.Close)
	p.tlsRoot.AddCert(srv.Certificate())
	p.dirURL = srv.URL + wfe.DirectoryPath
	return p
}

// startDNS serves DNS over TCP on loopback (Pebble's VA asks its resolver over TCP): every
// name has the address 127.0.0.1 and nothing else.
func startDNS(t *testing.T) string {
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

// frontDoor is the server under test: a plain-HTTP and an HTTPS listener on loopback,
// serving the current Manager's HTTPHandler and TLSConfig, as the app does on 80 and 443.
type frontDoor struct {
	current           atomic.Pointer[Manager]
	httpAddr, tlsAddr string
}

func startFrontDoor(t *testing.T) *frontDoor {
	t.Helper()
	f := &frontDoor{}
	lnHTTP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	plain := &http.Server{ErrorLog: discardLog, ReadHeaderTimeout: 5 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			f.current.Load().HTTPHandler().ServeHTTP(w, r)
		})}
	go func() { _ = plain.Serve(lnHTTP) }()
	t.Cleanup(func() { _ = plain.Close() })
	f.httpAddr = lnHTTP.Addr().String()
	f.tlsAddr = MustServeTLS(t, &tls.Config{
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return f.current.Load().TLSConfig(), nil
		},
	}, okHandler)
	return f
}

func port(tb testing.TB, addr string) int {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatal(err)
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestManager_acme_pebble(t *testing.T) {
	front := startFrontDoor(t)
	p := startPebble(t, port(t, front.httpAddr), port(t, front.tlsAddr))
	path := filepath.Join(t.TempDir(), "ownsona.db")
	database := kvtest.OpenFile(t, path, kv.Options{})
	config := func(names ...string) Config {
		return Config{
			Mode:              ModeACME,
			DB:                database,
			Names:             names,
			ACMEDirectory:     p.dirURL,
			ACMEEmail:         "owner@ownsona.test",
			ACMERoots:         p.tlsRoot,
			ChallengeHTTPPort: port(t, front.httpAddr),
			ChallengeTLSPort:  port(t, front.tlsAddr),
			Logger:            testLogger(t),
		}
	}
	start := func(cfg Config) *Manager {
		t.Helper()
		m, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		front.current.Store(m)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := m.Start(ctx); err != nil {
			m.Close()
			t.Fatalf("Start: %v", err)
		}
		return m
	}
	// verify handshakes as name, checks the chain against Pebble's root, and returns the leaf.
	verify := func(name string) *x509.Certificate {
		t.Helper()
		st, err := handshake(t, front.tlsAddr, name, p.roots)
		if err != nil {
			t.Fatalf("handshake as %s: %v", name, err)
		}
		return st.PeerCertificates[0]
	}

	// Each challenge type alone, so that Pebble's VA is known to have validated both of our
	// solvers: HTTP-01 through HTTPHandler, TLS-ALPN-01 through TLSConfig.
	serials := map[string]string{}
	for _, tt := range []struct {
		challenge string
		name      string
		configure func(*Config)
	}{
		// Without an email address, too: an account with no contact, and no prompt on
		// stdin/stdout (certmagic's prompt would set DefaultACME.Agreed). certmagic
		// remembers the first address it sees in the process, so this one goes first.
		{"tls-alpn-01", "t.ownsona.test", func(c *Config) { c.disableHTTP01 = true; c.ACMEEmail = "" }},
		{"http-01", "h.ownsona.test", func(c *Config) { c.disableTLSALPN01 = true }},
	} {
		t.Run(tt.challenge, func(t *testing.T) {
			before := p.orders.Load()
			cfg := config(tt.name)
			tt.configure(&cfg)
			m := start(cfg)
			defer m.Close()
			if certmagic.DefaultACME.Agreed {
				t.Error("certmagic prompted for an email address")
			}
			if got, want := p.orders.Load()-before, int32(1); got != want {
				t.Errorf("orders: got %d, want %d", got, want)
			}
			leaf := verify(tt.name)
			serials[tt.name] = leaf.SerialNumber.String()
			if got := storedLeaf(t, database, tt.name); got == nil || got.SerialNumber.Cmp(leaf.SerialNumber) != 0 {
				t.Errorf("certificate in the kv file: got %v, want serial %v", got, leaf.SerialNumber)
			}
		})
	}
	if t.Failed() {
		return
	}

	// Restart: the same file, reopened, serves the same certificates without a new order.
	if err := database.Close(); err != nil {
		t.Fatal(err)
	}
	database = kvtest.OpenFile(t, path, kv.Options{})
	before := p.orders.Load()
	m := start(config("h.ownsona.test", "t.ownsona.test"))
	defer m.Close()
	if got := p.orders.Load() - before; got != 0 {
		t.Errorf("orders after restarting: got %d, want 0", got)
	}
	for name, want := range serials {
		if got := verify(name).SerialNumber.String(); got != want {
			t.Errorf("%s after restarting: got serial %s, want %s", name, got, want)
		}
	}
}

// storedLeaf finds the certificate for name among certmagic's keys in the kv file.
func storedLeaf(tb testing.TB, database *kv.DB, name string) *x509.Certificate {
	tb.Helper()
	s := newStorage(database, nil, testLogger(tb))
	keys, err := s.List(context.Background(), "certificates", true)
	if err != nil {
		tb.Fatalf("List: %v", err)
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, "/"+name+"/"+name+".crt") {
			continue
		}
		data, err := s.Load(context.Background(), k)
		if err != nil {
			tb.Fatal(err)
		}
		block, _ := pem.Decode(data)
		if block == nil {
			tb.Fatalf("%s: no PEM", k)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			tb.Fatal(err)
		}
		return cert
	}
	return nil
}
