#ifndef INNERPEACE_FUZZING_H
#define INNERPEACE_FUZZING_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry for programs that have their own main (LLVM 11 and later). Defined only
// when the program is linked with -sanitize=fuzzer, so it is called only in FUZZING builds.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
