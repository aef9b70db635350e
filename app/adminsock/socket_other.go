//go:build !unix

package adminsock

import "os"

func syscallUmask(mask int) int { return 0 }

// fileUID is not available here: files have no user id to compare with os.Getuid().
func fileUID(fi os.FileInfo) (int, bool) { return 0, false }
