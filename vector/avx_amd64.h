// Shared by the amd64 AVX kernels (dot_amd64.s, half_amd64.s).

// AVX_ZERO_SUMS clears the four 8-lane sums Y0-Y3.
#define AVX_ZERO_SUMS \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// AVX_MULADD4(p) multiplies Y4-Y7 by the 32 float32 at p (8 each, in order) and adds the
// products into the sums Y0-Y3.
#define AVX_MULADD4(p) \
	VMULPS (p), Y4, Y4; \
	VMULPS 32(p), Y5, Y5; \
	VMULPS 64(p), Y6, Y6; \
	VMULPS 96(p), Y7, Y7; \
	VADDPS Y4, Y0, Y0; \
	VADDPS Y5, Y1, Y1; \
	VADDPS Y6, Y2, Y2; \
	VADDPS Y7, Y3, Y3

// AVX_SUM_HALVES adds the 8-lane sums Y1, Y2 and Y3 into Y0, and then Y0's two halves into
// X0's four lanes. It overwrites X1.
#define AVX_SUM_HALVES \
	VADDPS       Y1, Y0, Y0; \
	VADDPS       Y3, Y2, Y2; \
	VADDPS       Y2, Y0, Y0; \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0

// AVX_SUM_LANES adds X0's four lanes into its first: lanes 2 3 0 1 onto 0 1 2 3, then lanes
// 1 0 3 2. It overwrites X1.
#define AVX_SUM_LANES \
	VPERMILPS $0x4e, X0, X1; \
	VADDPS    X1, X0, X0; \
	VPERMILPS $0xb1, X0, X1; \
	VADDPS    X1, X0, X0
