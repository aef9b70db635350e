package vector

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halfValue is the exact value of a normal or zero half, computed independently of fromHalf.
func halfValue(h uint16) float64 {
	e, m := int(h>>10)&0x1f, float64(h&0x3ff)
	v := 0.0
	if e != 0 {
		v = math.Ldexp(1+m/1024, e-15)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func TestHalf(t *testing.T) {
	// Every normal half and both zeros read back as their value and write back as themselves.
	for h := range 1 << 16 {
		h := uint16(h)
		if e := h >> 10 & 0x1f; e == 31 || (e == 0 && h&0x3ff != 0) {
			continue // infinities, NaNs and subnormals: toHalf never writes them
		}
		if got, want := float64(fromHalf(h)), halfValue(h); got != want || math.Signbit(got) != (h&0x8000 != 0) {
			t.Fatalf("fromHalf(%#04x) = %v, want %v", h, got, want)
		}
		if got := toHalf(fromHalf(h)); got != h {
			t.Fatalf("toHalf(fromHalf(%#04x)) = %#04x", h, got)
		}
	}
	// fromHalves, in assembly where dotHalf is, reads every half toHalf writes as fromHalf does.
	var all []uint16
	for h := range 1 << 16 {
		if e := h >> 10 & 0x1f; e != 31 && (e != 0 || h&0x3ff == 0) {
			all = append(all, uint16(h))
		}
	}
	for _, n := range []int{len(all), 8, 13, 7, 0} {
		got := make([]float32, n)
		fromHalves(got, all[len(all)-n:])
		for i, h := range all[len(all)-n:] {
			if math.Float32bits(got[i]) != math.Float32bits(fromHalf(h)) {
				t.Fatalf("fromHalves of %d: %#04x reads as %v, fromHalf %v", n, h, got[i], fromHalf(h))
			}
		}
	}
	// Rounding: to the nearest half, ties to the even mantissa; below the normal range, a signed
	// zero; beyond the largest half, the largest half.
	for _, c := range []struct {
		x    float32
		want uint16
	}{
		{0, 0}, {float32(math.Copysign(0, -1)), 0x8000}, {1, 0x3c00}, {-2, 0xc000},
		{1 + 1.0/2048, 0x3c00},             // halfway between 1 and 1+2^-10: to even (1)
		{1 + 3.0/2048, 0x3c02},             // halfway between 1+2^-10 and 1+2^-9: to even
		{1 + 1.0/2048 + 1.0/65536, 0x3c01}, // past halfway: up
		{0.1, 0x2e66}, {-0.333333, 0xb555},
		{6.1035156e-05, 0x0400}, // 2^-14, the smallest normal half
		{6.0e-05, 0}, {-1e-7, 0x8000}, {1e-30, 0},
		{65504, 0x7bff}, {65519, 0x7bff}, {1e9, 0x7bff}, {-1e9, 0xfbff},
		{2047.0 / 1024 * 32768, 0x7bff}, // 65504 itself
	} {
		if got := toHalf(c.x); got != c.want {
			t.Errorf("toHalf(%v) = %#04x, want %#04x", c.x, got, c.want)
		}
	}
	// Any float32 in range lands on one of the two halves around it, the nearer one.
	r := rand.New(rand.NewPCG(3, 4))
	for range 200000 {
		x := float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(30)-20)))
		if math.Abs(float64(x)) < 0x1p-14 || math.Abs(float64(x)) > 65504 {
			continue
		}
		got := float64(fromHalf(toHalf(x)))
		ulp := math.Ldexp(1, math.Ilogb(float64(x))-10)
		if math.Abs(got-float64(x)) > ulp/2 {
			t.Fatalf("toHalf(%v) reads back as %v: more than half a unit (%g) away", x, got, ulp)
		}
	}
}

// TestDotHalf compares dotHalf and the portable loop, at every length from 0 to 300 and with h
// longer than q, against a float64 sum of the halves' exact values.
func TestDotHalf(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 300; n++ {
		q := make([]float32, n)
		v := make([]float32, n+r.IntN(3))
		for i := range q {
			q[i] = float32(r.NormFloat64())
		}
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		h := make([]uint16, len(v))
		toHalves(h, v)
		var want, mag float64
		for i := range q {
			want += float64(q[i]) * halfValue(h[i])
			mag += math.Abs(float64(q[i]) * halfValue(h[i]))
		}
		tol := 1e-6*mag + 1e-12
		if got := float64(dotHalf(q, h)); math.Abs(got-want) > tol {
			t.Fatalf("dotHalf of length %d = %v, want %v (±%g)", n, got, want, tol)
		}
		if got := float64(dotHalfGo(q, h)); math.Abs(got-want) > tol {
			t.Fatalf("dotHalfGo of length %d = %v, want %v (±%g)", n, got, want, tol)
		}
		back := make([]float32, len(h))
		fromHalves(back, h)
		if got, want := dotHalf(q, h), dot(q, back); math.Abs(float64(got-want)) > tol {
			t.Fatalf("length %d: dotHalf = %v, dot of the halves read back = %v", n, got, want)
		}
	}
	// Each component counts once, wherever it falls in the lanes and the tail.
	for n := 1; n <= 40; n++ {
		for at := range n {
			q, h := make([]float32, n), make([]uint16, n)
			q[at], h[at] = 3, toHalf(5)
			if got := dotHalf(q, h); got != 15 {
				t.Fatalf("length %d, component %d alone: dotHalf = %v, want 15", n, at, got)
			}
		}
	}
}

func TestDotHalf_shortH(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("dotHalf with h shorter than q did not panic")
		}
	}()
	dotHalf(make([]float32, 16), make([]uint16, 15))
}

func BenchmarkDotHalf(b *testing.B) {
	for _, n := range []int{100, 256, 1536} {
		q, v := make([]float32, n), make([]float32, n)
		for i := range q {
			q[i], v[i] = float32(i%7)/7, float32(i%5)/5
		}
		h := make([]uint16, n)
		toHalves(h, v)
		for name, f := range map[string]func() float32{
			"dot":       func() float32 { return dot(q, v) },
			"dotHalf":   func() float32 { return dotHalf(q, h) },
			"dotHalfGo": func() float32 { return dotHalfGo(q, h) },
		} {
			b.Run(name+"/"+itoa(n), func(b *testing.B) {
				var s float32
				for b.Loop() {
					s += f()
				}
				sink = s
			})
		}
	}
}
