package certs

import (
	"context"
	"crypto/x509"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
)

// acmeCerts is ModeACME: certmagic with our storage, our issuer and our cache, so that nothing
// of certmagic's defaults (its file storage in the home directory, its default cache and
// config) is ever used, for the first certificate or for renewals.
type acmeCerts struct {
	cache  *certmagic.Cache
	magic  *certmagic.Config
	issuer *certmagic.ACMEIssuer
	names  []string
}

// acmeOptions are ModeACME's settings, from Config.
type acmeOptions struct {
	names        []string
	directoryURL string
	email        string
	roots        *x509.CertPool
	httpPort     int
	tlsALPNPort  int
	// For tests, which must know which challenge Pebble validates.
	disableHTTP01, disableTLSALPN01 bool
}

func newACME(st *storage, o acmeOptions, log *zap.Logger) *acmeCerts {
	a := &acmeCerts{names: o.names}
	a.cache = certmagic.NewCache(certmagic.CacheOptions{
		// Every certificate in this cache is ours: renewals use our config, hence our storage.
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return a.magic, nil },
		Logger:           log,
	})
	a.magic = certmagic.New(a.cache, certmagic.Config{
		Storage:           st,
		Logger:            log,
		DefaultServerName: o.names[0],           // for clients that send no server name
		Issuers:           []certmagic.Issuer{}, // non-nil: no default issuer is made
	})
	a.issuer = certmagic.NewACMEIssuer(a.magic, certmagic.ACMEIssuer{
		CA:                      o.directoryURL,
		Email:                   o.email,
		Agreed:                  true,
		AltHTTPPort:             o.httpPort,
		AltTLSALPNPort:          o.tlsALPNPort,
		TrustedRoots:            o.roots,
		DisableHTTPChallenge:    o.disableHTTP01,
		DisableTLSALPNChallenge: o.disableTLSALPN01,
		Logger:                  log,
	})
	var iss certmagic.Issuer = a.issuer
	if o.email == "" {
		iss = noPrompt{a.issuer}
	}
	a.magic.Issuers = []certmagic.Issuer{iss}
	return a
}

// noPrompt is the ACME issuer for an account without an email address. certmagic's
// synchronous (interactive) path would ask for one on stdin and stdout; this one never asks.
type noPrompt struct{ *certmagic.ACMEIssuer }

func (n noPrompt) PreCheck(ctx context.Context, names []string, _ bool) error {
	return n.ACMEIssuer.PreCheck(ctx, names, false)
}
