package build

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one file or directory of an archive.
type entry struct {
	name string // slash-separated, under the directory's own name
	dir  bool
	exec bool
	path string // on disk
}

// WriteArchive writes dir, as a top folder of its own name, to out: a gzipped tar when out ends
// in .tar.gz, a zip when it ends in .zip. The bytes depend only on the names, the contents and
// the executable bits of the files (see cmd/archive). Symbolic links and other special files
// are refused.
func WriteArchive(out, dir string, mtime time.Time) (err error) {
	entries, err := walk(dir)
	if err != nil {
		return fmt.Errorf("archive %s: %w", dir, err)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("archive: %w", cerr)
		}
		if err != nil {
			os.Remove(out)
		}
	}()
	switch {
	case strings.HasSuffix(out, ".tar.gz"):
		err = writeTarGz(f, entries, mtime)
	case strings.HasSuffix(out, ".zip"):
		err = writeZip(f, entries, mtime)
	default:
		err = fmt.Errorf("%s: not .tar.gz or .zip", out)
	}
	if err != nil {
		return fmt.Errorf("archive %s: %w", out, err)
	}
	return nil
}

// walk lists dir's tree, sorted by name, dir itself first.
func walk(dir string) ([]entry, error) {
	dir = filepath.Clean(dir)
	top := filepath.Base(dir)
	var entries []entry
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		e := entry{name: path.Join(top, filepath.ToSlash(rel)), dir: d.IsDir(), path: p}
		switch {
		case d.IsDir():
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			e.exec = fi.Mode()&0o111 != 0
		default:
			return fmt.Errorf("%s: neither a file nor a directory", p)
		}
		entries = append(entries, e)
		return nil
	})
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	return entries, err
}

func (e entry) mode() int64 {
	if e.dir || e.exec {
		return 0o755
	}
	return 0o644
}

func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression) // no name, no time: gzip -n
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Mode: e.mode(), ModTime: mtime, Format: tar.FormatUSTAR}
		if e.dir {
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		b, err := os.ReadFile(e.path)
		if err != nil {
			return err
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(len(b))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func writeZip(w io.Writer, entries []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: mtime}
		h.SetMode(fs.FileMode(e.mode()))
		if e.dir {
			h.Name, h.Method = e.name+"/", zip.Store
			h.SetMode(fs.ModeDir | 0o755)
			if _, err := zw.CreateHeader(h); err != nil {
				return err
			}
			continue
		}
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		f, err := os.Open(e.path)
		if err != nil {
			return err
		}
		_, err = io.Copy(fw, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}
