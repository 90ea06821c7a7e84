#ifndef INNERPEACE_PNG_H
#define INNERPEACE_PNG_H

// The PNG encoder: adaptive filters (Sub, Up, Average or Paeth, chosen per row by the smallest sum
// of absolute residuals), unpacked from Cairo's pixels in the same pass, then deflate with one
// dynamic Huffman block per band of rows over literals and runs of zero residuals (matches at
// distance 1), or, where a sample of the band's rows says it is smaller, over literals and the
// matches of a greedy hash matcher (at most 32 KiB back, within the band). Output depends only on
// the pixels: the vector path and the scalar path give the same bytes, on one thread or several
// (the bands are independent: each thread codes its bands from bit 0, and the streams are joined
// in order, each shifted by the bits the earlier ones left pending).

#include <stddef.h>
#include <stdint.h>

/// The largest PNG file `innerpeace_png_encode` can write for a width x height image.
size_t innerpeace_png_bound(int width, int height, int alpha);

/// Which loops `innerpeace_png_encode` runs; every choice writes the same bytes.
enum {
  /// The fastest the processor has (AVX-512 VBMI where present, else AVX2 and SSSE3, else SSE2, else
  /// plain C).
  INNERPEACE_PNG_BEST = 0,
  /// Plain C loops compiled without vectorisation.
  INNERPEACE_PNG_SCALAR = 1,
  /// SSE2 only (the x86-64 baseline), as on a processor without AVX2 or SSSE3.
  INNERPEACE_PNG_BASELINE = 2,
  /// AVX2 and SSSE3 where present (else as BASELINE), as on a processor without AVX-512.
  INNERPEACE_PNG_AVX2 = 3,
};

/// Writes a whole PNG file (signature, IHDR, IDAT, IEND) of the Cairo pixels `pixels` (rows
/// `stride` bytes apart; B G R X, or premultiplied B G R A unpremultiplied as
/// `innerpeace_unpack_row` does when `alpha` is non-zero) into `output`, which holds `capacity`
/// bytes, at least `innerpeace_png_bound`. The pixels are only read. `kernels` is one of the
/// INNERPEACE_PNG_ values (tests compare them). `threads` above 1 splits the bands of rows among
/// that many threads (at most one a band; created for the call and joined before it returns; where
/// one cannot be created, its bands are coded on the calling thread); the file is the same bytes
/// for every `threads` and `kernels`. Returns the file's length, or 0 when memory runs out or
/// `capacity` is too small.
size_t innerpeace_png_encode(const uint8_t *pixels, size_t stride, int width, int height, int alpha,
                             uint8_t *output, size_t capacity, int kernels, int threads);

#endif
