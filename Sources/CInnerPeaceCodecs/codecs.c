#include "innerpeace_codecs.h"

#include <lcms2.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
// After stdio.h, which it needs (FILE, size_t).
#include <jpeglib.h>

#include "jpeg_idct.h"

// MARK: Colour management

struct innerpeace_colour {
  cmsHTRANSFORM transform;  // NULL for a grey image: the table below does it
  innerpeace_pixel_layout layout;
  int cmyk;
  uint8_t grey[256][3];  // a grey image's sRGB R G B for each grey level
};

static const cmsFloat64Number srgb_curve_parameters[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};

// Whether a matrix/TRC RGB profile is sRGB: its colorants within 0.002 of sRGB's and its tone
// curves within half a code value of sRGB's at every 8-bit level.
static int is_srgb(cmsHPROFILE profile, cmsHPROFILE srgb) {
  if (!cmsIsMatrixShaper(profile)) return 0;
  static const cmsTagSignature colorants[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
  static const cmsTagSignature curves[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
  for (int channel = 0; channel < 3; channel++) {
    const cmsCIEXYZ *mine = cmsReadTag(profile, colorants[channel]);
    const cmsCIEXYZ *theirs = cmsReadTag(srgb, colorants[channel]);
    if (mine == NULL || theirs == NULL) return 0;
    if (fabs(mine->X - theirs->X) > 0.002 || fabs(mine->Y - theirs->Y) > 0.002 || fabs(mine->Z - theirs->Z) > 0.002)
      return 0;
    const cmsToneCurve *curve = cmsReadTag(profile, curves[channel]);
    const cmsToneCurve *reference = cmsReadTag(srgb, curves[channel]);
    if (curve == NULL || reference == NULL) return 0;
    for (int level = 0; level < 256; level++) {
      cmsFloat32Number v = (cmsFloat32Number)level / 255.0f;
      if (fabsf(cmsEvalToneCurveFloat(curve, v) - cmsEvalToneCurveFloat(reference, v)) > 0.5f / 255.0f) return 0;
    }
  }
  return 1;
}

// A transform from `source` (which it does not take) to sRGB, for the model and layout.
static innerpeace_colour *make_colour(cmsHPROFILE source, innerpeace_colour_model model,
                                      innerpeace_pixel_layout layout) {
  int cmyk = model == INNERPEACE_COLOUR_CMYK || model == INNERPEACE_COLOUR_CMYK_INVERTED;
  if (cmyk && layout != INNERPEACE_LAYOUT_BGRX) return NULL;
  cmsColorSpaceSignature wanted = cmyk ? cmsSigCmykData : model == INNERPEACE_COLOUR_GREY ? cmsSigGrayData : cmsSigRgbData;
  if (cmsGetColorSpace(source) != wanted) return NULL;
  switch (cmsGetDeviceClass(source)) {
    case cmsSigInputClass:
    case cmsSigDisplayClass:
    case cmsSigOutputClass:
    case cmsSigColorSpaceClass:
      break;
    default:
      return NULL;  // device links, abstract and named-colour profiles describe no image
  }
  cmsHPROFILE srgb = cmsCreate_sRGBProfile();
  if (srgb == NULL) return NULL;
  innerpeace_colour *colour = NULL;
  if (model == INNERPEACE_COLOUR_RGB && is_srgb(source, srgb)) goto done;
  colour = calloc(1, sizeof *colour);
  if (colour == NULL) goto done;
  colour->layout = layout;
  colour->cmyk = cmyk;
  if (model == INNERPEACE_COLOUR_GREY) {
    // 256 levels: a table is exact and faster than any transform.
    cmsHTRANSFORM transform = cmsCreateTransform(source, TYPE_GRAY_8, srgb, TYPE_RGB_8, INTENT_PERCEPTUAL, 0);
    if (transform == NULL) {
      free(colour);
      colour = NULL;
      goto done;
    }
    uint8_t levels[256];
    for (int level = 0; level < 256; level++) levels[level] = (uint8_t)level;
    cmsDoTransform(transform, levels, colour->grey, 256);
    cmsDeleteTransform(transform);
    goto done;
  }
  cmsUInt32Number input = model == INNERPEACE_COLOUR_CMYK            ? TYPE_CMYK_8
                          : model == INNERPEACE_COLOUR_CMYK_INVERTED ? TYPE_CMYK_8_REV
                          : layout == INNERPEACE_LAYOUT_RGBA         ? TYPE_RGBA_8
                                                                     : TYPE_BGRA_8;
  cmsUInt32Number output = layout == INNERPEACE_LAYOUT_RGBA ? TYPE_RGBA_8 : TYPE_BGRA_8;
  // Not cmsFLAGS_COPY_ALPHA: the transform runs in place and leaves the fourth byte alone.
  colour->transform = cmsCreateTransform(source, input, srgb, output, INTENT_PERCEPTUAL, 0);
  if (colour->transform == NULL) {
    free(colour);
    colour = NULL;
  }
done:
  cmsCloseProfile(srgb);
  return colour;
}

innerpeace_colour *innerpeace_colour_from_icc(const uint8_t *profile, size_t size, innerpeace_colour_model model,
                                              innerpeace_pixel_layout layout) {
  // The ICC header alone is 128 bytes; LittleCMS checks the rest (tag table, tag sizes).
  if (profile == NULL || size < 132 || size > UINT32_MAX) return NULL;
  cmsHPROFILE source = cmsOpenProfileFromMem(profile, (cmsUInt32Number)size);
  if (source == NULL) return NULL;
  innerpeace_colour *colour = make_colour(source, model, layout);
  cmsCloseProfile(source);
  return colour;
}

innerpeace_colour *innerpeace_colour_from_gamma(double gamma, const double *chromaticities,
                                                innerpeace_colour_model model, innerpeace_pixel_layout layout) {
  if (model != INNERPEACE_COLOUR_RGB && model != INNERPEACE_COLOUR_GREY) return NULL;
  if (gamma != 0 && !(gamma >= 0.05 && gamma <= 5)) return NULL;
  cmsToneCurve *curve = gamma != 0 ? cmsBuildGamma(NULL, 1.0 / gamma)
                                   : cmsBuildParametricToneCurve(NULL, 4, srgb_curve_parameters);
  if (curve == NULL) return NULL;
  cmsHPROFILE source = NULL;
  if (model == INNERPEACE_COLOUR_GREY) {
    source = cmsCreateGrayProfile(cmsD50_xyY(), curve);
  } else {
    cmsCIExyY white = {0.3127, 0.3290, 1.0};
    cmsCIExyYTRIPLE primaries = {{0.64, 0.33, 1.0}, {0.30, 0.60, 1.0}, {0.15, 0.06, 1.0}};
    if (chromaticities != NULL) {
      for (int index = 0; index < 8; index++) {
        if (!(chromaticities[index] > 0 && chromaticities[index] <= 1)) {
          cmsFreeToneCurve(curve);
          return NULL;
        }
      }
      white = (cmsCIExyY){chromaticities[0], chromaticities[1], 1.0};
      primaries = (cmsCIExyYTRIPLE){{chromaticities[2], chromaticities[3], 1.0},
                                    {chromaticities[4], chromaticities[5], 1.0},
                                    {chromaticities[6], chromaticities[7], 1.0}};
    }
    cmsToneCurve *curves[3] = {curve, curve, curve};
    // NULL for primaries that span no space (a singular matrix).
    source = cmsCreateRGBProfile(&white, &primaries, curves);
  }
  cmsFreeToneCurve(curve);
  if (source == NULL) return NULL;
  innerpeace_colour *colour = make_colour(source, model, layout);
  cmsCloseProfile(source);
  return colour;
}

void innerpeace_colour_apply(const innerpeace_colour *colour, uint8_t *pixels, size_t count) {
  if (colour->transform == NULL) {
    // Grey: R = G = B, so G is the level, in either layout.
    for (size_t index = 0; index < count; index++) {
      uint8_t *p = pixels + index * 4;
      const uint8_t *rgb = colour->grey[p[1]];
      if (colour->layout == INNERPEACE_LAYOUT_RGBA) {
        p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
      } else {
        p[0] = rgb[2], p[1] = rgb[1], p[2] = rgb[0];
      }
    }
    return;
  }
  // In place: LittleCMS reads each pixel before it writes it, and both sides are 4 bytes a pixel.
  // In slices, since its pixel count is 32-bit.
  while (count > 0) {
    cmsUInt32Number slice = count > (1u << 24) ? (1u << 24) : (cmsUInt32Number)count;
    cmsDoTransform(colour->transform, pixels, pixels, slice);
    if (colour->cmyk) {
      for (cmsUInt32Number index = 0; index < slice; index++) pixels[(size_t)index * 4 + 3] = 0xFF;
    }
    pixels += (size_t)slice * 4;
    count -= slice;
  }
}

void innerpeace_colour_free(innerpeace_colour *colour) {
  if (colour == NULL) return;
  if (colour->transform != NULL) cmsDeleteTransform(colour->transform);
  free(colour);
}

// MARK: PNG

typedef struct {
  const uint8_t *data;
  size_t size;
  size_t offset;
  char *message;
  size_t message_size;
} png_source;

static void set_message(char *message, size_t message_size, const char *text) {
  if (message != NULL && message_size > 0) snprintf(message, message_size, "%s", text);
}

static void on_png_error(png_structp png, png_const_charp text) {
  png_source *source = (png_source *)png_get_error_ptr(png);
  set_message(source->message, source->message_size, text != NULL ? text : "invalid PNG data");
  png_longjmp(png, 1);
}

// Warnings (a bad CRC in an ancillary chunk, an odd colour profile) do not spoil the pixels.
static void on_png_warning(png_structp png, png_const_charp text) {
  (void)png;
  (void)text;
}

static void on_png_read(png_structp png, png_bytep target, size_t length) {
  png_source *source = (png_source *)png_get_io_ptr(png);
  if (length > source->size - source->offset) png_error(png, "PNG data is truncated");
  memcpy(target, source->data + source->offset, length);
  source->offset += length;
}

// Cairo's rounding (cairo-png.c), so factor 1 gives its bytes exactly.
static inline uint8_t multiply_alpha(unsigned alpha, unsigned colour) {
  unsigned temp = alpha * colour + 0x80;
  return (uint8_t)((temp + (temp >> 8)) >> 8);
}

// One R G B A pixel as Cairo keeps it: premultiplied, B G R A in memory.
static inline void premultiply(const uint8_t *rgba, uint8_t *bgra) {
  unsigned alpha = rgba[3];
  if (alpha == 0) {
    bgra[0] = bgra[1] = bgra[2] = bgra[3] = 0;
  } else if (alpha == 0xFF) {
    bgra[0] = rgba[2];
    bgra[1] = rgba[1];
    bgra[2] = rgba[0];
    bgra[3] = 0xFF;
  } else {
    bgra[0] = multiply_alpha(alpha, rgba[2]);
    bgra[1] = multiply_alpha(alpha, rgba[1]);
    bgra[2] = multiply_alpha(alpha, rgba[0]);
    bgra[3] = (uint8_t)alpha;
  }
}

static inline uint32_t box_side(uint32_t index, uint32_t factor, uint32_t size) {
  uint32_t start = index * factor;
  return size - start < factor ? size - start : factor;
}

// Adds one premultiplied pixel to a box's four sums, 16-bit (factor at most 16) or 32-bit.
static inline void accumulate(void *sums, int wide, size_t index, const uint8_t *bgra) {
  if (wide) {
    uint32_t *sum = (uint32_t *)sums + index * 4;
    sum[0] += bgra[0], sum[1] += bgra[1], sum[2] += bgra[2], sum[3] += bgra[3];
  } else {
    uint16_t *sum = (uint16_t *)sums + index * 4;
    sum[0] = (uint16_t)(sum[0] + bgra[0]), sum[1] = (uint16_t)(sum[1] + bgra[1]);
    sum[2] = (uint16_t)(sum[2] + bgra[2]), sum[3] = (uint16_t)(sum[3] + bgra[3]);
  }
}

static inline void average(const void *sums, int wide, size_t index, uint32_t count, uint8_t *target) {
  for (int channel = 0; channel < 4; channel++) {
    uint32_t sum = wide ? ((const uint32_t *)sums)[index * 4 + channel] : ((const uint16_t *)sums)[index * 4 + channel];
    target[channel] = (uint8_t)((sum + count / 2) / count);
  }
}

int innerpeace_png_decode(const uint8_t *data, size_t size, uint32_t factor, uint32_t maximum_side,
                          const innerpeace_colour *colour, uint8_t *output, uint32_t output_width,
                          uint32_t output_height, char *message, size_t message_size) {
  set_message(message, message_size, "");
  if (factor == 0 || maximum_side == 0) {
    set_message(message, message_size, "invalid PNG decoding request");
    return -1;
  }
  png_source source = {data, size, 0, message, message_size};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, on_png_error, on_png_warning);
  if (png == NULL) {
    set_message(message, message_size, "libpng could not start");
    return -1;
  }
  png_infop info = png_create_info_struct(png);
  if (info == NULL) {
    png_destroy_read_struct(&png, NULL, NULL);
    set_message(message, message_size, "libpng could not start");
    return -1;
  }
  uint8_t *volatile row = NULL;
  void *volatile sums = NULL;
  if (setjmp(png_jmpbuf(png))) {
    free(row);
    free(sums);
    png_destroy_read_struct(&png, &info, NULL);
    return -1;
  }
  // Refuse before allocating: sides beyond the limit, and ancillary chunks (text, colour
  // profiles) that would inflate past 8 MiB.
  png_set_user_limits(png, maximum_side, maximum_side);
  png_set_chunk_malloc_max(png, (png_alloc_size_t)8 << 20);
  png_set_chunk_cache_max(png, 1000);
  png_set_read_fn(png, &source, on_png_read);
  png_read_info(png, info);

  png_uint_32 width = 0, height = 0;
  int depth = 0, colour_type = 0, interlace = 0;
  png_get_IHDR(png, info, &width, &height, &depth, &colour_type, &interlace, NULL, NULL);
  if (((uint64_t)width + factor - 1) / factor != output_width ||
      ((uint64_t)height + factor - 1) / factor != output_height)
    png_error(png, "PNG size differs from the size it was checked at");

  // The transforms cairo_image_surface_create_from_png asks for, to 8-bit R G B A.
  if (colour_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (colour_type == PNG_COLOR_TYPE_GRAY) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_strip_16(png);
  if (depth < 8) png_set_packing(png);
  if (colour_type == PNG_COLOR_TYPE_GRAY || colour_type == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_filler(png, 0xFF, PNG_FILLER_AFTER);
  // No png_set_interlace_handling: an interlaced image arrives as its seven passes, each pixel
  // once, and goes straight to its box.
  png_read_update_info(png, info);
  if (png_get_rowbytes(png, info) != (size_t)width * 4) png_error(png, "unexpected PNG row layout");

  row = malloc((size_t)width * 4);
  if (row == NULL) png_error(png, "out of memory");
  uint8_t pixel[4];

  if (interlace == PNG_INTERLACE_NONE && factor == 1) {
    for (png_uint_32 y = 0; y < height; y++) {
      png_read_row(png, row, NULL);
      if (colour != NULL) innerpeace_colour_apply(colour, row, width);
      uint8_t *target = output + (size_t)y * width * 4;
      for (png_uint_32 x = 0; x < width; x++) premultiply(row + (size_t)x * 4, target + (size_t)x * 4);
    }
  } else if (interlace == PNG_INTERLACE_NONE) {
    // One row of boxes at a time.
    sums = calloc((size_t)output_width * 4, sizeof(uint32_t));
    if (sums == NULL) png_error(png, "out of memory");
    for (png_uint_32 y = 0; y < height; y++) {
      png_read_row(png, row, NULL);
      if (colour != NULL) innerpeace_colour_apply(colour, row, width);
      for (png_uint_32 x = 0; x < width; x++) {
        premultiply(row + (size_t)x * 4, pixel);
        accumulate(sums, 1, x / factor, pixel);
      }
      if ((y + 1) % factor == 0 || y + 1 == height) {
        uint32_t box_y = y / factor;
        uint32_t rows = box_side(box_y, factor, height);
        uint8_t *target = output + (size_t)box_y * output_width * 4;
        for (uint32_t box_x = 0; box_x < output_width; box_x++)
          average(sums, 1, box_x, rows * box_side(box_x, factor, width), target + (size_t)box_x * 4);
        memset(sums, 0, (size_t)output_width * 4 * sizeof(uint32_t));
      }
    }
  } else {
    // Adam7: the same pass order libpng reads, skipping the passes it skips (no rows or columns).
    int wide = factor > 16;
    if (factor > 1) {
      sums = calloc((size_t)output_width * output_height * 4, wide ? sizeof(uint32_t) : sizeof(uint16_t));
      if (sums == NULL) png_error(png, "out of memory");
    }
    for (int pass = 0; pass < 7; pass++) {
      png_uint_32 columns = PNG_PASS_COLS(width, pass);
      png_uint_32 rows = PNG_PASS_ROWS(height, pass);
      if (columns == 0 || rows == 0) continue;
      for (png_uint_32 pass_row = 0; pass_row < rows; pass_row++) {
        png_read_row(png, row, NULL);
        if (colour != NULL) innerpeace_colour_apply(colour, row, columns);
        png_uint_32 y = PNG_ROW_FROM_PASS_ROW(pass_row, pass);
        for (png_uint_32 column = 0; column < columns; column++) {
          png_uint_32 x = PNG_COL_FROM_PASS_COL(column, pass);
          if (factor == 1) {
            premultiply(row + (size_t)column * 4, output + ((size_t)y * width + x) * 4);
          } else {
            premultiply(row + (size_t)column * 4, pixel);
            accumulate(sums, wide, (size_t)(y / factor) * output_width + x / factor, pixel);
          }
        }
      }
    }
    if (factor > 1) {
      for (uint32_t box_y = 0; box_y < output_height; box_y++) {
        uint32_t rows = box_side(box_y, factor, height);
        for (uint32_t box_x = 0; box_x < output_width; box_x++) {
          size_t index = (size_t)box_y * output_width + box_x;
          average(sums, wide, index, rows * box_side(box_x, factor, width), output + index * 4);
        }
      }
    }
  }
  // The rest of the file, to IEND: a cut or damaged tail is an error here too.
  png_read_end(png, NULL);
  free(row);
  free(sums);
  png_destroy_read_struct(&png, &info, NULL);
  return 0;
}

// MARK: JPEG colour

void innerpeace_cmyk_to_bgrx(uint8_t *pixels, size_t count, int inverted) {
  for (size_t index = 0; index < count; index++) {
    uint8_t *p = pixels + index * 4;
    // How much of each colour is left: 255 - ink. Adobe's files store exactly that.
    unsigned c = p[0], m = p[1], y = p[2], k = p[3];
    if (!inverted) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
    p[0] = (uint8_t)((y * k + 127) / 255);
    p[1] = (uint8_t)((m * k + 127) / 255);
    p[2] = (uint8_t)((c * k + 127) / 255);
    p[3] = 0xFF;
  }
}

// MARK: EXIF orientation

void innerpeace_orient(const uint32_t *source, uint32_t width, uint32_t height, int orientation, uint32_t *target) {
  // The target is height x width for 5 to 8 (the sides swap), width x height otherwise.
  uint32_t target_width = orientation >= 5 ? height : width;
  uint32_t target_height = orientation >= 5 ? width : height;
  for (uint32_t y = 0; y < target_height; y++) {
    uint32_t *line = target + (size_t)y * target_width;
    for (uint32_t x = 0; x < target_width; x++) {
      uint32_t sx, sy;
      switch (orientation) {
        case 2: sx = width - 1 - x, sy = y; break;                // mirrored
        case 3: sx = width - 1 - x, sy = height - 1 - y; break;   // upside down
        case 4: sx = x, sy = height - 1 - y; break;               // flipped
        case 5: sx = y, sy = x; break;                            // transposed
        case 6: sx = y, sy = height - 1 - x; break;               // turned a quarter clockwise
        case 7: sx = width - 1 - y, sy = height - 1 - x; break;   // transversed
        case 8: sx = width - 1 - y, sy = x; break;                // turned a quarter anticlockwise
        default: sx = x, sy = y; break;
      }
      line[x] = source[(size_t)sy * width + sx];
    }
  }
}

int innerpeace_png_decode_exact(const uint8_t *data, size_t size, uint32_t width, uint32_t height,
                                uint32_t channels, uint8_t *output, char *message, size_t message_capacity) {
  png_image image;
  memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, data, size)) {
    snprintf(message, message_capacity, "%s", image.message);
    return -1;
  }
  const uint32_t stored_channels = PNG_IMAGE_SAMPLE_CHANNELS(image.format);
  if (image.width != width || image.height != height || stored_channels != channels ||
      PNG_IMAGE_SAMPLE_COMPONENT_SIZE(image.format) != 1) {
    snprintf(message, message_capacity, "a %ux%u image of %u channels, not %ux%u of %u", image.width,
             image.height, stored_channels, width, height, channels);
    png_image_free(&image);
    return -1;
  }
  image.format = channels == 4 ? PNG_FORMAT_RGBA : PNG_FORMAT_RGB;
  if (!png_image_finish_read(&image, NULL, output, 0, NULL)) {
    snprintf(message, message_capacity, "%s", image.message);
    png_image_free(&image);
    return -1;
  }
  return 0;
}

// MARK: The part of a JPEG a card shows

typedef struct {
  struct jpeg_error_mgr manager;  // first: libjpeg's callbacks get a pointer to it
  jmp_buf jump;
  char *message;
  size_t message_size;
} jpeg_failure;

static void on_jpeg_failure(j_common_ptr info) {
  jpeg_failure *failure = (jpeg_failure *)info->err;
  char text[JMSG_LENGTH_MAX];
  (*info->err->format_message)(info, text);
  set_message(failure->message, failure->message_size, text);
  longjmp(failure->jump, 1);
}

// Any warning (level -1; trace messages are higher) ends the part's decode too: the caller's own
// decode decides what a warning means for the pixels.
static void on_jpeg_message(j_common_ptr info, int level) {
  if (level < 0) on_jpeg_failure(info);
}

// The columns added on each side of a crop, in scaled pixels: more than an iMCU's upsampling
// context at any scaling.
enum { jpeg_crop_margin = 16, jpeg_batch_rows = 16 };

// TurboJPEG's limit (TJFLAG_LIMITSCANS, which the whole decode sets): a file of more scans is
// refused, so that many small scans cannot make a small file cost the CPU of a large one.
enum { jpeg_maximum_scans = 500 };

static void on_jpeg_progress(j_common_ptr info) {
  if (info->is_decompressor && ((j_decompress_ptr)info)->input_scan_number > jpeg_maximum_scans) {
    jpeg_failure *failure = (jpeg_failure *)info->err;
    set_message(failure->message, failure->message_size, "the JPEG image has more than 500 scans");
    longjmp(failure->jump, 1);
  }
}

int innerpeace_jpeg_decode_part(const uint8_t *data, size_t size, unsigned scale_num, unsigned scale_denom,
                                uint32_t scaled_width, uint32_t scaled_height, uint32_t x, uint32_t y,
                                uint32_t width, uint32_t height, uint8_t *target, size_t target_stride,
                                char *message, size_t message_size) {
  if (width == 0 || height == 0 || x > scaled_width || width > scaled_width - x || y > scaled_height ||
      height > scaled_height - y || size > (size_t)0x7FFFFFFF) {
    set_message(message, message_size, "the part is outside the image");
    return 1;
  }
  struct jpeg_decompress_struct info;
  jpeg_failure failure = {.message = message, .message_size = message_size};
  // volatile: set between setjmp and a longjmp back to it.
  uint8_t *volatile rows = NULL;
  info.err = jpeg_std_error(&failure.manager);
  failure.manager.error_exit = on_jpeg_failure;
  failure.manager.emit_message = on_jpeg_message;
  if (setjmp(failure.jump)) {
    jpeg_destroy_decompress(&info);
    free(rows);
    return 1;
  }
  jpeg_create_decompress(&info);
  struct jpeg_progress_mgr progress = {.progress_monitor = on_jpeg_progress};
  info.progress = &progress;
  jpeg_mem_src(&info, data, (unsigned long)size);
  jpeg_read_header(&info, TRUE);
  if (info.progressive_mode || info.arith_code ||
      (info.jpeg_color_space != JCS_YCbCr && info.jpeg_color_space != JCS_GRAYSCALE &&
       info.jpeg_color_space != JCS_RGB)) {
    set_message(message, message_size, "not a baseline Huffman-coded grey, RGB or YCbCr JPEG");
    jpeg_destroy_decompress(&info);
    return 1;
  }
  info.scale_num = scale_num;
  info.scale_denom = scale_denom;
  info.out_color_space = JCS_EXT_BGRX;
  jpeg_start_decompress(&info);
  if (info.output_width != scaled_width || info.output_height != scaled_height) {
    set_message(message, message_size, "the scaled size is not the one expected");
    jpeg_destroy_decompress(&info);
    return 1;
  }
  // The crop may widen further, to whole iMCUs: `first` and `span` are the decoded columns,
  // written straight into their place in the whole image's rows.
  JDIMENSION first = x > jpeg_crop_margin ? x - jpeg_crop_margin : 0;
  const uint32_t end = width + x + jpeg_crop_margin < scaled_width ? x + width + jpeg_crop_margin : scaled_width;
  JDIMENSION span = end - first;
  if (first > 0 || span < scaled_width) jpeg_crop_scanline(&info, &first, &span);
  // At 5/8, 6/8 and 7/8, libjpeg's inverse DCTs in plain C are most of the decode's CPU.
  innerpeace_jpeg_vector_idct(&info);
  // One row for the last of the image, below the part (read so that the whole stream is).
  rows = malloc((size_t)span * 4);
  if (rows == NULL) {
    set_message(message, message_size, "out of memory");
    jpeg_destroy_decompress(&info);
    return 1;
  }
  if (y > 0) jpeg_skip_scanlines(&info, y);
  uint32_t done = 0;
  while (done < height) {
    JSAMPROW pointers[jpeg_batch_rows];
    const uint32_t batch = height - done < jpeg_batch_rows ? height - done : jpeg_batch_rows;
    for (uint32_t k = 0; k < batch; k++) pointers[k] = target + (size_t)(y + done + k) * target_stride + (size_t)first * 4;
    JDIMENSION read = 0;
    while (read < batch) {
      const JDIMENSION rows_read = jpeg_read_scanlines(&info, pointers + read, batch - read);
      // Never with a memory source (a short stream is a warning, which ends the decode above);
      // but a loop that reads nothing must not spin.
      if (rows_read == 0) longjmp(failure.jump, 1);
      read += rows_read;
    }
    done += batch;
  }
  // The rest is read, its coefficients decoded and dropped, so that damage below the part fails
  // here as it fails the whole decode. (A skip to the very end reads nothing: libjpeg then just
  // stops. So all but the last row are skipped, and the last is decoded.)
  if (info.output_height - info.output_scanline > 1) {
    jpeg_skip_scanlines(&info, info.output_height - info.output_scanline - 1);
  }
  while (info.output_scanline < info.output_height) {
    JSAMPROW last = rows;
    if (jpeg_read_scanlines(&info, &last, 1) == 0) longjmp(failure.jump, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  free(rows);
  return 0;
}

// MARK: The AVX-512 inverse DCTs against libjpeg's

// A xorshift generator, so that the blocks depend on the seed alone.
static uint64_t next_random(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

static int random_between(uint64_t *state, int low, int high) {
  return low + (int)(next_random(state) % (uint64_t)(high - low + 1));
}

// A block of coefficients and its dequantization table (libjpeg-turbo's ISLOW_MULT_TYPE, a short)
// of the kind `kind` (0 to 8).
static void random_block(uint64_t *state, int kind, JCOEF block[64], short table[64]) {
  static const short extremes[] = {-32768, 32767, -32767, 32766, -1, 0, 1, 2, -2, 16384, -16384, 255, 256};
  enum { extreme_count = sizeof extremes / sizeof extremes[0] };
  for (int i = 0; i < 64; i++) {
    switch (kind) {
      case 0: {  // a photo's: small values, fewer at high frequencies
        const int row = i / 8, column = i % 8, amplitude = 64 >> (row + column > 6 ? 6 : row + column);
        table[i] = (short)random_between(state, 1, 99);
        block[i] = next_random(state) % 3 == 0 ? (JCOEF)random_between(state, -amplitude, amplitude) : 0;
        break;
      }
      case 1:  // any coefficient, any table entry (a 16-bit one, as libjpeg keeps it: a short)
        table[i] = (short)(next_random(state) & 0xFFFF);
        block[i] = (JCOEF)(next_random(state) & 0xFFFF);
        break;
      case 2:  // any coefficient, an 8-bit table
        table[i] = (short)random_between(state, 1, 255);
        block[i] = (JCOEF)(next_random(state) & 0xFFFF);
        break;
      case 3:  // a DC alone
        table[i] = (short)(next_random(state) & 0xFFFF);
        block[i] = i == 0 ? (JCOEF)(next_random(state) & 0xFFFF) : 0;
        break;
      case 4:  // empty
        table[i] = (short)(next_random(state) & 0xFFFF);
        block[i] = 0;
        break;
      case 5:  // the extremes
        table[i] = extremes[next_random(state) % extreme_count];
        block[i] = extremes[next_random(state) % extreme_count];
        break;
      case 6:  // near the range limit's edges
        table[i] = (short)random_between(state, 1, 255);
        block[i] = i == 0 ? (JCOEF)random_between(state, -2048, 2047)
                          : next_random(state) & 1 ? (JCOEF)random_between(state, -64, 64) : 0;
        break;
      case 7:  // sparse, any value
        table[i] = (short)(next_random(state) & 0xFFFF);
        block[i] = next_random(state) % 8 == 0 ? (JCOEF)(next_random(state) & 0xFFFF) : 0;
        break;
      default:  // -32768 times -32768 (2^30), whose sums pass 2^31
        table[i] = next_random(state) & 1 ? -32768 : extremes[next_random(state) % extreme_count];
        block[i] = next_random(state) & 1 ? -32768 : extremes[next_random(state) % extreme_count];
        break;
    }
  }
}

// libjpeg's sample range-limit table (jdmaster.c, prepare_range_limit_table, 8-bit samples): 256
// zeros, 0 to 255, 384 times 255, 384 zeros, then 0 to 127; sample_range_limit points at its 257th
// byte, and the inverse DCTs read it from 128 bytes further at an index masked to 0..1023.
enum { range_limit_bytes = 5 * 256 + 128, range_limit_offset = 256 };

static void make_range_limit(JSAMPLE table[range_limit_bytes]) {
  memset(table, 0, range_limit_offset);
  for (int i = 0; i < 256; i++) table[range_limit_offset + i] = (JSAMPLE)i;
  memset(table + range_limit_offset + 256, 255, 384);
  memset(table + range_limit_offset + 640, 0, 384);
  for (int i = 0; i < 128; i++) table[range_limit_offset + 1024 + i] = (JSAMPLE)i;
}

// Whether any of the six AVX-512 inverse DCTs writes other rows than libjpeg's for `block`
// dequantized by `table`, at output column `column` (0 to 63) of rows filled with `fill`.
static int vector_idct_block_differs(struct jpeg_decompress_struct *reader, const JCOEF block[64],
                                     const short table[64], JDIMENSION column, int fill) {
  enum { row_bytes = 80 };
  JSAMPLE theirs[16][row_bytes], ours[16][row_bytes];
  JSAMPROW their_rows[16], our_rows[16];
  for (int r = 0; r < 16; r++) {
    their_rows[r] = theirs[r];
    our_rows[r] = ours[r];
  }
  jpeg_component_info component;
  memset(&component, 0, sizeof component);
  component.dct_table = (void *)table;
  for (int k = 0; k < jpeg_idct_pair_count; k++) {
    memset(theirs, fill, sizeof theirs);
    memset(ours, fill, sizeof ours);
    // Neither changes the block (libjpeg's JCOEFPTR is not const).
    innerpeace_jpeg_idct_pairs[k].library(reader, &component, (JCOEFPTR)block, their_rows, column % 64);
    innerpeace_jpeg_idct_pairs[k].vector(reader, &component, (JCOEFPTR)block, our_rows, column % 64);
    if (memcmp(theirs, ours, sizeof theirs) != 0) return 1;
  }
  return 0;
}

int innerpeace_jpeg_vector_idct_differs(const int16_t coefficients[64], const int16_t table[64], unsigned column) {
  if (!innerpeace_jpeg_vector_idct_available()) return -1;
  // The inverse DCTs read nothing of the decompressor but its range-limit table.
  JSAMPLE range_limit[range_limit_bytes];
  make_range_limit(range_limit);
  struct jpeg_decompress_struct reader;
  memset(&reader, 0, sizeof reader);
  reader.sample_range_limit = range_limit + range_limit_offset;
  return vector_idct_block_differs(&reader, coefficients, table, column, 0x5A);
}

long innerpeace_jpeg_vector_idct_mismatches(uint64_t seed, long blocks) {
  if (!innerpeace_jpeg_vector_idct_available()) return -1;
  // A decompressor of a small JPEG made here gives libjpeg's own range-limit table, which its
  // inverse DCTs read.
  struct jpeg_compress_struct writer;
  struct jpeg_decompress_struct reader;
  jpeg_failure failure = {.message = NULL, .message_size = 0};
  unsigned char *volatile file = NULL;
  volatile int stage = 0;  // 1: the writer exists; 2: the reader too
  writer.err = jpeg_std_error(&failure.manager);
  reader.err = &failure.manager;
  failure.manager.error_exit = on_jpeg_failure;
  failure.manager.emit_message = on_jpeg_message;
  if (setjmp(failure.jump)) {
    if (stage >= 1) jpeg_destroy_compress(&writer);
    if (stage >= 2) jpeg_destroy_decompress(&reader);
    free(file);
    return -1;
  }
  jpeg_create_compress(&writer);
  stage = 1;
  unsigned char *written = NULL;
  unsigned long written_size = 0;
  jpeg_mem_dest(&writer, &written, &written_size);
  writer.image_width = 16;
  writer.image_height = 16;
  writer.input_components = 3;
  writer.in_color_space = JCS_RGB;
  jpeg_set_defaults(&writer);
  jpeg_start_compress(&writer, TRUE);
  JSAMPLE grey_row[16 * 3];
  memset(grey_row, 0x55, sizeof grey_row);
  while (writer.next_scanline < 16) {
    JSAMPROW row = grey_row;
    jpeg_write_scanlines(&writer, &row, 1);
  }
  jpeg_finish_compress(&writer);
  file = written;
  jpeg_create_decompress(&reader);
  stage = 2;
  jpeg_mem_src(&reader, file, written_size);
  jpeg_read_header(&reader, TRUE);
  jpeg_start_decompress(&reader);

  // The fuzz target's replica of the range-limit table is libjpeg's (a difference counts as one).
  JSAMPLE replica[range_limit_bytes];
  make_range_limit(replica);
  long differing = memcmp(replica, reader.sample_range_limit - range_limit_offset, range_limit_bytes) != 0;
  uint64_t state = seed | 1;
  JCOEF block[64];
  short table[64];
  for (long b = 0; b < blocks; b++) {
    random_block(&state, (int)(b % 9), block, table);
    const JDIMENSION column = (JDIMENSION)(next_random(&state) % 64);
    differing += vector_idct_block_differs(&reader, block, table, column, (int)(next_random(&state) & 0xFF));
  }
  jpeg_abort_decompress(&reader);
  jpeg_destroy_decompress(&reader);
  jpeg_destroy_compress(&writer);
  free(file);
  return differing;
}
