//go:build !amd64 && !arm64

package vector

// dotHalfArch is the dot product of q and h[:len(q)], len(q) a multiple of 8.
func dotHalfArch(q []float32, h []uint16) float32 { return dotHalfGo(q, h) }

// halvesArch writes h[:len(dst)] as float32 into dst, len(dst) a multiple of 8.
func halvesArch(dst []float32, h []uint16) { halvesGo(dst, h) }
