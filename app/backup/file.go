package backup

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ownsona/ownsona/kv"
)

// ToFile writes a consistent snapshot of db to path, mode 0600: to a temporary file beside
// path, fsynced and checked (pages and contents, as CheckFile) before it is renamed to path
// (replacing a file there) and the directory is fsynced. Writers go on while it runs; the
// snapshot holds every transaction committed before it started. A crash leaves path as it
// was or the whole snapshot. It returns the bytes written.
func ToFile(db *kv.DB, path string) (int64, error) {
	n, err := WriteChecked(path, func(w io.Writer) error {
		_, err := db.Backup(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup to %s: %w", path, err)
	}
	return n, nil
}

// WriteChecked runs write on a new temporary file beside path (mode 0600), fsyncs it, checks
// it with CheckFile, renames it to path and fsyncs the directory. On any error the temporary
// file is removed and path is untouched. It returns the bytes written.
func WriteChecked(path string, write func(w io.Writer) error) (n int64, err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return 0, err
	}
	cw := &countWriter{w: f}
	if err := write(cw); err != nil {
		return cw.n, err
	}
	if err := f.Sync(); err != nil {
		return cw.n, err
	}
	if err := f.Close(); err != nil {
		return cw.n, err
	}
	if _, err := CheckFileSummary(tmp); err != nil {
		return cw.n, fmt.Errorf("the snapshot does not check: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return cw.n, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return cw.n, nil
}

// countWriter counts what it writes.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
