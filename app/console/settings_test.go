package console_test

import (
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/settings"
	"github.com/ownsona/ownsona/kv/kvtest"
)

var testTools = []string{"remember", "recall", "forget"}

// MustOpenSettings opens the console with a settings store (over a file of its own), fixed as
// given.
func MustOpenSettings(tb testing.TB, fixed map[string]string) (*fixture, *settings.Store) {
	tb.Helper()
	db := kvtest.Open(tb)
	st, err := settings.Open(db, settings.Config{KnownTools: testTools, Fixed: fixed,
		Base: settings.Settings{Approval: approval.HardDelete, ApprovalTimeout: 2 * time.Minute, RateLimit: 120, RateBurst: 20}})
	if err != nil {
		tb.Fatal(err)
	}
	f := MustOpen(tb, func(o *options) {
		o.cfg = func(c *console.Config) {
			c.Settings, c.Tools, c.ToolTitles = st, testTools, map[string]string{"remember": "Remember a fact"}
		}
	})
	return f, st
}

// TestConsole_Settings: the page shows the values in force; saving changes the free ones; an
// invalid value changes nothing and says why; every tool checked means no allowlist.
func TestConsole_Settings(t *testing.T) {
	f, st := MustOpenSettings(t, nil)
	b := f.signedIn(t)
	wantContains(t, "settings page", b.page(t, "/console/settings"), `value="remember" checked`, `value="hard-delete" checked`, `value="2m0s"`,
		`<code>remember</code> <span class="hint">Remember a fact</span>`)

	save := url.Values{"tools": {"recall", "remember"}, "approval": {"writes"}, "approval_timeout": {"90s"}, "rate_limit": {"60"}, "rate_burst": {"10"}}
	wantContains(t, "after saving", b.mustPost(t, "/console/settings/save", save), "Saved")
	got := st.Get()
	if !slices.Equal(got.Tools, []string{"remember", "recall"}) || got.Approval != approval.Writes || got.ApprovalTimeout != 90*time.Second ||
		got.RateLimit != 60 || got.RateBurst != 10 {
		t.Errorf("settings after saving = %+v", got)
	}

	unchanged := func(t *testing.T, _ *browser, _ *httptest.ResponseRecorder) {
		if now := st.Get(); now.ApprovalTimeout != 90*time.Second || now.Approval != approval.Writes || now.RateLimit != 60 {
			t.Errorf("an invalid value changed the settings: %+v", now)
		}
	}
	invalid := func(name, field, value, want string) scenario {
		bad := maps.Clone(save)
		bad.Set(field, value)
		return scenario{Name: name, Method: http.MethodPost, URL: "/console/settings/save", FormFor: withCSRF(bad),
			WantStatus: http.StatusSeeOther, After: both(leadsTo("Nothing saved", want), unchanged)}
	}
	signedIn.RunOn(t, b, []scenario{
		invalid("timeout too short", "approval_timeout", "5s", "approval-timeout"),
		invalid("timeout not a duration", "approval_timeout", "soon", "a duration such as 2m"),
		invalid("unknown policy", "approval", "sometimes", "approval"),
		invalid("rate not a number", "rate_limit", "many", "whole number"),
	})

	all := url.Values{"tools": testTools, "approval": {"off"}, "approval_timeout": {"2m"}, "rate_limit": {"120"}, "rate_burst": {"20"},
		"password": {testPassword}}
	b.mustPost(t, "/console/settings/save", all)
	if got := st.Get().Tools; len(got) != 0 {
		t.Errorf("every tool checked saved the allowlist %v, want none (every tool)", got)
	}
	none := url.Values{"approval": {"off"}, "approval_timeout": {"2m"}, "rate_limit": {"120"}, "rate_burst": {"20"}}
	wantContains(t, "no tool checked", b.mustPost(t, "/console/settings/save", none), "choose at least one tool")
}

// TestConsole_SettingsFixed: a setting a flag or variable gives is shown as such, disabled, and
// a form cannot change it; the others still save.
func TestConsole_SettingsFixed(t *testing.T) {
	f, st := MustOpenSettings(t, map[string]string{settings.Tools: "OWNSONA_TOOLS"})
	b := f.signedIn(t)
	wantContains(t, "settings page", b.page(t, "/console/settings"), "Set by <code>OWNSONA_TOOLS</code>", "<fieldset disabled>")
	b.mustPost(t, "/console/settings/save", url.Values{"tools": {"forget"}, "approval": {"off"}, "approval_timeout": {"1m"}, "rate_limit": {"120"}, "rate_burst": {"20"},
		"password": {testPassword}})
	if got := st.Get(); len(got.Tools) != 0 || got.Approval != approval.Off {
		t.Errorf("settings = %+v: want the fixed allowlist untouched and the approval saved", got)
	}
}

// TestConsole_SettingsCompat: the compatibility modes are off on a fresh file, shown with what
// each changes; checking one turns it on, unchecking every one turns them off, and a mode the
// server does not know changes nothing.
func TestConsole_SettingsCompat(t *testing.T) {
	f, st := MustOpenSettings(t, nil)
	b := f.signedIn(t)
	page := b.page(t, "/console/settings")
	wantContains(t, "settings page", page, `name="compat" value="once">`, `name="compat" value="komcp">`,
		`name="compat" value="sophon">`, "refuses tool names with a dot")

	form := url.Values{"tools": testTools, "approval": {"hard-delete"}, "approval_timeout": {"2m"}, "rate_limit": {"120"}, "rate_burst": {"20"}}
	on := url.Values{"compat": {"sophon", "once"}, "password": {testPassword}}
	for k, v := range form {
		on[k] = v
	}
	wantContains(t, "after switching modes on", b.mustPost(t, "/console/settings/save", on), "Saved")
	if got := st.Get().Compat; !slices.Equal(got, []string{"once", "sophon"}) {
		t.Errorf("Compat after saving once and sophon = %v", got)
	}
	wantContains(t, "settings page with modes on", b.page(t, "/console/settings"), `value="once" checked`, `value="sophon" checked`)

	bad := url.Values{"compat": {"mem0"}, "password": {testPassword}}
	for k, v := range form {
		bad[k] = v
	}
	wantContains(t, "an unknown mode", b.mustPost(t, "/console/settings/save", bad), "Nothing saved", "not a compatibility mode")
	if got := st.Get().Compat; !slices.Equal(got, []string{"once", "sophon"}) {
		t.Errorf("an unknown mode changed Compat to %v", got)
	}

	wantContains(t, "after switching every mode off", b.mustPost(t, "/console/settings/save", form), "Saved")
	if got := st.Get().Compat; len(got) != 0 {
		t.Errorf("Compat after unchecking every mode = %v, want none", got)
	}
}

// TestConsole_SettingsLowerProtection: a save that protects less (more tools, less approval, a
// higher or no rate limit, a higher burst, a compatibility mode on) needs the password again
// and changes nothing without it; a save that protects more does not (SECURITY.md CO-01).
func TestConsole_SettingsLowerProtection(t *testing.T) {
	f, st := MustOpenSettings(t, nil)
	b := f.signedIn(t)
	base := url.Values{"tools": {"recall"}, "approval": {"writes"}, "approval_by": {"owner"}, "approval_timeout": {"2m"}, "rate_limit": {"60"}, "rate_burst": {"10"}}
	with := func(field string, values ...string) url.Values {
		v := url.Values{}
		for k, vs := range base {
			v[k] = vs
		}
		if field != "" {
			v[field] = values
		}
		return v
	}
	// Narrowing from the defaults (every tool, hard-delete, 120/20) needs no password.
	wantContains(t, "a save that protects more", b.mustPost(t, "/console/settings/save", with("")), "Saved")
	want := st.Get()

	unchanged := func(t *testing.T, _ *browser, _ *httptest.ResponseRecorder) {
		if got := st.Get(); !slices.Equal(got.Tools, want.Tools) || got.Approval != want.Approval || got.ApprovalBy != approval.ByOwner ||
			got.RateLimit != want.RateLimit || got.RateBurst != want.RateBurst || len(got.Compat) != 0 {
			t.Fatalf("a save that lowers protection went through without the password: %+v", got)
		}
	}
	// withoutPassword is a save that lowers protection for reason, sent without the password.
	withoutPassword := func(name string, form url.Values, reason string) scenario {
		return scenario{Name: name, Method: http.MethodPost, URL: "/console/settings/save", FormFor: withCSRF(form),
			WantStatus: http.StatusSeeOther, After: both(leadsTo("Nothing saved: this ", reason, "type your password"), unchanged)}
	}
	signedIn.RunOn(t, b, []scenario{
		withoutPassword("more tools", with("tools", "recall", "remember"), "more tools"),
		withoutPassword("every tool", with("tools", testTools...), "more tools"),
		withoutPassword("less approval", with("approval", "hard-delete"), "approval less often"),
		withoutPassword("clients approve", with("approval_by", "client"), "clients approve their own calls"),
		withoutPassword("no rate limit", with("rate_limit", "0"), "raises the rate limit"),
		withoutPassword("a higher rate limit", with("rate_limit", "600"), "raises the rate limit"),
		withoutPassword("a higher burst", with("rate_burst", "50"), "raises the burst"),
		withoutPassword("a compatibility mode", with("compat", "once"), "compatibility mode"),
	})

	wrong := with("rate_limit", "0")
	wrong.Set("password", "not it")
	wantContains(t, "with a wrong password", b.mustPost(t, "/console/settings/save", wrong), "that is not your password")
	if got := st.Get().RateLimit; got != 60 {
		t.Errorf("rate limit after a save with a wrong password = %d, want 60 unchanged", got)
	}
	ok := with("rate_limit", "0")
	ok.Set("password", testPassword)
	wantContains(t, "with the password", b.mustPost(t, "/console/settings/save", ok), "Saved")
	if got := st.Get().RateLimit; got != 0 {
		t.Errorf("rate limit after a save with the password = %d, want 0", got)
	}
	stricter := with("rate_limit", "30")
	wantContains(t, "back to a limit, no password", b.mustPost(t, "/console/settings/save", stricter), "Saved")
}
