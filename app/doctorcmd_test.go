package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ownsona/ownsona/kv"
)

func TestRun_Doctor(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	k, err := kv.Open(db, kv.Options{})
	if err != nil {
		t.Fatal(err)
	}
	k.Close()
	env := filepath.Join(dir, "ownsona.env")
	if err := os.WriteFile(env, []byte("OWNSONA_TLS=acme\nOWNSONA_DOMAIN=mem.example.com\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(context.Background(), args, func(string) string { return "" }, nil, &out, io.Discard)
		return out.String(), err
	}
	out, err := run("doctor", "--db", db, "--env-file", env)
	if err != nil || !strings.Contains(out, "ok   public URL https://mem.example.com: issuer https://mem.example.com") || !strings.Contains(out, "ok   tls acme") {
		t.Errorf("doctor --env-file: %v\n%s", err, out)
	}
	out, err = run("doctor", "--db", db, "--public-url", "http://mem.example.com")
	var ue *UsageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(out, "FAIL public URL http://mem.example.com is not https") {
		t.Errorf("doctor with an http URL: %v\n%s", err, out)
	}
	if _, err := run("doctor", "--timeout", "soon"); !errors.As(err, &ue) {
		t.Errorf("doctor --timeout soon: %v", err)
	}
	out, err = run("install-service", "--dry-run", "--unit", filepath.Join(dir, "ownsona.service"))
	if err != nil || !strings.Contains(out, "\nExecStart=/usr/local/bin/ownsona serve --db /var/lib/ownsona/ownsona.db\n") {
		t.Errorf("install-service --dry-run: %v\n%s", err, out)
	}
}
