// This file implements "Client Information Discovery" of "OAuth Client ID
// Metadata Document" (draft-ietf-oauth-client-id-metadata-document): the
// GET of the client identifier URL with no redirects and a size limit, and
// the caching of the result by its HTTP headers, with the draft's SSRF
// and maximum response size considerations.

package cimd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ownsona/ownsona/oauth/policy"
)

// Defaults of Config.
const (
	DefaultTimeout  = 5 * time.Second
	DefaultMaxBytes = 5 << 10
	DefaultMinTTL   = time.Minute
	DefaultMaxTTL   = 24 * time.Hour
)

// DefaultAllowedHosts are the hosts whose metadata documents are fetched
// when Config.AllowedHosts is nil: Claude's and ChatGPT's.
var DefaultAllowedHosts = []string{"claude.ai", "claude.com", "chatgpt.com"}

// maxCacheEntries bounds the cache. Only valid documents served by allowed
// hosts are cached, so it is rarely reached.
const maxCacheEntries = 1024

// userAgent is the User-Agent of every request.
const userAgent = "ownsona"

// Resolver looks up a host's addresses. *net.Resolver implements it.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

var _ Resolver = (*net.Resolver)(nil)

// Config configures a Fetcher. The zero value is usable: every field has a
// default.
type Config struct {
	// AllowedHosts are the hosts whose documents may be fetched, in lower
	// case, compared exactly with the URL's host (without its port): an
	// uppercase host or one with a trailing dot is not allowed. An entry
	// starting with "." (".example.com") allows every subdomain of that
	// domain, but not the domain itself. If nil, DefaultAllowedHosts; an
	// empty non-nil slice allows no host.
	AllowedHosts []string
	// Timeout bounds one fetch: resolving, connecting, TLS and reading the
	// body. If zero, DefaultTimeout.
	Timeout time.Duration
	// MaxBytes is the largest body accepted. If zero, DefaultMaxBytes
	// (5 KiB, as the draft suggests).
	MaxBytes int64
	// Resolver resolves host names. Every address it returns is checked;
	// if any is not public the fetch fails. If nil, net.DefaultResolver.
	Resolver Resolver
	// Now tells the time, for the cache. If nil, time.Now.
	Now func() time.Time
	// CustomSchemes are passed to policy.ValidateRedirectURI for each of
	// a document's redirect URIs. If nil, policy.DefaultCustomSchemes; an
	// empty non-nil slice allows only dotted private-use schemes.
	CustomSchemes []string
	// MinTTL and MaxTTL bound how long a fetched document is cached: its
	// Cache-Control max-age (less its Age), or zero without one or with
	// no-store or no-cache, clamped to [MinTTL, MaxTTL]. If zero,
	// DefaultMinTTL and DefaultMaxTTL.
	MinTTL time.Duration
	MaxTTL time.Duration

	// dial, set only by tests in this package, replaces the final dial of
	// an already vetted address. Production code cannot set it.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// rootCAs, set only by tests, replaces the system roots.
	rootCAs *x509.CertPool
}

// Fetcher fetches, checks and caches client ID metadata documents. It is
// safe for concurrent use. Its cache is only a cache: a document is
// fetched again once it expires, and failures are never cached, so a
// client that fixes its document is seen at once.
//
// Requests carry only Accept and User-Agent: no cookies, no Authorization,
// nothing from the request being served. Proxies from the environment are
// not used, since a proxy would connect to an address that was not vetted.
type Fetcher struct {
	cfg    Config
	exact  map[string]bool
	suffix []string
	client *http.Client
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	cache map[string]*Document
}

// NewFetcher returns a Fetcher with cfg's defaults filled in. It fails,
// naming the setting, if an allowed host is malformed or a limit is
// negative, or MinTTL is above MaxTTL.
func NewFetcher(cfg Config) (*Fetcher, error) {
	if cfg.AllowedHosts == nil {
		cfg.AllowedHosts = DefaultAllowedHosts
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CustomSchemes == nil {
		cfg.CustomSchemes = policy.DefaultCustomSchemes
	}
	if cfg.MinTTL == 0 {
		cfg.MinTTL = DefaultMinTTL
	}
	if cfg.MaxTTL == 0 {
		cfg.MaxTTL = DefaultMaxTTL
	}
	switch {
	case cfg.Timeout < 0:
		return nil, errors.New("cimd: timeout is negative")
	case cfg.MaxBytes < 0:
		return nil, errors.New("cimd: max bytes is negative")
	case cfg.MinTTL < 0 || cfg.MaxTTL < cfg.MinTTL:
		return nil, fmt.Errorf("cimd: ttl bounds [%v, %v] are invalid", cfg.MinTTL, cfg.MaxTTL)
	}

	f := &Fetcher{cfg: cfg, exact: make(map[string]bool), cache: make(map[string]*Document)}
	for _, h := range cfg.AllowedHosts {
		if !validAllowedHost(h) {
			return nil, fmt.Errorf("cimd: allowed host %q is not a lowercase host name or \".domain\"", h)
		}
		if strings.HasPrefix(h, ".") {
			f.suffix = append(f.suffix, h)
		} else {
			f.exact[h] = true
		}
	}
	f.cfg.AllowedHosts = append([]string(nil), cfg.AllowedHosts...)
	f.cfg.CustomSchemes = append([]string{}, cfg.CustomSchemes...)

	f.dial = cfg.dial
	if f.dial == nil {
		d := &net.Dialer{Timeout: cfg.Timeout, Control: controlPublic}
		f.dial = d.DialContext
	}
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            f.dialVetted,
		TLSClientConfig:        &tls.Config{RootCAs: cfg.rootCAs, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		DisableKeepAlives:      true,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 16 << 10,
	}
	f.client = &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return f, nil
}

// validAllowedHost reports whether h is a lowercase DNS name or IP
// literal, optionally with a leading "." and then at least two labels.
func validAllowedHost(h string) bool {
	name := strings.TrimPrefix(h, ".")
	if name == "" || len(name) > 253 {
		return false
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return name == h
	}
	labels := strings.Split(name, ".")
	if name != h && len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// hostAllowed reports whether host, a URL's host without port or brackets,
// is on the allowlist.
func (f *Fetcher) hostAllowed(host string) bool {
	if f.exact[host] {
		return true
	}
	for _, s := range f.suffix {
		if len(host) > len(s) && strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// Fetch returns the metadata document of clientID, from the cache while a
// copy is fresh, or else by fetching and checking it. In order:
//
//   - clientID must pass IsMetadataURL and its host must be allowed, before
//     anything touches the network (ErrNotMetadataURL, ErrHostNotAllowed);
//   - the host is resolved once, every address must be public
//     (ErrForbiddenAddress), and the connection goes to one of those very
//     addresses, with the host name for TLS and the Host header, so a DNS
//     answer that changes between check and use cannot matter;
//   - the response must be 200 (ErrRedirect for 3xx, which is never
//     followed; ErrStatus otherwise), with a JSON Content-Type
//     (ErrContentType), a body of at most MaxBytes (ErrTooLarge), strict
//     JSON (ErrInvalidJSON), client_id equal to clientID
//     (ErrClientIDMismatch), and valid metadata (ErrInvalidMetadata).
//
// Errors are *Error, and are not cached. The caller owns the returned
// Document.
func (f *Fetcher) Fetch(ctx context.Context, clientID string) (*Document, error) {
	u, reason := parseMetadataURL(clientID)
	if reason != "" {
		return nil, &Error{Kind: ErrNotMetadataURL, ClientID: clientID, Detail: "client_id " + reason}
	}
	if !f.hostAllowed(u.Hostname()) {
		return nil, &Error{Kind: ErrHostNotAllowed, ClientID: clientID}
	}
	if doc := f.cached(clientID); doc != nil {
		return doc, nil
	}
	doc, err := f.fetch(ctx, clientID)
	if err != nil {
		return nil, err
	}
	f.store(doc)
	return doc.clone(), nil
}

// fetch GETs clientID and checks the response.
func (f *Fetcher) fetch(ctx context.Context, clientID string) (*Document, error) {
	ctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, &Error{Kind: ErrFetch, ClientID: clientID, Err: err}
	}
	req.Header = http.Header{"Accept": {"application/json"}, "User-Agent": {userAgent}}
	resp, err := f.client.Do(req)
	if err != nil {
		kind := ErrFetch
		if errors.Is(err, errNotPublic) {
			kind = ErrForbiddenAddress
		}
		return nil, &Error{Kind: kind, ClientID: clientID, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, &Error{Kind: ErrRedirect, ClientID: clientID, Detail: "status " + strconv.Itoa(resp.StatusCode)}
	case resp.StatusCode != http.StatusOK:
		return nil, &Error{Kind: ErrStatus, ClientID: clientID, Detail: "status " + strconv.Itoa(resp.StatusCode)}
	}
	if !isJSONType(resp.Header.Get("Content-Type")) {
		return nil, &Error{Kind: ErrContentType, ClientID: clientID, Detail: "Content-Type must be application/json"}
	}
	limit := f.cfg.MaxBytes
	if resp.ContentLength > limit {
		return nil, &Error{Kind: ErrTooLarge, ClientID: clientID, Detail: fmt.Sprintf("more than %d bytes", limit)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, &Error{Kind: ErrFetch, ClientID: clientID, Err: err}
	}
	if int64(len(body)) > limit {
		return nil, &Error{Kind: ErrTooLarge, ClientID: clientID, Detail: fmt.Sprintf("more than %d bytes", limit)}
	}

	doc, err := parseDocument(body, clientID, f.cfg.CustomSchemes)
	if err != nil {
		return nil, err
	}
	now := f.cfg.Now()
	doc.FetchedAt = now
	doc.ExpiresAt = now.Add(f.ttl(resp.Header))
	return doc, nil
}

// unwrapURLError drops the *url.Error around a client error, whose text
// repeats the URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isJSONType reports whether a Content-Type is application/json or
// application/<something>+json, with any parameters.
func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")
}

// dialVetted is the transport's DialContext. addr is the request URL's
// host and port. It resolves the host once, refuses the lot if any address
// is not public, and connects to the vetted addresses themselves, so the
// name is never resolved again between the check and the connection.
func (f *Fetcher) dialVetted(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("invalid port %q", portStr)
	}
	if !f.hostAllowed(host) { // Fetch checked it already; the transport dials nothing else.
		return nil, fmt.Errorf("%w: host %q is not allowed", errNotPublic, host)
	}

	var ips []net.IPAddr
	if a, err := netip.ParseAddr(host); err == nil {
		ips = []net.IPAddr{{IP: a.AsSlice(), Zone: a.Zone()}}
	} else {
		ips, err = f.cfg.Resolver.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	vetted := make([]netip.Addr, 0, len(ips))
	for _, ip := range ips {
		a, err := checkPublic(ip)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", host, err)
		}
		vetted = append(vetted, a)
	}

	var errs []error
	for _, a := range vetted {
		conn, err := f.dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// ttl is how long a response with header h is cached.
func (f *Fetcher) ttl(h http.Header) time.Duration {
	var ttl time.Duration
	if maxAge, ok := parseMaxAge(h.Values("Cache-Control")); ok {
		ttl = time.Duration(maxAge) * time.Second
		if age, err := strconv.ParseInt(strings.TrimSpace(h.Get("Age")), 10, 64); err == nil && age > 0 {
			ttl -= time.Duration(min(age, maxAge)) * time.Second
		}
	}
	return min(max(ttl, f.cfg.MinTTL), f.cfg.MaxTTL)
}

// parseMaxAge returns the max-age of Cache-Control header values, in
// seconds, capped at about 68 years. It reports false when there is none,
// when it is malformed or given twice, and when no-store or no-cache is
// present.
func parseMaxAge(values []string) (int64, bool) {
	var maxAge int64
	found := false
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, false
			case "max-age":
				if found {
					return 0, false
				}
				arg = strings.TrimSpace(arg)
				if arg == "" || strings.Trim(arg, "0123456789") != "" {
					return 0, false
				}
				n, err := strconv.ParseInt(arg, 10, 32)
				if err != nil {
					n = 1<<31 - 1
				}
				maxAge, found = n, true
			}
		}
	}
	return maxAge, found
}

// cached returns a copy of the fresh cached document of clientID, or nil.
func (f *Fetcher) cached(clientID string) *Document {
	now := f.cfg.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, ok := f.cache[clientID]
	if !ok {
		return nil
	}
	if !now.Before(doc.ExpiresAt) {
		delete(f.cache, clientID)
		return nil
	}
	return doc.clone()
}

// store caches doc until doc.ExpiresAt, making room if the cache is full.
func (f *Fetcher) store(doc *Document) {
	now := f.cfg.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.cache[doc.ClientID]; !ok && len(f.cache) >= maxCacheEntries {
		for id, d := range f.cache {
			if !now.Before(d.ExpiresAt) {
				delete(f.cache, id)
			}
		}
		for id := range f.cache {
			if len(f.cache) < maxCacheEntries {
				break
			}
			delete(f.cache, id)
		}
	}
	f.cache[doc.ClientID] = doc.clone()
}
