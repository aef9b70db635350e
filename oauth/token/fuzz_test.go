package token

import (
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/kv/kvtest"
)

// FuzzBearer (SECURITY.md LA-09): no bearer value but the unmodified original
// verifies, and every one is decided quickly. The keys are new on each run, so
// stored corpus entries are other keys' tokens and must fail too. It runs on the real clock
// (a fuzz target cannot run in a synctest bubble); every Verify is against now.
func FuzzBearer(f *testing.F) {
	db := kvtest.Open(f)
	k, err := OpenKeys(db, time.Now)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Now()
	ed := MustMint(f, k, validClaims(now))
	if err := k.RotateTo(ES256); err != nil {
		f.Fatal(err)
	}
	es := MustMint(f, k, validClaims(now))
	originals := map[string]bool{ed: true, es: true}

	f.Add(ed)
	f.Add(es)
	f.Add(strings.Repeat(".", 1<<12))
	f.Add(strings.Repeat("e30.", 100))
	f.Add(ed[:strings.LastIndexByte(ed, '.')] + ".")
	f.Add(strings.ToUpper(ed))
	f.Add(ed + "A")
	f.Add(es[:len(es)-1] + "B")
	f.Fuzz(func(t *testing.T, tok string) {
		start := time.Now()
		_, err := k.Verify(tok, expect(now))
		if d := time.Since(start); d > time.Second { // generous: a hang, not a slow machine
			t.Errorf("Verify took %v on %d bytes", d, len(tok))
		}
		if err == nil && !originals[tok] {
			t.Errorf("a modified token verified: %q", tok)
		}
		if err != nil && originals[tok] {
			t.Errorf("the original token failed: %v", err)
		}
	})
}
