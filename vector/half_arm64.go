package vector

// dotHalfNEON is dotHalfArch in NEON (half_arm64.s). len(q) must be a multiple of 8 and len(h)
// at least len(q).
//
//go:noescape
func dotHalfNEON(q []float32, h []uint16) float32

// dotHalfArch is the dot product of q and h[:len(q)], len(q) a multiple of 8.
func dotHalfArch(q []float32, h []uint16) float32 { return dotHalfNEON(q, h) }

// halvesNEON is halvesArch in NEON (half_arm64.s).
//
//go:noescape
func halvesNEON(dst []float32, h []uint16)

// halvesArch writes h[:len(dst)] as float32 into dst, len(dst) a multiple of 8.
func halvesArch(dst []float32, h []uint16) { halvesNEON(dst, h) }
