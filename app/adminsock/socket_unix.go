//go:build unix

package adminsock

import (
	"os"
	"syscall"
)

// syscallUmask sets the process's umask and returns the old one (the admin socket is created
// with 0600 from the start, not chmodded after a window).
func syscallUmask(mask int) int { return syscall.Umask(mask) }

// fileUID is the user id of the owner of the file fi describes.
func fileUID(fi os.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
