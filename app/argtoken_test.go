package app

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/audit"
	"github.com/ownsona/ownsona/oauth/policy"
)

// These tests pin OWNSONA_ALLOW_ARGUMENT_TOKENS (DESIGN.md "token in arguments", seed 001): a
// tools/call without an Authorization header may carry its token as the argument access_token
// or accessToken, verified like a header token, removed before the tool's argument validation,
// never logged, and refused over plain HTTP from another machine. Off by default.

// argCall is a tools/call of name with args (a JSON object's members, without braces).
func argCall(id int, name, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{%s}}}`, id, name, args)
}

// argRequest posts body to /mcp without an Authorization header, from remote (an address:port;
// loopback unless a test says otherwise), with extra header pairs.
func argRequest(h http.Handler, remote, body string, header ...string) *httptest.ResponseRecorder {
	req := newMCPRequest("/mcp", "application/json", body)
	req.RemoteAddr = remote
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

const loopbackPeer = "127.0.0.1:50000"

// wantToolOK checks a 200 whose tool result is not an error and returns its structured content.
func wantToolOK(tb testing.TB, rec *httptest.ResponseRecorder) map[string]any {
	tb.Helper()
	if rec.Code != http.StatusOK {
		tb.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	res, rerr, _ := rpcResponse(tb, rec.Body.Bytes())
	var tr toolResult
	if rerr != nil || json.Unmarshal(res, &tr) != nil || tr.IsError {
		tb.Fatalf("tool call failed: %s", rec.Body)
	}
	return tr.StructuredContent
}

// wantArgRefused checks a 401 with the discovery challenge, the OAuth error oauthErr ("" for
// none) in the challenge and the body, and a description containing why.
func wantArgRefused(tb testing.TB, rec *httptest.ResponseRecorder, oauthErr, why string) {
	tb.Helper()
	if rec.Code != http.StatusUnauthorized {
		tb.Fatalf("status %d, want 401: %s", rec.Code, rec.Body)
	}
	challenge := rec.Header().Get("WWW-Authenticate")
	if !strings.HasPrefix(challenge, `Bearer realm="ownsona", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource/mcp"`) ||
		(oauthErr != "") != strings.Contains(challenge, `error="`+oauthErr+`"`) {
		tb.Errorf("WWW-Authenticate = %s, want error %q", challenge, oauthErr)
	}
	_, rerr, _ := rpcResponse(tb, rec.Body.Bytes())
	if rerr == nil || rerr.Code != -32600 || !strings.Contains(rerr.Data.ErrorDescription, why) {
		tb.Errorf("body %s, want -32600 and a description with %q", rec.Body, why)
	}
}

// TestArgumentTokens_Off: by default a token in the arguments counts for nothing; the call is
// refused as one without a header, with a description that names the setting.
func TestArgumentTokens_Off(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	h := a.Handler()
	pat := testPAT(t, a)
	for _, key := range []string{"access_token", "accessToken"} {
		rec := argRequest(h, loopbackPeer, argCall(1, "count_memories", fmt.Sprintf(`%q:%q`, key, pat)))
		wantArgRefused(t, rec, "", "OWNSONA_ALLOW_ARGUMENT_TOKENS=1")
		if strings.Contains(rec.Body.String(), pat) {
			t.Errorf("the refusal echoes the token")
		}
	}
}

// TestArgumentTokens_On covers each rule with the setting on.
func TestArgumentTokens_On(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.AllowArgumentTokens = true
	cfg.TrustedProxies = []string{"10.0.0.0/8"}
	a := MustOpen(t, cfg)
	h := a.Handler()
	pat := testPAT(t, a)
	reader := testPAT(t, a, policy.ScopeRead)
	oauthTok := newOAuthClient(t, a, "argument client").login("")

	t.Run("access_token, stripped before validation", func(t *testing.T) {
		// remember's schema says additionalProperties: false: it accepts the call only because
		// the token is gone by then.
		sc := wantToolOK(t, argRequest(h, loopbackPeer, argCall(1, "remember", `"text":"argument tokens work","access_token":"`+pat+`"`)))
		got := wantToolOK(t, argRequest(h, loopbackPeer, argCall(2, "get_memory", fmt.Sprintf(`"id":%v,"access_token":%q`, sc["memory_id"], pat))))
		mem, _ := got["memory"].(map[string]any)
		if mem == nil || !strings.HasPrefix(fmt.Sprint(mem["source_client"]), "pat:") || mem["text"] != "argument tokens work" {
			t.Errorf("get_memory: %v, want the memory, written by the PAT", got)
		}
	})
	t.Run("accessToken", func(t *testing.T) {
		wantToolOK(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"accessToken":"`+pat+`"`)))
	})
	t.Run("an OAuth access token", func(t *testing.T) {
		wantToolOK(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"access_token":"`+oauthTok.AccessToken+`"`)))
	})
	t.Run("access_token before accessToken", func(t *testing.T) {
		wantToolOK(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"accessToken":"osk_wrong","access_token":"`+pat+`"`)))
		wantArgRefused(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"access_token":"osk_wrong","accessToken":"`+pat+`"`)),
			"invalid_token", "personal access token")
	})
	t.Run("the header before both", func(t *testing.T) {
		rec := mcpRequest(h, "Bearer "+pat, argCall(1, "count_memories", `"access_token":"osk_wrong"`))
		wantToolOK(t, rec)
	})
	t.Run("a bad token", func(t *testing.T) {
		for _, tok := range []string{"osk_" + strings.Repeat("A", 43), "not a token", oauthTok.RefreshToken, strings.Repeat("x", 9000)} {
			wantArgRefused(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"access_token":"`+tok+`"`)), "invalid_token", "")
		}
	})
	t.Run("malformed", func(t *testing.T) {
		for _, args := range []string{`"access_token":42`, `"access_token":""`, `"access_token":"` + pat + `","access_token":"` + pat + `"`} {
			wantArgRefused(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", args)), "invalid_request", "non-empty string and appear once")
		}
	})
	t.Run("scopes as for the header", func(t *testing.T) {
		rec := argRequest(h, loopbackPeer, argCall(7, "remember", `"text":"not allowed","access_token":"`+reader+`"`))
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Header().Get("WWW-Authenticate"), `error="insufficient_scope"`) {
			t.Errorf("read token calling remember: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		wantToolOK(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", `"access_token":"`+reader+`"`)))
	})
	t.Run("only tools/call", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"arguments":{"access_token":"` + pat + `"}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"access_token":"` + pat + `"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"count_memories","arguments":{},"access_token":"` + pat + `"}}`,
		} {
			wantArgRefused(t, argRequest(h, loopbackPeer, body), "", "authorization required")
		}
	})
	t.Run("batches", func(t *testing.T) {
		legacy := []string{"MCP-Protocol-Version", ""}
		ok := "[" + argCall(1, "count_memories", `"access_token":"`+pat+`"`) + "," + argCall(2, "list_tags", `"accessToken":"`+pat+`"`) + "]"
		rec := argRequest(h, loopbackPeer, ok, legacy...)
		var out []struct {
			Result toolResult `json:"result"`
			Error  any        `json:"error"`
		}
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out) != 2 || out[0].Error != nil || out[1].Error != nil ||
			out[0].Result.IsError || out[1].Result.IsError {
			t.Errorf("a batch of tools/call with one token: %d %s", rec.Code, rec.Body)
		}
		for name, batch := range map[string]string{
			"a message without the token": "[" + argCall(1, "count_memories", `"access_token":"`+pat+`"`) + "," + argCall(2, "list_tags", "") + "]",
			"another method":              "[" + argCall(1, "count_memories", `"access_token":"`+pat+`"`) + `,{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`,
			"two tokens":                  "[" + argCall(1, "count_memories", `"access_token":"`+pat+`"`) + "," + argCall(2, "list_tags", `"access_token":"`+reader+`"`) + "]",
		} {
			t.Run(name, func(t *testing.T) {
				wantArgRefused(t, argRequest(h, loopbackPeer, batch, legacy...), "invalid_request", "every message must be")
			})
		}
	})
	t.Run("transport", func(t *testing.T) {
		call := argCall(1, "count_memories", `"access_token":"`+pat+`"`)
		for _, tc := range []struct {
			name, remote string
			tls          bool
			header       []string
			ok           bool
		}{
			{"loopback", "[::1]:4000", false, nil, true},
			{"plain HTTP from another machine", "192.0.2.10:4000", false, nil, false},
			{"TLS from another machine", "192.0.2.10:4000", true, nil, true},
			{"a trusted proxy that got https", "10.1.2.3:4000", false, []string{"X-Forwarded-Proto", "https", "X-Forwarded-For", "192.0.2.10"}, true},
			{"a trusted proxy that got http", "10.1.2.3:4000", false, []string{"X-Forwarded-Proto", "http", "X-Forwarded-For", "192.0.2.10"}, false},
			{"an untrusted peer claiming https", "192.0.2.10:4000", false, []string{"X-Forwarded-Proto", "https"}, false},
			{"a local proxy that got http", loopbackPeer, false, []string{"X-Forwarded-Proto", "http"}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := newMCPRequest("/mcp", "application/json", call)
				req.RemoteAddr = tc.remote
				if tc.tls {
					req.TLS = &tls.ConnectionState{}
				}
				for i := 0; i+1 < len(tc.header); i += 2 {
					req.Header.Set(tc.header[i], tc.header[i+1])
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if tc.ok {
					wantToolOK(t, rec)
				} else {
					wantArgRefused(t, rec, "invalid_request", "refused over plain HTTP from another machine")
				}
			})
		}
	})
	t.Run("no token stays 401", func(t *testing.T) {
		wantRefused(t, argRequest(h, loopbackPeer, msgToolsList), "")
		wantArgRefused(t, argRequest(h, loopbackPeer, argCall(1, "count_memories", "")), "", "authorization required")
	})
}

// TestArgumentTokens_RateLimited: an argument token draws on its client's rate limit, the same
// one as the token in a header.
func TestArgumentTokens_RateLimited(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.AllowArgumentTokens = true
	cfg.RateLimit, cfg.RateBurst = 60, 2
	a := MustOpen(t, cfg)
	h := a.Handler()
	pat := testPAT(t, a)
	call := argCall(1, "count_memories", `"access_token":"`+pat+`"`)
	wantToolOK(t, argRequest(h, loopbackPeer, call))
	if rec := mcpRequest(h, "Bearer "+pat, msgToolsList); rec.Code != http.StatusOK {
		t.Fatalf("header: %d", rec.Code)
	}
	rec := argRequest(h, loopbackPeer, call)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" {
		t.Errorf("third request of a burst of 2: %d %v", rec.Code, rec.Header())
	}
}

// TestArgumentTokens_NeverLogged covers RS-14 for argument tokens: at debug level, the logs, the
// audit log, the stored memories and every response of a run of accepted and refused calls
// hold no token, and the audit records who called.
func TestArgumentTokens_NeverLogged(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.AllowArgumentTokens = true
	cfg.LogLevel = "debug"
	var logs bytes.Buffer
	a, err := Open(cfg, &logs)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h := a.Handler()
	pat := testPAT(t, a)
	wrong := "osk_" + strings.Repeat("Z", 43)
	var responses strings.Builder
	for _, rec := range []*httptest.ResponseRecorder{
		argRequest(h, loopbackPeer, argCall(1, "remember", `"text":"the audit must not see the token","access_token":"`+pat+`"`)),
		argRequest(h, loopbackPeer, argCall(2, "recall", `"query":"audit","accessToken":"`+pat+`"`)),
		argRequest(h, loopbackPeer, argCall(3, "count_memories", `"access_token":"`+wrong+`"`)),
		argRequest(h, "192.0.2.10:4000", argCall(4, "count_memories", `"access_token":"`+pat+`"`)),
		argRequest(h, loopbackPeer, argCall(5, "count_memories", `"access_token":"`+pat+`","unknown":1`)), // the tool refuses
		argRequest(h, loopbackPeer, "["+argCall(6, "count_memories", `"access_token":"`+pat+`"`)+`,{"jsonrpc":"2.0","id":7,"method":"ping"}]`, "MCP-Protocol-Version", ""),
	} {
		responses.WriteString(rec.Body.String())
	}
	if err := a.audit.Flush(); err != nil {
		t.Fatal(err)
	}
	entries, _, err := a.audit.Query(audit.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	auditJSON, _ := json.Marshal(entries)
	var byClient bool
	for _, e := range entries {
		if e.Tool == "remember" && strings.HasPrefix(e.Client, "pat:") && e.Outcome == audit.OutcomeOK {
			byClient = true
		}
	}
	if !byClient {
		t.Errorf("the audit log does not show the PAT's remember: %s", auditJSON)
	}
	a.Close()
	file, err := os.ReadFile(cfg.DB)
	if err != nil {
		t.Fatal(err)
	}
	for name, hay := range map[string]string{"logs": logs.String(), "audit log": string(auditJSON), "responses": responses.String(), "database file": string(file)} {
		for _, secret := range []string{pat, strings.TrimPrefix(pat, "osk_"), wrong} {
			if strings.Contains(hay, secret) {
				t.Errorf("the %s hold a token", name)
			}
		}
	}
	if !strings.Contains(logs.String(), "mcp request refused") {
		t.Errorf("the refusals were not logged:\n%s", logs.String())
	}
}

// TestConfig_AllowArgumentTokens: the setting is off by default and reads 1/0 from the
// environment and the flag (alone, it means on).
func TestConfig_AllowArgumentTokens(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "OWNSONA_ALLOW_ARGUMENT_TOKENS" {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		name string
		env  string
		args []string
		want bool
		bad  bool
	}{
		{"default", "", nil, false, false},
		{"env 1", "1", nil, true, false},
		{"env 0", "0", nil, false, false},
		{"env true", "true", nil, true, false},
		{"env garbage", "maybe", nil, false, true},
		{"flag alone", "", []string{"--allow-argument-tokens"}, true, false},
		{"flag=0 over env 1", "1", []string{"--allow-argument-tokens=0"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := loadConfig("serve", tc.args, env(tc.env), nil)
			if (err != nil) != tc.bad || (err == nil && cfg.AllowArgumentTokens != tc.want) {
				t.Errorf("AllowArgumentTokens = %v, err %v; want %v (error %v)", cfg.AllowArgumentTokens, err, tc.want, tc.bad)
			}
			if tc.bad && !strings.Contains(fmt.Sprint(err), "OWNSONA_ALLOW_ARGUMENT_TOKENS") {
				t.Errorf("the error does not name the setting: %v", err)
			}
		})
	}
}
