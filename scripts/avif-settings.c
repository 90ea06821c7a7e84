// The sweep behind libavif's settings in Sources/InnerPeace/Graphics/ImageEncoding+AVIF.swift
// (BENCHMARKS.md, "Issue 20: AVIF"), and the comparison of the WebP encoders (BENCHMARKS.md, "Issue
// 21: a WebP encoder of our own"): encodes one PNG card with libavif, libwebp, libturbojpeg or the
// project's VP8 encoder and prints the median CPU time of the encode, the size, and PSNR (R, G, B)
// and SSIM (luma, 8x8 windows every 4 px) of the decoded result against the PNG. AVIF runs, and the
// project's encoder, check that every run gives the same bytes.
//
//   cc -O2 scripts/avif-settings.c Sources/CInnerPeaceKernels/webp_encoder.c
//      -I Sources/CInnerPeaceKernels/include -o /tmp/avif-settings -lavif -lpng -lwebp -lturbojpeg -lm
//      (one command)
//   innerpeace render --out og.png --preset og --seed 42
//   /tmp/avif-settings og.png RUNS webp QUALITY [METHOD [lean]]   (libwebp; METHOD 0 by default, as
//       the renderer's transparent cards; `lean`: sns_strength 0, filter_strength 0, one segment)
//   /tmp/avif-settings og.png RUNS ours QUALITY   (innerpeace_webp_encode, from Cairo's B G R X)
//   /tmp/avif-settings og.png RUNS jpeg QUALITY
//   /tmp/avif-settings og.png RUNS avif aom|rav1e|svt SPEED QUANTIZER 420|444 THREADS
#include <avif/avif.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>

#include "innerpeace_webp.h"

static double cpuMilliseconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compareDoubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double psnr(const unsigned char *a, const unsigned char *b, size_t count) {
  double sum = 0;
  for (size_t i = 0; i < count; i++) sum += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
  return 10 * log10(255.0 * 255.0 / (sum / count));
}

static double luma(const unsigned char *p) { return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]; }

static double ssim(const unsigned char *a, const unsigned char *b, int width, int height) {
  const double c1 = 6.5025, c2 = 58.5225;
  double total = 0;
  int windows = 0;
  for (int top = 0; top + 8 <= height; top += 4)
    for (int left = 0; left + 8 <= width; left += 4) {
      double ma = 0, mb = 0, sa = 0, sb = 0, ab = 0;
      for (int y = top; y < top + 8; y++)
        for (int x = left; x < left + 8; x++) {
          double la = luma(a + (y * width + x) * 3), lb = luma(b + (y * width + x) * 3);
          ma += la; mb += lb; sa += la * la; sb += lb * lb; ab += la * lb;
        }
      ma /= 64; mb /= 64;
      double va = sa / 64 - ma * ma, vb = sb / 64 - mb * mb, cov = ab / 64 - ma * mb;
      total += ((2 * ma * mb + c1) * (2 * cov + c2)) / ((ma * ma + mb * mb + c1) * (va + vb + c2));
      windows++;
    }
  return total / windows;
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: see the head of scripts/avif-settings.c\n"); return 2; }
  png_image png;
  memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&png, argv[1])) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
  png.format = PNG_FORMAT_RGB;
  unsigned char *rgb = malloc(PNG_IMAGE_SIZE(png));
  png_image_finish_read(&png, NULL, rgb, 0, NULL);
  int width = png.width, height = png.height, runs = atoi(argv[2]);
  if (runs < 1 || runs > 64) runs = 1;
  size_t count = (size_t)width * height * 3, size = 0;
  unsigned char *decoded = malloc(count);
  double times[64];
  const char *format = argv[3];
  int deterministic = 1;
  for (int run = 0; run < runs; run++) {
    if (!strcmp(format, "webp")) {
      WebPConfig config;
      WebPConfigInit(&config);
      config.quality = atoi(argv[4]);
      config.method = argc > 5 ? atoi(argv[5]) : 0;  // 0 as ImageEncoding.webpMethod
      if (argc > 6 && !strcmp(argv[6], "lean")) {
        config.sns_strength = 0;
        config.filter_strength = 0;
        config.segments = 1;
      }
      WebPPicture picture;
      WebPPictureInit(&picture);
      picture.width = width;
      picture.height = height;
      WebPMemoryWriter writer;
      WebPMemoryWriterInit(&writer);
      double start = cpuMilliseconds();
      WebPPictureImportRGB(&picture, rgb, width * 3);
      picture.writer = WebPMemoryWrite;
      picture.custom_ptr = &writer;
      WebPEncode(&config, &picture);
      times[run] = cpuMilliseconds() - start;
      size = writer.size;
      WebPDecodeRGBInto(writer.mem, writer.size, decoded, count, width * 3);
      WebPMemoryWriterClear(&writer);
      WebPPictureFree(&picture);
    } else if (!strcmp(format, "ours")) {
      // Cairo's B G R X, as the renderer hands it over (made outside the timing).
      static unsigned char *bgrx = NULL;
      if (bgrx == NULL) {
        bgrx = malloc((size_t)width * height * 4);
        for (size_t i = 0; i < (size_t)width * height; i++) {
          bgrx[4 * i] = rgb[3 * i + 2];
          bgrx[4 * i + 1] = rgb[3 * i + 1];
          bgrx[4 * i + 2] = rgb[3 * i];
          bgrx[4 * i + 3] = 255;
        }
      }
      unsigned char *output = NULL;
      double start = cpuMilliseconds();
      int result = innerpeace_webp_encode(bgrx, (size_t)width * 4, width, height, atoi(argv[4]), 1,
                                          INNERPEACE_WEBP_BEST, &output, &size, NULL);
      times[run] = cpuMilliseconds() - start;
      if (result != INNERPEACE_WEBP_OK) { fprintf(stderr, "innerpeace_webp_encode: %d\n", result); return 1; }
      static unsigned char *first = NULL;
      static size_t firstSize = 0;
      if (run == 0) {
        first = malloc(size);
        memcpy(first, output, size);
        firstSize = size;
      } else if (size != firstSize || memcmp(first, output, firstSize)) {
        deterministic = 0;
      }
      WebPDecodeRGBInto(output, size, decoded, count, width * 3);
      free(output);
    } else if (!strcmp(format, "jpeg")) {
      tjhandle handle = tjInitCompress();
      unsigned char *output = NULL;
      unsigned long length = 0;
      double start = cpuMilliseconds();
      tjCompress2(handle, rgb, width, width * 3, height, TJPF_RGB, &output, &length, TJSAMP_420, atoi(argv[4]), 0);
      times[run] = cpuMilliseconds() - start;
      size = length;
      tjhandle decoder = tjInitDecompress();
      tjDecompress2(decoder, output, length, decoded, width, width * 3, height, TJPF_RGB, 0);
      tjDestroy(decoder);
      tjFree(output);
      tjDestroy(handle);
    } else {
      if (argc < 9) { fprintf(stderr, "usage: see the head of scripts/avif-settings.c\n"); return 2; }
      const char *codec = argv[4];
      double start = cpuMilliseconds();
      avifImage *image = avifImageCreate(width, height, 8,
        atoi(argv[7]) == 444 ? AVIF_PIXEL_FORMAT_YUV444 : AVIF_PIXEL_FORMAT_YUV420);
      // As ImageEncoding+AVIF.swift: sRGB stated, BT.601 full range (libyuv's fast path).
      image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
      image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
      image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
      image->yuvRange = AVIF_RANGE_FULL;
      avifRGBImage pixels;
      avifRGBImageSetDefaults(&pixels, image);
      pixels.format = AVIF_RGB_FORMAT_RGB;
      pixels.pixels = rgb;
      pixels.rowBytes = width * 3;
      if (avifImageRGBToYUV(image, &pixels) != AVIF_RESULT_OK) { fprintf(stderr, "RGB to YUV failed\n"); return 1; }
      avifEncoder *encoder = avifEncoderCreate();
      encoder->codecChoice = !strcmp(codec, "aom") ? AVIF_CODEC_CHOICE_AOM
        : !strcmp(codec, "rav1e") ? AVIF_CODEC_CHOICE_RAV1E : AVIF_CODEC_CHOICE_SVT;
      encoder->speed = atoi(argv[5]);
      encoder->minQuantizer = encoder->maxQuantizer = atoi(argv[6]);
      encoder->maxThreads = atoi(argv[8]);
      avifRWData output = AVIF_DATA_EMPTY;
      avifResult result = avifEncoderWrite(encoder, image, &output);
      times[run] = cpuMilliseconds() - start;
      if (result != AVIF_RESULT_OK) { fprintf(stderr, "%s\n", avifResultToString(result)); return 1; }
      static unsigned char *first = NULL;
      static size_t firstSize = 0;
      if (run == 0) {
        first = malloc(output.size);
        memcpy(first, output.data, output.size);
        firstSize = output.size;
      } else if (output.size != firstSize || memcmp(first, output.data, firstSize)) {
        deterministic = 0;
      }
      size = output.size;
      avifDecoder *decoder = avifDecoderCreate();
      avifImage *back = avifImageCreateEmpty();
      avifDecoderReadMemory(decoder, back, output.data, output.size);
      avifRGBImageSetDefaults(&pixels, back);
      pixels.format = AVIF_RGB_FORMAT_RGB;
      pixels.pixels = decoded;
      pixels.rowBytes = width * 3;
      avifImageYUVToRGB(back, &pixels);
      avifImageDestroy(back);
      avifDecoderDestroy(decoder);
      avifRWDataFree(&output);
      avifEncoderDestroy(encoder);
      avifImageDestroy(image);
    }
  }
  qsort(times, runs, sizeof(double), compareDoubles);
  printf("%s %s: %.1f ms CPU (median of %d), %zu bytes, PSNR %.2f dB, SSIM %.4f%s\n", argv[1], format,
    times[runs / 2], runs, size, psnr(rgb, decoded, count), ssim(rgb, decoded, width, height),
    deterministic ? "" : ", NOT the same bytes every run");
  return 0;
}
