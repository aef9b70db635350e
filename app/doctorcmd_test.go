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
	"time"

	"github.com/ownsona/ownsona/app/doctor"
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

// TestRun_DoctorClient runs doctor --client over the real tool catalogue (built in-process,
// without a server) and serve's redirect policy: for Cursor without a public URL every finding
// is ok; an unknown client is a usage error; a tool allowlist without search and fetch fails
// ChatGPT's rule. ChatGPT's own run needs the network, so its tool rules are checked against
// the catalogue through doctor.Run here.
func TestRun_DoctorClient(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "ownsona.db")
	run := func(getenv func(string) string, args ...string) (string, error) {
		var out bytes.Buffer
		err := Run(context.Background(), args, getenv, nil, &out, io.Discard)
		return out.String(), err
	}
	none := func(string) string { return "" }
	out, err := run(none, "doctor", "--db", db, "--client", "cursor")
	if err != nil || !strings.Contains(out, "ok   cursor: registration accepts the redirect URIs cursor://anysphere.cursor-mcp/oauth/callback") ||
		!strings.Contains(out, "tools, every name matches") || !strings.Contains(out, "ok   cursor: no public URL") {
		t.Errorf("doctor --client cursor: %v\n%s", err, out)
	}
	var ue *UsageError
	if _, err := run(none, "doctor", "--db", db, "--client", "copilot"); !errors.As(err, &ue) {
		t.Errorf("doctor --client copilot: %v, want a usage error", err)
	}
	out, err = run(none, "doctor", "--db", db, "--client", "cursor", "--redirect-schemes", "vscode")
	if err == nil || !strings.Contains(out, "FAIL cursor: registration refuses Cursor's redirect URI") || !strings.Contains(out, "add cursor to OWNSONA_REDIRECT_SCHEMES") {
		t.Errorf("doctor --client cursor without the cursor scheme: %v\n%s", err, out)
	}

	tools, err := doctorTools(NewConfig())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := doctor.Run(context.Background(), doctor.Options{DB: db, KnownClient: "chatgpt", Tools: tools, PublicURL: "", Timeout: time.Second}, &buf); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"ok   chatgpt: search and fetch are offered, read-only",
		"ok   chatgpt: every tool has annotations with a title and the readOnlyHint, destructiveHint and idempotentHint",
		"tools, every name matches",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("the catalogue breaks a ChatGPT rule: no %q\n%s", want, &buf)
		}
	}
	cfg := NewConfig()
	cfg.Tools = []string{"recall", "remember"}
	if ts, err := doctorTools(cfg); err != nil || len(ts) != 2 {
		t.Errorf("doctorTools with OWNSONA_TOOLS=recall,remember: %d tools, %v", len(ts), err)
	}
}
