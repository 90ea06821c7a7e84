#include "innerpeace_png.h"

#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "innerpeace_kernels.h"

// Filtered rows are gathered in bands of about this many bytes; each band is one deflate block
// with a Huffman code of its own (built from the band's exact histogram), small enough to stay in
// the second-level cache between the passes over it.
enum { band_target_bytes = 1 << 17 };
// The Huffman code of a band is built from every fourth of its rows.
enum { sample_step = 4 };
// Whether matches pay for a band is estimated on those of its rows that are every 24th row of
// the image (the entropy of their symbols each way); they are used when they make that estimate
// at least 0.3 % smaller (below that, the faster path's file is about as small).
enum { decision_step = 24, decision_permille = 997 };
// Longest literal/length code: 14 bits (deflate allows 15) lets four literals go into the 64-bit
// bit buffer between flushes (7 pending bits + 4 x 14 <= 63) at a cost under 0.3 % in size; 12
// bits cost 1 to 4 % on photographs.
enum { literal_max_bits = 14, code_length_max_bits = 7 };
// Zero bytes before each row buffer, so that the pixel left of the first one reads as zero.
enum { row_padding = 16 };
enum { literal_symbols = 286, distance_symbols = 30, code_length_symbols = 19 };
// The band matcher: a hash of 8 bytes (2^match_hash_bits entries, the last position of each) finds
// earlier occurrences at most match_window bytes back, within the band. 2^12 entries (16 KiB, which
// stay in the first-level cache beside the band's rows) against 2^14: og encodes 1.2x faster for
// files at most 0.25 % larger on the 40 catalog cards (scripts/png-harness.c, BENCHMARKS.md).
enum { match_hash_bits = 12, match_window = 32768, match_max = 258 };
// A match of 8 bytes costs about as much as its literals; further back than match_near_distance
// (the distance code and its extra bits grow), it must be at least match_far_min long to pay.
enum { match_near_min = 8, match_near_distance = 16, match_far_min = 12 };
// libdeflate's level for images that compress more than 8:1 (see recompress_flat).
#ifndef FLAT_LEVEL
#define FLAT_LEVEL 6
#endif
enum { flat_image_level = FLAT_LEVEL };

// MARK: Filters

// Every row is filtered four ways (Sub, Up, Average, Paeth) into four candidate rows while the
// residuals' costs (sum of |residual| as a signed byte, libpng's heuristic) are summed; the
// cheapest row is kept. The SSE2 loop and the plain loop compute the same residuals and the same
// integer sums, so the choice, and the file, never depend on the path taken.

static inline int paeth_predictor(int a, int b, int c) {
  const int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
  return (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
}

static inline uint32_t residual_cost(uint8_t residual) { return (uint32_t)abs((int8_t)residual); }

/// Filters bytes [start, count) of the row four ways, adding their costs.
static void filter_candidates_scalar(const uint8_t *restrict cur, const uint8_t *restrict prev, size_t start,
                                     size_t count, size_t bpp, uint8_t *restrict candidates[4],
                                     uint32_t costs[4]) {
  // The bytes one pixel to the left (the rows have zero padding before them).
  const uint8_t *cur_left = cur - bpp, *prev_left = prev - bpp;
  for (size_t i = start; i < count; i++) {
    const int x = cur[i], a = cur_left[i], b = prev[i], c = prev_left[i];
    const uint8_t sub = (uint8_t)(x - a), up = (uint8_t)(x - b), average = (uint8_t)(x - ((a + b) >> 1));
    const uint8_t paeth = (uint8_t)(x - paeth_predictor(a, b, c));
    candidates[0][i] = sub;
    candidates[1][i] = up;
    candidates[2][i] = average;
    candidates[3][i] = paeth;
    costs[0] += residual_cost(sub);
    costs[1] += residual_cost(up);
    costs[2] += residual_cost(average);
    costs[3] += residual_cost(paeth);
  }
}

#if defined(__SSE2__)
#include <emmintrin.h>

/// |x| of signed bytes, as unsigned bytes (|-128| = 128).
static inline __m128i absolute_bytes(__m128i x) { return _mm_min_epu8(x, _mm_sub_epi8(_mm_setzero_si128(), x)); }

static inline __m128i absolute_difference(__m128i x, __m128i y) {
  return _mm_or_si128(_mm_subs_epu8(x, y), _mm_subs_epu8(y, x));
}

/// x <= y for unsigned bytes, as a mask.
static inline __m128i less_or_equal(__m128i x, __m128i y) { return _mm_cmpeq_epi8(_mm_min_epu8(x, y), x); }

static inline __m128i select_bytes(__m128i mask, __m128i yes, __m128i no) {
  return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

static size_t filter_candidates_sse2(const uint8_t *restrict cur, const uint8_t *restrict prev, size_t start,
                                     size_t count, size_t bpp, uint8_t *restrict candidates[4], uint32_t costs[4]) {
  // The bytes one pixel to the left (the rows have zero padding before them).
  const uint8_t *cur_left = cur - bpp, *prev_left = prev - bpp;
  __m128i sums[4] = {_mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128(), _mm_setzero_si128()};
  const __m128i one = _mm_set1_epi8(1);
  size_t i = start;
  for (; i + 16 <= count; i += 16) {
    const __m128i x = _mm_loadu_si128((const __m128i *)(cur + i));
    const __m128i a = _mm_loadu_si128((const __m128i *)(cur_left + i));
    const __m128i b = _mm_loadu_si128((const __m128i *)(prev + i));
    const __m128i c = _mm_loadu_si128((const __m128i *)(prev_left + i));
    // floor((a + b) / 2) from the rounding-up average.
    const __m128i mean = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
    // Paeth in bytes: pa = |b - c|, pb = |a - c|, and pc = |(a - c) + (b - c)| is pa + pb when the
    // two differences have the same sign, else |pa - pb|; a saturated pa + pb compares the same.
    const __m128i pa = absolute_difference(b, c), pb = absolute_difference(a, c);
    const __m128i same_sign = _mm_cmpeq_epi8(less_or_equal(c, a), less_or_equal(c, b));
    const __m128i pc = select_bytes(same_sign, _mm_adds_epu8(pa, pb), absolute_difference(pa, pb));
    const __m128i pick_a = _mm_and_si128(less_or_equal(pa, pb), less_or_equal(pa, pc));
    const __m128i pick_b = less_or_equal(pb, pc);
    const __m128i predicted = select_bytes(pick_a, a, select_bytes(pick_b, b, c));
    const __m128i residuals[4] = {_mm_sub_epi8(x, a), _mm_sub_epi8(x, b), _mm_sub_epi8(x, mean),
                                  _mm_sub_epi8(x, predicted)};
    for (int k = 0; k < 4; k++) {
      _mm_storeu_si128((__m128i *)(candidates[k] + i), residuals[k]);
      sums[k] = _mm_add_epi64(sums[k], _mm_sad_epu8(absolute_bytes(residuals[k]), _mm_setzero_si128()));
    }
  }
  for (int k = 0; k < 4; k++) {
    costs[k] += (uint32_t)(_mm_cvtsi128_si32(sums[k]) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(sums[k], sums[k])));
  }
  return i;
}

#if defined(__x86_64__)
#include <immintrin.h>
#define INNERPEACE_AVX2 1
#define INNERPEACE_VBMI 1
#define VBMI_TARGET __attribute__((target("avx512f,avx512bw,avx512vbmi,bmi2")))

/// Whether the processor runs the AVX-512 loops (F, BW and VBMI, with the registers' state saved by
/// the system; and BMI2, which every such processor has).
static int has_vbmi(void) {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("bmi2");
}

// The same loop as filter_candidates_sse2, 32 bytes at a time, for processors with AVX2.
__attribute__((target("avx2"))) static size_t filter_candidates_avx2(const uint8_t *restrict cur,
                                                                     const uint8_t *restrict prev, size_t count,
                                                                     size_t bpp, uint8_t *restrict candidates[4],
                                                                     uint32_t costs[4]) {
  // The bytes one pixel to the left (the rows have zero padding before them).
  const uint8_t *cur_left = cur - bpp, *prev_left = prev - bpp;
  __m256i sums[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                     _mm256_setzero_si256()};
  const __m256i one = _mm256_set1_epi8(1), zero = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    const __m256i x = _mm256_loadu_si256((const __m256i *)(cur + i));
    const __m256i a = _mm256_loadu_si256((const __m256i *)(cur_left + i));
    const __m256i b = _mm256_loadu_si256((const __m256i *)(prev + i));
    const __m256i c = _mm256_loadu_si256((const __m256i *)(prev_left + i));
    const __m256i mean = _mm256_sub_epi8(_mm256_avg_epu8(a, b), _mm256_and_si256(_mm256_xor_si256(a, b), one));
    const __m256i pa = _mm256_or_si256(_mm256_subs_epu8(b, c), _mm256_subs_epu8(c, b));
    const __m256i pb = _mm256_or_si256(_mm256_subs_epu8(a, c), _mm256_subs_epu8(c, a));
    const __m256i c_le_a = _mm256_cmpeq_epi8(_mm256_min_epu8(c, a), c);
    const __m256i c_le_b = _mm256_cmpeq_epi8(_mm256_min_epu8(c, b), c);
    const __m256i same_sign = _mm256_cmpeq_epi8(c_le_a, c_le_b);
    const __m256i difference = _mm256_or_si256(_mm256_subs_epu8(pa, pb), _mm256_subs_epu8(pb, pa));
    const __m256i pc = _mm256_blendv_epi8(difference, _mm256_adds_epu8(pa, pb), same_sign);
    const __m256i pa_le_pb = _mm256_cmpeq_epi8(_mm256_min_epu8(pa, pb), pa);
    const __m256i pa_le_pc = _mm256_cmpeq_epi8(_mm256_min_epu8(pa, pc), pa);
    const __m256i pb_le_pc = _mm256_cmpeq_epi8(_mm256_min_epu8(pb, pc), pb);
    const __m256i predicted =
        _mm256_blendv_epi8(_mm256_blendv_epi8(c, b, pb_le_pc), a, _mm256_and_si256(pa_le_pb, pa_le_pc));
    const __m256i residuals[4] = {_mm256_sub_epi8(x, a), _mm256_sub_epi8(x, b), _mm256_sub_epi8(x, mean),
                                  _mm256_sub_epi8(x, predicted)};
    for (int k = 0; k < 4; k++) {
      _mm256_storeu_si256((__m256i *)(candidates[k] + i), residuals[k]);
      const __m256i magnitude = _mm256_min_epu8(residuals[k], _mm256_sub_epi8(zero, residuals[k]));
      sums[k] = _mm256_add_epi64(sums[k], _mm256_sad_epu8(magnitude, zero));
    }
  }
  for (int k = 0; k < 4; k++) {
    const __m128i half = _mm_add_epi64(_mm256_castsi256_si128(sums[k]), _mm256_extracti128_si256(sums[k], 1));
    costs[k] += (uint32_t)(_mm_cvtsi128_si32(half) + _mm_cvtsi128_si32(_mm_unpackhi_epi64(half, half)));
  }
  return i;
}

/// Cairo's B G R X pixels to packed R G B, four pixels a shuffle, for processors with SSSE3. Never
/// writes past the row.
__attribute__((target("ssse3"))) static void unpack_rgb_ssse3(const uint8_t *restrict source,
                                                              uint8_t *restrict target, int width) {
  const __m128i order = _mm_setr_epi8(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);
  int x = 0;
  for (; x + 6 <= width; x += 4) {
    const __m128i pixels = _mm_loadu_si128((const __m128i *)(source + 4 * x));
    _mm_storeu_si128((__m128i *)(target + 3 * x), _mm_shuffle_epi8(pixels, order));
  }
  innerpeace_unpack_row(source + 4 * x, target + 3 * x, width - x, 0);
}

// The same loop as filter_candidates_avx2, 64 bytes at a time, for processors with AVX-512.
VBMI_TARGET static size_t filter_candidates_avx512(const uint8_t *restrict cur, const uint8_t *restrict prev,
                                                   size_t count, size_t bpp, uint8_t *restrict candidates[4],
                                                   uint32_t costs[4]) {
  const uint8_t *cur_left = cur - bpp, *prev_left = prev - bpp;
  __m512i sums[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                     _mm512_setzero_si512()};
  const __m512i one = _mm512_set1_epi8(1), zero = _mm512_setzero_si512();
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    const __m512i x = _mm512_loadu_si512(cur + i), a = _mm512_loadu_si512(cur_left + i);
    const __m512i b = _mm512_loadu_si512(prev + i), c = _mm512_loadu_si512(prev_left + i);
    const __m512i mean = _mm512_sub_epi8(_mm512_avg_epu8(a, b), _mm512_and_si512(_mm512_xor_si512(a, b), one));
    const __m512i pa = _mm512_or_si512(_mm512_subs_epu8(b, c), _mm512_subs_epu8(c, b));
    const __m512i pb = _mm512_or_si512(_mm512_subs_epu8(a, c), _mm512_subs_epu8(c, a));
    const __mmask64 same_sign = ~(_mm512_cmple_epu8_mask(c, a) ^ _mm512_cmple_epu8_mask(c, b));
    const __m512i difference = _mm512_or_si512(_mm512_subs_epu8(pa, pb), _mm512_subs_epu8(pb, pa));
    const __m512i pc = _mm512_mask_blend_epi8(same_sign, difference, _mm512_adds_epu8(pa, pb));
    const __mmask64 pick_a = _mm512_cmple_epu8_mask(pa, pb) & _mm512_cmple_epu8_mask(pa, pc);
    const __mmask64 pick_b = _mm512_cmple_epu8_mask(pb, pc);
    const __m512i predicted = _mm512_mask_blend_epi8(pick_a, _mm512_mask_blend_epi8(pick_b, c, b), a);
    const __m512i residuals[4] = {_mm512_sub_epi8(x, a), _mm512_sub_epi8(x, b), _mm512_sub_epi8(x, mean),
                                  _mm512_sub_epi8(x, predicted)};
    for (int k = 0; k < 4; k++) {
      _mm512_storeu_si512(candidates[k] + i, residuals[k]);
      const __m512i magnitude = _mm512_min_epu8(residuals[k], _mm512_sub_epi8(zero, residuals[k]));
      sums[k] = _mm512_add_epi64(sums[k], _mm512_sad_epu8(magnitude, zero));
    }
  }
  for (int k = 0; k < 4; k++) costs[k] += (uint32_t)_mm512_reduce_add_epi64(sums[k]);
  return i;
}

/// Cairo's B G R X pixels to packed R G B, sixteen pixels a permutation, for processors with
/// AVX-512 VBMI. Never writes past the row.
VBMI_TARGET static void unpack_rgb_vbmi(const uint8_t *restrict source, uint8_t *restrict target, int width) {
  const __m512i order = _mm512_set_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                        60, 61, 62, 56, 57, 58, 52, 53, 54, 48, 49, 50, 44, 45, 46, 40,  //
                                        41, 42, 36, 37, 38, 32, 33, 34, 28, 29, 30, 24, 25, 26, 20, 21,  //
                                        22, 16, 17, 18, 12, 13, 14, 8, 9, 10, 4, 5, 6, 0, 1, 2);
  int x = 0;
  for (; x + 16 <= width; x += 16) {
    const __m512i pixels = _mm512_loadu_si512(source + 4 * x);
    _mm512_mask_storeu_epi8(target + 3 * x, 0xFFFFFFFFFFFFull, _mm512_permutexvar_epi8(order, pixels));
  }
  unpack_rgb_ssse3(source + 4 * x, target + 3 * x, width - x);
}
#endif
#endif

/// Fills the four candidate rows and returns the filter type (1 Sub, 2 Up, 3 Average, 4 Paeth) of
/// the cheapest; ties go to the earlier of Up, Sub, Paeth, Average.
static int filter_candidates(const uint8_t *restrict cur, const uint8_t *restrict prev, size_t count, size_t bpp,
                             uint8_t *restrict candidates[4], int kernels) {
  uint32_t costs[4] = {0, 0, 0, 0};
  size_t done = 0;
#if defined(__SSE2__)
  if (kernels != INNERPEACE_PNG_SCALAR) {
#if defined(INNERPEACE_AVX2)
    if (kernels == INNERPEACE_PNG_BEST && has_vbmi()) {
      done = filter_candidates_avx512(cur, prev, count, bpp, candidates, costs);
    } else if ((kernels == INNERPEACE_PNG_BEST || kernels == INNERPEACE_PNG_AVX2) && __builtin_cpu_supports("avx2")) {
      done = filter_candidates_avx2(cur, prev, count, bpp, candidates, costs);
    }
#endif
    done = filter_candidates_sse2(cur, prev, done, count, bpp, candidates, costs);
  }
#else
  (void)kernels;
#endif
  filter_candidates_scalar(cur, prev, done, count, bpp, candidates, costs);
  static const int order[4] = {2, 1, 4, 3};
  int best = order[0];
  for (int k = 1; k < 4; k++) {
    if (costs[order[k] - 1] < costs[best - 1]) best = order[k];
  }
  return best;
}

// MARK: Bit writer

typedef struct {
  uint64_t bits;   // pending bits, the oldest in the lowest place; nothing above `count`
  unsigned count;  // pending bits, at most 63
  uint8_t *out;    // where the pending bits go; 8 bytes past it are always writable
} bit_writer;

static inline void put_bits(bit_writer *writer, uint64_t code, unsigned length) {
  writer->bits |= code << writer->count;
  writer->count += length;
}

static inline void flush_bits(bit_writer *writer) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(writer->out, &writer->bits, 8);
#else
  for (int k = 0; k < 8; k++) writer->out[k] = (uint8_t)(writer->bits >> (8 * k));
#endif
  const unsigned bytes = writer->count >> 3;
  writer->out += bytes;
  writer->bits = bytes ? writer->bits >> (8 * bytes) : writer->bits;
  writer->count &= 7;
}

/// Pads to a byte boundary and writes the pending bytes.
static void align_bits(bit_writer *writer) {
  writer->count = (writer->count + 7) & ~7u;
  flush_bits(writer);
}

// MARK: Huffman codes

/// Sorts `count` keys (at most literal_symbols) in ascending order: a frequency (below 2^23) above
/// a symbol (below 2^9), so an LSD radix sort of 32 bits in four passes of 8.
static void sort_keys(uint32_t *keys, int count) {
  uint32_t other[literal_symbols], *from = keys, *to = other;
  for (int shift = 0; shift < 32; shift += 8) {
    uint32_t starts[256] = {0};
    for (int i = 0; i < count; i++) starts[from[i] >> shift & 0xFF]++;
    uint32_t sum = 0;
    for (int b = 0; b < 256; b++) {
      const uint32_t n = starts[b];
      starts[b] = sum;
      sum += n;
    }
    for (int i = 0; i < count; i++) to[starts[from[i] >> shift & 0xFF]++] = from[i];
    uint32_t *swap = from;
    from = to;
    to = swap;
  }
}

/// Code lengths (at most `limit` bits) of a Huffman code for `frequencies`; unused symbols get 0.
/// At least two symbols always get a code, so the code is complete.
static void build_code_lengths(const uint32_t *frequencies, int count, int limit, uint8_t *lengths) {
  uint32_t keys[literal_symbols];
  uint32_t depth[literal_symbols];
  int used = 0;
  for (int s = 0; s < count; s++) {
    lengths[s] = 0;
    // A band's counts stay far below 2^23 (a band is at most 2^17 bytes or one row of at most
    // 32767 pixels); larger ones, from no image Cairo makes, are clamped.
    const uint32_t frequency = frequencies[s] < (1u << 23) ? frequencies[s] : (1u << 23) - 1;
    if (frequency) keys[used++] = frequency << 9 | (uint32_t)s;
  }
  for (int s = 0; used < 2 && s < count; s++) {
    if (!frequencies[s]) keys[used++] = 1u << 9 | (uint32_t)s;
  }
  sort_keys(keys, used);
  // Moffat and Katajainen's in-place minimum-redundancy code, over weights in ascending order.
  for (int i = 0; i < used; i++) depth[i] = keys[i] >> 9;
  {
    int root = 0, leaf = 2, next;
    depth[0] += depth[1];
    for (next = 1; next < used - 1; next++) {
      if (leaf >= used || depth[root] < depth[leaf]) {
        depth[next] = depth[root];
        depth[root++] = (uint32_t)next;
      } else {
        depth[next] = depth[leaf++];
      }
      if (leaf >= used || (root < next && depth[root] < depth[leaf])) {
        depth[next] += depth[root];
        depth[root++] = (uint32_t)next;
      } else {
        depth[next] += depth[leaf++];
      }
    }
    depth[used - 2] = 0;
    for (next = used - 3; next >= 0; next--) depth[next] = depth[depth[next]] + 1;
    int available = 1, assigned = 0, level = 0;
    root = used - 2;
    next = used - 1;
    while (available > 0) {
      while (root >= 0 && (int)depth[root] == level) {
        assigned++;
        root--;
      }
      while (available > assigned) {
        depth[next--] = (uint32_t)level;
        available--;
      }
      available = 2 * assigned;
      level++;
      assigned = 0;
    }
  }
  // Limit the lengths (moving the overlong codes up, then splitting shorter ones until Kraft's sum
  // is exact), then hand the longest lengths to the rarest symbols.
  uint32_t per_length[33] = {0};
  for (int i = 0; i < used; i++) per_length[depth[i] > 32 ? 32 : depth[i]]++;
  for (int l = limit + 1; l <= 32; l++) {
    per_length[limit] += per_length[l];
    per_length[l] = 0;
  }
  uint32_t total = 0;
  for (int l = limit; l > 0; l--) total += per_length[l] << (limit - l);
  while (total != (1u << limit)) {
    per_length[limit]--;
    for (int l = limit - 1; l > 0; l--) {
      if (per_length[l]) {
        per_length[l]--;
        per_length[l + 1] += 2;
        break;
      }
    }
    total--;
  }
  int index = 0;
  for (int l = limit; l > 0; l--) {
    for (uint32_t k = 0; k < per_length[l]; k++) lengths[keys[index++] & 0x1FF] = (uint8_t)l;
  }
}

/// The low `length` bits of `code` (at most 16) in reverse order.
static uint32_t reverse_bits(uint32_t code, unsigned length) {
  uint32_t reversed = code & 0xFFFF;
  reversed = (reversed & 0x5555) << 1 | (reversed >> 1 & 0x5555);
  reversed = (reversed & 0x3333) << 2 | (reversed >> 2 & 0x3333);
  reversed = (reversed & 0x0F0F) << 4 | (reversed >> 4 & 0x0F0F);
  reversed = (reversed & 0x00FF) << 8 | (reversed >> 8 & 0x00FF);
  return reversed >> (16 - length);
}

/// Deflate's canonical codes for `lengths`, bit-reversed for the LSB-first bit writer.
static void canonical_codes(const uint8_t *lengths, int count, uint32_t *codes) {
  uint32_t per_length[16] = {0}, next[16] = {0};
  for (int s = 0; s < count; s++) per_length[lengths[s]]++;
  per_length[0] = 0;
  uint32_t code = 0;
  for (int l = 1; l < 16; l++) {
    code = (code + per_length[l - 1]) << 1;
    next[l] = code;
  }
  for (int s = 0; s < count; s++) codes[s] = lengths[s] ? reverse_bits(next[lengths[s]]++, lengths[s]) : 0;
}

// MARK: Deflate of a band

static const uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};

static const uint16_t distance_base[distance_symbols] = {
    1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
    193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t distance_extra[distance_symbols] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/// The distance symbol of a distance of 1...32768 bytes.
static inline int distance_index(unsigned distance) {
  if (distance <= 4) return (int)distance - 1;
  const unsigned base = distance - 1, bits = 31u - (unsigned)__builtin_clz(base);
  return (int)(2 * bits + ((base >> (bits - 1)) & 1));
}

/// The length symbol's index (0 for 257) of a match of 3...258 bytes.
static int length_index(unsigned length) {
  if (length < 11) return (int)length - 3;
  if (length == 258) return 28;
  // Above 10, four symbols per doubling: bits = floor(log2(length - 3)).
  const unsigned base = length - 3, bits = 31u - (unsigned)__builtin_clz(base);
  return (int)(4 * bits - 4 + ((base >> (bits - 2)) & 3));
}

/// The next match length of a run of `run` zeros still to code (at least 3): at most 258, and
/// never leaving 1 or 2 behind.
static inline unsigned next_match(size_t run) {
  if (run <= 258) return (unsigned)run;
  return run - 258 < 3 ? (unsigned)(run - 3) : 258u;
}

/// The end of the run of zero bytes that goes on from `start` (the first nonzero byte, or
/// `count`): eight bytes a step, then byte by byte.
static inline size_t zero_run_end(const uint8_t *data, size_t start, size_t count) {
  size_t j = start;
  while (j + 8 <= count) {
    uint64_t next;
    memcpy(&next, data + j, 8);
    if (next) break;
    j += 8;
  }
  while (j < count && data[j] == 0) j++;
  return j;
}

/// Counts the band's symbols: literals, and runs of zeros (at least 8, from an 8-byte word of zeros)
/// as a literal zero then matches at distance 1.
/// `spare` holds three more tables of literal counts (spread so that repeated bytes do not wait on
/// each other), added to `frequencies` by the caller.
static void count_symbols(const uint8_t *data, size_t count, uint32_t *frequencies, uint32_t spare[3][256]) {
  size_t i = 0;
  while (i + 8 <= count) {
    uint64_t word;
    memcpy(&word, data + i, 8);
    if (word == 0) {
      const size_t j = zero_run_end(data, i + 8, count);
      size_t run = j - i - 1;
      frequencies[0]++;
      while (run >= 3) {
        const unsigned length = next_match(run);
        frequencies[257 + length_index(length)]++;
        run -= length;
      }
      frequencies[0] += (uint32_t)run;
      i = j;
    } else {
      frequencies[data[i]]++;
      spare[0][data[i + 1]]++;
      spare[1][data[i + 2]]++;
      spare[2][data[i + 3]]++;
      frequencies[data[i + 4]]++;
      spare[0][data[i + 5]]++;
      spare[1][data[i + 6]]++;
      spare[2][data[i + 7]]++;
      i += 8;
    }
  }
  for (; i < count; i++) frequencies[data[i]]++;
}

/// Writes the zeros [start, end) (a run that begins with an 8-byte word of zeros) as a literal zero
/// then matches at distance 1, as count_symbols counts them.
static inline void put_zero_run(bit_writer *writer, size_t start, size_t end, const uint16_t *codes,
                                const uint8_t *lengths, const uint32_t *matches) {
  size_t run = end - start - 1;
  put_bits(writer, codes[0], lengths[0]);
  flush_bits(writer);
  while (run >= 3) {
    const unsigned length = next_match(run);
    put_bits(writer, matches[length] & 0xFFFFFFu, matches[length] >> 24);
    flush_bits(writer);
    run -= length;
  }
  for (; run; run--) {
    put_bits(writer, codes[0], lengths[0]);
    flush_bits(writer);
  }
}

/// Writes the band's symbols from `start` on: literals with `codes` (bit-reversed) of `lengths`
/// bits, and each run of zeros as a literal zero then matches, `matches[length]` being a whole match
/// (length code, extra bits and distance code 0, bit-reversed, in the low 24 bits; its bit count in
/// the high 8). The writer has at most 7 bits pending.
static void write_symbols(bit_writer *shared, const uint8_t *data, size_t start, size_t count,
                          const uint16_t *codes, const uint8_t *lengths, const uint32_t *matches) {
  // A local copy: the compiler keeps it in registers (the output bytes could alias *shared).
  bit_writer local = *shared, *writer = &local;
#define PUT_LITERAL(byte) put_bits(writer, codes[byte], lengths[byte])
  size_t i = start;
  while (i + 8 <= count) {
    uint64_t word;
    memcpy(&word, data + i, 8);
    if (word == 0) {
      const size_t end = zero_run_end(data, i + 8, count);
      put_zero_run(writer, i, end, codes, lengths, matches);
      i = end;
    } else {
      PUT_LITERAL(data[i]);
      PUT_LITERAL(data[i + 1]);
      PUT_LITERAL(data[i + 2]);
      PUT_LITERAL(data[i + 3]);
      flush_bits(writer);
      PUT_LITERAL(data[i + 4]);
      PUT_LITERAL(data[i + 5]);
      PUT_LITERAL(data[i + 6]);
      PUT_LITERAL(data[i + 7]);
      flush_bits(writer);
      i += 8;
    }
  }
  for (; i < count; i++) {
    PUT_LITERAL(data[i]);
    flush_bits(writer);
  }
  *shared = local;
#undef PUT_LITERAL
}

/// One token of the code-length sequence of a dynamic block's header.
typedef struct {
  uint8_t symbol, extra_bits, extra;
} length_token;

/// Run-length codes the concatenated code lengths (deflate's symbols 16, 17 and 18).
static int tokenize_lengths(const uint8_t *lengths, int count, length_token *tokens) {
  int n = 0, i = 0;
  while (i < count) {
    const uint8_t value = lengths[i];
    int run = 1;
    while (i + run < count && lengths[i + run] == value) run++;
    i += run;
    if (value == 0) {
      while (run >= 11) {
        const int part = run > 138 ? 138 : run;
        tokens[n++] = (length_token){18, 7, (uint8_t)(part - 11)};
        run -= part;
      }
      if (run >= 3) {
        tokens[n++] = (length_token){17, 3, (uint8_t)(run - 3)};
        run = 0;
      }
    } else {
      tokens[n++] = (length_token){value, 0, 0};
      run--;
      while (run >= 3) {
        const int part = run > 6 ? 6 : run;
        tokens[n++] = (length_token){16, 2, (uint8_t)(part - 3)};
        run -= part;
      }
    }
    for (; run > 0; run--) tokens[n++] = (length_token){value, 0, 0};
  }
  return n;
}

static const uint8_t code_length_order[code_length_symbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                                 11, 4,  12, 3, 13, 2, 14, 1, 15};

/// A dynamic block's code, ready to write: its header's parts and the symbol tables.
typedef struct {
  uint8_t literal_lengths[literal_symbols];
  uint32_t codes[literal_symbols];   // length << 24 | reversed code
  uint16_t literal_codes[literal_symbols];  // the reversed codes alone
  uint8_t literal_low[256], literal_high[256];  // the literals' reversed codes, low and high bytes
  uint32_t matches[259];             // a whole match of each length 3...258, same layout
  uint32_t lengths_only[259];        // the length code and its extra bits alone, same layout
  uint8_t distance_lengths[distance_symbols];
  uint32_t distance_codes[distance_symbols];  // the reversed codes
  int distance_count;
  length_token tokens[literal_symbols + distance_symbols];
  int token_count, literal_count, header_length_count;
  uint8_t length_lengths[code_length_symbols];
  uint32_t length_codes[code_length_symbols];
  uint64_t bits;  // the whole block's size in bits, header included
} dynamic_block;

static void plan_block(const uint32_t *frequencies, const uint32_t *distance_frequencies, dynamic_block *block) {
  build_code_lengths(frequencies, literal_symbols, literal_max_bits, block->literal_lengths);
  uint32_t reversed[literal_symbols];
  canonical_codes(block->literal_lengths, literal_symbols, reversed);
  uint64_t bits = 3 + 5 + 5 + 4;
  for (int s = 0; s < literal_symbols; s++) {
    block->codes[s] = (uint32_t)block->literal_lengths[s] << 24 | reversed[s];
    block->literal_codes[s] = (uint16_t)reversed[s];
    if (s < 256) {
      block->literal_low[s] = (uint8_t)reversed[s];
      block->literal_high[s] = (uint8_t)(reversed[s] >> 8);
    }
    uint32_t symbol_bits = block->literal_lengths[s];
    if (s >= 257) symbol_bits += length_extra[s - 257] + 1u;  // extra bits, then the distance code
    bits += (uint64_t)frequencies[s] * symbol_bits;
  }
  for (unsigned length = 3; length <= 258; length++) {
    const int k = length_index(length);
    const uint32_t code = reversed[257 + k], code_bits = block->literal_lengths[257 + k];
    const uint32_t extra = length - length_base[k];
    // Distance code 0 (distance 1) is the single bit 0 after the extra bits.
    block->matches[length] = (code_bits + length_extra[k] + 1u) << 24 | extra << code_bits | code;
    block->lengths_only[length] = (code_bits + length_extra[k]) << 24 | extra << code_bits | code;
  }
  if (distance_frequencies) {
    build_code_lengths(distance_frequencies, distance_symbols, literal_max_bits, block->distance_lengths);
    canonical_codes(block->distance_lengths, distance_symbols, block->distance_codes);
    int distance_count = distance_symbols;
    while (distance_count > 1 && block->distance_lengths[distance_count - 1] == 0) distance_count--;
    block->distance_count = distance_count;
    for (int d = 0; d < distance_symbols; d++) {
      // A length symbol's bits above counted one bit for the distance code; the real code instead.
      bits += (uint64_t)distance_frequencies[d] * (block->distance_lengths[d] + distance_extra[d]);
    }
    for (int s = 257; s < literal_symbols; s++) bits -= frequencies[s];
  } else {
    // Two distance codes of one bit each: a complete code, of which only distance 1 is used.
    memset(block->distance_lengths, 0, sizeof block->distance_lengths);
    block->distance_lengths[0] = block->distance_lengths[1] = 1;
    block->distance_count = 2;
  }
  int literal_count = literal_symbols;
  while (literal_count > 257 && block->literal_lengths[literal_count - 1] == 0) literal_count--;
  block->literal_count = literal_count;
  uint8_t all_lengths[literal_symbols + distance_symbols];
  memcpy(all_lengths, block->literal_lengths, (size_t)literal_count);
  memcpy(all_lengths + literal_count, block->distance_lengths, (size_t)block->distance_count);
  block->token_count = tokenize_lengths(all_lengths, literal_count + block->distance_count, block->tokens);
  uint32_t length_frequencies[code_length_symbols] = {0};
  for (int t = 0; t < block->token_count; t++) length_frequencies[block->tokens[t].symbol]++;
  build_code_lengths(length_frequencies, code_length_symbols, code_length_max_bits, block->length_lengths);
  canonical_codes(block->length_lengths, code_length_symbols, block->length_codes);
  int header_count = code_length_symbols;
  while (header_count > 4 && block->length_lengths[code_length_order[header_count - 1]] == 0) header_count--;
  block->header_length_count = header_count;
  bits += 3u * (uint64_t)header_count;
  for (int t = 0; t < block->token_count; t++) {
    bits += block->length_lengths[block->tokens[t].symbol] + (uint64_t)block->tokens[t].extra_bits;
  }
  block->bits = bits;
}

// MARK: Matches within a band

/// A match found by find_matches: `length` bytes at `position` in the band repeat those `distance`
/// bytes before.
typedef struct {
  uint32_t position;
  uint16_t length, distance;
} band_match;

/// Counts bytes as literals into `frequencies` and the three `spare` tables (spread so that
/// repeated bytes do not wait on each other; the caller adds them up).
static void count_literals(const uint8_t *data, size_t count, uint32_t *frequencies, uint32_t spare[3][256]) {
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    frequencies[data[i]]++;
    spare[0][data[i + 1]]++;
    spare[1][data[i + 2]]++;
    spare[2][data[i + 3]]++;
  }
  for (; i < count; i++) frequencies[data[i]]++;
}

/// Greedy LZ77 over bytes [start, end) of the band: at every fourth position, the last earlier one
/// whose 8 bytes hash the same (`table`, band positions, all ones for none) and are the same, at
/// most match_window back, is extended as far as it goes both ways (at most match_max, not past
/// `end` nor back into literals already counted). It is taken whole when at least match_near_min
/// bytes long within match_near_distance, or match_far_min beyond (a short match far back costs
/// more than its literals); the positions inside are not looked up. Writes the matches to
/// `matches`, counts their length and distance symbols, and the literals between them into
/// `frequencies` and `spare` (as count_literals); returns the number of matches.
static size_t find_matches(const uint8_t *data, size_t start, size_t end, uint32_t *table, band_match *matches,
                           uint32_t *frequencies, uint32_t *distance_frequencies, uint32_t spare[3][256]) {
  size_t i = start, literals = start, n = 0;
  while (i + 8 <= end) {
    uint64_t bytes;
    memcpy(&bytes, data + i, 8);
    const uint32_t hash = (uint32_t)((bytes * 0x9E3779B97F4A7C15ull) >> (64 - match_hash_bits));
    size_t from = table[hash];
    table[hash] = (uint32_t)i;
    // An empty entry (all ones) is never within the window.
    if (i - from - 1 < match_window) {
      uint64_t earlier;
      memcpy(&earlier, data + from, 8);
      if (earlier == bytes) {
        const size_t limit = end - i < match_max ? end - i : match_max;
        size_t length = 8;
        while (length + 8 <= limit) {
          uint64_t a, b;
          memcpy(&a, data + i + length, 8);
          memcpy(&b, data + from + length, 8);
          const uint64_t difference = a ^ b;
          if (difference) {
            length += (size_t)__builtin_ctzll(difference) >> 3;
            goto measured;
          }
          length += 8;
        }
        while (length < limit && data[i + length] == data[from + length]) length++;
      measured:;
        // The match may begin earlier (positions are looked up every fourth byte).
        while (i > literals && from > 0 && data[i - 1] == data[from - 1] && length < limit) {
          i--;
          from--;
          length++;
        }
        const unsigned distance = (unsigned)(i - from);
        if (length >= (distance <= match_near_distance ? match_near_min : match_far_min)) {
          count_literals(data + literals, i - literals, frequencies, spare);
          matches[n++] = (band_match){(uint32_t)i, (uint16_t)length, (uint16_t)distance};
          frequencies[257 + length_index((unsigned)length)]++;
          distance_frequencies[distance_index(distance)]++;
          i += length;
          literals = i;
          continue;
        }
      }
    }
    // The next three positions go into the table but are not looked up (a quarter of the time; a
    // match that begins there is found from the next lookup and extended back above).
    if (i + 11 <= end) {
      memcpy(&bytes, data + i + 1, 8);
      table[(uint32_t)((bytes * 0x9E3779B97F4A7C15ull) >> (64 - match_hash_bits))] = (uint32_t)i + 1;
      memcpy(&bytes, data + i + 2, 8);
      table[(uint32_t)((bytes * 0x9E3779B97F4A7C15ull) >> (64 - match_hash_bits))] = (uint32_t)i + 2;
      memcpy(&bytes, data + i + 3, 8);
      table[(uint32_t)((bytes * 0x9E3779B97F4A7C15ull) >> (64 - match_hash_bits))] = (uint32_t)i + 3;
    }
    i += 4;
  }
  count_literals(data + literals, end - literals, frequencies, spare);
  return n;
}

/// Writes `count` literals with the block's code.
static void write_literals(bit_writer *shared, const uint8_t *data, size_t count, const dynamic_block *block) {
  bit_writer local = *shared, *writer = &local;  // in registers, as in write_symbols
#define PUT_LITERAL(byte) put_bits(writer, block->literal_codes[byte], block->literal_lengths[byte])
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    PUT_LITERAL(data[i]);
    PUT_LITERAL(data[i + 1]);
    PUT_LITERAL(data[i + 2]);
    PUT_LITERAL(data[i + 3]);
    flush_bits(writer);
  }
  for (; i < count; i++) PUT_LITERAL(data[i]);
  flush_bits(writer);
  *shared = local;
#undef PUT_LITERAL
}

#if defined(INNERPEACE_VBMI)

// With AVX-512 VBMI, literals are coded 64 at a time: their code lengths and the low and high bytes
// of their codes come from 256-byte tables (two `vpermi2b` and a blend each), neighbouring codes are
// joined in the vector (pairs, fours, then eights where they fit in 63 bits), and a bit writer
// without a loop (put_8_runs) places eight such runs at once. The bits are the same as the literals
// written one by one.

/// A block's literal code as three 256-byte tables (code length, the reversed code's low byte and
/// its high byte), each in four registers.
typedef struct {
  __m512i lengths[4], low[4], high[4];
} literal_lookup;

VBMI_TARGET static inline void load_literal_lookup(const dynamic_block *block, literal_lookup *lookup) {
  for (int k = 0; k < 4; k++) {
    lookup->lengths[k] = _mm512_loadu_si512(block->literal_lengths + 64 * k);
    lookup->low[k] = _mm512_loadu_si512(block->literal_low + 64 * k);
    lookup->high[k] = _mm512_loadu_si512(block->literal_high + 64 * k);
  }
}

/// `table[index]` for each of 64 byte indexes; `upper` has the indexes of 128 or more.
VBMI_TARGET static inline __m512i lookup_bytes(__m512i index, __mmask64 upper, const __m512i table[4]) {
  const __m512i below = _mm512_permutex2var_epi8(table[0], index, table[1]);
  const __m512i above = _mm512_permutex2var_epi8(table[2], index, table[3]);
  return _mm512_mask_blend_epi8(upper, below, above);
}

/// Codes 64 literals as runs of four: lanes 2j and 2j + 1 of `runs[0]` hold the codes of literals
/// 16j to 16j + 3 and 16j + 4 to 16j + 7 (the first in the lowest bits), those of `runs[1]` the
/// eight after them; `run_bits` their lengths (at most 4 x 14 = 56 bits).
VBMI_TARGET static inline void code_64_literals(__m512i bytes, const literal_lookup *lookup, __m512i runs[2],
                                                __m512i run_bits[2]) {
  const __mmask64 upper = _mm512_movepi8_mask(bytes);
  const __m512i lengths = lookup_bytes(bytes, upper, lookup->lengths);
  const __m512i low = lookup_bytes(bytes, upper, lookup->low), high = lookup_bytes(bytes, upper, lookup->high);
  const __m512i zero = _mm512_setzero_si512();
  // 16-bit codes and lengths: [0] the bytes 0-7 of each 128-bit lane, [1] its bytes 8-15.
  runs[0] = _mm512_unpacklo_epi8(low, high);
  runs[1] = _mm512_unpackhi_epi8(low, high);
  run_bits[0] = _mm512_unpacklo_epi8(lengths, zero);
  run_bits[1] = _mm512_unpackhi_epi8(lengths, zero);
  const __m512i low16 = _mm512_set1_epi32(0xFFFF), low32 = _mm512_set1_epi64(0xFFFFFFFF);
  for (int h = 0; h < 2; h++) {
    // Pairs: the second code shifted past the first, in 32-bit lanes; then pairs of pairs in 64.
    __m512i first = _mm512_and_si512(run_bits[h], low16);
    runs[h] = _mm512_or_si512(_mm512_and_si512(runs[h], low16),
                              _mm512_sllv_epi32(_mm512_srli_epi32(runs[h], 16), first));
    run_bits[h] = _mm512_add_epi32(first, _mm512_srli_epi32(run_bits[h], 16));
    first = _mm512_and_si512(run_bits[h], low32);
    runs[h] = _mm512_or_si512(_mm512_and_si512(runs[h], low32),
                              _mm512_sllv_epi64(_mm512_srli_epi64(runs[h], 32), first));
    run_bits[h] = _mm512_add_epi64(first, _mm512_srli_epi64(run_bits[h], 32));
  }
}

/// The runs of code_64_literals in the order of their literals, eight in each of `ordered` (lengths
/// in `ordered_bits`).
VBMI_TARGET static inline void order_runs(const __m512i runs[2], const __m512i run_bits[2], __m512i ordered[2],
                                          __m512i ordered_bits[2]) {
  const __m512i first_half = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
  const __m512i second_half = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
  ordered[0] = _mm512_permutex2var_epi64(runs[0], first_half, runs[1]);
  ordered[1] = _mm512_permutex2var_epi64(runs[0], second_half, runs[1]);
  ordered_bits[0] = _mm512_permutex2var_epi64(run_bits[0], first_half, run_bits[1]);
  ordered_bits[1] = _mm512_permutex2var_epi64(run_bits[0], second_half, run_bits[1]);
}

/// The runs of code_64_literals joined in eights, in the order of their literals (lane k: literals
/// 8k to 8k + 7), when each eight fits in 63 bits (photographs' literals mostly take 1 to 6);
/// returns 0 when one does not.
VBMI_TARGET static inline int join_eights(const __m512i runs[2], const __m512i run_bits[2], __m512i *eights,
                                          __m512i *eight_bits) {
  __m512i joined[2], joined_bits[2];
  for (int h = 0; h < 2; h++) {
    // Even lanes: the run, then the next one (the odd lane's, swapped into place) after it.
    joined[h] = _mm512_or_si512(runs[h], _mm512_sllv_epi64(_mm512_shuffle_epi32(runs[h], _MM_PERM_BADC), run_bits[h]));
    joined_bits[h] = _mm512_add_epi64(run_bits[h], _mm512_shuffle_epi32(run_bits[h], _MM_PERM_BADC));
  }
  const __m512i order = _mm512_setr_epi64(0, 8, 2, 10, 4, 12, 6, 14);
  *eight_bits = _mm512_permutex2var_epi64(joined_bits[0], order, joined_bits[1]);
  if (_mm512_cmpgt_epu64_mask(*eight_bits, _mm512_set1_epi64(63))) return 0;
  *eights = _mm512_permutex2var_epi64(joined[0], order, joined[1]);
  return 1;
}

/// The lanes of `v` moved `n` lanes up, zeros below.
#define LANES_UP(v, n) _mm512_alignr_epi64((v), _mm512_setzero_si512(), 8 - (n))

/// Each lane's sum with the lanes below it.
VBMI_TARGET static inline __m512i inclusive_sums(__m512i v) {
  v = _mm512_add_epi64(v, LANES_UP(v, 1));
  v = _mm512_add_epi64(v, LANES_UP(v, 2));
  return _mm512_add_epi64(v, LANES_UP(v, 4));
}

/// The bit writer in vector registers: the pending bits (fewer than 8) in lane 0 of `bits`, their
/// count in every lane of `count`; as with bit_writer, 8 bytes past `out` are always writable.
typedef struct {
  uint8_t *out;
  __m512i bits, count;
} vector_writer;

VBMI_TARGET static inline vector_writer vector_writer_from(bit_writer *writer) {
  flush_bits(writer);
  return (vector_writer){writer->out, _mm512_maskz_set1_epi64(1, (long long)writer->bits),
                         _mm512_set1_epi64(writer->count)};
}

VBMI_TARGET static inline bit_writer bit_writer_from(const vector_writer *writer) {
  return (bit_writer){(uint64_t)_mm_cvtsi128_si64(_mm512_castsi512_si128(writer->bits)),
                      (unsigned)_mm_cvtsi128_si64(_mm512_castsi512_si128(writer->count)), writer->out};
}

/// Appends eight runs of bits (lane k of `runs`, `lengths[k]` bits, at most 63) in lane order,
/// without a loop: each run's place comes from the sums of the lengths below it, and each 64-bit
/// word of the result is the sum (the runs' bits never overlap, so the sum is their OR) of the runs
/// that start in it and of the bits that spill over from the runs that start in the word before.
/// Those sums are differences of running sums taken at the last run that starts in each word: a
/// run is shorter than a word, so every word up to the last run's has one.
VBMI_TARGET static inline void put_8_runs(vector_writer *writer, __m512i runs, __m512i lengths) {
  const __m512i zero = _mm512_setzero_si512(), last = _mm512_set1_epi64(7), sixty_four = _mm512_set1_epi64(64);
  const __m512i ends = inclusive_sums(lengths), starts = _mm512_sub_epi64(ends, lengths);
  const __m512i word = _mm512_srli_epi64(starts, 6), offset = _mm512_and_si512(starts, _mm512_set1_epi64(63));
  const __m512i in_word = _mm512_sllv_epi64(runs, offset);
  const __m512i spill = _mm512_srlv_epi64(runs, _mm512_sub_epi64(sixty_four, offset));  // 0 when offset is 0
  const __m512i in_sums = inclusive_sums(in_word);
  const __mmask8 last_in_word = _mm512_cmpneq_epi64_mask(word, _mm512_alignr_epi64(zero, word, 1)) | 0x80;
  // Lane j: the running sum at the last run that starts in word j (past the last word: the whole
  // sum), and that run's spill, the only one into word j + 1 (past the last word: none).
  const __m512i in_through =
      _mm512_mask_compress_epi64(_mm512_permutexvar_epi64(last, in_sums), last_in_word, in_sums);
  const __m512i spill_through = _mm512_maskz_compress_epi64(last_in_word, spill);
  const __m512i words = _mm512_add_epi64(_mm512_sub_epi64(in_through, LANES_UP(in_through, 1)),
                                         LANES_UP(spill_through, 1));
  // The words after the writer's pending bits.
  const __m512i carried = _mm512_srlv_epi64(LANES_UP(words, 1), _mm512_sub_epi64(sixty_four, writer->count));
  const __m512i placed =
      _mm512_or_si512(_mm512_or_si512(_mm512_sllv_epi64(words, writer->count), carried), writer->bits);
  const __m512i total = _mm512_add_epi64(_mm512_permutexvar_epi64(last, ends), writer->count);
  const unsigned bits = (unsigned)_mm_cvtsi128_si64(_mm512_castsi512_si128(total));
  _mm512_mask_storeu_epi64(writer->out, (__mmask8)((2u << (bits >> 6)) - 1), placed);
  writer->out += bits >> 3;
  const __m512i last_word = _mm512_permutexvar_epi64(_mm512_srli_epi64(total, 6), placed);
  writer->bits = _mm512_maskz_srlv_epi64(1, last_word, _mm512_and_si512(total, _mm512_set1_epi64(56)));
  writer->count = _mm512_and_si512(total, _mm512_set1_epi64(7));
}

/// Writes the 64 literals of code_64_literals: in eights when each fits in 63 bits, else in fours.
VBMI_TARGET static inline void put_64_literals(vector_writer *writer, const __m512i runs[2],
                                               const __m512i run_bits[2]) {
  __m512i eights, eight_bits;
  if (join_eights(runs, run_bits, &eights, &eight_bits)) {
    put_8_runs(writer, eights, eight_bits);
    return;
  }
  __m512i ordered[2], ordered_bits[2];
  order_runs(runs, run_bits, ordered, ordered_bits);
  put_8_runs(writer, ordered[0], ordered_bits[0]);
  put_8_runs(writer, ordered[1], ordered_bits[1]);
}

/// write_literals, 64 literals a step.
VBMI_TARGET static void write_literals_vbmi(bit_writer *shared, const uint8_t *data, size_t count,
                                            const dynamic_block *block) {
  vector_writer writer = vector_writer_from(shared);
  literal_lookup lookup;
  load_literal_lookup(block, &lookup);
  __m512i runs[2], run_bits[2];
  size_t i = 0;
  for (; i + 64 <= count; i += 64) {
    code_64_literals(_mm512_loadu_si512(data + i), &lookup, runs, run_bits);
    put_64_literals(&writer, runs, run_bits);
  }
  *shared = bit_writer_from(&writer);
  write_literals(shared, data + i, count - i, block);
}

/// zero_run_end, 64 bytes a step.
VBMI_TARGET static inline size_t zero_run_end_vbmi(const uint8_t *data, size_t start, size_t count) {
  size_t j = start;
  for (; j + 64 <= count; j += 64) {
    const __m512i bytes = _mm512_loadu_si512(data + j);
    const uint64_t nonzero = _mm512_test_epi8_mask(bytes, bytes);
    if (nonzero) return j + (size_t)__builtin_ctzll(nonzero);
  }
  return zero_run_end(data, j, count);
}

/// write_symbols, 64 literals a step up to each 8-byte word of zeros. A run of zeros of at most 259
/// bytes (a literal zero and one match: at most 14 + 20 bits) joins the literals before it in one
/// put_8_runs when they go in eights.
VBMI_TARGET static void write_symbols_vbmi(bit_writer *shared, const uint8_t *data, size_t count,
                                           const dynamic_block *block) {
  vector_writer writer = vector_writer_from(shared);
  literal_lookup lookup;
  load_literal_lookup(block, &lookup);
  __m512i runs[2], run_bits[2];
  const __m512i zero = _mm512_setzero_si512();
  size_t i = 0;
  while (i + 64 <= count) {
    const __m512i bytes = _mm512_loadu_si512(data + i);
    const unsigned zero_words = _mm512_cmpeq_epi64_mask(bytes, zero);
    code_64_literals(bytes, &lookup, runs, run_bits);
    if (!zero_words) {
      put_64_literals(&writer, runs, run_bits);
      i += 64;
      continue;
    }
    const int words = __builtin_ctz(zero_words);  // the literals' 8-byte words before the zeros
    const size_t start = i + 8 * (size_t)words, end = zero_run_end_vbmi(data, start + 8, count);
    const size_t run = end - start - 1;  // the zeros after the literal zero: 7 or more
    __m512i eights, eight_bits;
    if (run <= 258 && join_eights(runs, run_bits, &eights, &eight_bits)) {
      const uint32_t match = block->matches[run];
      const uint64_t zeros = block->literal_codes[0] | (uint64_t)(match & 0xFFFFFFu) << block->literal_lengths[0];
      const __mmask8 kept = (__mmask8)((1u << words) - 1), added = (__mmask8)(1u << words);
      put_8_runs(&writer, _mm512_mask_set1_epi64(_mm512_maskz_mov_epi64(kept, eights), added, (long long)zeros),
                 _mm512_mask_set1_epi64(_mm512_maskz_mov_epi64(kept, eight_bits), added,
                                        block->literal_lengths[0] + (match >> 24)));
      i = end;
      continue;
    }
    if (words) {
      // Two runs a word; those past the first zero word are left out.
      __m512i ordered[2], ordered_bits[2];
      order_runs(runs, run_bits, ordered, ordered_bits);
      const __mmask8 keep[2] = {words >= 4 ? 0xFF : (__mmask8)((1u << 2 * words) - 1),
                                words <= 4 ? 0 : (__mmask8)((1u << 2 * (words - 4)) - 1)};
      put_8_runs(&writer, _mm512_maskz_mov_epi64(keep[0], ordered[0]),
                 _mm512_maskz_mov_epi64(keep[0], ordered_bits[0]));
      if (words > 4) {
        put_8_runs(&writer, _mm512_maskz_mov_epi64(keep[1], ordered[1]),
                   _mm512_maskz_mov_epi64(keep[1], ordered_bits[1]));
      }
    }
    bit_writer scalar = bit_writer_from(&writer);
    put_zero_run(&scalar, start, end, block->literal_codes, block->literal_lengths, block->matches);
    writer = vector_writer_from(&scalar);
    i = end;
  }
  *shared = bit_writer_from(&writer);
  write_symbols(shared, data, i, count, block->literal_codes, block->literal_lengths, block->matches);
}
#endif

/// The literals between two matches.
static inline void put_gap(bit_writer *writer, const uint8_t *data, size_t count, const dynamic_block *block,
                           int vbmi) {
#if defined(INNERPEACE_VBMI)
  if (vbmi && count >= 64) {
    write_literals_vbmi(writer, data, count, block);
    return;
  }
#else
  (void)vbmi;
#endif
  write_literals(writer, data, count, block);
}

/// Writes the band's `count` bytes as literals and the matches of find_matches with the block's codes.
/// With `vbmi`, gaps of 64 literals or more go through write_literals_vbmi.
static void write_matched(bit_writer *shared, const uint8_t *data, size_t count, const band_match *matches,
                          size_t match_count, const dynamic_block *block, int vbmi) {
  bit_writer local = *shared, *writer = &local;  // in registers, as in write_symbols
  size_t at = 0;
  for (size_t m = 0; m < match_count; m++) {
    const band_match match = matches[m];
    put_gap(writer, data + at, match.position - at, block, vbmi);
    // At most 14 + 5 bits of length and 14 + 13 of distance after 7 pending: one flush a match.
    const uint32_t length = block->lengths_only[match.length];
    put_bits(writer, length & 0xFFFFFFu, length >> 24);
    const int k = distance_index(match.distance);
    put_bits(writer, block->distance_codes[k], block->distance_lengths[k]);
    put_bits(writer, match.distance - distance_base[k], distance_extra[k]);
    flush_bits(writer);
    at = match.position + match.length;
  }
  put_gap(writer, data + at, count - at, block, vbmi);
  *shared = local;
}

/// log2(1 + k / 256) in units of 2^-16 bit, k = 0...255.
static const uint16_t log2_fractions[256] = {
    0, 369, 736, 1102, 1466, 1829, 2190, 2551, 2909, 3267, 3623, 3978,
    4331, 4683, 5034, 5384, 5732, 6079, 6425, 6769, 7112, 7454, 7795, 8134,
    8473, 8810, 9146, 9480, 9814, 10146, 10477, 10807, 11136, 11464, 11791, 12116,
    12440, 12764, 13086, 13407, 13727, 14046, 14363, 14680, 14996, 15310, 15624, 15937,
    16248, 16559, 16868, 17177, 17484, 17791, 18096, 18401, 18704, 19007, 19308, 19609,
    19909, 20207, 20505, 20802, 21098, 21393, 21687, 21980, 22272, 22564, 22854, 23144,
    23433, 23720, 24007, 24293, 24579, 24863, 25146, 25429, 25711, 25992, 26272, 26551,
    26830, 27108, 27384, 27660, 27936, 28210, 28484, 28757, 29029, 29300, 29571, 29840,
    30109, 30378, 30645, 30912, 31178, 31443, 31707, 31971, 32234, 32496, 32758, 33019,
    33279, 33538, 33797, 34055, 34312, 34569, 34825, 35080, 35334, 35588, 35841, 36094,
    36346, 36597, 36847, 37097, 37346, 37595, 37842, 38090, 38336, 38582, 38827, 39072,
    39316, 39559, 39802, 40044, 40286, 40527, 40767, 41006, 41246, 41484, 41722, 41959,
    42196, 42432, 42667, 42902, 43137, 43370, 43603, 43836, 44068, 44300, 44530, 44761,
    44990, 45220, 45448, 45676, 45904, 46131, 46357, 46583, 46809, 47034, 47258, 47482,
    47705, 47928, 48150, 48372, 48593, 48813, 49034, 49253, 49472, 49691, 49909, 50127,
    50344, 50560, 50776, 50992, 51207, 51422, 51636, 51850, 52063, 52276, 52488, 52700,
    52911, 53122, 53332, 53542, 53751, 53960, 54169, 54377, 54584, 54791, 54998, 55204,
    55410, 55615, 55820, 56025, 56229, 56432, 56635, 56838, 57040, 57242, 57443, 57644,
    57845, 58045, 58245, 58444, 58643, 58841, 59039, 59237, 59434, 59631, 59827, 60023,
    60219, 60414, 60609, 60803, 60997, 61190, 61384, 61576, 61769, 61961, 62152, 62343,
    62534, 62725, 62915, 63104, 63294, 63483, 63671, 63859, 64047, 64234, 64421, 64608,
    64794, 64980, 65166, 65351
};

/// log2(x) for x >= 1, in units of 2^-16 bit, within 2^-8 bit (integers only: the same on every
/// machine).
static inline uint64_t log2_fixed(uint32_t x) {
  const int whole = 31 - __builtin_clz(x);
  const uint32_t fraction = (whole >= 8 ? x >> (whole - 8) : x << (8 - whole)) & 255u;
  return (uint64_t)whole << 16 | log2_fractions[fraction];
}

/// The entropy of `count` symbols of `frequencies`: about the bits of their Huffman coding, in
/// units of 2^-16 bit, and (in `used`) how many have a code.
static uint64_t entropy_bits(const uint32_t *frequencies, int count, uint64_t *used) {
  uint64_t total = 0, weighted = 0;
  for (int s = 0; s < count; s++) {
    const uint32_t frequency = frequencies[s];
    if (!frequency) continue;
    total += frequency;
    weighted += frequency * log2_fixed(frequency);
    ++*used;
  }
  return total ? total * log2_fixed((uint32_t)total) - weighted : 0;
}

/// Whether the band is smaller with matches (find_matches) than with literals and zero runs alone,
/// estimated on the image's every decision_step-th row (`first_row` is the band's first): each
/// way's entropy of those rows' symbols, their extra bits, and 4 bits of the header for each
/// symbol that has a code (an estimate rather than the two Huffman codes, which cost about 1 ms
/// of the encoder's 16 on a photo's 74 bands at classic). `table` and `matches` are scratch.
static int matches_pay(const uint8_t *band, size_t count, size_t filtered_row, int first_row, uint32_t *table,
                       band_match *matches) {
  uint32_t literal_frequencies[literal_symbols] = {0}, spare[3][256] = {{0}};
  uint32_t match_frequencies[literal_symbols] = {0}, distance_frequencies[distance_symbols] = {0};
  uint32_t match_spare[3][256] = {{0}};
  memset(table, 0xFF, sizeof *table << match_hash_bits);
  // The image's every decision_step-th row (the band's first when it has none of them).
  size_t first = (size_t)((decision_step - first_row % decision_step) % decision_step) * filtered_row;
  if (first >= count) first = 0;
  for (size_t offset = first; offset < count; offset += decision_step * filtered_row) {
    count_symbols(band + offset, filtered_row, literal_frequencies, spare);
    find_matches(band, offset, offset + filtered_row, table, matches, match_frequencies, distance_frequencies,
                 match_spare);
  }
  for (int symbol = 0; symbol < 256; symbol++) {
    literal_frequencies[symbol] += spare[0][symbol] + spare[1][symbol] + spare[2][symbol];
    match_frequencies[symbol] += match_spare[0][symbol] + match_spare[1][symbol] + match_spare[2][symbol];
  }
  uint64_t literal_used = 0, match_used = 0;
  uint64_t literal_bits = entropy_bits(literal_frequencies, literal_symbols, &literal_used);
  uint64_t match_bits = entropy_bits(match_frequencies, literal_symbols, &match_used) +
                        entropy_bits(distance_frequencies, distance_symbols, &match_used);
  uint64_t literal_extra = 0, match_extra = 0;
  for (int k = 0; k < 29; k++) {
    // A zero run's match also has its one-bit distance code.
    literal_extra += (uint64_t)literal_frequencies[257 + k] * (length_extra[k] + 1u);
    match_extra += (uint64_t)match_frequencies[257 + k] * length_extra[k];
  }
  for (int d = 0; d < distance_symbols; d++) match_extra += (uint64_t)distance_frequencies[d] * distance_extra[d];
  literal_bits += (literal_extra + 4 * literal_used) << 16;
  match_bits += (match_extra + 4 * match_used) << 16;
  return match_bits * 1000 < literal_bits * decision_permille;
}

static void write_block_header(bit_writer *writer, const dynamic_block *block, int final) {
  put_bits(writer, (uint64_t)(final ? 1 : 0) | 2u << 1, 3);  // BFINAL, BTYPE 2 (dynamic)
  put_bits(writer, (uint64_t)(block->literal_count - 257), 5);
  put_bits(writer, (uint64_t)(block->distance_count - 1), 5);
  put_bits(writer, (uint64_t)(block->header_length_count - 4), 4);
  flush_bits(writer);
  for (int k = 0; k < block->header_length_count; k++) {
    put_bits(writer, block->length_lengths[code_length_order[k]], 3);
    flush_bits(writer);
  }
  for (int t = 0; t < block->token_count; t++) {
    const length_token token = block->tokens[t];
    put_bits(writer, block->length_codes[token.symbol], block->length_lengths[token.symbol]);
    put_bits(writer, token.extra, token.extra_bits);
    flush_bits(writer);
  }
}

/// Stored blocks of at most 65,535 bytes each.
static void write_stored(bit_writer *writer, const uint8_t *data, size_t count, int final) {
  do {
    const size_t part = count > 65535 ? 65535 : count;
    count -= part;
    put_bits(writer, (uint64_t)(final && count == 0 ? 1 : 0), 3);  // BTYPE 0 (stored)
    align_bits(writer);
    const uint8_t header[4] = {(uint8_t)part, (uint8_t)(part >> 8), (uint8_t)~part, (uint8_t)(~part >> 8)};
    memcpy(writer->out, header, 4);
    memcpy(writer->out + 4, data, part);
    writer->out += 4 + part;
    data += part;
  } while (count > 0);
}

static size_t stored_bytes(size_t count) { return count + 5 * (count / 65535 + 1) + 1; }

// MARK: The file

static size_t row_bytes(int width, int alpha) { return (size_t)width * (alpha ? 4u : 3u); }

static size_t band_rows(size_t filtered_row) {
  const size_t rows = band_target_bytes / filtered_row;
  return rows ? rows : 1;
}

size_t innerpeace_png_bound(int width, int height, int alpha) {
  const size_t filtered_row = row_bytes(width, alpha) + 1;
  const size_t filtered = filtered_row * (size_t)height;
  const size_t band = band_rows(filtered_row) * filtered_row;
  const size_t bands = ((size_t)height + band_rows(filtered_row) - 1) / band_rows(filtered_row);
  // Every band ends up at most its stored size, but a band's Huffman coding is written before it
  // is compared with that (at most 14 bits a byte, and its header); then the zlib and PNG
  // framing and 8 spare bytes for the bit writer's whole-word stores.
  return filtered + bands * 6 + (filtered / 65535 + 1) * 5 + band + 1024 + 2 + 4 + 8 + 25 + 12 + 12 + 16;
}

/// Unpacks and filters rows, each after the previous one (its state: the last row, unfiltered).
typedef struct {
  const uint8_t *pixels;
  size_t stride, bpp, row;
  int width, alpha, kernels;
  uint8_t *previous, *current, *candidates[4];
} row_filter;

/// Unpacks the source's row `y` into `target` (`row` bytes).
static void unpack_source_row(const row_filter *filter, int y, uint8_t *target) {
  const uint8_t *source = filter->pixels + (size_t)y * filter->stride;
#if defined(INNERPEACE_AVX2)
  if (filter->kernels == INNERPEACE_PNG_BEST && !filter->alpha && has_vbmi()) {
    unpack_rgb_vbmi(source, target, filter->width);
    return;
  }
  if ((filter->kernels == INNERPEACE_PNG_BEST || filter->kernels == INNERPEACE_PNG_AVX2) && !filter->alpha &&
      __builtin_cpu_supports("ssse3")) {
    unpack_rgb_ssse3(source, target, filter->width);
    return;
  }
#endif
  innerpeace_unpack_row(source, target, filter->width, filter->alpha);
}

/// Makes row `y` the next one the filter takes: the row above it (zeros above the first) becomes
/// the previous row.
static void start_filter_at(row_filter *filter, int y) {
  if (y == 0) {
    memset(filter->previous, 0, filter->row);
  } else {
    unpack_source_row(filter, y - 1, filter->previous);
  }
}

/// Filters rows [y0, y1) into `target` (a filter type byte, then the row, each) and returns the
/// bytes written.
static size_t filter_rows(row_filter *filter, int y0, int y1, uint8_t *target) {
  size_t count = 0;
  for (int y = y0; y < y1; y++) {
    unpack_source_row(filter, y, filter->current);
    const int type = filter_candidates(filter->current, filter->previous, filter->row, filter->bpp,
                                       filter->candidates, filter->kernels);
    target[count] = (uint8_t)type;
    memcpy(target + count + 1, filter->candidates[type - 1], filter->row);
    count += filter->row + 1;
    uint8_t *swap = filter->previous;
    filter->previous = filter->current;
    filter->current = swap;
  }
  return count;
}

/// Recompresses the filtered image with libdeflate when that gives a smaller zlib stream than
/// `zlib_length` bytes at `zlib`, and returns the stream's length. `zlib` has room for the whole
/// filtered image. Only worth it (and only tried) for images that compress more than 8:1 (flat
/// colours, text, transparent cards, synthetic images): there libdeflate's longer matches win by
/// far (a transparent og card: 60 KB against 244 KB), and its time is small; photographs (about
/// 3:1) never get here.
static size_t recompress_flat(row_filter *filter, int height, uint8_t *zlib, size_t zlib_length) {
  uint8_t *kept = malloc(zlib_length), *smaller = malloc(zlib_length);
  struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(flat_image_level);
  size_t length = 0;
  if (kept && smaller && compressor) {
    memcpy(kept, zlib, zlib_length);
    memset(filter->previous, 0, filter->row);
    const size_t filtered = filter_rows(filter, 0, height, zlib);
    length = libdeflate_zlib_compress(compressor, zlib, filtered, smaller, zlib_length - 1);
    memcpy(zlib, length ? smaller : kept, length ? length : zlib_length);
  }
  free(kept);
  free(smaller);
  if (compressor) libdeflate_free_compressor(compressor);
  return length ? length : zlib_length;
}

static void put_big_endian(uint8_t *target, uint32_t value) {
  target[0] = (uint8_t)(value >> 24);
  target[1] = (uint8_t)(value >> 16);
  target[2] = (uint8_t)(value >> 8);
  target[3] = (uint8_t)value;
}


// MARK: Bands

/// What filters and codes bands of rows, one per thread: the row filter and its scratch.
typedef struct {
  row_filter filter;
  uint8_t *band, *rows;
  dynamic_block *block;
  band_match *matches;
  uint32_t *table;
  int vbmi;  // literals coded 64 at a time with AVX-512 VBMI
} band_coder;

static void free_band_coder(band_coder *coder) {
  free(coder->band);
  free(coder->rows);
  free(coder->block);
  free(coder->matches);
  free(coder->table);
}

/// Allocates the coder's scratch for bands of `rows_per_band` rows; its filter is `shape` with
/// rows of its own. Returns 0 when memory runs out (nothing left allocated).
static int make_band_coder(band_coder *coder, const row_filter *shape, size_t rows_per_band) {
  const size_t row = shape->row, filtered_row = row + 1;
  coder->band = malloc(rows_per_band * filtered_row);
  coder->rows = calloc(1, 2 * (row + row_padding) + 4 * row);
  coder->block = malloc(sizeof *coder->block);
  // Every match is at least match_near_min bytes long.
  coder->matches = malloc((rows_per_band * filtered_row / match_near_min + 1) * sizeof *coder->matches);
  coder->table = malloc(sizeof *coder->table << match_hash_bits);
  if (!coder->band || !coder->rows || !coder->block || !coder->matches || !coder->table) {
    free_band_coder(coder);
    return 0;
  }
  coder->filter = *shape;
  coder->vbmi = 0;
#if defined(INNERPEACE_VBMI)
  coder->vbmi = shape->kernels == INNERPEACE_PNG_BEST && has_vbmi();
#endif
  coder->filter.previous = coder->rows + row_padding;
  coder->filter.current = coder->rows + 2 * row_padding + row;
  for (int k = 0; k < 4; k++) coder->filter.candidates[k] = coder->rows + 2 * (row + row_padding) + (size_t)k * row;
  return 1;
}

/// Filters rows [y0, y1) (the filter's next rows) into the coder's band, adds them to `adler`, and
/// writes them at `writer` as one dynamic Huffman block (the last of the stream when `final`).
/// Returns the band's filtered bytes. Sets `stored` when that block is no shorter than the band
/// stored (its own bits counted from 0, so the choice never depends on where the band starts);
/// `writer` is then as it was, and the caller writes the band stored.
static size_t code_band(band_coder *coder, int y0, int y1, int final, bit_writer *writer, uint32_t *adler,
                        int *stored) {
  const size_t filtered_row = coder->filter.row + 1;
  uint8_t *band = coder->band;
  dynamic_block *block = coder->block;
  const size_t count = filter_rows(&coder->filter, y0, y1, band);
  *adler = libdeflate_adler32(*adler, band, count);
  const bit_writer start = *writer;
  if (matches_pay(band, count, filtered_row, y0, coder->table, coder->matches)) {
    uint32_t frequencies[literal_symbols] = {0}, distance_frequencies[distance_symbols] = {0};
    uint32_t spare[3][256] = {{0}};
    memset(coder->table, 0xFF, sizeof *coder->table << match_hash_bits);
    const size_t match_count =
        find_matches(band, 0, count, coder->table, coder->matches, frequencies, distance_frequencies, spare);
    for (int symbol = 0; symbol < 256; symbol++) {
      frequencies[symbol] += spare[0][symbol] + spare[1][symbol] + spare[2][symbol];
    }
    frequencies[256] = 1;
    plan_block(frequencies, distance_frequencies, block);
    write_block_header(writer, block, final);
    write_matched(writer, band, count, coder->matches, match_count, block, coder->vbmi);
  } else {
    // The code comes from every sample_step-th row of the band, each literal and length symbol
    // counted once more so that every one has a code.
    uint32_t frequencies[literal_symbols] = {0}, spare[3][256] = {{0}};
    for (size_t offset = 0; offset < count; offset += sample_step * filtered_row) {
      count_symbols(band + offset, filtered_row, frequencies, spare);
    }
    for (int symbol = 0; symbol < 256; symbol++) {
      frequencies[symbol] += spare[0][symbol] + spare[1][symbol] + spare[2][symbol];
    }
    for (int symbol = 0; symbol < literal_symbols; symbol++) frequencies[symbol] += symbol != 256;
    frequencies[256] = 1;
    plan_block(frequencies, NULL, block);
    write_block_header(writer, block, final);
#if defined(INNERPEACE_VBMI)
    if (coder->vbmi) {
      write_symbols_vbmi(writer, band, count, block);
    } else
#endif
    {
      write_symbols(writer, band, 0, count, block->literal_codes, block->literal_lengths, block->matches);
    }
  }
  put_bits(writer, block->codes[256] & 0xFFFFFFu, block->codes[256] >> 24);
  flush_bits(writer);
  const size_t written_bits = (size_t)(writer->out - start.out) * 8 + writer->count - start.count;
  *stored = (written_bits + 7) / 8 >= stored_bytes(count);
  if (*stored) *writer = start;
  return count;
}

/// A piece of a band worker's stream in its scratch: `length` bits from bit 0 of the byte at
/// `offset` (a run of coded bands), or, when `stored`, a band of `length` filtered bytes there, to
/// be written as stored blocks once the position of the stream is known.
typedef struct {
  size_t offset, length;
  int stored, final;
} stream_piece;

/// The bands of rows [y0, y1) on one thread. The first worker writes at the output; each other
/// writes its stream from bit 0 into `scratch` as pieces, joined after it in order.
typedef struct {
  band_coder coder;
  int y0, y1, height;
  size_t rows_per_band;
  bit_writer writer;
  uint8_t *scratch;  // NULL for the first worker
  stream_piece *pieces;
  int piece_count;
  uint32_t adler;   // of this worker's filtered bytes alone
  size_t filtered;  // this worker's filtered bytes
} band_worker;

/// Ends the worker's run of coded bands that began at `run`.
static void end_coded_run(band_worker *worker, const uint8_t *run) {
  bit_writer *writer = &worker->writer;
  // The pending bits' byte, with nothing above them.
  *writer->out = (uint8_t)writer->bits;
  const size_t bits = (size_t)(writer->out - run) * 8 + writer->count;
  if (bits) worker->pieces[worker->piece_count++] = (stream_piece){(size_t)(run - worker->scratch), bits, 0, 0};
}

static void *run_band_worker(void *argument) {
  band_worker *worker = argument;
  start_filter_at(&worker->coder.filter, worker->y0);
  const uint8_t *run = worker->writer.out;
  for (int y0 = worker->y0; y0 < worker->y1; y0 += (int)worker->rows_per_band) {
    const int y1 = y0 + (int)worker->rows_per_band < worker->y1 ? y0 + (int)worker->rows_per_band : worker->y1;
    const int final = y1 == worker->height;
    int stored = 0;
    const size_t count = code_band(&worker->coder, y0, y1, final, &worker->writer, &worker->adler, &stored);
    worker->filtered += count;
    if (!stored) continue;
    if (!worker->scratch) {
      write_stored(&worker->writer, worker->coder.band, count, final);
      continue;
    }
    end_coded_run(worker, run);
    uint8_t *raw = worker->writer.out + 1;
    memcpy(raw, worker->coder.band, count);
    worker->pieces[worker->piece_count++] = (stream_piece){(size_t)(raw - worker->scratch), count, 1, final};
    worker->writer = (bit_writer){0, 0, raw + count};
    run = raw + count;
  }
  if (worker->scratch) end_coded_run(worker, run);
  return NULL;
}

/// Appends `bits` bits from `source` (bit 0 the lowest of its first byte) at `writer`, 56 at a time.
static void append_bits(bit_writer *writer, const uint8_t *source, size_t bits) {
  for (; bits >= 56; bits -= 56, source += 7) {
    uint64_t word = 0;
    for (int k = 0; k < 7; k++) word |= (uint64_t)source[k] << (8 * k);
    put_bits(writer, word, 56);
    flush_bits(writer);
  }
  if (bits) {
    uint64_t word = 0;
    for (size_t k = 0; k < (bits + 7) / 8; k++) word |= (uint64_t)source[k] << (8 * k);
    put_bits(writer, word & ((UINT64_C(1) << bits) - 1), (unsigned)bits);
    flush_bits(writer);
  }
}

/// The Adler-32 of two pieces of data, one after the other, from each one's own Adler-32 and the
/// second's length (zlib's adler32_combine).
static uint32_t adler32_combine(uint32_t first, uint32_t second, size_t second_length) {
  const uint64_t base = 65521;
  const uint64_t remainder = second_length % base;
  uint64_t sum1 = first & 0xFFFF;
  uint64_t sum2 = remainder * sum1 % base;
  sum1 += (second & 0xFFFF) + base - 1;
  sum2 += (first >> 16) + (second >> 16) + base - remainder;
  if (sum1 >= base) sum1 -= base;
  if (sum1 >= base) sum1 -= base;
  if (sum2 >= base << 1) sum2 -= base << 1;
  if (sum2 >= base) sum2 -= base;
  return (uint32_t)(sum1 | sum2 << 16);
}

static void free_band_workers(band_worker *workers, int count) {
  for (int k = 0; k < count; k++) {
    free_band_coder(&workers[k].coder);
    free(workers[k].scratch);
    free(workers[k].pieces);
  }
  free(workers);
}

/// Splits bands of `rows_per_band` rows among `count` workers (consecutive bands each, as evenly
/// as whole bands go) and gives each its coder and, after the first, its scratch. Returns NULL when
/// memory runs out.
static band_worker *make_band_workers(const row_filter *shape, int height, size_t rows_per_band, int count) {
  band_worker *workers = calloc((size_t)count, sizeof *workers);
  if (!workers) return NULL;
  const int bands = (int)(((size_t)height + rows_per_band - 1) / rows_per_band);
  const size_t filtered_row = shape->row + 1, band_bytes = rows_per_band * filtered_row;
  for (int k = 0; k < count; k++) {
    band_worker *worker = &workers[k];
    const int first_band = (int)((long long)bands * k / count), end_band = (int)((long long)bands * (k + 1) / count);
    worker->y0 = (int)((size_t)first_band * rows_per_band);
    worker->y1 = (size_t)end_band * rows_per_band < (size_t)height ? (int)((size_t)end_band * rows_per_band) : height;
    worker->height = height;
    worker->rows_per_band = rows_per_band;
    worker->adler = 1;
    if (!make_band_coder(&worker->coder, shape, rows_per_band)) {
      free_band_workers(workers, k);
      return NULL;
    }
    if (k == 0) continue;
    // Each band at most its stored size and a byte (the coded ones are shorter), then room for the
    // last band's Huffman coding, written before it is compared (under 2 bytes a byte, and its
    // header), and the bit writer's whole-word stores.
    const int worker_bands = end_band - first_band;
    const size_t filtered = (size_t)(worker->y1 - worker->y0) * filtered_row;
    worker->scratch = malloc(filtered + (size_t)worker_bands * 8 + 2 * band_bytes + 4096);
    worker->pieces = malloc((2 * (size_t)worker_bands + 1) * sizeof *worker->pieces);
    worker->writer = (bit_writer){0, 0, worker->scratch};
    if (!worker->scratch || !worker->pieces) {
      free_band_workers(workers, k + 1);
      return NULL;
    }
  }
  return workers;
}
// The most threads one file is encoded on.
enum { max_threads = 64 };

size_t innerpeace_png_encode(const uint8_t *pixels, size_t stride, int width, int height, int alpha,
                             uint8_t *output, size_t capacity, int kernels, int threads) {
  if (width <= 0 || height <= 0 || capacity < innerpeace_png_bound(width, height, alpha)) return 0;
  const size_t bpp = alpha ? 4 : 3, row = row_bytes(width, alpha), filtered_row = row + 1;
  const size_t rows_per_band = band_rows(filtered_row);
  const size_t bands = ((size_t)height + rows_per_band - 1) / rows_per_band;
  int count = threads < 1 ? 1 : threads > max_threads ? max_threads : threads;
  if ((size_t)count > bands) count = (int)bands;
  const row_filter shape = {pixels, stride, bpp, row, width, alpha, kernels, NULL, NULL, {NULL, NULL, NULL, NULL}};
  band_worker *workers = make_band_workers(&shape, height, rows_per_band, count);
  if (!workers) return 0;

  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  memcpy(output, signature, 8);
  uint8_t *ihdr = output + 8;
  put_big_endian(ihdr, 13);
  memcpy(ihdr + 4, "IHDR", 4);
  put_big_endian(ihdr + 8, (uint32_t)width);
  put_big_endian(ihdr + 12, (uint32_t)height);
  // 8-bit, RGBA or RGB, deflate, filter method 0, no interlace.
  const uint8_t rest[5] = {8, alpha ? 6 : 2, 0, 0, 0};
  memcpy(ihdr + 16, rest, 5);
  put_big_endian(ihdr + 21, libdeflate_crc32(0, ihdr + 4, 17));
  uint8_t *idat = ihdr + 25;
  memcpy(idat + 4, "IDAT", 4);
  uint8_t *zlib = idat + 8;
  zlib[0] = 0x78;  // deflate, 32 KiB window
  zlib[1] = 0x01;  // no dictionary, fastest (and (0x78 << 8 | 0x01) % 31 == 0)
  workers[0].writer = (bit_writer){0, 0, zlib + 2};

  // The other workers on threads of their own (on this one, after the first, where a thread cannot
  // be created), the first on this thread.
  pthread_t ids[max_threads];
  int started[max_threads] = {0};
  for (int k = 1; k < count; k++) started[k] = pthread_create(&ids[k], NULL, run_band_worker, &workers[k]) == 0;
  run_band_worker(&workers[0]);
  for (int k = 1; k < count; k++) {
    if (started[k]) {
      pthread_join(ids[k], NULL);
    } else {
      run_band_worker(&workers[k]);
    }
  }
  bit_writer writer = workers[0].writer;
  uint32_t adler = workers[0].adler;
  for (int k = 1; k < count; k++) {
    const band_worker *worker = &workers[k];
    for (int p = 0; p < worker->piece_count; p++) {
      const stream_piece piece = worker->pieces[p];
      if (piece.stored) {
        write_stored(&writer, worker->scratch + piece.offset, piece.length, piece.final);
      } else {
        append_bits(&writer, worker->scratch + piece.offset, piece.length);
      }
    }
    adler = adler32_combine(adler, worker->adler, worker->filtered);
  }
  align_bits(&writer);
  put_big_endian(writer.out, adler);
  size_t zlib_length = (size_t)(writer.out + 4 - zlib);
  if (zlib_length < filtered_row * (size_t)height / 8) {
    zlib_length = recompress_flat(&workers[0].coder.filter, height, zlib, zlib_length);
  }
  uint8_t *end = zlib + zlib_length;
  put_big_endian(idat, (uint32_t)zlib_length);
  put_big_endian(end, libdeflate_crc32(0, idat + 4, zlib_length + 4));
  static const uint8_t iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82};
  memcpy(end + 4, iend, 12);
  free_band_workers(workers, count);
  return (size_t)(end + 16 - output);
}
