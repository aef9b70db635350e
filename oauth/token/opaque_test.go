package token

import (
	"strings"
	"testing"
)

func TestNewOpaque(t *testing.T) {
	const n = 100_000
	seen := make(map[string]bool, n)
	for i := range n {
		tok, hash := NewOpaque(PrefixRefresh)
		if !strings.HasPrefix(tok, PrefixRefresh) {
			t.Fatalf("token %q: no prefix %q", tok, PrefixRefresh)
		}
		if got, want := len(tok)-len(PrefixRefresh), 43; got < want {
			t.Fatalf("token %q: %d random characters, want ≥%d", tok, got, want)
		}
		if seen[tok] {
			t.Fatalf("token %d repeats %q", i, tok)
		}
		seen[tok] = true
		if !HashEqual(hash, HashToken(tok)) {
			t.Fatalf("token %q: hash is not HashToken", tok)
		}
	}
}

func TestHashEqual(t *testing.T) {
	a, b := HashToken("osk_a"), HashToken("osk_b")
	if !HashEqual(a, a) {
		t.Error("HashEqual(a, a): got false, want true")
	}
	if HashEqual(a, b) {
		t.Error("HashEqual(a, b): got true, want false")
	}
	if got, want := HashToken("x"), HashToken("x"); got != want {
		t.Error("HashToken is not deterministic")
	}
}
