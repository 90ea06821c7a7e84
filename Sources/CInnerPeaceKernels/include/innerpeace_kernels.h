#ifndef INNERPEACE_KERNELS_H
#define INNERPEACE_KERNELS_H

// Pixel loops of the halo blur and the PNG writer. They are in C, not Swift, so that the
// compiler can vectorise them with `restrict` pointers: the same loops in Swift ran scalar
// (about 6 instructions a pixel instead of under 1), and debug builds would be 20x slower.
// No allocation, no state: callers own every buffer.

#include <stddef.h>
#include <stdint.h>

/// One vertical box-blur pass of 2 * radius + 1 rows (radius at most 128) over a width x height
/// 8-bit mask, rows packed. Outside the mask counts as zero. `sums` is scratch for `width` values.
void innerpeace_box_vertical(const uint8_t *source, uint8_t *target, uint16_t *sums, int width, int height,
                             int radius);

/// 2 x 2 box downscale to (width + 1) / 2 x (height + 1) / 2; odd edges repeat the last pixel.
void innerpeace_halve(const uint8_t *source, uint8_t *target, int width, int height);

/// Bilinear 2x upscale (pixel centres aligned) of a small_width x small_height mask to width x height.
/// `blend` is scratch for `small_width` values.
void innerpeace_double(const uint8_t *source, int small_width, int small_height, uint8_t *target, int width,
                       int height, uint16_t *blend);

/// The alpha bytes of a Cairo ARGB32 surface (B G R A in memory), rows packed into target.
void innerpeace_extract_alpha(const uint8_t *source, size_t stride, uint8_t *target, int width, int height);

/// target[i] = max(target[i], source[i]) for i < count (byte maxima; the halo's contrast check
/// grows the text's coverage with it).
void innerpeace_max_bytes(uint8_t *target, const uint8_t *source, size_t count);

/// target (height x width) = transpose of source (width x height), both rows packed.
void innerpeace_transpose(const uint8_t *source, uint8_t *target, int width, int height);

/// Stacks a shadow layer onto another as Cairo paints one over another:
/// accumulated = 1 - (1 - accumulated)(1 - layer), in 8-bit.
void innerpeace_stack(uint8_t *accumulated, const uint8_t *layer, size_t count);

/// Converts one row of Cairo pixels (B G R X, or premultiplied B G R A) to packed RGB, or to
/// straight RGBA when `alpha` is non-zero.
void innerpeace_unpack_row(const uint8_t *source, uint8_t *target, int width, int alpha);

/// PNG Up filter: target[0] = 2, target[1 + i] = current[i] - previous[i].
void innerpeace_png_up(const uint8_t *current, const uint8_t *previous, uint8_t *target, size_t count);

/// glibc's mallopt(M_MMAP_THRESHOLD) and mallopt(M_ARENA_MAX): Swift's Glibc module does not
/// export <malloc.h>. No-ops elsewhere. Returns 1 when both were applied.
int innerpeace_set_malloc_policy(int mmap_threshold, int maximum_arenas);

/// Asks Linux to back the whole 2 MiB-aligned stretches of [start, start + count) with huge pages
/// (transparent huge pages, "madvise" mode): a buffer about to be written whole then takes one
/// page fault per 2 MiB instead of 512. Advice only: nothing else changes, and it does nothing
/// where it is not available or the buffer holds no aligned stretch.
void innerpeace_advise_huge_pages(void *start, size_t count);

#endif
