//go:build !amd64

package vector

// dotRowsEach is dotRows by one call of dotArch per row, where no kernel does the rows at once.
func dotRowsEach(q, rows, out []float32) {
	dim := len(q)
	for r := range out {
		out[r] = dotArch(q, rows[r*dim:(r+1)*dim])
	}
}
