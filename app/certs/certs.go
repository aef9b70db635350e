package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/certmagic"
	"github.com/ownsona/ownsona/kv"
	"github.com/rs/zerolog"
)

// Mode says where the server's certificates come from.
type Mode string

// The modes.
const (
	// ModeOff serves no TLS.
	ModeOff Mode = "off"
	// ModeLocal issues certificates from a certificate authority of our own, kept in the kv
	// file; clients trust it by importing RootPEM.
	ModeLocal Mode = "local"
	// ModeFiles serves a certificate and key read from PEM files, re-read when they change.
	ModeFiles Mode = "files"
	// ModeACME obtains and renews certificates from an ACME CA (Let's Encrypt by default),
	// kept in the kv file.
	ModeACME Mode = "acme"
)

// LetsEncrypt is the default ACME directory.
const LetsEncrypt = certmagic.LetsEncryptProductionCA

// Config configures a Manager. Only the fields of the chosen Mode are read.
type Config struct {
	// Mode picks the source of certificates. If empty, ModeOff.
	Mode Mode
	// DB is the kv file that holds the ACME account, certificates and keys, and the local CA.
	// Required for ModeACME and ModeLocal.
	DB *kv.DB
	// Names are the DNS names (or IP addresses, for ModeLocal) the server is reached by.
	// ModeACME needs at least one and obtains one certificate per name; ModeLocal puts them
	// all in one certificate with localhost, 127.0.0.1 and ::1, and limits its root to them
	// (a new root when they change); ModeFiles ignores them.
	Names []string

	// ACMEDirectory is the ACME CA's directory URL. If empty, LetsEncrypt.
	ACMEDirectory string
	// ACMEEmail is the ACME account's contact address. May be empty. Using ModeACME means
	// agreeing to the CA's terms of service.
	ACMEEmail string
	// ACMERoots are the roots trusted for the ACME CA's own HTTPS. If nil, the system's.
	ACMERoots *x509.CertPool
	// ChallengeHTTPPort and ChallengeTLSPort are where ACME challenges are answered: while a
	// challenge runs, certmagic listens there itself unless something (our HTTPHandler and
	// TLSConfig) already does. The CA always connects to ports 80 and 443, so other values
	// need a port forward. If 0, 80 and 443.
	ChallengeHTTPPort, ChallengeTLSPort int

	// CertFile and KeyFile are ModeFiles' PEM files: the certificate chain (leaf first) and
	// its private key. They are checked for changes at most once a minute.
	CertFile, KeyFile string

	// HTTPSPort is the port HTTPHandler redirects to. If 0 or 443, redirects name no port.
	HTTPSPort int

	// Logger receives what happens to certificates (never key material). If zero, silent.
	Logger zerolog.Logger
	// Now tells the time to the local CA, the file reloading and the storage locks. If nil,
	// time.Now. certmagic's own renewal timing always uses the real clock.
	Now func() time.Time

	// For tests: disable one ACME challenge type, so the other is the one validated.
	disableHTTP01, disableTLSALPN01 bool
}

// Manager provides the certificates of one Config: a tls.Config for the HTTPS server, a
// handler for the plain-HTTP port, and the background work that keeps certificates current.
// Its methods are safe for concurrent use. Close it when done.
type Manager struct {
	mode      Mode
	httpsPort int
	names     []string // the names served: the only hosts the plain-HTTP port redirects, with loopback

	getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	check   func(context.Context) error // what Start does first

	acme  *acmeCerts
	local *localCA
	files *fileCert

	stopOnce sync.Once
}

// New validates cfg and prepares its mode. It does no network or file work, except for
// ModeACME's background maintenance, which it starts (and Close stops).
func New(cfg Config) (*Manager, error) {
	if cfg.Mode == "" {
		cfg.Mode = ModeOff
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m := &Manager{mode: cfg.Mode, httpsPort: cfg.HTTPSPort, names: cfg.Names}
	if cfg.HTTPSPort < 0 || cfg.HTTPSPort > 65535 {
		return nil, fmt.Errorf("tls: https port %d out of range", cfg.HTTPSPort)
	}
	if (cfg.Mode == ModeACME || cfg.Mode == ModeLocal) && cfg.DB == nil {
		return nil, fmt.Errorf("tls mode %s: no database", cfg.Mode)
	}
	switch cfg.Mode {
	case ModeOff:
	case ModeLocal:
		for _, n := range cfg.Names {
			if net.ParseIP(n) == nil && !validDNSName(n) {
				return nil, fmt.Errorf("tls mode local: invalid name %q", n)
			}
		}
		m.local = newLocalCA(cfg.DB, cfg.Names, cfg.Now, cfg.Logger)
		m.getCert = m.local.getCertificate
		m.check = func(context.Context) error { _, err := m.local.certificate(); return err }
	case ModeFiles:
		if cfg.CertFile == "" || cfg.KeyFile == "" {
			return nil, errors.New("tls mode files: need a certificate file and a key file")
		}
		m.files = &fileCert{certFile: cfg.CertFile, keyFile: cfg.KeyFile, now: cfg.Now, log: cfg.Logger}
		m.getCert = m.files.getCertificate
		m.check = func(context.Context) error { _, err := m.files.certificate(); return err }
	case ModeACME:
		if len(cfg.Names) == 0 {
			return nil, errors.New("tls mode acme: no domain names")
		}
		for _, n := range cfg.Names {
			if !validDNSName(n) {
				return nil, fmt.Errorf("tls mode acme: invalid domain name %q", n)
			}
		}
		for _, p := range []int{cfg.ChallengeHTTPPort, cfg.ChallengeTLSPort} {
			if p < 0 || p > 65535 {
				return nil, fmt.Errorf("tls mode acme: challenge port %d out of range", p)
			}
		}
		dir := cfg.ACMEDirectory
		if dir == "" {
			dir = LetsEncrypt
		}
		if u, err := url.Parse(dir); err != nil || u.Scheme != "https" || u.Host == "" {
			return nil, fmt.Errorf("tls mode acme: directory %q is not an https URL", dir)
		}
		st := newStorage(cfg.DB, cfg.Now, cfg.Logger)
		m.acme = newACME(st, acmeOptions{
			names:            cfg.Names,
			directoryURL:     dir,
			email:            cfg.ACMEEmail,
			roots:            cfg.ACMERoots,
			httpPort:         cfg.ChallengeHTTPPort,
			tlsALPNPort:      cfg.ChallengeTLSPort,
			disableHTTP01:    cfg.disableHTTP01,
			disableTLSALPN01: cfg.disableTLSALPN01,
		}, zapLogger(cfg.Logger))
		m.getCert = m.acme.magic.GetCertificate
		m.check = func(ctx context.Context) error { return m.acme.magic.ManageSync(ctx, m.acme.names) }
	default:
		return nil, fmt.Errorf("tls mode %q: want off, local, files or acme", cfg.Mode)
	}
	return m, nil
}

// TLSConfig returns a new tls.Config for the HTTPS server: certificates from the Manager,
// TLS 1.2 or later, and ALPN for HTTP/2, HTTP/1.1 and (ModeACME) the TLS-ALPN-01 challenge.
// Use it with http.Server.ServeTLS(ln, "", ""). It is nil in ModeOff.
func (m *Manager) TLSConfig() *tls.Config {
	if m.getCert == nil {
		return nil
	}
	protos := []string{"h2", "http/1.1"}
	if m.acme != nil {
		protos = append(protos, "acme-tls/1")
	}
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     protos,
		GetCertificate: m.getCert,
	}
}

// HTTPHandler returns the handler for the plain-HTTP port: it answers ACME HTTP-01
// challenges (ModeACME), redirects GET and HEAD requests for the configured names and
// loopback to the same URL on https with 308, refuses other hosts with 421 (the port is no open
// redirector for any name that points at it), and other methods with 400.
func (m *Manager) HTTPHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.acme != nil && m.acme.issuer.HandleHTTPChallenge(w, r) {
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "this port serves no requests: use https", http.StatusBadRequest)
			return
		}
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if net.ParseIP(host) == nil && !validDNSName(host) {
			http.Error(w, "bad host", http.StatusBadRequest)
			return
		}
		if !m.serves(host) {
			http.Error(w, "this server redirects only its own names to https", http.StatusMisdirectedRequest)
			return
		}
		switch {
		case m.httpsPort != 0 && m.httpsPort != 443:
			host = net.JoinHostPort(host, strconv.Itoa(m.httpsPort))
		case strings.Contains(host, ":"):
			host = "[" + host + "]"
		}
		u := url.URL{Scheme: "https", Host: host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
		http.Redirect(w, r, u.String(), http.StatusPermanentRedirect)
	})
}

// serves reports whether host (no port, no brackets) is one of the configured names or a
// loopback name.
func (m *Manager) serves(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return true
	}
	for _, n := range m.names {
		if strings.EqualFold(strings.TrimSuffix(n, "."), host) {
			return true
		}
	}
	return false
}

// Start makes sure certificates are ready, synchronously, and returns the error if not:
// ModeACME loads them from the kv file or obtains them from the CA, ModeLocal creates the
// authority and issues the certificate if the file has none, ModeFiles reads the files.
// After it succeeds, ModeACME renews in the background until ctx is done (or Close);
// ModeLocal renews and ModeFiles reloads lazily, in the handshake that first needs it.
// Call Start once.
func (m *Manager) Start(ctx context.Context) error {
	if m.check == nil {
		return nil
	}
	if err := m.check(ctx); err != nil {
		return fmt.Errorf("tls mode %s: %w", m.mode, err)
	}
	if m.acme != nil {
		context.AfterFunc(ctx, m.stop)
	}
	return nil
}

// Close stops the background work. It may be called on a nil Manager and more than once.
func (m *Manager) Close() error {
	if m != nil {
		m.stop()
	}
	return nil
}

func (m *Manager) stop() {
	m.stopOnce.Do(func() {
		if m.acme != nil {
			m.acme.cache.Stop()
		}
	})
}

// validDNSName reports whether s looks like a host name: dot-separated labels of letters,
// digits, hyphens and underscores. Wildcards are not accepted: ACME's HTTP-01 and TLS-ALPN-01
// challenges cannot prove them.
func validDNSName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			default:
				return false
			}
		}
	}
	return true
}
