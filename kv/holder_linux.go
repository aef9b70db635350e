//go:build linux

package kv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Holder names the process that holds the lock of the database file at path, so that an
// ErrInUse can say who it is instead of guessing: its pid and its command line (arguments
// joined by spaces, the program by its base name). It is best effort: ok is false when no
// lock on path is listed, or /proc cannot be read.
//
// It reads /proc/locks, where bbolt's flock appears with the file's device and inode. Where
// the device shown there differs from the one stat reports (overlayfs, btrfs subvolumes), a
// lock on the same inode number counts only if that process has path open.
func Holder(path string) (pid int, cmdline string, ok bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, "", false
	}
	st, isUnix := fi.Sys().(*syscall.Stat_t)
	if !isUnix {
		return 0, "", false
	}
	major, minor := devMajor(uint64(st.Dev)), devMinor(uint64(st.Dev))
	locks, err := os.Open("/proc/locks")
	if err != nil {
		return 0, "", false
	}
	defer locks.Close()
	var candidates []int // same inode on another device number
	sc := bufio.NewScanner(locks)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 4242 08:01:123456 0 EOF"; a waiter has "->" after the
		// number and holds nothing.
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		p, err := strconv.Atoi(f[4])
		if err != nil || p <= 0 {
			continue
		}
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		ino, err1 := strconv.ParseUint(id[2], 10, 64)
		maj, err2 := strconv.ParseUint(id[0], 16, 64)
		mnr, err3 := strconv.ParseUint(id[1], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || ino != st.Ino {
			continue
		}
		if maj == major && mnr == minor {
			return p, procCmdline(p), true
		}
		candidates = append(candidates, p)
	}
	for _, p := range candidates {
		if hasOpen(p, fi) {
			return p, procCmdline(p), true
		}
	}
	return 0, "", false
}

// devMajor and devMinor split a Linux dev_t as glibc's gnu_dev_major and gnu_dev_minor do.
func devMajor(dev uint64) uint64 { return (dev>>8)&0xfff | (dev>>32)&^uint64(0xfff) }
func devMinor(dev uint64) uint64 { return dev&0xff | (dev>>12)&^uint64(0xff) }

// hasOpen reports whether process pid has the file fi open (it may not be readable: other
// users' processes are not, unless we are root).
func hasOpen(pid int, fi os.FileInfo) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if o, err := os.Stat(filepath.Join(dir, fd.Name())); err == nil && os.SameFile(o, fi) {
			return true
		}
	}
	return false
}

// procCmdline is the command line of pid with the program's directory left out, at most 200
// bytes; "" when it cannot be read.
func procCmdline(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
	if len(args) == 0 || args[0] == "" {
		return ""
	}
	args[0] = filepath.Base(args[0])
	s := strings.Join(args, " ")
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:197], "") + "..."
	}
	return s
}
