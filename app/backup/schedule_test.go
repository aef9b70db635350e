package backup_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/internal/s3test"
	"github.com/ownsona/ownsona/app/memory"
	"github.com/ownsona/ownsona/kv"
)

// mustOpenDB opens a new database with ownsona's schema, closed at cleanup.
func mustOpenDB(tb testing.TB) *kv.DB {
	tb.Helper()
	db, err := kv.Open(filepath.Join(tb.TempDir(), "ownsona.db"), kv.Options{Migrations: memory.Migrations})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// clock is a clock that tests move.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// objects are the names of the files under the posix gateway's bucket directory, sorted.
func objects(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".sgwtmp") {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// TestScheduler_Offsite runs scheduled backups against a real S3 server (versitygw) on
// loopback: each is uploaded and the bucket keeps the newest BackupS3Keep of ours and every
// object we did not name; with wrong credentials, or the server down, the local copy is kept
// and the status says why; the credentials are in no log line and no status (SECURITY.md
// ST-14: backups hold every secret, and so does the key to the bucket).
func TestScheduler_Offsite(t *testing.T) {
	srv := s3test.Start(t, "backups")
	db := mustOpenDB(t)
	c := &clock{time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)}
	var logs bytes.Buffer
	newScheduler := func(t *testing.T, dir string, creds backup.Credentials, endpoint string) *backup.Scheduler {
		r, err := backup.NewRemote(backup.S3Config{URL: "s3://backups/pi", Endpoint: endpoint, Region: "us-east-1", Keep: 2, Credentials: creds})
		if err != nil {
			t.Fatal(err)
		}
		return backup.NewScheduler(db, backup.Options{Dir: dir, Keep: 3, Every: time.Hour, Offsite: r, Now: c.now, Log: zerolog.New(&logs)})
	}
	good := backup.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}
	bucket := filepath.Join(srv.Root, "backups")
	// Objects we did not name, under the prefix and beside it, which retention must leave.
	foreign := []string{"pi/notes.txt", "pi/ownsona-latest.db", "pi/old/ownsona-20200101T000000Z.db", "ownsona-20200101T000000Z.db"}
	for _, name := range foreign {
		p := filepath.Join(bucket, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("not ours"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("uploaded and retained", func(t *testing.T) {
		dir := t.TempDir()
		s := newScheduler(t, dir, good, srv.Endpoint)
		var keys []string
		for range 4 {
			path, err := s.BackupNow(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			st := s.Status()
			want := "s3://backups/pi/" + filepath.Base(path)
			if !st.Local.OK || !st.Offsite.OK || st.Offsite.Key != want || st.Offsite.Err != "" || !st.Offsite.At.Equal(c.t) {
				t.Fatalf("status %+v, want both ok and the object %s", st, want)
			}
			keys = append(keys, "pi/"+filepath.Base(path))
			c.t = c.t.Add(time.Hour)
		}
		want := append(slices.Clone(foreign), keys[2:]...)
		slices.Sort(want)
		if got := objects(t, bucket); !slices.Equal(got, want) {
			t.Errorf("the bucket holds %v, want %v (the newest 2 of ours and every other object)", got, want)
		}
		local, _ := s.Files()
		if len(local) != 3 {
			t.Errorf("%d local copies, want 3", len(local))
		}
		uploaded, _ := os.ReadFile(filepath.Join(bucket, "pi", filepath.Base(keys[3])))
		written, _ := os.ReadFile(filepath.Join(dir, filepath.Base(keys[3])))
		if len(uploaded) == 0 || !bytes.Equal(uploaded, written) {
			t.Errorf("the object (%d bytes) is not the local copy (%d bytes)", len(uploaded), len(written))
		}
	})

	failures := []struct {
		name     string
		creds    backup.Credentials
		endpoint func() string
		want     string
	}{
		{"wrong credentials", backup.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong-secret-1f3870be274f6c49"}, func() string { return srv.Endpoint }, "signature"},
		{"server down", good, func() string { return s3test.DownAddr(t) }, "connection refused"},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			before := objects(t, bucket)
			s := newScheduler(t, dir, tt.creds, tt.endpoint())
			path, err := s.BackupNow(t.Context())
			c.t = c.t.Add(time.Hour)
			if err == nil || path == "" {
				t.Fatalf("BackupNow = %q, %v; want the local path and an error", path, err)
			}
			if err := backup.CheckFile(path); err != nil {
				t.Errorf("the local copy was not kept whole: %v", err)
			}
			st := s.Status()
			if !st.Local.OK || st.Offsite.OK || st.Offsite.At.IsZero() || !strings.Contains(strings.ToLower(st.Offsite.Err), tt.want) {
				t.Errorf("status %+v; want local ok, off-site failed with %q", st, tt.want)
			}
			if !strings.Contains(logs.String(), "the local copy is kept") {
				t.Errorf("the log does not say the upload failed:\n%s", logs.String())
			}
			if got := objects(t, bucket); !slices.Equal(got, before) {
				t.Errorf("the bucket changed: %v, was %v", got, before)
			}
			for _, secret := range []string{tt.creds.SecretAccessKey, tt.creds.AccessKeyID} {
				if strings.Contains(logs.String(), secret) || strings.Contains(st.Offsite.Err, secret) || strings.Contains(err.Error(), secret) {
					t.Errorf("a credential (%.4s…) is in the log, the status or the error", secret)
				}
			}
		})
	}
	if strings.Contains(logs.String(), srv.SecretKey) || strings.Contains(logs.String(), srv.AccessKey) {
		t.Errorf("a credential is in the log:\n%s", logs.String())
	}
}

// TestRemote_Fetch downloads the newest copy under a prefix, or one named, and refuses one too
// large or whose bytes are not the ones uploaded; nothing is left behind by a refusal.
func TestRemote_Fetch(t *testing.T) {
	srv := s3test.Start(t, "backups")
	db := mustOpenDB(t)
	dir := t.TempDir()
	remote := func(url string) *backup.Remote {
		r, err := backup.NewRemote(backup.S3Config{URL: url, Endpoint: srv.Endpoint, Region: "us-east-1",
			Credentials: backup.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	var names []string
	for _, stamp := range []string{"20261122T030000Z", "20261123T030000Z"} {
		p := filepath.Join(dir, "ownsona-"+stamp+".db")
		if _, err := backup.ToFile(db, p); err != nil {
			t.Fatal(err)
		}
		if _, err := remote("s3://backups/pi/").Upload(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(p))
	}
	for _, tt := range []struct{ url, want string }{
		{"s3://backups/pi", "s3://backups/pi/" + names[1]},
		{"s3://backups/pi/", "s3://backups/pi/" + names[1]},
		{"s3://backups/pi/" + names[0], "s3://backups/pi/" + names[0]},
	} {
		t.Run(tt.url, func(t *testing.T) {
			to := t.TempDir()
			file, from, err := remote(tt.url).Fetch(t.Context(), to, 1<<30)
			if err != nil || from != tt.want {
				t.Fatalf("Fetch = %q, %q, %v; want %s", file, from, err, tt.want)
			}
			if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(file) != to {
				t.Errorf("downloaded %s: %v, %v", file, fi.Mode(), err)
			}
			if err := backup.CheckFile(file); err != nil {
				t.Error(err)
			}
		})
	}
	refused := func(t *testing.T, url string, max int64, want string) {
		t.Helper()
		to := t.TempDir()
		_, _, err := remote(url).Fetch(t.Context(), to, max)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Fetch = %v; want an error with %q", err, want)
		}
		if left, _ := os.ReadDir(to); len(left) > 0 {
			t.Errorf("left %v behind", left)
		}
	}
	t.Run("too large", func(t *testing.T) { refused(t, "s3://backups/pi", 4096, "more than the 4096 allowed") })
	t.Run("changed in the bucket", func(t *testing.T) {
		p := filepath.Join(srv.Root, "backups", "pi", names[0])
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0xff
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, "s3://backups/pi/"+names[0], 1<<30, "SHA-256")
	})
	t.Run("none of ours", func(t *testing.T) { refused(t, "s3://backups/elsewhere", 1<<30, "no backup named") })
}
