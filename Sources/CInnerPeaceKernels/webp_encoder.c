#include "innerpeace_webp.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// The constants below are the VP8 format's (RFC 6386) and libwebp's encoder's (BSD licence,
// src/enc and src/dsp of libwebp 1.5): token probabilities, quantizer steps, the rounding of the
// transforms and of the quantizer, so that the bitstream decodes as libwebp's would.

// The whole-block prediction modes, numbered as the format's trees number them.
enum { mode_dc = 0, mode_tm = 1, mode_v = 2, mode_h = 3 };

enum { quantizer_fix = 17, maximum_level = 2047, maximum_partition0 = 1 << 19 };
enum { maximum_partition = 1 << 24, maximum_side = 16383, adaptive_limit = 16384 };

// VP8's quantizer index for each quality 0...100: libwebp's QualityToCompression (q = 127 x (1 -
// c^(1/3)), c linear in the quality in two pieces), precomputed.
static const uint8_t kQuantizerForQuality[101] = {
    127, 103, 96, 92, 89, 86, 83, 81, 79, 77, 75, 73, 72, 70, 69, 68, 66, 65, 64, 63, 62,
    61,  60,  59, 58, 57, 56, 55, 54, 53, 52, 51, 51, 50, 49, 48, 48, 47, 46, 45, 45, 44,
    43,  43,  42, 41, 41, 40, 40, 39, 38, 38, 37, 37, 36, 36, 35, 35, 34, 33, 33, 32, 32,
    31,  31,  30, 30, 29, 29, 28, 28, 28, 27, 27, 26, 26, 24, 23, 22, 21, 19, 18, 17, 16,
    15,  14,  13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1,  0,  0};

static const uint8_t kDcTable[128] = {
    4,   5,   6,   7,   8,   9,   10,  10,  11,  12,  13,  14,  15,  16,  17,  17,  18,  19,  20,
    20,  21,  21,  22,  22,  23,  23,  24,  25,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,
    35,  36,  37,  37,  38,  39,  40,  41,  42,  43,  44,  45,  46,  46,  47,  48,  49,  50,  51,
    52,  53,  54,  55,  56,  57,  58,  59,  60,  61,  62,  63,  64,  65,  66,  67,  68,  69,  70,
    71,  72,  73,  74,  75,  76,  76,  77,  78,  79,  80,  81,  82,  83,  84,  85,  86,  87,  88,
    89,  91,  93,  95,  96,  98,  100, 101, 102, 104, 106, 108, 110, 112, 114, 116, 118, 122, 124,
    126, 128, 130, 132, 134, 136, 138, 140, 143, 145, 148, 151, 154, 157};

static const uint16_t kAcTable[128] = {
    4,   5,   6,   7,   8,   9,   10,  11,  12,  13,  14,  15,  16,  17,  18,  19,  20,  21,  22,
    23,  24,  25,  26,  27,  28,  29,  30,  31,  32,  33,  34,  35,  36,  37,  38,  39,  40,  41,
    42,  43,  44,  45,  46,  47,  48,  49,  50,  51,  52,  53,  54,  55,  56,  57,  58,  60,  62,
    64,  66,  68,  70,  72,  74,  76,  78,  80,  82,  84,  86,  88,  90,  92,  94,  96,  98,  100,
    102, 104, 106, 108, 110, 112, 114, 116, 119, 122, 125, 128, 131, 134, 137, 140, 143, 146, 149,
    152, 155, 158, 161, 164, 167, 170, 173, 177, 181, 185, 189, 193, 197, 201, 205, 209, 213, 217,
    221, 225, 229, 234, 239, 245, 249, 254, 259, 264, 269, 274, 279, 284};

static const uint8_t kZigzag[16] = {0, 1, 4, 8, 5, 2, 3, 6, 9, 12, 13, 10, 7, 11, 14, 15};
static const uint8_t kBands[16 + 1] = {0, 1, 2, 3, 6, 4, 5, 6, 6, 6, 6, 6, 6, 6, 6, 7, 0};

static const uint8_t kCat3[] = {173, 148, 140};
static const uint8_t kCat4[] = {176, 155, 140, 135};
static const uint8_t kCat5[] = {180, 157, 141, 134, 130};
static const uint8_t kCat6[] = {254, 254, 243, 230, 196, 177, 153, 140, 133, 130, 129};

// libwebp's rounding of each kind of coefficient ([luma AC, Y2, chroma][DC, AC], in 1/256) and
// its sharpening of luma's high frequencies.
static const uint8_t kBias[3][2] = {{96, 110}, {96, 108}, {110, 115}};
static const uint8_t kSharpening[16] = {0, 30, 60, 90, 30, 60, 90, 90, 60, 90, 90, 90, 90, 90, 90, 90};

static const uint8_t kDefaultProbabilities[4][8][3][11] = {
    {
        {{128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128},
         {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128},
         {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}},
        {{253, 136, 254, 255, 228, 219, 128, 128, 128, 128, 128},
         {189, 129, 242, 255, 227, 213, 255, 219, 128, 128, 128},
         {106, 126, 227, 252, 214, 209, 255, 255, 128, 128, 128}},
        {{1, 98, 248, 255, 236, 226, 255, 255, 128, 128, 128},
         {181, 133, 238, 254, 221, 234, 255, 154, 128, 128, 128},
         {78, 134, 202, 247, 198, 180, 255, 219, 128, 128, 128}},
        {{1, 185, 249, 255, 243, 255, 128, 128, 128, 128, 128},
         {184, 150, 247, 255, 236, 224, 128, 128, 128, 128, 128},
         {77, 110, 216, 255, 236, 230, 128, 128, 128, 128, 128}},
        {{1, 101, 251, 255, 241, 255, 128, 128, 128, 128, 128},
         {170, 139, 241, 252, 236, 209, 255, 255, 128, 128, 128},
         {37, 116, 196, 243, 228, 255, 255, 255, 128, 128, 128}},
        {{1, 204, 254, 255, 245, 255, 128, 128, 128, 128, 128},
         {207, 160, 250, 255, 238, 128, 128, 128, 128, 128, 128},
         {102, 103, 231, 255, 211, 171, 128, 128, 128, 128, 128}},
        {{1, 152, 252, 255, 240, 255, 128, 128, 128, 128, 128},
         {177, 135, 243, 255, 234, 225, 128, 128, 128, 128, 128},
         {80, 129, 211, 255, 194, 224, 128, 128, 128, 128, 128}},
        {{1, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {246, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {255, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}},
    },
    {
        {{198, 35, 237, 223, 193, 187, 162, 160, 145, 155, 62},
         {131, 45, 198, 221, 172, 176, 220, 157, 252, 221, 1},
         {68, 47, 146, 208, 149, 167, 221, 162, 255, 223, 128}},
        {{1, 149, 241, 255, 221, 224, 255, 255, 128, 128, 128},
         {184, 141, 234, 253, 222, 220, 255, 199, 128, 128, 128},
         {81, 99, 181, 242, 176, 190, 249, 202, 255, 255, 128}},
        {{1, 129, 232, 253, 214, 197, 242, 196, 255, 255, 128},
         {99, 121, 210, 250, 201, 198, 255, 202, 128, 128, 128},
         {23, 91, 163, 242, 170, 187, 247, 210, 255, 255, 128}},
        {{1, 200, 246, 255, 234, 255, 128, 128, 128, 128, 128},
         {109, 178, 241, 255, 231, 245, 255, 255, 128, 128, 128},
         {44, 130, 201, 253, 205, 192, 255, 255, 128, 128, 128}},
        {{1, 132, 239, 251, 219, 209, 255, 165, 128, 128, 128},
         {94, 136, 225, 251, 218, 190, 255, 255, 128, 128, 128},
         {22, 100, 174, 245, 186, 161, 255, 199, 128, 128, 128}},
        {{1, 182, 249, 255, 232, 235, 128, 128, 128, 128, 128},
         {124, 143, 241, 255, 227, 234, 128, 128, 128, 128, 128},
         {35, 77, 181, 251, 193, 211, 255, 205, 128, 128, 128}},
        {{1, 157, 247, 255, 236, 231, 255, 255, 128, 128, 128},
         {121, 141, 235, 255, 225, 227, 255, 255, 128, 128, 128},
         {45, 99, 188, 251, 195, 217, 255, 224, 128, 128, 128}},
        {{1, 1, 251, 255, 213, 255, 128, 128, 128, 128, 128},
         {203, 1, 248, 255, 255, 128, 128, 128, 128, 128, 128},
         {137, 1, 177, 255, 224, 255, 128, 128, 128, 128, 128}},
    },
    {
        {{253, 9, 248, 251, 207, 208, 255, 192, 128, 128, 128},
         {175, 13, 224, 243, 193, 185, 249, 198, 255, 255, 128},
         {73, 17, 171, 221, 161, 179, 236, 167, 255, 234, 128}},
        {{1, 95, 247, 253, 212, 183, 255, 255, 128, 128, 128},
         {239, 90, 244, 250, 211, 209, 255, 255, 128, 128, 128},
         {155, 77, 195, 248, 188, 195, 255, 255, 128, 128, 128}},
        {{1, 24, 239, 251, 218, 219, 255, 205, 128, 128, 128},
         {201, 51, 219, 255, 196, 186, 128, 128, 128, 128, 128},
         {69, 46, 190, 239, 201, 218, 255, 228, 128, 128, 128}},
        {{1, 191, 251, 255, 255, 128, 128, 128, 128, 128, 128},
         {223, 165, 249, 255, 213, 255, 128, 128, 128, 128, 128},
         {141, 124, 248, 255, 255, 128, 128, 128, 128, 128, 128}},
        {{1, 16, 248, 255, 255, 128, 128, 128, 128, 128, 128},
         {190, 36, 230, 255, 236, 255, 128, 128, 128, 128, 128},
         {149, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128}},
        {{1, 226, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {247, 192, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {240, 128, 255, 128, 128, 128, 128, 128, 128, 128, 128}},
        {{1, 134, 252, 255, 255, 128, 128, 128, 128, 128, 128},
         {213, 62, 250, 255, 255, 128, 128, 128, 128, 128, 128},
         {55, 93, 255, 128, 128, 128, 128, 128, 128, 128, 128}},
        {{128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128},
         {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128},
         {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128}},
    },
    {
        {{202, 24, 213, 235, 186, 191, 220, 160, 240, 175, 255},
         {126, 38, 182, 232, 169, 184, 228, 174, 255, 187, 128},
         {61, 46, 138, 219, 151, 178, 240, 170, 255, 216, 128}},
        {{1, 112, 230, 250, 199, 191, 247, 159, 255, 255, 128},
         {166, 109, 228, 252, 211, 215, 255, 174, 128, 128, 128},
         {39, 77, 162, 232, 172, 180, 245, 178, 255, 255, 128}},
        {{1, 52, 220, 246, 198, 199, 249, 220, 255, 255, 128},
         {124, 74, 191, 243, 183, 193, 250, 221, 255, 255, 128},
         {24, 71, 130, 219, 154, 170, 243, 182, 255, 255, 128}},
        {{1, 182, 225, 249, 219, 240, 255, 224, 128, 128, 128},
         {149, 150, 226, 252, 216, 205, 255, 171, 128, 128, 128},
         {28, 108, 170, 242, 183, 194, 254, 223, 255, 255, 128}},
        {{1, 81, 230, 252, 204, 203, 255, 192, 128, 128, 128},
         {123, 102, 209, 247, 188, 196, 255, 233, 128, 128, 128},
         {20, 95, 153, 243, 164, 173, 255, 203, 128, 128, 128}},
        {{1, 222, 248, 255, 216, 213, 128, 128, 128, 128, 128},
         {168, 175, 246, 252, 235, 205, 255, 255, 128, 128, 128},
         {47, 116, 215, 255, 211, 212, 255, 255, 128, 128, 128}},
        {{1, 121, 236, 253, 212, 214, 255, 255, 128, 128, 128},
         {141, 84, 213, 252, 201, 202, 255, 219, 128, 128, 128},
         {42, 80, 160, 240, 162, 185, 255, 205, 128, 128, 128}},
        {{1, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {244, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128},
         {238, 1, 255, 128, 128, 128, 128, 128, 128, 128, 128}},
    },
};

static const uint8_t kUpdateProbabilities[4][8][3][11] = {
    {
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{176, 246, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {223, 241, 252, 255, 255, 255, 255, 255, 255, 255, 255},
         {249, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 244, 252, 255, 255, 255, 255, 255, 255, 255, 255},
         {234, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {253, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 246, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {239, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 248, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {251, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {251, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 253, 255, 254, 255, 255, 255, 255, 255, 255},
         {250, 255, 254, 255, 254, 255, 255, 255, 255, 255, 255},
         {254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
    },
    {
        {{217, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {225, 252, 241, 253, 255, 255, 254, 255, 255, 255, 255},
         {234, 250, 241, 250, 253, 255, 253, 254, 255, 255, 255}},
        {{255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {223, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {238, 253, 254, 254, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 248, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {249, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 253, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {247, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {252, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {253, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {250, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
    },
    {
        {{186, 251, 250, 255, 255, 255, 255, 255, 255, 255, 255},
         {234, 251, 244, 254, 255, 255, 255, 255, 255, 255, 255},
         {251, 251, 243, 253, 254, 255, 254, 255, 255, 255, 255}},
        {{255, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {236, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {251, 253, 253, 254, 254, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 254, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
    },
    {
        {{248, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {250, 254, 252, 254, 255, 255, 255, 255, 255, 255, 255},
         {248, 254, 249, 253, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {246, 253, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {252, 254, 251, 254, 254, 255, 255, 255, 255, 255, 255}},
        {{255, 254, 252, 255, 255, 255, 255, 255, 255, 255, 255},
         {248, 254, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {253, 255, 254, 254, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 251, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {245, 251, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {253, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 251, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {252, 253, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 254, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 252, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {249, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 254, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 253, 255, 255, 255, 255, 255, 255, 255, 255},
         {250, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
        {{255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {254, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255},
         {255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255}},
    },
};

// ---------------------------------------------------------------------------------------------
// The boolean entropy coder (RFC 6386 section 7), as libwebp writes it.

// After a bit, a range below 127 is doubled until it is at least 127 (RFC 6386 section 7.3):
// by how many bits, and to what. A range of 127 or more is left as it is.
static const uint8_t kRenormShift[256] = {
    7, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3,
    3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static const uint8_t kRenormRange[256] = {
    127, 127, 191, 127, 159, 191, 223, 127, 143, 159, 175, 191, 207, 223, 239, 127, 135, 143, 151,
    159, 167, 175, 183, 191, 199, 207, 215, 223, 231, 239, 247, 127, 131, 135, 139, 143, 147, 151,
    155, 159, 163, 167, 171, 175, 179, 183, 187, 191, 195, 199, 203, 207, 211, 215, 219, 223, 227,
    231, 235, 239, 243, 247, 251, 127, 129, 131, 133, 135, 137, 139, 141, 143, 145, 147, 149, 151,
    153, 155, 157, 159, 161, 163, 165, 167, 169, 171, 173, 175, 177, 179, 181, 183, 185, 187, 189,
    191, 193, 195, 197, 199, 201, 203, 205, 207, 209, 211, 213, 215, 217, 219, 221, 223, 225, 227,
    229, 231, 233, 235, 237, 239, 241, 243, 245, 247, 249, 251, 253, 127, 128, 129, 130, 131, 132,
    133, 134, 135, 136, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149, 150, 151,
    152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 163, 164, 165, 166, 167, 168, 169, 170,
    171, 172, 173, 174, 175, 176, 177, 178, 179, 180, 181, 182, 183, 184, 185, 186, 187, 188, 189,
    190, 191, 192, 193, 194, 195, 196, 197, 198, 199, 200, 201, 202, 203, 204, 205, 206, 207, 208,
    209, 210, 211, 212, 213, 214, 215, 216, 217, 218, 219, 220, 221, 222, 223, 224, 225, 226, 227,
    228, 229, 230, 231, 232, 233, 234, 235, 236, 237, 238, 239, 240, 241, 242, 243, 244, 245, 246,
    247, 248, 249, 250, 251, 252, 253, 254, 255,
};

typedef struct {
  uint8_t *buffer;
  size_t position, capacity;
  uint32_t range;  // the range less one
  int32_t value;
  int run;      // 0xff bytes held back until a carry is settled
  int pending;  // bits in `value` not yet written, less 8
  int failed;
} BoolWriter;

static int writer_start(BoolWriter *writer, size_t capacity) {
  writer->range = 254;
  writer->value = 0;
  writer->run = 0;
  writer->pending = -8;
  writer->position = 0;
  writer->capacity = capacity;
  writer->failed = 0;
  writer->buffer = malloc(capacity);
  return writer->buffer != NULL;
}

static int writer_reserve(BoolWriter *writer, size_t extra) {
  if (writer->position + extra <= writer->capacity) return 1;
  size_t capacity = writer->capacity * 2;
  if (capacity < writer->position + extra) capacity = writer->position + extra;
  uint8_t *buffer = realloc(writer->buffer, capacity);
  if (buffer == NULL) {
    writer->failed = 1;
    return 0;
  }
  writer->buffer = buffer;
  writer->capacity = capacity;
  return 1;
}

// Writes out the byte above the `pending` bits of `value`; returns what is left of `value`.
static int32_t writer_flush(BoolWriter *writer, int32_t value, int pending) {
  const int shift = 8 + pending;
  const int32_t bits = value >> shift;
  value -= bits << shift;
  if ((bits & 0xff) != 0xff) {
    if (!writer_reserve(writer, (size_t)writer->run + 1)) return value;
    size_t position = writer->position;
    if ((bits & 0x100) && position > 0) writer->buffer[position - 1]++;  // the carry
    if (writer->run > 0) {
      const uint8_t held = (bits & 0x100) ? 0x00 : 0xff;
      for (; writer->run > 0; writer->run--) writer->buffer[position++] = held;
    }
    writer->buffer[position++] = (uint8_t)(bits & 0xff);
    writer->position = position;
  } else {
    writer->run++;
  }
  return value;
}

// Codes `bit` at `probability` (of a zero, in 1/256) with the coder's state in the local variables
// `range`, `value` and `pending` (loaded from and stored back to `writer` around a run of bits, so
// that they stay in registers).
#define PUT_BIT(writer, bit, probability)                                                      \
  do {                                                                                           \
    const uint32_t split_ = (range * (uint32_t)(probability)) >> 8;                              \
    if (bit) {                                                                                   \
      value += (int32_t)split_ + 1;                                                              \
      range -= split_ + 1;                                                                       \
    } else {                                                                                     \
      range = split_;                                                                            \
    }                                                                                            \
    RENORMALIZE(writer);                                                                         \
  } while (0)

// A bit at probability one half (a sign).
#define PUT_HALF(writer, bit)                                                                  \
  do {                                                                                           \
    const uint32_t split_ = range >> 1;                                                          \
    if (bit) {                                                                                   \
      value += (int32_t)split_ + 1;                                                              \
      range -= split_ + 1;                                                                       \
    } else {                                                                                     \
      range = split_;                                                                            \
    }                                                                                            \
    RENORMALIZE(writer);                                                                         \
  } while (0)

#define RENORMALIZE(writer)                                                                      \
  do {                                                                                           \
    const int shift_ = kRenormShift[range];                                                      \
    range = kRenormRange[range];                                                                 \
    value <<= shift_;                                                                            \
    pending += shift_;                                                                           \
    if (pending > 0) {                                                                           \
      /* A byte with no carry and none held back goes straight out. */                          \
      const int32_t byte_ = value >> (8 + pending);                                              \
      if (byte_ < 0xff && (writer)->run == 0 && (writer)->position < (writer)->capacity) {       \
        (writer)->buffer[(writer)->position++] = (uint8_t)byte_;                                 \
        value -= byte_ << (8 + pending);                                                         \
      } else {                                                                                   \
        value = writer_flush(writer, value, pending);                                            \
      }                                                                                          \
      pending -= 8;                                                                              \
    }                                                                                            \
  } while (0)

static void put_bit(BoolWriter *writer, int bit, int probability) {
  uint32_t range = writer->range;
  int32_t value = writer->value;
  int pending = writer->pending;
  PUT_BIT(writer, bit, probability);
  writer->range = range;
  writer->value = value;
  writer->pending = pending;
}

static void put_literal(BoolWriter *writer, uint32_t value, int bits) {
  for (uint32_t mask = 1u << (bits - 1); mask; mask >>= 1) put_bit(writer, (value & mask) != 0, 128);
}

static void put_signed(BoolWriter *writer, int value, int bits) {
  put_bit(writer, value != 0, 128);
  if (value == 0) return;
  put_literal(writer, (uint32_t)(value < 0 ? -value : value), bits);
  put_bit(writer, value < 0, 128);
}

static void writer_finish(BoolWriter *writer) {
  put_literal(writer, 0, 9 - writer->pending);
  writer->value = writer_flush(writer, writer->value, 0);
  writer->pending = -8;
}

// ---------------------------------------------------------------------------------------------
// Quantization (libwebp's QuantizeBlock_C and ExpandMatrix).

typedef struct {
  uint16_t step[16], inverse[16], sharpen[16];
  uint32_t bias[16], threshold[16];
} Matrix;

static void matrix_make(Matrix *matrix, int dc_step, int ac_step, int kind) {
  for (int i = 0; i < 16; i++) {
    const uint32_t step = (uint32_t)(i == 0 ? dc_step : ac_step);
    matrix->step[i] = (uint16_t)step;
    matrix->inverse[i] = (uint16_t)((1u << quantizer_fix) / step);  // at most 2^15: steps are >= 4
    matrix->bias[i] = (uint32_t)kBias[kind][i > 0] << (quantizer_fix - 8);
    matrix->threshold[i] = ((1u << quantizer_fix) - 1 - matrix->bias[i]) / matrix->inverse[i];
    matrix->sharpen[i] = (uint16_t)(kind == 0 ? (kSharpening[i] * step) >> 11 : 0);
  }
}

// Quantizes the coefficients `in` (raster order) into `levels` (zigzag order), and leaves in `in`
// what a decoder will dequantize them to. With `skip_dc` the DC is taken as 0 (a luma block's, which
// the Y2 block carries). Returns the zigzag index of the last non-zero level, or -1.
static int quantize_scalar(int16_t in[16], int16_t levels[16], const Matrix *matrix, int skip_dc) {
  int last = -1;
  for (int n = 0; n < 16; n++) {
    const int j = kZigzag[n];
    const int coefficient = skip_dc && j == 0 ? 0 : in[j];
    const int negative = coefficient < 0;
    const uint32_t magnitude = (uint32_t)(negative ? -coefficient : coefficient) + matrix->sharpen[j];
    int level = 0;
    if (magnitude > matrix->threshold[j]) {
      level = (int)((magnitude * matrix->inverse[j] + matrix->bias[j]) >> quantizer_fix);
      if (level > maximum_level) level = maximum_level;
      if (negative) level = -level;
    }
    in[j] = (int16_t)(level * (int)matrix->step[j]);
    levels[n] = (int16_t)level;
    if (level) last = n;
  }
  return last;
}

// ---------------------------------------------------------------------------------------------
// Transforms (libwebp's FTransform_C, ITransformOne, FTransformWHT_C and TransformWHT_C).

static void forward_transform_scalar(const uint8_t *source, int source_stride, const uint8_t *prediction,
                              int prediction_stride, int16_t out[16]) {
  int tmp[16];
  for (int i = 0; i < 4; i++, source += source_stride, prediction += prediction_stride) {
    const int d0 = source[0] - prediction[0];
    const int d1 = source[1] - prediction[1];
    const int d2 = source[2] - prediction[2];
    const int d3 = source[3] - prediction[3];
    const int a0 = d0 + d3, a1 = d1 + d2, a2 = d1 - d2, a3 = d0 - d3;
    tmp[0 + i * 4] = (a0 + a1) * 8;
    tmp[1 + i * 4] = (a2 * 2217 + a3 * 5352 + 1812) >> 9;
    tmp[2 + i * 4] = (a0 - a1) * 8;
    tmp[3 + i * 4] = (a3 * 2217 - a2 * 5352 + 937) >> 9;
  }
  for (int i = 0; i < 4; i++) {
    const int a0 = tmp[0 + i] + tmp[12 + i];
    const int a1 = tmp[4 + i] + tmp[8 + i];
    const int a2 = tmp[4 + i] - tmp[8 + i];
    const int a3 = tmp[0 + i] - tmp[12 + i];
    out[0 + i] = (int16_t)((a0 + a1 + 7) >> 4);
    out[4 + i] = (int16_t)(((a2 * 2217 + a3 * 5352 + 12000) >> 16) + (a3 != 0));
    out[8 + i] = (int16_t)((a0 - a1 + 7) >> 4);
    out[12 + i] = (int16_t)((a3 * 2217 - a2 * 5352 + 51000) >> 16);
  }
}

static inline uint8_t clip_pixel(int v) { return v < 0 ? 0 : v > 255 ? 255 : (uint8_t)v; }

#define MUL1(a) ((((a) * 20091) >> 16) + (a))
#define MUL2(a) (((a) * 35468) >> 16)

// Adds the inverse transform of `in` to the prediction, into `target` (which may be the same).
static void inverse_transform_scalar(const uint8_t *prediction, int prediction_stride, const int16_t in[16],
                              uint8_t *target, int target_stride) {
  int tmp[16];
  for (int i = 0; i < 4; i++) {
    const int a = in[i] + in[8 + i];
    const int b = in[i] - in[8 + i];
    const int c = MUL2(in[4 + i]) - MUL1(in[12 + i]);
    const int d = MUL1(in[4 + i]) + MUL2(in[12 + i]);
    tmp[4 * i + 0] = a + d;
    tmp[4 * i + 1] = b + c;
    tmp[4 * i + 2] = b - c;
    tmp[4 * i + 3] = a - d;
  }
  for (int i = 0; i < 4; i++) {
    const int dc = tmp[i] + 4;
    const int a = dc + tmp[8 + i];
    const int b = dc - tmp[8 + i];
    const int c = MUL2(tmp[4 + i]) - MUL1(tmp[12 + i]);
    const int d = MUL1(tmp[4 + i]) + MUL2(tmp[12 + i]);
    const uint8_t *p = prediction + i * prediction_stride;
    uint8_t *t = target + i * target_stride;
    t[0] = clip_pixel(p[0] + ((a + d) >> 3));
    t[1] = clip_pixel(p[1] + ((b + c) >> 3));
    t[2] = clip_pixel(p[2] + ((b - c) >> 3));
    t[3] = clip_pixel(p[3] + ((a - d) >> 3));
  }
}

// The inverse transform of a block whose only coefficient is its DC: (dc + 4) >> 3 added.
static void add_dc_scalar(const uint8_t *prediction, int prediction_stride, int dc, uint8_t *target,
                          int target_stride) {
  const int value = (dc + 4) >> 3;
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 4; x++)
      target[y * target_stride + x] = clip_pixel(prediction[y * prediction_stride + x] + value);
}

// The Walsh-Hadamard transform of the 16 luma blocks' DC coefficients (raster order in and out).
static void forward_wht(const int16_t dc[16], int16_t out[16]) {
  int tmp[16];
  for (int i = 0; i < 4; i++) {
    const int a0 = dc[4 * i + 0] + dc[4 * i + 2];
    const int a1 = dc[4 * i + 1] + dc[4 * i + 3];
    const int a2 = dc[4 * i + 1] - dc[4 * i + 3];
    const int a3 = dc[4 * i + 0] - dc[4 * i + 2];
    tmp[0 + i * 4] = a0 + a1;
    tmp[1 + i * 4] = a3 + a2;
    tmp[2 + i * 4] = a3 - a2;
    tmp[3 + i * 4] = a0 - a1;
  }
  for (int i = 0; i < 4; i++) {
    const int a0 = tmp[0 + i] + tmp[8 + i];
    const int a1 = tmp[4 + i] + tmp[12 + i];
    const int a2 = tmp[4 + i] - tmp[12 + i];
    const int a3 = tmp[0 + i] - tmp[8 + i];
    out[0 + i] = (int16_t)((a0 + a1) >> 1);
    out[4 + i] = (int16_t)((a3 + a2) >> 1);
    out[8 + i] = (int16_t)((a3 - a2) >> 1);
    out[12 + i] = (int16_t)((a0 - a1) >> 1);
  }
}

static void inverse_wht(const int16_t in[16], int16_t dc[16]) {
  int tmp[16];
  for (int i = 0; i < 4; i++) {
    const int a0 = in[0 + i] + in[12 + i];
    const int a1 = in[4 + i] + in[8 + i];
    const int a2 = in[4 + i] - in[8 + i];
    const int a3 = in[0 + i] - in[12 + i];
    tmp[0 + i] = a0 + a1;
    tmp[8 + i] = a0 - a1;
    tmp[4 + i] = a3 + a2;
    tmp[12 + i] = a3 - a2;
  }
  for (int i = 0; i < 4; i++) {
    const int d = tmp[0 + i * 4] + 3;
    const int a0 = d + tmp[3 + i * 4];
    const int a1 = tmp[1 + i * 4] + tmp[2 + i * 4];
    const int a2 = tmp[1 + i * 4] - tmp[2 + i * 4];
    const int a3 = d - tmp[3 + i * 4];
    dc[4 * i + 0] = (int16_t)((a0 + a1) >> 3);
    dc[4 * i + 1] = (int16_t)((a3 + a2) >> 3);
    dc[4 * i + 2] = (int16_t)((a0 - a1) >> 3);
    dc[4 * i + 3] = (int16_t)((a3 - a2) >> 3);
  }
}

// ---------------------------------------------------------------------------------------------
// SSE2 forms of the transforms and the quantizer (libwebp's FTransform_SSE2, ITransform_One_SSE2 and
// DoQuantizeBlock_SSE2), of the modes' sums of differences and of the colour conversion: the same
// results as the plain loops, which processors without SSE2 run (and tests compare).

#if defined(__SSE2__)
static inline __m128i load32(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, 4);
  return _mm_cvtsi32_si128(v);
}

static void forward_transform_sse2(const uint8_t *source, int source_stride, const uint8_t *prediction,
                                   int prediction_stride, int16_t out[16]) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i src_0 = _mm_unpacklo_epi16(load32(source), load32(source + source_stride));
  const __m128i src_1 =
      _mm_unpacklo_epi16(load32(source + 2 * source_stride), load32(source + 3 * source_stride));
  const __m128i ref_0 = _mm_unpacklo_epi16(load32(prediction), load32(prediction + prediction_stride));
  const __m128i ref_1 = _mm_unpacklo_epi16(load32(prediction + 2 * prediction_stride),
                                           load32(prediction + 3 * prediction_stride));
  const __m128i row01 = _mm_sub_epi16(_mm_unpacklo_epi8(src_0, zero), _mm_unpacklo_epi8(ref_0, zero));
  const __m128i row23 = _mm_sub_epi16(_mm_unpacklo_epi8(src_1, zero), _mm_unpacklo_epi8(ref_1, zero));
  __m128i v01, v32;
  {  // the first pass
    const __m128i k937 = _mm_set1_epi32(937);
    const __m128i k1812 = _mm_set1_epi32(1812);
    const __m128i k88p = _mm_set_epi16(8, 8, 8, 8, 8, 8, 8, 8);
    const __m128i k88m = _mm_set_epi16(-8, 8, -8, 8, -8, 8, -8, 8);
    const __m128i k5352_2217p = _mm_set_epi16(2217, 5352, 2217, 5352, 2217, 5352, 2217, 5352);
    const __m128i k5352_2217m = _mm_set_epi16(-5352, 2217, -5352, 2217, -5352, 2217, -5352, 2217);
    const __m128i shuf01_p = _mm_shufflehi_epi16(row01, _MM_SHUFFLE(2, 3, 0, 1));
    const __m128i shuf23_p = _mm_shufflehi_epi16(row23, _MM_SHUFFLE(2, 3, 0, 1));
    const __m128i s01 = _mm_unpacklo_epi64(shuf01_p, shuf23_p);
    const __m128i s32 = _mm_unpackhi_epi64(shuf01_p, shuf23_p);
    const __m128i a01 = _mm_add_epi16(s01, s32);
    const __m128i a32 = _mm_sub_epi16(s01, s32);
    const __m128i tmp0 = _mm_madd_epi16(a01, k88p);
    const __m128i tmp2 = _mm_madd_epi16(a01, k88m);
    const __m128i tmp1 = _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(a32, k5352_2217p), k1812), 9);
    const __m128i tmp3 = _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(a32, k5352_2217m), k937), 9);
    const __m128i s03 = _mm_packs_epi32(tmp0, tmp2);
    const __m128i s12 = _mm_packs_epi32(tmp1, tmp3);
    const __m128i s_lo = _mm_unpacklo_epi16(s03, s12);
    const __m128i s_hi = _mm_unpackhi_epi16(s03, s12);
    const __m128i v23 = _mm_unpackhi_epi32(s_lo, s_hi);
    v01 = _mm_unpacklo_epi32(s_lo, s_hi);
    v32 = _mm_shuffle_epi32(v23, _MM_SHUFFLE(1, 0, 3, 2));
  }
  {  // the second pass
    const __m128i seven = _mm_set1_epi16(7);
    const __m128i k5352_2217 = _mm_set_epi16(5352, 2217, 5352, 2217, 5352, 2217, 5352, 2217);
    const __m128i k2217_5352 = _mm_set_epi16(2217, -5352, 2217, -5352, 2217, -5352, 2217, -5352);
    const __m128i k12000_plus_one = _mm_set1_epi32(12000 + (1 << 16));
    const __m128i k51000 = _mm_set1_epi32(51000);
    const __m128i a32 = _mm_sub_epi16(v01, v32);
    const __m128i a22 = _mm_unpackhi_epi64(a32, a32);
    const __m128i b23 = _mm_unpacklo_epi16(a22, a32);
    const __m128i e1 = _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(b23, k5352_2217), k12000_plus_one), 16);
    const __m128i e3 = _mm_srai_epi32(_mm_add_epi32(_mm_madd_epi16(b23, k2217_5352), k51000), 16);
    const __m128i f1 = _mm_packs_epi32(e1, e1);
    const __m128i f3 = _mm_packs_epi32(e3, e3);
    const __m128i g1 = _mm_add_epi16(f1, _mm_cmpeq_epi16(a32, zero));
    const __m128i a01 = _mm_add_epi16(v01, v32);
    const __m128i a01_plus_7 = _mm_add_epi16(a01, seven);
    const __m128i a11 = _mm_unpackhi_epi64(a01, a01);
    const __m128i d0 = _mm_srai_epi16(_mm_add_epi16(a01_plus_7, a11), 4);
    const __m128i d2 = _mm_srai_epi16(_mm_sub_epi16(a01_plus_7, a11), 4);
    _mm_storeu_si128((__m128i *)&out[0], _mm_unpacklo_epi64(d0, g1));
    _mm_storeu_si128((__m128i *)&out[8], _mm_unpacklo_epi64(d2, f3));
  }
}

// One pass of the inverse transform over four columns (or rows), and its transpose.
static inline void inverse_pass_sse2(__m128i *t01, __m128i *t23, __m128i bias, int shift) {
  const __m128i k1k2 = _mm_set_epi16(-30068, -30068, -30068, -30068, 20091, 20091, 20091, 20091);
  const __m128i k2k1 = _mm_set_epi16(20091, 20091, 20091, 20091, -30068, -30068, -30068, -30068);
  const __m128i in01 = _mm_add_epi16(*t01, bias);
  const __m128i in23 = *t23;
  const __m128i in1 = _mm_unpackhi_epi64(*t01, *t01);
  const __m128i in3 = _mm_unpackhi_epi64(in23, in23);
  const __m128i a_d3 = _mm_add_epi16(in01, in23);
  const __m128i b_c3 = _mm_sub_epi16(in01, in23);
  const __m128i c1d1 = _mm_mulhi_epi16(in1, k2k1);
  const __m128i c2d2 = _mm_mulhi_epi16(in3, k1k2);
  const __m128i c3 = _mm_unpackhi_epi64(b_c3, b_c3);
  const __m128i c4 = _mm_sub_epi16(c1d1, c2d2);
  const __m128i c = _mm_add_epi16(c3, c4);
  const __m128i d4u = _mm_add_epi16(c1d1, c2d2);
  const __m128i du = _mm_add_epi16(a_d3, d4u);
  const __m128i d = _mm_unpackhi_epi64(du, du);
  const __m128i comb_ab = _mm_unpacklo_epi64(a_d3, b_c3);
  const __m128i comb_dc = _mm_unpacklo_epi64(d, c);
  __m128i tmp01 = _mm_add_epi16(comb_ab, comb_dc);
  const __m128i tmp32 = _mm_sub_epi16(comb_ab, comb_dc);
  __m128i tmp23 = _mm_shuffle_epi32(tmp32, _MM_SHUFFLE(1, 0, 3, 2));
  if (shift) {
    tmp01 = _mm_srai_epi16(tmp01, 3);
    tmp23 = _mm_srai_epi16(tmp23, 3);
  }
  const __m128i transpose_0 = _mm_unpacklo_epi16(tmp01, tmp23);
  const __m128i transpose_1 = _mm_unpackhi_epi16(tmp01, tmp23);
  *t01 = _mm_unpacklo_epi16(transpose_0, transpose_1);
  *t23 = _mm_unpackhi_epi16(transpose_0, transpose_1);
}

static void inverse_transform_sse2(const uint8_t *prediction, int prediction_stride,
                                   const int16_t in[16], uint8_t *target, int target_stride) {
  const __m128i zero = _mm_setzero_si128();
  __m128i t01 = _mm_loadu_si128((const __m128i *)&in[0]);
  __m128i t23 = _mm_loadu_si128((const __m128i *)&in[8]);
  inverse_pass_sse2(&t01, &t23, zero, 0);
  inverse_pass_sse2(&t01, &t23, _mm_set_epi16(0, 0, 0, 0, 4, 4, 4, 4), 1);
  __m128i ref01 = _mm_unpacklo_epi32(load32(prediction), load32(prediction + prediction_stride));
  __m128i ref23 = _mm_unpacklo_epi32(load32(prediction + 2 * prediction_stride),
                                     load32(prediction + 3 * prediction_stride));
  ref01 = _mm_add_epi16(_mm_unpacklo_epi8(ref01, zero), t01);
  ref23 = _mm_add_epi16(_mm_unpacklo_epi8(ref23, zero), t23);
  int32_t rows[4];
  _mm_storeu_si128((__m128i *)rows, _mm_packus_epi16(ref01, ref23));
  for (int i = 0; i < 4; i++) memcpy(target + i * target_stride, &rows[i], 4);
}

static void add_dc_sse2(const uint8_t *prediction, int prediction_stride, int dc, uint8_t *target,
                        int target_stride) {
  const __m128i zero = _mm_setzero_si128();
  const __m128i value = _mm_set1_epi16((short)((dc + 4) >> 3));
  const __m128i p01 = _mm_unpacklo_epi32(load32(prediction), load32(prediction + prediction_stride));
  const __m128i p23 = _mm_unpacklo_epi32(load32(prediction + 2 * prediction_stride),
                                         load32(prediction + 3 * prediction_stride));
  int32_t rows[4];
  _mm_storeu_si128((__m128i *)rows,
                   _mm_packus_epi16(_mm_add_epi16(_mm_unpacklo_epi8(p01, zero), value),
                                    _mm_add_epi16(_mm_unpacklo_epi8(p23, zero), value)));
  for (int i = 0; i < 4; i++) memcpy(target + i * target_stride, &rows[i], 4);
}

static int quantize_sse2(int16_t in[16], int16_t levels[16], const Matrix *matrix, int skip_dc) {
  const __m128i zero = _mm_setzero_si128();
  // The DC cleared in the register: a store of it just before the load would stall the load.
  __m128i in0 = _mm_and_si128(_mm_loadu_si128((__m128i *)&in[0]),
                              _mm_set_epi16(-1, -1, -1, -1, -1, -1, -1, skip_dc ? 0 : -1));
  __m128i in8 = _mm_loadu_si128((__m128i *)&in[8]);
  const __m128i iq0 = _mm_loadu_si128((const __m128i *)&matrix->inverse[0]);
  const __m128i iq8 = _mm_loadu_si128((const __m128i *)&matrix->inverse[8]);
  const __m128i q0 = _mm_loadu_si128((const __m128i *)&matrix->step[0]);
  const __m128i q8 = _mm_loadu_si128((const __m128i *)&matrix->step[8]);
  const __m128i sign0 = _mm_cmpgt_epi16(zero, in0);
  const __m128i sign8 = _mm_cmpgt_epi16(zero, in8);
  __m128i coeff0 = _mm_sub_epi16(_mm_xor_si128(in0, sign0), sign0);
  __m128i coeff8 = _mm_sub_epi16(_mm_xor_si128(in8, sign8), sign8);
  coeff0 = _mm_add_epi16(coeff0, _mm_loadu_si128((const __m128i *)&matrix->sharpen[0]));
  coeff8 = _mm_add_epi16(coeff8, _mm_loadu_si128((const __m128i *)&matrix->sharpen[8]));
  const __m128i h0 = _mm_mulhi_epu16(coeff0, iq0), l0 = _mm_mullo_epi16(coeff0, iq0);
  const __m128i h8 = _mm_mulhi_epu16(coeff8, iq8), l8 = _mm_mullo_epi16(coeff8, iq8);
  __m128i out00 = _mm_unpacklo_epi16(l0, h0), out04 = _mm_unpackhi_epi16(l0, h0);
  __m128i out08 = _mm_unpacklo_epi16(l8, h8), out12 = _mm_unpackhi_epi16(l8, h8);
  const __m128i *bias = (const __m128i *)matrix->bias;
  out00 = _mm_srai_epi32(_mm_add_epi32(out00, _mm_loadu_si128(bias + 0)), quantizer_fix);
  out04 = _mm_srai_epi32(_mm_add_epi32(out04, _mm_loadu_si128(bias + 1)), quantizer_fix);
  out08 = _mm_srai_epi32(_mm_add_epi32(out08, _mm_loadu_si128(bias + 2)), quantizer_fix);
  out12 = _mm_srai_epi32(_mm_add_epi32(out12, _mm_loadu_si128(bias + 3)), quantizer_fix);
  const __m128i maximum = _mm_set1_epi16(maximum_level);
  __m128i out0 = _mm_min_epi16(_mm_packs_epi32(out00, out04), maximum);
  __m128i out8 = _mm_min_epi16(_mm_packs_epi32(out08, out12), maximum);
  out0 = _mm_sub_epi16(_mm_xor_si128(out0, sign0), sign0);
  out8 = _mm_sub_epi16(_mm_xor_si128(out8, sign8), sign8);
  _mm_storeu_si128((__m128i *)&in[0], _mm_mullo_epi16(out0, q0));
  _mm_storeu_si128((__m128i *)&in[8], _mm_mullo_epi16(out8, q8));
  // Zigzag order (with positions 3 and 12 swapped, mended below).
  __m128i z0 = _mm_shufflehi_epi16(out0, _MM_SHUFFLE(2, 1, 3, 0));
  z0 = _mm_shuffle_epi32(z0, _MM_SHUFFLE(3, 1, 2, 0));
  z0 = _mm_shufflehi_epi16(z0, _MM_SHUFFLE(3, 1, 0, 2));
  __m128i z8 = _mm_shufflelo_epi16(out8, _MM_SHUFFLE(3, 0, 2, 1));
  z8 = _mm_shuffle_epi32(z8, _MM_SHUFFLE(3, 1, 2, 0));
  z8 = _mm_shufflelo_epi16(z8, _MM_SHUFFLE(1, 3, 2, 0));
  _mm_storeu_si128((__m128i *)&levels[0], z0);
  _mm_storeu_si128((__m128i *)&levels[8], z8);
  const int16_t swapped = levels[3];
  levels[3] = levels[12];
  levels[12] = swapped;
  const __m128i zeros = _mm_cmpeq_epi8(_mm_packs_epi16(z0, z8), zero);
  unsigned nonzero = ~(unsigned)_mm_movemask_epi8(zeros) & 0xffffu;
  // Bits 3 and 12 belong to the swapped pair.
  const unsigned bit3 = (nonzero >> 3) & 1u, bit12 = (nonzero >> 12) & 1u;
  nonzero = (nonzero & ~((1u << 3) | (1u << 12))) | (bit3 << 12) | (bit12 << 3);
  return nonzero ? 31 - __builtin_clz(nonzero) : -1;
}

static int dc_value(int size, const uint8_t *above, const uint8_t *left, int has_above, int has_left);

// The sum of the two 64-bit halves of a _mm_sad_epu8 total.
static int sum_of_halves(__m128i sum) {
  return _mm_cvtsi128_si32(sum) + _mm_cvtsi128_si32(_mm_srli_si128(sum, 8));
}

static void mode_costs_sse2(const uint8_t *const sources[2], int stride, int size, int planes,
                            const uint8_t *const above[2], const uint8_t *const left[2], int has_above,
                            int has_left, int costs[4]) {
  const __m128i zero = _mm_setzero_si128();
  __m128i dc_sum = zero, tm_sum = zero, v_sum = zero, h_sum = zero;
  for (int p = 0; p < planes; p++) {
    const uint8_t *source = sources[p];
    const __m128i dc = _mm_set1_epi8((char)dc_value(size, above[p], left[p], has_above, has_left));
    const int corner = above[p][0];
    if (size == 16) {
      const __m128i top = _mm_loadu_si128((const __m128i *)(above[p] + 1));
      const __m128i top_lo = _mm_unpacklo_epi8(top, zero), top_hi = _mm_unpackhi_epi8(top, zero);
      for (int y = 0; y < 16; y++) {
        const __m128i row = _mm_loadu_si128((const __m128i *)(source + y * stride));
        const __m128i base = _mm_set1_epi16((short)(left[p][y] - corner));
        const __m128i tm = _mm_packus_epi16(_mm_add_epi16(top_lo, base), _mm_add_epi16(top_hi, base));
        dc_sum = _mm_add_epi64(dc_sum, _mm_sad_epu8(row, dc));
        tm_sum = _mm_add_epi64(tm_sum, _mm_sad_epu8(row, tm));
        v_sum = _mm_add_epi64(v_sum, _mm_sad_epu8(row, top));
        h_sum = _mm_add_epi64(h_sum, _mm_sad_epu8(row, _mm_set1_epi8((char)left[p][y])));
      }
    } else {  // 8 x 8, two rows at a time
      const __m128i top8 = _mm_loadl_epi64((const __m128i *)(above[p] + 1));
      const __m128i top = _mm_unpacklo_epi64(top8, top8);
      const __m128i top16 = _mm_unpacklo_epi8(top8, zero);
      for (int y = 0; y < 8; y += 2) {
        const __m128i upper = _mm_loadl_epi64((const __m128i *)(source + y * stride));
        const __m128i lower = _mm_loadl_epi64((const __m128i *)(source + (y + 1) * stride));
        const __m128i rows = _mm_unpacklo_epi64(upper, lower);
        const __m128i tm =
            _mm_packus_epi16(_mm_add_epi16(top16, _mm_set1_epi16((short)(left[p][y] - corner))),
                             _mm_add_epi16(top16, _mm_set1_epi16((short)(left[p][y + 1] - corner))));
        const __m128i h =
            _mm_unpacklo_epi64(_mm_set1_epi8((char)left[p][y]), _mm_set1_epi8((char)left[p][y + 1]));
        dc_sum = _mm_add_epi64(dc_sum, _mm_sad_epu8(rows, dc));
        tm_sum = _mm_add_epi64(tm_sum, _mm_sad_epu8(rows, tm));
        v_sum = _mm_add_epi64(v_sum, _mm_sad_epu8(rows, top));
        h_sum = _mm_add_epi64(h_sum, _mm_sad_epu8(rows, h));
      }
    }
  }
  costs[mode_dc] = sum_of_halves(dc_sum);
  costs[mode_tm] = sum_of_halves(tm_sum);
  costs[mode_v] = sum_of_halves(v_sum);
  costs[mode_h] = sum_of_halves(h_sum);
}
// Converts the row's pixels 8 at a time to luma; returns how many it converted (a multiple of 8).
static int convert_luma_sse2(const uint8_t *row, uint8_t *target, int width) {
  const __m128i zero = _mm_setzero_si128();
  // B G R G of each pixel against these: 6420 B + 16530 G, 16839 R + 16529 G (33059 G in all).
  const __m128i weights = _mm_setr_epi16(6420, 16530, 16839, 16529, 6420, 16530, 16839, 16529);
  const __m128i rounding = _mm_set1_epi32((1 << 15) + (16 << 16));
  int x = 0;
  for (; x + 8 <= width; x += 8) {
    __m128i sums[2];
    for (int half = 0; half < 2; half++) {
      const __m128i pixels = _mm_loadu_si128((const __m128i *)(row + 4 * x + 16 * half));
      __m128i lo = _mm_unpacklo_epi8(pixels, zero), hi = _mm_unpackhi_epi8(pixels, zero);
      lo = _mm_shufflehi_epi16(_mm_shufflelo_epi16(lo, _MM_SHUFFLE(1, 2, 1, 0)), _MM_SHUFFLE(1, 2, 1, 0));
      hi = _mm_shufflehi_epi16(_mm_shufflelo_epi16(hi, _MM_SHUFFLE(1, 2, 1, 0)), _MM_SHUFFLE(1, 2, 1, 0));
      const __m128 a = _mm_castsi128_ps(_mm_madd_epi16(lo, weights));
      const __m128 b = _mm_castsi128_ps(_mm_madd_epi16(hi, weights));
      const __m128i evens = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
      const __m128i odds = _mm_castps_si128(_mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
      sums[half] = _mm_srai_epi32(_mm_add_epi32(_mm_add_epi32(evens, odds), rounding), 16);
    }
    const __m128i words = _mm_packs_epi32(sums[0], sums[1]);
    _mm_storel_epi64((__m128i *)(target + x), _mm_packus_epi16(words, words));
  }
  return x;
}

// Converts 2 x 2 pixels of two rows to U and V, 4 samples at a time; returns how many samples it
// converted (a multiple of 4, of whole pairs of pixels within `width`).
static int convert_chroma_sse2(const uint8_t *row0, const uint8_t *row1, uint8_t *u, uint8_t *v,
                               int width) {
  const __m128i zero = _mm_setzero_si128();
  // B G R X sums against these: U = 28800 B - 19081 G - 9719 R, V = -4684 B - 24116 G + 28800 R.
  const __m128i u_weights = _mm_setr_epi16(28800, -19081, -9719, 0, 28800, -19081, -9719, 0);
  const __m128i v_weights = _mm_setr_epi16(-4684, -24116, 28800, 0, -4684, -24116, 28800, 0);
  const __m128i rounding = _mm_set1_epi32((1 << 17) + (128 << 18));
  int x = 0;
  for (; 2 * x + 8 <= width; x += 4) {
    __m128i u_sums[2], v_sums[2];
    for (int half = 0; half < 2; half++) {
      const __m128i a = _mm_loadu_si128((const __m128i *)(row0 + 8 * x + 16 * half));
      const __m128i b = _mm_loadu_si128((const __m128i *)(row1 + 8 * x + 16 * half));
      // Four pixels of each row: the two rows added, then each pair of pixels.
      const __m128i lo = _mm_add_epi16(_mm_unpacklo_epi8(a, zero), _mm_unpacklo_epi8(b, zero));
      const __m128i hi = _mm_add_epi16(_mm_unpackhi_epi8(a, zero), _mm_unpackhi_epi8(b, zero));
      const __m128i sums = _mm_unpacklo_epi64(_mm_add_epi16(lo, _mm_srli_si128(lo, 8)),
                                              _mm_add_epi16(hi, _mm_srli_si128(hi, 8)));
      const __m128 pu = _mm_castsi128_ps(_mm_madd_epi16(sums, u_weights));
      const __m128 pv = _mm_castsi128_ps(_mm_madd_epi16(sums, v_weights));
      // Each sample's two partial sums, side by side: add the even and odd lanes.
      const __m128i u_pairs = _mm_castps_si128(_mm_shuffle_ps(pu, pv, _MM_SHUFFLE(2, 0, 2, 0)));
      const __m128i v_pairs = _mm_castps_si128(_mm_shuffle_ps(pu, pv, _MM_SHUFFLE(3, 1, 3, 1)));
      const __m128i total = _mm_add_epi32(u_pairs, v_pairs);  // U0 U1 V0 V1
      const __m128i shifted = _mm_srai_epi32(_mm_add_epi32(total, rounding), 18);
      u_sums[half] = shifted;
      v_sums[half] = _mm_srli_si128(shifted, 8);
    }
    // U0 U1 (V0 V1) of each half, then all four.
    const __m128i us = _mm_unpacklo_epi64(u_sums[0], u_sums[1]);
    const __m128i vs = _mm_unpacklo_epi64(v_sums[0], v_sums[1]);
    const __m128i packed = _mm_packus_epi16(_mm_packs_epi32(us, vs), zero);
    const int32_t u4 = _mm_cvtsi128_si32(packed), v4 = _mm_cvtsi128_si32(_mm_srli_si128(packed, 4));
    memcpy(u + x, &u4, 4);
    memcpy(v + x, &v4, 4);
  }
  return x;
}
#endif

static void mode_costs_scalar(const uint8_t *const sources[2], int stride, int size, int planes,
                              const uint8_t *const above[2], const uint8_t *const left[2], int has_above,
                              int has_left, int costs[4]);

// The SSE2 form of a kernel where `vector` is set (a constant where it is used, so that each
// caller is compiled once for each form, with the kernels inlined), else the plain one.
#if defined(__SSE2__)
#define KERNEL(name) (vector ? name##_sse2 : name##_scalar)
#else
#define KERNEL(name) name##_scalar
#endif

// ---------------------------------------------------------------------------------------------
// Whole-block prediction. The edges are a decoder's: 127 above the top row (the corner too), 129
// left of the left column (the corner too, below the top row).

// The DC prediction's value: the mean of the edges there are, or 128.
static int dc_value(int size, const uint8_t *above, const uint8_t *left, int has_above, int has_left) {
  int sum = 0;
  const int shift = size == 16 ? 4 : 3;
  if (has_above)
    for (int i = 0; i < size; i++) sum += above[1 + i];
  if (has_left)
    for (int i = 0; i < size; i++) sum += left[i];
  if (has_above && has_left) return (sum + size) >> (shift + 1);
  if (has_above || has_left) return (sum + (size >> 1)) >> shift;
  return 128;
}

// `above` is the corner then `size` pixels; `left` is `size` pixels.
static void predict(uint8_t *out, int size, int mode, const uint8_t *above, const uint8_t *left,
                    int has_above, int has_left) {
  switch (mode) {
  case mode_dc:
    memset(out, dc_value(size, above, left, has_above, has_left), (size_t)(size * size));
    break;
  case mode_v:
    for (int y = 0; y < size; y++) memcpy(out + y * size, above + 1, (size_t)size);
    break;
  case mode_h:
    for (int y = 0; y < size; y++) memset(out + y * size, left[y], (size_t)size);
    break;
  default:
    for (int y = 0; y < size; y++) {
      const int base = left[y] - above[0];
      for (int x = 0; x < size; x++) out[y * size + x] = clip_pixel(base + above[1 + x]);
    }
    break;
  }
}

static int sad_scalar(const uint8_t *source, int stride, const uint8_t *prediction, int size) {
  int sum = 0;
  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++) {
      const int d = source[y * stride + x] - prediction[y * size + x];
      sum += d < 0 ? -d : d;
    }
  return sum;
}

// Gathers the edges of a block (from its plane's reconstruction so far): the row above with its
// corner, and the column left.
static void gather_edges(const uint8_t *block, int stride, int has_above, int has_left, int size,
                         uint8_t *above, uint8_t *left) {
  if (!has_above) {
    memset(above, 127, (size_t)size + 1);
  } else {
    memcpy(above + 1, block - stride, (size_t)size);
    above[0] = has_left ? block[-stride - 1] : 129;
  }
  if (!has_left) {
    memset(left, 129, (size_t)size);
  } else {
    for (int i = 0; i < size; i++) left[i] = block[i * stride - 1];
  }
}

// The sums of absolute differences between the source and each mode's prediction (DC, TM, V, H),
// over `planes` planes.
static void mode_costs_scalar(const uint8_t *const sources[2], int stride, int size, int planes,
                              const uint8_t *const above[2], const uint8_t *const left[2], int has_above,
                              int has_left, int costs[4]) {
  uint8_t candidate[256];
  for (int mode = 0; mode < 4; mode++) {
    costs[mode] = 0;
    for (int p = 0; p < planes; p++) {
      predict(candidate, size, mode, above[p], left[p], has_above, has_left);
      costs[mode] += sad_scalar(sources[p], stride, candidate, size);
    }
  }
}

// Chooses the mode whose prediction is closest to the source (the first of the closest), and leaves
// its prediction in `out` (256 bytes a plane).
static inline __attribute__((always_inline)) int choose_mode(
    const uint8_t *const sources[2], int stride, int size, int planes, const uint8_t *const above[2],
    const uint8_t *const left[2], int has_above, int has_left, uint8_t *out, const int vector) {
  int costs[4];
  KERNEL(mode_costs)(sources, stride, size, planes, above, left, has_above, has_left, costs);
  int best = mode_dc;
  for (int mode = 1; mode < 4; mode++)
    if (costs[mode] < costs[best]) best = mode;
  for (int p = 0; p < planes; p++) predict(out + p * 256, size, best, above[p], left[p], has_above, has_left);
  return best;
}

// ---------------------------------------------------------------------------------------------
// Macroblocks' levels, their tokens (libwebp's PutCoeffs), and probabilities fitted to them.

// One block type's probabilities: [band][context][decision].
typedef const uint8_t (*Probabilities)[3][11];

typedef struct {
  int16_t levels[25][16];  // Y2, the 16 luma blocks, 4 U, 4 V (zigzag order)
  int8_t last[25];         // the index of each block's last non-zero level, or -1
  uint8_t luma_mode, chroma_mode;
} MacroblockLevels;

// The block types of the token probabilities.
enum { type_luma_ac = 0, type_y2 = 1, type_chroma = 2 };

// How often each token class (zero, one, two, three, four, 5-6, 7-10, 11-18, 19-34, 35-66, 67 and
// more) was coded in each band and context, and how often the end of a block was (0) or was not (1)
// coded where it could have been.
typedef struct {
  uint32_t classes[4][8][3][12];
  uint32_t ends[4][8][3][2];
} Statistics;

static const uint8_t kClass[68] = {0, 1, 2, 3, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8,
                                   8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9,
                                   9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 10};
static const uint8_t kContextAfter[12] = {0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2};

// Each block of a macroblock in coding order (Y2, the 16 luma blocks, 4 U, 4 V): its type, the
// index of its first coded level, and its places in the edges of contexts.
static const uint8_t kBlockType[25] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                       0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2};
static const uint8_t kBlockFirst[25] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                        1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0};
static const uint8_t kBlockTop[25] = {8, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3,
                                      0, 1, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7};
static const uint8_t kBlockLeft[25] = {8, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                       3, 3, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};

// Counts the decisions `code_macroblock` codes for one block; returns whether it has a non-zero
// level.
static int count_levels(Statistics *statistics, int type, int context, int first, int last,
                        const int16_t levels[16]) {
  statistics->ends[type][first][context][last >= 0]++;
  if (last < 0) return 0;
  int band = first;
  for (int n = first; n <= last;) {
    const int level = levels[n++];
    const int magnitude = level < 0 ? -level : level;
    const int k = kClass[magnitude < 67 ? magnitude : 67];
    statistics->classes[type][band][context][k]++;
    band = kBands[n];
    context = kContextAfter[k];
    if (k != 0 && n < 16) statistics->ends[type][band][context][n <= last]++;
  }
  return 1;
}

// Counts a macroblock's decisions, with the contexts from and into the edges `top` and `left`
// (whether the blocks above and left have a non-zero level: 0-3 luma columns or rows, 4-5 U, 6-7 V,
// 8 Y2).
static void count_macroblock(Statistics *statistics, const MacroblockLevels *mb, uint8_t top[9],
                             uint8_t left[9]) {
  for (int block = 0; block < 25; block++) {
    const int t = kBlockTop[block], l = kBlockLeft[block];
    top[t] = left[l] = (uint8_t)count_levels(statistics, kBlockType[block], top[t] + left[l],
                                             kBlockFirst[block], mb->last[block], mb->levels[block]);
  }
}

// Moves the edges `top` and `left` past a macroblock, as counting or coding it would.
static void skip_macroblock(const MacroblockLevels *mb, uint8_t top[9], uint8_t left[9]) {
  for (int block = 0; block < 25; block++)
    top[kBlockTop[block]] = left[kBlockLeft[block]] = mb->last[block] >= 0;
}

// The boolean coder's state, apart from its writer (so that an inlined caller keeps it in registers).
typedef struct {
  uint32_t range;
  int32_t value;
  int pending;
} CoderState;

// Codes the level at index `*at` of a block whose last non-zero level is at `last` (libwebp's
// PutCoeffs, one level), with the coder's state in `*state`; moves `*at` and `*probabilities`
// on. Returns whether the block is done (its end coded, or its 16th level). Inlined where it is used,
// so that the state stays in registers.
static inline __attribute__((always_inline)) int code_level(BoolWriter *writer, CoderState *state,
                                                           Probabilities bands, const int16_t *levels,
                                                           int last, int *at, const uint8_t **probabilities) {
  uint32_t range = state->range;
  int32_t value = state->value;
  int pending = state->pending;
  int n = *at, done = 0;
  const uint8_t *p = *probabilities;
  const int level = levels[n++];
  const int negative = level < 0;
  int v = negative ? -level : level;
  PUT_BIT(writer, v != 0, p[1]);
  if (v == 0) {
    p = bands[kBands[n]][0];
    goto next;
  }
  PUT_BIT(writer, v > 1, p[2]);
  if (v == 1) {
    p = bands[kBands[n]][1];
  } else {
    PUT_BIT(writer, v > 4, p[3]);
    if (v <= 4) {
      PUT_BIT(writer, v != 2, p[4]);
      if (v != 2) PUT_BIT(writer, v == 4, p[5]);
    } else {
      PUT_BIT(writer, v > 10, p[6]);
      if (v <= 10) {
        PUT_BIT(writer, v > 6, p[7]);
        if (v <= 6) {
          PUT_BIT(writer, v == 6, 159);
        } else {
          PUT_BIT(writer, v >= 9, 165);
          PUT_BIT(writer, !(v & 1), 145);
        }
      } else {
        // Categories 3 to 6 (11-18, 19-34, 35-66, 67 and more), each branch with its bits as
        // constants (a table of them was 2 % slower), then the level's extra bits.
        int mask;
        const uint8_t *table;
        if (v < 3 + (8 << 1)) {
          PUT_BIT(writer, 0, p[8]);
          PUT_BIT(writer, 0, p[9]);
          v -= 3 + (8 << 0);
          mask = 1 << 2;
          table = kCat3;
        } else if (v < 3 + (8 << 2)) {
          PUT_BIT(writer, 0, p[8]);
          PUT_BIT(writer, 1, p[9]);
          v -= 3 + (8 << 1);
          mask = 1 << 3;
          table = kCat4;
        } else if (v < 3 + (8 << 3)) {
          PUT_BIT(writer, 1, p[8]);
          PUT_BIT(writer, 0, p[10]);
          v -= 3 + (8 << 2);
          mask = 1 << 4;
          table = kCat5;
        } else {
          PUT_BIT(writer, 1, p[8]);
          PUT_BIT(writer, 1, p[10]);
          v -= 3 + (8 << 3);
          mask = 1 << 10;
          table = kCat6;
        }
        for (; mask; mask >>= 1) PUT_BIT(writer, (v & mask) != 0, *table++);
      }
    }
    p = bands[kBands[n]][2];
  }
  PUT_HALF(writer, negative);
  if (n == 16) {
    done = 1;
  } else {
    PUT_BIT(writer, n <= last, p[0]);
    done = n > last;
  }
next:
  *at = n;
  *probabilities = p;
  state->range = range;
  state->value = value;
  state->pending = pending;
  return done || n == 16;
}

// Codes a block's first decision (whether it has a non-zero level) at `context`; returns whether it
// has one, and leaves in `*p` the probabilities of its first level.
static inline __attribute__((always_inline)) int code_block_start(BoolWriter *writer, CoderState *state,
                                                                 Probabilities bands, int first, int context,
                                                                 int last, const uint8_t **p) {
  uint32_t range = state->range;
  int32_t value = state->value;
  int pending = state->pending;
  *p = bands[first][context];
  PUT_BIT(writer, last >= 0, (*p)[0]);
  state->range = range;
  state->value = value;
  state->pending = pending;
  return last >= 0;
}

// Codes a macroblock's levels (libwebp's PutCoeffs for each block), with the contexts from and into
// the edges `top` and `left`. Block b's levels are levels[b][first] to levels[b][last[b]].
static void code_macroblock(BoolWriter *writer, const uint8_t (*probabilities)[8][3][11],
                            const int8_t last_of[25], const int16_t *const levels_of[25], uint8_t top[9],
                            uint8_t left[9]) {
  CoderState state = {writer->range, writer->value, writer->pending};
  for (int block = 0; block < 25; block++) {
    const int last = last_of[block], first = kBlockFirst[block];
    Probabilities bands = probabilities[kBlockType[block]];
    const uint8_t *p;
    const int context = top[kBlockTop[block]] + left[kBlockLeft[block]];
    top[kBlockTop[block]] = left[kBlockLeft[block]] = last >= 0;
    if (!code_block_start(writer, &state, bands, first, context, last, &p)) continue;
    int n = first;
    while (!code_level(writer, &state, bands, levels_of[block], last, &n, &p)) {
    }
  }
  writer->range = state.range;
  writer->value = state.value;
  writer->pending = state.pending;
}

// The levels of the whole frame, kept between the passes: for each macroblock its 25 blocks' last
// indices (and a byte of padding), then each block's levels from its first coded one to its last.
// Most blocks have a few levels, so this is a fifth of the macroblocks' whole arrays.
enum { kept_header = 26, kept_most = kept_header + 2 * 384, kept_slack = 32 };

static uint8_t *keep_macroblock(uint8_t *kept, const MacroblockLevels *mb) {
  memcpy(kept, mb->last, 25);
  kept[25] = 0;
  kept += kept_header;
  for (int block = 0; block < 25; block++) {
    const int first = kBlockFirst[block], last = mb->last[block];
    // All 16 levels copied (a fixed size, no call), the pointer moved by the ones kept; the buffer
    // has kept_slack bytes past its last macroblock for the last copy.
    memcpy(kept, &mb->levels[block][first], 32);
    if (last >= first) kept += (size_t)(last - first + 1) * 2;
  }
  return kept;
}

// Reads back a kept macroblock: its last indices, and where each block's levels are (as indexed
// from 0); returns where the next macroblock is.
static const uint8_t *unkeep_macroblock(const uint8_t *kept, const int8_t **last_of,
                                        const int16_t *levels_of[25]) {
  *last_of = (const int8_t *)kept;
  const int16_t *levels = (const int16_t *)(const void *)(kept + kept_header);
  for (int block = 0; block < 25; block++) {
    const int first = kBlockFirst[block], last = (*last_of)[block];
    levels_of[block] = levels - first;
    if (last >= first) levels += last - first + 1;
  }
  return (const uint8_t *)levels;
}

// The cost of a bit at probability p / 256, in 1/256 bits: kBitCost[p] for a zero, kBitCost[256 - p]
// for a one.
static const uint16_t kBitCost[257] = {
    4096, 2048, 1792, 1642, 1536, 1454, 1386, 1329, 1280, 1236, 1198, 1162, 1130, 1101, 1073, 1048,
    1024, 1002, 980, 961, 942, 924, 906, 890, 874, 859, 845, 831, 817, 804, 792, 780,
    768, 757, 746, 735, 724, 714, 705, 695, 686, 676, 668, 659, 650, 642, 634, 626,
    618, 611, 603, 596, 589, 582, 575, 568, 561, 555, 548, 542, 536, 530, 524, 518,
    512, 506, 501, 495, 490, 484, 479, 474, 468, 463, 458, 453, 449, 444, 439, 434,
    430, 425, 420, 416, 412, 407, 403, 399, 394, 390, 386, 382, 378, 374, 370, 366,
    362, 358, 355, 351, 347, 343, 340, 336, 333, 329, 326, 322, 319, 315, 312, 309,
    305, 302, 299, 296, 292, 289, 286, 283, 280, 277, 274, 271, 268, 265, 262, 259,
    256, 253, 250, 247, 245, 242, 239, 236, 234, 231, 228, 226, 223, 220, 218, 215,
    212, 210, 207, 205, 202, 200, 197, 195, 193, 190, 188, 185, 183, 181, 178, 176,
    174, 171, 169, 167, 164, 162, 160, 158, 156, 153, 151, 149, 147, 145, 143, 140,
    138, 136, 134, 132, 130, 128, 126, 124, 122, 120, 118, 116, 114, 112, 110, 108,
    106, 104, 102, 101, 99, 97, 95, 93, 91, 89, 87, 86, 84, 82, 80, 78,
    77, 75, 73, 71, 70, 68, 66, 64, 63, 61, 59, 58, 56, 54, 53, 51,
    49, 48, 46, 44, 43, 41, 40, 38, 36, 35, 33, 32, 30, 28, 27, 25,
    24, 22, 21, 19, 18, 16, 15, 13, 12, 10, 9, 7, 6, 4, 3, 1,
    0,
};

// For each decision, the probability that codes its counts in the fewest bits, where that saves
// more than sending it costs (a flag at the format's update probability, and 8 bits). The counts are
// of one macroblock row in `scale`.
static void choose_probabilities(const Statistics *statistics, uint64_t scale, uint8_t chosen[4][8][3][11]) {
  for (int t = 0; t < 4; t++)
    for (int b = 0; b < 8; b++)
      for (int c = 0; c < 3; c++) {
        const uint32_t *k = statistics->classes[t][b][c];
        const uint64_t sum_7_10 = (uint64_t)k[7] + k[8] + k[9] + k[10];
        const uint64_t sum_5_10 = k[5] + k[6] + sum_7_10;
        const uint64_t sum_2_10 = (uint64_t)k[2] + k[3] + k[4] + sum_5_10;
        // Each decision's counts of zeros and ones (put_levels's p[0] to p[10]).
        const uint64_t zeros[11] = {statistics->ends[t][b][c][0],
                                    k[0],
                                    k[1],
                                    (uint64_t)k[2] + k[3] + k[4],
                                    k[2],
                                    k[3],
                                    (uint64_t)k[5] + k[6],
                                    k[5],
                                    (uint64_t)k[7] + k[8],
                                    k[7],
                                    k[9]};
        const uint64_t ones[11] = {statistics->ends[t][b][c][1], (uint64_t)k[1] + sum_2_10, sum_2_10,
                                   sum_5_10, (uint64_t)k[3] + k[4], k[4], sum_7_10, k[6],
                                   (uint64_t)k[9] + k[10], k[8], k[10]};
        for (int i = 0; i < 11; i++) {
          const int old = kDefaultProbabilities[t][b][c][i];
          const int update = kUpdateProbabilities[t][b][c][i];
          chosen[t][b][c][i] = (uint8_t)old;
          const uint64_t total = zeros[i] + ones[i];
          if (total == 0) continue;
          int fitted = (int)(255 - ones[i] * 255 / total);
          fitted = fitted < 1 ? 1 : fitted;
          const uint64_t old_cost =
              scale * (zeros[i] * kBitCost[old] + ones[i] * kBitCost[256 - old]) + kBitCost[update];
          const uint64_t new_cost = scale * (zeros[i] * kBitCost[fitted] + ones[i] * kBitCost[256 - fitted]) +
                                    kBitCost[256 - update] + 8 * 256;
          if (new_cost < old_cost) chosen[t][b][c][i] = (uint8_t)fitted;
        }
      }
}

// ---------------------------------------------------------------------------------------------
// Colour conversion (libwebp's VP8RGBToY, VP8RGBToU and VP8RGBToV, BT.601 limited range).

static inline uint8_t to_y(int r, int g, int b) {
  return (uint8_t)((16839 * r + 33059 * g + 6420 * b + (1 << 15) + (16 << 16)) >> 16);
}

// r, g and b are sums of four pixels.
static inline uint8_t to_chroma(int sum) {
  const int v = (sum + (1 << 17) + (128 << 18)) >> 18;
  return (uint8_t)((v & ~0xff) == 0 ? v : v < 0 ? 0 : 255);
}

// Fills the planes of macroblock row `mb_y` (16 rows of luma from `luma`, 8 of chroma from `u` and
// `v`) from the pixels, with the last column and row repeated into the padding.
static void convert_row(const uint8_t *pixels, size_t stride, int width, int height, uint8_t *luma,
                        int luma_stride, uint8_t *u, uint8_t *v, int chroma_stride, int mb_y, int vector) {
  (void)vector;
  const int chroma_width = (width + 1) / 2, chroma_height = (height + 1) / 2;
  const int luma_end = 16 * mb_y + 16 < height ? 16 * mb_y + 16 : height;
  for (int y = 16 * mb_y; y < luma_end; y++) {
    const uint8_t *row = pixels + (size_t)y * stride;
    uint8_t *target = luma + (size_t)(y - 16 * mb_y) * luma_stride;
#if defined(__SSE2__)
    int x = vector ? convert_luma_sse2(row, target, width) : 0;
#else
    int x = 0;
#endif
    for (; x < width; x++) target[x] = to_y(row[4 * x + 2], row[4 * x + 1], row[4 * x]);
    memset(target + width, target[width - 1], (size_t)(luma_stride - width));
  }
  for (int y = luma_end; y < 16 * mb_y + 16; y++)
    memcpy(luma + (size_t)(y - 16 * mb_y) * luma_stride,
           luma + (size_t)(height - 1 - 16 * mb_y) * luma_stride, (size_t)luma_stride);
  const int chroma_end = 8 * mb_y + 8 < chroma_height ? 8 * mb_y + 8 : chroma_height;
  for (int y = 8 * mb_y; y < chroma_end; y++) {
    const uint8_t *row0 = pixels + (size_t)(2 * y) * stride;
    const uint8_t *row1 = 2 * y + 1 < height ? row0 + stride : row0;
    uint8_t *u_row = u + (size_t)(y - 8 * mb_y) * chroma_stride;
    uint8_t *v_row = v + (size_t)(y - 8 * mb_y) * chroma_stride;
#if defined(__SSE2__)
    int x = vector ? convert_chroma_sse2(row0, row1, u_row, v_row, width) : 0;
#else
    int x = 0;
#endif
    for (; x < chroma_width; x++) {
      const int x0 = 2 * x, x1 = 2 * x + 1 < width ? 2 * x + 1 : 2 * x;
      const int b = row0[4 * x0] + row0[4 * x1] + row1[4 * x0] + row1[4 * x1];
      const int g = row0[4 * x0 + 1] + row0[4 * x1 + 1] + row1[4 * x0 + 1] + row1[4 * x1 + 1];
      const int r = row0[4 * x0 + 2] + row0[4 * x1 + 2] + row1[4 * x0 + 2] + row1[4 * x1 + 2];
      u_row[x] = to_chroma(-9719 * r - 19081 * g + 28800 * b);
      v_row[x] = to_chroma(28800 * r - 24116 * g - 4684 * b);
    }
    memset(u_row + chroma_width, u_row[chroma_width - 1], (size_t)(chroma_stride - chroma_width));
    memset(v_row + chroma_width, v_row[chroma_width - 1], (size_t)(chroma_stride - chroma_width));
  }
  for (int y = chroma_end; y < 8 * mb_y + 8; y++) {
    const size_t to = (size_t)(y - 8 * mb_y) * chroma_stride;
    const size_t from = (size_t)(chroma_height - 1 - 8 * mb_y) * chroma_stride;
    memcpy(u + to, u + from, (size_t)chroma_stride);
    memcpy(v + to, v + from, (size_t)chroma_stride);
  }
}

// What the analysis of a macroblock reads and writes: its row of the planes (the source,
// reconstructed in place; the row of pixels above it is the last of the row of macroblocks
// above), and the quantizers.
typedef struct {
  uint8_t *luma, *u, *v;
  int luma_stride, chroma_stride;
  Matrix y1, y2, uv;
} Frame;

// Predicts, transforms, quantizes and reconstructs the macroblock at column mb_x of the planes' row
// (with the edge above it where `has_above`), keeping its modes and levels in `mb`.
static inline __attribute__((always_inline)) void analyse_macroblock(const Frame *frame, int mb_x,
                                                                     int has_above, MacroblockLevels *mb,
                                                                     const int vector) {
  const int luma_stride = frame->luma_stride, chroma_stride = frame->chroma_stride;
  const int has_left = mb_x > 0;
  // Luma: one 16x16 prediction, 16 transformed blocks, their DCs through the WHT.
  uint8_t *block = frame->luma + mb_x * 16;
  uint8_t above[17], left[16], prediction[2][256] __attribute__((aligned(16)));
  gather_edges(block, luma_stride, has_above, has_left, 16, above, left);
  const uint8_t *luma_sources[2] = {block, block};
  const uint8_t *luma_above[2] = {above, above}, *luma_left[2] = {left, left};
  mb->luma_mode = (uint8_t)choose_mode(luma_sources, luma_stride, 16, 1, luma_above, luma_left,
                                    has_above, has_left, prediction[0], vector);
  int16_t coefficients[16][16], dc[16], y2_in[16];
  for (int n = 0; n < 16; n++) {
    const int x = (n & 3) * 4, y = (n >> 2) * 4;
    KERNEL(forward_transform)(block + y * luma_stride + x, luma_stride, prediction[0] + y * 16 + x, 16,
                      coefficients[n]);
    dc[n] = coefficients[n][0];
    mb->last[1 + n] = (int8_t)KERNEL(quantize)(coefficients[n], mb->levels[1 + n], &frame->y1, 1);
  }
  forward_wht(dc, y2_in);
  mb->last[0] = (int8_t)KERNEL(quantize)(y2_in, mb->levels[0], &frame->y2, 0);
  inverse_wht(y2_in, dc);
  for (int n = 0; n < 16; n++) {
    const int x = (n & 3) * 4, y = (n >> 2) * 4;
    coefficients[n][0] = dc[n];
    // Most blocks have no AC level left: their inverse transform is their DC, added.
    if (mb->last[1 + n] < 1) {
      KERNEL(add_dc)(prediction[0] + y * 16 + x, 16, dc[n], block + y * luma_stride + x, luma_stride);
    } else {
      KERNEL(inverse_transform)(prediction[0] + y * 16 + x, 16, coefficients[n], block + y * luma_stride + x,
                                luma_stride);
    }
  }

  // Chroma: one 8x8 prediction for U and V together, 4 blocks each.
  const size_t chroma_offset = (size_t)mb_x * 8;
  uint8_t above_u[9], left_u[8], above_v[9], left_v[8];
  gather_edges(frame->u + chroma_offset, chroma_stride, has_above, has_left, 8, above_u, left_u);
  gather_edges(frame->v + chroma_offset, chroma_stride, has_above, has_left, 8, above_v, left_v);
  const uint8_t *chroma_sources[2] = {frame->u + chroma_offset, frame->v + chroma_offset};
  const uint8_t *chroma_above[2] = {above_u, above_v}, *chroma_left[2] = {left_u, left_v};
  mb->chroma_mode = (uint8_t)choose_mode(chroma_sources, chroma_stride, 8, 2, chroma_above,
                                      chroma_left, has_above, has_left, prediction[0], vector);
  int16_t chroma_coefficients[8][16];
  for (int n = 0; n < 8; n++) {
    uint8_t *plane_block = (uint8_t *)chroma_sources[n >> 2];
    const uint8_t *plane_prediction = prediction[n >> 2];
    const int x = (n & 1) * 4, y = ((n >> 1) & 1) * 4;
    KERNEL(forward_transform)(plane_block + y * chroma_stride + x, chroma_stride,
                      plane_prediction + y * 8 + x, 8, chroma_coefficients[n]);
    mb->last[17 + n] = (int8_t)KERNEL(quantize)(chroma_coefficients[n], mb->levels[17 + n], &frame->uv, 0);
    if (mb->last[17 + n] < 1) {
      KERNEL(add_dc)(plane_prediction + y * 8 + x, 8, chroma_coefficients[n][0],
                     plane_block + y * chroma_stride + x, chroma_stride);
    } else {
      KERNEL(inverse_transform)(plane_prediction + y * 8 + x, 8, chroma_coefficients[n],
                                plane_block + y * chroma_stride + x, chroma_stride);
    }
  }

}

__attribute__((noinline)) static void analyse_macroblock_vector(const Frame *frame, int mb_x, int has_above,
                                                                MacroblockLevels *mb) {
  analyse_macroblock(frame, mb_x, has_above, mb, 1);
}

__attribute__((noinline)) static void analyse_macroblock_scalar(const Frame *frame, int mb_x, int has_above,
                                                                MacroblockLevels *mb) {
  analyse_macroblock(frame, mb_x, has_above, mb, 0);
}

// Analyses the macroblock at column mb_x of the planes' row with the loops `vector` chooses.
static void analyse(const Frame *frame, int mb_x, int has_above, MacroblockLevels *mb, int vector) {
  if (vector) analyse_macroblock_vector(frame, mb_x, has_above, mb);
  else analyse_macroblock_scalar(frame, mb_x, has_above, mb);
}

// Makes the last row of pixels of the planes' row (reconstructed) the row above the next.
static void advance_planes(uint8_t *luma, int luma_stride, uint8_t *u, uint8_t *v, int chroma_stride) {
  memcpy(luma - luma_stride, luma + 15 * (size_t)luma_stride, (size_t)luma_stride);
  memcpy(u - chroma_stride, u + 7 * (size_t)chroma_stride, (size_t)chroma_stride);
  memcpy(v - chroma_stride, v + 7 * (size_t)chroma_stride, (size_t)chroma_stride);
}

// ---------------------------------------------------------------------------------------------
// The frame.

static void put_le32(uint8_t *target, uint32_t value) {
  target[0] = (uint8_t)value;
  target[1] = (uint8_t)(value >> 8);
  target[2] = (uint8_t)(value >> 16);
  target[3] = (uint8_t)(value >> 24);
}

// Copies the reconstructed planes of macroblock row `mb_y` into `reconstruction` (Y width x height,
// then U and V (width + 1) / 2 x (height + 1) / 2).
static void copy_reconstruction(uint8_t *reconstruction, int width, int height, const uint8_t *luma,
                                int luma_stride, const uint8_t *u, const uint8_t *v, int chroma_stride,
                                int mb_y) {
  const int chroma_width = (width + 1) / 2, chroma_height = (height + 1) / 2;
  for (int y = 16 * mb_y; y < 16 * mb_y + 16 && y < height; y++)
    memcpy(reconstruction + (size_t)y * width, luma + (size_t)(y - 16 * mb_y) * luma_stride, (size_t)width);
  uint8_t *u_target = reconstruction + (size_t)width * height;
  uint8_t *v_target = u_target + (size_t)chroma_width * chroma_height;
  for (int y = 8 * mb_y; y < 8 * mb_y + 8 && y < chroma_height; y++) {
    const size_t from = (size_t)(y - 8 * mb_y) * chroma_stride;
    memcpy(u_target + (size_t)y * chroma_width, u + from, (size_t)chroma_width);
    memcpy(v_target + (size_t)y * chroma_width, v + from, (size_t)chroma_width);
  }
}

int innerpeace_webp_encode(const uint8_t *pixels, size_t stride, int width, int height, int quality,
                           int loop_filter, int kernel_choice, uint8_t **output, size_t *size,
                           uint8_t *reconstruction) {
#if defined(__SSE2__)
  const int kernels_vector = kernel_choice != INNERPEACE_WEBP_SCALAR;
#else
  const int kernels_vector = 0;
  (void)kernel_choice;
#endif
  *output = NULL;
  *size = 0;
  if (width < 1 || height < 1 || quality < 0 || quality > 100) return INNERPEACE_WEBP_INVALID;
  if (width > maximum_side || height > maximum_side) return INNERPEACE_WEBP_TOO_LARGE;

  const int mb_width = (width + 15) >> 4, mb_height = (height + 15) >> 4;
  const int luma_stride = mb_width * 16, chroma_stride = mb_width * 8;
  // The planes of one row of macroblocks, after the last row of pixels of the row above (17 rows of
  // luma, 9 of each chroma plane): all the encoder reads besides the pixels.
  const size_t luma_size = (size_t)luma_stride * 17, chroma_size = (size_t)chroma_stride * 9;
  // Eight partitions of tokens (macroblock rows in turn) past about 3 megapixels, so that none
  // can reach the format's 16 MiB.
  const int partitions = (size_t)mb_width * mb_height > 12000 ? 8 : 1;
  const int partition_bits = partitions == 8 ? 3 : 0;

  // Up to `adaptive_limit` macroblocks (every preset; about 13 MB of levels), the levels are kept
  // and coded after the whole frame, at probabilities fitted to them; past it, at the defaults.
  const size_t macroblocks = (size_t)mb_width * mb_height;
  const int adaptive = macroblocks <= adaptive_limit;
  // The probabilities are fitted to every eighth row of a frame of 1024 macroblocks or more (og has
  // 40 rows): counting every row was a tenth of the encoder's time, and the sample's probabilities
  // cost the file 0.3 to 1.5 % (every fourth row: 0.1 to 0.9 %, for 1.025x the time).
  const int count_step = macroblocks >= 1024 ? 8 : 1;
  uint8_t *planes = malloc(luma_size + 2 * chroma_size);
  uint8_t(*top_contexts)[9] = calloc((size_t)mb_width, 9);
  uint8_t *modes = malloc(macroblocks);
  // At most kept_most bytes a macroblock; only the pages written are ever touched.
  uint8_t *kept = adaptive ? malloc(macroblocks * kept_most + kept_slack) : NULL;
  uint8_t *kept_end = kept;
  MacroblockLevels scratch;
  Statistics statistics;
  memset(&statistics, 0, sizeof statistics);
  uint8_t chosen[4][8][3][11];
  BoolWriter header = {0}, tokens[8] = {{0}};
  int result = INNERPEACE_WEBP_NO_MEMORY;
  if (planes == NULL || top_contexts == NULL || modes == NULL || (adaptive && kept == NULL)) goto done;
  if (!writer_start(&header, (size_t)mb_width * mb_height + 2048)) goto done;
  for (int p = 0; p < partitions; p++)
    if (!writer_start(&tokens[p], (size_t)width * height / 4 / partitions + 4096)) goto done;

  uint8_t *luma = planes + luma_stride, *u = planes + luma_size + chroma_stride, *v = u + chroma_size;

  const int q = kQuantizerForQuality[quality];
  const int uv_dc_delta = -2;  // libwebp's at its default spatial noise shaping (50)
  Frame frame = {.luma = luma, .u = u, .v = v, .luma_stride = luma_stride, .chroma_stride = chroma_stride};
  matrix_make(&frame.y1, kDcTable[q], kAcTable[q], 0);
  int y2_ac = kAcTable[q] * 155 / 100;
  if (y2_ac < 8) y2_ac = 8;
  matrix_make(&frame.y2, kDcTable[q] * 2, y2_ac, 1);
  int uv_q = q + uv_dc_delta;
  uv_q = uv_q < 0 ? 0 : uv_q > 117 ? 117 : uv_q;
  matrix_make(&frame.uv, kDcTable[uv_q], kAcTable[q], 2);
  int filter_level = 0;
  if (loop_filter) {
    // libwebp: the quantizer's AC step / 4, times its default filter strength (60 x 5 / 256).
    filter_level = (kAcTable[q] >> 2) * 300 / 256;
    if (filter_level < 2) filter_level = 0;
    if (filter_level > 63) filter_level = 63;
  }

  // Past `adaptive_limit`, the probabilities are fitted first, to a sample of the frame: every
  // eighth row of macroblocks, analysed after the row above it (whose levels give the sample its
  // contexts, and whose reconstruction its edges; that row itself is predicted without the one
  // above it). About a quarter of the analysis again, and no levels kept.
  const uint8_t(*probabilities)[8][3][11] = kDefaultProbabilities;
  if (!adaptive) {
    int sampled = 0;
    for (int mb_y = 1; mb_y < mb_height; mb_y += 8, sampled++) {
      memset(top_contexts, 0, (size_t)mb_width * 9);
      for (int row = mb_y - 1; row <= mb_y; row++) {
        if (row == mb_y) advance_planes(luma, luma_stride, u, v, chroma_stride);
        convert_row(pixels, stride, width, height, luma, luma_stride, u, v, chroma_stride, row,
                    kernels_vector);
        uint8_t left_contexts[9] = {0};
        for (int mb_x = 0; mb_x < mb_width; mb_x++) {
          // The upper row as a top row (no edge above), the sample below it as usual.
          analyse(&frame, mb_x, row == mb_y, &scratch, kernels_vector);
          if (row == mb_y) count_macroblock(&statistics, &scratch, top_contexts[mb_x], left_contexts);
          else skip_macroblock(&scratch, top_contexts[mb_x], left_contexts);
        }
      }
    }
    if (sampled > 0) {
      choose_probabilities(&statistics, (uint64_t)((mb_height + sampled / 2) / sampled), chosen);
      probabilities = (const uint8_t(*)[8][3][11])chosen;
    }
    memset(top_contexts, 0, (size_t)mb_width * 9);
    memset(&statistics, 0, sizeof statistics);
  }

  // Pass 1: each macroblock predicted, transformed, quantized and reconstructed, its levels kept
  // (and counted) or, past `adaptive_limit`, coded at once at the sample's probabilities.
  for (int mb_y = 0; mb_y < mb_height; mb_y++) {
    if (mb_y > 0) advance_planes(luma, luma_stride, u, v, chroma_stride);
    convert_row(pixels, stride, width, height, luma, luma_stride, u, v, chroma_stride, mb_y, kernels_vector);
    uint8_t left_contexts[9] = {0};
    for (int mb_x = 0; mb_x < mb_width; mb_x++) {
      MacroblockLevels *mb = &scratch;
      analyse(&frame, mb_x, mb_y > 0, mb, kernels_vector);
      modes[(size_t)mb_y * mb_width + mb_x] = (uint8_t)(mb->luma_mode | mb->chroma_mode << 2);
      if (adaptive) {
        if (mb_y % count_step == 0) {
          count_macroblock(&statistics, mb, top_contexts[mb_x], left_contexts);
        } else {
          skip_macroblock(mb, top_contexts[mb_x], left_contexts);
        }
        kept_end = keep_macroblock(kept_end, mb);
      } else {
        const int16_t *levels_of[25];
        for (int block = 0; block < 25; block++) levels_of[block] = mb->levels[block];
        code_macroblock(&tokens[mb_y & (partitions - 1)], probabilities, mb->last, levels_of,
                        top_contexts[mb_x], left_contexts);
      }
    }
    if (reconstruction != NULL) copy_reconstruction(reconstruction, width, height, luma, luma_stride, u, v,
                                                    chroma_stride, mb_y);
  }

  // The probabilities the kept levels are coded at, and pass 2.
  if (adaptive) {
    choose_probabilities(&statistics, (uint64_t)count_step, chosen);
    probabilities = (const uint8_t(*)[8][3][11])chosen;
    memset(top_contexts, 0, (size_t)mb_width * 9);
    const uint8_t *next = kept;
    for (int mb_y = 0; mb_y < mb_height; mb_y++) {
      uint8_t left_contexts[9] = {0};
      for (int mb_x = 0; mb_x < mb_width; mb_x++) {
        const int8_t *last_of;
        const int16_t *levels_of[25];
        next = unkeep_macroblock(next, &last_of, levels_of);
        code_macroblock(&tokens[mb_y & (partitions - 1)], probabilities, last_of, levels_of,
                        top_contexts[mb_x], left_contexts);
      }
    }
  }

  // The first partition: the frame header, then every macroblock's modes.
  put_bit(&header, 0, 128);  // colour space
  put_bit(&header, 0, 128);  // clamping required
  put_bit(&header, 0, 128);  // no segments
  put_bit(&header, 0, 128);  // the normal loop filter
  put_literal(&header, (uint32_t)filter_level, 6);
  put_literal(&header, 0, 3);  // sharpness
  put_bit(&header, 0, 128);    // no loop filter deltas
  put_literal(&header, (uint32_t)partition_bits, 2);
  put_literal(&header, (uint32_t)q, 7);
  put_signed(&header, 0, 4);  // luma DC
  put_signed(&header, 0, 4);  // Y2 DC
  put_signed(&header, 0, 4);  // Y2 AC
  put_signed(&header, uv_dc_delta, 4);
  put_signed(&header, 0, 4);  // chroma AC
  put_bit(&header, 0, 128);   // refresh entropy probabilities (one frame: either)
  for (int t = 0; t < 4; t++)
    for (int b = 0; b < 8; b++)
      for (int c = 0; c < 3; c++)
        for (int i = 0; i < 11; i++) {
          const int updated = probabilities[t][b][c][i] != kDefaultProbabilities[t][b][c][i];
          put_bit(&header, updated, kUpdateProbabilities[t][b][c][i]);
          if (updated) put_literal(&header, probabilities[t][b][c][i], 8);
        }
  put_bit(&header, 0, 128);  // every macroblock's tokens are coded (no skip flag)
  for (size_t index = 0; index < (size_t)mb_width * mb_height; index++) {
    const int luma_mode = modes[index] & 3, chroma_mode = modes[index] >> 2;
    put_bit(&header, 1, 145);  // a 16x16 prediction
    put_bit(&header, luma_mode == mode_tm || luma_mode == mode_h, 156);
    if (luma_mode == mode_tm || luma_mode == mode_h) put_bit(&header, luma_mode == mode_tm, 128);
    else put_bit(&header, luma_mode == mode_v, 163);
    put_bit(&header, chroma_mode != mode_dc, 142);
    if (chroma_mode != mode_dc) {
      put_bit(&header, chroma_mode != mode_v, 114);
      if (chroma_mode != mode_v) put_bit(&header, chroma_mode != mode_h, 183);
    }
  }

  writer_finish(&header);
  for (int p = 0; p < partitions; p++) writer_finish(&tokens[p]);
  if (header.failed) goto done;
  for (int p = 0; p < partitions; p++)
    if (tokens[p].failed) goto done;
  result = INNERPEACE_WEBP_TOO_LARGE;
  if (header.position >= maximum_partition0) goto done;
  for (int p = 0; p + 1 < partitions; p++)
    if (tokens[p].position >= maximum_partition) goto done;

  size_t frame_size = 10 + header.position + 3 * (size_t)(partitions - 1);
  for (int p = 0; p < partitions; p++) frame_size += tokens[p].position;
  const size_t file_size = 20 + frame_size + (frame_size & 1);
  if (file_size - 8 > 0xfffffffeu) goto done;
  result = INNERPEACE_WEBP_NO_MEMORY;
  uint8_t *file = malloc(file_size);
  if (file == NULL) goto done;
  memcpy(file, "RIFF", 4);
  put_le32(file + 4, (uint32_t)(file_size - 8));
  memcpy(file + 8, "WEBPVP8 ", 8);
  put_le32(file + 16, (uint32_t)frame_size);
  uint8_t *at = file + 20;
  const uint32_t tag = (1u << 4) | ((uint32_t)header.position << 5);  // key frame, version 0, shown
  at[0] = (uint8_t)tag;
  at[1] = (uint8_t)(tag >> 8);
  at[2] = (uint8_t)(tag >> 16);
  at[3] = 0x9d;
  at[4] = 0x01;
  at[5] = 0x2a;
  at[6] = (uint8_t)width;
  at[7] = (uint8_t)(width >> 8);
  at[8] = (uint8_t)height;
  at[9] = (uint8_t)(height >> 8);
  at += 10;
  memcpy(at, header.buffer, header.position);
  at += header.position;
  for (int p = 0; p + 1 < partitions; p++) {
    at[0] = (uint8_t)tokens[p].position;
    at[1] = (uint8_t)(tokens[p].position >> 8);
    at[2] = (uint8_t)(tokens[p].position >> 16);
    at += 3;
  }
  for (int p = 0; p < partitions; p++) {
    memcpy(at, tokens[p].buffer, tokens[p].position);
    at += tokens[p].position;
  }
  if (frame_size & 1) *at = 0;

  *output = file;
  *size = file_size;
  result = INNERPEACE_WEBP_OK;

done:
  free(header.buffer);
  for (int p = 0; p < 8; p++) free(tokens[p].buffer);
  free(top_contexts);
  free(modes);
  free(kept);
  free(planes);
  return result;
}
