//go:build !unix

package ops

func syscallUmask(mask int) int { return 0 }
