#include "innerpeace_kernels.h"

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#endif

int innerpeace_set_malloc_policy(int mmap_threshold, int maximum_arenas) {
#if defined(__GLIBC__)
  return mallopt(M_MMAP_THRESHOLD, mmap_threshold) == 1 && mallopt(M_ARENA_MAX, maximum_arenas) == 1;
#else
  (void)mmap_threshold;
  (void)maximum_arenas;
  return 0;
#endif
}

void innerpeace_box_vertical(const uint8_t *restrict source, uint8_t *restrict target, uint16_t *restrict sums,
                             int width, int height, int radius) {
  // A window of at most 257 rows of bytes fits 16 bits, so eight sums go in one SSE register.
  const uint32_t span = (uint32_t)(2 * radius + 1);
  // (sum + span / 2) * scale >> 16 == round(sum / span), to within one level.
  const uint16_t scale = (uint16_t)((65536u + span / 2) / span - (span == 1 ? 1 : 0));
  const uint16_t bias = (uint16_t)(span / 2);
  memset(sums, 0, sizeof(uint16_t) * (size_t)width);
  for (int row = 0; row < radius && row < height; row++) {
    const uint8_t *restrict line = source + (size_t)row * (size_t)width;
    for (int x = 0; x < width; x++) sums[x] = (uint16_t)(sums[x] + line[x]);
  }
  for (int y = 0; y < height; y++) {
    const int entering = y + radius;
    if (entering < height) {
      const uint8_t *restrict line = source + (size_t)entering * (size_t)width;
      for (int x = 0; x < width; x++) sums[x] = (uint16_t)(sums[x] + line[x]);
    }
    uint8_t *restrict out = target + (size_t)y * (size_t)width;
    if (span == 1) {
      for (int x = 0; x < width; x++) out[x] = (uint8_t)sums[x];
    } else {
      for (int x = 0; x < width; x++) out[x] = (uint8_t)(((uint32_t)(uint16_t)(sums[x] + bias) * scale) >> 16);
    }
    const int leaving = y - radius;
    if (leaving >= 0) {
      const uint8_t *restrict line = source + (size_t)leaving * (size_t)width;
      for (int x = 0; x < width; x++) sums[x] = (uint16_t)(sums[x] - line[x]);
    }
  }
}

void innerpeace_halve(const uint8_t *restrict source, uint8_t *restrict target, int width, int height) {
  const int half_width = (width + 1) / 2, half_height = (height + 1) / 2;
  for (int y = 0; y < half_height; y++) {
    const uint8_t *restrict row0 = source + (size_t)(2 * y) * (size_t)width;
    const uint8_t *restrict row1 = source + (size_t)(2 * y + 1 < height ? 2 * y + 1 : height - 1) * (size_t)width;
    uint8_t *restrict out = target + (size_t)y * (size_t)half_width;
    const int pairs = width / 2;
    for (int x = 0; x < pairs; x++) {
      out[x] = (uint8_t)((row0[2 * x] + row0[2 * x + 1] + row1[2 * x] + row1[2 * x + 1] + 2) >> 2);
    }
    if (half_width > pairs) {
      const int last = width - 1;
      out[pairs] = (uint8_t)((2 * row0[last] + 2 * row1[last] + 2) >> 2);
    }
  }
}

/// Output pixel `x` of an innerpeace_double row, by the general rule (edges included), from the
/// row's vertical blend: its two nearest small columns weighed by quarters.
static inline uint8_t double_pixel(const uint16_t *restrict blend, int x, int small_width) {
  const int sx0 = (x - 1) >> 1 < 0 ? 0 : (x - 1) >> 1;
  const int sx1 = (x + 1) >> 1 > small_width - 1 ? small_width - 1 : (x + 1) >> 1;
  const uint32_t wx1 = sx0 == sx1 ? 0 : ((x & 1) ? 1 : 3);
  return (uint8_t)((blend[sx0] * (4 - wx1) + blend[sx1] * wx1 + 8) >> 4);
}

void innerpeace_double(const uint8_t *restrict source, int small_width, int small_height, uint8_t *restrict target,
                       int width, int height, uint16_t *restrict blend) {
  if (width <= 0 || height <= 0 || small_width <= 0 || small_height <= 0) return;
  // Bilinear weights are quarters on each axis, so a pixel is
  // (sum over the 2 x 2 neighbours of row weight * column weight * value + 8) >> 4, exactly; the
  // row's vertical blend is made once per row, then each output pixel weighs two of its columns:
  // the same integers in the same sums as weighing the four at once.
  for (int y = 0; y < height; y++) {
    // Full-resolution pixel centre y + 0.5 sits at y / 2 - 0.25 in the half-size grid.
    const int sy0 = (y - 1) >> 1 < 0 ? 0 : (y - 1) >> 1;
    const int sy1 = (y + 1) >> 1 > small_height - 1 ? small_height - 1 : (y + 1) >> 1;
    const uint16_t wy1 = sy0 == sy1 ? 0 : ((y & 1) ? 1 : 3);
    const uint16_t wy0 = (uint16_t)(4 - wy1);
    const uint8_t *restrict r0 = source + (size_t)sy0 * (size_t)small_width;
    const uint8_t *restrict r1 = source + (size_t)sy1 * (size_t)small_width;
    for (int x = 0; x < small_width; x++) blend[x] = (uint16_t)(r0[x] * wy0 + r1[x] * wy1);
    uint8_t *restrict out = target + (size_t)y * (size_t)width;
    // Inside, output pixels 2k and 2k + 1 weigh small columns (k - 1, k) and (k, k + 1) by
    // (1, 3) and (3, 1): k from 1 while k + 1 is a column and 2k + 1 an output pixel.
    int k = 1;
    const int last = (width - 2) / 2 < small_width - 2 ? (width - 2) / 2 : small_width - 2;
#if defined(__SSE2__)
    const __m128i eight = _mm_set1_epi16(8);
    for (; k + 7 <= last; k += 8) {
      const __m128i before = _mm_loadu_si128((const __m128i *)(blend + k - 1));
      const __m128i here = _mm_loadu_si128((const __m128i *)(blend + k));
      const __m128i after = _mm_loadu_si128((const __m128i *)(blend + k + 1));
      const __m128i three = _mm_add_epi16(_mm_add_epi16(here, here), here);
      const __m128i even = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(before, three), eight), 4);
      const __m128i odd = _mm_srli_epi16(_mm_add_epi16(_mm_add_epi16(after, three), eight), 4);
      _mm_storeu_si128((__m128i *)(out + 2 * k), _mm_or_si128(even, _mm_slli_epi16(odd, 8)));
    }
#endif
    for (; k <= last; k++) {
      out[2 * k] = (uint8_t)((blend[k - 1] + 3 * blend[k] + 8) >> 4);
      out[2 * k + 1] = (uint8_t)((3 * blend[k] + blend[k + 1] + 8) >> 4);
    }
    // The edges, and any pixel the inside did not reach, as the general rule says.
    out[0] = double_pixel(blend, 0, small_width);
    if (width > 1) out[1] = double_pixel(blend, 1, small_width);
    for (int x = 2 * k; x < width; x++) out[x] = double_pixel(blend, x, small_width);
  }
}

void innerpeace_extract_alpha(const uint8_t *restrict source, size_t stride, uint8_t *restrict target, int width,
                              int height) {
  for (int y = 0; y < height; y++) {
    const uint8_t *restrict row = source + (size_t)y * stride;
    uint8_t *restrict out = target + (size_t)y * (size_t)width;
    for (int x = 0; x < width; x++) out[x] = row[4 * x + 3];
  }
}

#if defined(__SSE2__)
/// Transposes the 16 x 16 block at `source` (rows `source_stride` apart) into `target` (rows
/// `target_stride` apart): four rounds of interleaving, bytes, then pairs, quads and halves.
static inline void transpose_block16(const uint8_t *restrict source, size_t source_stride, uint8_t *restrict target,
                                     size_t target_stride) {
  __m128i a[16], b[16];
  for (int i = 0; i < 16; i++) a[i] = _mm_loadu_si128((const __m128i *)(source + (size_t)i * source_stride));
  // One round: registers 2i and 2i + 1 interleaved, low halves into i, high halves into i + 8.
#define INTERLEAVE_ROUND(from, to, size)                                  \
  for (int i = 0; i < 8; i++) {                                           \
    to[i] = _mm_unpacklo_epi##size(from[2 * i], from[2 * i + 1]);         \
    to[i + 8] = _mm_unpackhi_epi##size(from[2 * i], from[2 * i + 1]);     \
  }
  INTERLEAVE_ROUND(a, b, 8)
  INTERLEAVE_ROUND(b, a, 16)
  INTERLEAVE_ROUND(a, b, 32)
  INTERLEAVE_ROUND(b, a, 64)
#undef INTERLEAVE_ROUND
  // Each round sends the low halves to the first eight registers and the high halves to the
  // last eight, so register i holds the column whose index is i's four bits reversed.
  static const int column[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
  for (int i = 0; i < 16; i++) _mm_storeu_si128((__m128i *)(target + (size_t)column[i] * target_stride), a[i]);
}
#endif

void innerpeace_transpose(const uint8_t *restrict source, uint8_t *restrict target, int width, int height) {
  enum { tile = 32 };
  int full_width = 0, full_height = 0;
#if defined(__SSE2__)
  // Whole 16 x 16 blocks with SSE2; the right and bottom strips that remain as below.
  full_width = width / 16 * 16;
  full_height = height / 16 * 16;
  for (int y0 = 0; y0 < full_height; y0 += 16) {
    for (int x0 = 0; x0 < full_width; x0 += 16) {
      transpose_block16(source + (size_t)y0 * (size_t)width + (size_t)x0, (size_t)width,
                        target + (size_t)x0 * (size_t)height + (size_t)y0, (size_t)height);
    }
  }
#endif
  for (int y0 = 0; y0 < height; y0 += tile) {
    const int y1 = y0 + tile < height ? y0 + tile : height;
    for (int x0 = 0; x0 < width; x0 += tile) {
      const int x1 = x0 + tile < width ? x0 + tile : width;
      for (int y = y0; y < y1; y++) {
        // Columns below full_width of rows below full_height are done.
        const int from = y < full_height && x0 < full_width ? (x1 < full_width ? x1 : full_width) : x0;
        for (int x = from; x < x1; x++) target[(size_t)x * (size_t)height + (size_t)y] = source[(size_t)y * (size_t)width + (size_t)x];
      }
    }
  }
}

void innerpeace_stack(uint8_t *restrict accumulated, const uint8_t *restrict layer, size_t count) {
  for (size_t i = 0; i < count; i++) {
    const uint32_t product = (uint32_t)(255 - accumulated[i]) * (uint32_t)(255 - layer[i]) + 128;
    accumulated[i] = (uint8_t)(255 - ((product + (product >> 8)) >> 8));
  }
}

void innerpeace_unpack_row(const uint8_t *restrict source, uint8_t *restrict target, int width, int alpha) {
  if (!alpha) {
    for (int x = 0; x < width; x++) {
      target[3 * x] = source[4 * x + 2];
      target[3 * x + 1] = source[4 * x + 1];
      target[3 * x + 2] = source[4 * x];
    }
    return;
  }
  for (int x = 0; x < width; x++) {
    const uint32_t b = source[4 * x], g = source[4 * x + 1], r = source[4 * x + 2], a = source[4 * x + 3];
    if (a == 255) {
      target[4 * x] = (uint8_t)r;
      target[4 * x + 1] = (uint8_t)g;
      target[4 * x + 2] = (uint8_t)b;
    } else if (a == 0) {
      target[4 * x] = target[4 * x + 1] = target[4 * x + 2] = 0;
    } else {
      uint32_t rr = (r * 255 + a / 2) / a, gg = (g * 255 + a / 2) / a, bb = (b * 255 + a / 2) / a;
      target[4 * x] = (uint8_t)(rr > 255 ? 255 : rr);
      target[4 * x + 1] = (uint8_t)(gg > 255 ? 255 : gg);
      target[4 * x + 2] = (uint8_t)(bb > 255 ? 255 : bb);
    }
    target[4 * x + 3] = (uint8_t)a;
  }
}

void innerpeace_png_up(const uint8_t *restrict current, const uint8_t *restrict previous, uint8_t *restrict target,
                       size_t count) {
  target[0] = 2;
  uint8_t *restrict row = target + 1;
  for (size_t i = 0; i < count; i++) row[i] = (uint8_t)(current[i] - previous[i]);
}

void innerpeace_max_bytes(uint8_t *restrict target, const uint8_t *restrict source, size_t count) {
  for (size_t i = 0; i < count; i++) target[i] = target[i] > source[i] ? target[i] : source[i];
}
