#include "innerpeace_kernels.h"

#if defined(__linux__)
#include <stdint.h>
#include <sys/mman.h>
#endif

void innerpeace_advise_huge_pages(void *start, size_t count) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t first = ((uintptr_t)start + huge - 1) & ~(huge - 1);
  uintptr_t end = ((uintptr_t)start + count) & ~(huge - 1);
  if (start != NULL && end > first) {
    (void)madvise((void *)first, end - first, MADV_HUGEPAGE);
  }
#else
  (void)start;
  (void)count;
#endif
}
