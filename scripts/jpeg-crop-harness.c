/*
 * The measurement behind the renderer's decode of a photo's part (issue 21, item 4; not part of
 * the package): does decoding only the part of a photo that a card's crop shows give the same
 * pixels there as the whole decode (tjDecompress2 of the whole DCT-scaled image), and how much
 * CPU does it save?
 *
 * The partial decode uses libjpeg's own API with the defaults TurboJPEG uses (islow IDCT, fancy
 * upsampling, B G R X out): jpeg_crop_scanline for the columns (widened by MARGIN pixels on each
 * side: the upsampler treats the crop's own edges as the image's, so the columns next to them
 * differ), jpeg_skip_scanlines for the rows above and below the crop (the stream is still read
 * to its end, as the renderer's innerpeace_jpeg_decode_part reads it). It compares the rows and
 * columns asked for, byte for byte, with the whole decode's.
 *
 *   clang -O2 scripts/jpeg-crop-harness.c -o /tmp/jpeg-crop-harness -ljpeg -lturbojpeg
 *   /tmp/jpeg-crop-harness PHOTO.jpg NUM DENOM FIRST_ROW ROWS RUNS [FIRST_COLUMN COLUMNS MARGIN]
 *
 * NUM/DENOM is the DCT scaling (1/2, 5/8, ...); ROWS 0 means to the last row. Prints whether the
 * bytes are the same (exit status 1 if not) and the median CPU ms of each decode over RUNS
 * (process CPU time, the two decodes alternated). scripts/jpeg-crop-sweep.py runs it over the
 * catalog's photos at every preset, zoom and a few placements.
 */
// jpeglib.h needs stdio.h (size_t, FILE) before it.
#include <stdio.h>
#include <stdlib.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>

enum { max_runs = 101 };

typedef struct {
  struct jpeg_error_mgr manager;
  jmp_buf jump;
} error_jump;

static void leave(j_common_ptr info) {
  (*info->err->output_message)(info);
  longjmp(((error_jump *)info->err)->jump, 1);
}

static double cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int ascending(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/// Rows [first, first + count) of the scaled image, columns [column, column + columns) (all when
/// columns is 0), each written at its own place in a row of `width` pixels of `out`.
static int decode_part(const unsigned char *data, size_t size, int num, int denom, int first, int count,
                       int column, int columns, unsigned char *out, int width, unsigned char *row) {
  struct jpeg_decompress_struct info;
  error_jump error;
  info.err = jpeg_std_error(&error.manager);
  error.manager.error_exit = leave;
  if (setjmp(error.jump)) {
    jpeg_destroy_decompress(&info);
    return -1;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, data, (unsigned long)size);
  jpeg_read_header(&info, TRUE);
  info.scale_num = (unsigned)num;
  info.scale_denom = (unsigned)denom;
  info.out_color_space = JCS_EXT_BGRX;
  jpeg_start_decompress(&info);
  JDIMENSION x = 0, span = info.output_width;
  if (columns) {
    x = (JDIMENSION)column;
    span = x + (JDIMENSION)columns > info.output_width ? info.output_width - x : (JDIMENSION)columns;
    jpeg_crop_scanline(&info, &x, &span);  // widened to whole iMCUs
  }
  if (first) jpeg_skip_scanlines(&info, (JDIMENSION)first);
  // Straight into place, 16 rows a call, as the renderer's innerpeace_jpeg_decode_part.
  for (int y = 0; y < count;) {
    JSAMPROW rows[16];
    const int batch = count - y < 16 ? count - y : 16;
    for (int k = 0; k < batch; k++) rows[k] = out + ((size_t)(y + k) * (size_t)width + x) * 4;
    const int read = (int)jpeg_read_scanlines(&info, rows, (JDIMENSION)batch);
    if (read == 0) break;
    y += read;
  }
  // As the renderer's innerpeace_jpeg_decode_part: the rest of the stream is read too (a skip to
  // the very end reads nothing, so all but the last row are skipped and the last is decoded).
  if (info.output_height - info.output_scanline > 1) {
    jpeg_skip_scanlines(&info, info.output_height - info.output_scanline - 1);
  }
  while (info.output_scanline < info.output_height) {
    JSAMPROW rows[1] = {row};
    jpeg_read_scanlines(&info, rows, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 7 && argc != 10) {
    fprintf(stderr, "usage: %s PHOTO.jpg NUM DENOM FIRST_ROW ROWS RUNS [FIRST_COLUMN COLUMNS MARGIN]\n", argv[0]);
    return 2;
  }
  FILE *file = fopen(argv[1], "rb");
  if (!file) return 2;
  fseek(file, 0, SEEK_END);
  const size_t size = (size_t)ftell(file);
  fseek(file, 0, SEEK_SET);
  unsigned char *data = malloc(size);
  if (fread(data, 1, size, file) != size) return 2;
  fclose(file);
  const int num = atoi(argv[2]), denom = atoi(argv[3]), first = atoi(argv[4]);
  int count = atoi(argv[5]), runs = atoi(argv[6]);
  if (runs < 1) runs = 1;
  if (runs > max_runs) runs = max_runs;
  const int column = argc == 10 ? atoi(argv[7]) : 0, columns = argc == 10 ? atoi(argv[8]) : 0;
  const int margin = argc == 10 ? atoi(argv[9]) : 0;

  tjhandle handle = tjInitDecompress();
  int width, height, subsampling, colourspace;
  if (tjDecompressHeader3(handle, data, (unsigned long)size, &width, &height, &subsampling, &colourspace)) return 2;
  const tjscalingfactor factor = {num, denom};
  const int scaled_width = TJSCALED(width, factor), scaled_height = TJSCALED(height, factor);
  if (first < 0 || first >= scaled_height) return 2;
  if (count <= 0 || first + count > scaled_height) count = scaled_height - first;
  const int asked_column = columns ? column : 0;
  int asked_columns = columns ? columns : scaled_width;
  if (asked_column + asked_columns > scaled_width) asked_columns = scaled_width - asked_column;
  const int widened = columns ? (column - margin < 0 ? 0 : column - margin) : 0;
  const int widened_columns = columns ? columns + 2 * margin : 0;

  unsigned char *whole = malloc((size_t)scaled_width * (size_t)scaled_height * 4);
  unsigned char *part = calloc((size_t)scaled_width * (size_t)count * 4, 1);
  unsigned char *row = malloc((size_t)scaled_width * 4);
  double whole_times[max_runs], part_times[max_runs];
  int failed = 0;
  for (int r = 0; r < runs; r++) {
    const double t0 = cpu_seconds();
    if (tjDecompress2(handle, data, (unsigned long)size, whole, scaled_width, scaled_width * 4, scaled_height,
                      TJPF_BGRX, TJFLAG_LIMITSCANS | TJFLAG_STOPONWARNING))
      failed = 1;
    const double t1 = cpu_seconds();
    if (decode_part(data, size, num, denom, first, count, widened, widened_columns, part, scaled_width, row))
      failed = 1;
    whole_times[r] = t1 - t0;
    part_times[r] = cpu_seconds() - t1;
  }
  int differing = 0;
  for (int y = 0; y < count; y++) {
    differing += memcmp(whole + ((size_t)(first + y) * (size_t)scaled_width + (size_t)asked_column) * 4,
                        part + ((size_t)y * (size_t)scaled_width + (size_t)asked_column) * 4,
                        (size_t)asked_columns * 4) != 0;
  }
  qsort(whole_times, (size_t)runs, sizeof *whole_times, ascending);
  qsort(part_times, (size_t)runs, sizeof *part_times, ascending);
  const double whole_ms = whole_times[runs / 2] * 1e3, part_ms = part_times[runs / 2] * 1e3;
  printf("%s %d/%d %dx%d rows %d+%d columns %d+%d: %s (%d rows differ) whole %.2f ms part %.2f ms (%.2fx)\n",
         argv[1], num, denom, scaled_width, scaled_height, first, count, asked_column, asked_columns,
         failed ? "FAILED" : differing ? "DIFFERENT" : "same", differing, whole_ms, part_ms, whole_ms / part_ms);
  tjDestroy(handle);
  return failed || differing ? 1 : 0;
}
