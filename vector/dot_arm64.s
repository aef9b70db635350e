#include "textflag.h"
#include "neon_arm64.h"

// Four float32 ones, for NEON_SUM_LANES.
DATA ·neonOnes+0(SB)/4, $0x3f800000
DATA ·neonOnes+4(SB)/4, $0x3f800000
DATA ·neonOnes+8(SB)/4, $0x3f800000
DATA ·neonOnes+12(SB)/4, $0x3f800000
GLOBL ·neonOnes(SB), RODATA|NOPTR, $16

// func dotNEON(a, b []float32) float32
//
// The dot product of a and b[:len(a)] (the caller checks len(b) >= len(a)), with NEON, which
// every arm64 processor has: four 4-lane fused multiply-adds over 16 components at a time, then
// one over 4, then the sums and their lanes added, then the last 0-3 components one by one.
TEXT ·dotNEON(SB), NOSPLIT, $0-52
	MOVD a_base+0(FP), R0
	MOVD a_len+8(FP), R2
	MOVD b_base+24(FP), R1
	NEON_ZERO_SUMS

loop16:
	CMP    $16, R2
	BLT    loop4
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1.P 64(R1), [V16.S4, V17.S4, V18.S4, V19.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	VFMLA  V17.S4, V5.S4, V1.S4
	VFMLA  V18.S4, V6.S4, V2.S4
	VFMLA  V19.S4, V7.S4, V3.S4
	SUB    $16, R2
	B      loop16

loop4:
	CMP    $4, R2
	BLT    lanes
	VLD1.P 16(R0), [V4.S4]
	VLD1.P 16(R1), [V16.S4]
	VFMLA  V16.S4, V4.S4, V0.S4
	SUB    $4, R2
	B      loop4

lanes:
	NEON_SUM_LANES

tail:
	CBZ     R2, done
	FMOVS.P 4(R0), F8
	FMOVS.P 4(R1), F9
	FMULS   F8, F9
	FADDS   F9, F4
	SUB     $1, R2
	B       tail

done:
	FMOVS F4, ret+48(FP)
	RET
