package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
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
	rec := mcpRequest(b.Handler(), "Bearer "+testPAT(t, b), msgToolsList)
	if got := listedTools(t, rec); !slices.Contains(got, "prepare_local_file_upload") {
		t.Errorf("once switched on: tools/list = %v, want prepare_local_file_upload", got)
	}
	if !strings.Contains(rec.Body.String(), `"nextCursor":""`) {
		t.Errorf("a mode on: the legacy tools/list lacks nextCursor \"\" on its last page:\n%.300s", rec.Body)
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

// TestQuota_Tools: a write past --max-memories answers LIMIT_EXCEEDED, naming the limit and its
// setting, and stores nothing; reads still work (SECURITY.md ST-13).
func TestQuota_Tools(t *testing.T) {
	cfg := testConfig(t, newFakeClock())
	cfg.MaxMemories = 2
	a := MustOpen(t, cfg)
	for _, text := range []string{"first of two", "second of two"} {
		if p, _ := callTool(t, a, "remember", map[string]any{"text": text}); p["ok"] != true {
			t.Fatalf("remember %q: %v", text, p)
		}
	}
	p, _ := callTool(t, a, "remember", map[string]any{"text": "one too many"})
	e, _ := p["error"].(map[string]any)
	if p["ok"] != false || e["code"] != "LIMIT_EXCEEDED" || !strings.Contains(fmt.Sprint(e["message"]), "max-memories") {
		t.Errorf("remember past --max-memories 2: %v, want LIMIT_EXCEEDED naming max-memories", p)
	}
	if c, _ := callTool(t, a, "count_memories", map[string]any{}); c["count"] != float64(2) {
		t.Errorf("count after the refusal: %v, want 2", c)
	}
}

// TestConfig_MaxResultChars: the answer budget's setting is bounded at start.
func TestConfig_MaxResultChars(t *testing.T) {
	for _, v := range []string{"100", "600000"} {
		_, _, err := loadConfig("serve", []string{"--max-result-chars", v}, func(string) string { return "" }, nil)
		if err == nil || !strings.Contains(err.Error(), "max-result-chars") {
			t.Errorf("--max-result-chars %s: %v, want an error naming the setting", v, err)
		}
	}
}
