package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ownsona/ownsona/app/internal/s3test"
)

// TestSystem_BackupsAndDoctor: the console's System page lists the scheduled backups of
// --backup-dir, newest first, and the doctor's local findings about this server's file.
func TestSystem_BackupsAndDoctor(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t, clock)
	cfg.BackupDir = filepath.Join(t.TempDir(), "backups")
	a := MustOpen(t, cfg)
	b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
	b.signIn()
	if page := b.page("/console/system"); !strings.Contains(page, "None yet: the first is taken") {
		t.Errorf("before the first backup (no directory yet):\n%s", page)
	}
	var names []string
	for range 2 {
		p, err := a.backupNow()
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(p))
		clock.Advance(time.Minute) // within the console session's idle timeout
	}
	if err := os.WriteFile(filepath.Join(cfg.BackupDir, "notes.txt"), []byte("not a backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := a.backupFiles()
	if err != nil || len(files) != 2 || files[0].Name != names[1] || files[1].Name != names[0] || files[0].Size == 0 ||
		!files[0].Time.Equal(clock.Now().Add(-time.Minute).Truncate(time.Second)) {
		t.Fatalf("backupFiles = %+v, %v; want %v newest first, timed by their names", files, err, names)
	}
	page := b.page("/console/system")
	newest, older := strings.Index(page, names[1]), strings.Index(page, names[0])
	if newest < 0 || older < newest || strings.Contains(page, "notes.txt") {
		t.Errorf("the page does not list %v newest first, and only them:\n%s", names, page)
	}
	for _, want := range []string{`<span class="badge">ok</span> db ` + cfg.DB, "Doctor"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
}

// TestSystem_CLIImportsListed (issue 30, item 7): an `ownsona import` run while the server
// holds the file goes through its admin socket, and the console's System page lists it beside
// the uploaded imports.
func TestSystem_CLIImportsListed(t *testing.T) {
	a := MustOpen(t, testConfig(t, newFakeClock()))
	if err := a.openAdminSocket(t.Context()); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "garden-notes.md")
	if err := os.WriteFile(file, []byte("- The tomatoes go in after the last frost\n- Basil by the kitchen door\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	if err := Run(t.Context(), []string{"import", file, "--db", a.cfg.DB}, func(string) string { return "" }, strings.NewReader(""), &out, &errOut); err != nil {
		t.Fatalf("ownsona import: %v\n%s", err, errOut.String())
	}
	b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
	b.signIn()
	page := b.page("/console/system")
	for _, want := range []string{"garden-notes.md", "ownsona import (command line)"} {
		if !strings.Contains(page, want) {
			t.Errorf("the System page after a command-line import lacks %q", want)
		}
	}
}

// TestSystem_OffsiteFailureShown: with the bucket's server down, a scheduled backup keeps its
// local copy, and the System page says the upload failed and the local copy is kept; the
// secret key is not on the page.
func TestSystem_OffsiteFailureShown(t *testing.T) {
	clock := newFakeClock()
	cfg := testConfig(t, clock)
	cfg.BackupDir = filepath.Join(t.TempDir(), "backups")
	cfg.BackupS3, cfg.BackupS3Endpoint, cfg.BackupS3Region = "s3://backups/pi", s3test.DownAddr(t), "us-east-1"
	cfg.BackupS3AccessKeyID, cfg.BackupS3SecretAccessKey = "ownsona-access", "ownsona-secret-0cc175b9c0f1b6a8"
	a := MustOpen(t, cfg)
	b := newConsoleBrowser(t, "http://127.0.0.1", handlerTransport{a.Handler()})
	b.signIn()
	if page := b.page("/console/system"); !strings.Contains(page, "none uploaded since the server started") {
		t.Errorf("before the first backup:\n%s", page)
	}
	p, err := a.backupNow()
	if err == nil || p == "" {
		t.Fatalf("backupNow = %q, %v; want the local copy and an error", p, err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Errorf("the local copy is gone: %v", err)
	}
	page := b.page("/console/system")
	for _, want := range []string{"written and checked", "last upload failed", "The local copy is kept", "s3://backups/pi/"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, cfg.BackupS3SecretAccessKey) {
		t.Error("the page shows the secret key")
	}
	if st := a.backupStatus(); st.Offsite.OK || st.Offsite.Err == "" || !st.Local.OK {
		t.Errorf("backupStatus = %+v", st)
	}
}
