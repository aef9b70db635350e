package kv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

var (
	// ErrInUse is returned by Open when another process holds the file's lock.
	ErrInUse = errors.New("database file is in use by another process")
	// ErrNewerSchema is returned by Open when the file was written by a newer version.
	ErrNewerSchema = errors.New("database was written by a newer version of ownsona")
)

const (
	metaBucket    = "meta"
	schemaVersion = "schema_version"
)

// Options for Open. The zero value is usable.
type Options struct {
	// Timeout is how long Open waits for the file's lock. If zero, 1s.
	Timeout time.Duration
	// ReadOnly opens the file without writing; migrations are not run.
	ReadOnly bool
	// Migrations are the schema changes, versions 1..N in order.
	Migrations []Migration
}

// Migration is one schema change. Up runs inside one Update together with the version bump.
type Migration struct {
	Version int
	Name    string
	Up      func(tx *Tx) error
}

// DB is the one file. It is safe for concurrent use: many View transactions run at once, Update
// transactions one at a time.
type DB struct {
	bolt *bolt.DB
	path string
}

// Open opens (creating with mode 0600) the file at path, takes its exclusive lock, refuses a file
// from a newer schema without modifying it, and runs pending migrations.
func Open(path string, opts Options) (*DB, error) {
	for i, m := range opts.Migrations {
		if m.Version != i+1 {
			return nil, fmt.Errorf("open %s: migration %q has version %d, want %d", path, m.Name, m.Version, i+1)
		}
	}
	timeout := opts.Timeout
	if timeout == 0 {
		timeout = time.Second
	}
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout, ReadOnly: opts.ReadOnly})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w (is `ownsona serve` running on it?)", path, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{bolt: b, path: path}
	if err := db.migrate(opts); err != nil {
		b.Close()
		return nil, err
	}
	return db, nil
}

func (db *DB) migrate(opts Options) error {
	have, err := db.SchemaVersion()
	if err != nil {
		return err
	}
	want := len(opts.Migrations)
	if have > want {
		return fmt.Errorf("%s: %w: the file has schema version %d, this binary supports up to %d; upgrade ownsona", db.path, ErrNewerSchema, have, want)
	}
	if opts.ReadOnly {
		return nil
	}
	if have == 0 && want == 0 {
		return db.Update(func(tx *Tx) error { _, err := tx.CreateBucketIfNotExists(metaBucket); return err })
	}
	for _, m := range opts.Migrations[have:] {
		err := db.Update(func(tx *Tx) error {
			meta, err := tx.CreateBucketIfNotExists(metaBucket)
			if err != nil {
				return err
			}
			if err := m.Up(tx); err != nil {
				return err
			}
			return meta.Put([]byte(schemaVersion), Key(uint64(m.Version)))
		})
		if err != nil {
			return fmt.Errorf("migrate %s to version %d (%s): %w", db.path, m.Version, m.Name, err)
		}
	}
	return nil
}

// SchemaVersion is the version recorded in the file; 0 for a new file.
func (db *DB) SchemaVersion() (int, error) {
	var v uint64
	err := db.View(func(tx *Tx) error {
		if meta := tx.Bucket(metaBucket); meta != nil {
			if b := meta.Get([]byte(schemaVersion)); b != nil {
				v = ID(b)
			}
		}
		return nil
	})
	return int(v), err
}

// Path is the file's path.
func (db *DB) Path() string { return db.path }

// Close releases the file. It tolerates nil and repeated calls.
func (db *DB) Close() error {
	if db == nil || db.bolt == nil {
		return nil
	}
	err := db.bolt.Close()
	db.bolt = nil
	return err
}

// Update runs fn in a read-write transaction, committed (and synced to disk) when fn returns
// nil, rolled back otherwise. One logical operation is one Update.
func (db *DB) Update(fn func(tx *Tx) error) error {
	return db.bolt.Update(func(tx *bolt.Tx) error { return fn(&Tx{tx}) })
}

// View runs fn in a read-only transaction.
func (db *DB) View(fn func(tx *Tx) error) error {
	return db.bolt.View(func(tx *bolt.Tx) error { return fn(&Tx{tx}) })
}

// Backup writes a consistent snapshot of the whole file to w, from one read transaction, while
// writers carry on.
func (db *DB) Backup(w io.Writer) (int64, error) {
	var n int64
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// Check runs bbolt's page-level consistency check and returns every problem found, joined.
func (db *DB) Check() error {
	var errs []error
	err := db.bolt.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// Tx is a transaction. It is valid only inside the function it was passed to.
type Tx struct{ tx *bolt.Tx }

// Bucket returns the named top-level bucket, or nil when it does not exist.
func (tx *Tx) Bucket(name string) *Bucket {
	b := tx.tx.Bucket([]byte(name))
	if b == nil {
		return nil
	}
	return &Bucket{b}
}

// CreateBucketIfNotExists returns the named bucket, creating it (write transactions only).
func (tx *Tx) CreateBucketIfNotExists(name string) (*Bucket, error) {
	b, err := tx.tx.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create bucket %s: %w", name, err)
	}
	return &Bucket{b}, nil
}

// DeleteBucket removes the named bucket and everything in it.
func (tx *Tx) DeleteBucket(name string) error { return tx.tx.DeleteBucket([]byte(name)) }

// Writable reports whether tx is a read-write transaction.
func (tx *Tx) Writable() bool { return tx.tx.Writable() }

// Bucket is a sorted key/value collection inside a transaction.
type Bucket struct{ b *bolt.Bucket }

// Get returns a copy of key's value, or nil when absent. The copy outlives the transaction.
func (b *Bucket) Get(key []byte) []byte {
	v := b.b.Get(key)
	if v == nil {
		return nil
	}
	return append([]byte(nil), v...)
}

// Put sets key to value.
func (b *Bucket) Put(key, value []byte) error { return b.b.Put(key, value) }

// Delete removes key; absent keys are not an error.
func (b *Bucket) Delete(key []byte) error { return b.b.Delete(key) }

// NextSequence returns the bucket's next sequence number, starting at 1; numbers are never
// handed out twice, even after deletes.
func (b *Bucket) NextSequence() (uint64, error) { return b.b.NextSequence() }

// Sequence is the bucket's current sequence number.
func (b *Bucket) Sequence() uint64 { return b.b.Sequence() }

// SetSequence sets the bucket's sequence number.
func (b *Bucket) SetSequence(v uint64) error { return b.b.SetSequence(v) }

// ForEach calls fn for every key in order; k and v are valid only during fn.
func (b *Bucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

// Bucket returns a nested bucket, or nil.
func (b *Bucket) Bucket(name string) *Bucket {
	nb := b.b.Bucket([]byte(name))
	if nb == nil {
		return nil
	}
	return &Bucket{nb}
}

// CreateBucketIfNotExists returns a nested bucket, creating it.
func (b *Bucket) CreateBucketIfNotExists(name string) (*Bucket, error) {
	nb, err := b.b.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, err
	}
	return &Bucket{nb}, nil
}

// Stats returns the number of keys in the bucket.
func (b *Bucket) Stats() int { return b.b.Stats().KeyN }

// Cursor iterates a bucket in key order.
func (b *Bucket) Cursor() *Cursor { return &Cursor{b.b.Cursor()} }

// Cursor walks a bucket. Returned keys and values are valid only inside the transaction.
type Cursor struct{ c *bolt.Cursor }

// First moves to the first key.
func (c *Cursor) First() (k, v []byte) { return c.c.First() }

// Last moves to the last key.
func (c *Cursor) Last() (k, v []byte) { return c.c.Last() }

// Next moves to the next key.
func (c *Cursor) Next() (k, v []byte) { return c.c.Next() }

// Prev moves to the previous key.
func (c *Cursor) Prev() (k, v []byte) { return c.c.Prev() }

// Seek moves to key, or the next key after it.
func (c *Cursor) Seek(key []byte) (k, v []byte) { return c.c.Seek(key) }

// Key encodes an id as 8 big-endian bytes, so keys sort in id order.
func Key(id uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, id)
	return b
}

// ID decodes a Key; 0 when key is not 8 bytes.
func ID(key []byte) uint64 {
	if len(key) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(key)
}
