internal import CInnerPeace

extension TextLayout {
  /// One run of text as Pango set it: a stretch of one line in one font, script and language.
  /// The one reader of a layout's runs: the script tests check it, and the typeset report
  /// (``TypesetReport``) is made from it.
  struct SetRun: Equatable, Sendable {
    /// The line of the layout the run is on, from 0.
    let line: Int
    /// The run's text (an ellipsis run: `…`, whatever text it stands for).
    let text: String
    /// Where the run's text lies in the layout's text: UTF-8 byte offsets (an ellipsis run: the
    /// text it replaces).
    let range: Range<Int>
    /// The run is the ellipsis Pango draws for text cut off.
    let isEllipsis: Bool
    /// The ISO 15924 code of the run's script as Pango itemized it ("Latn", "Taml", "Zyyy" for
    /// common characters Pango could not resolve); see ``TextLayout/isoCode(of:)``.
    let script: String
    /// The language Pango gave the run ("ta", "zh-hans"; `nil` for none); see
    /// ``TextLayout/languageTag(_:)``.
    let language: String?
    /// The font file the run is drawn from.
    let fontFile: String
    /// The face's (first) family name.
    let family: String
    /// How the face slopes; ``TypesetReport/Run/Style/syntheticOblique`` when fontconfig shears
    /// an upright face, never wanted.
    let style: TypesetReport.Run.Style
    /// Glyphs no font could draw (tofu).
    let missingGlyphs: Int
    /// The characters of those glyphs, each once, in order of appearance.
    let missingCharacters: [Unicode.Scalar]
    /// Dotted circles (U+25CC) drawn that are not in the text: HarfBuzz inserts one under a
    /// mark that has no base in its run, so each is a broken cluster. (A dotted circle of the
    /// text starts a cluster of its own; an inserted one lies in the cluster of its mark.)
    let dottedCircles: Int
  }

  /// The runs of this layout as set, line by line in visual order.
  var setRuns: [SetRun] {
    FontLock.withLock { unlockedSetRuns }
  }

  /// The dotted circles (U+25CC) drawn that are not in the text, over every run (see
  /// ``SetRun/dottedCircles``).
  var dottedCircleCount: Int {
    FontLock.withLock { unlockedSetRuns.reduce(0) { $0 + $1.dottedCircles } }
  }

  /// The files of the fonts Pango chose for the runs of this layout, in order of use, each once.
  var fontFiles: [String] {
    var files: [String] = []
    for run in setRuns where !run.fontFile.isEmpty && !files.contains(run.fontFile) { files.append(run.fontFile) }
    return files
  }

  /// The ISO 15924 code of a Pango (GLib) script: `Latn`, `Taml`, …; `Zzzz` when it has none.
  static func isoCode(of script: UInt8) -> String {
    let tag = g_unicode_script_to_iso15924(GUnicodeScript(rawValue: .init(script)))
    guard tag != 0 else { return "Zzzz" }
    let characters = [24, 16, 8, 0].map { Character(Unicode.Scalar(UInt8(truncatingIfNeeded: tag >> $0))) }
    return String(characters)
  }

  /// A run's language tag; `nil` for none (Pango's "c" or "posix", the C locale's, which it
  /// gives a run with no language in a process without a locale).
  static func languageTag(_ language: OpaquePointer?) -> String? {
    guard let language, let tag = pango_language_to_string(language) else { return nil }
    let text = String(cString: tag)
    return text == "c" || text == "posix" ? nil : text
  }

  /// How a face slopes, from fontconfig's pattern: a shearing matrix is a synthetic oblique (a
  /// plain scale, fontconfig's for bitmap faces such as Noto Color Emoji, is not); otherwise an
  /// oblique slant or a family slanted by design (Noto Serif Tamil Slanted, whose slant is 0) is
  /// slanted, an italic slant italic, anything else upright.
  static func style(slant: Int32, shears: Bool, family: String) -> TypesetReport.Run.Style {
    if shears { return .syntheticOblique }
    if slant >= Int32(FC_SLANT_OBLIQUE) || family.hasSuffix(" Slanted") { return .slanted }
    if slant >= Int32(FC_SLANT_ITALIC) { return .italic }
    return .upright
  }

  /// `PANGO_GLYPH_UNKNOWN_FLAG`: a glyph no font has, the character's code point in the low bits.
  private static let unknownGlyphFlag: UInt32 = 0x1000_0000
  /// `PANGO_GLYPH_EMPTY`: nothing drawn (a line separator, say).
  private static let emptyGlyph: UInt32 = 0x0FFF_FFFF
  /// `PANGO_ANALYSIS_FLAG_IS_ELLIPSIS`.
  private static let ellipsisFlag: UInt8 = 1 << 1

  private var unlockedSetRuns: [SetRun] {
    guard let cText = pango_layout_get_text(handle) else { return [] }
    let bytes = Array(String(cString: cText).utf8)
    var runs: [SetRun] = []
    var lineNode = pango_layout_get_lines_readonly(handle)
    var lineIndex = 0
    while let lineElement = lineNode {
      defer {
        lineNode = lineElement.pointee.next
        lineIndex += 1
      }
      guard let line = lineElement.pointee.data?.assumingMemoryBound(to: PangoLayoutLine.self) else { continue }
      var runNode = line.pointee.runs
      while let runElement = runNode {
        runNode = runElement.pointee.next
        guard let run = runElement.pointee.data?.assumingMemoryBound(to: PangoGlyphItem.self),
          let setRun = Self.setRun(run, bytes: bytes, line: lineIndex)
        else { continue }
        runs.append(setRun)
      }
    }
    return runs
  }

  private static func setRun(_ run: UnsafeMutablePointer<PangoGlyphItem>, bytes: [UInt8], line: Int) -> SetRun? {
    guard let item = run.pointee.item, let glyphs = run.pointee.glyphs else { return nil }
    let analysis = item.pointee.analysis
    let start = max(0, min(Int(item.pointee.offset), bytes.count))
    let end = max(start, min(start + Int(item.pointee.length), bytes.count))
    let isEllipsis = analysis.flags & ellipsisFlag != 0

    var fontFile = ""
    var family = ""
    var style = TypesetReport.Run.Style.upright
    var dottedGlyph: UInt32? = nil
    if let font = analysis.font {
      if let pattern = innerpeace_font_pattern(font) {
        var file: UnsafeMutablePointer<FcChar8>?
        if FcPatternGetString(pattern, FC_FILE, 0, &file) == FcResultMatch, let file {
          fontFile = String(cString: file)
        }
        var name: UnsafeMutablePointer<FcChar8>?
        if FcPatternGetString(pattern, FC_FAMILY, 0, &name) == FcResultMatch, let name {
          family = String(cString: name)
        }
        var slant: Int32 = 0
        _ = FcPatternGetInteger(pattern, FC_SLANT, 0, &slant)
        var matrix: UnsafeMutablePointer<FcMatrix>?
        let shears =
          FcPatternGetMatrix(pattern, FC_MATRIX, 0, &matrix) == FcResultMatch
          && matrix.map {
            $0.pointee.xy != 0 || $0.pointee.yx != 0
          } == true
        style = Self.style(slant: slant, shears: shears, family: family)
      }
      if let hbFont = pango_font_get_hb_font(font) {
        var glyph: hb_codepoint_t = 0
        if hb_font_get_nominal_glyph(hbFont, 0x25CC, &glyph) != 0 { dottedGlyph = glyph }
      }
    }

    var missing = 0
    var missingCharacters: [Unicode.Scalar] = []
    var dotted = 0
    for index in 0..<Int(glyphs.pointee.num_glyphs) {
      let glyph = glyphs.pointee.glyphs[index].glyph
      if glyph == emptyGlyph { continue }
      let at = start + Int(glyphs.pointee.log_clusters[index])
      if glyph & unknownGlyphFlag != 0 || glyph == 0 {
        missing += 1
        let character: Unicode.Scalar? =
          glyph & unknownGlyphFlag != 0
          ? Unicode.Scalar(glyph & ~unknownGlyphFlag) : isEllipsis ? "\u{2026}" : scalar(at: at, in: bytes)
        if let character, !missingCharacters.contains(character) { missingCharacters.append(character) }
      } else if glyph == dottedGlyph && !isEllipsis {
        // A dotted circle of the text starts its own cluster; one HarfBuzz inserts belongs to
        // the cluster of the mark it carries.
        let written = at + 2 < end && bytes[at] == 0xE2 && bytes[at + 1] == 0x97 && bytes[at + 2] == 0x8C
        if !written { dotted += 1 }
      }
    }
    return SetRun(
      line: line, text: isEllipsis ? "\u{2026}" : String(decoding: bytes[start..<end], as: UTF8.self),
      range: start..<end, isEllipsis: isEllipsis, script: isoCode(of: analysis.script),
      language: languageTag(analysis.language), fontFile: fontFile, family: family, style: style,
      missingGlyphs: missing, missingCharacters: missingCharacters, dottedCircles: dotted)
  }

  /// The scalar whose UTF-8 starts at `offset`, if one does.
  private static func scalar(at offset: Int, in bytes: [UInt8]) -> Unicode.Scalar? {
    guard offset >= 0, offset < bytes.count else { return nil }
    var end = offset + 1
    while end < bytes.count, end < offset + 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
    return String(decoding: bytes[offset..<end], as: UTF8.self).unicodeScalars.first
  }
}
