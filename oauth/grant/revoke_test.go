package grant

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestStore_RevokeGrant(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c := MustRegister(t, s)
	tok, kept := MustTokens(t, s, c.ID), MustTokens(t, s, c.ID)

	if err := s.RevokeGrant(tok.GrantID); err != nil {
		t.Fatal(err)
	}
	if s.GrantActive(tok.GrantID) {
		t.Error("revoked grant active")
	}
	if !s.GrantActive(kept.GrantID) {
		t.Error("other grant revoked")
	}
	if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
		t.Errorf("refresh of a revoked family: %v", err)
	}
	if err := s.RevokeGrant(tok.GrantID); err != nil {
		t.Errorf("revoking again: %v", err)
	}
	for _, id := range []string{"", "gr_unknown"} {
		if err := s.RevokeGrant(id); err != ErrInvalidGrant {
			t.Errorf("RevokeGrant(%q): %v, want ErrInvalidGrant", id, err)
		}
	}
	for _, id := range []string{"", "gr_unknown"} {
		if s.GrantActive(id) {
			t.Errorf("GrantActive(%q) = true", id)
		}
	}
	ev, err := s.Events(0)
	if err != nil || len(ev) != 1 || ev[0].Kind != EventRevoked || ev[0].GrantID != tok.GrantID {
		t.Errorf("events = %+v, %v", ev, err)
	}
	checkInvariants(t, s)
}

func TestStore_RevokeClient(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c, other := MustRegister(t, s), MustRegister(t, s)
	a, b := MustTokens(t, s, c.ID), MustTokens(t, s, c.ID)
	o := MustTokens(t, s, other.ID)
	if err := s.RevokeGrant(b.GrantID); err != nil {
		t.Fatal(err)
	}

	n, err := s.RevokeClient(c.ID)
	if err != nil || n != 1 {
		t.Fatalf("RevokeClient = %d, %v; want 1 (one was already revoked)", n, err)
	}
	if s.GrantActive(a.GrantID) || !s.GrantActive(o.GrantID) {
		t.Error("wrong grants revoked")
	}
	if _, err := s.RevokeClient("cl_unknown"); err != ErrInvalidClient {
		t.Errorf("unknown client: %v", err)
	}
	// The client stays registered and can be authorized again.
	again := MustTokens(t, s, c.ID)
	if !s.GrantActive(again.GrantID) {
		t.Error("new grant after RevokeClient inactive")
	}
	checkInvariants(t, s)
}

// TestStore_RevokeToken: RFC 7009 semantics.
func TestStore_RevokeToken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		c := MustRegister(t, s)

		for _, rt := range []string{"", "osr_unknown", "not a token"} {
			if err := s.RevokeToken(rt); err != nil {
				t.Errorf("RevokeToken(%q): %v, want nil", rt, err)
			}
		}

		// The two cases share the store, whose events are counted at the end; a bubble cannot
		// hold subtests, so each is a block.
		{ // an active token
			tok := MustTokens(t, s, c.ID)
			if err := s.RevokeToken(tok.RefreshToken); err != nil {
				t.Fatalf("active token: %v", err)
			}
			if s.GrantActive(tok.GrantID) {
				t.Error("active token: family active")
			}
			if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
				t.Errorf("active token: refresh: %v", err)
			}
			if err := s.RevokeToken(tok.RefreshToken); err != nil {
				t.Errorf("active token: revoking again: %v", err)
			}
		}
		{ // a rotated token
			tok := MustTokens(t, s, c.ID)
			time.Sleep(time.Minute)
			next, err := s.Refresh(tok.RefreshToken, c.ID, nil, "")
			if err != nil {
				t.Fatalf("rotated token: %v", err)
			}
			if err := s.RevokeToken(tok.RefreshToken); err != nil {
				t.Fatalf("rotated token: %v", err)
			}
			if s.GrantActive(tok.GrantID) {
				t.Error("rotated token: family active")
			}
			if _, err := s.Refresh(next.RefreshToken, c.ID, nil, ""); err != ErrInvalidGrant {
				t.Errorf("rotated token: refresh of the child: %v", err)
			}
		}
		ev, err := s.Events(0)
		if err != nil || len(ev) != 2 {
			t.Errorf("events = %+v, %v; want 2", ev, err)
		}
		checkInvariants(t, s)
	})
}

// TestStore_RevokeAll: every refresh token refused, every grant inactive
// (AS-17); clients stay and can start again.
func TestStore_RevokeAll(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c, other := MustRegister(t, s), MustRegister(t, s)
	toks := []*Tokens{MustTokens(t, s, c.ID), MustTokens(t, s, c.ID), MustTokens(t, s, other.ID)}

	n, err := s.RevokeAll()
	if err != nil || n != 3 {
		t.Fatalf("RevokeAll = %d, %v; want 3", n, err)
	}
	for _, tok := range toks {
		if s.GrantActive(tok.GrantID) {
			t.Errorf("grant %s active", tok.GrantID)
		}
		if _, err := s.Refresh(tok.RefreshToken, tok.ClientID, nil, ""); err != ErrInvalidGrant {
			t.Errorf("refresh: %v", err)
		}
	}
	if n, err := s.RevokeAll(); err != nil || n != 0 {
		t.Errorf("second RevokeAll = %d, %v; want 0", n, err)
	}
	if tok := MustTokens(t, s, c.ID); !s.GrantActive(tok.GrantID) {
		t.Error("new grant after RevokeAll inactive")
	}
	checkInvariants(t, s)
}

func TestStore_Events(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		c := MustRegister(t, s)
		var ids []string
		for range 5 {
			tok := MustTokens(t, s, c.ID)
			time.Sleep(time.Second)
			if err := s.RevokeGrant(tok.GrantID); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, tok.GrantID)
		}
		tests := []struct {
			limit int
			want  []string
		}{
			{0, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
			{-1, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
			{2, []string{ids[4], ids[3]}},
			{10, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		}
		for _, tt := range tests {
			ev, err := s.Events(tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, e := range ev {
				got = append(got, e.GrantID)
				if i > 0 && (e.Seq >= ev[i-1].Seq || !e.Time.Before(ev[i-1].Time)) {
					t.Errorf("limit %d: events not newest first: %+v", tt.limit, ev)
				}
				if e.ClientID != c.ID || e.Kind != EventRevoked || e.Reason == "" {
					t.Errorf("event %+v", e)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("limit %d: %v, want %v", tt.limit, got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("limit %d: %v, want %v", tt.limit, got, tt.want)
				}
			}
		}
	})
}
