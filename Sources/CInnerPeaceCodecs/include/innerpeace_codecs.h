#ifndef INNERPEACE_CODECS_H
#define INNERPEACE_CODECS_H

// Photo decoding that needs C: libpng reports errors by longjmp, which Swift cannot catch, and
// the per-pixel loops (box averaging, CMYK conversion, EXIF rotation) must stay fast in debug
// builds. No state: callers own every buffer. Output pixels are Cairo's: 4 bytes a pixel,
// B G R A in memory (premultiplied; A is 0xFF for opaque images), rows packed.

#include <stddef.h>
#include <stdint.h>

/// A colour transform to sRGB (LittleCMS 2), made from a photo's embedded colour profile or its
/// PNG gAMA/cHRM chunks; opaque, owned by the caller (innerpeace_colour_free).
typedef struct innerpeace_colour innerpeace_colour;

/// How the image's colours are encoded (its colour model, matched against the profile's).
typedef enum {
  INNERPEACE_COLOUR_RGB = 0,
  /// Grey: the pixels are expanded to R = G = B before the transform.
  INNERPEACE_COLOUR_GREY = 1,
  /// C M Y K ink amounts (0 = no ink).
  INNERPEACE_COLOUR_CMYK = 2,
  /// C M Y K stored as 255 - ink (Adobe's APP14 files).
  INNERPEACE_COLOUR_CMYK_INVERTED = 3,
} innerpeace_colour_model;

/// The pixel layout a transform works on, in place, 4 bytes a pixel.
typedef enum {
  /// R G B A (not premultiplied); A is kept. CMYK models are not allowed here.
  INNERPEACE_LAYOUT_RGBA = 0,
  /// B G R X in (C M Y K for CMYK models), B G R 0xFF out.
  INNERPEACE_LAYOUT_BGRX = 1,
} innerpeace_pixel_layout;

/// A transform from an ICC profile (`size` bytes, read by LittleCMS) to sRGB, or NULL when the
/// profile cannot be used: unreadable or damaged, not for the image's colour model, not a device
/// or colour-space profile, or no transform can be made of it. Also NULL when the profile is
/// sRGB itself (a matrix/TRC profile with sRGB's colorants and tone curves, within half a code
/// value), so that such photos cost nothing extra. Never reads past `size` bytes.
innerpeace_colour *innerpeace_colour_from_icc(const uint8_t *profile, size_t size, innerpeace_colour_model model,
                                              innerpeace_pixel_layout layout);

/// A transform from PNG gAMA/cHRM values to sRGB, or NULL when they are invalid. `gamma` is the
/// gAMA value (the encoding exponent, 0.45455 for 1/2.2), or 0 for none (sRGB's tone curve);
/// `chromaticities` the cHRM values (white x y, red x y, green x y, blue x y), or NULL for sRGB's.
innerpeace_colour *innerpeace_colour_from_gamma(double gamma, const double *chromaticities,
                                                innerpeace_colour_model model, innerpeace_pixel_layout layout);

/// Converts `count` pixels to sRGB in place, in the transform's layout.
void innerpeace_colour_apply(const innerpeace_colour *colour, uint8_t *pixels, size_t count);

void innerpeace_colour_free(innerpeace_colour *colour);

/// Decodes the part of a baseline JPEG that a card shows: rows [y, y + height) and columns
/// [x, x + width) of the image scaled by scale_num / scale_denom (libjpeg's DCT scaling), as
/// B G R X into their place in `target`, a buffer of the whole scaled image (`target_stride`
/// bytes a row, at least `scaled_width * 4`), with the settings of TurboJPEG's tjDecompress2
/// (islow IDCT, fancy upsampling): the same bytes as those rows and columns of its decode of the
/// whole image (also where libjpeg's scaled inverse DCTs run in AVX-512, see below). Only the part's rows are written, and in them only the part's columns and up to
/// an iMCU and 16 pixels on each side (which are not the whole decode's pixels). libjpeg's crop
/// (jpeg_crop_scanline, its columns widened by 16 pixels on each side: the upsampler treats a
/// crop's edges as the image's) and skip (jpeg_skip_scanlines) leave out the rest's inverse DCT,
/// upsampling and colour conversion; the entropy-coded data is still read to its end, so that
/// damage anywhere in it is noticed. Returns 0; or 1, with libjpeg's reason in `message`, when it
/// did not decode the part cleanly (any error or warning, a progressive or arithmetic-coded or
/// CMYK/YCCK file, a scaled size other than `scaled_width` x `scaled_height`, a part outside it):
/// the caller then decodes the whole image as before, whose outcome (pixels or error) is
/// unchanged.
int innerpeace_jpeg_decode_part(const uint8_t *data, size_t size, unsigned scale_num, unsigned scale_denom,
                                uint32_t scaled_width, uint32_t scaled_height, uint32_t x, uint32_t y,
                                uint32_t width, uint32_t height, uint8_t *target, size_t target_stride,
                                char *message, size_t message_size);

/// Whether innerpeace_jpeg_decode_part runs its own AVX-512 forms of libjpeg-turbo's scaled
/// inverse DCTs (5x5 to 14x14, which libjpeg runs in plain C at 5/8, 6/8 and 7/8 of a photo's
/// size) in place of libjpeg's: 1 where the processor has AVX-512 F, BW, DQ and VL, else 0. They
/// give the same bytes as libjpeg's for every input.
int innerpeace_jpeg_vector_idct_available(void);

/// Runs `blocks` random coefficient blocks (from `seed`; photo-like values, the whole range of
/// the coefficients and of the quantization table, the extremes, blocks of only a DC, and empty
/// ones) through each of libjpeg's six scaled inverse DCTs and its AVX-512 form, at an output
/// column of 0 to 63 in rows filled with a random byte, and compares the whole rows. Returns the
/// number of blocks whose rows differ; -1 when the AVX-512 forms are not available (see above)
/// or libjpeg failed to start.
long innerpeace_jpeg_vector_idct_mismatches(uint64_t seed, long blocks);

/// Whether any of the six AVX-512 inverse DCTs writes other bytes than libjpeg's for one block:
/// `coefficients` (zigzag-free, row by row) dequantized by `table` (as libjpeg keeps it, 16-bit
/// signed), at output column `column` % 64; with a copy of libjpeg's range-limit table (which the
/// check above compares with libjpeg's own). 1 if they differ, 0 if not, -1 when the AVX-512
/// forms are not available. For the fuzz target.
int innerpeace_jpeg_vector_idct_differs(const int16_t coefficients[64], const int16_t table[64], unsigned column);

/// Decodes an 8-bit RGB or RGBA PNG exactly as stored (straight alpha, no colour conversion) with
/// libpng's reader, into `output` (`width * height * channels` bytes, rows packed), for checking
/// an encoder's output pixel by pixel. Returns 0, or -1 when libpng refuses the file (or its size
/// or channel count is not the one given) with libpng's reason in `message`.
int innerpeace_png_decode_exact(const uint8_t *data, size_t size, uint32_t width, uint32_t height,
                                uint32_t channels, uint8_t *output, char *message, size_t message_capacity);

/// Decodes PNG bytes, averaging each `factor` x `factor` box of source pixels into one output
/// pixel as the rows stream in, so the full-size image is never held (interlaced images keep one
/// 16-bit or 32-bit sum per output channel instead). Palette, grey, 1 to 16 bits, alpha and
/// Adam7 interlacing are read; 16-bit samples are rounded to 8 bits. With factor 1 the pixels
/// are byte for byte what cairo_image_surface_create_from_png gives.
///
/// `output` holds `output_width * output_height * 4` bytes, where output_width is
/// ceil(width / factor) and output_height ceil(height / factor) of the PNG's size; a PNG of
/// another size, wider or taller than `maximum_side`, truncated, or with a bad CRC in a critical
/// chunk is refused. `colour`, if not NULL (an RGBA-layout transform), converts each row to sRGB
/// before it is premultiplied and averaged. Returns 0, or -1 with a one-line reason in `message`.
int innerpeace_png_decode(const uint8_t *data, size_t size, uint32_t factor, uint32_t maximum_side,
                          const innerpeace_colour *colour, uint8_t *output, uint32_t output_width,
                          uint32_t output_height, char *message, size_t message_size);

/// Converts `count` CMYK pixels (C M Y K bytes, as libjpeg decodes them) to B G R 0xFF in place.
/// `inverted`: the file was written by Adobe software (an APP14 "Adobe" marker), which stores
/// 255 - ink; otherwise the bytes are ink amounts.
void innerpeace_cmyk_to_bgrx(uint8_t *pixels, size_t count, int inverted);

/// Applies an EXIF orientation (1 to 8) to a width x height image of 4-byte pixels: source is
/// the image as stored, target the image as it is meant to be seen (height x width for 5 to 8).
void innerpeace_orient(const uint32_t *source, uint32_t width, uint32_t height, int orientation, uint32_t *target);

#endif
