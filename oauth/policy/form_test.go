package policy

import (
	"maps"
	"net/url"
	"strings"
	"testing"
)

func TestParseForm_Table(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		known   []string
		want    map[string]string
		wantErr string
	}{
		{
			name:  "authorize query",
			raw:   "response_type=code&client_id=abc&redirect_uri=https%3A%2F%2Fclaude.ai%2Fapi%2Fmcp%2Fauth_callback&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&state=xyz&scope=memories%3Aread+memories%3Awrite&resource=https%3A%2F%2Fmem.example%2Fmcp",
			known: AuthorizeParams,
			want: map[string]string{
				"response_type": "code", "client_id": "abc",
				"redirect_uri":   "https://claude.ai/api/mcp/auth_callback",
				"code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256",
				"state": "xyz", "scope": "memories:read memories:write", "resource": "https://mem.example/mcp",
			},
		},
		{name: "token body", raw: "grant_type=authorization_code&code=c1&code_verifier=v&client_id=abc", known: TokenParams,
			want: map[string]string{"grant_type": "authorization_code", "code": "c1", "code_verifier": "v", "client_id": "abc"}},
		{name: "empty", raw: "", known: TokenParams, want: map[string]string{}},
		{name: "empty value is absent", raw: "client_id=abc&scope=&state", known: AuthorizeParams, want: map[string]string{"client_id": "abc"}},
		{name: "unknown ignored", raw: "client_id=abc&foo=1&foo=2&nonce=n", known: AuthorizeParams, want: map[string]string{"client_id": "abc"}},
		{name: "stray ampersands", raw: "&&client_id=abc&&", known: AuthorizeParams, want: map[string]string{"client_id": "abc"}},
		{name: "semicolon is data", raw: "state=a;b&client_id=c", known: AuthorizeParams, want: map[string]string{"state": "a;b", "client_id": "c"}},
		{name: "equals in value", raw: "state=a=b", known: AuthorizeParams, want: map[string]string{"state": "a=b"}},
		{name: "plus is space", raw: "scope=memories:read+memories:write", known: AuthorizeParams, want: map[string]string{"scope": "memories:read memories:write"}},
		{name: "name case matters", raw: "Client_ID=x&client_id=y", known: AuthorizeParams, want: map[string]string{"client_id": "y"}},

		{name: "duplicate client_id", raw: "client_id=a&client_id=b", known: AuthorizeParams, wantErr: "client_id"},
		{name: "duplicate redirect_uri", raw: "redirect_uri=https%3A%2F%2Fa%2Fcb&redirect_uri=https%3A%2F%2Fevil%2Fcb", known: AuthorizeParams, wantErr: "redirect_uri"},
		{name: "duplicate code_challenge", raw: "code_challenge=a&code_challenge=b", known: AuthorizeParams, wantErr: "code_challenge"},
		{name: "duplicate state", raw: "state=a&state=a", known: AuthorizeParams, wantErr: "state"},
		{name: "duplicate resource", raw: "resource=https%3A%2F%2Fa&resource=https%3A%2F%2Fb", known: AuthorizeParams, wantErr: "resource"},
		{name: "duplicate with empty value", raw: "state=&state=x", known: AuthorizeParams, wantErr: "state"},
		{name: "duplicate encoded name", raw: "client_id=a&client%5Fid=b", known: AuthorizeParams, wantErr: "client_id"},
		{name: "duplicate grant_type", raw: "grant_type=refresh_token&grant_type=authorization_code", known: TokenParams, wantErr: "grant_type"},
		{name: "duplicate code", raw: "code=a&code=b", known: TokenParams, wantErr: "code"},
		{name: "bad escape in value", raw: "client_id=%zz", known: AuthorizeParams, wantErr: "percent-encoding"},
		{name: "bad escape in unknown", raw: "client_id=a&x=%4", known: AuthorizeParams, wantErr: "percent-encoding"},
		{name: "bad escape in name", raw: "%g1=a", known: AuthorizeParams, wantErr: "percent-encoding"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseForm(tt.raw, tt.known)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseForm(%q) = %v, %v; want error naming %q", tt.raw, got, err, tt.wantErr)
				}
				if c := CodeOf(err); c != CodeInvalidRequest {
					t.Errorf("code = %q, want %q", c, CodeInvalidRequest)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseForm(%q): %v", tt.raw, err)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("ParseForm(%q) = %v, want %v", tt.raw, got, tt.want)
			}
		})
	}
}

func FuzzParseForm(f *testing.F) {
	for _, s := range []string{
		"response_type=code&client_id=abc&redirect_uri=http%3A%2F%2F127.0.0.1%3A3335%2Fcallback&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256&state=s&resource=https%3A%2F%2Fmem.example%2Fmcp",
		"grant_type=authorization_code&code=c&code_verifier=dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk&client_id=abc&redirect_uri=x",
		"client_id=a&client%5fid=b",
		"state=&state=",
		"a=%zz;b=1",
	} {
		f.Add(s)
	}
	known := append(append([]string{}, AuthorizeParams...), TokenParams...)
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseForm(raw, known)
		// The reference: the standard parser, splitting on '&' only.
		counts := map[string]int{}
		for _, pair := range strings.Split(raw, "&") {
			if pair == "" {
				continue
			}
			k, _, _ := strings.Cut(pair, "=")
			if name, err := url.QueryUnescape(k); err == nil {
				counts[name]++
			}
		}
		if err != nil {
			if c := CodeOf(err); c != CodeInvalidRequest {
				t.Fatalf("ParseForm(%q) error code %q", raw, c)
			}
			return
		}
		for _, k := range known {
			if counts[k] > 1 {
				t.Fatalf("ParseForm(%q) accepted %d copies of %s", raw, counts[k], k)
			}
		}
		for k, v := range got {
			if v == "" {
				t.Fatalf("ParseForm(%q) kept empty %s", raw, k)
			}
			if !contains(known, k) {
				t.Fatalf("ParseForm(%q) kept unknown %q", raw, k)
			}
		}
	})
}

func TestDisplayable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"Claude", 80, "Claude"},
		{"  Claude  ", 80, "Claude"},
		{"Claude\u202egnp.exe", 80, "Claude\ufffdgnp.exe"},
		{"a\x1b]0;x\x07b", 80, "a\ufffd]0;x\ufffdb"},
		{"zero\u200bwidth", 80, "zero\ufffdwidth"},
		{"line\u2028break", 80, "line\ufffdbreak"},
		{"bad \xff utf-8", 80, "bad \ufffd utf-8"},
		{"abcdef", 3, "abc…"},
		{"abc", 3, "abc"},
	} {
		if got := Displayable(tc.in, tc.max); got != tc.want {
			t.Errorf("Displayable(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}
