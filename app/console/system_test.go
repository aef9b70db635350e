package console_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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
	if _, _, err := f.mem.Remember(context.Background(), []memory.Draft{{Text: "four", Supersedes: []uint64{ids[1]}}}, memory.Origin{Client: "stdio"}); err != nil {
		t.Fatal(err)
	}
	// The counts add up: 2 active + 1 superseded + 1 forgotten = 4 stored.
	body := f.signedIn(t).page(t, "/console/system")
	wantContains(t, "the system page", body, "Healthy", "<dt>database</dt><dd>ok</dd>", "9.9.9-test",
		"<dt>Active</dt><dd>2</dd>", "<dt>Superseded (kept as history)</dt><dd>1</dd>", "<dt>Forgotten (in the trash)</dt><dd>1</dd>",
		"<dt>Stored in all</dt><dd>4</dd>", "<dt>Room for memories</dt><dd>4 stored of at most 250000 (<code>--max-memories</code>)</dd>",
		fmt.Sprintf("of at most %d MiB (<code>--max-file-mb</code>); the file takes", memory.DefaultMaxFileBytes>>20),
		"none: search is lexical only", "<dt>Vector index</dt><dd>ready</dd>", "Download a backup now")
}

// TestConsole_Backup: "download a backup now" streams a file that opens as the one database, with
// what the live file held, and passes bbolt's consistency check.
func TestConsole_Backup(t *testing.T) {
	f := MustOpen(t)
	f.remember(t, nil, "Kept in the backup")
	b := f.signedIn(t)
	w := b.post("/console/system/backup", url.Values{"password": {testPassword}})
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

// TestConsole_BackupPassword: the backup holds the signing keys, the password hash and the CA's
// key, so a session alone cannot download it: without the password, or with a wrong one, nothing
// is streamed and the page says why (SECURITY.md CO-01).
func TestConsole_BackupPassword(t *testing.T) {
	f := MustOpen(t)
	f.remember(t, nil, "Not for a stolen session")
	b := f.signedIn(t)
	refused := func(name, password, want string) scenario {
		return scenario{Name: name, Method: http.MethodPost, URL: "/console/system/backup", FormFor: withCSRF(url.Values{"password": {password}}),
			WantStatus: http.StatusSeeOther, WantNoHeaders: []string{"Content-Disposition"},
			Check: func(t *testing.T, rec *httptest.ResponseRecorder) {
				if ct := rec.Header().Get("Content-Type"); ct == "application/octet-stream" {
					t.Errorf("Content-Type %q: a backup was sent", ct)
				}
			},
			After: func(t *testing.T, b *browser, _ *httptest.ResponseRecorder) {
				wantContains(t, "the page after asking", b.page(t, "/console/system"), want)
			}}
	}
	signedIn.RunOn(t, b, []scenario{
		refused("no password", "", "No backup downloaded: type your password to confirm it is you."),
		refused("a wrong password", "not it", "No backup downloaded: that is not your password."),
	})
	if got := f.entries(t); strings.Join(got, ";") != "console/backup error;console/backup error" {
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

// TestConsole_SystemBackupsAndDoctor: the recent scheduled backups, newest first, and the
// doctor's local findings, each shown as text; or what to do when there are none.
func TestConsole_SystemBackupsAndDoctor(t *testing.T) {
	day := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	files := []console.BackupFile{
		{Name: "ownsona-20261121T030000Z.db", Size: 1 << 20, Time: day.Add(-24 * time.Hour)},
		{Name: "ownsona-20261122T030000Z.db", Size: 1536, Time: day},
	}
	const report = "ok   db /srv/ownsona.db (1.0 MiB, mode 0600, owner ownsona)\n" +
		"FAIL public URL <script>alert(1)</script> is not https — set OWNSONA_PUBLIC_URL to https://…\n" +
		"doctor: 1 problem: change what the FAIL lines say\n"
	var asked []bool // whether each doctor run had a deadline
	// system is the system page of a console of its own with backups and doctor.
	system := func(name string, backups func() ([]console.BackupFile, error), doctor console.DoctorFunc, want, wantNot []string) scenario {
		return scenario{Name: name, Before: func(b *browser) { b.f.SetSystem(backups, doctor) },
			Method: http.MethodGet, URL: "/console/system", WantStatus: http.StatusOK, WantBody: want, WantNoBody: wantNot}
	}
	signedIn.Run(t, []scenario{
		system("both",
			func() ([]console.BackupFile, error) { return files, nil },
			func(ctx context.Context) (string, error) {
				_, ok := ctx.Deadline()
				asked = append(asked, ok)
				return report, nil
			},
			[]string{
				"<dt>2026-11-22 03:00 UTC</dt><dd><code class=\"wrap\">ownsona-20261122T030000Z.db</code>, 1.5 KiB</dd>\n" +
					"<dt>2026-11-21 03:00 UTC</dt><dd><code class=\"wrap\">ownsona-20261121T030000Z.db</code>, 1.0 MiB</dd>",
				`<p class="state bad">1 problem: change what the FAIL lines say</p>`,
				`<span class="badge">ok</span> db /srv/ownsona.db (1.0 MiB, mode 0600, owner ownsona)`,
				`<span class="badge">FAIL</span> public URL &lt;script&gt;alert(1)&lt;/script&gt; is not https<br><span class="hint">set OWNSONA_PUBLIC_URL to https://…</span>`,
			},
			[]string{"<script>alert"}),
		system("none configured", nil, nil,
			[]string{"No scheduled backups: start the server with <code>--backup-dir</code>", "run <code>ownsona doctor</code> on the server"},
			[]string{`class="badge"`}),
		system("empty directory, healthy",
			func() ([]console.BackupFile, error) { return nil, nil },
			func(context.Context) (string, error) {
				return "ok   db /srv/ownsona.db (40 KiB)\ndoctor: no problems found\n", nil
			},
			[]string{"None yet: the first is taken", `<p class="state good">no problems found</p>`}, nil),
		system("failures",
			func() ([]console.BackupFile, error) { return nil, errors.New("permission denied") },
			func(context.Context) (string, error) { return "", errors.New("boom") },
			[]string{"The backup directory could not be read", "The doctor could not run"},
			[]string{"permission denied", "boom"}),
	})
	if len(asked) != 1 || !asked[0] {
		t.Errorf("doctor runs with a deadline: %v, want one run with one", asked)
	}
}
