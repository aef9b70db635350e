package backup_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/app/backup"
)

// TestLoadCredentials reads the key pair from the environment or an AWS credentials file, and
// refuses a file other users may read (SECURITY.md ST-14), naming keys but never a value.
func TestLoadCredentials(t *testing.T) {
	const id, secret = "AKIAEXAMPLE7", "s3cr3t/EXAMPLE+key"
	env := func(k string) string {
		return map[string]string{"AWS_ACCESS_KEY_ID": "from-env", "AWS_SECRET_ACCESS_KEY": "env-secret"}[k]
	}
	file := func(t *testing.T, mode os.FileMode, text string) string {
		p := filepath.Join(t.TempDir(), "credentials")
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	good := "# for ownsona\n[other]\naws_access_key_id = nope\n\n[default]\naws_access_key_id = " + id + "\naws_secret_access_key=" + secret + "\n"
	tests := []struct {
		name    string
		file    func(t *testing.T) string
		getenv  func(string) string
		want    backup.Credentials
		wantErr string
	}{
		{"environment", func(*testing.T) string { return "" }, env, backup.Credentials{AccessKeyID: "from-env", SecretAccessKey: "env-secret"}, ""},
		{"environment unset", func(*testing.T) string { return "" }, func(string) string { return "" }, backup.Credentials{}, "set AWS_ACCESS_KEY_ID"},
		{"file wins over the environment", func(t *testing.T) string { return file(t, 0o600, good) }, env, backup.Credentials{AccessKeyID: id, SecretAccessKey: secret}, ""},
		{"file without a section", func(t *testing.T) string {
			return file(t, 0o400, "aws_access_key_id=a\naws_secret_access_key=b\n")
		}, env, backup.Credentials{AccessKeyID: "a", SecretAccessKey: "b"}, ""},
		{"file readable by others", func(t *testing.T) string { return file(t, 0o644, good) }, env, backup.Credentials{}, "mode 0644"},
		{"file readable by the group", func(t *testing.T) string { return file(t, 0o640, good) }, env, backup.Credentials{}, "chmod 600"},
		{"file without the secret", func(t *testing.T) string {
			return file(t, 0o600, "[default]\naws_access_key_id = "+id+"\n")
		}, env, backup.Credentials{}, "no aws_secret_access_key"},
		{"file without default", func(t *testing.T) string { return file(t, 0o600, "[other]\naws_access_key_id = x\n") }, env, backup.Credentials{}, "no [default] profile"},
		{"missing file", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none") }, env, backup.Credentials{}, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := backup.LoadCredentials(tt.file(t), tt.getenv)
			if got != tt.want || (err == nil) != (tt.wantErr == "") || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("LoadCredentials = %v, %v; want %v, an error with %q", got, err, tt.want, tt.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), id)) {
				t.Errorf("the error shows a credential: %v", err)
			}
		})
	}
	t.Run("printed", func(t *testing.T) {
		c := backup.Credentials{AccessKeyID: id, SecretAccessKey: secret}
		for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", struct{ C backup.Credentials }{c})} {
			if strings.Contains(s, secret) || strings.Contains(s, id) {
				t.Errorf("printed as %s", s)
			}
		}
	})
}

// TestParseS3URL takes s3://BUCKET/PATH and refuses what is not one.
func TestParseS3URL(t *testing.T) {
	for _, tt := range []struct{ in, bucket, key string }{
		{"s3://backups", "backups", ""},
		{"s3://backups/pi", "backups", "pi"},
		{"s3://my.bucket-1/a/b/ownsona-20261122T030000Z.db", "my.bucket-1", "a/b/ownsona-20261122T030000Z.db"},
	} {
		b, k, err := backup.ParseS3URL(tt.in)
		if err != nil || b != tt.bucket || k != tt.key {
			t.Errorf("ParseS3URL(%q) = %q, %q, %v; want %q, %q", tt.in, b, k, err, tt.bucket, tt.key)
		}
	}
	for _, bad := range []string{"", "backups/pi", "https://backups/pi", "s3://Backups/pi", "s3://b/pi", "s3://backups/a/../b", "s3://backups/a//b", "s3://key:secret@backups/pi", "s3://backups/pi?x=1"} {
		if _, _, err := backup.ParseS3URL(bad); err == nil {
			t.Errorf("ParseS3URL(%q) succeeded", bad)
		}
	}
}
