#include "textflag.h"
#include "avx_amd64.h"

// func dotHalfAVX(q []float32, h []uint16) float32
//
// The dot product of q and h[:len(q)] (len(q) a multiple of 8; the caller checks len(h)):
// VCVTPH2PS turns eight halves into eight float32 lanes, multiplied with q's and added into
// four 8-lane sums, 32 components at a time, then 8 at a time into the first; then the sums and
// their lanes are added.
TEXT ·dotHalfAVX(SB), NOSPLIT, $0-52
	MOVQ   q_base+0(FP), SI
	MOVQ   q_len+8(FP), CX
	MOVQ   h_base+24(FP), DI
	AVX_ZERO_SUMS

loop32:
	CMPQ      CX, $32
	JLT       loop8
	VCVTPH2PS (DI), Y4
	VCVTPH2PS 16(DI), Y5
	VCVTPH2PS 32(DI), Y6
	VCVTPH2PS 48(DI), Y7
	AVX_MULADD4(SI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JMP       loop32

loop8:
	CMPQ      CX, $8
	JLT       reduce
	VCVTPH2PS (DI), Y4
	VMULPS    (SI), Y4, Y4
	VADDPS    Y4, Y0, Y0
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JMP       loop8

reduce:
	AVX_SUM_HALVES
	AVX_SUM_LANES
	VMOVSS       X0, ret+48(FP)
	VZEROUPPER
	RET

// func halvesAVX(dst []float32, h []uint16)
//
// Writes h[:len(dst)] as float32 into dst (len(dst) a multiple of 8; the caller checks len(h)),
// eight at a time.
TEXT ·halvesAVX(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), SI
	MOVQ dst_len+8(FP), CX
	MOVQ h_base+24(FP), DI

halves8:
	CMPQ      CX, $8
	JLT       halvesDone
	VCVTPH2PS (DI), Y0
	VMOVUPS   Y0, (SI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JMP       halves8

halvesDone:
	VZEROUPPER
	RET
