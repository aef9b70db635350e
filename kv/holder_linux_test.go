//go:build linux

package kv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHolder(t *testing.T) {
	t.Run("the process that has the file open", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "held.db")
		MustOpen(t, path, Options{})
		pid, cmdline, ok := Holder(path)
		if !ok || pid != os.Getpid() {
			t.Fatalf("Holder() = %d, %q, %v; want this process, %d", pid, cmdline, ok, os.Getpid())
		}
		exe, _ := os.Executable()
		if got, want := strings.Fields(cmdline)[0], filepath.Base(exe); got != want {
			t.Errorf("command line %q starts with %q, want the program's base name %q", cmdline, got, want)
		}
	})
	t.Run("a file nobody holds", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "free.db")
		db := MustOpen(t, path, Options{})
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if pid, cmdline, ok := Holder(path); ok {
			t.Errorf("Holder() = %d, %q, true; want false after Close", pid, cmdline)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		if _, _, ok := Holder(filepath.Join(t.TempDir(), "none.db")); ok {
			t.Error("Holder() of a missing file = true")
		}
	})
}
