package ops_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/backup"
	"github.com/ownsona/ownsona/app/internal/s3test"
)

// TestRestoreCmd_FromS3: `restore --from s3://…` downloads the newest copy under a prefix from
// a real S3 server (versitygw on loopback), checks it and restores it, keeping the previous
// file; the credentials come from the environment.
func TestRestoreCmd_FromS3(t *testing.T) {
	srv := s3test.Start(t, "backups")
	dir := t.TempDir()
	db := MustCreateDB(t, filepath.Join(dir, "o.db"))
	mustImport(t, db, "The spare key is under the blue pot")
	snap := filepath.Join(t.TempDir(), "ownsona-20261122T030000Z.db")
	mustRun(t, newEnv(db, ""), "backup", "--to", snap)
	r, err := backup.NewRemote(backup.S3Config{URL: "s3://backups/pi", Endpoint: srv.Endpoint, Region: "us-east-1",
		Credentials: backup.Credentials{AccessKeyID: srv.AccessKey, SecretAccessKey: srv.SecretKey}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Upload(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	mustImport(t, db, "Written after the backup")
	env := newEnv(db, "")
	vars := map[string]string{"OWNSONA_DB": db, "AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey,
		"OWNSONA_BACKUP_S3_ENDPOINT": srv.Endpoint, "OWNSONA_BACKUP_S3_REGION": "us-east-1"}
	env.Getenv = func(k string) string { return vars[k] }
	out := mustRun(t, env, "restore", "--from", "s3://backups/pi")
	if !strings.Contains(out, "downloaded s3://backups/pi/ownsona-20261122T030000Z.db") || !strings.Contains(out, "the previous file is "+db+".bak-") {
		t.Errorf("restore said:\n%s", out)
	}
	got := exportTexts(t, db)
	if !got["Note: The spare key is under the blue pot"] || got["Note: Written after the backup"] {
		t.Errorf("after the restore: %v; want the backup's memories only", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".ownsona-s3-*")); len(left) > 0 {
		t.Errorf("the download was left beside the database: %v", left)
	}
	t.Run("wrong secret", func(t *testing.T) {
		vars["AWS_SECRET_ACCESS_KEY"] = "wrong-secret-1f3870be274f6c49"
		_, errs, err := run(t, env, "restore", "--from", "s3://backups/pi")
		if err == nil || strings.Contains(err.Error()+errs, "wrong-secret") {
			t.Errorf("restore = %v %s; want an error without the secret", err, errs)
		}
	})
}
