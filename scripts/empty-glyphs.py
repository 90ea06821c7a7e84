#!/usr/bin/env python3
"""Lists the code points the bundled EB Garamond 12 Italic maps to a glyph with no outline.

Pango takes a mapped glyph as drawable, so these characters would vanish (ѵ ᴂ ∆, for
one). TextAttributes.swift routes them to a companion face instead; its `emptyOutlines` list
is this script's output. (Polytonic Greek ᾳ ῃ ῳ ᾼ, empty in the original file, are drawn in the
bundled one by scripts/compose-greek-iota.py: run that first.) Re-run it if the bundled font
changes:

    pip install fonttools
    python3 scripts/empty-glyphs.py Fonts/EBGaramond12-Italic.otf
"""
import sys
import unicodedata

from fontTools.pens.boundsPen import BoundsPen
from fontTools.ttLib import TTFont

font = TTFont(sys.argv[1] if len(sys.argv) > 1 else "Fonts/EBGaramond12-Italic.otf")
glyphs = font.getGlyphSet()
empty = []
for codepoint, name in sorted(font.getBestCmap().items()):
    # Spaces and format controls are meant to have no outline.
    if unicodedata.category(chr(codepoint)) in ("Zs", "Zl", "Zp", "Cf", "Cc"):
        continue
    pen = BoundsPen(glyphs)
    glyphs[name].draw(pen)
    if pen.bounds is None:
        empty.append(codepoint)
print(", ".join("0x%04X" % c for c in empty))
