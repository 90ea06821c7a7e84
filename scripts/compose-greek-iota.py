#!/usr/bin/env python3
"""Draws the iota subscript into the bundled EB Garamond's Greek letters that lack it.

EB Garamond 12 Italic maps ᾳ ῃ ῳ ᾼ (U+1FB3 U+1FC3 U+1FF3 U+1FBC) to glyphs with no outline, and
ῌ ῼ (U+1FCC U+1FFC) to a copy of plain Η Ω, though it has every part: the base letter and the
ypogegrammeni (`uni0345`), and it draws the same letters with accents and an iota (ᾲ ᾴ ᾷ ᾈ ...)
itself. This script fills each such glyph of a letter with ypogegrammeni or prosgegrammeni with
the base letter's outline plus `uni0345`'s outline, in a new charstring with the base letter's
advance. The iota goes where the font's own designer put it on the same letter: the offset of
the `uni0345` contour in the font's precomposed siblings (the same base letter with an accent or
a breathing and the iota), the most common one, preferring the siblings with one accent and no
breathing (ᾲ ᾴ ᾷ for ᾳ). Capitals take the subscript under the letter, as the font's ᾈ ᾘ ᾨ do.

Only those glyphs change: the script checks that every other glyph's charstring and advance
are byte for byte what they were, and it is idempotent (on the patched font it finds nothing to
do and writes nothing). Run once after updating the bundled font:

    pip install fonttools
    python3 scripts/compose-greek-iota.py Fonts/EBGaramond12-Italic.otf
    python3 scripts/empty-glyphs.py Fonts/EBGaramond12-Italic.otf  # then update emptyOutlines
"""
import collections
import io
import sys
import unicodedata

from fontTools.pens.boundsPen import BoundsPen
from fontTools.pens.recordingPen import DecomposingRecordingPen
from fontTools.pens.t2CharStringPen import T2CharStringPen
from fontTools.pens.transformPen import TransformPen
from fontTools.ttLib import TTFont

YPOGEGRAMMENI = 0x0345
# Letters with ypogegrammeni (small) or prosgegrammeni (capital), precomposed.
TARGETS = (
    list(range(0x1F80, 0x1FB0))
    + [0x1FB2, 0x1FB3, 0x1FB4, 0x1FB7, 0x1FBC]
    + [0x1FC2, 0x1FC3, 0x1FC4, 0x1FC7, 0x1FCC]
    + [0x1FF2, 0x1FF3, 0x1FF4, 0x1FF7, 0x1FFC]
)


def recording(glyphs, name):
    pen = DecomposingRecordingPen(glyphs)
    glyphs[name].draw(pen)
    return pen.value


def contours(value):
    """The recorded outline split into contours, each a list of (operator, points)."""
    result, current = [], []
    for operator, points in value:
        current.append((operator, points))
        if operator in ("closePath", "endPath"):
            result.append(current)
            current = []
    if current:
        result.append(current)
    return result


def origin(contour):
    """The first point of a contour: with the same shape, two contours differ by this offset."""
    return contour[0][1][0]


def shape(contour):
    """A contour's operators and points relative to its first point, rounded to 1/8 unit."""
    x0, y0 = origin(contour)
    return tuple(
        (operator, tuple((round((x - x0) * 8), round((y - y0) * 8)) for x, y in points))
        for operator, points in contour
    )


def decomposition(codepoint):
    """The canonical decomposition of a code point, fully applied: base letter first."""
    return [ord(c) for c in unicodedata.normalize("NFD", chr(codepoint))]


def has_ink(glyphs, name):
    pen = BoundsPen(glyphs)
    glyphs[name].draw(pen)
    return pen.bounds is not None


def iota_offset(font, glyphs, cmap, iota_shape, base_cp):
    """Where the font's own glyphs put `uni0345` on `base_cp`: the most common offset among the
    precomposed letters on that base that hold a contour of the same shape as `uni0345`, first
    among those with one accent and no breathing, else among all."""
    iota_origin = origin(contours(recording(glyphs, cmap[YPOGEGRAMMENI]))[0])
    simple, all_offsets = collections.Counter(), collections.Counter()
    for codepoint in TARGETS:
        parts = decomposition(codepoint)
        if parts[0] != base_cp or codepoint not in cmap:
            continue
        for contour in contours(recording(glyphs, cmap[codepoint])):
            if shape(contour) == iota_shape:
                x, y = origin(contour)
                offset = (round(x - iota_origin[0], 3), round(y - iota_origin[1], 3))
                all_offsets[offset] += 1
                if len(parts) == 3 and not set(parts) & {0x0313, 0x0314}:
                    simple[offset] += 1
    counts = simple or all_offsets
    if not counts:
        return None
    # Most common, ties broken by the smallest offset so the choice is deterministic.
    return max(sorted(counts), key=lambda offset: counts[offset])


def needs_iota(glyphs, cmap, codepoint, iota_shape):
    """Whether the glyph of a letter with iota is empty or draws no iota."""
    name = cmap[codepoint]
    if not has_ink(glyphs, name):
        return True
    return not any(shape(c) == iota_shape for c in contours(recording(glyphs, name)))


def main(path):
    # Two copies: `font` is read and drawn from; `out` is written, and only the glyphs that change
    # are touched in it, so every other charstring keeps its original bytes.
    with open(path, "rb") as file:
        raw = file.read()
    font = TTFont(io.BytesIO(raw))
    font_raw = TTFont(io.BytesIO(raw))
    out = TTFont(io.BytesIO(raw), recalcTimestamp=False, recalcBBoxes=False)
    cmap = font.getBestCmap()
    glyphs = font.getGlyphSet()
    top = out["CFF "].cff.topDictIndex[0]
    private = top.Private
    if YPOGEGRAMMENI not in cmap:
        sys.exit("the font has no U+0345: nothing to compose from")
    iota = cmap[YPOGEGRAMMENI]
    iota_contours = contours(recording(glyphs, iota))
    if len(iota_contours) != 1:
        sys.exit("U+0345 is not one contour: cannot find it in the precomposed letters")
    iota_shape = shape(iota_contours[0])

    plan = []
    for codepoint in TARGETS:
        if codepoint not in cmap or not needs_iota(glyphs, cmap, codepoint, iota_shape):
            continue
        parts = decomposition(codepoint)
        if parts[-1] != YPOGEGRAMMENI:
            continue
        # The base letter with its accents: the precomposed letter without the iota.
        base_text = unicodedata.normalize("NFC", "".join(chr(c) for c in parts[:-1]))
        if len(base_text) != 1 or ord(base_text) not in cmap or not has_ink(glyphs, cmap[ord(base_text)]):
            print("skipped U+%04X: no glyph for its base %r" % (codepoint, base_text))
            continue
        offset = iota_offset(font, glyphs, cmap, iota_shape, parts[0])
        if offset is None:
            print("skipped U+%04X: no sibling shows where the iota goes" % codepoint)
            continue
        plan.append((codepoint, cmap[codepoint], cmap[ord(base_text)], offset))

    if not plan:
        print("nothing to do: every letter with iota has its iota")
        return

    hmtx = out["hmtx"]
    for codepoint, name, base, offset in plan:
        width = font["hmtx"][base][0]
        encoded = None if width == private.defaultWidthX else width - private.nominalWidthX
        pen = T2CharStringPen(encoded, glyphs)
        bounds = BoundsPen(glyphs)
        for target in (pen, bounds):
            glyphs[base].draw(target)
            glyphs[iota].draw(TransformPen(target, (1, 0, 0, 1, offset[0], offset[1])))
        charstring = pen.getCharString(private=private, globalSubrs=top.GlobalSubrs)
        top.CharStrings[name] = charstring
        hmtx[name] = (width, int(round(bounds.bounds[0])))
        print("U+%04X %s = %s + %s at (%g, %g), advance %d" % (codepoint, name, base, iota, offset[0], offset[1], width))
    out.save(path)

    # Check the saved file against the original: only the planned glyphs changed, and they have ink.
    changed = {name for _, name, _, _ in plan}
    saved = TTFont(path)
    saved_strings = saved["CFF "].cff.topDictIndex[0].CharStrings
    old_strings = font_raw["CFF "].cff.topDictIndex[0].CharStrings
    for name in font_raw.getGlyphOrder():
        if name in changed:
            assert has_ink(saved.getGlyphSet(), name), name
            continue
        assert saved_strings[name].bytecode == old_strings[name].bytecode, name
        assert saved["hmtx"][name] == font_raw["hmtx"][name], name
    print("checked: %d glyphs changed, %d identical" % (len(changed), len(font_raw.getGlyphOrder()) - len(changed)))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "Fonts/EBGaramond12-Italic.otf")
