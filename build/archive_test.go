package build

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteArchive: two trees with the same names, contents and executable bits, but other
// times, other permission bits and files made in another order, archive to the same bytes,
// with the entries, modes and times make dist promises.
func TestWriteArchive(t *testing.T) {
	mtime := time.Unix(1795933495, 0).UTC()
	mk := func(order []string, fileMode os.FileMode, touched time.Time) string {
		dir := filepath.Join(t.TempDir(), "ownsona-v0.1.0-linux-arm64")
		for _, name := range order {
			mode := fileMode
			if name == "ownsona" {
				mode |= 0o100
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte("contents of "+name), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, touched, touched); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	a := mk([]string{"ownsona", "LICENSE", "NOTICE", "README.md"}, 0o644, time.Now())
	b := mk([]string{"README.md", "NOTICE", "LICENSE", "ownsona"}, 0o600, time.Unix(0, 0))
	for _, ext := range []string{".tar.gz", ".zip"} {
		t.Run(ext, func(t *testing.T) {
			outA, outB := filepath.Join(t.TempDir(), "a"+ext), filepath.Join(t.TempDir(), "b"+ext)
			if err := WriteArchive(outA, a, mtime); err != nil {
				t.Fatal(err)
			}
			if err := WriteArchive(outB, b, mtime); err != nil {
				t.Fatal(err)
			}
			ba, _ := os.ReadFile(outA)
			bb, _ := os.ReadFile(outB)
			if !bytes.Equal(ba, bb) {
				t.Fatalf("the two archives differ (%d and %d bytes)", len(ba), len(bb))
			}
			want := []struct {
				name string
				mode int64
			}{{"ownsona-v0.1.0-linux-arm64/", 0o755}, {"ownsona-v0.1.0-linux-arm64/LICENSE", 0o644},
				{"ownsona-v0.1.0-linux-arm64/NOTICE", 0o644}, {"ownsona-v0.1.0-linux-arm64/README.md", 0o644},
				{"ownsona-v0.1.0-linux-arm64/ownsona", 0o755}}
			type got struct {
				name  string
				mode  int64
				mtime time.Time
				owner int
			}
			var entries []got
			if ext == ".tar.gz" {
				gz, err := gzip.NewReader(bytes.NewReader(ba))
				if err != nil {
					t.Fatal(err)
				}
				if gz.Name != "" || !gz.ModTime.IsZero() {
					t.Errorf("gzip header: name %q, time %v; want neither", gz.Name, gz.ModTime)
				}
				tr := tar.NewReader(gz)
				for {
					h, err := tr.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					entries = append(entries, got{h.Name, h.Mode, h.ModTime.UTC(), h.Uid + h.Gid + len(h.Uname) + len(h.Gname)})
				}
			} else {
				zr, err := zip.NewReader(bytes.NewReader(ba), int64(len(ba)))
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range zr.File {
					entries = append(entries, got{f.Name, int64(f.Mode().Perm()), f.Modified.UTC(), 0})
				}
			}
			if len(entries) != len(want) {
				t.Fatalf("entries %v, want %v", entries, want)
			}
			for i, w := range want {
				e := entries[i]
				if e.name != w.name || e.mode != w.mode || !e.mtime.Equal(mtime) || e.owner != 0 {
					t.Errorf("entry %d = %+v, want %s mode %o at %v owned by 0:0", i, e, w.name, w.mode, mtime)
				}
			}
		})
	}
}
