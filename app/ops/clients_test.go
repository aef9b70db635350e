package ops_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
	"github.com/ownsona/ownsona/kv/kvtest"
	"github.com/ownsona/ownsona/oauth/grant"
)

// TestClientsPrune (issue 13, item 4): `ownsona clients prune` removes at once the clients
// never authorized within 15 minutes of registering, and keeps the rest.
func TestClientsPrune(t *testing.T) {
	path := MustCreateDB(t, filepath.Join(t.TempDir(), "ownsona.db"))
	db := kvtest.OpenFile(t, path, kv.Options{Migrations: memory.Migrations})
	at := testNow.Add(-time.Hour)
	g, err := grant.Open(db, grant.Config{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	abandoned, err := g.RegisterClient(grant.ClientMeta{Name: "abandoned", RedirectURIs: []string{"http://127.0.0.1:9/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	at = testNow.Add(-5 * time.Minute)
	fresh, err := g.RegisterClient(grant.ClientMeta{Name: "fresh", RedirectURIs: []string{"http://127.0.0.1:9/cb"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	out := mustRun(t, newEnv(path, ""), "clients", "prune")
	if want := "removed 1 client, 0 expired codes and 0 dead grants"; strings.TrimSpace(out) != want {
		t.Errorf("clients prune printed %q, want %q", out, want)
	}
	list := mustRun(t, newEnv(path, ""), "clients", "list")
	if strings.Contains(list, abandoned.ID) || !strings.Contains(list, fresh.ID) {
		t.Errorf("clients list after prune:\n%s\nwant %s gone and %s kept", list, abandoned.ID, fresh.ID)
	}
}
