package app

import (
	"testing"
	"time"
)

// TestSDK_RecallTimeWords: over MCP in both eras, recall reads the question's own time words
// in OWNSONA_TIMEZONE's calendar, ranks the window's memories first and reports the window;
// explicit since wins.
func TestSDK_RecallTimeWords(t *testing.T) {
	for _, pin := range []string{"", "2026-07-28"} {
		t.Run("era "+pin, func(t *testing.T) {
			clock := newFakeClock() // Sunday 2026-11-22 09:30 UTC
			cfg := testConfig(t, clock)
			cfg.Timezone = "Europe/Berlin"
			_, s := connectSDKWith(t, cfg, pin)
			lisbon := sdkPayload(t, s, "remember", map[string]any{"text": "flew to Lisbon for the conference"})["memory_id"]
			clock.Advance(3 * 24 * time.Hour) // Wednesday
			oslo := sdkPayload(t, s, "remember", map[string]any{"text": "flew to Oslo to see family"})["memory_id"]

			// The window ranks, it does not hide: Sunday's memory first, then Wednesday's.
			p := sdkPayload(t, s, "recall", map[string]any{"query": "where did I fly on Sunday?"})
			if m := p["matches"].([]any); len(m) != 2 || m[0].(map[string]any)["id"] != lisbon || m[1].(map[string]any)["id"] != oslo {
				t.Errorf("on Sunday: matches %v, want memory %v then %v", m, lisbon, oslo)
			}
			w, _ := p["time_window"].(map[string]any)
			if w["phrase"] != "on Sunday" || w["since"] != "2026-11-22T00:00:00+01:00" || w["until"] != "2026-11-23T00:00:00+01:00" || w["ranked"] != true {
				t.Errorf("time_window = %v, want Sunday in Berlin", p["time_window"])
			}

			// Only a window: its memories, newest first, and the payload says so; an empty
			// window says that, and the nearest in time answer.
			p = sdkPayload(t, s, "recall", map[string]any{"query": "last week?"})
			w, _ = p["time_window"].(map[string]any)
			if m := p["matches"].([]any); len(m) != 2 || m[0].(map[string]any)["id"] != oslo || w["listed"] != true || w["nearest"] != nil || w["note"] == nil {
				t.Errorf("last week: %v, want both memories, newest first, listed", p)
			}
			p = sdkPayload(t, s, "recall", map[string]any{"query": "in March 2025"})
			w, _ = p["time_window"].(map[string]any)
			if m := p["matches"].([]any); len(m) != 2 || m[0].(map[string]any)["id"] != lisbon || w["nearest"] != true {
				t.Errorf("in March 2025: %v, want the nearest in time, the older first, and nearest", p)
			}
			p = sdkPayload(t, s, "recall", map[string]any{"query": "where did I fly today?"})
			if m := p["matches"].([]any); len(m) != 2 || m[0].(map[string]any)["id"] != oslo {
				t.Errorf("today: matches %v, want memory %v first", m, oslo)
			}
			p = sdkPayload(t, s, "recall", map[string]any{"query": "where did I fly on Sunday?", "since": "2026-11-20T00:00:00Z"})
			if _, ok := p["time_window"]; ok || len(p["matches"].([]any)) != 2 {
				t.Errorf("explicit since: %v, want both memories and no time_window", p)
			}
			p = sdkPayload(t, s, "recall", map[string]any{"query": "where did I fly?"})
			if _, ok := p["time_window"]; ok || len(p["matches"].([]any)) != 2 {
				t.Errorf("no time words: %v, want both memories (%v, %v) and no time_window", p, lisbon, oslo)
			}
		})
	}
}
