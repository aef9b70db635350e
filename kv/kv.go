package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Errors returned by kv, wrapped with the operation and, for Open, the path. Test with errors.Is.
var (
	// ErrInUse: Open could not take the file's lock within Options.Timeout because another
	// DB holds it (in this process or another, e.g. a running `ownsona serve`).
	ErrInUse = errors.New("database file is in use by another process")
	// ErrNewerSchema: Open found a schema version above len(Options.Migrations). The file is
	// left untouched; the error names both versions and the backup to put back, if an upgrade
	// left one beside the file.
	ErrNewerSchema = errors.New("database was written by a newer version of ownsona")
	// ErrNotFound: DeleteBucket of a bucket that does not exist. Callers may also use it for
	// their own lookups.
	ErrNotFound = errors.New("not found")
	// ErrReadOnly: Update on a DB opened with Options.ReadOnly, or a write inside View.
	ErrReadOnly = errors.New("database or transaction is read-only")
	// ErrClosed: a transaction, Backup or Check on a closed DB.
	ErrClosed = errors.New("database is closed")
)

// DefaultTimeout is how long Open waits for the file's lock when Options.Timeout is zero.
const DefaultTimeout = time.Second

const (
	metaBucket = "meta"
	versionKey = "schema_version"
)

// Options for Open. The zero value is usable.
type Options struct {
	// Timeout is how long Open waits for the file's lock before failing with ErrInUse.
	// If zero, DefaultTimeout (1s). If negative, Open tries once and does not wait.
	Timeout time.Duration
	// ReadOnly opens the file with a shared lock (other read-only openers may share it, a
	// read-write one may not) and never writes: Update fails with ErrReadOnly and pending
	// migrations are not run. The file must exist.
	ReadOnly bool
	// Migrations are the schema changes: Migrations[i].Version must be i+1, each with a Name
	// and an Up. Append only: never change or reorder a released migration.
	Migrations []Migration
	// OnUpgrade, if set, is called when Open has backed up an existing file that it is about
	// to migrate: after the backup is written and checked, before the migrations run (Open
	// waits for it). For saying where the backup is. If nil, Open says nothing.
	OnUpgrade func(Upgrade)
}

// Upgrade is the migration of an existing file that Open is about to run, and the backup it
// made first.
type Upgrade struct {
	From, To int    // the file's schema version, and the one the migrations bring it to
	Backup   string // the backup of the file at From: path.pre-vTo-TIME.bak, beside it
	Bytes    int64  // the backup's size
}

// Migration is one schema change, from version Version-1 to Version.
type Migration struct {
	Version int
	Name    string // short, for error messages: "create memory buckets"
	// Up makes the change. It runs inside one Update together with the version bump: if it
	// returns an error, neither its writes nor the bump are committed.
	Up func(tx *Tx) error
}

// DB is the open database file. It is safe for concurrent use (see the package doc).
type DB struct {
	path     string
	readOnly bool
	bolt     *bolt.DB

	mu     sync.Mutex // guards closed
	closed bool

	commits atomic.Uint64 // Updates committed
}

// Open opens the database file at path, creating it with mode 0600 if it does not exist, and
// takes its lock (see Options.Timeout). A file from a newer schema is refused with
// ErrNewerSchema and is not modified. Otherwise the pending migrations run in order, all in one
// Update with the version bump; a failing one stops Open with an error naming it, and the file
// stays at its version. Before migrating a file that holds data (schema version 1 or more),
// Open writes a checked backup of it beside it (named by upgradeBackupName) and calls
// Options.OnUpgrade; if the backup fails, Open fails and migrates nothing.
func Open(path string, opts Options) (*DB, error) {
	if err := validate(opts.Migrations); err != nil {
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	supported := uint64(len(opts.Migrations))
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}

	// Inspect an existing file through a read-only open first, so that a file from a newer
	// schema is never opened for writing (bbolt may write when opening read-write).
	if !opts.ReadOnly {
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			b, err := openBolt(path, true, timeout)
			if err != nil {
				return nil, err
			}
			_, _, err = fileVersion(b, path, supported)
			if cerr := b.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("open db %s: %w", path, cerr)
			}
			if err != nil {
				return nil, err
			}
		}
	}

	b, err := openBolt(path, opts.ReadOnly, timeout)
	if err != nil {
		return nil, err
	}
	db := &DB{path: path, readOnly: opts.ReadOnly, bolt: b}
	if err := db.migrate(opts); err != nil {
		_ = db.Close()
		return nil, err
	}
	return db, nil
}

// validate checks that migrations are numbered 1..N and complete.
func validate(ms []Migration) error {
	for i, m := range ms {
		switch {
		case m.Version != i+1:
			return fmt.Errorf("migration %q at index %d has version %d, want %d", m.Name, i, m.Version, i+1)
		case m.Name == "":
			return fmt.Errorf("migration %d has no name", m.Version)
		case m.Up == nil:
			return fmt.Errorf("migration %d %q has no Up", m.Version, m.Name)
		}
	}
	return nil
}

// openBolt opens the file with the lock timeout, never with NoSync or NoGrowSync.
func openBolt(path string, readOnly bool, timeout time.Duration) (*bolt.DB, error) {
	o := *bolt.DefaultOptions
	o.Timeout = timeout
	o.ReadOnly = readOnly
	o.NoSync = false
	o.NoGrowSync = false
	b, err := bolt.Open(path, 0o600, &o)
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("open db %s: %w", path, ErrInUse)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) { // already names the path
			return nil, fmt.Errorf("open db: %w", err)
		}
		return nil, fmt.Errorf("open db %s: %w", path, err)
	}
	return b, nil
}

// fileVersion reads the schema version in a read transaction and refuses one above supported.
// stamped reports whether the file has its meta bucket.
func fileVersion(b *bolt.DB, path string, supported uint64) (v uint64, stamped bool, err error) {
	err = b.View(func(tx *bolt.Tx) error {
		stamped = tx.Bucket([]byte(metaBucket)) != nil
		v, err = readVersion(tx)
		return err
	})
	if err != nil {
		return 0, false, fmt.Errorf("open db %s: %w", path, err)
	}
	if v > supported {
		return 0, false, newerError(path, v, supported)
	}
	return v, stamped, nil
}

// newerError refuses a file at schema version v, above supported, saying what to do: run the
// newer ownsona, or put back the backup taken before the upgrade, which it names if the
// upgrade to v left one beside the file.
func newerError(path string, v, supported uint64) error {
	put := "put back a backup made before the upgrade"
	if bak := latestBackup(path, int(v)); bak != "" {
		put = "put back the backup the upgrade left beside it, " + bak + ","
	}
	return fmt.Errorf("open db %s: the file has schema version %d, and this ownsona reads schema versions up to %d, "+
		"so a newer ownsona wrote it: run that newer ownsona, or %s with no ownsona running (docs/upgrading.md): %w",
		path, v, supported, put, ErrNewerSchema)
}

// readVersion returns the stored schema version: 0 for a new, empty file. A file with buckets
// but no meta bucket is not ours and is refused rather than migrated.
func readVersion(tx *bolt.Tx) (uint64, error) {
	meta := tx.Bucket([]byte(metaBucket))
	if meta == nil {
		if k, _ := tx.Cursor().First(); k != nil {
			return 0, fmt.Errorf("not an ownsona database: no %q bucket", metaBucket)
		}
		return 0, nil
	}
	v := meta.Get([]byte(versionKey))
	if v == nil {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("corrupt schema version: %d bytes, want 8", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

func putVersion(tx *bolt.Tx, v uint64) error {
	meta, err := tx.CreateBucketIfNotExists([]byte(metaBucket))
	if err != nil {
		return err
	}
	return meta.Put([]byte(versionKey), Key(v))
}

// migrate checks the version under the lock just taken and runs the pending migrations, all in
// one Update with the version bump (and the stamp of a new file), after a backup of a file that
// holds data.
func (db *DB) migrate(opts Options) error {
	ms := opts.Migrations
	v, stamped, err := fileVersion(db.bolt, db.path, uint64(len(ms)))
	if err != nil || db.readOnly {
		return err
	}
	if stamped && v == uint64(len(ms)) {
		return nil
	}
	var backup string
	if v > 0 && v < uint64(len(ms)) {
		up, err := db.backupBeforeUpgrade(int(v), len(ms))
		if err != nil {
			return fmt.Errorf("open db %s: migrate from schema %d to %d: %w; nothing was migrated", db.path, v, len(ms), err)
		}
		backup = up.Backup
		if opts.OnUpgrade != nil {
			opts.OnUpgrade(up)
		}
	}
	var failed Migration
	err = db.bolt.Update(func(btx *bolt.Tx) error {
		// Stamp a new file as ours, so that it is never mistaken for a foreign one.
		if err := putVersion(btx, v); err != nil {
			return fmt.Errorf("write schema version: %w", err)
		}
		for _, m := range ms[v:] {
			if err := m.Up(&Tx{tx: btx}); err != nil {
				failed = m
				return err
			}
			if err := putVersion(btx, uint64(m.Version)); err != nil {
				return fmt.Errorf("write schema version: %w", err)
			}
		}
		return nil
	})
	if err == nil {
		return nil
	}
	if failed.Name != "" {
		err = fmt.Errorf("migration %d %q: %w", failed.Version, failed.Name, err)
	}
	if backup != "" {
		return fmt.Errorf("open db %s: %w; nothing was migrated: the file is still at schema %d, as its backup %s is", db.path, err, v, backup)
	}
	return fmt.Errorf("open db %s: %w", db.path, err)
}

// Close releases the file and its lock, after running transactions finish. It may be called
// on a nil DB and more than once; later calls return nil.
func (db *DB) Close() error {
	if db == nil {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed || db.bolt == nil {
		return nil
	}
	db.closed = true
	if err := db.bolt.Close(); err != nil {
		return fmt.Errorf("close db: %w", err)
	}
	return nil
}

// Path is the path the DB was opened with.
func (db *DB) Path() string { return db.path }

// SchemaVersion is the schema version recorded in the file: len(Options.Migrations) after a
// read-write Open, possibly less after a ReadOnly one.
func (db *DB) SchemaVersion() (int, error) {
	var v uint64
	err := db.View(func(tx *Tx) error {
		var err error
		v, err = readVersion(tx.tx)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	return int(v), nil
}

// Update runs fn in a read-write transaction. If fn returns nil the transaction is committed
// and synced to disk before Update returns; otherwise (or if fn panics) it is rolled back and
// fn's error is returned as is. One logical operation is one Update: its writes become visible
// all at once or not at all.
func (db *DB) Update(fn func(tx *Tx) error) error {
	var fnErr error
	err := db.bolt.Update(func(btx *bolt.Tx) error {
		fnErr = fn(&Tx{tx: btx})
		return fnErr
	})
	if fnErr != nil {
		return fnErr // bbolt returns fn's error unchanged after the rollback
	}
	if err != nil {
		return fmt.Errorf("update: %w", boltErr(err))
	}
	db.commits.Add(1)
	return nil
}

// Usage is how much of the file holds data: its size in bytes, and the bytes its pages of data
// take (the pages written so far, less the free ones that deletes left and later writes reuse).
// The file never shrinks but by Compact, and bbolt grows it ahead of its data (doubling while
// it is small, then by 16 MiB); used is what the data takes. Cheap: a stat, a read
// transaction's header and bbolt's counters.
func (db *DB) Usage() (size, used int64, err error) {
	fi, err := os.Stat(db.path)
	if err != nil {
		return 0, 0, fmt.Errorf("usage: %w", err)
	}
	var extent int64
	if err := db.bolt.View(func(tx *bolt.Tx) error { extent = tx.Size(); return nil }); err != nil {
		return 0, 0, fmt.Errorf("usage: %w", boltErr(err))
	}
	return fi.Size(), extent - int64(db.bolt.Stats().FreeAlloc), nil
}

// Commits is the number of Updates committed (and synced) since Open, migrations not counted:
// for measuring how writers share commits.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// View runs fn in a read-only transaction, which sees one consistent snapshot of the file.
// fn's error is returned as is.
func (db *DB) View(fn func(tx *Tx) error) error {
	var fnErr error
	err := db.bolt.View(func(btx *bolt.Tx) error {
		fnErr = fn(&Tx{tx: btx})
		return fnErr
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("view: %w", boltErr(err))
	}
	return nil
}

// Backup writes a consistent snapshot of the whole file to w from one read transaction, while
// other readers and writers carry on, and returns the number of bytes written. The output is a
// database file that Open accepts.
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	if err != nil {
		return n, fmt.Errorf("backup db: %w", boltErr(err))
	}
	return n, nil
}

// Check runs bbolt's page consistency check over the whole file and returns every problem
// found, joined (nil if none). On a read-write DB it holds the write lock (and rolls back), so
// writers wait while it runs.
func (db *DB) Check() error {
	var tx *bolt.Tx
	var err error
	if db.readOnly {
		tx, err = db.bolt.Begin(false)
	} else {
		// bbolt's check is safe alongside writers only in a writable transaction.
		tx, err = db.bolt.Begin(true)
	}
	if err != nil {
		return fmt.Errorf("check db: %w", boltErr(err))
	}
	defer func() { _ = tx.Rollback() }()
	var errs []error
	for err := range tx.Check() {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("check db: %w", err)
	}
	return nil
}

// boltErr translates bbolt's errors into kv's sentinels, so callers never need bbolt.
func boltErr(err error) error {
	switch {
	case errors.Is(err, bolterrors.ErrDatabaseNotOpen):
		return ErrClosed
	case errors.Is(err, bolterrors.ErrDatabaseReadOnly), errors.Is(err, bolterrors.ErrTxNotWritable):
		return ErrReadOnly
	case errors.Is(err, bolterrors.ErrBucketNotFound):
		return ErrNotFound
	}
	return err
}

// Key encodes an id as 8 big-endian bytes, so that keys sort in numeric order.
func Key(id uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), id)
}

// ID decodes a Key. It returns 0 when key is not 8 bytes long.
func ID(key []byte) uint64 {
	if len(key) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(key)
}
