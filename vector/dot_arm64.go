package vector

// dotNEON is dot in NEON (dot_arm64.s). len(b) must be at least len(a).
//
//go:noescape
func dotNEON(a, b []float32) float32

func dotArch(a, b []float32) float32 { return dotNEON(a, b) }

func dotRowsArch(q, rows, out []float32) { dotRowsEach(q, rows, out) }
