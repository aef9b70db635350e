// Shared by the arm64 kernels (dot_arm64.s, half_arm64.s).

// NEON_ZERO_SUMS clears the four 4-lane sums V0-V3.
#define NEON_ZERO_SUMS \
	VEOR V0.B16, V0.B16, V0.B16; \
	VEOR V1.B16, V1.B16, V1.B16; \
	VEOR V2.B16, V2.B16, V2.B16; \
	VEOR V3.B16, V3.B16, V3.B16

// NEON_SUM_LANES adds the 4-lane sums V1, V2 and V3 into V0 (as fused multiply-adds by one,
// which round once, as an addition does) and then V0's lanes into F4. It overwrites V20 and
// R3-R7.
#define NEON_SUM_LANES \
	MOVD  $·neonOnes(SB), R3; \
	VLD1  (R3), [V20.S4]; \
	VFMLA V20.S4, V1.S4, V0.S4; \
	VFMLA V20.S4, V3.S4, V2.S4; \
	VFMLA V20.S4, V2.S4, V0.S4; \
	VMOV  V0.S[0], R4; \
	VMOV  V0.S[1], R5; \
	VMOV  V0.S[2], R6; \
	VMOV  V0.S[3], R7; \
	FMOVS R4, F4; \
	FMOVS R5, F5; \
	FMOVS R6, F6; \
	FMOVS R7, F7; \
	FADDS F5, F4; \
	FADDS F7, F6; \
	FADDS F6, F4
