package vector

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDot compares dot, at every length from 0 to 300 and with b longer than a, against a sum
// in float64: the SIMD lanes and the portable loop add in different orders, so they agree to
// float32's rounding, not bit for bit.
func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 300; n++ {
		a := make([]float32, n)
		b := make([]float32, n+r.IntN(3))
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		var want, mag float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			mag += math.Abs(float64(a[i]) * float64(b[i]))
		}
		tol := 1e-6*mag + 1e-12
		for name, f := range map[string]func(a, b []float32) float32{"dot": dot, "dotGo": dotGo} {
			if got := float64(f(a, b)); math.Abs(got-want) > tol {
				t.Fatalf("%s of length %d = %v, want %v (±%g)", name, n, got, want, tol)
			}
		}
	}
	// Each component counts once, wherever it falls in the lanes and the tail.
	for n := 1; n <= 40; n++ {
		for at := range n {
			a, b := make([]float32, n), make([]float32, n)
			a[at], b[at] = 3, 5
			if got := dot(a, b); got != 15 {
				t.Fatalf("length %d, component %d alone: dot = %v, want 15", n, at, got)
			}
		}
	}
}

// TestDotRows: dotRows gives each row dot's score bit for bit, at lengths around the SIMD
// blocks and tails, for no rows, one and many, and writes nothing past out.
func TestDotRows(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, dim := range []int{0, 1, 3, 4, 5, 15, 16, 17, 20, 31, 33, 100, 256, 301} {
		for _, n := range []int{0, 1, 2, 7, 64} {
			q := make([]float32, dim)
			rows := make([]float32, n*dim+r.IntN(3)) // longer than needed is allowed
			for i := range q {
				q[i] = float32(r.NormFloat64())
			}
			for i := range rows {
				rows[i] = float32(r.NormFloat64())
			}
			out := make([]float32, n+1)
			out[n] = 42
			dotRows(q, rows, out[:n])
			for i := range n {
				if want := dot(q, rows[i*dim:(i+1)*dim]); out[i] != want {
					t.Fatalf("dim %d, row %d of %d: dotRows = %v, dot = %v", dim, i, n, out[i], want)
				}
			}
			if out[n] != 42 {
				t.Fatalf("dim %d, %d rows: dotRows wrote past out", dim, n)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("dotRows with rows shorter than out needs did not panic")
		}
	}()
	dotRows(make([]float32, 4), make([]float32, 7), make([]float32, 2))
}

func TestDot_shortB(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("dot with b shorter than a did not panic")
		}
	}()
	dot(make([]float32, 8), make([]float32, 7))
}

// TestDot_arm64 runs TestDot's and TestDotHalf's checks of the NEON kernels (dot_arm64.s,
// half_arm64.s), for the Raspberry Pi, on an amd64 machine: it builds this package's tests for
// arm64 and runs them under qemu-aarch64 (Debian's qemu-user, which .ci/run installs), with a
// graph search and the dense index's tail on top. Where this machine is arm64, the tests check
// the kernels themselves.
func TestDot_arm64(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("TestDot and TestDotHalf run the NEON kernels here")
	}
	if testing.Short() {
		t.Skip("a cross build of the package's tests; not with -short")
	}
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("no qemu-aarch64 (Debian: apt-get install qemu-user) to run the arm64 kernel")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	bin := filepath.Join(t.TempDir(), "vector-arm64.test")
	build := exec.Command(goBin, "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go test -c for arm64: %v\n%s", err, out)
	}
	run := "^(TestDot|TestDot_shortB|TestHalf|TestDotHalf|TestDotHalf_shortH|TestHNSW_SearchExact|TestDense_Tail)$"
	out, err := exec.Command(qemu, bin, "-test.run", run, "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("the tests under qemu-aarch64: %v\n%s", err, out)
	}
	for _, name := range []string{"TestDot", "TestHalf", "TestDotHalf", "TestHNSW_SearchExact", "TestDense_Tail"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Fatalf("%s did not pass under qemu-aarch64:\n%s", name, out)
		}
	}
}

func BenchmarkDot(b *testing.B) {
	for _, n := range []int{100, 256, 1536} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i%7), float32(i%5)
		}
		for name, f := range map[string]func(a, b []float32) float32{"dot": dot, "dotGo": dotGo} {
			b.Run(name+"/"+itoa(n), func(b *testing.B) {
				var s float32
				for b.Loop() {
					s += f(x, y)
				}
				sink = s
			})
		}
	}
}

var sink float32

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
