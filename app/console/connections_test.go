package console_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/oauth"
	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/policy"
)

var newTokenRE = regexp.MustCompile(`id="new-token" class="mono" readonly value="(osk_[^"]+)"`)

// TestConsole_Tokens: a token is created only with the password typed again, shown once, works,
// and stops working when revoked.
func TestConsole_Tokens(t *testing.T) {
	f := MustOpen(t)
	b := f.signedIn(t)
	create := url.Values{"name": {"backup-script"}, "scope": {"write"}, "expires": {"30d"}}

	body := b.mustPost(t, "/console/connections/tokens", create)
	wantContains(t, "creating without the password", body, "No token created: type your password to confirm it is you.")
	form := url.Values{"password": {"not it"}}
	for k, v := range create {
		form[k] = v
	}
	body = b.mustPost(t, "/console/connections/tokens", form)
	wantContains(t, "creating with a wrong password", body, "No token created: that is not your password.")
	if pats, _ := f.auth.PATs().List(); len(pats) != 0 {
		t.Fatalf("tokens were created without the password: %v", pats)
	}

	form.Set("password", testPassword)
	body = b.mustPost(t, "/console/connections/tokens", form)
	m := newTokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no new token on the page after creating one:\n%s", body)
	}
	wantContains(t, "the new token", body, "this is the only time it is shown", `data-copy="new-token"`, testOrigin+"/mcp", "read and write memories")
	pat, err := f.auth.PATs().Lookup(m[1])
	if err != nil || pat.Name != "backup-script" || pat.ExpiresAt == nil || strings.Join(pat.Scope, " ") != "memories:read memories:write" {
		t.Fatalf("the token shown: %+v, %v", pat, err)
	}
	if again := b.page(t, "/console/connections"); strings.Contains(again, m[1]) {
		t.Error("the token was shown a second time")
	}
	body = b.mustPost(t, "/console/connections/tokens", form)
	wantContains(t, "a second token of the same name", body, "a token with that name exists already")

	body = b.mustPost(t, "/console/connections/tokens/revoke", url.Values{"id": {pat.ID}})
	wantContains(t, "the page after revoking", body, "The token backup-script is revoked")
	if _, err := f.auth.PATs().Lookup(m[1]); !errors.Is(err, oauth.ErrPATNotFound) {
		t.Errorf("the revoked token still works: %v", err)
	}
	body = b.mustPost(t, "/console/connections/tokens/revoke", url.Values{"id": {pat.ID}})
	wantContains(t, "revoking twice", body, "Nothing revoked: no such token.")
	if got := f.entries(t); strings.Join(got, "; ") != "console/create_token error; console/create_token error; console/create_token ok; console/create_token error; console/revoke_token ok; console/revoke_token error" {
		t.Errorf("audit log: %v", got)
	}
}

// TestConsole_Clients: the OAuth clients are listed with where their access goes and the scopes
// and times of their grants, and revoking one ends its grants.
func TestConsole_Clients(t *testing.T) {
	f := MustOpen(t)
	const redirect = "https://claude.ai/api/mcp/auth_callback"
	c, err := f.auth.Grants().RegisterClient(grant.ClientMeta{Name: "Claude", RedirectURIs: []string{redirect, "cursor://anysphere.cursor-mcp/oauth/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.auth.Grants().RegisterClient(grant.ClientMeta{Name: "Idle", RedirectURIs: []string{redirect}}); err != nil {
		t.Fatal(err)
	}
	mustGrant(t, f.auth.Grants(), c.ID, redirect, policy.ScopeRead)
	mustGrant(t, f.auth.Grants(), c.ID, redirect, policy.ScopeRead, policy.ScopeWrite)
	grants, err := f.auth.Grants().Grants(c.ID)
	if err != nil || len(grants) != 2 {
		t.Fatalf("Grants = %v, %v", grants, err)
	}
	created := grants[0].CreatedAt.UTC().Format("2006-01-02 15:04 UTC")

	b := f.signedIn(t)
	body := b.page(t, "/console/connections")
	wantContains(t, "the connections page", body, "<bdi>Claude</bdi>", "<code>claude.ai</code>", "cursor: (an app on the device)", c.ID, `aria-label="Revoke access of Claude"`,
		"read and write memories <code>memories:read memories:write</code>", "Grants (2)",
		"<code>memories:read memories:write</code> approved "+created+", last refreshed "+created,
		"<code>memories:read</code> approved ")
	if got := strings.Count(body, "nothing now: no grant in force"); got != 1 {
		t.Errorf("%d clients shown as allowed nothing, want 1 (the one without a grant)", got)
	}

	body = b.mustPost(t, "/console/connections/clients/revoke", url.Values{"client_id": {c.ID}})
	wantContains(t, "the page after revoking", body, "Access of the client revoked (2 grants)", "Grants (2)", "<strong>revoked</strong>", "(client revoked)")
	if got := strings.Count(body, "nothing now: no grant in force"); got != 2 {
		t.Errorf("%d clients shown as allowed nothing after revoking, want 2", got)
	}
	body = b.mustPost(t, "/console/connections/clients/revoke", url.Values{"client_id": {"cl_nobody"}})
	wantContains(t, "revoking an unknown client", body, "Nothing revoked: no such client.")
}

// mustGrant authorizes client for scope as the owner would: a code with PKCE, exchanged.
func mustGrant(tb testing.TB, s *grant.Store, clientID, redirect string, scope ...string) {
	tb.Helper()
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	code, err := s.IssueCode(grant.CodeRequest{ClientID: clientID, RedirectURI: redirect, Challenge: base64.RawURLEncoding.EncodeToString(sum[:]),
		Resource: testOrigin + "/mcp", Scope: scope, Subject: "owner"})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.ExchangeCode(code, clientID, redirect, verifier, testOrigin+"/mcp"); err != nil {
		tb.Fatal(err)
	}
}

// TestConsole_LogsHoldNoSecrets: signing in, a wrong password, creating a token and signing out
// are logged, without the password, the token, a cookie or a CSRF token (SECURITY.md RS-14).
func TestConsole_LogsHoldNoSecrets(t *testing.T) {
	var logs strings.Builder
	f := MustOpen(t, func(o *options) { o.log = &logs })
	b := f.browser()
	tok := b.signInForm(t)
	b.do("POST", "/console/signin", url.Values{"csrf": {tok}, "username": {oauth.DefaultUsername}, "password": {"a wrong guess"}})
	b.signIn(t)
	body := b.mustPost(t, "/console/connections/tokens", url.Values{"name": {"logged"}, "scope": {"read"}, "expires": {"never"}, "password": {testPassword}})
	m := newTokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no token created")
	}
	secrets := []string{testPassword, "a wrong guess", m[1], b.csrf, tok}
	for _, c := range b.cookies {
		secrets = append(secrets, c.Value)
	}
	b.mustPost(t, "/console/signout", nil)
	out := logs.String()
	wantContains(t, "the log", out, "login failed", "console: signed in", "console: personal access token created", "console: signed out")
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the log holds a secret (%.8s…)", s)
		}
	}
}
