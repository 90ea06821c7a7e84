#ifndef INNERPEACE_JPEG_IDCT_H
#define INNERPEACE_JPEG_IDCT_H

// The AVX-512 forms of libjpeg-turbo's scaled inverse DCTs (jpeg_idct.c); private to this target.

#include <stdio.h>
// After stdio.h, which they need (FILE, size_t).
#include <jpeglib.h>
#include <jpegint.h>

typedef void (*jpeg_idct_function)(j_decompress_ptr, jpeg_component_info *, JCOEFPTR, JSAMPARRAY, JDIMENSION);

/// One of libjpeg's scaled inverse DCTs and its AVX-512 form (the same output for every input).
typedef struct {
  jpeg_idct_function library, vector;
} jpeg_idct_pair;

enum { jpeg_idct_pair_count = 6 };

/// The 5x5, 6x6, 7x7, 10x10, 12x12 and 14x14 pairs.
extern const jpeg_idct_pair innerpeace_jpeg_idct_pairs[jpeg_idct_pair_count];

/// Puts the AVX-512 forms in place of libjpeg's own for the components of `info`'s output pass
/// (after jpeg_start_decompress and jpeg_crop_scanline, before any row is read or skipped), where
/// the processor has AVX-512 F, BW, DQ and VL. Returns how many components it changed.
int innerpeace_jpeg_vector_idct(struct jpeg_decompress_struct *info);

#endif
