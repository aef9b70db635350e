package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ownsona/ownsona/oauth/policy"
)

// These tests drive the owner's console through the whole server (app/web mounts it), next to
// MCP clients: what one does, the other sees.

// consoleBrowser is the owner's browser on the console of a server at base: it keeps cookies and
// follows redirects, as a browser does.
type consoleBrowser struct {
	tb   testing.TB
	base string
	c    *http.Client
	csrf string
}

var consoleCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newConsoleBrowser(tb testing.TB, base string, rt http.RoundTripper) *consoleBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &consoleBrowser{tb: tb, base: base, c: &http.Client{Jar: jar, Transport: noFragment{rt}, Timeout: 30 * time.Second}}
}

// noFragment drops a URL's fragment before rt sees it, as a browser keeps it to itself.
type noFragment struct{ rt http.RoundTripper }

func (n noFragment) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Fragment != "" {
		r = r.Clone(r.Context())
		r.URL.Fragment = ""
	}
	return n.rt.RoundTrip(r)
}

// do sends a request (a form when form is not nil), follows redirects and returns the final
// page's status and body, keeping the CSRF token of a signed-in page.
func (b *consoleBrowser) do(method, path string, form url.Values) (int, string) {
	b.tb.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, b.base+path, body)
	if err != nil {
		b.tb.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", b.base)
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	page, err := io.ReadAll(res.Body)
	if err != nil {
		b.tb.Fatal(err)
	}
	if m := consoleCSRF.FindSubmatch(page); m != nil && !strings.Contains(string(page), `action="/console/signin"`) {
		b.csrf = string(m[1])
	}
	return res.StatusCode, string(page)
}

// page GETs a console page and fails unless it ends 200.
func (b *consoleBrowser) page(path string) string {
	b.tb.Helper()
	status, body := b.do(http.MethodGet, path, nil)
	if status != http.StatusOK {
		b.tb.Fatalf("GET %s: %d\n%s", path, status, body)
	}
	return body
}

// submit posts a form of a signed-in page, with its CSRF token, and returns the page it ends on.
func (b *consoleBrowser) submit(path string, form url.Values) string {
	b.tb.Helper()
	form.Set("csrf", b.csrf)
	status, body := b.do(http.MethodPost, path, form)
	if status != http.StatusOK {
		b.tb.Fatalf("POST %s: %d\n%s", path, status, body)
	}
	return body
}

// signIn signs in with the owner's password.
func (b *consoleBrowser) signIn() {
	b.tb.Helper()
	_, page := b.do(http.MethodGet, "/console", nil)
	m := consoleCSRF.FindStringSubmatch(page)
	if m == nil {
		b.tb.Fatalf("no sign-in form at /console:\n%s", page)
	}
	status, page := b.do(http.MethodPost, "/console/signin", url.Values{"csrf": {m[1]}, "username": {"owner"}, "password": {testPassword}, "next": {"/console/memories"}})
	if status != http.StatusOK || !strings.Contains(page, "<h1>Memories</h1>") {
		b.tb.Fatalf("sign in: %d\n%s", status, page)
	}
}

var (
	consoleNewToken = regexp.MustCompile(`id="new-token" class="mono" readonly value="(osk_[^"]+)"`)
)

// TestConsole_TokensReachMCP: a memory stored over MCP shows in the console; a token created in
// the console (after the password again) works on /mcp; revoked there, it gets 401; and the
// activity log shows the calls.
func TestConsole_TokensReachMCP(t *testing.T) {
	a := MustOpen(t, testConfig(t, nil))
	mustOK(t, a, "remember", map[string]any{"text": "Stored over MCP for the console", "tags": []string{"e2e"}})
	b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
	b.signIn()
	if page := b.page("/console/memories"); !strings.Contains(page, "Stored over MCP for the console") || !strings.Contains(page, "pat:test") {
		t.Fatalf("the console does not show the memory stored over MCP:\n%s", page)
	}

	b.page("/console/connections")
	page := b.submit("/console/connections/tokens", url.Values{"name": {"console-made"}, "scope": {"write"}, "expires": {"never"}, "password": {testPassword}})
	m := consoleNewToken.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no token shown after creating one:\n%s", page)
	}
	tok := m[1]
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"remember","arguments":{"text":"Written with the console's token"}}}`
	if rec := mcpRequest(a.Handler(), "Bearer "+tok, call); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `\"ok\":true`) {
		t.Fatalf("MCP with the console's token: %d %s", rec.Code, rec.Body)
	}
	pats, err := a.Auth().PATs().List()
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, p := range pats {
		if p.Name == "console-made" {
			id = p.ID
		}
	}
	if id == "" || !strings.Contains(b.page("/console/connections"), `name="id" value="`+id+`"`) {
		t.Fatalf("the connections page has no revoke form for the token %q", id)
	}
	page = b.submit("/console/connections/tokens/revoke", url.Values{"id": {id}})
	if !strings.Contains(page, "The token console-made is revoked") {
		t.Fatalf("revoke: %s", page)
	}
	rec := mcpRequest(a.Handler(), "Bearer "+tok, call)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("MCP with the revoked token: %d, want 401", rec.Code)
	}
	if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer ") {
		t.Errorf("401 without a challenge: %q", ch)
	}

	activity := b.page("/console/activity")
	for _, want := range []string{"pat:console-made", "<code>remember</code>", "unauthorized", "console/create_token", "console/revoke_token"} {
		if !strings.Contains(activity, want) {
			t.Errorf("the activity page lacks %q", want)
		}
	}
}

// TestConsole_EditNotifiesSubscribers: an edit in the console reaches an MCP client subscribed
// to the memory (through memory.Store's change hook), as an edit by another client does.
func TestConsole_EditNotifiesSubscribers(t *testing.T) {
	cfg := testConfig(t, nil)
	cfg.PublicURL = ""
	a := MustOpen(t, cfg)
	if err := a.Listen(); err != nil {
		t.Fatal(err)
	}
	base := "http://" + a.Addr()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	updates := newUpdateRecorder()
	watcher := sdkClient(t, ctx, base+"/mcp", testPAT(t, a, policy.ScopeRead), "2025-11-25", &mcp.ClientOptions{ResourceUpdatedHandler: updates.handle})
	writer := sdkClient(t, ctx, base+"/mcp", testPAT(t, a), "2025-11-25", nil)
	id := int(sdkPayload(t, writer, "remember", map[string]any{"text": "Edited in the console"})["memory_id"].(float64))
	uri := fmt.Sprintf("ownsona://memories/%d", id)
	if err := watcher.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		t.Fatalf("subscribe %s: %v", uri, err)
	}
	b := newConsoleBrowser(t, base, http.DefaultTransport)
	b.signIn()
	b.page(fmt.Sprintf("/console/memories/%d", id))
	// The SDK opens its stream in the background: edit until the notification comes.
	deadline := time.Now().Add(2 * time.Minute)
	for i := 0; ; i++ {
		page := b.submit(fmt.Sprintf("/console/memories/%d", id), url.Values{"text": {"Edited in the console"}, "tags": {""},
			"importance": {fmt.Sprint(0.5 + float64(i%4)/10)}, "expires": {""}})
		if !strings.Contains(page, "Saved (importance)") && !strings.Contains(page, "Nothing changed.") {
			t.Fatalf("edit %d: %s", i, page)
		}
		if updates.wait(uri, 250*time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			_, uris := updates.seen(uri)
			t.Fatalf("no notifications/resources/updated for %s after %d console edits; got %q", uri, i+1, uris)
		}
	}
}

// TestConsole_SettingsReachMCP: an allowlist saved on the console's Settings page changes what
// MCP clients see at once.
func TestConsole_SettingsReachMCP(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
	b.signIn()
	page := b.submit("/console/settings/save", url.Values{"tools": {"remember", "recall"}, "approval": {"off"},
		"approval_timeout": {"2m"}, "rate_limit": {"0"}, "rate_burst": {"20"}})
	if !strings.Contains(page, "Saved") {
		t.Fatalf("saving the settings:\n%s", page)
	}
	if got := listedTools(t, mcpRequest(a.Handler(), "Bearer "+testPAT(t, a), msgToolsList)); !slices.Equal(got, []string{"recall", "remember"}) {
		t.Errorf("tools/list after the console's save = %v, want [recall remember]", got)
	}
}
