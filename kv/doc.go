// Package kv is ownsona's one database file: a bbolt file opened with an
// exclusive lock, a schema version with ordered migrations, buckets of byte
// keys and values, consistent online backup and a page consistency check.
// It knows nothing of memories; it hides bbolt so that no bbolt type appears
// in the rest of the program.
//
// The simplest use:
//
//	db, err := kv.Open("ownsona.db", kv.Options{Migrations: []kv.Migration{
//		{Version: 1, Name: "create notes", Up: func(tx *kv.Tx) error {
//			_, err := tx.CreateBucketIfNotExists("notes")
//			return err
//		}},
//	}})
//	if err != nil {
//		return err
//	}
//	defer db.Close()
//
//	err = db.Update(func(tx *kv.Tx) error {
//		b := tx.Bucket("notes")
//		id, err := b.NextSequence()
//		if err != nil {
//			return err
//		}
//		return b.Put(kv.Key(id), []byte("hello"))
//	})
//
// # The file
//
// Open creates a missing file with mode 0600 (an existing file keeps its
// mode) and takes an exclusive lock on it (a shared one with
// Options.ReadOnly). A second opener, in this process or another, waits at
// most Options.Timeout (1s by default) and then fails with an error wrapping
// ErrInUse that names the path. Every commit is synced to disk: the file
// never trades durability for speed.
//
// The bucket "meta" belongs to kv: its key "schema_version" holds the schema
// version as a big-endian uint64. Do not write to it.
//
// # Schema versions and migrations
//
// Options.Migrations lists the schema changes, versions 1..N in order. Open
// runs the pending ones (those above the file's version) in order, all in one
// Update together with the version bump, so the file is either migrated
// whole or left at its version, and a failing migration makes Open return an
// error naming it. Before it migrates a file that holds data (version 1 or
// more), Open writes a backup of it beside it, path.pre-vN-TIME.bak (TIME in
// UTC, 20060102T150405Z), the way BackupFile does (a snapshot from one read
// transaction, mode 0600, fsynced, page-checked, renamed into place), reads
// its version back, and calls Options.OnUpgrade with its path; if the backup
// fails, nothing is migrated. A new file and an up-to-date one get no backup.
//
// A file whose version is above N was written by a newer ownsona: Open
// refuses it with ErrNewerSchema before anything can write to it (it is
// first inspected through a read-only open), so the file's bytes are never
// modified; the error names both versions, and the backup that the upgrade
// to the file's version left beside it, if there is one. A ReadOnly open
// runs no migrations and takes no backup; SchemaVersion tells the caller how
// far behind the file is.
//
// # Concurrency
//
// A DB is safe for concurrent use by many goroutines. Any number of View
// transactions run at once; Update transactions run one at a time and block
// each other (never readers). Do not start an Update from inside a View or
// an Update on the same goroutine: it deadlocks. A long View (Backup is
// one) keeps the file from being remapped, so writes that grow the file wait
// for it. Close waits for running transactions to finish.
//
// A Tx, and the Buckets and Cursors obtained from it, belong to the function
// they were passed to: use them from that goroutine only, and never after
// the function returns.
//
// # Lifetime of bytes
//
// Bucket.Get returns a copy, valid forever and safe to modify. Every other
// slice kv hands out — the k and v passed to a ForEach callback and those
// returned by Cursor methods — points into the database's memory map: it is
// valid only until the transaction ends and must never be modified. Copy
// what you keep (bytes.Clone). Put may keep referring to the key and value
// it was given until the transaction ends: do not modify them before then.
//
// # Keys
//
// Key(id) encodes an id as 8 big-endian bytes, so a cursor walks ids in
// numeric order; ID is its inverse. Bucket.NextSequence gives ids that are
// never reused, even after a delete. bbolt leaves the pages it splits half
// empty; a bucket written in ascending key order fills them instead when
// every write transaction calls Bucket.SetFillPercent(1) on it.
package kv
