package console_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/console"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

// TestConsole_System: health, counts, the embedder and the index.
func TestConsole_System(t *testing.T) {
	f := MustOpen(t)
	ids := f.remember(t, []string{"aa", "bb"}, "one", "two", "three")
	if _, err := f.mem.Forget(ids[:1], memory.Forgetting{}); err != nil {
		t.Fatal(err)
	}
	body := f.signedIn(t).page(t, "/console/system")
	wantContains(t, "the system page", body, "Healthy", "<dt>database</dt><dd>ok</dd>", "9.9.9-test",
		"<dt>Active</dt><dd>2</dd>", "<dt>Forgotten (in the trash)</dt><dd>1</dd>", "<dt>Stored in all</dt><dd>3</dd>",
		"none: search is lexical only", "<dt>Vector index</dt><dd>ready</dd>", "Download a backup now")
}

// TestConsole_Backup: "download a backup now" streams a file that opens as the one database, with
// what the live file held, and passes bbolt's consistency check.
func TestConsole_Backup(t *testing.T) {
	f := MustOpen(t)
	f.remember(t, nil, "Kept in the backup")
	b := f.signedIn(t)
	w := b.post("/console/system/backup", nil)
	if w.Code != http.StatusOK {
		t.Fatalf("backup: %d\n%s", w.Code, w.Body)
	}
	if cd := w.Header().Get("Content-Disposition"); !regexp.MustCompile(`^attachment; filename="ownsona-\d{8}T\d{6}Z\.db"$`).MatchString(cd) {
		t.Errorf("Content-Disposition %q", cd)
	}
	if ct, cc := w.Header().Get("Content-Type"), w.Header().Get("Cache-Control"); ct != "application/octet-stream" || cc != "no-store" {
		t.Errorf("Content-Type %q, Cache-Control %q", ct, cc)
	}
	path := filepath.Join(t.TempDir(), "backup.db")
	if err := os.WriteFile(path, w.Body.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := kv.Open(path, kv.Options{ReadOnly: true, Migrations: memory.Migrations})
	if err != nil {
		t.Fatalf("open the backup: %v", err)
	}
	defer db.Close()
	if err := db.Check(); err != nil {
		t.Errorf("check the backup: %v", err)
	}
	c, err := memory.Check(db)
	if err != nil || c.Memories != 1 || len(c.Problems) > 0 {
		t.Errorf("memories in the backup: %+v, %v", c, err)
	}
	if got := f.entries(t); strings.Join(got, ";") != "console/backup ok" {
		t.Errorf("audit log: %v", got)
	}
}

// TestConsole_NoBackup: without Config.Backup the page offers none and the action refuses.
func TestConsole_NoBackup(t *testing.T) {
	f := MustOpen(t, func(o *options) { o.cfg = func(c *console.Config) { c.Backup = nil } })
	b := f.signedIn(t)
	wantNotContains(t, "the system page", b.page(t, "/console/system"), "Download a backup now")
	body := b.mustPost(t, "/console/system/backup", nil)
	wantContains(t, "the page after asking", body, "This server offers no backup download.")
}
