// The declaration in include/fuzzing.h is all this target provides; SwiftPM wants a source file.
#include "fuzzing.h"
