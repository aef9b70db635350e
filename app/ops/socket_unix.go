//go:build unix

package ops

import "syscall"

// syscallUmask sets the process's umask and returns the old one (the admin socket is created
// with 0600 from the start, not chmodded after a window).
func syscallUmask(mask int) int { return syscall.Umask(mask) }
