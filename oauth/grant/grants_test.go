package grant

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestStore_Grants: each client's grants with their scopes and times, newest
// first, revoked ones included and marked.
func TestStore_Grants(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		c, other := MustRegister(t, s), MustRegister(t, s)
		start := time.Now()
		first := MustTokens(t, s, c.ID)
		time.Sleep(time.Hour)
		second := MustTokens(t, s, c.ID)
		o := MustTokens(t, s, other.ID)
		time.Sleep(time.Hour)
		if _, err := s.Refresh(second.RefreshToken, c.ID, nil, ""); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeGrant(first.GrantID); err != nil {
			t.Fatal(err)
		}

		got, err := s.Grants(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].ID != second.GrantID || got[1].ID != first.GrantID {
			t.Fatalf("Grants(c) = %+v, want the second grant then the first", got)
		}
		for _, tc := range []struct {
			name               string
			g                  GrantInfo
			created, refreshed time.Time
			revoked            bool
		}{
			{"refreshed", got[0], start.Add(time.Hour), start.Add(2 * time.Hour), false},
			{"revoked", got[1], start, start, true},
		} {
			g := tc.g // no t.Run inside a bubble
			if g.ClientID != c.ID || g.Subject != "owner" || g.Resource != testResource ||
				!slices.Equal(g.Scope, []string{scopeRead, scopeWrite}) {
				t.Errorf("%s: grant = %+v", tc.name, g)
			}
			if !g.CreatedAt.Equal(tc.created) || !g.RefreshedAt.Equal(tc.refreshed) {
				t.Errorf("%s: created %v, refreshed %v; want %v, %v", tc.name, g.CreatedAt, g.RefreshedAt, tc.created, tc.refreshed)
			}
			if got := g.RevokedAt != nil && g.RevokeReason != ""; got != tc.revoked {
				t.Errorf("%s: revoked at %v (%q), want revoked %v", tc.name, g.RevokedAt, g.RevokeReason, tc.revoked)
			}
		}

		all, err := s.Grants("")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, g := range all {
			ids = append(ids, g.ID)
		}
		// second and o were created at the same instant: either order.
		if len(ids) != 3 || ids[2] != first.GrantID || !slices.Contains(ids, o.GrantID) || !slices.Contains(ids, second.GrantID) {
			t.Errorf("Grants(\"\") = %v, want every client's grants, newest first", ids)
		}
		if g, err := s.Grants("cl_unknown"); err != nil || len(g) != 0 {
			t.Errorf("Grants of an unknown client = %v, %v; want none", g, err)
		}
	})
}
