#ifndef INNERPEACE_WEBP_H
#define INNERPEACE_WEBP_H

// The lossy WebP encoder for opaque cards: one VP8 key frame (RFC 6386) of Cairo's B G R X pixels,
// converted to Y'CbCr 4:2:0 as libwebp converts them. Every macroblock is predicted whole (16x16
// luma, 8x8 chroma: DC, vertical, horizontal or TrueMotion, whichever leaves the smallest sum of
// absolute differences), and its residual transformed and quantized with libwebp's arithmetic and
// rounding, at libwebp's quantizer for the quality. The levels of the whole frame are kept, and
// their tokens coded after it at probabilities fitted to them (counted on every eighth row of
// macroblocks), sent as updates of the format's defaults; a frame past 4 megapixels gets its
// probabilities from a sample analysed first. libwebp's own encoder (method 0) also
// tries 4x4 predictions and segments; this one decodes to the same PSNR in smaller files and less
// time (BENCHMARKS.md). Output depends only on the pixels and the arguments: the same bytes from the
// SSE2 and the plain loops, on every machine.

#include <stddef.h>
#include <stdint.h>

/// The results of `innerpeace_webp_encode`.
enum {
  INNERPEACE_WEBP_OK = 0,
  /// Memory ran out.
  INNERPEACE_WEBP_NO_MEMORY = 1,
  /// The image is larger than VP8 allows (16383 pixels a side), or a partition of its tokens would
  /// be (16 MiB).
  INNERPEACE_WEBP_TOO_LARGE = 2,
  /// A width or height below 1, or a quality outside 0...100.
  INNERPEACE_WEBP_INVALID = 3,
};

/// Which loops `innerpeace_webp_encode` runs; both write the same bytes.
enum {
  /// SSE2 where the processor has it (every x86-64), else plain C.
  INNERPEACE_WEBP_BEST = 0,
  /// Plain C.
  INNERPEACE_WEBP_SCALAR = 1,
};

/// Writes a whole WebP file (RIFF, one `VP8 ` chunk) of the opaque Cairo pixels `pixels` (rows
/// `stride` bytes apart, B G R X; X is ignored) at `quality` 0 (smallest) to 100, mapped to VP8's
/// quantizer as libwebp maps its quality. `loop_filter` 0 turns the decoder's loop filter off (the
/// decoded image is then exactly the encoder's reconstruction); 1 sets its level from the quantizer
/// as libwebp does. `kernels` is one of the INNERPEACE_WEBP_ values. On success `*output` is a
/// buffer from `malloc` holding `*size` bytes, which the caller frees. When `reconstruction` is not
/// NULL, it receives the planes a decoder rebuilds before its loop filter: Y (width x height), then
/// U and V ((width + 1) / 2 x (height + 1) / 2 each).
///
/// Memory: planes for one row of macroblocks, the file, and up to 16384 macroblocks (4 megapixels,
/// every preset) about 26 + 2 x (its levels) bytes a macroblock kept between the passes (at most
/// 794; about 150 on the catalog's og cards). Past that the levels are not kept: the probabilities
/// are fitted to a sample of the frame first (every eighth row of macroblocks), and the tokens coded
/// as they come.
int innerpeace_webp_encode(const uint8_t *pixels, size_t stride, int width, int height, int quality,
                           int loop_filter, int kernels, uint8_t **output, size_t *size,
                           uint8_t *reconstruction);

#endif
