//go:build linux

package kv

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// ReleasePages drops the file's pages from the process's resident memory: bbolt reads the file
// through a shared read-only mapping, so after the service has loaded every record into its
// caches the whole file stays resident (counted in the process's RSS) though it is rarely read
// again. madvise(MADV_DONTNEED) unmaps the pages from this process only; they stay in the
// kernel's page cache, which may reclaim them, and a later read maps them in again from there
// or from disk. Nothing is written and no data can change.
//
// It runs inside a read transaction, which holds bbolt's mmap lock: the mapping cannot be
// replaced (grown) meanwhile, so the range given to the kernel is the live mapping. Best effort:
// an error from the kernel is returned for the log and changes nothing.
func (db *DB) ReleasePages() error {
	return db.bolt.View(func(tx *bolt.Tx) error {
		info := db.bolt.Info()
		size := tx.Size() // the file's size as of this transaction, within the mapping
		if info == nil || size <= 0 {
			return nil
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(size), syscall.MADV_DONTNEED); errno != 0 {
			return errno
		}
		return nil
	})
}
