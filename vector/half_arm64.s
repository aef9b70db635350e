#include "textflag.h"
#include "neon_arm64.h"

// FCVTL and FCVTL2 (halves to float32), which Go's assembler does not name, as words:
// 0x0e217800 | n<<5 | d converts the low four halves of Vn into Vd.S4, 0x4e217800 the high.
#define FCVTL_V20_V16  WORD $0x0e217a14
#define FCVTL2_V21_V16 WORD $0x4e217a15
#define FCVTL_V22_V17  WORD $0x0e217a36
#define FCVTL2_V23_V17 WORD $0x4e217a37

// func dotHalfNEON(q []float32, h []uint16) float32
//
// The dot product of q and h[:len(q)] (len(q) a multiple of 8; the caller checks len(h)):
// FCVTL turns four halves into four float32 lanes, fused-multiplied with q's and added into four
// 4-lane sums, 16 components at a time, then the last 8; then the sums and their lanes are
// added, as dotNEON does.
TEXT ·dotHalfNEON(SB), NOSPLIT, $0-52
	MOVD q_base+0(FP), R0
	MOVD q_len+8(FP), R2
	MOVD h_base+24(FP), R1
	NEON_ZERO_SUMS

loop16:
	CMP    $16, R2
	BLT    last8
	VLD1.P 32(R1), [V16.H8, V17.H8]
	VLD1.P 64(R0), [V4.S4, V5.S4, V6.S4, V7.S4]
	FCVTL_V20_V16
	FCVTL2_V21_V16
	FCVTL_V22_V17
	FCVTL2_V23_V17
	VFMLA  V20.S4, V4.S4, V0.S4
	VFMLA  V21.S4, V5.S4, V1.S4
	VFMLA  V22.S4, V6.S4, V2.S4
	VFMLA  V23.S4, V7.S4, V3.S4
	SUB    $16, R2
	B      loop16

last8:
	CBZ    R2, lanes
	VLD1.P 16(R1), [V16.H8]
	VLD1.P 32(R0), [V4.S4, V5.S4]
	FCVTL_V20_V16
	FCVTL2_V21_V16
	VFMLA  V20.S4, V4.S4, V0.S4
	VFMLA  V21.S4, V5.S4, V1.S4

lanes:
	NEON_SUM_LANES
	FMOVS F4, ret+48(FP)
	RET

// func halvesNEON(dst []float32, h []uint16)
//
// Writes h[:len(dst)] as float32 into dst (len(dst) a multiple of 8; the caller checks len(h)),
// eight at a time.
TEXT ·halvesNEON(SB), NOSPLIT, $0-48
	MOVD dst_base+0(FP), R0
	MOVD dst_len+8(FP), R2
	MOVD h_base+24(FP), R1

halves8:
	CBZ    R2, halvesDone
	VLD1.P 16(R1), [V16.H8]
	FCVTL_V20_V16
	FCVTL2_V21_V16
	VST1.P [V20.S4, V21.S4], 32(R0)
	SUB    $8, R2
	B      halves8

halvesDone:
	RET
