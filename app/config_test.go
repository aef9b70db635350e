package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	env := map[string]string{"OWNSONA_DB": "/env.db", "OWNSONA_LOG_LEVEL": "warn", "OWNSONA_MAX_TEXT_CHARS": "500"}
	getenv := func(k string) string { return env[k] }
	t.Run("flags win over environment over defaults", func(t *testing.T) {
		c, _, err := loadConfig("serve", []string{"--db", "/flag.db", "--addr", "127.0.0.1:9"}, getenv, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c.DB != "/flag.db" || c.LogLevel != "warn" || c.MaxTextChars != 500 || c.Addr != "127.0.0.1:9" || c.DedupThreshold != 0.9 {
			t.Errorf("config = %+v", c)
		}
	})
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown flag", []string{"--colour", "red"}, nil, "colour"},
		{"malformed number", []string{"--max-text-chars", "lots"}, nil, "--max-text-chars"},
		{"malformed env", nil, map[string]string{"OWNSONA_EMBED_TIMEOUT": "soon"}, "OWNSONA_EMBED_TIMEOUT"},
		{"bad level", []string{"--log-level", "chatty"}, nil, "log-level"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "log-format"},
		{"short metrics token", nil, map[string]string{"OWNSONA_METRICS": "1", "OWNSONA_METRICS_TOKEN": "short"}, "OWNSONA_METRICS_TOKEN"},
		{"metrics token without metrics", nil, map[string]string{"OWNSONA_METRICS_TOKEN": "0123456789abcdef0123"}, "OWNSONA_METRICS_TOKEN"},
		{"openai without url", []string{"--embedder", "openai"}, nil, "OWNSONA_EMBED_URL"},
		{"addr is serve only", []string{"--addr", "x"}, nil, "addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadConfig("stdio", tc.args, func(k string) string { return tc.env[k] }, nil)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error naming %q", err, tc.want)
			}
		})
	}
}

func TestCheckListen(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:8080": true, "localhost:1": true,
		":8080": false, "0.0.0.0:8080": false, "192.168.1.5:80": false, "example.com:80": false,
	} {
		if err := checkListen(addr, ""); (err == nil) != ok {
			t.Errorf("checkListen(%q, no public URL) = %v, want ok=%v", addr, err, ok)
		}
		if err := checkListen(addr, "https://mem.example.com"); err != nil {
			t.Errorf("checkListen(%q, public URL) = %v, want ok", addr, err)
		}
	}
}

func TestRun_Help(t *testing.T) {
	var out bytes.Buffer
	if err := Run(context.Background(), []string{"help"}, func(string) string { return "" }, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"serve", "stdio", "OWNSONA_DB", "OWNSONA_EMBED_API_KEY", "--dedup-threshold"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	err := Run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, nil, io.Discard, io.Discard)
	var ue *UsageError
	if !errors.As(err, &ue) {
		t.Errorf("unknown command: err = %v", err)
	}
	// Every command of the table is listed exactly once (doctor and install-service were
	// listed twice), and its --help prints its usage and succeeds.
	for _, c := range commands() {
		if n := strings.Count(out.String(), "\n  ownsona "+c.name+" ") + strings.Count(out.String(), "\n  ownsona "+c.name+"\n"); n != 1 {
			t.Errorf("help lists %s %d times, want once", c.name, n)
		}
		t.Run(c.name+" --help", func(t *testing.T) {
			var help bytes.Buffer
			if err := Run(context.Background(), []string{c.name, "--help"}, func(string) string { return "" }, strings.NewReader(""), &help, io.Discard); err != nil {
				t.Fatalf("err = %v, want nil", err)
			}
			if help.Len() == 0 {
				t.Error("printed nothing")
			}
		})
	}
}

// TestRun_SecondProcessRefused: while one process holds the file, a second one fails at once
// with a message that says the file is in use, and the first keeps working.
func TestRun_SecondProcessRefused(t *testing.T) {
	bin := ownsonaBinary(t)
	db := filepath.Join(t.TempDir(), "ownsona.db")
	first := exec.Command(bin, "stdio", "--db", db)
	stdin, _ := first.StdinPipe()
	stdout, _ := first.StdoutPipe()
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	defer first.Process.Kill()
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	buf := make([]byte, 100)
	if _, err := stdout.Read(buf); err != nil { // the first process has the file open
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "stdio", "--db", db).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "in use") {
		t.Fatalf("second process: err %v, output %s", err, out)
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	if n, err := stdout.Read(buf); err != nil || !strings.Contains(string(buf[:n]), `"id":2`) {
		t.Errorf("first process after refusal: %q %v", buf[:n], err)
	}
	stdin.Close()
	first.Wait()
	if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("db mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}
