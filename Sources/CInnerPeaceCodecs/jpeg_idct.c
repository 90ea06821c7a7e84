#include "jpeg_idct.h"

#include <immintrin.h>

// libjpeg-turbo 2.1's scaled inverse DCTs (jidctint.c: jpeg_idct_5x5, 6x6, 7x7, 10x10, 12x12 and
// 14x14), which it runs in plain C, in AVX-512: the same output bytes for every input. They are
// what libjpeg runs when a JPEG is decoded at 5/8, 6/8 or 7/8 of its size (the chroma of a 4:2:0
// file at twice the luma's size), which is how a zoomed crop of a photo is decoded.
//
// - Pass 1 does the arithmetic the C code does in JLONG (64 bits) in 64-bit lanes, so nothing
//   overflows differently: a dequantized coefficient is a short times a short (at most 2^30 in
//   magnitude), and no product or sum reaches 2^51. libjpeg's casts to int are reproduced where
//   it makes them (the low 32 bits). Its products by constants take each lane's low 32 bits
//   (vpmuldq, a third of vpmullq's cost on Intel) unless a coefficient is too large for that.
// - Pass 2 only adds, subtracts, shifts left and multiplies, which carry no high bit down, and
//   libjpeg reads its sums at bits 18 to 27 alone: the low 32 bits of each sum are enough. It
//   takes the rows in the lanes: up to eight in 64-bit lanes (5x5, 6x6, 7x7), all of them in
//   sixteen 32-bit lanes (10x10, 12x12, 14x14). `enum lanes`, below, says which.
// - The range limit (libjpeg's table, read at bits 18 to 27 of each sum) equals
//   clamp(sign-extended 10 bits, -128, 127) + 128 for all 1,024 entries (the test compares the
//   table), done with 16-bit shifts, a saturating pack and an xor with 0x80; masked stores write
//   exactly the block's bytes.
// - The dequantization table is libjpeg's ISLOW_MULT_TYPE, a short in libjpeg-turbo built with
//   its SIMD (WITH_SIMD), as Debian and every distribution build it.
//
// innerpeace_jpeg_vector_idct puts them in place of libjpeg's own functions, compared by address,
// so that a library whose functions are others is left as it is.

#define VECTOR_TARGET __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

typedef __m512i V;

// How the arithmetic below is done: ADD, SUB, MULC (a product by a constant), SHL and SRA follow
// the `lanes` in scope, a constant wherever they are used (each kernel takes it, and is inlined at
// every call, so each is compiled for each kind it is called with).
// - wide64: 64-bit lanes, products in 64 bits (vpmullq): libjpeg's JLONG arithmetic exactly.
// - narrow64: 64-bit lanes, products by vpmuldq, which multiplies each lane's low 32 bits
//   sign-extended (vpmullq costs three of its one on Intel's cores). The same 64-bit product when
//   every lane's value fits in 32 bits (pass 1 of a block whose dequantized coefficients are all
//   under 2^28 in magnitude: no kernel multiplies a sum of more than four), and the same low 32
//   bits whatever the lanes hold.
// - dwords32: 32-bit lanes, sixteen of them: the same low 32 bits as JLONG.
// Pass 2 needs no more than the low 32 bits: it only adds, subtracts, shifts left and multiplies,
// which carry no high bit down, and libjpeg reads its sums at bits 18 to 27 alone.
enum lanes { wide64, narrow64, dwords32 };
#define ADD(a, b)  vector_add(a, b, lanes)
#define SUB(a, b)  vector_sub(a, b, lanes)
#define MULC(a, c) vector_mulc(a, c, lanes)
#define SHL(a, n)  (lanes == dwords32 ? _mm512_slli_epi32(a, n) : _mm512_slli_epi64(a, n))
#define SRA(a, n)  (lanes == dwords32 ? _mm512_srai_epi32(a, n) : _mm512_srai_epi64(a, n))

#define ALWAYS_INLINE static inline __attribute__((always_inline)) VECTOR_TARGET
// A kernel: inlined at each call, where its `lanes` is a constant.
#define KERNEL ALWAYS_INLINE void

ALWAYS_INLINE V vector_add(V a, V b, enum lanes lanes)
{
  return lanes == dwords32 ? _mm512_add_epi32(a, b) : _mm512_add_epi64(a, b);
}

ALWAYS_INLINE V vector_sub(V a, V b, enum lanes lanes)
{
  return lanes == dwords32 ? _mm512_sub_epi32(a, b) : _mm512_sub_epi64(a, b);
}

ALWAYS_INLINE V vector_mulc(V a, int c, enum lanes lanes)
{
  switch (lanes) {
  case wide64: return _mm512_mullo_epi64(a, _mm512_set1_epi64(c));
  case narrow64: return _mm512_mul_epi32(a, _mm512_set1_epi64(c));
  default: return _mm512_mullo_epi32(a, _mm512_set1_epi32(c));
  }
}

// libjpeg's (int)RIGHT_SHIFT(x, 11) (after pass 1), and (int)x, sign-extended back to 64 bits.
#define TRUNC_SHR11(x) _mm512_srai_epi64(_mm512_slli_epi64(x, 21), 32)
#define TRUNC32(x)     _mm512_srai_epi64(_mm512_slli_epi64(x, 32), 32)
// Pass 1's DC term, with its rounding (64-bit lanes), and pass 2's (any lanes).
#define DC_P1(in, q)   _mm512_add_epi64(_mm512_slli_epi64(deq(in, q, 0), 13), _mm512_set1_epi64(1 << 10))
#define DC_P2(c0)      SHL(ADD(c0, lanes == dwords32 ? _mm512_set1_epi32(16) : _mm512_set1_epi64(16)), 13)

// Whether pass 1 must multiply in 64 bits: some of rows[first..last] (dequantized coefficients)
// is 2^28 or more in magnitude. Never so for a real photo's coefficients (at most 2^16).
static inline VECTOR_TARGET int needs_wide(const V *rows, int first, int last)
{
  V bits = _mm512_setzero_si512();
  for (int k = first; k <= last; k++) bits = _mm512_or_si512(bits, _mm512_abs_epi64(rows[k]));
  return _mm512_test_epi64_mask(bits, _mm512_set1_epi64(~((1LL << 28) - 1))) != 0;
}

// Row k (8 coefficients) of a block, dequantized, in 64-bit lanes.
static inline VECTOR_TARGET V deq(const JCOEF *in, const short *q, int k)
{
  V c = _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)(in + 8 * k)));
  V m = _mm512_cvtepi16_epi64(_mm_loadu_si128((const __m128i *)(q + 8 * k)));
  return _mm512_mul_epi32(c, m);     // short*short, exact
}

// Transposes 8x8 64-bit values: rows r0..r7 in, columns c[0..7] out.
static inline VECTOR_TARGET void transpose8(V r0, V r1, V r2, V r3, V r4, V r5, V r6,
                                  V r7, V *c)
{
  V t0 = _mm512_unpacklo_epi64(r0, r1), t1 = _mm512_unpackhi_epi64(r0, r1);
  V t2 = _mm512_unpacklo_epi64(r2, r3), t3 = _mm512_unpackhi_epi64(r2, r3);
  V t4 = _mm512_unpacklo_epi64(r4, r5), t5 = _mm512_unpackhi_epi64(r4, r5);
  V t6 = _mm512_unpacklo_epi64(r6, r7), t7 = _mm512_unpackhi_epi64(r6, r7);
  const V ia = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const V ib = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  V s0 = _mm512_permutex2var_epi64(t0, ia, t2);  // cols 0/4 rows 0-3
  V s2 = _mm512_permutex2var_epi64(t0, ib, t2);  // cols 2/6
  V s1 = _mm512_permutex2var_epi64(t1, ia, t3);  // cols 1/5
  V s3 = _mm512_permutex2var_epi64(t1, ib, t3);  // cols 3/7
  V s4 = _mm512_permutex2var_epi64(t4, ia, t6);
  V s6 = _mm512_permutex2var_epi64(t4, ib, t6);
  V s5 = _mm512_permutex2var_epi64(t5, ia, t7);
  V s7 = _mm512_permutex2var_epi64(t5, ib, t7);
  c[0] = _mm512_shuffle_i64x2(s0, s4, 0x44); c[4] = _mm512_shuffle_i64x2(s0, s4, 0xEE);
  c[1] = _mm512_shuffle_i64x2(s1, s5, 0x44); c[5] = _mm512_shuffle_i64x2(s1, s5, 0xEE);
  c[2] = _mm512_shuffle_i64x2(s2, s6, 0x44); c[6] = _mm512_shuffle_i64x2(s2, s6, 0xEE);
  c[3] = _mm512_shuffle_i64x2(s3, s7, 0x44); c[7] = _mm512_shuffle_i64x2(s3, s7, 0xEE);
}

// Packs 4 output columns x0..x3 (lanes = rows, the sums before the final shift) into 16-bit
// words: word c of each 64-bit lane is bits 18..27 of x_c, sign-extended.
static inline VECTOR_TARGET V pack4(V x0, V x1, V x2, V x3)
{
  V w = _mm512_srli_epi64(x0, 12);
  w = _mm512_mask_blend_epi16(0x22222222, w, _mm512_slli_epi64(x1, 4));
  w = _mm512_mask_blend_epi16(0x44444444, w, _mm512_slli_epi64(x2, 20));
  w = _mm512_mask_blend_epi16(0x88888888, w, _mm512_slli_epi64(x3, 36));
  return _mm512_srai_epi16(w, 6);
}

// Range-limits and stores the N output columns x[0..N-1] (lanes = rows 0..N-1, the sums before
// the final shift) at `col` of those rows; N <= 8.
static inline VECTOR_TARGET void store_rows(const V *x, int N, JSAMPARRAY out, JDIMENSION col)
{
#define XI(i) x[(i) < N ? (i) : N - 1]
  const V flip = _mm512_set1_epi8((char)0x80);
  const V shufA = _mm512_broadcast_i32x4(
    _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15));
  __mmask16 m = (__mmask16)((1u << N) - 1);
  V w0 = pack4(XI(0), XI(1), XI(2), XI(3));
  V w1 = pack4(XI(4), XI(5), XI(6), XI(7));
  // lane L: [row 2L c0-7 | row 2L+1 c0-7]
  V C0 = _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_packs_epi16(w0, w1), shufA), flip);
  V C1 = _mm512_unpackhi_epi64(C0, C0);
  for (int L = 0; L < 4; L++) {
    if (2 * L < N) _mm_mask_storeu_epi8(out[2 * L] + col, m, _mm512_castsi512_si128(C0));
    if (2 * L + 1 < N) _mm_mask_storeu_epi8(out[2 * L + 1] + col, m, _mm512_castsi512_si128(C1));
    C0 = _mm512_alignr_epi64(C0, C0, 2);
    C1 = _mm512_alignr_epi64(C1, C1, 2);
  }
#undef XI
}

// Pass 1's rows o[0..n-1] (n <= 16: eight columns in 64-bit lanes, each value in the low 32 bits)
// as pass 2's inputs in 32-bit lanes: c[k]'s lane r is row r's column k (rows n to 15 repeat row
// n - 1). Each pair of rows r and r + 8 is joined first, so that two 8 x 8 transposes run at once,
// one in each half.
static inline VECTOR_TARGET void transpose_dwords(const V *o, int n, V *c)
{
  const V evens = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  V p[8], t[8], u[8];
  for (int r = 0; r < 8; r++)
    p[r] = _mm512_permutex2var_epi32(o[r < n ? r : n - 1], evens, o[r + 8 < n ? r + 8 : n - 1]);
  for (int r = 0; r < 8; r += 2) {
    t[r] = _mm512_unpacklo_epi32(p[r], p[r + 1]);
    t[r + 1] = _mm512_unpackhi_epi32(p[r], p[r + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    u[h] = _mm512_unpacklo_epi64(t[h], t[h + 2]);      // columns 0 and 4 of rows h..h+3
    u[h + 1] = _mm512_unpackhi_epi64(t[h], t[h + 2]);  // 1 and 5
    u[h + 2] = _mm512_unpacklo_epi64(t[h + 1], t[h + 3]);  // 2 and 6
    u[h + 3] = _mm512_unpackhi_epi64(t[h + 1], t[h + 3]);  // 3 and 7
  }
  const V low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
  const V high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
  for (int k = 0; k < 4; k++) {
    c[k] = _mm512_permutex2var_epi64(u[k], low, u[k + 4]);
    c[k + 4] = _mm512_permutex2var_epi64(u[k], high, u[k + 4]);
  }
}

// Range-limits and stores N output columns x[0..N-1] (16 lanes = rows 0..15, the sums before the
// final shift, in their low 32 bits) at `col` of rows 0..nrows-1; N <= 16.
static inline VECTOR_TARGET void store_dwords(const V *x, int N, JSAMPARRAY out, int nrows, JDIMENSION col)
{
#define XI(i) x[(i) < N ? (i) : N - 1]
  // Columns 2j and 2j + 1 in the words of each lane: bits 18 to 27 of each sum, sign-extended.
  V w[8];
  for (int j = 0; j < 8; j++) {
    const V pair =
      _mm512_mask_blend_epi16(0xAAAAAAAA, _mm512_srli_epi32(XI(2 * j), 12), _mm512_slli_epi32(XI(2 * j + 1), 4));
    w[j] = _mm512_srai_epi16(pair, 6);
  }
#undef XI
  // Bytes (saturated: the range limit), each 128-bit lane's four rows in its four dwords: q[m]
  // holds columns 4m to 4m + 3.
  const V flip = _mm512_set1_epi8((char)0x80);
  const V rows_in_dwords = _mm512_broadcast_i32x4(
    _mm_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15));
  V q[4];
  for (int m = 0; m < 4; m++)
    q[m] =
      _mm512_xor_si512(_mm512_shuffle_epi8(_mm512_packs_epi16(w[2 * m], w[2 * m + 1]), rows_in_dwords), flip);
  // row[i]'s 128-bit lane L: row 4L + i, columns 0 to 15.
  const V a_low = _mm512_unpacklo_epi32(q[0], q[1]), b_low = _mm512_unpacklo_epi32(q[2], q[3]);
  const V a_high = _mm512_unpackhi_epi32(q[0], q[1]), b_high = _mm512_unpackhi_epi32(q[2], q[3]);
  const V row[4] = {_mm512_unpacklo_epi64(a_low, b_low), _mm512_unpackhi_epi64(a_low, b_low),
                    _mm512_unpacklo_epi64(a_high, b_high), _mm512_unpackhi_epi64(a_high, b_high)};
  const __mmask16 m = (__mmask16)((1u << N) - 1);
  for (int i = 0; i < 4; i++) {
    V lanes_left = row[i];
    for (int r = i; r < nrows; r += 4) {
      _mm_mask_storeu_epi8(out[r] + col, m, _mm512_castsi512_si128(lanes_left));
      lanes_left = _mm512_alignr_epi32(lanes_left, lanes_left, 4);
    }
  }
}

// MARK: 12x12

// The 12-point kernel on 8 inputs, the same in both passes; z3 is the DC term (scaled, with the
// pass's rounding). o[0..11] are the sums before the pass's shift, in output order.
KERNEL k12(enum lanes lanes, V z3, V in1, V in2, V in3, V in4, V in5, V in6, V in7, V *o)
{
  V z1, z2, z4, tmp10, tmp11, tmp12, tmp13, tmp14, tmp15;
  V tmp20, tmp21, tmp22, tmp23, tmp24, tmp25;
  z4 = MULC(in4, 10033);
  tmp10 = ADD(z3, z4);
  tmp11 = SUB(z3, z4);
  z4 = MULC(in2, 11190);
  z1 = SHL(in2, 13);
  z2 = SHL(in6, 13);
  tmp12 = SUB(z1, z2);
  tmp21 = ADD(z3, tmp12);
  tmp24 = SUB(z3, tmp12);
  tmp12 = ADD(z4, z2);
  tmp20 = ADD(tmp10, tmp12);
  tmp25 = SUB(tmp10, tmp12);
  tmp12 = SUB(SUB(z4, z1), z2);
  tmp22 = ADD(tmp11, tmp12);
  tmp23 = SUB(tmp11, tmp12);

  z1 = in1; z2 = in3; z3 = in5; z4 = in7;
  tmp11 = MULC(z2, 10703);
  tmp14 = MULC(z2, -4433);
  tmp10 = ADD(z1, z3);
  tmp15 = MULC(ADD(tmp10, z4), 7053);
  tmp12 = ADD(tmp15, MULC(tmp10, 2139));
  tmp10 = ADD(ADD(tmp12, tmp11), MULC(z1, 2295));
  tmp13 = MULC(ADD(z3, z4), -8565);
  tmp12 = ADD(tmp12, SUB(ADD(tmp13, tmp14), MULC(z3, 12112)));
  tmp13 = ADD(tmp13, ADD(SUB(tmp15, tmp11), MULC(z4, 12998)));
  tmp15 = ADD(tmp15, SUB(SUB(tmp14, MULC(z1, 5540)), MULC(z4, 16244)));
  z1 = SUB(z1, z4);
  z2 = SUB(z2, z3);
  z3 = MULC(ADD(z1, z2), 4433);
  tmp11 = ADD(z3, MULC(z1, 6270));
  tmp14 = SUB(z3, MULC(z2, 15137));

  o[0] = ADD(tmp20, tmp10); o[11] = SUB(tmp20, tmp10);
  o[1] = ADD(tmp21, tmp11); o[10] = SUB(tmp21, tmp11);
  o[2] = ADD(tmp22, tmp12); o[9]  = SUB(tmp22, tmp12);
  o[3] = ADD(tmp23, tmp13); o[8]  = SUB(tmp23, tmp13);
  o[4] = ADD(tmp24, tmp14); o[7]  = SUB(tmp24, tmp14);
  o[5] = ADD(tmp25, tmp15); o[6]  = SUB(tmp25, tmp15);
}


VECTOR_TARGET static void idct_12x12(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                     JSAMPARRAY output_buf, JDIMENSION output_col)
{
  const short *q = (const short *)compptr->dct_table;
  const JCOEF *in = coef_block;
  V o[12], c[8], x[12];
  (void)cinfo;

  // Pass 1: columns in lanes
  {
    V d[8];
    for (int k = 1; k < 8; k++) d[k] = deq(in, q, k);
    if (needs_wide(d, 1, 7))
      k12(wide64, DC_P1(in, q), d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
    else
      k12(narrow64, DC_P1(in, q), d[1], d[2], d[3], d[4], d[5], d[6], d[7], o);
  }

  // Pass 2: the twelve rows in 32-bit lanes; (int)RIGHT_SHIFT(x, 11) is the low half of x >> 11.
  {
    const enum lanes lanes = dwords32;
    for (int i = 0; i < 12; i++) o[i] = _mm512_srli_epi64(o[i], 11);
    transpose_dwords(o, 12, c);
    k12(lanes, DC_P2(c[0]), c[1], c[2], c[3], c[4], c[5], c[6], c[7], x);
    store_dwords(x, 12, output_buf, 12, output_col);
  }
}

#define R(i) o[(i) < n ? (i) : n - 1]
// Transposes the n rows of o[] (n <= 8, padded by repetition).
static inline VECTOR_TARGET void transpose_rows(const V *o, int n, V *c)
{
  transpose8(R(0), R(1), R(2), R(3), R(4), R(5), R(6), R(7), c);
}
#undef R

// MARK: 7x7: same kernel in both passes
KERNEL k7(enum lanes lanes, V tmp13, const V *in, V *o)
{
  V z1 = in[2], z2 = in[4], z3 = in[6], tmp0, tmp1, tmp2, tmp10, tmp11, tmp12;
  tmp10 = MULC(SUB(z2, z3), 7223);
  tmp12 = MULC(SUB(z1, z2), 2578);
  tmp11 = SUB(ADD(ADD(tmp10, tmp12), tmp13), MULC(z2, 15083));
  tmp0 = ADD(z1, z3);
  z2 = SUB(z2, tmp0);
  tmp0 = ADD(MULC(tmp0, 10438), tmp13);
  tmp10 = ADD(tmp10, SUB(tmp0, MULC(z3, 637)));
  tmp12 = ADD(tmp12, SUB(tmp0, MULC(z1, 20239)));
  tmp13 = ADD(tmp13, MULC(z2, 11585));
  z1 = in[1]; z2 = in[3]; z3 = in[5];
  tmp1 = MULC(ADD(z1, z2), 7663);
  tmp2 = MULC(SUB(z1, z2), 1395);
  tmp0 = SUB(tmp1, tmp2);
  tmp1 = ADD(tmp1, tmp2);
  tmp2 = MULC(ADD(z2, z3), -11295);
  tmp1 = ADD(tmp1, tmp2);
  z2 = MULC(ADD(z1, z3), 5027);
  tmp0 = ADD(tmp0, z2);
  tmp2 = ADD(tmp2, ADD(z2, MULC(z3, 15326)));
  o[0] = ADD(tmp10, tmp0); o[6] = SUB(tmp10, tmp0);
  o[1] = ADD(tmp11, tmp1); o[5] = SUB(tmp11, tmp1);
  o[2] = ADD(tmp12, tmp2); o[4] = SUB(tmp12, tmp2);
  o[3] = tmp13;
}

// MARK: 5x5: same kernel in both passes
KERNEL k5(enum lanes lanes, V tmp12, const V *in, V *o)
{
  V tmp0 = in[2], tmp1 = in[4], z1, z2, z3, tmp10, tmp11;
  z1 = MULC(ADD(tmp0, tmp1), 6476);
  z2 = MULC(SUB(tmp0, tmp1), 2896);
  z3 = ADD(tmp12, z2);
  tmp10 = ADD(z3, z1);
  tmp11 = SUB(z3, z1);
  tmp12 = SUB(tmp12, SHL(z2, 2));
  z2 = in[1]; z3 = in[3];
  z1 = MULC(ADD(z2, z3), 6810);
  tmp0 = ADD(z1, MULC(z2, 4209));
  tmp1 = SUB(z1, MULC(z3, 17828));
  o[0] = ADD(tmp10, tmp0); o[4] = SUB(tmp10, tmp0);
  o[1] = ADD(tmp11, tmp1); o[3] = SUB(tmp11, tmp1);
  o[2] = tmp12;
}

// A size whose kernel serves both passes (5x5, 6x6, 7x7): `kernel` takes the DC term (scaled,
// with the pass's rounding) and the inputs in[1..size-1], and gives the size's outputs.
static inline __attribute__((always_inline)) VECTOR_TARGET void idct_same_kernel(
    const jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf, JDIMENSION output_col,
    int size, void (*kernel)(enum lanes, V, const V *, V *))
{
  const short *q = (const short *)compptr->dct_table;
  const JCOEF *in = coef_block;
  V inputs[8], o[8], c[8], x[8];
  for (int k = 1; k < size; k++) inputs[k] = deq(in, q, k);
  // Pass 1 in 64 bits: these kernels have few products, and a check per block would cost more.
  kernel(wide64, DC_P1(in, q), inputs, o);
  for (int i = 0; i < size; i++) o[i] = TRUNC_SHR11(o[i]);
  transpose_rows(o, size, c);
  const enum lanes lanes = narrow64;
  kernel(lanes, DC_P2(c[0]), c, x);
  store_rows(x, size, output_buf, output_col);
}

VECTOR_TARGET static void idct_5x5(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                   JSAMPARRAY output_buf, JDIMENSION output_col)
{
  (void)cinfo;
  idct_same_kernel(compptr, coef_block, output_buf, output_col, 5, k5);
}

VECTOR_TARGET static void idct_7x7(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                   JSAMPARRAY output_buf, JDIMENSION output_col)
{
  (void)cinfo;
  idct_same_kernel(compptr, coef_block, output_buf, output_col, 7, k7);
}

// MARK: 6x6: libjpeg's pass 1 shifts its even term's difference and scales the odd one by
// PASS1_BITS before they meet; adding them scaled by CONST_BITS and shifting the sum gives the same
// value ((a + (b << 13)) >> 11 = (a >> 11) + (b << 2)), so pass 2's form serves both passes.
KERNEL k6(enum lanes lanes, V dc, const V *in, V *o)
{
  const V c4 = MULC(in[4], 5793), even_sum = ADD(dc, c4), even_difference = SUB(SUB(dc, c4), c4);
  const V c2 = MULC(in[2], 10033), even_high = ADD(even_sum, c2), even_low = SUB(even_sum, c2);
  const V z1 = in[1], z2 = in[3], z3 = in[5], c5 = MULC(ADD(z1, z3), 2998);
  const V odd0 = ADD(c5, SHL(ADD(z1, z2), 13)), odd2 = ADD(c5, SHL(SUB(z3, z2), 13));
  const V odd1 = SHL(SUB(SUB(z1, z2), z3), 13);
  o[0] = ADD(even_high, odd0); o[5] = SUB(even_high, odd0);
  o[1] = ADD(even_difference, odd1); o[4] = SUB(even_difference, odd1);
  o[2] = ADD(even_low, odd2); o[3] = SUB(even_low, odd2);
}

VECTOR_TARGET static void idct_6x6(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                   JSAMPARRAY output_buf, JDIMENSION output_col)
{
  (void)cinfo;
  idct_same_kernel(compptr, coef_block, output_buf, output_col, 6, k6);
}

// MARK: 10x10
KERNEL k10_even(enum lanes lanes, V z3, V in2, V in4, V in6, V *t, int pass1)
{
  // t[0..4] = tmp20..tmp24
  V *tmp20 = &t[0], *tmp21 = &t[1], *tmp22 = &t[2], *tmp23 = &t[3], *tmp24 = &t[4];
  V z4 = in4, z1, z2, tmp10, tmp11, tmp12, tmp13;
  z1 = MULC(z4, 9373);
  z2 = MULC(z4, 3580);
  tmp10 = ADD(z3, z1);
  tmp11 = SUB(z3, z2);
  *tmp22 = SUB(z3, SHL(SUB(z1, z2), 1));
  if (pass1) *tmp22 = SRA(*tmp22, 11);
  z2 = in2; z3 = in6;
  z1 = MULC(ADD(z2, z3), 6810);
  tmp12 = ADD(z1, MULC(z2, 4209));
  tmp13 = SUB(z1, MULC(z3, 17828));
  *tmp20 = ADD(tmp10, tmp12); *tmp24 = SUB(tmp10, tmp12);
  *tmp21 = ADD(tmp11, tmp13); *tmp23 = SUB(tmp11, tmp13);
}

// The odd part of the 10-point kernel, the same in both passes (libjpeg writes it out in each):
// z1, z2, z3, z4 are inputs 1, 3, 5 and 7; tmp10 to tmp14 go to odd[0..4], tmp12 scaled by
// `shift` (PASS1_BITS in pass 1, CONST_BITS in pass 2), the others by CONST_BITS.
KERNEL k10_odd(enum lanes lanes, V z1, V z2, V z3, V z4, int shift, V *odd)
{
  const V tmp11 = ADD(z2, z4), tmp13 = SUB(z2, z4), tmp12 = MULC(tmp13, 2531), z5 = SHL(z3, 13);
  V w2 = MULC(tmp11, 7791), w4 = ADD(z5, tmp12);
  odd[0] = ADD(ADD(MULC(z1, 11443), w2), w4);
  odd[4] = ADD(SUB(MULC(z1, 1812), w2), w4);
  w2 = MULC(tmp11, 4815);
  w4 = SUB(SUB(z5, tmp12), SHL(tmp13, 12));
  odd[2] = SHL(SUB(SUB(z1, tmp13), z3), shift);
  odd[1] = SUB(SUB(MULC(z1, 10323), w2), w4);
  odd[3] = ADD(SUB(MULC(z1, 5260), w2), w4);
}

// MARK: 14x14
KERNEL k14_even(enum lanes lanes, V z1, V in2, V in4, V in6, V *t, int pass1)
{
  // t[0..6] = tmp20..tmp26
  V z4 = in4, z2, z3, tmp10, tmp11, tmp12, tmp13, tmp14, tmp15;
  z2 = MULC(z4, 10438);
  z3 = MULC(z4, 2578);
  z4 = MULC(z4, 7223);
  tmp10 = ADD(z1, z2);
  tmp11 = ADD(z1, z3);
  tmp12 = SUB(z1, z4);
  t[3] = SUB(z1, SHL(SUB(ADD(z2, z3), z4), 1));
  if (pass1) t[3] = SRA(t[3], 11);
  z1 = in2; z2 = in6;
  z3 = MULC(ADD(z1, z2), 9058);
  tmp13 = ADD(z3, MULC(z1, 2237));
  tmp14 = SUB(z3, MULC(z2, 14084));
  tmp15 = SUB(MULC(z1, 5027), MULC(z2, 11295));
  t[0] = ADD(tmp10, tmp13); t[6] = SUB(tmp10, tmp13);
  t[1] = ADD(tmp11, tmp14); t[5] = SUB(tmp11, tmp14);
  t[2] = ADD(tmp12, tmp15); t[4] = SUB(tmp12, tmp15);
}

// The odd part of the 14-point kernel, the same in both passes (libjpeg writes it out in each):
// z1, z2, z3, z4 are inputs 1, 3, 5 and 7; tmp10 to tmp16 go to odd[0..6], tmp13 scaled by
// `shift` (PASS1_BITS in pass 1, CONST_BITS in pass 2), the others by CONST_BITS.
KERNEL k14_odd(enum lanes lanes, V z1, V z2, V z3, V z4, int shift, V *odd)
{
  const V z4_scaled = SHL(z4, 13), z13 = ADD(z1, z3);
  V tmp11 = MULC(ADD(z1, z2), 10935), tmp12 = MULC(z13, 9810), tmp14 = MULC(z13, 6164);
  odd[0] = SUB(ADD(ADD(tmp11, tmp12), z4_scaled), MULC(z1, 9232));
  const V z1_less_z2 = SUB(z1, z2);
  V tmp15 = SUB(MULC(z1_less_z2, 3826), z4_scaled);
  odd[6] = ADD(SUB(tmp14, MULC(z1, 8693)), tmp15);
  V w = SUB(MULC(ADD(z2, z3), -1297), z4_scaled);
  odd[1] = ADD(tmp11, SUB(w, MULC(z2, 3474)));
  odd[2] = ADD(tmp12, SUB(w, MULC(z3, 19447)));
  w = MULC(SUB(z3, z2), 11512);
  odd[4] = ADD(tmp14, SUB(ADD(w, z4_scaled), MULC(z3, 13850)));
  odd[5] = ADD(tmp15, ADD(w, MULC(z2, 5529)));
  odd[3] = SHL(SUB(ADD(z1_less_z2, z4), z3), shift);
}

// A size whose kernel is an even and an odd part (10x10, 14x14): the even part takes the DC term
// (scaled, with the pass's rounding) and inputs 2, 4 and 6, and gives the sums t[0..size/2-1],
// the middle one already shifted in pass 1; the odd part takes inputs 1, 3, 5 and 7.
ALWAYS_INLINE void idct_even_odd(const jpeg_component_info *compptr, JCOEFPTR coef_block, JSAMPARRAY output_buf,
                                 JDIMENSION output_col, int size,
                                 void (*even_part)(enum lanes, V, V, V, V, V *, int),
                                 void (*odd_part)(enum lanes, V, V, V, V, int, V *))
{
  const short *q = (const short *)compptr->dct_table;
  const JCOEF *in = coef_block;
  const int half = size / 2, middle = half / 2;
  V o[14], c[8], x[14], even[7], odd[7], d[8];

  // Pass 1: columns in 64-bit lanes. Pass 2 reads the low 32 bits of o[]: (int)RIGHT_SHIFT(x, 11)
  // is the low half of x >> 11, and (int)x of x.
  for (int k = 1; k < 8; k++) d[k] = deq(in, q, k);
  if (needs_wide(d, 1, 7)) {
    even_part(wide64, DC_P1(in, q), d[2], d[4], d[6], even, 1);
    odd_part(wide64, d[1], d[3], d[5], d[7], 2, odd);
  } else {
    even_part(narrow64, DC_P1(in, q), d[2], d[4], d[6], even, 1);
    odd_part(narrow64, d[1], d[3], d[5], d[7], 2, odd);
  }
  {
    const enum lanes lanes = narrow64;
    for (int i = 0; i < half; i++) {
      o[i] = ADD(even[i], odd[i]);
      o[size - 1 - i] = SUB(even[i], odd[i]);
      if (i != middle) {  // the middle sum was shifted already
        o[i] = _mm512_srli_epi64(o[i], 11);
        o[size - 1 - i] = _mm512_srli_epi64(o[size - 1 - i], 11);
      }
    }
  }

  // Pass 2: all the rows in 32-bit lanes.
  {
    const enum lanes lanes = dwords32;
    transpose_dwords(o, size, c);
    even_part(lanes, DC_P2(c[0]), c[2], c[4], c[6], even, 0);
    odd_part(lanes, c[1], c[3], c[5], c[7], 13, odd);
    for (int i = 0; i < half; i++) {
      x[i] = ADD(even[i], odd[i]);
      x[size - 1 - i] = SUB(even[i], odd[i]);
    }
    store_dwords(x, size, output_buf, size, output_col);
  }
}

VECTOR_TARGET static void idct_10x10(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                     JSAMPARRAY output_buf, JDIMENSION output_col)
{
  (void)cinfo;
  idct_even_odd(compptr, coef_block, output_buf, output_col, 10, k10_even, k10_odd);
}

VECTOR_TARGET static void idct_14x14(j_decompress_ptr cinfo, jpeg_component_info *compptr, JCOEFPTR coef_block,
                                     JSAMPARRAY output_buf, JDIMENSION output_col)
{
  (void)cinfo;
  idct_even_odd(compptr, coef_block, output_buf, output_col, 14, k14_even, k14_odd);
}

// libjpeg-turbo's own functions, exported by libjpeg.so.62 (jdct.h declares them).
void jpeg_idct_5x5(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);
void jpeg_idct_6x6(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);
void jpeg_idct_7x7(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);
void jpeg_idct_10x10(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);
void jpeg_idct_12x12(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);
void jpeg_idct_14x14(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);

const jpeg_idct_pair innerpeace_jpeg_idct_pairs[jpeg_idct_pair_count] = {
    {jpeg_idct_5x5, idct_5x5},     {jpeg_idct_6x6, idct_6x6},     {jpeg_idct_7x7, idct_7x7},
    {jpeg_idct_10x10, idct_10x10}, {jpeg_idct_12x12, idct_12x12}, {jpeg_idct_14x14, idct_14x14},
};

int innerpeace_jpeg_vector_idct_available(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

int innerpeace_jpeg_vector_idct(struct jpeg_decompress_struct *info) {
  if (!innerpeace_jpeg_vector_idct_available()) return 0;
  int replaced = 0;
  for (int component = 0; component < info->num_components && component < MAX_COMPONENTS; component++) {
    for (int k = 0; k < jpeg_idct_pair_count; k++) {
      if (info->idct->inverse_DCT[component] == innerpeace_jpeg_idct_pairs[k].library) {
        info->idct->inverse_DCT[component] = innerpeace_jpeg_idct_pairs[k].vector;
        replaced++;
        break;
      }
    }
  }
  return replaced;
}
