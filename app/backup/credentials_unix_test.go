//go:build unix

package backup

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestLoadCredentials_FIFO: a named pipe given as the credentials file is refused at once;
// opening it first would wait for a writer and hold the start forever.
func TestLoadCredentials_FIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "credentials")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	_, err := LoadCredentials(p, func(string) string { return "" })
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("LoadCredentials(fifo) = %v, want it refused as not a regular file", err)
	}
}
