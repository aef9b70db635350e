//go:build !unix

package app

func syscallUmask(mask int) int { return 0 }
