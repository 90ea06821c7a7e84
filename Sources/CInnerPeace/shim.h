#ifndef INNERPEACE_SHIM_H
#define INNERPEACE_SHIM_H

// One header for every C library the core uses. Swift sees these through the
// CInnerPeace module; no C type appears in InnerPeace's public API.
#include <cairo.h>
#include <pango/pangocairo.h>
#include <pango/pangofc-font.h>
#include <pango/pangofc-fontmap.h>
#include <fontconfig/fontconfig.h>
#include <turbojpeg.h>
#include <webp/encode.h>
#include <webp/decode.h>
#include <avif/avif.h>
#include <libdeflate.h>
#include <lcms2.h>
#include <hyphen.h>

// PANGO_SCALE is a macro Swift imports as a plain Int32 only sometimes; give it a name.
static const int innerpeace_pango_scale = PANGO_SCALE;

// PangoFcFont keeps its resolved FcPattern in a struct field; the cast is a C macro.
// Used to prove which font file Pango actually picked.
static inline FcPattern *innerpeace_font_pattern(PangoFont *font) {
  if (!PANGO_IS_FC_FONT(font)) return NULL;
  return PANGO_FC_FONT(font)->font_pattern;
}

#endif
