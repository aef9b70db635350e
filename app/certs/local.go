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
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/kv"
	"github.com/rs/zerolog"
)

// The local CA's keys in bucketTLS (beside certmagic's, which never use this prefix).
const (
	keyRootCert = "local_ca/root.crt"
	keyRootKey  = "local_ca/root.key"
	keyLeafCert = "local_ca/leaf.crt"
	keyLeafKey  = "local_ca/leaf.key"
)

const (
	// rootLifetime bounds how long a copy of the root's key (in a backup of the file, say)
	// can sign: two years, so that devices import a new root rarely.
	rootLifetime = 2 * 365 * 24 * time.Hour
	// rootRenewBefore: a root with less than this left is replaced, so that no leaf is cut
	// short by its root's expiry.
	rootRenewBefore = leafLifetime
	leafLifetime    = 30 * 24 * time.Hour
	// backdate covers clocks a little behind ours.
	backdate = time.Minute
)

// localNames are always in a local leaf certificate, besides the configured names.
var localNames = []string{"localhost", "127.0.0.1", "::1"}

// loopbackRanges are in every root's permitted IP ranges.
var loopbackRanges = []string{"127.0.0.0/8", "::1/128"}

// localCA is ModeLocal: a root kept in the kv file and one leaf for every configured name,
// issued when first needed, kept in the file and cached, reissued once 2/3 of its lifetime has
// passed or when the names change. The root may vouch only for the names (see scope); it is
// replaced when they change, when it has less than rootRenewBefore left, and when it has no
// name constraints (made by an older ownsona).
type localCA struct {
	db    *kv.DB
	dns   []string // sorted
	ips   []net.IP // sorted by their 16-byte form
	scope scope    // of dns and ips: what the root must be limited to
	now   func() time.Time
	log   zerolog.Logger

	mu      sync.Mutex
	leaf    *tls.Certificate // cache of the stored leaf; Leaf is set
	rootDue time.Time        // when the root that signed leaf is due for replacement
}

func newLocalCA(db *kv.DB, names []string, now func() time.Time, log zerolog.Logger) *localCA {
	ca := &localCA{db: db, now: now, log: log}
	seen := map[string]bool{}
	for _, n := range append(slices.Clone(names), localNames...) {
		if ip := net.ParseIP(n); ip != nil {
			n = ip.String()
		}
		if seen[n] {
			continue
		}
		seen[n] = true
		if ip := net.ParseIP(n); ip != nil {
			ca.ips = append(ca.ips, ip)
		} else {
			ca.dns = append(ca.dns, n)
		}
	}
	slices.Sort(ca.dns)
	slices.SortFunc(ca.ips, func(a, b net.IP) int { return bytes.Compare(a.To16(), b.To16()) })
	ca.scope = scopeFor(ca.dns, ca.ips)
	return ca
}

// getCertificate is the tls.Config hook: the leaf for every name (and for clients that send
// no server name).
func (ca *localCA) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return ca.certificate()
}

// certificate returns the current leaf, loading it from the file or issuing (and storing) a
// new one when there is none, it is due for renewal, it does not cover the names, or its root
// must be replaced.
func (ca *localCA) certificate() (*tls.Certificate, error) {
	now := ca.now()
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if ca.leaf != nil && now.Before(ca.rootDue) && ca.usable(ca.leaf.Leaf, now) {
		return ca.leaf, nil
	}
	var leaf *tls.Certificate
	var root *x509.Certificate
	err := ca.db.View(func(tx *kv.Tx) error {
		var err error
		leaf, root, err = ca.storedLeaf(tx.Bucket(bucketTLS), now)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("local ca: %w", err)
	}
	if leaf == nil {
		err := ca.db.Update(func(tx *kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketTLS)
			if err != nil {
				return err
			}
			if leaf, root, err = ca.storedLeaf(b, now); err != nil || leaf != nil {
				return err
			}
			var rootKey crypto.Signer
			root, rootKey, err = rootFor(b, ca.scope, now, ca.log)
			if err != nil {
				return err
			}
			leaf, err = ca.issue(b, root, rootKey, now)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("local ca: %w", err)
		}
		ca.log.Info().Strs("names", ca.names()).Str("serial", leaf.Leaf.SerialNumber.Text(16)).
			Time("not_after", leaf.Leaf.NotAfter).Msg("local CA issued a certificate")
	}
	ca.leaf, ca.rootDue = leaf, rootDue(root)
	return leaf, nil
}

// names lists the leaf's names, DNS names first.
func (ca *localCA) names() []string {
	names := slices.Clone(ca.dns)
	for _, ip := range ca.ips {
		names = append(names, ip.String())
	}
	return names
}

// usable reports whether leaf covers exactly our names and is not yet due for renewal: less
// than 2/3 of its lifetime has passed.
func (ca *localCA) usable(leaf *x509.Certificate, now time.Time) bool {
	life := leaf.NotAfter.Sub(leaf.NotBefore)
	if now.Before(leaf.NotBefore) || !now.Before(leaf.NotBefore.Add(life*2/3)) {
		return false
	}
	dns := slices.Sorted(slices.Values(leaf.DNSNames))
	if !slices.Equal(dns, ca.dns) || len(leaf.IPAddresses) != len(ca.ips) {
		return false
	}
	ips := slices.Clone(leaf.IPAddresses)
	slices.SortFunc(ips, func(a, b net.IP) int { return bytes.Compare(a.To16(), b.To16()) })
	for i := range ips {
		if !ips[i].Equal(ca.ips[i]) {
			return false
		}
	}
	return true
}

// storedLeaf returns the leaf kept in the file and the root that signed it, if the leaf is
// usable and the root can vouch for our names at now; else nils. b may be nil.
func (ca *localCA) storedLeaf(b *kv.Bucket, now time.Time) (*tls.Certificate, *x509.Certificate, error) {
	certPEM, _, ok, err := getRecord(b, keyLeafCert)
	if err != nil || !ok {
		return nil, nil, err
	}
	keyPEM, _, ok, err := getRecord(b, keyLeafKey)
	if err != nil || !ok {
		return nil, nil, err
	}
	rootPEM, _, ok, err := getRecord(b, keyRootCert)
	if err != nil || !ok {
		return nil, nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("stored leaf: %w", err)
	}
	root, err := parseCertPEM(rootPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("stored root: %w", err)
	}
	if !ca.usable(cert.Leaf, now) || cert.Leaf.CheckSignatureFrom(root) != nil || rootProblem(root, ca.scope, now) != "" {
		return nil, nil, nil
	}
	return &cert, root, nil
}

// issue makes a new leaf key and certificate for our names, signed by root, and stores both.
func (ca *localCA) issue(b *kv.Bucket, root *x509.Certificate, rootKey crypto.Signer, now time.Time) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(leafLifetime)
	if notAfter.After(root.NotAfter) {
		notAfter = root.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          randomSerial(),
		Subject:               pkix.Name{Organization: []string{"ownsona"}, CommonName: ca.names()[0]},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              ca.dns,
		IPAddresses:           ca.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, root, &key.PublicKey, rootKey)
	if err != nil {
		return nil, fmt.Errorf("create leaf: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	if err := putRecord(b, keyLeafCert, certPEM, now); err != nil {
		return nil, err
	}
	if err := putRecord(b, keyLeafKey, keyPEM, now); err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, nil
}

// scope is what a root may vouch for: the permitted subtrees of its critical name
// constraints (RFC 5280, 4.2.1.10). A DNS domain permits itself and every name under it
// ("mem.home.arpa" also permits "x.mem.home.arpa", not "xmem.home.arpa"); an IP range permits
// the addresses in it. Every scope has localhost, 127.0.0.0/8 and ::1/128. Clients that honour
// name constraints (Go's crypto/x509, browsers) refuse a leaf with any other name, even one
// signed with the root's key.
type scope struct {
	dns []string     // sorted
	ips []*net.IPNet // sorted by String
}

// scopeFor returns the scope of a leaf with these names: localhost and every DNS name, the
// loopback ranges and every IP address outside them (as a range of one address).
func scopeFor(dns []string, ips []net.IP) scope {
	s := scope{dns: slices.Clone(dns)}
	if !slices.Contains(s.dns, "localhost") {
		s.dns = append(s.dns, "localhost")
	}
	for _, r := range loopbackRanges {
		_, n, _ := net.ParseCIDR(r) // never fails: constants
		s.ips = append(s.ips, n)
	}
	for _, ip := range ips {
		if slices.ContainsFunc(s.ips, func(n *net.IPNet) bool { return n.Contains(ip) }) {
			continue
		}
		bits := 8 * net.IPv6len
		if ip4 := ip.To4(); ip4 != nil {
			ip, bits = ip4, 8*net.IPv4len
		}
		s.ips = append(s.ips, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
	}
	s.sort()
	return s
}

// scopeOf returns the scope root is limited to, and false if it has no critical name
// constraints (a root made before ownsona constrained them).
func scopeOf(root *x509.Certificate) (scope, bool) {
	if !root.PermittedDNSDomainsCritical || len(root.PermittedDNSDomains) == 0 {
		return scope{}, false
	}
	s := scope{dns: slices.Clone(root.PermittedDNSDomains), ips: slices.Clone(root.PermittedIPRanges)}
	s.sort()
	return s, true
}

func (s scope) sort() {
	slices.Sort(s.dns)
	slices.SortFunc(s.ips, func(a, b *net.IPNet) int { return strings.Compare(a.String(), b.String()) })
}

// list gives the scope's domains and ranges, for logs and comparison.
func (s scope) list() []string {
	out := slices.Clone(s.dns)
	for _, n := range s.ips {
		out = append(out, n.String())
	}
	return out
}

// rootDue is when root is to be replaced: rootRenewBefore ahead of its expiry.
func rootDue(root *x509.Certificate) time.Time { return root.NotAfter.Add(-rootRenewBefore) }

// rootProblem says why root cannot serve for want at now, or "" if it can: there is none
// (nil), it has no name constraints, they are for other names, or it is due for replacement.
func rootProblem(root *x509.Certificate, want scope, now time.Time) string {
	if root == nil {
		return "none"
	}
	have, ok := scopeOf(root)
	switch {
	case !ok:
		return "it could vouch for any name (made by an older ownsona)"
	case !slices.Equal(have.list(), want.list()):
		return "the names changed"
	case now.After(root.NotAfter):
		return "it expired on " + root.NotAfter.UTC().Format(time.DateOnly)
	case !now.Before(rootDue(root)):
		return "it expires on " + root.NotAfter.UTC().Format(time.DateOnly)
	}
	return ""
}

// rootFor returns the root kept in b (and its key) if it can vouch for want at now, or makes,
// stores and returns a new one limited to want, logging why. b must be writable when that
// may happen.
func rootFor(b *kv.Bucket, want scope, now time.Time, log zerolog.Logger) (*x509.Certificate, crypto.Signer, error) {
	old, key, err := storedRoot(b)
	if err != nil {
		return nil, nil, err
	}
	why := rootProblem(old, want, now)
	if why == "" {
		return old, key, nil
	}
	if b == nil {
		return nil, nil, errors.New("no local CA yet")
	}
	root, key, err := createRoot(b, want, now)
	if err != nil {
		return nil, nil, err
	}
	if old == nil {
		log.Info().Str("subject", root.Subject.CommonName).Strs("permitted", want.list()).Time("not_after", root.NotAfter).
			Msg("local CA root created: devices trust it by importing `ownsona ca export` or /ca.crt")
		return root, key, nil
	}
	log.Warn().Str("subject", root.Subject.CommonName).Strs("permitted", want.list()).Time("not_after", root.NotAfter).
		Str("old_subject", old.Subject.CommonName).
		Msg("local CA root replaced because " + why + ": devices must trust the new root again (`ownsona ca export` or /ca.crt)")
	return root, key, nil
}

// storedRoot returns the root kept in b and its key, or nils when there is none. b may be nil.
func storedRoot(b *kv.Bucket) (*x509.Certificate, crypto.Signer, error) {
	certPEM, _, okCert, err := getRecord(b, keyRootCert)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, _, okKey, err := getRecord(b, keyRootKey)
	if err != nil || !okCert || !okKey {
		return nil, nil, err
	}
	root, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("stored root: %w", err)
	}
	key, err := parseKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("stored root key: %w", err)
	}
	return root, key, nil
}

// createRoot makes a new root key and certificate limited to s, and stores both in b.
func createRoot(b *kv.Bucket, s scope, now time.Time) (*x509.Certificate, crypto.Signer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial := randomSerial()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject: pkix.Name{
			Organization: []string{"ownsona"},
			CommonName:   "ownsona local CA " + now.UTC().Format("2006-01-02") + " " + hex.EncodeToString(serial.Bytes()[:3]),
		},
		NotBefore:                   now.Add(-backdate),
		NotAfter:                    now.Add(rootLifetime),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         s.dns,
		PermittedIPRanges:           s.ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create root: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	if err := putRecord(b, keyRootCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), now); err != nil {
		return nil, nil, err
	}
	if err := putRecord(b, keyRootKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), now); err != nil {
		return nil, nil, err
	}
	root, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	return root, key, nil
}

// RootPEM returns the local certificate authority's root certificate, PEM-encoded, for
// clients to trust (served at /ca.crt, written by `ownsona ca export`): the one `serve --tls
// local` uses. When the file has none yet, or its root is due for replacement, it makes one
// and stores it, so that the root exported before `serve` is the one that will sign its
// certificates if the names are the same: those of the stored root, else those of the stored
// leaf (the last `serve`), else only localhost and loopback. It replaces a root without name
// constraints the same way. On a read-only db that needs a new root it fails. The private key
// never leaves the file.
func RootPEM(db *kv.DB) ([]byte, error) {
	now := time.Now()
	var certPEM []byte
	err := db.View(func(tx *kv.Tx) error {
		root, _, err := storedRoot(tx.Bucket(bucketTLS))
		if err != nil || root == nil {
			return err
		}
		if s, ok := scopeOf(root); ok && rootProblem(root, s, now) == "" {
			certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw})
		}
		return nil
	})
	if err == nil && certPEM == nil {
		err = db.Update(func(tx *kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketTLS)
			if err != nil {
				return err
			}
			want, err := storedScope(b)
			if err != nil {
				return err
			}
			root, _, err := rootFor(b, want, now, zerolog.Nop())
			if err != nil {
				return err
			}
			certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: root.Raw})
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("local ca root: %w", err)
	}
	return certPEM, nil
}

// storedScope is the scope that the file says `serve` uses: the stored root's, else the
// stored leaf's names', else localhost and loopback alone.
func storedScope(b *kv.Bucket) (scope, error) {
	root, _, err := storedRoot(b)
	if err != nil {
		return scope{}, err
	}
	if root != nil {
		if s, ok := scopeOf(root); ok {
			return s, nil
		}
	}
	certPEM, _, ok, err := getRecord(b, keyLeafCert)
	if err != nil {
		return scope{}, err
	}
	if ok {
		if leaf, err := parseCertPEM(certPEM); err == nil {
			names := slices.Clone(leaf.DNSNames)
			for _, ip := range leaf.IPAddresses {
				names = append(names, ip.String())
			}
			return newLocalCA(nil, names, nil, zerolog.Nop()).scope, nil
		}
	}
	return scopeFor(nil, nil), nil
}

func parseCertPEM(b []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

func parseKeyPEM(b []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, errors.New("no PEM key")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key of type %T cannot sign", key)
	}
	return signer, nil
}

// randomSerial returns a random positive 128-bit serial number.
func randomSerial() *big.Int {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	b[0] &= 0x7f
	b[0] |= 0x40 // keep 16 bytes, so that serial.Bytes()[:3] exists
	return new(big.Int).SetBytes(b)
}
