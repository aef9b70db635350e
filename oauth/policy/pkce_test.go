package policy

import (
	"strings"
	"testing"
)

// RFC 7636 Appendix B.
const (
	rfcVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	rfcChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

func TestChallengeS256_RFC7636AppendixB(t *testing.T) {
	if got, want := ChallengeS256(rfcVerifier), rfcChallenge; got != want {
		t.Errorf("ChallengeS256(%q) = %q, want %q", rfcVerifier, got, want)
	}
}

func TestValidateChallenge_Table(t *testing.T) {
	tests := []struct {
		name      string
		challenge string
		method    string
		wantErr   string
	}{
		{"rfc vector", rfcChallenge, "S256", ""},
		{"missing challenge", "", "S256", "code_challenge is required"},
		{"missing method", rfcChallenge, "", "code_challenge_method is required"},
		{"plain", rfcChallenge, "plain", "not supported"},
		{"lowercase s256", rfcChallenge, "s256", "not supported"},
		{"too short", rfcChallenge[:42], "S256", "43 characters"},
		{"too long", rfcChallenge + "A", "S256", "43 characters"},
		{"padded", rfcChallenge[:42] + "=", "S256", "43 characters"},
		{"std alphabet", strings.ReplaceAll(rfcChallenge, "-", "+"), "S256", "43 characters"},
		{"non-canonical last char", rfcChallenge[:42] + "N", "S256", "43 characters"},
		{"verifier as challenge", rfcVerifier, "plain", "not supported"},
		{"undefined", "undefined", "S256", "43 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateChallenge(tt.challenge, tt.method)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ValidateChallenge(%q, %q) = %v, want nil", tt.challenge, tt.method, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ValidateChallenge(%q, %q) = %v, want error containing %q", tt.challenge, tt.method, err, tt.wantErr)
			}
			if got, want := CodeOf(err), CodeInvalidRequest; got != want {
				t.Errorf("code = %q, want %q", got, want)
			}
		})
	}
}

func TestVerifyPKCE_Table(t *testing.T) {
	long := strings.Repeat("a", 128)
	tests := []struct {
		name      string
		verifier  string
		challenge string
		want      bool
	}{
		{"rfc vector", rfcVerifier, rfcChallenge, true},
		{"128 chars", long, ChallengeS256(long), true},
		{"43 chars all classes", "AZaz09-._~" + strings.Repeat("x", 33), ChallengeS256("AZaz09-._~" + strings.Repeat("x", 33)), true},
		{"wrong verifier", rfcVerifier[:42] + "l", rfcChallenge, false},
		{"42 chars", rfcVerifier[:42], ChallengeS256(rfcVerifier[:42]), false},
		{"129 chars", long + "a", ChallengeS256(long + "a"), false},
		{"illegal char", rfcVerifier[:42] + "+", ChallengeS256(rfcVerifier[:42] + "+"), false},
		{"space", rfcVerifier[:42] + " ", ChallengeS256(rfcVerifier[:42] + " "), false},
		{"empty challenge (downgrade)", rfcVerifier, "", false},
		{"empty verifier", "", rfcChallenge, false},
		{"plain: verifier equals challenge", rfcVerifier, rfcVerifier, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifyPKCE(tt.verifier, tt.challenge); got != tt.want {
				t.Errorf("VerifyPKCE(%q, %q) = %v, want %v", tt.verifier, tt.challenge, got, tt.want)
			}
		})
	}
}

func FuzzPKCE(f *testing.F) {
	f.Add(rfcVerifier, rfcChallenge, "S256")
	f.Add(rfcVerifier, rfcVerifier, "plain")
	f.Add("", "", "")
	f.Add(strings.Repeat("~", 128), "undefined", "S256")
	f.Fuzz(func(t *testing.T, verifier, challenge, method string) {
		ok := VerifyPKCE(verifier, challenge)
		if ok {
			if !ValidVerifier(verifier) {
				t.Fatalf("VerifyPKCE accepted malformed verifier %q", verifier)
			}
			if challenge != ChallengeS256(verifier) {
				t.Fatalf("VerifyPKCE(%q, %q) = true, but S256 is %q", verifier, challenge, ChallengeS256(verifier))
			}
			if err := ValidateChallenge(challenge, MethodS256); err != nil {
				t.Fatalf("verified challenge %q fails ValidateChallenge: %v", challenge, err)
			}
		}
		if ValidVerifier(verifier) {
			c := ChallengeS256(verifier)
			if !VerifyPKCE(verifier, c) {
				t.Fatalf("VerifyPKCE(%q, its own challenge) = false", verifier)
			}
			if err := ValidateChallenge(c, MethodS256); err != nil {
				t.Fatalf("ValidateChallenge(S256(%q)) = %v", verifier, err)
			}
		}
		if err := ValidateChallenge(challenge, method); err == nil && method != MethodS256 {
			t.Fatalf("ValidateChallenge accepted method %q", method)
		}
	})
}
