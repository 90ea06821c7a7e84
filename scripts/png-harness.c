/*
 * The PNG encoder's harness (issue 21): sizes against libpng's default and CPU time per preset, on
 * the cards' own pixels, outside the Swift package (not one of its targets).
 *
 * The cards: every catalog photo at every preset, the bench's quote 63, written once by a release
 * build (any PNG decodes to the same pixels; the harness reads them through Cairo):
 *
 *   mkdir -p /tmp/cards && for p in aqua blinds dune fresh-flower garden green-meadow lady-bird \
 *       rain-drops two-wings yellow-flower; do for s in og classic square story; do \
 *     .build/release/innerpeace render --out /tmp/cards/$p-$s.png --preset $s --quote 63 \
 *       --picture $p.jpg --seed 1; done; done
 *
 * Build (from the repository; OLD= another png_encoder.c, e.g. `git show main:<path> > /tmp/old.c`,
 * compiled with its two functions renamed, is timed alternately with this one in one process):
 *
 *   K=Sources/CInnerPeaceKernels; OLD=/tmp/old.c
 *   clang -O2 -march=x86-64 -I$K/include -c $OLD -o /tmp/old.o \
 *     -Dinnerpeace_png_encode=old_png_encode -Dinnerpeace_png_bound=old_png_bound
 *   clang -O2 -march=x86-64 -DHAVE_OLD -I$K/include scripts/png-harness.c $K/png_encoder.c $K/kernels.c \
 *     /tmp/old.o -o /tmp/png-harness $(pkg-config --cflags --libs cairo) -ldeflate -lm
 *
 * (without OLD: leave out the first clang, -DHAVE_OLD and /tmp/old.o). Add
 * `-g -fsanitize=address,undefined -fno-sanitize-recover=all` to both for the sanitizer run.
 *
 * Usage: /tmp/png-harness [-n RUNS] [-t THREADS] [-c] [-v] CARD.png...
 *   -n RUNS     encodes of each card, each timed (CPU time of the process, CLOCK_PROCESS_CPUTIME_ID,
 *               and wall time, CLOCK_MONOTONIC); the medians are kept (11)
 *   -t THREADS  also encode on THREADS threads, alternating with one thread in the same process
 *   -c          check every card: the four loop paths and 2, 3, 8 and THREADS threads give the
 *               same bytes, and libpng decodes the file to the card's pixels (exit status 1 otherwise);
 *               with OLD, also counts the cards whose file is byte for byte the old encoder's
 *   -v          one line per card, besides the summary
 * A card's preset is the end of its file name (aqua-og.png: og). Prints, per preset: the largest
 * and the median size / libpng's (Cairo's cairo_surface_write_to_png, zlib level 6) and the median
 * over the cards of each card's median CPU ms and wall ms; with -t, the same on THREADS threads;
 * with OLD, the same for the old encoder (on one thread).
 * Build with `-fsanitize=thread` (and -g) instead for the thread sanitizer's run.
 *
 */

#include <cairo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "innerpeace_png.h"

#if defined(HAVE_OLD)
size_t old_png_bound(int width, int height, int alpha);
// The current signature; an encoder from before `threads` (bcce15b) ignores the last argument.
size_t old_png_encode(const uint8_t *pixels, size_t stride, int width, int height, int alpha, uint8_t *output,
                      size_t capacity, int kernels, int threads);
#endif

enum { max_cards = 256, max_runs = 201, encoders = 3 };

typedef struct {
  const uint8_t *data;
  size_t length, offset;
} reader;

static cairo_status_t count_bytes(void *closure, const unsigned char *data, unsigned int length) {
  (void)data;
  *(size_t *)closure += length;
  return CAIRO_STATUS_SUCCESS;
}

static cairo_status_t read_bytes(void *closure, unsigned char *data, unsigned int length) {
  reader *r = closure;
  if (r->offset + length > r->length) return CAIRO_STATUS_READ_ERROR;
  memcpy(data, r->data + r->offset, length);
  r->offset += length;
  return CAIRO_STATUS_SUCCESS;
}

static double seconds(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *values, int count) {
  qsort(values, (size_t)count, sizeof *values, compare_doubles);
  return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

/// Whether `png` decodes (libpng, through Cairo) to the pixels of `surface`.
static int same_pixels(cairo_surface_t *surface, const uint8_t *png, size_t length) {
  reader r = {png, length, 0};
  cairo_surface_t *decoded = cairo_image_surface_create_from_png_stream(read_bytes, &r);
  int same = cairo_surface_status(decoded) == CAIRO_STATUS_SUCCESS;
  const int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
  const int alpha = cairo_image_surface_get_format(surface) == CAIRO_FORMAT_ARGB32;
  if (same && (cairo_image_surface_get_width(decoded) != width || cairo_image_surface_get_height(decoded) != height)) {
    same = 0;
  }
  const uint8_t *a = cairo_image_surface_get_data(surface), *b = same ? cairo_image_surface_get_data(decoded) : NULL;
  const int sa = cairo_image_surface_get_stride(surface), sb = same ? cairo_image_surface_get_stride(decoded) : 0;
  for (int y = 0; same && y < height; y++) {
    for (int x = 0; x < width; x++) {
      uint32_t p, q;
      memcpy(&p, a + (size_t)y * sa + 4 * (size_t)x, 4);
      memcpy(&q, b + (size_t)y * sb + 4 * (size_t)x, 4);
      if (!alpha) p &= 0xFFFFFF, q &= 0xFFFFFF;
      if (p != q) {
        same = 0;
        break;
      }
    }
  }
  cairo_surface_destroy(decoded);
  return same;
}

typedef struct {
  char preset[32];
  double ratio[encoders], ms[encoders], wall[encoders];
} card_result;

int main(int argc, char **argv) {
  int runs = 11, threads = 0, check = 0, verbose = 0, first = 1;
  for (; first < argc && argv[first][0] == '-'; first++) {
    if (!strcmp(argv[first], "-n") && first + 1 < argc) {
      runs = atoi(argv[++first]);
    } else if (!strcmp(argv[first], "-t") && first + 1 < argc) {
      threads = atoi(argv[++first]);
    } else if (!strcmp(argv[first], "-c")) {
      check = 1;
    } else if (!strcmp(argv[first], "-v")) {
      verbose = 1;
    } else {
      fprintf(stderr, "usage: %s [-n RUNS] [-t THREADS] [-c] [-v] CARD.png...\n", argv[0]);
      return 2;
    }
  }
  if (runs < 1 || runs > max_runs || argc - first > max_cards) {
    fprintf(stderr, "at most %d runs and %d cards\n", max_runs, max_cards);
    return 2;
  }
  // The encoders timed: this one on one thread, on `threads` threads with -t, the old one.
  int encoder_count = 0, thread_counts[encoders], old_encoder = -1;
  const char *names[encoders];
  char threaded_name[32];
  names[encoder_count] = "";
  thread_counts[encoder_count++] = 1;
  if (threads > 0) {
    snprintf(threaded_name, sizeof threaded_name, "t%d ", threads);
    names[encoder_count] = threaded_name;
    thread_counts[encoder_count++] = threads;
  }
#if defined(HAVE_OLD)
  names[encoder_count] = "old ";
  thread_counts[encoder_count] = 1;
  old_encoder = encoder_count++;
#endif
  static card_result results[max_cards];
  int cards = 0, failures = 0, same_as_old = 0;
  for (int a = first; a < argc; a++) {
    cairo_surface_t *surface = cairo_image_surface_create_from_png(argv[a]);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
      fprintf(stderr, "%s: not read\n", argv[a]);
      return 2;
    }
    cairo_surface_flush(surface);
    const int width = cairo_image_surface_get_width(surface), height = cairo_image_surface_get_height(surface);
    const size_t stride = (size_t)cairo_image_surface_get_stride(surface);
    const int alpha = cairo_image_surface_get_format(surface) == CAIRO_FORMAT_ARGB32;
    const uint8_t *pixels = cairo_image_surface_get_data(surface);
    size_t libpng = 0;
    cairo_surface_write_to_png_stream(surface, count_bytes, &libpng);

    size_t capacity = innerpeace_png_bound(width, height, alpha);
#if defined(HAVE_OLD)
    if (old_png_bound(width, height, alpha) > capacity) capacity = old_png_bound(width, height, alpha);
#endif
    uint8_t *output = malloc(capacity);
    double times[encoders][max_runs], walls[encoders][max_runs];
    size_t lengths[encoders] = {0};
    for (int r = 0; r < runs; r++) {
      for (int e = 0; e < encoder_count; e++) {
        const double start = seconds(CLOCK_PROCESS_CPUTIME_ID), wall_start = seconds(CLOCK_MONOTONIC);
#if defined(HAVE_OLD)
        if (e == old_encoder) {
          lengths[e] = old_png_encode(pixels, stride, width, height, alpha, output, capacity, 0, 1);
        } else
#endif
          lengths[e] =
              innerpeace_png_encode(pixels, stride, width, height, alpha, output, capacity, 0, thread_counts[e]);
        walls[e][r] = seconds(CLOCK_MONOTONIC) - wall_start;
        times[e][r] = seconds(CLOCK_PROCESS_CPUTIME_ID) - start;
      }
    }
    card_result *result = &results[cards++];
    const char *dash = strrchr(argv[a], '-'), *dot = strrchr(argv[a], '.');
    const size_t name = dash && dot && dot > dash ? (size_t)(dot - dash - 1) : 0;
    snprintf(result->preset, sizeof result->preset, "%.*s", (int)(name < 31 ? name : 31), name ? dash + 1 : "all");
    for (int e = 0; e < encoder_count; e++) {
      result->ratio[e] = (double)lengths[e] / (double)libpng;
      result->ms[e] = median(times[e], runs) * 1e3;
      result->wall[e] = median(walls[e], runs) * 1e3;
    }
    int ok = 1;
    if (check) {
      const size_t length = innerpeace_png_encode(pixels, stride, width, height, alpha, output, capacity, 0, 1);
      uint8_t *other = malloc(capacity);
      for (int kernels = 1; kernels <= 3; kernels++) {
        const size_t other_length =
            innerpeace_png_encode(pixels, stride, width, height, alpha, other, capacity, kernels, 1);
        if (other_length != length || memcmp(other, output, length)) ok = 0;
      }
      const int other_threads[4] = {2, 3, 8, threads > 0 ? threads : 2};
      for (int t = 0; t < 4; t++) {
        for (int kernels = 0; kernels <= 2; kernels += 2) {
          const size_t other_length =
              innerpeace_png_encode(pixels, stride, width, height, alpha, other, capacity, kernels, other_threads[t]);
          if (other_length != length || memcmp(other, output, length)) ok = 0;
        }
      }
#if defined(HAVE_OLD)
      const size_t old_length = old_png_encode(pixels, stride, width, height, alpha, other, capacity, 0, 1);
      same_as_old += old_length == length && !memcmp(other, output, length);
#endif
      free(other);
      if (!length || !same_pixels(surface, output, length)) ok = 0;
      failures += !ok;
    }
    if (verbose || !ok) {
      printf("%-40s %7zu libpng", argv[a], libpng);
      for (int e = 0; e < encoder_count; e++) {
        printf("   %s%5.3f %7.2f ms cpu %7.2f ms wall", names[e], result->ratio[e], result->ms[e], result->wall[e]);
      }
      printf("%s\n", check ? (ok ? "  ok" : "  BAD") : "");
    }
    free(output);
    cairo_surface_destroy(surface);
  }

  printf("%-8s %5s", "preset", "cards");
  for (int e = 0; e < encoder_count; e++) {
    char heads[4][32];
    snprintf(heads[0], 32, "%smax/png", names[e]);
    snprintf(heads[1], 32, "%smed/png", names[e]);
    snprintf(heads[2], 32, "%scpu ms", names[e]);
    snprintf(heads[3], 32, "%swall ms", names[e]);
    printf("%s %11s %11s %11s %11s", e ? " |" : "", heads[0], heads[1], heads[2], heads[3]);
  }
  if (old_encoder >= 0) printf(" %7s", "speed");
  printf("\n");
  static const char *const order[] = {"og", "classic", "square", "story"};
  char seen[max_cards][32];
  int presets = 0;
  for (int k = 0; k < 4; k++) snprintf(seen[presets++], 32, "%s", order[k]);
  for (int c = 0; c < cards; c++) {
    int known = 0;
    for (int p = 0; p < presets; p++) known |= !strcmp(seen[p], results[c].preset);
    if (!known) snprintf(seen[presets++], 32, "%.31s", results[c].preset);
  }
  for (int p = 0; p < presets; p++) {
    double ratios[encoders][max_cards], ms[encoders][max_cards], walls[encoders][max_cards], largest[encoders] = {0};
    int n = 0;
    for (int c = 0; c < cards; c++) {
      if (strcmp(results[c].preset, seen[p])) continue;
      for (int e = 0; e < encoder_count; e++) {
        ratios[e][n] = results[c].ratio[e];
        ms[e][n] = results[c].ms[e];
        walls[e][n] = results[c].wall[e];
        if (results[c].ratio[e] > largest[e]) largest[e] = results[c].ratio[e];
      }
      n++;
    }
    if (!n) continue;
    double median_ms[encoders];
    printf("%-8s %5d", seen[p], n);
    for (int e = 0; e < encoder_count; e++) {
      median_ms[e] = median(ms[e], n);
      printf(e ? " | %11.4f %11.4f %11.3f %11.3f" : " %11.4f %11.4f %11.3f %11.3f", largest[e],
             median(ratios[e], n), median_ms[e], median(walls[e], n));
    }
    if (old_encoder >= 0) printf(" %6.2fx", median_ms[old_encoder] / median_ms[0]);
    printf("\n");
  }
  if (check) printf("check: %d of %d cards %s\n", cards - failures, cards, failures ? "pass, FAILURES" : "pass");
  if (check && old_encoder >= 0) printf("check: %d of %d cards are byte for byte the old encoder's\n", same_as_old, cards);
  return failures ? 1 : 0;
}
