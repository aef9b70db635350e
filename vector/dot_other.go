//go:build !amd64 && !arm64

package vector

func dotArch(a, b []float32) float32 { return dotGo(a, b) }

func dotRowsArch(q, rows, out []float32) { dotRowsEach(q, rows, out) }
