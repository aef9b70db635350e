package grant

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

func TestStore_IssueCode(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c := MustRegister(t, s)
	_, challenge := pkce()
	ok := CodeRequest{ClientID: c.ID, RedirectURI: testRedirect, Challenge: challenge, Resource: testResource, Subject: "owner"}
	tests := []struct {
		name    string
		edit    func(*CodeRequest)
		wantErr error // nil: any error
	}{
		{"unknown client", func(r *CodeRequest) { r.ClientID = "cl_unknown" }, ErrInvalidClient},
		{"no challenge", func(r *CodeRequest) { r.Challenge = "" }, nil},
		{"no redirect URI", func(r *CodeRequest) { r.RedirectURI = "" }, nil},
		{"no subject", func(r *CodeRequest) { r.Subject = "" }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := ok
			tt.edit(&req)
			code, err := s.IssueCode(req)
			if err == nil || tt.wantErr != nil && err != tt.wantErr {
				t.Fatalf("IssueCode = %q, %v; want error %v", code, err, tt.wantErr)
			}
		})
	}
}

// TestStore_ExchangeCode runs on the real clock: it never waits, and a code lives a minute.
func TestStore_ExchangeCode(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c, other := MustRegister(t, s), MustRegister(t, s)

	t.Run("success", func(t *testing.T) {
		code, verifier := MustCode(t, s, c.ID)
		tok, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource)
		if err != nil {
			t.Fatal(err)
		}
		if tok.ClientID != c.ID || tok.Subject != "owner" || tok.Resource != testResource ||
			!slices.Equal(tok.Scope, []string{scopeRead, scopeWrite}) ||
			len(tok.GrantID) == 0 || len(tok.RefreshToken) == 0 || tok.RefreshToken[:4] != "osr_" {
			t.Errorf("tokens = %+v", tok)
		}
		if !s.GrantActive(tok.GrantID) {
			t.Error("new grant not active")
		}
	})

	// Each bad exchange is invalid_grant (or invalid_client) and leaves the
	// code usable by the rightful exchange (AS-07, AS-09).
	bad := []struct {
		name                                         string
		code, clientID, redirectURI, verifier, resrc string // "" code/verifier: the right one
		want                                         error
	}{
		{name: "another client", clientID: other.ID, redirectURI: testRedirect, resrc: testResource, want: ErrInvalidGrant},
		{name: "unknown client", clientID: "cl_unknown", redirectURI: testRedirect, resrc: testResource, want: ErrInvalidClient},
		{name: "empty client", clientID: "", redirectURI: testRedirect, resrc: testResource, want: ErrInvalidClient},
		{name: "another redirect URI", clientID: c.ID, redirectURI: "https://evil.example/cb", resrc: testResource, want: ErrInvalidGrant},
		{name: "redirect URI with a trailing slash", clientID: c.ID, redirectURI: testRedirect + "/", resrc: testResource, want: ErrInvalidGrant},
		{name: "another resource", clientID: c.ID, redirectURI: testRedirect, resrc: "https://other.example/mcp", want: ErrInvalidGrant},
		{name: "wrong verifier", clientID: c.ID, redirectURI: testRedirect, verifier: "wrong-verifier-wrong-verifier-wrong-verifier", resrc: testResource, want: ErrInvalidGrant},
		{name: "verifier is the challenge", clientID: c.ID, redirectURI: testRedirect, verifier: "challenge", resrc: testResource, want: ErrInvalidGrant},
		{name: "no verifier", clientID: c.ID, redirectURI: testRedirect, verifier: "-", resrc: testResource, want: ErrInvalidGrant},
		{name: "unknown code", code: "osc_unknown", clientID: c.ID, redirectURI: testRedirect, resrc: testResource, want: ErrInvalidGrant},
		{name: "empty code", code: "-", clientID: c.ID, redirectURI: testRedirect, resrc: testResource, want: ErrInvalidGrant},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			verifier, challenge := pkce()
			code, err := s.IssueCode(CodeRequest{ClientID: c.ID, RedirectURI: testRedirect, Challenge: challenge,
				Resource: testResource, Scope: []string{scopeRead}, Subject: "owner"})
			if err != nil {
				t.Fatal(err)
			}
			sentCode, sentVerifier := code, verifier
			switch tt.code {
			case "":
			case "-":
				sentCode = ""
			default:
				sentCode = tt.code
			}
			switch tt.verifier {
			case "":
			case "-":
				sentVerifier = ""
			case "challenge":
				sentVerifier = challenge
			default:
				sentVerifier = tt.verifier
			}
			if _, err := s.ExchangeCode(sentCode, tt.clientID, tt.redirectURI, sentVerifier, tt.resrc); err != tt.want {
				t.Fatalf("bad exchange: %v, want %v", err, tt.want)
			}
			if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != nil {
				t.Fatalf("rightful exchange after a bad one: %v", err)
			}
		})
	}

	t.Run("redirect URI and resource may be omitted", func(t *testing.T) {
		code, verifier := MustCode(t, s, c.ID)
		tok, err := s.ExchangeCode(code, c.ID, "", verifier, "")
		if err != nil {
			t.Fatal(err)
		}
		if tok.Resource != testResource {
			t.Errorf("resource = %q, want the code's", tok.Resource)
		}
	})
	checkInvariants(t, s)
}

// TestStore_ExchangeCode_TTL: a code lives Config.CodeTTL (AS-08).
func TestStore_ExchangeCode_TTL(t *testing.T) {
	for _, ttl := range []time.Duration{0, 2 * time.Minute, MaxCodeTTL} {
		want := ttl
		if want == 0 {
			want = DefaultCodeTTL
		}
		t.Run(want.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := MustOpenStore(t, Config{CodeTTL: ttl})
				c := MustRegister(t, s)

				code, verifier := MustCode(t, s, c.ID)
				time.Sleep(want - time.Second)
				if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != nil {
					t.Fatalf("at TTL-1s: %v", err)
				}

				code, verifier = MustCode(t, s, c.ID)
				time.Sleep(want + time.Second)
				if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != ErrInvalidGrant {
					t.Fatalf("at TTL+1s: %v, want ErrInvalidGrant", err)
				}
			})
		})
	}
}

// TestStore_ExchangeCode_Reuse: a second exchange fails and revokes what the
// first issued, immediately or 30s later (AS-06); a replay that fails a
// binding check revokes nothing (AS-07).
func TestStore_ExchangeCode_Reuse(t *testing.T) {
	for _, after := range []time.Duration{0, 30 * time.Second, 2 * time.Hour} {
		t.Run("after "+after.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := MustOpenStore(t, Config{})
				c, other := MustRegister(t, s), MustRegister(t, s)
				code, verifier := MustCode(t, s, c.ID)
				tok, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource)
				if err != nil {
					t.Fatal(err)
				}
				time.Sleep(after)

				// Invalid replays: no effect.
				if _, err := s.ExchangeCode(code, c.ID, testRedirect, "wrong-verifier-wrong-verifier-wrong-verifier", testResource); err != ErrInvalidGrant {
					t.Fatalf("replay with a wrong verifier: %v", err)
				}
				if _, err := s.ExchangeCode(code, other.ID, testRedirect, verifier, testResource); err != ErrInvalidGrant {
					t.Fatalf("replay by another client: %v", err)
				}
				if !s.GrantActive(tok.GrantID) {
					t.Fatal("an invalid replay revoked the grant")
				}

				// A full replay: invalid_grant, and the first exchange's tokens die.
				if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != ErrInvalidGrant {
					t.Fatalf("second exchange: %v, want ErrInvalidGrant", err)
				}
				if s.GrantActive(tok.GrantID) {
					t.Error("first exchange's grant still active")
				}
				if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
					t.Errorf("first exchange's refresh token: %v, want ErrInvalidGrant", err)
				}
				// A third one changes nothing more.
				if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != ErrInvalidGrant {
					t.Fatalf("third exchange: %v", err)
				}
				ev, err := s.Events(0)
				if err != nil {
					t.Fatal(err)
				}
				if len(ev) != 1 || ev[0].Kind != EventCodeReuse || ev[0].GrantID != tok.GrantID || ev[0].ClientID != c.ID {
					t.Errorf("events = %+v", ev)
				}
				checkInvariants(t, s)
			})
		})
	}
}
