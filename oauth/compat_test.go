package oauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/ownsona/ownsona/oauth/policy"
)

// TestServer_Compat is the komcp compatibility mode of issue 27, item 7, through the real
// endpoints: each scenario runs with the mode off (the default surface, unchanged) and on
// (switched at run time with SetCompat), for clients written for KOmcp (seed 003); each in a
// synctest bubble, where the owner's consent delay passes at once.
func TestServer_Compat(t *testing.T) {
	t.Parallel()
	komcp := "mcp:tools:read mcp:tools:execute kura:notes:search"
	getJSON := func(t *testing.T, f *fixture, path string) map[string]any {
		t.Helper()
		w := f.serve(httptest.NewRequest(http.MethodGet, path, nil))
		var m map[string]any
		if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &m) != nil {
			t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
		}
		return m
	}
	scopesOf := func(m map[string]any) string {
		b, _ := json.Marshal(m["scopes_supported"])
		return string(b)
	}
	for _, sc := range []struct {
		name string
		run  func(t *testing.T, f *fixture, on bool)
	}{
		{"scopes_supported of the metadata", func(t *testing.T, f *fixture, on bool) {
			as, pr := `["memories:read","memories:write","offline_access"]`, `["memories:read","memories:write"]`
			if on {
				as = `["memories:read","memories:write","offline_access","mcp:tools:read","mcp:tools:execute","kura:notes:search"]`
				pr = `["memories:read","memories:write","mcp:tools:read","mcp:tools:execute","kura:notes:search"]`
			}
			if got := scopesOf(getJSON(t, f, "/.well-known/oauth-authorization-server")); got != as {
				t.Errorf("authorization server scopes_supported = %s, want %s", got, as)
			}
			for _, p := range []string{"", "/mcp", "/api/mcp", "/mcp/http"} {
				if got := scopesOf(getJSON(t, f, "/.well-known/oauth-protected-resource"+p)); got != pr {
					t.Errorf("protected resource%s scopes_supported = %s, want %s", p, got, pr)
				}
			}
		}},
		{"KOmcp's scopes at /authorize grant memories:read", func(t *testing.T, f *fixture, on bool) {
			client := f.MustRegister(t, "KOmcp client", testRedirect)
			q := authQuery(client, testRedirect, policy.ChallengeS256(newVerifier()), "scope", komcp)
			if !on {
				w := f.browser().do(http.MethodGet, "/oauth/authorize?"+q, nil, nil)
				if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "komcp compatibility mode") {
					t.Errorf("off: %d %s, want 400 naming the mode", w.Code, w.Body)
				}
				return
			}
			a := f.MustAuthorize(t, "scope", komcp)
			tk := f.MustExchange(t, a)
			if tk.Body["scope"] != policy.ScopeRead {
				t.Errorf("granted scope = %v, want %s", tk.Body["scope"], policy.ScopeRead)
			}
			if p := f.wantAuthorized(t, tk.AT); !slices.Equal(p.Scope, []string{policy.ScopeRead}) {
				t.Errorf("principal scope = %v", p.Scope)
			}
		}},
		{"a KOmcp scope narrows a refresh", func(t *testing.T, f *fixture, on bool) {
			a := f.MustAuthorize(t)
			tk := f.MustExchange(t, a)
			status, body := f.refresh(t, a.client, tk.RT, "scope", "kura:notes:search")
			if !on {
				wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidScope)
				return
			}
			if got := f.mustTokens(t, status, body); got.Body["scope"] != policy.ScopeRead {
				t.Errorf("scope = %v, want %s", got.Body["scope"], policy.ScopeRead)
			}
		}},
		{"the bare origin as resource", func(t *testing.T, f *fixture, on bool) {
			client := f.MustRegister(t, "KOmcp client", testRedirect)
			for _, origin := range []string{testPublicURL, testPublicURL + "/", "HTTPS://MEM.EXAMPLE.COM"} {
				q := authQuery(client, testRedirect, policy.ChallengeS256(newVerifier()), "resource", origin)
				if !on {
					w := f.browser().do(http.MethodGet, "/oauth/authorize?"+q, nil, nil)
					if w.Code != http.StatusBadRequest || w.Header().Get("Location") != "" {
						t.Errorf("off, %s at /authorize: %d, want 400", origin, w.Code)
					}
					a := f.MustAuthorize(t)
					status, body := f.exchange(t, a, "resource", origin)
					wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidTarget)
					continue
				}
				a := f.MustAuthorize(t, "resource", origin)
				tk := f.MustExchange(t, a, "resource", origin)
				if aud := jwtPart(t, tk.AT, 1)["aud"]; aud != testResource {
					t.Errorf("aud = %v, want the canonical %s", aud, testResource)
				}
				f.wantAuthorized(t, f.MustRefresh(t, a.client, tk.RT, "resource", origin).AT)
			}
		}},
		{"another origin is never a resource", func(t *testing.T, f *fixture, on bool) {
			a := f.MustAuthorize(t)
			status, body := f.exchange(t, a, "resource", "https://other.example")
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidTarget)
		}},
		{"registration with KOmcp's scopes", func(t *testing.T, f *fixture, on bool) {
			body, _ := json.Marshal(map[string]any{"client_name": "KOmcp", "redirect_uris": []string{testRedirect}, "scope": komcp})
			if w := f.registerRaw(string(body), ""); w.Code != http.StatusCreated {
				t.Errorf("register: %d %s", w.Code, w.Body)
			}
		}},
	} {
		for _, on := range []bool{false, true} {
			name := sc.name + "/off"
			if on {
				name = sc.name + "/on"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					f := MustOpenServer(t)
					f.s.SetCompat(Compat{KOmcp: on})
					if got := f.s.Compat(); got.KOmcp != on {
						t.Fatalf("Compat() = %+v", got)
					}
					sc.run(t, f, on)
				})
			})
		}
	}
	t.Run("switched off again, the default surface is back", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			f := MustOpenServer(t, func(c *Config) { c.Compat = Compat{KOmcp: true} })
			before := getJSON(t, MustOpenServer(t), "/.well-known/oauth-protected-resource")
			if scopesOf(getJSON(t, f, "/.well-known/oauth-protected-resource")) == scopesOf(before) {
				t.Fatal("Config.Compat did not switch the mode on at start")
			}
			f.s.SetCompat(Compat{})
			after := getJSON(t, f, "/.well-known/oauth-protected-resource")
			if scopesOf(after) != scopesOf(before) {
				t.Errorf("scopes_supported = %s after switching off, want %s", scopesOf(after), scopesOf(before))
			}
			a := f.MustAuthorize(t)
			status, body := f.exchange(t, a, "resource", testPublicURL)
			wantError(t, status, body, http.StatusBadRequest, policy.CodeInvalidTarget)
		})
	})
}
