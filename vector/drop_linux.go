//go:build linux

package vector

import (
	"os"
	"syscall"
	"unsafe"
)

// dropPages gives the kernel back the pages of b that lie wholly inside it, where b is a part
// of the binary that is read once and never written, such as an embedded asset: the kernel
// mapped them in from the executable when they were read, and they then stay in the process's
// resident memory for as long as it runs (the builtin embedder's 5 MB asset did, in every
// serving process). madvise(MADV_DONTNEED) drops them from this process; a later read maps them
// in again from the file, unchanged. Writes to b would be lost: never call it on memory that
// is written. Best effort: the kernel's answer changes nothing either way.
func dropPages(b []byte) {
	if len(b) == 0 {
		return
	}
	page := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return
	}
	_ = syscall.Madvise(b[lo-start:hi-start], syscall.MADV_DONTNEED)
}
