package vector

// dotSSE is dot in SSE (dot_amd64.s). len(b) must be at least len(a).
//
//go:noescape
func dotSSE(a, b []float32) float32

func dotArch(a, b []float32) float32 { return dotSSE(a, b) }
