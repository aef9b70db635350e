//go:build !linux

package kv

// Holder names the process that holds the lock of the database file at path. Only Linux says
// (through /proc/locks); here ok is always false.
func Holder(path string) (pid int, cmdline string, ok bool) { return 0, "", false }
