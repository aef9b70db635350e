package grant

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ownsona/ownsona/kv"
)

func TestStore_RegisterClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		uris := []string{testRedirect, "http://127.0.0.1/callback"}
		c, err := s.RegisterClient(ClientMeta{Name: "Claude", RedirectURIs: uris})
		if err != nil {
			t.Fatal(err)
		}
		uris[0] = "changed" // the Store keeps its own copy
		if !strings.HasPrefix(c.ID, ClientIDPrefix) || strings.HasPrefix(c.ID, "https://") {
			t.Errorf("client id %q", c.ID)
		}
		got, err := s.Client(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != "Claude" || !slices.Equal(got.RedirectURIs, []string{testRedirect, "http://127.0.0.1/callback"}) {
			t.Errorf("client = %+v", got)
		}
		if !got.CreatedAt.Equal(time.Now()) || !got.LastUsedAt.Equal(time.Now()) || got.AuthorizedAt != nil {
			t.Errorf("times: created %v, last used %v, authorized %v", got.CreatedAt, got.LastUsedAt, got.AuthorizedAt)
		}

		time.Sleep(time.Minute)
		MustCode(t, s, c.ID)
		got, _ = s.Client(c.ID)
		if got.AuthorizedAt == nil || !got.AuthorizedAt.Equal(time.Now()) || !got.LastUsedAt.Equal(time.Now()) {
			t.Errorf("after IssueCode: authorized %v, last used %v", got.AuthorizedAt, got.LastUsedAt)
		}
		first := *got.AuthorizedAt
		time.Sleep(time.Minute)
		MustCode(t, s, c.ID)
		got, _ = s.Client(c.ID)
		if !got.AuthorizedAt.Equal(first) {
			t.Errorf("AuthorizedAt moved from %v to %v", first, got.AuthorizedAt)
		}

		all, err := s.Clients()
		if err != nil || len(all) != 1 || all[0].ID != c.ID {
			t.Errorf("Clients() = %v, %v", all, err)
		}
	})
}

func TestStore_Client(t *testing.T) {
	s := MustOpenStore(t, Config{})
	for _, id := range []string{"", "cl_nope", "https://claude.ai/client.json"} {
		if _, err := s.Client(id); err != ErrInvalidClient {
			t.Errorf("Client(%q): %v, want ErrInvalidClient", id, err)
		}
	}
}

// TestStore_MaxClients (issue 13, item 4): a full table of registrations makes room by
// evicting the oldest client that was never authorized; only a table of authorized clients
// refuses. Metadata-document clients have a table of their own, so a flood of registrations
// never keeps a first-time Claude.ai connector out.
func TestStore_MaxClients(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{MaxClients: 3})
		authorized := MustRegister(t, s)
		MustTokens(t, s, authorized.ID)
		time.Sleep(time.Second)
		flood1 := MustRegister(t, s)
		time.Sleep(time.Second)
		flood2 := MustRegister(t, s)
		time.Sleep(time.Second)

		// Full: the oldest never-authorized registration makes room.
		fourth, err := s.RegisterClient(ClientMeta{Name: "4th", RedirectURIs: []string{testRedirect}})
		if err != nil {
			t.Fatalf("4th client: %v", err)
		}
		for _, tc := range []struct {
			c    *Client
			kept bool
		}{{authorized, true}, {flood1, false}, {flood2, true}, {fourth, true}} {
			if _, err := s.Client(tc.c.ID); (err == nil) != tc.kept {
				t.Errorf("%s: kept %v, want %v", tc.c.Name, err == nil, tc.kept)
			}
		}

		// A metadata-document client is not kept out by the full table.
		if _, err := s.PutMetadataClient("https://claude.ai/oauth/mcp-oauth-client-metadata", ClientMeta{Name: "Claude", RedirectURIs: []string{testRedirect}}); err != nil {
			t.Fatalf("metadata client with the registrations full: %v", err)
		}

		// Every registration authorized: no room, and nothing is evicted.
		for _, c := range []*Client{flood2, fourth} {
			MustTokens(t, s, c.ID)
		}
		if _, err := s.RegisterClient(ClientMeta{Name: "5th"}); err != ErrTooManyClients {
			t.Fatalf("5th client with every one authorized: %v, want ErrTooManyClients", err)
		}
		if err := s.DeleteClient(fourth.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.RegisterClient(ClientMeta{Name: "5th"}); err != nil {
			t.Fatalf("after a delete: %v", err)
		}
		checkInvariants(t, s)
	})
}

func TestStore_DeleteClient(t *testing.T) {
	s := MustOpenStore(t, Config{})
	c, other := MustRegister(t, s), MustRegister(t, s)
	tok := MustTokens(t, s, c.ID)
	otherTok := MustTokens(t, s, other.ID)
	code, verifier := MustCode(t, s, c.ID)

	if err := s.DeleteClient(c.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteClient(c.ID); err != ErrInvalidClient {
		t.Errorf("second delete: %v, want ErrInvalidClient", err)
	}
	if _, err := s.Client(c.ID); err != ErrInvalidClient {
		t.Errorf("Client after delete: %v", err)
	}
	if s.GrantActive(tok.GrantID) {
		t.Error("deleted client's grant still active")
	}
	if !s.GrantActive(otherTok.GrantID) {
		t.Error("other client's grant revoked")
	}
	// A removed client gets invalid_client, so that it registers again.
	if _, err := s.Refresh(tok.RefreshToken, c.ID, nil, ""); err != ErrInvalidClient {
		t.Errorf("refresh: %v, want ErrInvalidClient", err)
	}
	if _, err := s.ExchangeCode(code, c.ID, testRedirect, verifier, testResource); err != ErrInvalidClient {
		t.Errorf("exchange: %v, want ErrInvalidClient", err)
	}
	if _, err := s.IssueCode(CodeRequest{ClientID: c.ID, RedirectURI: testRedirect, Challenge: "x", Subject: "owner"}); err != ErrInvalidClient {
		t.Errorf("issue code: %v, want ErrInvalidClient", err)
	}
	ev, err := s.Events(0)
	if err != nil || len(ev) != 1 || ev[0].GrantID != tok.GrantID || ev[0].ClientID != c.ID || ev[0].Kind != EventRevoked {
		t.Errorf("events = %+v, %v", ev, err)
	}
	checkInvariants(t, s)
}

func TestStore_GC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := MustOpenStore(t, Config{})
		start := time.Now()

		// Registered at start.
		neverAuthorized := MustRegister(t, s)
		authorizedThenIdle := MustRegister(t, s)
		MustTokens(t, s, authorizedThenIdle.ID)
		active := MustRegister(t, s)
		activeTok := MustTokens(t, s, active.ID)
		revoked := MustTokens(t, s, active.ID)
		if err := s.RevokeGrant(revoked.GrantID); err != nil {
			t.Fatal(err)
		}
		MustCode(t, s, active.ID) // expires unused

		// 10 minutes later: nothing to collect yet.
		time.Sleep(10 * time.Minute)
		young := MustRegister(t, s)
		st, err := s.GC(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if st != (GCStats{}) {
			t.Errorf("GC at 10m: %+v, want nothing", st)
		}

		// 20 minutes: the client never authorized 15 minutes after it registered goes; the
		// younger one stays.
		time.Sleep(10 * time.Minute)
		if st, err = s.GC(time.Now()); err != nil {
			t.Fatal(err)
		}
		if want := (GCStats{Clients: 1}); st != want {
			t.Errorf("GC at 20m: %+v, want %+v", st, want)
		}

		// 26h: the younger never-authorized client, the old code and the revoked family go.
		time.Sleep(26*time.Hour - 20*time.Minute)
		st, err = s.GC(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if want := (GCStats{Clients: 1, Codes: 4, Grants: 1, RefreshTokens: 1}); st != want {
			t.Errorf("GC at 26h: %+v, want %+v", st, want)
		}
		for _, tt := range []struct {
			c    *Client
			kept bool
		}{{neverAuthorized, false}, {authorizedThenIdle, true}, {active, true}, {young, false}} {
			if _, err := s.Client(tt.c.ID); (err == nil) != tt.kept {
				t.Errorf("client registered at %v: kept = %v, want %v", tt.c.CreatedAt.Sub(start), err == nil, tt.kept)
			}
		}

		// Keep active in use every 20 days; authorizedThenIdle is unused for 90 days.
		tok := activeTok
		for range 4 {
			time.Sleep(20 * 24 * time.Hour)
			if tok, err = s.Refresh(tok.RefreshToken, active.ID, nil, ""); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(9 * 24 * time.Hour) // 90 days and 2h after start
		st, err = s.GC(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Client(authorizedThenIdle.ID); err != ErrInvalidClient {
			t.Errorf("client unused for 90 days kept: %v", err)
		}
		if _, err := s.Client(active.ID); err != nil {
			t.Errorf("client in use removed: %v", err)
		}
		if _, err := s.Client(young.ID); err != ErrInvalidClient {
			t.Errorf("never-authorized client kept: %v", err)
		}
		// authorizedThenIdle's family was idle for 90 days: removed, tokens too.
		if st.Clients != 1 || st.Grants != 1 || st.RefreshTokens != 1 {
			t.Errorf("GC at 91d: %+v", st)
		}
		checkInvariants(t, s)

		// Past RefreshMax + Retention, the active family goes too.
		time.Sleep(2 * 24 * time.Hour)
		if _, err := s.Refresh(tok.RefreshToken, active.ID, nil, ""); !errors.Is(err, ErrInvalidGrant) {
			t.Errorf("refresh of a family past RefreshMax: %v", err)
		}
		st, err = s.GC(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if st.Grants != 1 || st.RefreshTokens != 5 {
			t.Errorf("GC after max age: %+v", st)
		}
		if s.GrantActive(tok.GrantID) {
			t.Error("collected grant still active")
		}
		checkInvariants(t, s)
	})
}

func TestStore_GCEvents(t *testing.T) {
	s := MustOpenStore(t, Config{})
	err := s.db.Update(func(tx *kv.Tx) error {
		for range MaxEvents + 3 {
			if err := appendEvent(tx, Event{Kind: EventRevoked}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.GC(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Events != 3 {
		t.Errorf("GC removed %d events, want 3", st.Events)
	}
	ev, err := s.Events(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev) != MaxEvents || ev[0].Seq != MaxEvents+3 || ev[len(ev)-1].Seq != 4 {
		t.Errorf("kept %d events, %d..%d", len(ev), ev[len(ev)-1].Seq, ev[0].Seq)
	}
}
