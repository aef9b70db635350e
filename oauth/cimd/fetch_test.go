package cimd

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/oauth/policy"
)

const (
	testHost     = "client.example.com" // in httptest's certificate (*.example.com)
	testClientID = "https://" + testHost + "/oauth/client.json"
	publicIP     = "93.184.215.14" // never connected to: tests dial the test server instead
)

// fakeResolver answers the i-th lookup with answers[i], repeating the last.
type fakeResolver struct {
	mu      sync.Mutex
	answers [][]string
	calls   int
}

func newResolver(answers ...[]string) *fakeResolver { return &fakeResolver{answers: answers} }

func (r *fakeResolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := min(r.calls, len(r.answers)-1)
	r.calls++
	var out []net.IPAddr
	for _, s := range r.answers[i] {
		a := netip.MustParseAddr(s)
		out = append(out, net.IPAddr{IP: a.AsSlice(), Zone: a.Zone()})
	}
	return out, nil
}

func (r *fakeResolver) Calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// testServer is a TLS server that serves one handler and records requests.
type testServer struct {
	*httptest.Server
	mu      sync.Mutex
	handler http.HandlerFunc
	reqs    []*http.Request
}

func newTestServer(tb testing.TB, h http.HandlerFunc) *testServer {
	tb.Helper()
	ts := &testServer{handler: h}
	ts.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.mu.Lock()
		ts.reqs = append(ts.reqs, r.Clone(context.Background()))
		h := ts.handler
		ts.mu.Unlock()
		h(w, r)
	}))
	tb.Cleanup(ts.Close)
	return ts
}

func (ts *testServer) Hits() int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.reqs)
}

func (ts *testServer) SetHandler(h http.HandlerFunc) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.handler = h
}

// dialLog records the addresses the Fetcher asked to dial.
type dialLog struct {
	mu    sync.Mutex
	addrs []string
}

func (d *dialLog) Addrs() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

// clock is a settable Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type harness struct {
	f     *Fetcher
	srv   *testServer
	res   *fakeResolver
	dials *dialLog
	clock *clock
}

// MustOpenHarness returns a Fetcher allowed to fetch testHost, whose
// resolver answers publicIP unless res says otherwise, and whose final dial
// records the vetted address and connects to srv instead. Everything before
// that dial, the address checks included, is the production path.
func MustOpenHarness(tb testing.TB, h http.HandlerFunc, res *fakeResolver, mod func(*Config)) *harness {
	tb.Helper()
	if res == nil {
		res = newResolver([]string{publicIP})
	}
	hs := &harness{
		srv:   newTestServer(tb, h),
		res:   res,
		dials: &dialLog{},
		clock: &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	cfg := Config{
		AllowedHosts: []string{testHost},
		Resolver:     res,
		Now:          hs.clock.Now,
		Timeout:      2 * time.Second,
	}
	if mod != nil {
		mod(&cfg)
	}
	cfg.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		hs.dials.mu.Lock()
		hs.dials.addrs = append(hs.dials.addrs, addr)
		hs.dials.mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, "tcp", hs.srv.Listener.Addr().String())
	}
	cfg.rootCAs = x509Pool(hs.srv)
	f, err := NewFetcher(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	hs.f = f
	return hs
}

func x509Pool(srv *testServer) *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(srv.Certificate())
	return p
}

// validDoc is a document for testClientID.
func validDoc() map[string]any {
	return map[string]any{
		"client_id":                  testClientID,
		"client_name":                "Test Client",
		"client_uri":                 "https://" + testHost,
		"logo_uri":                   "https://" + testHost + "/logo.png",
		"redirect_uris":              []string{"https://" + testHost + "/callback", "http://127.0.0.1/cb"},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": "none",
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// serve returns a handler answering 200 with body as application/json and
// the given Cache-Control, if any.
func serve(body, cacheControl string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if cacheControl != "" {
			w.Header().Set("Cache-Control", cacheControl)
		}
		fmt.Fprint(w, body)
	}
}

func serveDoc(tb testing.TB, mutate func(map[string]any)) http.HandlerFunc {
	d := validDoc()
	if mutate != nil {
		mutate(d)
	}
	return serve(mustJSON(tb, d), "max-age=600")
}

func wantKind(t *testing.T, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T is not *Error", err)
	}
	if got, want := policy.CodeOf(err), policy.CodeInvalidClient; got != want {
		t.Errorf("CodeOf = %q, want %q", got, want)
	}
}

func TestFetcher_Fetch(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, nil), nil, nil)
	doc, err := hs.f.Fetch(t.Context(), testClientID)
	if err != nil {
		t.Fatal(err)
	}
	now := hs.clock.Now()
	want := Document{
		ClientID:     testClientID,
		ClientName:   "Test Client",
		ClientURI:    "https://" + testHost,
		LogoURI:      "https://" + testHost + "/logo.png",
		RedirectURIs: []string{"https://" + testHost + "/callback", "http://127.0.0.1/cb"},
		FetchedAt:    now,
		ExpiresAt:    now.Add(600 * time.Second),
	}
	if got := mustJSON(t, doc); got != mustJSON(t, want) {
		t.Errorf("doc = %s\nwant  %s", got, mustJSON(t, want))
	}
	if got, want := hs.dials.Addrs(), []string{publicIP + ":443"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("dialed %v, want %v", got, want)
	}
	// The caller owns the document.
	doc.RedirectURIs[0] = "https://evil.example/"
	again, err := hs.f.Fetch(t.Context(), testClientID)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := again.RedirectURIs[0], "https://"+testHost+"/callback"; got != want {
		t.Errorf("cached RedirectURIs[0] = %q, want %q", got, want)
	}
}

func TestFetcher_Fetch_requestCarriesNoCredentials(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, nil), nil, nil)
	type inboundAuth struct{}
	ctx := context.WithValue(t.Context(), inboundAuth{}, "Bearer secret")
	if _, err := hs.f.Fetch(ctx, testClientID); err != nil {
		t.Fatal(err)
	}
	if hs.srv.Hits() != 1 {
		t.Fatalf("hits = %d, want 1", hs.srv.Hits())
	}
	r := hs.srv.reqs[0]
	if r.Method != http.MethodGet {
		t.Errorf("method = %s, want GET", r.Method)
	}
	if r.Host != testHost {
		t.Errorf("Host = %q, want %q", r.Host, testHost)
	}
	if r.TLS == nil || r.TLS.ServerName != testHost {
		t.Errorf("SNI = %v, want %q", r.TLS, testHost)
	}
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		if v, ok := r.Header[h]; ok {
			t.Errorf("request has %s: %q", h, v)
		}
	}
	if got, want := r.Header.Get("User-Agent"), "ownsona"; got != want {
		t.Errorf("User-Agent = %q, want %q", got, want)
	}
}

func TestFetcher_Fetch_allowlist(t *testing.T) {
	for _, tt := range []struct {
		name    string
		allowed []string
		id      string
		ok      bool
	}{
		{"exact", []string{testHost}, testClientID, true},
		{"other host", []string{"claude.ai"}, testClientID, false},
		{"subdomain of exact", []string{"example.com"}, testClientID, false},
		{"suffix", []string{".example.com"}, testClientID, true},
		{"suffix does not match apex", []string{".client.example.com"}, testClientID, false},
		{"uppercase host", []string{testHost}, "https://CLIENT.example.com/oauth/client.json", false},
		{"trailing dot", []string{testHost}, "https://client.example.com./oauth/client.json", false},
		{"lookalike suffix", []string{testHost}, "https://client.example.com.evil.net/x", false},
		{"lookalike prefix", []string{testHost}, "https://evilclient.example.com/x", false},
		{"empty allowlist", []string{}, testClientID, false},
		{"defaults", nil, "https://evil.example/x", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := MustOpenHarness(t, serveDoc(t, nil), nil, func(c *Config) { c.AllowedHosts = tt.allowed })
			_, err := hs.f.Fetch(t.Context(), tt.id)
			if tt.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantKind(t, err, ErrHostNotAllowed)
			if n := hs.res.Calls(); n != 0 {
				t.Errorf("resolver called %d times before the allowlist refused", n)
			}
			if d := hs.dials.Addrs(); len(d) != 0 || hs.srv.Hits() != 0 {
				t.Errorf("dialed %v, hits %d", d, hs.srv.Hits())
			}
		})
	}
}

func TestFetcher_Fetch_notMetadataURL(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, nil), nil, nil)
	for _, id := range []string{"", "abc123", "http://" + testHost + "/x", "https://" + testHost + "/", "https://" + testHost + "/a/../x"} {
		_, err := hs.f.Fetch(t.Context(), id)
		wantKind(t, err, ErrNotMetadataURL)
	}
	if hs.res.Calls() != 0 || hs.srv.Hits() != 0 {
		t.Errorf("network touched: %d lookups, %d hits", hs.res.Calls(), hs.srv.Hits())
	}
}

var nonPublic = []string{
	"127.0.0.1", "127.255.255.254", "10.0.0.1", "10.255.255.255",
	"172.16.0.1", "172.31.255.255", "192.168.0.1", "192.168.255.255",
	"169.254.169.254", "169.254.0.1", "100.64.0.1", "100.127.255.254",
	"0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250", "255.255.255.255",
	"240.0.0.1", "192.0.2.1", "198.18.0.1",
	"::1", "::", "fc00::1", "fd12:3456::1", "fe80::1", "fe80::1%eth0", "ff02::1",
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:172.16.0.1", "::ffff:192.168.1.1",
	"::ffff:169.254.169.254", "::ffff:100.64.0.1", "::ffff:0.0.0.0",
	"::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "2001::1", "2001:db8::1", "fec0::1",
}

func TestFetcher_Fetch_nonPublicAddress(t *testing.T) {
	for _, ip := range nonPublic {
		t.Run(ip, func(t *testing.T) {
			hs := MustOpenHarness(t, serveDoc(t, nil), newResolver([]string{ip}), nil)
			_, err := hs.f.Fetch(t.Context(), testClientID)
			wantKind(t, err, ErrForbiddenAddress)
			if d := hs.dials.Addrs(); len(d) != 0 || hs.srv.Hits() != 0 {
				t.Errorf("dialed %v, hits %d", d, hs.srv.Hits())
			}
		})
	}
	t.Run("mixed answer", func(t *testing.T) {
		hs := MustOpenHarness(t, serveDoc(t, nil), newResolver([]string{publicIP, "127.0.0.1"}), nil)
		_, err := hs.f.Fetch(t.Context(), testClientID)
		wantKind(t, err, ErrForbiddenAddress)
		if d := hs.dials.Addrs(); len(d) != 0 {
			t.Errorf("dialed %v", d)
		}
	})
}

func TestIsPublic(t *testing.T) {
	for _, s := range nonPublic {
		if isPublic(netip.MustParseAddr(s)) {
			t.Errorf("isPublic(%s) = true", s)
		}
	}
	for _, s := range []string{publicIP, "8.8.8.8", "1.1.1.1", "160.79.104.10", "2606:4700:4700::1111", "2a00:1450:4001::1", "::ffff:8.8.8.8", "100.128.0.1", "172.32.0.1", "11.0.0.1"} {
		if !isPublic(netip.MustParseAddr(s)) {
			t.Errorf("isPublic(%s) = false", s)
		}
	}
	if isPublic(netip.Addr{}) {
		t.Error("isPublic(zero Addr) = true")
	}
}

// TestFetcher_Fetch_rebinding: a resolver answering a public address first
// and 127.0.0.1 afterwards. The name is resolved once per fetch and the
// connection goes to the address that was checked, so loopback is never
// dialed; the next fetch sees 127.0.0.1 and is refused.
func TestFetcher_Fetch_rebinding(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, nil), newResolver([]string{publicIP}, []string{"127.0.0.1"}), nil)
	if _, err := hs.f.Fetch(t.Context(), testClientID); err != nil {
		t.Fatal(err)
	}
	if got := hs.res.Calls(); got != 1 {
		t.Errorf("lookups = %d, want 1", got)
	}
	hs.clock.Add(time.Hour) // past max-age
	_, err := hs.f.Fetch(t.Context(), testClientID)
	wantKind(t, err, ErrForbiddenAddress)
	for _, a := range hs.dials.Addrs() {
		if ap := netip.MustParseAddrPort(a); !isPublic(ap.Addr()) {
			t.Errorf("dialed non-public %s", a)
		}
	}
	if got, want := strings.Join(hs.dials.Addrs(), ","), publicIP+":443"; got != want {
		t.Errorf("dialed %s, want %s", got, want)
	}
}

// TestFetcher_Fetch_productionDialer: without the test dial hook nothing
// can point a Fetcher at loopback, not a resolver and not an IP literal on
// the allowlist, though a server listens there.
func TestFetcher_Fetch_productionDialer(t *testing.T) {
	srv := newTestServer(t, serveDoc(t, nil))
	port := srv.Listener.Addr().(*net.TCPAddr).Port

	res := newResolver([]string{"127.0.0.1"})
	f, err := NewFetcher(Config{AllowedHosts: []string{testHost}, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Fetch(t.Context(), fmt.Sprintf("https://%s:%d/oauth/client.json", testHost, port))
	wantKind(t, err, ErrForbiddenAddress)

	f, err = NewFetcher(Config{AllowedHosts: []string{"127.0.0.1"}, Resolver: res})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Fetch(t.Context(), fmt.Sprintf("https://127.0.0.1:%d/oauth/client.json", port))
	wantKind(t, err, ErrForbiddenAddress)

	if srv.Hits() != 0 {
		t.Errorf("server hit %d times", srv.Hits())
	}
	if res.Calls() != 1 {
		t.Errorf("lookups = %d, want 1 (none for an IP literal)", res.Calls())
	}
	// The socket-level check refuses what slipped past.
	for _, a := range []string{"127.0.0.1:443", "[::1]:443", "10.0.0.1:443", "[::ffff:127.0.0.1]:443", "nonsense"} {
		if err := controlPublic("tcp", a, nil); !errors.Is(err, errNotPublic) {
			t.Errorf("controlPublic(%s) = %v, want errNotPublic", a, err)
		}
	}
	if err := controlPublic("tcp", publicIP+":443", nil); err != nil {
		t.Errorf("controlPublic(public) = %v", err)
	}
}

func TestFetcher_Fetch_responses(t *testing.T) {
	big := validDoc()
	big["client_name"] = "x"
	bigJSON := mustJSON(t, big)
	pad := DefaultMaxBytes - len(bigJSON)

	for _, tt := range []struct {
		name string
		h    http.HandlerFunc
		kind error // nil: success
	}{
		{"redirect 302", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, testClientID, http.StatusFound)
		}, ErrRedirect},
		{"redirect 308", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Location", "/other")
			w.WriteHeader(http.StatusPermanentRedirect)
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, ErrRedirect},
		{"not found", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, ErrStatus},
		{"201", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, ErrStatus},
		{"server error", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "oops", http.StatusInternalServerError)
		}, ErrStatus},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, ErrContentType},
		{"no content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, ErrContentType},
		{"json with charset", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			fmt.Fprint(w, mustJSON(t, validDoc()))
		}, nil},
		{"exactly max bytes", serve(bigJSON+strings.Repeat(" ", pad), ""), nil},
		{"one byte over", serve(bigJSON+strings.Repeat(" ", pad+1), ""), ErrTooLarge},
		{"over, chunked", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, bigJSON)
			w.(http.Flusher).Flush()
			fmt.Fprint(w, strings.Repeat(" ", pad+1))
		}, ErrTooLarge},
		{"huge", serve(strings.Repeat(" ", 1<<20)+"{}", ""), ErrTooLarge},
		{"not JSON", serve("client_id="+testClientID, ""), ErrInvalidJSON},
		{"array", serve("["+mustJSON(t, validDoc())+"]", ""), ErrInvalidJSON},
		{"trailing data", serve(mustJSON(t, validDoc())+"{}", ""), ErrInvalidJSON},
		{"duplicate client_id", serve(`{"client_id":"https://evil.example/x",`+mustJSON(t, validDoc())[1:], ""), ErrInvalidJSON},
		{"duplicate nested key", serve(strings.TrimSuffix(mustJSON(t, validDoc()), "}")+`,"x":{"a":1,"a":2}}`, ""), ErrInvalidJSON},
		{"invalid UTF-8", serve(strings.Replace(mustJSON(t, validDoc()), "Test Client", "Test \xff", 1), ""), ErrInvalidJSON},
		{"too deep", serve(strings.TrimSuffix(mustJSON(t, validDoc()), "}")+`,"x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+"}", ""), ErrInvalidJSON},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := MustOpenHarness(t, tt.h, nil, nil)
			_, err := hs.f.Fetch(t.Context(), testClientID)
			if tt.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantKind(t, err, tt.kind)
			if got := hs.srv.Hits(); got != 1 {
				t.Errorf("hits = %d, want 1 (redirects are not followed)", got)
			}
		})
	}
}

func TestFetcher_Fetch_document(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mutate func(map[string]any)
		kind   error // nil: success
	}{
		{"minimal", func(d map[string]any) {
			for _, k := range []string{"client_name", "client_uri", "logo_uri", "grant_types", "response_types", "token_endpoint_auth_method"} {
				delete(d, k)
			}
		}, nil},
		{"client_id missing", func(d map[string]any) { delete(d, "client_id") }, ErrClientIDMismatch},
		{"client_id other", func(d map[string]any) { d["client_id"] = "https://" + testHost + "/other.json" }, ErrClientIDMismatch},
		{"client_id trailing slash", func(d map[string]any) { d["client_id"] = testClientID + "/" }, ErrClientIDMismatch},
		{"client_id case", func(d map[string]any) { d["client_id"] = strings.ToUpper(testClientID) }, ErrClientIDMismatch},
		{"client_id null", func(d map[string]any) { d["client_id"] = nil }, ErrClientIDMismatch},
		{"client_id number", func(d map[string]any) { d["client_id"] = 1 }, ErrClientIDMismatch},
		{"Client_ID key", func(d map[string]any) { delete(d, "client_id"); d["Client_ID"] = testClientID }, ErrClientIDMismatch},
		{"redirect_uris missing", func(d map[string]any) { delete(d, "redirect_uris") }, ErrInvalidMetadata},
		{"redirect_uris empty", func(d map[string]any) { d["redirect_uris"] = []string{} }, ErrInvalidMetadata},
		{"redirect_uris null", func(d map[string]any) { d["redirect_uris"] = nil }, ErrInvalidMetadata},
		{"redirect_uris string", func(d map[string]any) { d["redirect_uris"] = "https://" + testHost + "/cb" }, ErrInvalidMetadata},
		{"redirect_uris too many", func(d map[string]any) {
			var u []string
			for i := range MaxRedirectURIs + 1 {
				u = append(u, fmt.Sprintf("https://%s/cb%d", testHost, i))
			}
			d["redirect_uris"] = u
		}, ErrInvalidMetadata},
		{"redirect javascript", func(d map[string]any) { d["redirect_uris"] = []string{"javascript:alert(1)"} }, ErrInvalidMetadata},
		{"redirect http non-loopback", func(d map[string]any) { d["redirect_uris"] = []string{"http://evil.example/cb"} }, ErrInvalidMetadata},
		{"redirect fragment", func(d map[string]any) { d["redirect_uris"] = []string{"https://" + testHost + "/cb#x"} }, ErrInvalidMetadata},
		{"redirect wildcard", func(d map[string]any) { d["redirect_uris"] = []string{"https://*.example.com/cb"} }, ErrInvalidMetadata},
		{"one bad redirect among good", func(d map[string]any) {
			d["redirect_uris"] = []string{"https://" + testHost + "/cb", "https://" + testHost + "/../cb"}
		}, ErrInvalidMetadata},
		{"custom scheme default", func(d map[string]any) { d["redirect_uris"] = []string{"cursor://anysphere.cursor-mcp/oauth/callback"} }, nil},
		{"custom scheme unknown", func(d map[string]any) { d["redirect_uris"] = []string{"evil://cb"} }, ErrInvalidMetadata},
		{"auth method secret", func(d map[string]any) { d["token_endpoint_auth_method"] = "client_secret_basic" }, ErrInvalidMetadata},
		{"auth method private_key_jwt", func(d map[string]any) { d["token_endpoint_auth_method"] = "private_key_jwt" }, ErrInvalidMetadata},
		{"auth method null", func(d map[string]any) { d["token_endpoint_auth_method"] = nil }, ErrInvalidMetadata},
		{"client_secret", func(d map[string]any) { d["client_secret"] = "s3cret" }, ErrInvalidMetadata},
		{"name 128", func(d map[string]any) { d["client_name"] = strings.Repeat("é", MaxClientNameLen) }, nil},
		{"name 129", func(d map[string]any) { d["client_name"] = strings.Repeat("é", MaxClientNameLen+1) }, ErrInvalidMetadata},
		{"name control", func(d map[string]any) { d["client_name"] = "Claude\x00" }, ErrInvalidMetadata},
		{"name newline", func(d map[string]any) { d["client_name"] = "Claude\nAllow" }, ErrInvalidMetadata},
		{"name bidi override", func(d map[string]any) { d["client_name"] = "\u202eedualC" }, ErrInvalidMetadata},
		{"name not string", func(d map[string]any) { d["client_name"] = []string{"x"} }, ErrInvalidMetadata},
		{"logo not string", func(d map[string]any) { d["logo_uri"] = 3 }, ErrInvalidMetadata},
	} {
		t.Run(tt.name, func(t *testing.T) {
			hs := MustOpenHarness(t, serveDoc(t, tt.mutate), nil, nil)
			_, err := hs.f.Fetch(t.Context(), testClientID)
			if tt.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantKind(t, err, tt.kind)
		})
	}
}

func TestFetcher_Fetch_displayURLsDropped(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, func(d map[string]any) {
		d["client_uri"] = "javascript:alert(1)"
		d["logo_uri"] = "http://" + testHost + "/logo.png"
	}), nil, nil)
	doc, err := hs.f.Fetch(t.Context(), testClientID)
	if err != nil {
		t.Fatal(err)
	}
	if doc.ClientURI != "" || doc.LogoURI != "" {
		t.Errorf("ClientURI, LogoURI = %q, %q, want both empty", doc.ClientURI, doc.LogoURI)
	}
}

func TestFetcher_Fetch_cache(t *testing.T) {
	body := mustJSON(t, validDoc())
	hs := MustOpenHarness(t, serve(body, "public, max-age=300"), nil, nil)
	ctx := t.Context()
	for range 3 {
		if _, err := hs.f.Fetch(ctx, testClientID); err != nil {
			t.Fatal(err)
		}
	}
	if got := hs.srv.Hits(); got != 1 {
		t.Fatalf("hits = %d, want 1", got)
	}
	hs.clock.Add(299 * time.Second)
	if _, err := hs.f.Fetch(ctx, testClientID); err != nil {
		t.Fatal(err)
	}
	if got := hs.srv.Hits(); got != 1 {
		t.Errorf("hits within max-age = %d, want 1", got)
	}
	hs.clock.Add(time.Second)
	doc, err := hs.f.Fetch(ctx, testClientID)
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.srv.Hits(); got != 2 {
		t.Errorf("hits after max-age = %d, want 2", got)
	}
	if got, want := doc.FetchedAt, hs.clock.Now(); !got.Equal(want) {
		t.Errorf("FetchedAt = %v, want %v", got, want)
	}
}

func TestFetcher_Fetch_errorsNotCached(t *testing.T) {
	hs := MustOpenHarness(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}, nil, nil)
	_, err := hs.f.Fetch(t.Context(), testClientID)
	wantKind(t, err, ErrStatus)
	hs.srv.SetHandler(serveDoc(t, nil))
	if _, err := hs.f.Fetch(t.Context(), testClientID); err != nil {
		t.Fatalf("after the server recovered: %v", err)
	}
	if got := hs.srv.Hits(); got != 2 {
		t.Errorf("hits = %d, want 2", got)
	}
	// A document that becomes invalid is refused once the good copy expires.
	hs.srv.SetHandler(serveDoc(t, func(d map[string]any) { d["redirect_uris"] = []string{"http://evil.example/"} }))
	hs.clock.Add(DefaultMaxTTL)
	_, err = hs.f.Fetch(t.Context(), testClientID)
	wantKind(t, err, ErrInvalidMetadata)
}

func TestFetcher_ttl(t *testing.T) {
	f, err := NewFetcher(Config{MinTTL: time.Minute, MaxTTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cc, age string
		want    time.Duration
	}{
		{"", "", time.Minute},
		{"max-age=300", "", 5 * time.Minute},
		{"public, max-age=300", "100", 200 * time.Second},
		{"max-age=300", "1000", time.Minute},
		{"max-age=1", "", time.Minute},
		{"max-age=0", "", time.Minute},
		{"max-age=86401", "", 24 * time.Hour},
		{"max-age=99999999999999999999", "", 24 * time.Hour},
		{"no-store, max-age=3600", "", time.Minute},
		{"max-age=3600, no-cache", "", time.Minute},
		{"max-age=3600, max-age=7200", "", time.Minute},
		{"max-age=-5", "", time.Minute},
		{"max-age=\"3600\"", "", time.Minute},
		{"MAX-AGE=3600", "", time.Hour},
	} {
		h := http.Header{}
		if tt.cc != "" {
			h.Set("Cache-Control", tt.cc)
		}
		if tt.age != "" {
			h.Set("Age", tt.age)
		}
		if got := f.ttl(h); got != tt.want {
			t.Errorf("ttl(%q, Age %q) = %v, want %v", tt.cc, tt.age, got, tt.want)
		}
	}
}

func TestFetcher_Fetch_timeout(t *testing.T) {
	release := make(chan struct{})
	// The handler answers only when the test ends: returning when its request's context ends
	// let it answer (an empty 200, not JSON) before the client's deadline on a loaded machine.
	hs := MustOpenHarness(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
	}, nil, func(c *Config) { c.Timeout = 100 * time.Millisecond })
	defer close(release)
	_, err := hs.f.Fetch(t.Context(), testClientID)
	wantKind(t, err, ErrFetch)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded in its chain", err)
	}
}

func TestFetcher_Fetch_concurrent(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, nil), nil, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := hs.f.Fetch(t.Context(), testClientID); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestError_OAuth(t *testing.T) {
	hs := MustOpenHarness(t, serveDoc(t, func(d map[string]any) { d["redirect_uris"] = []string{"javascript:x"} }), nil, nil)
	_, err := hs.f.Fetch(t.Context(), testClientID)
	var oe *policy.OAuthError
	if !errors.As(err, &oe) {
		t.Fatalf("no *policy.OAuthError in %v", err)
	}
	if oe.Code != policy.CodeInvalidClient || !strings.Contains(oe.Description, "redirect_uris[0]") {
		t.Errorf("OAuth error = %v", oe)
	}

	hs = MustOpenHarness(t, serveDoc(t, nil), newResolver([]string{"10.1.2.3"}), nil)
	_, err = hs.f.Fetch(t.Context(), testClientID)
	if !errors.As(err, &oe) {
		t.Fatalf("no *policy.OAuthError in %v", err)
	}
	if strings.Contains(oe.Description, "10.1.2.3") {
		t.Errorf("client-facing description names the address: %q", oe.Description)
	}
	if !strings.Contains(err.Error(), "10.1.2.3") {
		t.Errorf("log text %q does not name the address", err.Error())
	}
}

func TestNewFetcher_config(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"suffix", Config{AllowedHosts: []string{".example.com", "claude.ai"}}, true},
		{"ip", Config{AllowedHosts: []string{"192.0.2.1"}}, true},
		{"uppercase", Config{AllowedHosts: []string{"Claude.ai"}}, false},
		{"port", Config{AllowedHosts: []string{"claude.ai:443"}}, false},
		{"scheme", Config{AllowedHosts: []string{"https://claude.ai"}}, false},
		{"wildcard", Config{AllowedHosts: []string{"*.claude.ai"}}, false},
		{"tld suffix", Config{AllowedHosts: []string{".com"}}, false},
		{"empty entry", Config{AllowedHosts: []string{""}}, false},
		{"dot", Config{AllowedHosts: []string{"."}}, false},
		{"trailing dot", Config{AllowedHosts: []string{"claude.ai."}}, false},
		{"ttl order", Config{MinTTL: time.Hour, MaxTTL: time.Minute}, false},
		{"negative timeout", Config{Timeout: -1}, false},
		{"negative bytes", Config{MaxBytes: -1}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFetcher(tt.cfg)
			if (err == nil) != tt.ok {
				t.Errorf("NewFetcher err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

// TestFetcher_store_bounded runs in a synctest bubble: the hour it waits passes at once.
func TestFetcher_store_bounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := NewFetcher(Config{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range maxCacheEntries + 10 {
			f.store(&Document{ClientID: fmt.Sprintf("https://claude.ai/%d", i), ExpiresAt: time.Now().Add(time.Hour)})
		}
		if got := len(f.cache); got != maxCacheEntries {
			t.Errorf("cache holds %d, want %d", got, maxCacheEntries)
		}
		if f.cached(fmt.Sprintf("https://claude.ai/%d", maxCacheEntries+9)) == nil {
			t.Error("the newest entry was evicted")
		}
		time.Sleep(time.Hour)
		if f.cached("https://claude.ai/1030") != nil {
			t.Error("an expired entry was returned")
		}
	})
}
