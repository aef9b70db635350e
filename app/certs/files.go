package certs

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// fileCheckInterval is how often, at most, ModeFiles looks at the files for a change.
const fileCheckInterval = time.Minute

// fileStamp identifies a version of a file: the same file (device and inode, so a
// replacement by rename counts as a change) with the same modification time and size.
type fileStamp struct{ fi os.FileInfo }

func (a fileStamp) same(b fileStamp) bool {
	return a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi) &&
		a.fi.ModTime().Equal(b.fi.ModTime()) && a.fi.Size() == b.fi.Size()
}

// fileCert is ModeFiles: a certificate chain and key read from PEM files and re-read, during
// a handshake, when a check (at most once per fileCheckInterval) finds either file changed.
// A change that does not load (a half-written pair, say) keeps the previous certificate and
// is tried again at the next check.
type fileCert struct {
	certFile, keyFile string
	now               func() time.Time
	log               zerolog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamps  [2]fileStamp // of the files cert was loaded from
	checked time.Time
}

// getCertificate is the tls.Config hook.
func (f *fileCert) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return f.certificate()
}

// certificate returns the loaded certificate, first re-reading the files if they changed
// since the last check and that check was at least fileCheckInterval ago.
func (f *fileCert) certificate() (*tls.Certificate, error) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cert != nil && now.Sub(f.checked) < fileCheckInterval {
		return f.cert, nil
	}
	f.checked = now
	stamps, err := f.stat()
	if err == nil && f.cert != nil && stamps[0].same(f.stamps[0]) && stamps[1].same(f.stamps[1]) {
		return f.cert, nil
	}
	var cert tls.Certificate
	if err == nil {
		cert, err = tls.LoadX509KeyPair(f.certFile, f.keyFile)
	}
	if err != nil {
		err = fmt.Errorf("load certificate files: %w", err)
		if f.cert == nil {
			return nil, err
		}
		f.log.Error().Err(err).Msg("keeping the previous certificate")
		return f.cert, nil
	}
	f.cert, f.stamps = &cert, stamps
	f.log.Info().Str("file", f.certFile).Strs("names", cert.Leaf.DNSNames).
		Time("not_after", cert.Leaf.NotAfter).Msg("loaded certificate")
	return f.cert, nil
}

func (f *fileCert) stat() ([2]fileStamp, error) {
	var st [2]fileStamp
	for i, name := range []string{f.certFile, f.keyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return st, err
		}
		st[i] = fileStamp{fi}
	}
	return st, nil
}
