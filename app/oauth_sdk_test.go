package app

import (
	ownmcp "github.com/ownsona/ownsona/mcp"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/ownsona/ownsona/oauth/login"
	"github.com/ownsona/ownsona/oauth/policy"
)

// These tests connect the official MCP Go SDK client, with its own OAuth support
// (auth.AuthorizationCodeHandler: discovery from the 401 challenge, dynamic client registration,
// PKCE, the RFC 9207 iss check, the code exchange and refresh), to the real binary. The owner's
// browser is a Go function that fills in the login and consent pages as a person would.

// sdkRedirectURI is where the test clients ask the owner's browser to be sent. Nothing listens
// there: the browser stops at the redirect and hands its query to the client.
const sdkRedirectURI = "http://127.0.0.1:48123/callback"

// sdkClientName is the client_name the SDK registers, and so the source_client of its memories.
const sdkClientName = "ownsona-sdk-oauth-test"

// testServer is the real binary serving MCP on a loopback port.
type testServer struct {
	URL    string // the MCP endpoint, http://127.0.0.1:PORT/mcp
	Issuer string // http://127.0.0.1:PORT
	logs   *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for concurrent writers and readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs `ownsona serve` on a fresh file with the owner's password set, waits for its
// "serving MCP" log line, and stops it at cleanup.
func startServer(t *testing.T) *testServer {
	t.Helper()
	cmd := exec.Command(ownsonaBinary(t), "serve", "--db", filepath.Join(t.TempDir(), "ownsona.db"),
		"--addr", "127.0.0.1:0", "--log-level", "info")
	cmd.Env = append(os.Environ(), "OWNSONA_LOGIN_PASSWORD="+testPassword, "OWNSONA_RATE_LIMIT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	urls := make(chan string, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			logs.Write(append(sc.Bytes(), '\n'))
			var line struct {
				Message string `json:"message"`
				URL     string `json:"url"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Message == "serving MCP" {
				select {
				case urls <- line.URL:
				default:
				}
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			defer func() { t.Logf("server log:\n%s", logs) }()
		}
		_ = cmd.Process.Signal(os.Interrupt)
		exited := make(chan struct{})
		go func() { <-drained; cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(2 * time.Minute):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case u := <-urls:
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/mcp") {
			t.Fatalf("serving at %q, want http://127.0.0.1:PORT/mcp", u)
		}
		return &testServer{URL: u, Issuer: strings.TrimSuffix(u, "/mcp"), logs: logs}
	case <-drained:
		t.Fatalf("ownsona serve exited before serving:\n%s", logs)
	case <-time.After(2 * time.Minute):
		t.Fatalf("ownsona serve did not log \"serving MCP\" within 2 minutes:\n%s", logs)
	}
	return nil
}

// browser stands in for the owner's web browser on the authorization server's pages: it keeps
// cookies, submits the login and consent forms as a browser would (only the form's own fields,
// with Origin and Sec-Fetch-Site), follows the server's redirects to its own pages, and stops
// at the redirect to the client, which it returns without following.
type browser struct {
	client   *http.Client
	jar      http.CookieJar
	username string
	password string
	// wait lets d pass before the consent form is submitted (Allow works only after the page
	// has been shown for login.ConsentDelay). If nil, time.Sleep.
	wait func(d time.Duration)
}

// newBrowser returns a browser whose requests go through rt (nil: the network) and that signs
// in as the owner with password.
func newBrowser(rt http.RoundTripper, password string) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		panic(err)
	}
	return &browser{jar: jar, username: "owner", password: password, client: &http.Client{
		Transport: rt, Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// The markup of oauth/login/pages.html: one POST form per page, its hidden fields first.
var (
	formRE   = regexp.MustCompile(`(?s)<form method="post" action="([^"]*)">(.*?)</form>`)
	hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
	alertRE  = regexp.MustCompile(`(?s)<p class="error" role="alert">(.*?)</p>`)
)

// authorize opens authURL, signs in when the login page asks, allows on the consent page, and
// returns the redirect to the client.
func (b *browser) authorize(ctx context.Context, authURL string) (*url.URL, error) {
	resp, body, err := b.do(ctx, http.MethodGet, authURL, nil)
	signedIn := false
	for range 8 {
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			m := formRE.FindSubmatch(body)
			if m == nil {
				return nil, fmt.Errorf("GET %s: no form in the page:\n%s", resp.Request.URL.Path, body)
			}
			form := url.Values{}
			for _, h := range hiddenRE.FindAllSubmatch(m[2], -1) {
				form.Set(html.UnescapeString(string(h[1])), html.UnescapeString(string(h[2])))
			}
			action := html.UnescapeString(string(m[1]))
			switch action {
			case "/oauth/login":
				if signedIn {
					msg := "no message"
					if a := alertRE.FindSubmatch(body); a != nil {
						msg = html.UnescapeString(string(a[1]))
					}
					return nil, fmt.Errorf("login refused: %s", msg)
				}
				signedIn = true
				form.Set("username", b.username)
				form.Set("password", b.password)
			case "/oauth/consent":
				form.Set("action", "allow")
				if b.wait != nil {
					b.wait(login.ConsentDelay)
				} else {
					time.Sleep(login.ConsentDelay)
				}
			default:
				return nil, fmt.Errorf("a form posting to %q", action)
			}
			target := resp.Request.URL.ResolveReference(&url.URL{Path: action})
			resp, body, err = b.do(ctx, http.MethodPost, target.String(), form)
			if err == nil && resp.StatusCode != http.StatusSeeOther {
				return nil, fmt.Errorf("POST %s: status %d, want 303 (AS-19):\n%s", action, resp.StatusCode, body)
			}
		case http.StatusSeeOther, http.StatusFound:
			loc, lerr := resp.Location()
			if lerr != nil {
				return nil, lerr
			}
			if loc.Host != resp.Request.URL.Host || !strings.HasPrefix(loc.Path, "/oauth/") {
				return loc, nil // to the client: a browser would go there; we report it
			}
			resp, body, err = b.do(ctx, http.MethodGet, loc.String(), nil)
		default:
			return nil, fmt.Errorf("%s %s: status %d:\n%s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, body)
		}
	}
	return nil, errors.New("more pages than a sign-in takes")
}

// do sends one browser request; form, when not nil, is POSTed as a form from the page's origin.
func (b *browser) do(ctx context.Context, method, target string, form url.Values) (*http.Response, []byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "text/html")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", req.URL.Scheme+"://"+req.URL.Host)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp, data, err
}

// codeFetcher is the SDK's AuthorizationCodeFetcher: the browser opens the authorization URL
// and the redirect's code, state and iss (each exactly once, AS-32) go back to the SDK. calls
// counts the authorizations.
func (b *browser) codeFetcher(calls *atomic.Int32) auth.AuthorizationCodeFetcher {
	return func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		calls.Add(1)
		loc, err := b.authorize(ctx, args.URL)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(loc.String(), sdkRedirectURI+"?") {
			return nil, fmt.Errorf("redirected to %s, not to the client's redirect URI", loc.Redacted())
		}
		q := loc.Query()
		if q.Get("code") == "" {
			return nil, fmt.Errorf("no code in the redirect: error=%q %q", q.Get("error"), q.Get("error_description"))
		}
		for _, p := range []string{"code", "state", "iss"} {
			if len(q[p]) != 1 {
				return nil, fmt.Errorf("the redirect carries %s %d times, want once", p, len(q[p]))
			}
		}
		if q.Has("code_challenge") {
			return nil, errors.New("the redirect echoes code_challenge")
		}
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
}

// refreshSource is the SDK's token source (oauth2.Config.TokenSource, what the handler builds
// by default) with one more knob: expire makes its next Token call use the refresh token, as it
// does on its own when the access token runs out, without waiting an hour.
type refreshSource struct {
	ctx context.Context
	cfg *oauth2.Config

	mu   sync.Mutex
	ts   oauth2.TokenSource
	last *oauth2.Token
}

func (s *refreshSource) Token() (*oauth2.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.ts.Token()
	if err == nil {
		s.last = tok
	}
	return tok, err
}

// expire forgets the access token: the next request refreshes.
func (s *refreshSource) expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ts = s.cfg.TokenSource(s.ctx, &oauth2.Token{RefreshToken: s.last.RefreshToken})
}

// current is the token the source last handed out.
func (s *refreshSource) current() *oauth2.Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// sdkOAuth is an SDK OAuth handler registering sdkClientName, the owner's browser, and the
// token sources it made (the newest last).
type sdkOAuth struct {
	handler *auth.AuthorizationCodeHandler
	browser *browser
	logins  atomic.Int32 // authorizations the SDK started
	source  atomic.Pointer[refreshSource]
}

// newSDKOAuth configures the SDK's authorization code handler with dynamic client
// registration; scopes, when given, replace the scopes the server's challenge suggests.
func newSDKOAuth(t *testing.T, scopes ...string) *sdkOAuth {
	t.Helper()
	o := &sdkOAuth{browser: newBrowser(nil, testPassword)}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: sdkClientName, RedirectURIs: []string{sdkRedirectURI}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		}},
		AuthorizationCodeFetcher: o.browser.codeFetcher(&o.logins),
		Client:                   &http.Client{Timeout: 30 * time.Second},
		NewTokenSource: func(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			s := &refreshSource{ctx: ctx, cfg: cfg, ts: cfg.TokenSource(ctx, tok)}
			o.source.Store(s)
			return s, nil
		},
	}
	if len(scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	h, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.handler = h
	return o
}

// connectOAuthSDK connects the SDK client to srv through the OAuth handler.
func connectOAuthSDK(t *testing.T, ctx context.Context, srv *testServer, o *sdkOAuth) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-oauth-test", Version: "1.0.0"}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL, OAuthHandler: o.handler,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nserver log:\n%s", err, srv.logs)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sdkToolNames lists the session's tools, sorted.
func sdkToolNames(t *testing.T, ctx context.Context, s *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range s.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// postMCP sends one raw JSON-RPC message to the server with a bearer token, as a client that
// skips the SDK would.
func postMCP(t *testing.T, ctx context.Context, endpoint, token, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+token)
	return sendHTTP(t, req)
}

// postForm posts a form to an OAuth endpoint.
func postForm(t *testing.T, ctx context.Context, endpoint string, form url.Values) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return sendHTTP(t, req)
}

func sendHTTP(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// TestOAuthSDK_FullFlow: the SDK discovers the server from its 401, registers, sends the owner
// through login and consent, exchanges the code with PKCE and uses every tool the token allows;
// its memories carry its registered name. It then refreshes (rotation), and a revocation of the
// refresh token ends the still-unexpired access tokens at once (RS-07), after which the SDK
// recovers by asking the owner again.
func TestOAuthSDK_FullFlow(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newSDKOAuth(t)
	s := connectOAuthSDK(t, ctx, srv, o)
	if n := o.logins.Load(); n != 1 {
		t.Fatalf("authorizations = %d, want 1", n)
	}
	src := o.source.Load()
	if src == nil {
		t.Fatal("the SDK made no token source")
	}
	if got, want := src.cfg.Endpoint.TokenURL, srv.Issuer+"/oauth/token"; got != want {
		t.Errorf("token endpoint = %q, want %q", got, want)
	}
	if got := src.current().Extra("scope"); got != "memories:read memories:write" {
		t.Errorf("granted scope = %v, want both", got)
	}

	if got := sdkToolNames(t, ctx, s); !slices.Equal(got, allTools) {
		t.Fatalf("tools = %v, want %v", got, allTools)
	}
	p := sdkPayload(t, s, "remember", map[string]any{"text": "The OAuth test prefers green tea", "tags": []string{"drinks"}})
	mid := p["memory_id"].(float64)
	r := sdkPayload(t, s, "recall", map[string]any{"query": "green tea"})
	if m := r["matches"].([]any); len(m) == 0 || m[0].(map[string]any)["id"] != mid {
		t.Errorf("recall = %v, want memory %v first", r, mid)
	}
	mem := sdkPayload(t, s, "get_memory", map[string]any{"id": mid})["memory"].(map[string]any)
	if mem["source_client"] != sdkClientName {
		t.Errorf("source_client = %v, want the registered client_name %q", mem["source_client"], sdkClientName)
	}

	t.Run("refresh", func(t *testing.T) {
		before := src.current()
		src.expire()
		if got := sdkPayload(t, s, "count_memories", nil)["count"]; got != 1.0 {
			t.Errorf("count after refresh = %v, want 1", got)
		}
		after := src.current()
		if after.AccessToken == before.AccessToken || after.RefreshToken == before.RefreshToken || after.RefreshToken == "" {
			t.Errorf("refresh did not rotate: access changed %v, refresh changed %v",
				after.AccessToken != before.AccessToken, after.RefreshToken != before.RefreshToken)
		}
		if n := o.logins.Load(); n != 1 {
			t.Errorf("authorizations = %d after a refresh, want still 1", n)
		}
		// Rotation leaves the earlier access token valid until it expires.
		if resp, body := postMCP(t, ctx, srv.URL, before.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.StatusCode != http.StatusOK {
			t.Errorf("earlier access token after rotation: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("revoke", func(t *testing.T) {
		tok := src.current()
		resp, body := postForm(t, ctx, srv.Issuer+"/oauth/revoke", url.Values{"token": {tok.RefreshToken}, "client_id": {src.cfg.ClientID}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("revoke: %d %s", resp.StatusCode, body)
		}
		resp, body = postMCP(t, ctx, srv.URL, tok.AccessToken, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`) {
			t.Errorf("unexpired access token after revocation: %d %q %s, want 401 invalid_token",
				resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		resp, body = postForm(t, ctx, srv.Issuer+"/oauth/token", url.Values{"grant_type": {"refresh_token"},
			"refresh_token": {tok.RefreshToken}, "client_id": {src.cfg.ClientID}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"invalid_grant"`) {
			t.Errorf("refresh with the revoked token: %d %s, want 400 invalid_grant", resp.StatusCode, body)
		}
		// The SDK meets the 401 and asks the owner again (whose browser is still signed in, so
		// only consent) under a newly registered client, then retries. Its session speaks
		// 2026-07-28, which has no protocol sessions, so the retry is served under the new
		// token. (A legacy session stays bound to the client that started it, SECURITY.md
		// MT-03: session_test.go.)
		if v := s.InitializeResult().ProtocolVersion; v != ownmcp.ModernProtocolVersion {
			t.Fatalf("the SDK session speaks %s, want %s", v, ownmcp.ModernProtocolVersion)
		}
		if got := sdkPayload(t, s, "count_memories", nil)["count"]; got != 1.0 {
			t.Errorf("count after re-authorization = %v, want 1", got)
		}
		if n := o.logins.Load(); n != 2 {
			t.Errorf("authorizations = %d, want 2 (the revoked token made the SDK ask again)", n)
		}
	})

	logs := srv.logs.String()
	if !strings.Contains(logs, "client authorized") {
		t.Errorf("the server did not log the authorization:\n%s", logs)
	}
	secrets := []string{testPassword}
	if tok := o.source.Load().current(); tok != nil {
		secrets = append(secrets, tok.AccessToken, tok.RefreshToken)
	}
	for _, c := range o.browser.jar.Cookies(mustParseURL(t, srv.Issuer)) {
		secrets = append(secrets, c.Value)
	}
	for _, secret := range secrets {
		if secret != "" && strings.Contains(logs, secret) {
			t.Errorf("the server log holds a secret (RS-14):\n%s", logs)
		}
	}
}

// TestOAuthSDK_ReadScope: a client that asks only for memories:read sees only the read-only
// tools, and a write call with its token is refused with 403 insufficient_scope and a JSON-RPC
// error -32003 (RS-13).
func TestOAuthSDK_ReadScope(t *testing.T) {
	srv := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newSDKOAuth(t, policy.ScopeRead)
	s := connectOAuthSDK(t, ctx, srv, o)

	want := readOnlyTools(MustOpen(t, testConfig(t, nil)))
	if got := sdkToolNames(t, ctx, s); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want the read-only %v", got, want)
	}
	if slices.Contains(want, "remember") || !slices.Contains(want, "recall") {
		t.Fatalf("read-only tools %v: remember must not be one, recall must", want)
	}
	sdkPayload(t, s, "recall", map[string]any{"query": "anything"})

	ts, err := o.handler.TokenSource(ctx)
	if err != nil || ts == nil {
		t.Fatalf("token source: %v", err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	if got := tok.Extra("scope"); got != policy.ScopeRead {
		t.Errorf("granted scope = %v, want %s", got, policy.ScopeRead)
	}
	resp, body := postMCP(t, ctx, srv.URL, tok.AccessToken,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"remember","arguments":{"text":"should not be stored"}}}`)
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("remember with a read token: status %d %s, want 403", resp.StatusCode, body)
	}
	if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, `error="insufficient_scope"`) ||
		!strings.Contains(h, `resource_metadata="`+srv.Issuer+`/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("WWW-Authenticate = %q", h)
	}
	var env struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code int `json:"code"`
			Data struct {
				Error string `json:"error"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	if env.Error.Code != ownmcp.CodeAuthorization || env.Error.Data.Error != "insufficient_scope" || string(env.ID) != "7" {
		t.Errorf("body = %s, want id 7, code %d, data.error insufficient_scope", body, ownmcp.CodeAuthorization)
	}
	if got := sdkPayload(t, s, "count_memories", nil)["count"]; got != 0.0 {
		t.Errorf("count = %v after a refused write, want 0", got)
	}
}

// readOnlyTools are the tools a memories:read token sees, sorted.
func readOnlyTools(a *App) []string {
	var names []string
	for _, t := range a.tools.Listed() {
		if func() bool { s, _ := a.tools.Scope(t.Name); return s == policy.ScopeRead }() {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}

func mustParseURL(tb testing.TB, s string) *url.URL {
	tb.Helper()
	u, err := url.Parse(s)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
