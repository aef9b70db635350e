package vector

import "golang.org/x/sys/cpu"

// dotSSE is dot in SSE (dot_amd64.s). len(b) must be at least len(a).
//
//go:noescape
func dotSSE(a, b []float32) float32

// dotAVX is dot in AVX (dot_amd64.s), for processors that have it. len(b) must be at least
// len(a).
//
//go:noescape
func dotAVX(a, b []float32) float32

// hasAVX: the processor has AVX and the system saves its registers. Every x86-64 processor
// since 2011 (Sandy Bridge, Bulldozer) has it.
var hasAVX = cpu.X86.HasAVX

func dotArch(a, b []float32) float32 {
	if hasAVX {
		return dotAVX(a, b)
	}
	return dotSSE(a, b)
}

// dotRowsSSE is dotRows in SSE (dot_amd64.s). len(rows) must be at least len(out)·len(q).
//
//go:noescape
func dotRowsSSE(q, rows, out []float32)

// dotRowsAVX is dotRows with dotAVX's sums (dot_amd64.s).
//
//go:noescape
func dotRowsAVX(q, rows, out []float32)

func dotRowsArch(q, rows, out []float32) {
	if hasAVX {
		dotRowsAVX(q, rows, out)
		return
	}
	dotRowsSSE(q, rows, out)
}
