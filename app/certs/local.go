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
	rootLifetime = 10 * 365 * 24 * time.Hour
	leafLifetime = 30 * 24 * time.Hour
	// backdate covers clocks a little behind ours.
	backdate = time.Minute
)

// localNames are always in a local leaf certificate, besides the configured names.
var localNames = []string{"localhost", "127.0.0.1", "::1"}

// localCA is ModeLocal: a root kept in the kv file and one leaf for every configured name,
// issued when first needed, kept in the file and cached, reissued once 2/3 of its lifetime has
// passed or when the names change.
type localCA struct {
	db   *kv.DB
	dns  []string // sorted
	ips  []net.IP // sorted by their 16-byte form
	now  func() time.Time
	log  zerolog.Logger
	mu   sync.Mutex
	leaf *tls.Certificate // cache of the stored leaf; Leaf is set
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
	return ca
}

// getCertificate is the tls.Config hook: the leaf for every name (and for clients that send
// no server name).
func (ca *localCA) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return ca.certificate()
}

// certificate returns the current leaf, loading it from the file or issuing (and storing) a
// new one when there is none, it is due for renewal, or it does not cover the names.
func (ca *localCA) certificate() (*tls.Certificate, error) {
	now := ca.now()
	ca.mu.Lock()
	defer ca.mu.Unlock()
	if ca.leaf != nil && ca.usable(ca.leaf.Leaf, now) {
		return ca.leaf, nil
	}
	var leaf *tls.Certificate
	err := ca.db.View(func(tx *kv.Tx) error {
		var err error
		leaf, err = ca.storedLeaf(tx.Bucket(bucketTLS), now)
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
			if leaf, err = ca.storedLeaf(b, now); err != nil || leaf != nil {
				return err
			}
			root, rootKey, err := loadOrCreateRoot(b, now, ca.log)
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
	ca.leaf = leaf
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

// storedLeaf returns the leaf kept in the file if it is usable and was signed by the stored
// root, else nil. b may be nil.
func (ca *localCA) storedLeaf(b *kv.Bucket, now time.Time) (*tls.Certificate, error) {
	certPEM, _, ok, err := getRecord(b, keyLeafCert)
	if err != nil || !ok {
		return nil, err
	}
	keyPEM, _, ok, err := getRecord(b, keyLeafKey)
	if err != nil || !ok {
		return nil, err
	}
	rootPEM, _, ok, err := getRecord(b, keyRootCert)
	if err != nil || !ok {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("stored leaf: %w", err)
	}
	root, err := parseCertPEM(rootPEM)
	if err != nil {
		return nil, fmt.Errorf("stored root: %w", err)
	}
	if !ca.usable(cert.Leaf, now) || cert.Leaf.CheckSignatureFrom(root) != nil || now.After(root.NotAfter) {
		return nil, nil
	}
	return &cert, nil
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

// loadOrCreateRoot returns the root kept in b, creating and storing a new one when there is
// none or it has expired. b must be writable when that may happen.
func loadOrCreateRoot(b *kv.Bucket, now time.Time, log zerolog.Logger) (*x509.Certificate, crypto.Signer, error) {
	certPEM, _, okCert, err := getRecord(b, keyRootCert)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, _, okKey, err := getRecord(b, keyRootKey)
	if err != nil {
		return nil, nil, err
	}
	if okCert && okKey {
		root, err := parseCertPEM(certPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("stored root: %w", err)
		}
		key, err := parseKeyPEM(keyPEM)
		if err != nil {
			return nil, nil, fmt.Errorf("stored root key: %w", err)
		}
		if now.Before(root.NotAfter) {
			return root, key, nil
		}
		log.Warn().Time("not_after", root.NotAfter).Msg("local CA root expired: creating a new one, which clients must trust again")
	}
	if b == nil {
		return nil, nil, errors.New("no local CA yet")
	}
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
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(rootLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
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
	log.Info().Str("subject", root.Subject.CommonName).Time("not_after", root.NotAfter).Msg("local CA root created")
	return root, key, nil
}

// RootPEM returns the local certificate authority's root certificate, PEM-encoded, for
// clients to trust (served at /ca.crt, written by `ownsona ca export`). It creates the
// authority in db when the file has none yet, so the root exported before the first
// `ownsona serve` is the one that will sign its certificates; on a read-only db without one
// it fails. The private key never leaves the file.
func RootPEM(db *kv.DB) ([]byte, error) {
	var certPEM []byte
	err := db.View(func(tx *kv.Tx) error {
		var err error
		certPEM, err = currentRootPEM(tx.Bucket(bucketTLS), time.Now())
		return err
	})
	if err == nil && certPEM == nil {
		err = db.Update(func(tx *kv.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketTLS)
			if err != nil {
				return err
			}
			root, _, err := loadOrCreateRoot(b, time.Now(), zerolog.Nop())
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

// currentRootPEM returns the stored root's PEM if there is an unexpired one with its key.
func currentRootPEM(b *kv.Bucket, now time.Time) ([]byte, error) {
	certPEM, _, ok, err := getRecord(b, keyRootCert)
	if err != nil || !ok {
		return nil, err
	}
	if _, _, ok, err := getRecord(b, keyRootKey); err != nil || !ok {
		return nil, err
	}
	root, err := parseCertPEM(certPEM)
	if err != nil {
		return nil, fmt.Errorf("stored root: %w", err)
	}
	if !now.Before(root.NotAfter) {
		return nil, nil
	}
	return certPEM, nil
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
