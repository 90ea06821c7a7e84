internal import CInnerPeace

// The report's own reader of a layout's runs, kept apart so that it can be swapped for the
// pipeline's per-run reader.

extension TextLayout {
  /// The layout's runs as the report lists them: line by line, each run's text, script, language,
  /// font, style, missing glyphs and dotted circles. Runs that hold only invisible marks (the
  /// author line's directional mark, an inserted line separator) are left out.
  func reportRuns(part: TypesetReport.Run.Part) -> [TypesetReport.Run] {
    FontLock.withLock { unlockedReportRuns(part: part) }
  }

  private func unlockedReportRuns(part: TypesetReport.Run.Part) -> [TypesetReport.Run] {
    guard let textPointer = pango_layout_get_text(handle) else { return [] }
    let bytes = Array(String(cString: textPointer).utf8)
    var runs: [TypesetReport.Run] = []
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
          let report = Self.reportRun(run, bytes: bytes, part: part, line: lineIndex)
        else { continue }
        runs.append(report)
      }
    }
    return runs
  }

  /// `PANGO_GLYPH_UNKNOWN_FLAG`: a glyph no font has, the character's code point in the low bits.
  private static let unknownGlyphFlag: UInt32 = 0x1000_0000
  /// `PANGO_GLYPH_EMPTY`: nothing drawn (a line separator, say).
  private static let emptyGlyph: UInt32 = 0x0FFF_FFFF
  /// `PANGO_ANALYSIS_FLAG_IS_ELLIPSIS`.
  private static let ellipsisFlag: UInt8 = 1 << 1

  private static func reportRun(
    _ run: UnsafeMutablePointer<PangoGlyphItem>, bytes: [UInt8], part: TypesetReport.Run.Part, line: Int
  ) -> TypesetReport.Run? {
    guard let item = run.pointee.item, let glyphs = run.pointee.glyphs else { return nil }
    let analysis = item.pointee.analysis
    let start = max(0, min(Int(item.pointee.offset), bytes.count))
    let end = max(start, min(start + Int(item.pointee.length), bytes.count))
    let isEllipsis = analysis.flags & ellipsisFlag != 0
    let rawText = isEllipsis ? "\u{2026}" : String(decoding: bytes[start..<end], as: UTF8.self)
    let text = TypesetReport.visible(
      String(String.UnicodeScalarView(rawText.unicodeScalars.filter { !["\u{2028}", "\u{2029}"].contains($0) })))
    guard !text.isEmpty else { return nil }

    var file = ""
    var family = ""
    var style = TypesetReport.Run.Style.upright
    var dottedCircleGlyph: UInt32? = nil
    if let font = analysis.font {
      if let pattern = innerpeace_font_pattern(font) {
        var path: UnsafeMutablePointer<FcChar8>?
        if FcPatternGetString(pattern, FC_FILE, 0, &path) == FcResultMatch, let path { file = String(cString: path) }
        var name: UnsafeMutablePointer<FcChar8>?
        if FcPatternGetString(pattern, FC_FAMILY, 0, &name) == FcResultMatch, let name {
          family = String(cString: name)
        }
        var slant: Int32 = 0
        _ = FcPatternGetInteger(pattern, FC_SLANT, 0, &slant)
        var matrix: UnsafeMutablePointer<FcMatrix>?
        if FcPatternGetMatrix(pattern, FC_MATRIX, 0, &matrix) == FcResultMatch, let matrix,
          matrix.pointee.xy != 0 || matrix.pointee.yx != 0
        {
          style = .syntheticOblique
        } else if slant >= FC_SLANT_OBLIQUE {
          style = .slanted
        } else if slant >= FC_SLANT_ITALIC {
          style = .italic
        }
      }
      if let hbFont = pango_font_get_hb_font(font) {
        var glyph: hb_codepoint_t = 0
        if hb_font_get_nominal_glyph(hbFont, 0x25CC, &glyph) != 0 { dottedCircleGlyph = glyph }
      }
    }

    var missingCount = 0
    var missingScalars: [Unicode.Scalar] = []
    var circles = 0
    for index in 0..<Int(glyphs.pointee.num_glyphs) {
      let glyph = glyphs.pointee.glyphs[index].glyph
      if glyph == emptyGlyph { continue }
      if glyph & unknownGlyphFlag != 0 || glyph == 0 {
        missingCount += 1
        let character =
          glyph & unknownGlyphFlag != 0
          ? Unicode.Scalar(glyph & ~unknownGlyphFlag)
          : scalar(at: start + Int(glyphs.pointee.log_clusters[index]), in: bytes)
        if let character, !missingScalars.contains(character) { missingScalars.append(character) }
      } else if glyph == dottedCircleGlyph {
        circles += 1
      }
    }
    let circlesInText = text.unicodeScalars.filter { $0 == "\u{25CC}" }.count

    return TypesetReport.Run(
      part: part, line: line, text: text, script: isoCode(of: analysis.script),
      language: language(analysis.language), fontFile: file,
      family: family, style: style,
      missing: .init(
        count: missingCount, characters: missingScalars.map { String($0) },
        codePoints: missingScalars.map { "U+" + hexDigits($0.value) }),
      dottedCircles: max(0, circles - circlesInText))
  }

  /// The run's language tag; `nil` for none (Pango's "c", the C locale's, which it gives a run
  /// with no language in a process without a locale).
  private static func language(_ language: OpaquePointer?) -> String? {
    guard let language, let tag = pango_language_to_string(language) else { return nil }
    let text = String(cString: tag)
    return text == "c" || text == "posix" ? nil : text
  }

  /// The scalar whose UTF-8 starts at `offset`, if one does.
  private static func scalar(at offset: Int, in bytes: [UInt8]) -> Unicode.Scalar? {
    guard offset >= 0, offset < bytes.count else { return nil }
    var end = offset + 1
    while end < bytes.count, end < offset + 4, bytes[end] & 0xC0 == 0x80 { end += 1 }
    return String(decoding: bytes[offset..<end], as: UTF8.self).unicodeScalars.first
  }

  /// The ISO 15924 code of a Pango (GLib) script: `Latn`, `Taml`, …; `Zzzz` when it has none.
  static func isoCode(of script: UInt8) -> String {
    let tag = g_unicode_script_to_iso15924(GUnicodeScript(rawValue: .init(script)))
    guard tag != 0 else { return "Zzzz" }
    let characters = [24, 16, 8, 0].map { Character(Unicode.Scalar(UInt8(truncatingIfNeeded: tag >> $0))) }
    return String(characters)
  }
}

/// A code point as at least four upper-case hexadecimal digits.
private func hexDigits(_ value: UInt32) -> String {
  let hex = String(value, radix: 16, uppercase: true)
  return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}
