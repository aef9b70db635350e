// Package kv is ownsona's one file: a bbolt database opened with an exclusive lock, with a
// schema version and ordered migrations, big-endian uint64 keys, and consistent backups.
// It knows nothing of memories; it hides bbolt behind its own DB, Tx, Bucket and Cursor.
//
// The simplest use:
//
//	db, err := kv.Open("ownsona.db", kv.Options{Migrations: migrations})
//	defer db.Close()
//	err = db.Update(func(tx *kv.Tx) error {
//		b := tx.Bucket("memories")
//		id, err := b.NextSequence()
//		if err != nil {
//			return err
//		}
//		return b.Put(kv.Key(id), value)
//	})
//
// Caveats, as bbolt's:
//   - One process at a time: Open takes the file's lock and, after Options.Timeout, fails with
//     ErrInUse. Within the process a DB is safe for concurrent use; Update transactions run
//     one at a time and every commit is synced to disk (NoSync is never set).
//   - Bytes returned by Bucket.Get are copies and live on. Bytes passed to ForEach callbacks and
//     returned by a Cursor point into the memory map and are valid only inside the transaction.
//   - Keys from NextSequence are never handed out twice, even after deletes.
//   - A file written by a newer schema is refused with ErrNewerSchema and not modified.
package kv
