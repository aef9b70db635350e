package login

import (
	"strings"
	"testing"
	"time"
)

func TestSealer(t *testing.T) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := &sealer{key: []byte(strings.Repeat("k", 32))}
	other := &sealer{key: []byte(strings.Repeat("o", 32))}
	want := txn{ID: "id-1", Exp: now.Add(time.Minute).Unix(), Req: toWire(testRequest())}
	tok, err := s.seal(want)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("round trip", func(t *testing.T) {
		got, ok := s.open(tok, now)
		if !ok || got.ID != want.ID || got.Exp != want.Exp || got.Req.request().RedirectURI != testRequest().RedirectURI {
			t.Errorf("open = %+v, %v; want %+v", got, ok, want)
		}
	})
	for _, tt := range []struct {
		name string
		tok  string
		s    *sealer
		at   time.Time
	}{
		{"expired", tok, s, now.Add(time.Minute)},
		{"another key", tok, other, now},
		{"no signature", strings.Split(tok, ".")[0], s, now},
		{"signature cut", tok[:len(tok)-1], s, now},
		{"body changed", "X" + tok[1:], s, now},
		{"empty", "", s, now},
		{"too long", strings.Repeat("a", maxTxn+1), s, now},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := tt.s.open(tt.tok, tt.at); ok {
				t.Error("open succeeded")
			}
		})
	}
	t.Run("csrf bound to the token", func(t *testing.T) {
		shown := want
		shown.Shown = now.UnixMilli()
		tok2, _ := s.seal(shown)
		if !s.checkCSRF(tok, s.csrf(tok)) {
			t.Error("the token's own CSRF token is refused")
		}
		for name, c := range map[string]string{"another token's": s.csrf(tok2), "another key's": other.csrf(tok), "empty": ""} {
			if s.checkCSRF(tok, c) {
				t.Errorf("%s CSRF token accepted", name)
			}
		}
	})
	t.Run("labels", func(t *testing.T) {
		if s.sessionTag("d") == s.sessionTag("e") || s.logoutCSRF("d") == s.csrf("x.d") || s.sessionTag("d") == other.sessionTag("d") {
			t.Error("values for different uses or keys coincide")
		}
	})
}

// FuzzSealer_Open: open never panics, and accepts no token but the one seal made (no other
// encoding of it, no change to it).
func FuzzSealer_Open(f *testing.F) {
	now := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	s := &sealer{key: []byte(strings.Repeat("k", 32))}
	tok, err := s.seal(txn{ID: "id-1", Exp: now.Add(time.Minute).Unix(), Req: toWire(testRequest())})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(tok)
	f.Add(tok[:len(tok)-1] + "B")
	f.Add("e30." + strings.Split(tok, ".")[1])
	f.Add(".")
	f.Fuzz(func(t *testing.T, in string) {
		if _, ok := s.open(in, now); ok && in != tok {
			t.Errorf("open accepted %q", in)
		}
	})
}
