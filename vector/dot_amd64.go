package vector

import "golang.org/x/sys/cpu"

// hasAVX: the processor has AVX and the system saves its registers. Every x86-64 processor
// since 2011 (Sandy Bridge, Bulldozer) has it.
var hasAVX = cpu.X86.HasAVX

// dotRowsSSE is dotRows in SSE (dot_amd64.s). len(rows) must be at least len(out)·len(q).
//
//go:noescape
func dotRowsSSE(q, rows, out []float32)

// dotRowsAVX is dotRows in AVX (dot_amd64.s), for processors that have it.
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

// dotArch is one row of dotRowsArch, so that a dot product and a scan add alike.
func dotArch(a, b []float32) float32 {
	var out [1]float32
	dotRowsArch(a, b, out[:])
	return out[0]
}
