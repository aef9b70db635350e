#include "textflag.h"
#include "avx_amd64.h"

// func dotRowsSSE(q, rows, out []float32)
//
// out[r] is the dot product of q and rows[r·len(q):(r+1)·len(q)], for every r of out (the
// caller checks len(rows) >= len(out)·len(q)); dot is one row. Each row in SSE, which every
// amd64 processor has: four 4-lane sums over 16 components at a time, then one over 4, then
// the lanes added, then the last 0-3 components one by one. MULPS and ADDPS take their
// operands from registers: with a memory operand, SSE requires 16-byte alignment, which a
// slice of float32 does not promise.
TEXT ·dotRowsSSE(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), R8
	MOVQ q_len+8(FP), R9
	MOVQ rows_base+24(FP), DI
	MOVQ out_base+48(FP), R10
	MOVQ out_len+56(FP), R11

row:
	TESTQ R11, R11
	JEQ   rowsdone
	MOVQ  R8, SI
	MOVQ  R9, CX
	XORPS X0, X0
	XORPS X1, X1
	XORPS X2, X2
	XORPS X3, X3

rloop16:
	CMPQ   CX, $16
	JLT    rloop4
	MOVUPS (SI), X4
	MOVUPS 16(SI), X5
	MOVUPS 32(SI), X6
	MOVUPS 48(SI), X7
	MOVUPS (DI), X8
	MOVUPS 16(DI), X9
	MOVUPS 32(DI), X10
	MOVUPS 48(DI), X11
	MULPS  X8, X4
	MULPS  X9, X5
	MULPS  X10, X6
	MULPS  X11, X7
	ADDPS  X4, X0
	ADDPS  X5, X1
	ADDPS  X6, X2
	ADDPS  X7, X3
	ADDQ   $64, SI
	ADDQ   $64, DI
	SUBQ   $16, CX
	JMP    rloop16

rloop4:
	CMPQ   CX, $4
	JLT    rlanes
	MOVUPS (SI), X4
	MOVUPS (DI), X8
	MULPS  X8, X4
	ADDPS  X4, X0
	ADDQ   $16, SI
	ADDQ   $16, DI
	SUBQ   $4, CX
	JMP    rloop4

rlanes:
	ADDPS  X1, X0
	ADDPS  X3, X2
	ADDPS  X2, X0
	MOVAPS X0, X1
	SHUFPS $0x4e, X1, X1 // lanes 2 3 0 1
	ADDPS  X1, X0
	MOVAPS X0, X1
	SHUFPS $0xb1, X1, X1 // lanes 1 0 3 2
	ADDPS  X1, X0

rtail:
	TESTQ CX, CX
	JEQ   rdone
	MOVSS (SI), X4
	MOVSS (DI), X8
	MULSS X8, X4
	ADDSS X4, X0
	ADDQ  $4, SI
	ADDQ  $4, DI
	DECQ  CX
	JMP   rtail

rdone:
	MOVSS X0, (R10)
	ADDQ  $4, R10
	DECQ  R11
	JMP   row

rowsdone:
	RET

// func dotRowsAVX(q, rows, out []float32)
//
// dotRowsSSE in AVX, where the processor has it: four 8-lane sums over 32 components at a
// time, then one over 8, then its two halves added, then 4 at a time into that, then the lanes
// added, then the last 0-3 components one by one.
TEXT ·dotRowsAVX(SB), NOSPLIT, $0-72
	MOVQ q_base+0(FP), R8
	MOVQ q_len+8(FP), R9
	MOVQ rows_base+24(FP), DI
	MOVQ out_base+48(FP), R10
	MOVQ out_len+56(FP), R11

vrow:
	TESTQ R11, R11
	JEQ   vrowsdone
	MOVQ  R8, SI
	MOVQ  R9, CX
	AVX_ZERO_SUMS

vloop32:
	CMPQ    CX, $32
	JLT     vloop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	AVX_MULADD4(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JMP     vloop32

vloop8:
	CMPQ    CX, $8
	JLT     vreduce
	VMOVUPS (SI), Y4
	VMULPS  (DI), Y4, Y4
	VADDPS  Y4, Y0, Y0
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     vloop8

vreduce:
	AVX_SUM_HALVES

vloop4:
	CMPQ    CX, $4
	JLT     vlanes
	VMOVUPS (SI), X4
	VMULPS  (DI), X4, X4
	VADDPS  X4, X0, X0
	ADDQ    $16, SI
	ADDQ    $16, DI
	SUBQ    $4, CX
	JMP     vloop4

vlanes:
	AVX_SUM_LANES

vtail:
	TESTQ  CX, CX
	JEQ    vdone
	VMOVSS (SI), X4
	VMULSS (DI), X4, X4
	VADDSS X4, X0, X0
	ADDQ   $4, SI
	ADDQ   $4, DI
	DECQ   CX
	JMP    vtail

vdone:
	VMOVSS X0, (R10)
	ADDQ   $4, R10
	DECQ   R11
	JMP    vrow

vrowsdone:
	VZEROUPPER
	RET
