package vector

// dotSSE is dot in SSE (dot_amd64.s). len(b) must be at least len(a).
//
//go:noescape
func dotSSE(a, b []float32) float32

func dotArch(a, b []float32) float32 { return dotSSE(a, b) }

// dotRowsSSE is dotRows in SSE (dot_amd64.s). len(rows) must be at least len(out)·len(q).
//
//go:noescape
func dotRowsSSE(q, rows, out []float32)

func dotRowsArch(q, rows, out []float32) { dotRowsSSE(q, rows, out) }
