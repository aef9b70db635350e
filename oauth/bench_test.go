package oauth

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/oauth/grant"
	"github.com/ownsona/ownsona/oauth/policy"
	"github.com/ownsona/ownsona/oauth/token"
)

// BenchmarkAuthenticate is the cost the bearer check adds to every /mcp request: an EdDSA access
// token (signature, claims, grant lookup in memory), a personal access token (a hash lookup in
// the file), and, as the baseline of the same run, a request with no token at all.
func BenchmarkAuthenticate(b *testing.B) {
	f := MustOpenServer(b)
	const redirect = "https://claude.ai/api/mcp/auth_callback"
	verifier := strings.Repeat("v", 43)
	g, err := f.s.Grants().RegisterClient(grant.ClientMeta{Name: "bench", RedirectURIs: []string{redirect}})
	if err != nil {
		b.Fatal(err)
	}
	code, err := f.s.Grants().IssueCode(grant.CodeRequest{ClientID: g.ID, RedirectURI: redirect, Challenge: policy.ChallengeS256(verifier),
		Resource: f.s.ep.Resource, Scope: policy.DefaultScopes, Subject: "owner"})
	if err != nil {
		b.Fatal(err)
	}
	t, err := f.s.Grants().ExchangeCode(code, g.ID, "", verifier, "")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	at, err := f.s.Keys().Mint(token.Claims{Issuer: f.s.ep.Issuer, Subject: "owner", Audience: f.s.ep.Resource,
		ClientID: g.ID, Scope: t.Scope, GrantID: t.GrantID, IssuedAt: now, Expiry: now.Add(time.Hour)})
	if err != nil {
		b.Fatal(err)
	}
	pat, _, err := f.s.PATs().Create("bench", policy.DefaultScopes, 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct{ name, header string }{
		{"none", ""},
		{"access-token", "Bearer " + at},
		{"pat", "Bearer " + pat},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("POST", "/mcp", nil)
			if bc.header != "" {
				r.Header.Set("Authorization", bc.header)
			}
			for b.Loop() {
				p, ref := f.s.Authenticate(r)
				if (p == nil) == (bc.header != "") {
					b.Fatalf("principal %v, refusal %v", p, ref)
				}
			}
		})
	}
}
