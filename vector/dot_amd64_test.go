package vector

import "testing"

// TestDot_SSE runs TestDot and TestDotRows with the SSE kernels on a processor with AVX, where
// dot and dotRows use the AVX ones, so that both amd64 paths are checked on it.
func TestDot_SSE(t *testing.T) {
	if !hasAVX {
		t.Skip("TestDot and TestDotRows run the SSE kernels here")
	}
	defer func(v bool) { hasAVX = v }(hasAVX)
	hasAVX = false
	t.Run("TestDot", TestDot)
	t.Run("TestDotRows", TestDotRows)
}
