package vector

import "golang.org/x/sys/cpu"

// hasF16C: the processor converts halves (F16C) and the system saves the AVX registers it
// uses. Every x86-64 processor since 2012 (Ivy Bridge, Piledriver) has F16C.
var hasF16C = cpu.X86.HasAVX && cpu.X86.HasF16C

// dotHalfAVX is dotHalfArch with F16C and AVX (half_amd64.s). len(q) must be a multiple of 8
// and len(h) at least len(q).
//
//go:noescape
func dotHalfAVX(q []float32, h []uint16) float32

// dotHalfArch is the dot product of q and h[:len(q)], len(q) a multiple of 8.
func dotHalfArch(q []float32, h []uint16) float32 {
	if hasF16C {
		return dotHalfAVX(q, h)
	}
	return dotHalfGo(q, h)
}

// halvesAVX is halvesArch with F16C and AVX (half_amd64.s).
//
//go:noescape
func halvesAVX(dst []float32, h []uint16)

// halvesArch writes h[:len(dst)] as float32 into dst, len(dst) a multiple of 8.
func halvesArch(dst []float32, h []uint16) {
	if hasF16C {
		halvesAVX(dst, h)
		return
	}
	halvesGo(dst, h)
}
