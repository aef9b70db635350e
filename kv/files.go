package kv

// Whole-file operations: a verified snapshot of a live file (backup), a rewrite without free
// pages (compact) and the checks a file must pass before it replaces another (restore). Each
// writes a temporary file next to its destination, fsyncs it, verifies it and renames it into
// place, so a crash at any moment leaves either the old file or the complete new one.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BackupFile writes a consistent snapshot of the live file to path (mode 0600): to a temporary
// file in path's directory, fsynced, checked page by page, then renamed over path. Writers go
// on while it runs; the snapshot holds every transaction committed before it started. It
// returns the bytes written.
func (db *DB) BackupFile(path string) (int64, error) {
	var n int64
	err := writeVerified(path, func(f *os.File) error {
		var err error
		n, err = db.Backup(f)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup to %s: %w", path, err)
	}
	return n, nil
}

// upgradeBackupTime is the UTC time in an upgrade backup's name; names sort by it.
const upgradeBackupTime = "20060102T150405Z"

// now is the clock of upgrade backups' names; tests set it.
var now = time.Now

// upgradeBackupName is the name of the backup Open takes before it migrates the file at path to
// schema version to, at time at: path.pre-v<to>-<UTC time>.bak, beside the file
// (ownsona.db.pre-v2-20260301T101500Z.bak).
func upgradeBackupName(path string, to int, at time.Time) string {
	return fmt.Sprintf("%s.pre-v%d-%s.bak", path, to, at.UTC().Format(upgradeBackupTime))
}

// backupBeforeUpgrade writes the backup Open takes before it migrates the file from schema
// version from to to, named by upgradeBackupName, with BackupFile (as `ownsona backup`: one
// read transaction's snapshot, mode 0600, fsynced, page-checked, then renamed into place and
// the directory fsynced), and reads it back: it must be at schema version from. A backup of
// the same name (an upgrade retried within the second after a failed one) is replaced: a
// failed migration commits nothing, so both hold the same file.
func (db *DB) backupBeforeUpgrade(from, to int) (Upgrade, error) {
	path := upgradeBackupName(db.path, to, now())
	n, err := db.BackupFile(path)
	if err != nil {
		return Upgrade{}, err
	}
	b, err := openBolt(path, true, -1)
	if err != nil {
		return Upgrade{}, fmt.Errorf("backup to %s: read it back: %w", path, err)
	}
	v, _, err := fileVersion(b, path, uint64(to))
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err == nil && v != uint64(from) {
		err = fmt.Errorf("it has schema version %d, want %d", v, from)
	}
	if err != nil {
		return Upgrade{}, fmt.Errorf("backup to %s: read it back: %w", path, err)
	}
	return Upgrade{From: from, To: to, Backup: path, Bytes: n}, nil
}

// latestBackup is the newest backup that an upgrade of the file at path to schema version v
// left beside it, or "" if there is none.
func latestBackup(path string, v int) string {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return ""
	}
	prefix := fmt.Sprintf("%s.pre-v%d-", base, v)
	var names []string
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, prefix) && strings.HasSuffix(n, ".bak") && e.Type().IsRegular() {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	return filepath.Join(filepath.Dir(path), slices.Max(names))
}

// Compact rewrites the file at src into dst without its free pages (bbolt never shrinks a
// file), verified and fsynced; src must not be open. It returns the sizes before and after.
func Compact(src, dst string) (before, after int64, err error) {
	fi, err := os.Stat(src)
	if err != nil {
		return 0, 0, fmt.Errorf("compact: %w", err)
	}
	in, err := openBolt(src, true, -1)
	if err != nil {
		return 0, 0, fmt.Errorf("compact: %w", err)
	}
	defer in.Close()
	err = writeVerified(dst, func(f *os.File) error {
		// bolt.Compact needs a *bolt.DB destination: open the temporary file as one.
		name := f.Name()
		if err := f.Close(); err != nil {
			return err
		}
		out, err := openBolt(name, false, -1)
		if err != nil {
			return err
		}
		if err := bolt.Compact(out, in, 64<<20); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		return fi.Size(), 0, fmt.Errorf("compact %s: %w", src, err)
	}
	st, err := os.Stat(dst)
	if err != nil {
		return fi.Size(), 0, fmt.Errorf("compact: %w", err)
	}
	return fi.Size(), st.Size(), nil
}

// CopyFile copies the database file at src to dst the same way (temporary file, fsync,
// verification, rename), for restores. src must not be open for writing.
func CopyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	if err := writeVerified(dst, func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	}); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

// CheckFile runs bbolt's page consistency check on a file that is not open, read-only.
func CheckFile(path string) error {
	b, err := openBolt(path, true, -1)
	if err != nil {
		return err
	}
	defer b.Close()
	return checkBolt(b)
}

func checkBolt(b *bolt.DB) error {
	return b.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
			if len(errs) == 100 {
				break
			}
		}
		return errors.Join(errs...)
	})
}

// writeVerified runs write on a new temporary file next to path, fsyncs it, checks that it is
// a sound database, renames it to path and fsyncs the directory. On any error the temporary
// file is removed and path is untouched. write may close the file (Compact reopens it).
func writeVerified(path string, write func(f *os.File) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	// Reopen to fsync: write may have closed f.
	f.Close()
	g, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	serr := g.Sync()
	if cerr := g.Close(); serr == nil {
		serr = cerr
	}
	if serr != nil {
		return serr
	}
	if err := CheckFile(tmp); err != nil {
		return fmt.Errorf("the written file does not check: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
