package vector

import (
	"math"
	"sync"
)

// The graph keeps its vectors' components as 16-bit floats (IEEE 754 binary16: a sign, 5 bits
// of exponent, 10 of mantissa), half the memory of float32: 19 MiB less at 100k × 100-d, 300 MB
// at 100k × 1,536-d. Components of a unit vector are at most 1 in magnitude, so they keep
// their relative precision (2^-11), and a score moves by at most 2^-11 from the exact cosine;
// those below float16's normal range (6.1e-5) are stored as zero, and subnormal halves, which
// toHalf never writes, read as zero.
//
// Rounding costs a little recall, which a slightly larger default efSearch (72, was 64) buys
// back while searches still take less time, since they read half the bytes (HNSW_Search on
// clustered sets, recall@10 against exact float32 and p50, one run):
//
//	           float32, ef 64     float16, ef 64     float16, ef 72
//	100k×100   0.9907  110 µs     0.9897   71 µs     0.9924   79 µs
//	100k×256   0.9730  166 µs     0.9720  115 µs     0.9796  122 µs
//	20k×768    0.9984  231 µs     0.9983  141 µs     0.9991  155 µs
//
// bfloat16, which decodes with a shift, missed by more (0.9858 at 100k×100 and ef 64; see
// BenchmarkHNSW_QuantizedRecall).

// toHalf rounds x to the nearest float16 (ties to even), flushing magnitudes below the normal
// range to a signed zero and clamping those beyond the largest finite half (65504).
func toHalf(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a < 0x38800000: // below 2^-14, or zero
		return sign
	case a >= 0x477ff000: // rounds beyond 65504 (or is an infinity or a NaN, which callers exclude)
		return sign | 0x7bff
	}
	a += 0xfff + (a>>13)&1
	return sign | uint16((a-0x38000000)>>13)
}

// fromHalf is the float32 of a half that toHalf wrote.
func fromHalf(h uint16) float32 {
	m := uint32(h & 0x7fff)
	if m < 0x400 { // zero (or a subnormal, which toHalf never writes)
		return math.Float32frombits(uint32(h&0x8000) << 16)
	}
	return math.Float32frombits(uint32(h&0x8000)<<16 | (m<<13 + 0x38000000))
}

// toHalves writes v's components as halves into dst (len(dst) >= len(v)).
func toHalves(dst []uint16, v []float32) {
	dst = dst[:len(v)]
	for i, x := range v {
		dst[i] = toHalf(x)
	}
}

// fromHalves writes h's components as float32 into dst (len(dst) >= len(h)); where dotHalf
// converts in assembly, so does it, eight at a time.
func fromHalves(dst []float32, h []uint16) {
	dst = dst[:len(h)]
	n := len(h) &^ 7
	if n > 0 {
		halvesArch(dst[:n], h[:n])
	}
	halvesGo(dst[n:], h[n:])
}

// halvesGo is the portable halvesArch. len(h) must be at least len(dst).
func halvesGo(dst []float32, h []uint16) {
	h = h[:len(dst)]
	for i, x := range h {
		dst[i] = fromHalf(x)
	}
}

// dotHalf is the dot product of q and the halves h[:len(q)] (a shorter h panics). Like dot,
// every score the graph computes comes from it, so that its scores agree bit for bit on one
// machine: amd64 processors with F16C and AVX, and arm64 ones, convert and multiply eight
// components at a time in assembly (half_amd64.s, half_arm64.s), the last len(q)%8 here.
func dotHalf(q []float32, h []uint16) float32 {
	h = h[:len(q)]
	n := len(q) &^ 7
	var s float32
	if n > 0 {
		s = dotHalfArch(q[:n], h[:n])
	}
	for i := n; i < len(q); i++ {
		s += q[i] * fromHalf(h[i])
	}
	return s
}

// halfTable holds fromHalf of every half, for dotHalfGo: a load from it (256 KB, which stays
// in the cache of a processor that searches) costs less than converting.
var halfTable = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = fromHalf(uint16(h))
	}
	return &t
})

// dotHalfGo is the portable dotHalfArch, unrolled by four. len(h) must be at least len(q).
func dotHalfGo(q []float32, h []uint16) float32 {
	h = h[:len(q)]
	t := halfTable()
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * t[h[i]]
		s1 += q[i+1] * t[h[i+1]]
		s2 += q[i+2] * t[h[i+2]]
		s3 += q[i+3] * t[h[i+3]]
	}
	for ; i < len(q); i++ {
		s0 += q[i] * t[h[i]]
	}
	return s0 + s1 + s2 + s3
}
