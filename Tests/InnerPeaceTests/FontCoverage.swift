import CInnerPeace
import Testing

@testable import InnerPeace

/// Code points no font of this machine covers, asked of fontconfig at run time, so that a test of
/// tofu (glyphs no font can draw) does not depend on which fonts are installed: a private-use
/// code point, or even an unassigned one, may be in some font (LibreOffice's OpenSymbol and
/// Glyphicons map U+E010, Font Awesome U+F000 and on).
enum FontCoverage {
  /// Up to `count` code points (unassigned ones first, then private-use ones) that no font of the
  /// renderer's fontconfig set covers, the bundled font included.
  static func codePointsNoFontCovers(_ count: Int) -> [Unicode.Scalar] {
    _ = Fixtures.renderer.bundledFontPath  // the bundled font is added to the set first
    let unassigned: [UInt32] = [
      0x0378, 0x0379, 0x0380, 0x0381, 0x0382, 0x0383, 0x038B, 0x038D, 0x03A2, 0x0530, 0x0557,
    ]
    let candidates = unassigned + Array(0xE000...0xE0FF) + Array(0xF0000...0xF00FF)
    return FontLock.withLock {
      var found: [Unicode.Scalar] = []
      for value in candidates where found.count < count {
        guard let scalar = Unicode.Scalar(value), !anyFontCovers(value) else { continue }
        found.append(scalar)
      }
      return found
    }
  }

  /// Whether a font of the current fontconfig set has `codePoint` in its character set.
  private static func anyFontCovers(_ codePoint: UInt32) -> Bool {
    guard let charset = FcCharSetCreate(), let pattern = FcPatternCreate() else { return true }
    defer {
      FcCharSetDestroy(charset)
      FcPatternDestroy(pattern)
    }
    FcCharSetAddChar(charset, codePoint)
    FcPatternAddCharSet(pattern, FC_CHARSET, charset)
    let objects = FcObjectSetCreate()
    defer { FcObjectSetDestroy(objects) }
    FcObjectSetAdd(objects, FC_FILE)
    guard let fonts = FcFontList(nil, pattern, objects) else { return true }
    defer { FcFontSetDestroy(fonts) }
    return fonts.pointee.nfont > 0
  }
}
