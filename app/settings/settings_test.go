package settings_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/approval"
	"github.com/ownsona/ownsona/app/settings"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
)

var known = []string{"remember", "recall", "get_memory", "forget"}

// defaults are the Base of a store nothing fixes.
var defaults = settings.Settings{Approval: approval.HardDelete, ApprovalTimeout: 2 * time.Minute, RateLimit: 120, RateBurst: 20}

// MustOpen opens a store over db.
func MustOpen(tb testing.TB, db *kv.DB, cfg settings.Config) *settings.Store {
	tb.Helper()
	if cfg.KnownTools == nil {
		cfg.KnownTools = known
	}
	st, err := settings.Open(db, cfg)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	return st
}

func equal(a, b settings.Settings) bool {
	return slices.Equal(a.Tools, b.Tools) && a.Approval == b.Approval && a.ApprovalTimeout == b.ApprovalTimeout &&
		a.RateLimit == b.RateLimit && a.RateBurst == b.RateBurst && slices.Equal(a.Compat, b.Compat)
}

// TestStore_Set: what Set stores is in force at once and after a reopen; a setting put back to
// its default follows the default again.
func TestStore_Set(t *testing.T) {
	db := kvtest.Open(t)
	st := MustOpen(t, db, settings.Config{Base: defaults})
	if got := st.Get(); !equal(got, defaults) {
		t.Fatalf("Get on a fresh file = %+v, want the defaults", got)
	}
	want := settings.Settings{Tools: []string{"recall", "remember", "recall"}, Approval: approval.Writes,
		ApprovalTimeout: 90 * time.Second, RateLimit: 60, RateBurst: 5, Compat: []string{"sophon", "once", "sophon"}}
	if err := st.Set(context.Background(), want); err != nil {
		t.Fatalf("Set: %v", err)
	}
	want.Tools = []string{"remember", "recall"} // deduplicated, in the tools' order
	want.Compat = []string{"once", "sophon"}    // deduplicated, in CompatModes' order
	if got := st.Get(); !got.HasCompat(settings.CompatONCE) || got.HasCompat(settings.CompatKOmcp) {
		t.Errorf("HasCompat after Set: once %v, komcp %v; want true, false", got.HasCompat(settings.CompatONCE), got.HasCompat(settings.CompatKOmcp))
	}
	if got := st.Get(); !equal(got, want) {
		t.Errorf("Get after Set = %+v, want %+v", got, want)
	}
	if got := MustOpen(t, db, settings.Config{Base: defaults}).Get(); !equal(got, want) {
		t.Errorf("after reopening: %+v, want %+v", got, want)
	}

	t.Run("back to the default follows the default", func(t *testing.T) {
		back := want
		back.RateLimit = defaults.RateLimit
		if err := st.Set(context.Background(), back); err != nil {
			t.Fatal(err)
		}
		newDefaults := defaults
		newDefaults.RateLimit = 300 // a later version's default
		got := MustOpen(t, db, settings.Config{Base: newDefaults}).Get()
		if got.RateLimit != 300 || got.RateBurst != 5 {
			t.Errorf("rate %d/%d after a reopen with a new default 300, want 300/5", got.RateLimit, got.RateBurst)
		}
	})
}

// TestStore_Fixed: a setting a flag or a variable gives wins over the file, and Set refuses
// to change it, naming it and its source; the rest stays settable.
func TestStore_Fixed(t *testing.T) {
	db := kvtest.Open(t)
	st := MustOpen(t, db, settings.Config{Base: defaults})
	stored := defaults
	stored.Tools, stored.RateLimit = []string{"recall"}, 30
	if err := st.Set(context.Background(), stored); err != nil {
		t.Fatal(err)
	}

	base := defaults
	base.Tools = []string{"remember"}
	fixed := map[string]string{settings.Tools: "OWNSONA_TOOLS", settings.Approval: "flag --approval"}
	st = MustOpen(t, db, settings.Config{Base: base, Fixed: fixed})
	got := st.Get()
	if !slices.Equal(got.Tools, []string{"remember"}) || got.RateLimit != 30 {
		t.Fatalf("in force: tools %v (want the variable's [remember]), rate %d (want the file's 30)", got.Tools, got.RateLimit)
	}
	if f := st.Fixed(); len(f) != 2 || f[settings.Tools] != "OWNSONA_TOOLS" || f[settings.Approval] != "flag --approval" {
		t.Errorf("Fixed = %v", f)
	}

	for _, tc := range []struct {
		name, source string
		change       func(*settings.Settings)
	}{
		{settings.Tools, "OWNSONA_TOOLS", func(s *settings.Settings) { s.Tools = nil }},
		{settings.Approval, "flag --approval", func(s *settings.Settings) { s.Approval = approval.Off }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := st.Get()
			tc.change(&s)
			s.RateBurst = 7 // a change that alone would be accepted
			err := st.Set(context.Background(), s)
			var fe *settings.FixedError
			if !errors.As(err, &fe) || fe.Setting != tc.name || fe.Source != tc.source ||
				!strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), tc.source) {
				t.Fatalf("Set changing %s: %v, want a FixedError naming it and %s", tc.name, err, tc.source)
			}
			if got := st.Get(); got.RateBurst == 7 {
				t.Error("the refused Set changed another setting")
			}
		})
	}
	t.Run("the others", func(t *testing.T) {
		s := st.Get() // the fixed ones sent back as they are
		s.RateBurst = 7
		if err := st.Set(context.Background(), s); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if got := st.Get(); got.RateBurst != 7 || !slices.Equal(got.Tools, []string{"remember"}) {
			t.Errorf("after Set: %+v", got)
		}
	})
	t.Run("the file's value comes back without the flag", func(t *testing.T) {
		got := MustOpen(t, db, settings.Config{Base: defaults}).Get()
		if !slices.Equal(got.Tools, []string{"recall"}) || got.RateBurst != 7 {
			t.Errorf("without the variable: %+v, want the stored tools [recall] and burst 7", got)
		}
	})
}

func TestStore_Set_invalid(t *testing.T) {
	st := MustOpen(t, kvtest.Open(t), settings.Config{Base: defaults})
	for _, tc := range []struct {
		setting string
		change  func(*settings.Settings)
	}{
		{settings.Tools, func(s *settings.Settings) { s.Tools = []string{"recall", "frobnicate"} }},
		{settings.Approval, func(s *settings.Settings) { s.Approval = "sometimes" }},
		{settings.ApprovalTimeout, func(s *settings.Settings) { s.ApprovalTimeout = time.Second }},
		{settings.ApprovalTimeout, func(s *settings.Settings) { s.ApprovalTimeout = time.Hour }},
		{settings.RateLimit, func(s *settings.Settings) { s.RateLimit = -1 }},
		{settings.RateLimit, func(s *settings.Settings) { s.RateLimit = 100_001 }},
		{settings.RateBurst, func(s *settings.Settings) { s.RateBurst = 0 }},
		{settings.Compat, func(s *settings.Settings) { s.Compat = []string{"once", "mem0"} }},
	} {
		s := st.Get()
		tc.change(&s)
		err := st.Set(context.Background(), s)
		var ie *settings.InvalidError
		if !errors.As(err, &ie) || ie.Setting != tc.setting || !strings.HasPrefix(err.Error(), tc.setting+": ") {
			t.Errorf("Set(%+v) = %v, want an InvalidError naming %s", s, err, tc.setting)
		}
		if got := st.Get(); !equal(got, defaults) {
			t.Errorf("a refused Set changed the settings: %+v", got)
		}
	}
}

func TestStore_OnChange(t *testing.T) {
	st := MustOpen(t, kvtest.Open(t), settings.Config{Base: defaults})
	var got []settings.Settings
	st.OnChange(func(s settings.Settings) { got = append(got, s) })
	s := st.Get()
	if err := st.Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("hooks ran for a Set that changed nothing: %+v", got)
	}
	s.Tools = []string{"recall"}
	if err := st.Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !slices.Equal(got[0].Tools, []string{"recall"}) {
		t.Errorf("hooks were told %+v, want the new allowlist once", got)
	}
}

// TestOpen_invalidStored: a stored value that no longer validates (a tool gone in an upgrade)
// fails Open naming the setting and the flag that overrides it, unless that flag is given.
func TestOpen_invalidStored(t *testing.T) {
	db := kvtest.Open(t)
	st := MustOpen(t, db, settings.Config{Base: defaults})
	s := st.Get()
	s.Tools = []string{"get_memory"}
	if err := st.Set(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	_, err := settings.Open(db, settings.Config{Base: defaults, KnownTools: []string{"remember", "recall"}})
	if err == nil || !strings.Contains(err.Error(), `"get_memory"`) || !strings.Contains(err.Error(), "--tools") {
		t.Errorf("Open with a stored tool that is gone: %v, want an error naming it and --tools", err)
	}
	base := defaults
	base.Tools = []string{"recall"}
	if _, err := settings.Open(db, settings.Config{Base: base, Fixed: map[string]string{settings.Tools: "flag --tools"},
		KnownTools: []string{"remember", "recall"}}); err != nil {
		t.Errorf("Open with the setting overridden: %v", err)
	}
}

// Example: the owner turns the approval gate up to every write; the file keeps it.
func Example() {
	dir, _ := os.MkdirTemp("", "ownsona-example")
	defer os.RemoveAll(dir)
	db, _ := kv.Open(filepath.Join(dir, "ownsona.db"), kv.Options{})
	defer db.Close()
	st, _ := settings.Open(db, settings.Config{
		Base:  settings.Settings{Approval: approval.HardDelete, ApprovalTimeout: 2 * time.Minute, RateLimit: 120, RateBurst: 20},
		Fixed: map[string]string{settings.RateLimit: "OWNSONA_RATE_LIMIT"},
	})
	st.OnChange(func(s settings.Settings) { fmt.Println("now:", s.Approval) })
	s := st.Get()
	s.Approval = approval.Writes
	_ = st.Set(context.Background(), s)
	s.RateLimit = 10
	fmt.Println(st.Set(context.Background(), s))
	// Output:
	// now: writes
	// rate-limit is set by OWNSONA_RATE_LIMIT, which wins over the settings kept in the file; change OWNSONA_RATE_LIMIT and restart to change it
}
