/*
 * Two builds of jpeg_idct.c (the AVX-512 scaled inverse DCTs; issue 21, not part of the package)
 * on a photo's own blocks: every block of every component of FILE through each of the six sizes,
 * the two builds alternated ROUNDS times; prints the median CPU ms of each and whether every
 * seventh block's output is the same from both (exit status 1 if not). For the change of one
 * kernel; against libjpeg itself, see jpeg-idct-harness.c and PhotoPartTests.
 *
 *   K=Sources/CInnerPeaceCodecs; O=/tmp/jpeg-idct-blocks; mkdir -p $O
 *   git show OLD:$K/jpeg_idct.c > $O/old_idct.c
 *   clang -O2 -I$K/include -I$K -Dinnerpeace_jpeg_idct_pairs=old_pairs -Dinnerpeace_jpeg_vector_idct=old_vector_idct \
 *     -Dinnerpeace_jpeg_vector_idct_available=old_available -c $O/old_idct.c -o $O/old.o
 *   clang -O2 -I$K/include -I$K -c $K/jpeg_idct.c -o $O/new.o
 *   clang -O2 -I$K scripts/jpeg-idct-blocks.c $O/old.o $O/new.o -o $O/blocks -ljpeg
 *   $O/blocks Resources/aqua.jpg 21
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "jpeg_idct.h"

extern const jpeg_idct_pair old_pairs[jpeg_idct_pair_count];

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s FILE.jpg ROUNDS\n", argv[0]);
    return 2;
  }
  const int rounds = atoi(argv[2]);
  if (rounds < 1 || rounds > 101) return 2;
  FILE *file = fopen(argv[1], "rb");
  if (!file) return 2;
  struct jpeg_decompress_struct info;
  struct jpeg_error_mgr errors;
  info.err = jpeg_std_error(&errors);
  jpeg_create_decompress(&info);
  jpeg_stdio_src(&info, file);
  jpeg_read_header(&info, TRUE);
  jvirt_barray_ptr *coefficients = jpeg_read_coefficients(&info);
  // Every block, with its component's quantization table as libjpeg's ISLOW dct_table (shorts).
  size_t total = 0;
  for (int c = 0; c < info.num_components; c++)
    total += (size_t)info.comp_info[c].height_in_blocks * info.comp_info[c].width_in_blocks;
  JCOEF *blocks = malloc(total * 64 * sizeof(JCOEF));
  int *component = malloc(total * sizeof(int));
  static short tables[MAX_COMPONENTS][64];
  jpeg_component_info components[MAX_COMPONENTS];
  size_t count = 0;
  for (int c = 0; c < info.num_components && c < MAX_COMPONENTS; c++) {
    jpeg_component_info *source = &info.comp_info[c];
    components[c] = *source;
    for (int k = 0; k < 64; k++) tables[c][k] = (short)source->quant_table->quantval[k];
    components[c].dct_table = tables[c];
    for (JDIMENSION row = 0; row < source->height_in_blocks; row++) {
      JBLOCKARRAY line = (*info.mem->access_virt_barray)((j_common_ptr)&info, coefficients[c], row, 1, FALSE);
      for (JDIMENSION b = 0; b < source->width_in_blocks; b++) {
        memcpy(blocks + 64 * count, line[0][b], 64 * sizeof(JCOEF));
        component[count++] = c;
      }
    }
  }
  static JSAMPLE samples[2][16][32];
  JSAMPROW rows[2][16];
  for (int r = 0; r < 16; r++) {
    rows[0][r] = samples[0][r];
    rows[1][r] = samples[1][r];
  }
  static const char *names[jpeg_idct_pair_count] = {"5x5", "6x6", "7x7", "10x10", "12x12", "14x14"};
  int differ = 0;
  for (int k = 0; k < jpeg_idct_pair_count; k++) {
    double times[2][101];
    for (int round = 0; round < rounds; round++) {
      for (int which = 0; which < 2; which++) {
        const jpeg_idct_function idct = which ? innerpeace_jpeg_idct_pairs[k].vector : old_pairs[k].vector;
        const double start = cpu_ms();
        for (size_t i = 0; i < count; i++) idct(&info, &components[component[i]], blocks + 64 * i, rows[which], 0);
        times[which][round] = cpu_ms() - start;
      }
    }
    long differing = 0;
    for (size_t i = 0; i < count; i += 7) {
      old_pairs[k].vector(&info, &components[component[i]], blocks + 64 * i, rows[0], 0);
      innerpeace_jpeg_idct_pairs[k].vector(&info, &components[component[i]], blocks + 64 * i, rows[1], 0);
      if (memcmp(samples[0], samples[1], sizeof samples[0])) differing++;
    }
    qsort(times[0], rounds, sizeof(double), compare);
    qsort(times[1], rounds, sizeof(double), compare);
    const double before = times[0][rounds / 2], after = times[1][rounds / 2];
    printf("%-6s %zu blocks: before %.3f ms (%.1f ns a block), after %.3f ms (%.1f ns), %.2fx, %s\n", names[k], count,
           before, before * 1e6 / count, after, after * 1e6 / count, before / after,
           differing ? "DIFFERENT bytes" : "the same bytes");
    differ |= differing != 0;
  }
  jpeg_abort_decompress(&info);
  jpeg_destroy_decompress(&info);
  fclose(file);
  return differ;
}
