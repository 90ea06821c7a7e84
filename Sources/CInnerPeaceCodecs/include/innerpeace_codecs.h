#ifndef INNERPEACE_CODECS_H
#define INNERPEACE_CODECS_H

// Photo decoding that needs C: libpng reports errors by longjmp, which Swift cannot catch, and
// the per-pixel loops (box averaging, CMYK conversion, EXIF rotation) must stay fast in debug
// builds. No state: callers own every buffer. Output pixels are Cairo's: 4 bytes a pixel,
// B G R A in memory (premultiplied; A is 0xFF for opaque images), rows packed.

#include <stddef.h>
#include <stdint.h>

/// Decodes PNG bytes, averaging each `factor` x `factor` box of source pixels into one output
/// pixel as the rows stream in, so the full-size image is never held (interlaced images keep one
/// 16-bit or 32-bit sum per output channel instead). Palette, grey, 1 to 16 bits, alpha and
/// Adam7 interlacing are read; 16-bit samples are rounded to 8 bits. With factor 1 the pixels
/// are byte for byte what cairo_image_surface_create_from_png gives.
///
/// `output` holds `output_width * output_height * 4` bytes, where output_width is
/// ceil(width / factor) and output_height ceil(height / factor) of the PNG's size; a PNG of
/// another size, wider or taller than `maximum_side`, truncated, or with a bad CRC in a critical
/// chunk is refused. Returns 0, or -1 with a one-line reason in `message`.
int innerpeace_png_decode(const uint8_t *data, size_t size, uint32_t factor, uint32_t maximum_side,
                          uint8_t *output, uint32_t output_width, uint32_t output_height, char *message,
                          size_t message_size);

/// Converts `count` CMYK pixels (C M Y K bytes, as libjpeg decodes them) to B G R 0xFF in place.
/// `inverted`: the file was written by Adobe software (an APP14 "Adobe" marker), which stores
/// 255 - ink; otherwise the bytes are ink amounts.
void innerpeace_cmyk_to_bgrx(uint8_t *pixels, size_t count, int inverted);

/// Applies an EXIF orientation (1 to 8) to a width x height image of 4-byte pixels: source is
/// the image as stored, target the image as it is meant to be seen (height x width for 5 to 8).
void innerpeace_orient(const uint32_t *source, uint32_t width, uint32_t height, int orientation, uint32_t *target);

#endif
