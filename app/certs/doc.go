// Package certs gives the server HTTPS by itself: certificates from Let's Encrypt (or any
// ACME CA), from a certificate authority of its own, or from files, with everything it needs
// to remember kept in ownsona's one kv file. certmagic does the ACME work; none of its types
// appear in this package's API.
//
// The simplest use, behind the server's own http.Server (not certmagic's convenience
// servers, whose write timeout would cut SSE streams):
//
//	m, err := certs.New(certs.Config{Mode: certs.ModeACME, DB: db, Names: []string{"mem.example.com"}})
//	if err != nil {
//		return err
//	}
//	defer m.Close()
//	if err := m.Start(ctx); err != nil { // obtains or loads the certificate, or fails
//		return err
//	}
//	go http.Serve(ln80, m.HTTPHandler())                    // challenges, and 308 to https
//	srv := &http.Server{Handler: h, TLSConfig: m.TLSConfig()}
//	go srv.ServeTLS(ln443, "", "")
//
// Start may also run after the listeners are open: certmagic then finds ports 80 and 443
// taken and relies on HTTPHandler and TLSConfig, which answer the HTTP-01 and TLS-ALPN-01
// challenges. Before, it listens on them itself while a challenge runs.
//
// # Modes
//
//   - ModeACME: certmagic obtains one certificate per name from the ACME directory (Let's
//     Encrypt by default) through HTTP-01 or TLS-ALPN-01, and renews it in the background
//     once 2/3 of its lifetime has passed. On-demand issuance is off: only the configured
//     names get certificates. Using it means agreeing to the CA's terms of service.
//   - ModeLocal: our own certificate authority. Its root (ECDSA P-256, two years) is kept in
//     the file; RootPEM exports it for clients to trust (/ca.crt, `ownsona ca export`). The
//     root carries critical name constraints: it may vouch only for the configured names
//     (each with the names under it: "mem.home.arpa" also permits "x.mem.home.arpa"),
//     localhost, 127.0.0.0/8, ::1 and the configured addresses, so clients that honour
//     constraints (Go's crypto/x509, browsers) refuse anything else it signs. A new root
//     replaces it when the names change, 30 days before it expires, and when it has no
//     constraints (made by an older ownsona); each time the log says that devices must trust
//     the new root. One leaf (thirty days) covers the configured names plus localhost,
//     127.0.0.1 and ::1; it is issued in the first handshake that needs it (or in Start),
//     kept in the file, cached, and reissued once 2/3 of its lifetime has passed, when the
//     names change, or with a new root.
//   - ModeFiles: a PEM certificate chain and key, re-read when either file changes (checked
//     at most once a minute, in a handshake). A change that does not load keeps the previous
//     certificate, with an error in the log.
//   - ModeOff: no TLS; TLSConfig is nil.
//
// # The file
//
// The package owns two buckets of the kv file. "tls" is a certmagic.Storage: keys are
// '/'-separated paths (certmagic's "certificates/…", "acme/…", and our "local_ca/…"), each
// value prefixed by its modification time; "directories" are implied by the keys under them.
// "tls_locks" holds certmagic's locks: a record per held name with its owner and a timestamp
// refreshed every 5 s while held. A record not refreshed for 15 s belongs to a holder that
// died (in practice the previous process: the kv file admits one process at a time) and is
// taken over. Backing up the kv file backs up the certificates, the ACME account and the
// local CA.
//
// # Caveats
//
// The local CA's root key is in the kv file, unencrypted: whoever has a copy of the file (or
// of a backup) can make certificates that every device trusting the root accepts, for the
// root's permitted names and until the root expires (at most two years) or is removed from
// the devices. Clients that ignore name constraints accept them for any name. Keep the file
// and its backups private.
//
// certmagic logs through Config.Logger, but its challenge listeners report their own rare
// failures with the standard library's log package.
package certs
