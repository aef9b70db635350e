package backup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
)

// Credentials are an S3 access key pair. They print as "[redacted]" (%v, %+v, %#v), so that a
// Config or an error that carries them never shows the keys in a log line.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
}

func (Credentials) String() string   { return "[redacted]" }
func (Credentials) GoString() string { return "[redacted]" }

// maxCredentialsFile bounds what LoadCredentials reads of a credentials file.
const maxCredentialsFile = 64 << 10

// LoadCredentials returns the S3 credentials: from file when it is not empty, else from the
// environment's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the names every S3 tool reads).
//
// The file has the AWS shared credentials format (~/.aws/credentials), which MinIO's mc,
// rclone, restic and the AWS CLI also read:
//
//	[default]
//	aws_access_key_id = AKIA...
//	aws_secret_access_key = ...
//
// The keys are those of the [default] profile, or of lines before any [profile]. A file that its group or other users may read or write is refused, as serve's
// database is by the doctor: it holds the key to every backup. Errors name the file and the
// key that is missing, never a value.
func LoadCredentials(file string, getenv func(string) string) (Credentials, error) {
	if file == "" {
		c := Credentials{AccessKeyID: getenv("AWS_ACCESS_KEY_ID"), SecretAccessKey: getenv("AWS_SECRET_ACCESS_KEY")}
		if c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return Credentials{}, errors.New("s3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --backup-s3-credentials-file")
		}
		return c, nil
	}
	// Checked before it is opened: opening a FIFO would wait for a writer.
	fi, err := os.Stat(file)
	if err != nil {
		return Credentials{}, fmt.Errorf("s3 credentials: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return Credentials{}, fmt.Errorf("s3 credentials: %s is not a regular file", file)
	}
	if perm := fi.Mode().Perm(); runtime.GOOS != "windows" && perm&0o077 != 0 {
		return Credentials{}, fmt.Errorf("s3 credentials: %s has mode %04o: other users of this machine can read or change it; chmod 600 %s", file, perm, file)
	}
	f, err := os.Open(file)
	if err != nil {
		return Credentials{}, fmt.Errorf("s3 credentials: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCredentialsFile+1))
	if err != nil {
		return Credentials{}, fmt.Errorf("s3 credentials: %w", err)
	}
	if len(b) > maxCredentialsFile {
		return Credentials{}, fmt.Errorf("s3 credentials: %s is larger than %d KiB", file, maxCredentialsFile>>10)
	}
	const profile = "default"
	c, found := parseCredentials(b, profile)
	switch {
	case !found:
		return Credentials{}, fmt.Errorf("s3 credentials: %s has no [%s] profile", file, profile)
	case c.AccessKeyID == "":
		return Credentials{}, fmt.Errorf("s3 credentials: %s: [%s] has no aws_access_key_id", file, profile)
	case c.SecretAccessKey == "":
		return Credentials{}, fmt.Errorf("s3 credentials: %s: [%s] has no aws_secret_access_key", file, profile)
	}
	return c, nil
}

// parseCredentials reads profile's keys from an AWS shared credentials file; found reports
// whether the profile appears (or, for "default", any key before the first section).
func parseCredentials(b []byte, profile string) (c Credentials, found bool) {
	section := "default"
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if name, ok := strings.CutPrefix(line, "["); ok {
			section = strings.TrimSpace(strings.TrimSuffix(name, "]"))
			section = strings.TrimSpace(strings.TrimPrefix(section, "profile "))
			found = found || section == profile
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != profile {
			continue
		}
		found = true
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "aws_access_key_id":
			c.AccessKeyID = strings.TrimSpace(v)
		case "aws_secret_access_key":
			c.SecretAccessKey = strings.TrimSpace(v)
		}
	}
	return c, found
}
