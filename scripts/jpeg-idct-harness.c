/*
 * libjpeg's scaled inverse DCTs against their AVX-512 forms (jpeg_idct.c; issue 21, items 3 and
 * 4; not part of the package): the renderer's part decoder (innerpeace_jpeg_decode_part) asked
 * for the whole image at NUM/8, built twice, with the AVX-512 forms and without, the two decodes
 * alternated. Prints the median CPU ms of each (of RUNS) and whether the bytes are the same (exit
 * status 1 if not).
 *
 *   K=Sources/CInnerPeaceCodecs; O=/tmp/jpeg-idct; mkdir -p $O
 *   clang -O2 -I$K/include -I$K -c $K/codecs.c -o $O/vector.o
 *   clang -O2 -I$K/include -I$K -c $K/jpeg_idct.c -o $O/idct.o
 *   clang -O2 -I$K/include -I$K -Dinnerpeace_jpeg_vector_idct=library_idct_only -c $K/codecs.c -o $O/p.o
 *   objcopy --keep-global-symbol=innerpeace_jpeg_decode_part $O/p.o $O/p1.o
 *   objcopy --redefine-sym innerpeace_jpeg_decode_part=library_decode_part $O/p1.o $O/library.o
 *   clang -O2 scripts/jpeg-idct-harness.c $O/vector.o $O/idct.o $O/library.o -o $O/harness \
 *     -ljpeg -lpng16 -llcms2 -lm
 *   $O/harness Resources/aqua.jpg 6 21
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
// After stdio.h, which it needs.
#include <jpeglib.h>

int innerpeace_jpeg_decode_part(const uint8_t *data, size_t size, unsigned scale_num, unsigned scale_denom,
                                uint32_t scaled_width, uint32_t scaled_height, uint32_t x, uint32_t y,
                                uint32_t width, uint32_t height, uint8_t *target, size_t target_stride,
                                char *message, size_t message_size);
int library_decode_part(const uint8_t *data, size_t size, unsigned scale_num, unsigned scale_denom,
                        uint32_t scaled_width, uint32_t scaled_height, uint32_t x, uint32_t y, uint32_t width,
                        uint32_t height, uint8_t *target, size_t target_stride, char *message,
                        size_t message_size);

// The library build's stand-in for innerpeace_jpeg_vector_idct: libjpeg's own functions stay.
int library_idct_only(struct jpeg_decompress_struct *info) {
  (void)info;
  return 0;
}

enum { max_runs = 101 };

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PHOTO.jpg NUM RUNS\n", argv[0]);
    return 2;
  }
  FILE *file = fopen(argv[1], "rb");
  if (file == NULL) return 2;
  fseek(file, 0, SEEK_END);
  const size_t size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  uint8_t *data = malloc(size);
  if (data == NULL || fread(data, 1, size, file) != size) return 2;
  fclose(file);
  const int num = atoi(argv[2]);
  int runs = atoi(argv[3]);
  if (runs < 1) runs = 1;
  if (runs > max_runs) runs = max_runs;
  // The image's size, from its header.
  struct jpeg_decompress_struct info;
  struct jpeg_error_mgr errors;
  info.err = jpeg_std_error(&errors);
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, (unsigned long)size);
  jpeg_read_header(&info, TRUE);
  const uint32_t width = (info.image_width * (uint32_t)num + 7) / 8, height = (info.image_height * (uint32_t)num + 7) / 8;
  jpeg_destroy_decompress(&info);
  const size_t stride = (size_t)width * 4;
  uint8_t *theirs = malloc(stride * height), *ours = malloc(stride * height);
  double library_times[max_runs], vector_times[max_runs];
  char message[200];
  for (int run = 0; run < runs; run++) {
    double start = cpu_ms();
    if (library_decode_part(data, size, (unsigned)num, 8, width, height, 0, 0, width, height, theirs, stride, message,
                            sizeof message) != 0) {
      fprintf(stderr, "libjpeg: %s\n", message);
      return 2;
    }
    library_times[run] = cpu_ms() - start;
    start = cpu_ms();
    if (innerpeace_jpeg_decode_part(data, size, (unsigned)num, 8, width, height, 0, 0, width, height, ours, stride,
                                    message, sizeof message) != 0) {
      fprintf(stderr, "AVX-512: %s\n", message);
      return 2;
    }
    vector_times[run] = cpu_ms() - start;
  }
  qsort(library_times, (size_t)runs, sizeof(double), by_value);
  qsort(vector_times, (size_t)runs, sizeof(double), by_value);
  const int same = memcmp(theirs, ours, stride * height) == 0;
  printf("%s at %d/8 (%ux%u): libjpeg's inverse DCTs %.2f ms, AVX-512 %.2f ms (%.2fx), %s bytes\n", argv[1], num,
         width, height, library_times[runs / 2], vector_times[runs / 2],
         library_times[runs / 2] / vector_times[runs / 2], same ? "the same" : "OTHER");
  return same ? 0 : 1;
}
