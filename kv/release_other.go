//go:build !linux

package kv

// ReleasePages drops the file's pages from the process's resident memory where the system
// offers a way (Linux, see release_linux.go); elsewhere it does nothing.
func (db *DB) ReleasePages() error { return nil }
