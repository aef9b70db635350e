package kv

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Tx is a transaction, passed to the function given to DB.Update or DB.View. It and everything
// obtained from it are valid only inside that function, on that goroutine.
type Tx struct{ tx *bolt.Tx }

// Bucket returns the named top-level bucket, or nil when it does not exist.
func (tx *Tx) Bucket(name string) *Bucket { return wrapBucket(tx.tx.Bucket([]byte(name))) }

// CreateBucketIfNotExists returns the named top-level bucket, creating it if needed. In a read
// transaction it fails with ErrReadOnly.
func (tx *Tx) CreateBucketIfNotExists(name string) (*Bucket, error) {
	b, err := tx.tx.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create bucket %q: %w", name, boltErr(err))
	}
	return &Bucket{b: b}, nil
}

// DeleteBucket removes the named top-level bucket and everything in it. It fails with
// ErrNotFound when there is no such bucket, ErrReadOnly in a read transaction.
func (tx *Tx) DeleteBucket(name string) error {
	if err := tx.tx.DeleteBucket([]byte(name)); err != nil {
		return fmt.Errorf("delete bucket %q: %w", name, boltErr(err))
	}
	return nil
}

// Writable reports whether tx is a read-write (Update) transaction.
func (tx *Tx) Writable() bool { return tx.tx.Writable() }

// Bucket is a collection of keys and values sorted by key (bytewise), inside a transaction.
// A key holds either a value or a nested bucket.
type Bucket struct{ b *bolt.Bucket }

func wrapBucket(b *bolt.Bucket) *Bucket {
	if b == nil {
		return nil
	}
	return &Bucket{b: b}
}

// Get returns a copy of key's value: nil when the key is absent or holds a nested bucket, an
// empty non-nil slice for an empty value. The copy outlives the transaction and may be modified.
func (b *Bucket) Get(key []byte) []byte { return bytes.Clone(b.b.Get(key)) }

// Put sets key to value, replacing any previous value. The key must be 1 to 32768 bytes. key and
// value must not be modified until the transaction ends. In a read transaction it fails with
// ErrReadOnly.
func (b *Bucket) Put(key, value []byte) error {
	if err := b.b.Put(key, value); err != nil {
		return fmt.Errorf("put: %w", boltErr(err))
	}
	return nil
}

// Delete removes key. An absent key is not an error; a key that holds a nested bucket is.
func (b *Bucket) Delete(key []byte) error {
	if err := b.b.Delete(key); err != nil {
		return fmt.Errorf("delete: %w", boltErr(err))
	}
	return nil
}

// NextSequence increments the bucket's sequence and returns it: 1 for a new bucket. A number is
// never returned twice, even after deletes, unless SetSequence moves the sequence back. With
// Key it gives ids whose keys sort in the order they were handed out.
func (b *Bucket) NextSequence() (uint64, error) {
	n, err := b.b.NextSequence()
	if err != nil {
		return 0, fmt.Errorf("next sequence: %w", boltErr(err))
	}
	return n, nil
}

// SetFillPercent sets how full a page of the bucket is left when the write transaction that
// opened it splits one, between 0.1 and 1 (bbolt's default is 0.5). It lasts until the
// transaction ends, so a writer sets it each time it opens the bucket. Near 1 suits a bucket
// written in ascending key order (Key of NextSequence ids): its pages fill up instead of being
// left half empty, so the file is about the size of its data; keys inserted in the middle of
// a full page split it. In a read transaction it does nothing.
func (b *Bucket) SetFillPercent(f float64) { b.b.FillPercent = min(max(f, 0.1), 1) }

// Sequence returns the bucket's current sequence (the last number NextSequence returned).
func (b *Bucket) Sequence() uint64 { return b.b.Sequence() }

// SetSequence sets the bucket's sequence.
func (b *Bucket) SetSequence(v uint64) error {
	if err := b.b.SetSequence(v); err != nil {
		return fmt.Errorf("set sequence: %w", boltErr(err))
	}
	return nil
}

// ForEach calls fn for each key in key order, stopping at (and returning) fn's first error.
// v is nil for a key that holds a nested bucket. k and v are valid only during fn and must not
// be modified; fn must not modify the bucket (use a Cursor's Delete, or collect keys first).
func (b *Bucket) ForEach(fn func(k, v []byte) error) error { return b.b.ForEach(fn) }

// Cursor returns a cursor over the bucket, positioned nowhere until First, Last or Seek.
func (b *Bucket) Cursor() *Cursor { return &Cursor{c: b.b.Cursor()} }

// Bucket returns the named nested bucket, or nil when it does not exist.
func (b *Bucket) Bucket(name string) *Bucket { return wrapBucket(b.b.Bucket([]byte(name))) }

// CreateBucketIfNotExists returns the named nested bucket, creating it if needed.
func (b *Bucket) CreateBucketIfNotExists(name string) (*Bucket, error) {
	nb, err := b.b.CreateBucketIfNotExists([]byte(name))
	if err != nil {
		return nil, fmt.Errorf("create bucket %q: %w", name, boltErr(err))
	}
	return &Bucket{b: nb}, nil
}

// DeleteBucket removes the named nested bucket and everything in it. It fails with ErrNotFound
// when there is no such bucket.
func (b *Bucket) DeleteBucket(name string) error {
	if err := b.b.DeleteBucket([]byte(name)); err != nil {
		return fmt.Errorf("delete bucket %q: %w", name, boltErr(err))
	}
	return nil
}

// Stats returns the number of keys in the bucket, counting the keys of nested buckets too
// (bbolt's KeyN). It walks every page of the bucket: O(n).
func (b *Bucket) Stats() int { return b.b.Stats().KeyN }

// Cursor walks a bucket's keys in order. Every method returns the key and value it lands on, or
// nil, nil past either end. v is nil for a key that holds a nested bucket. k and v are valid
// only inside the transaction and must not be modified.
type Cursor struct{ c *bolt.Cursor }

// First moves to the first key.
func (c *Cursor) First() (k, v []byte) { return c.c.First() }

// Last moves to the last key.
func (c *Cursor) Last() (k, v []byte) { return c.c.Last() }

// Next moves to the next key.
func (c *Cursor) Next() (k, v []byte) { return c.c.Next() }

// Prev moves to the previous key.
func (c *Cursor) Prev() (k, v []byte) { return c.c.Prev() }

// Seek moves to the first key >= seek: with a prefix, to the first key that may start with it.
func (c *Cursor) Seek(seek []byte) (k, v []byte) { return c.c.Seek(seek) }

// Delete removes the key under the cursor; Next then moves to the key that followed it. It
// fails on a key that holds a nested bucket, and with ErrReadOnly in a read transaction.
func (c *Cursor) Delete() error {
	if err := c.c.Delete(); err != nil {
		return fmt.Errorf("delete: %w", boltErr(err))
	}
	return nil
}
