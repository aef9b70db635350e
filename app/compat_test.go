package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestCompat_Setting: the compat setting reaches every side at once, from the flag at start
// and from the console's settings while serving: with once on, the server card carries ONCE's
// fields; off again, it does not (issue 27, item 7).
func TestCompat_Setting(t *testing.T) {
	card := func(a *App) string {
		rec := serveReq(a.Handler(), http.MethodGet, "/.well-known/mcp/server-card.json", "")
		if rec.Code != http.StatusOK {
			t.Fatalf("server card: %d %s", rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	cfg := testConfig(t, newFakeClock())
	cfg.Compat = []string{"once"}
	a := MustOpen(t, cfg)
	if got := card(a); !strings.Contains(got, `"transport":{`) {
		t.Errorf("--compat once: the server card lacks ONCE's transport.type:\n%s", got)
	}

	b := MustOpen(t, testConfig(t, newFakeClock()))
	if got := card(b); strings.Contains(got, `"transport":{`) {
		t.Errorf("no compat mode: the server card has ONCE's fields:\n%s", got)
	}
	s := b.Settings().Get()
	s.Compat = []string{"once"}
	if err := b.Settings().Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := card(b); !strings.Contains(got, `"transport":{`) {
		t.Errorf("once switched on in the settings: the server card lacks ONCE's fields:\n%s", got)
	}
	s.Compat = nil
	if err := b.Settings().Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if got := card(b); strings.Contains(got, `"transport":{`) {
		t.Errorf("once switched off again: the server card still has ONCE's fields:\n%s", got)
	}
}

// TestConfig_RefreshGrace: --refresh-grace parses, 0 means off, and more than 30m is refused
// at start with a message naming the setting.
func TestConfig_RefreshGrace(t *testing.T) {
	cfg, _, err := loadConfig("serve", []string{"--refresh-grace", "10m"}, func(string) string { return "" }, nil)
	if err != nil || cfg.RefreshGrace != 10*time.Minute {
		t.Fatalf("--refresh-grace 10m: %v, %v", cfg.RefreshGrace, err)
	}
	if got := refreshGrace(0); got >= 0 {
		t.Errorf("refreshGrace(0) = %v, want negative (off)", got)
	}
	if got := NewConfig().RefreshGrace; got != 5*time.Minute {
		t.Errorf("default refresh grace %v, want 5m", got)
	}
	bad := testConfig(t, newFakeClock())
	bad.RefreshGrace = time.Hour
	if _, err := Open(bad, nil); err == nil || !strings.Contains(err.Error(), "refresh grace") {
		t.Errorf("Open with a 1h refresh grace: %v, want an error naming the refresh grace window", err)
	}
}
