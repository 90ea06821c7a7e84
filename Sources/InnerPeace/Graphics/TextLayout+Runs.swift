internal import CInnerPeace

extension TextLayout {
  /// One run of text as Pango set it: a stretch of one line in one font, script and language.
  struct SetRun: Equatable, Sendable {
    /// How the face slopes.
    enum Style: String, Sendable {
      /// A roman face, drawn as designed.
      case upright
      /// A true italic design (fontconfig's slant 100).
      case italic
      /// A slanted design (a family such as Noto Serif Tamil Slanted, or fontconfig's oblique
      /// slant 110), or an upright face slanted by a matrix (then ``SetRun/synthetic`` is set).
      case slanted
    }

    /// The run's text.
    let text: String
    /// Where the run's text lies in the layout's text: UTF-8 byte offsets.
    let range: Range<Int>
    /// The ISO 15924 code of the run's script as Pango itemized it ("Latn", "Taml", "Zyyy" for
    /// common characters Pango could not resolve).
    let script: String
    /// The language Pango gave the run ("ta", "zh-hans"; Pango's default language when the text
    /// asked for none).
    let language: String
    /// The font file the run is drawn from.
    let fontFile: String
    /// The face's (first) family name.
    let family: String
    let style: Style
    /// Whether fontconfig slants the face with a shearing matrix (a synthetic oblique): never
    /// wanted.
    let synthetic: Bool
    /// Glyphs no font could draw (tofu).
    let missingGlyphs: Int
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

  /// Pango's flag on a glyph id for a character no font has (`PANGO_GLYPH_UNKNOWN_FLAG`).
  private static let unknownGlyphFlag: UInt32 = 0x1000_0000

  private var unlockedSetRuns: [SetRun] {
    var runs: [SetRun] = []
    guard let cText = pango_layout_get_text(handle) else { return runs }
    let bytes = Array(String(cString: cText).utf8)
    guard let iterator = pango_layout_get_iter(handle) else { return runs }
    defer { pango_layout_iter_free(iterator) }
    repeat {
      guard let run = pango_layout_iter_get_run_readonly(iterator) else { continue }
      let item = run.pointee.item.pointee
      let start = max(0, min(Int(item.offset), bytes.count))
      let end = max(start, min(start + Int(item.length), bytes.count))
      let text = String(decoding: bytes[start..<end], as: UTF8.self)
      let analysis = item.analysis
      let tag = g_unicode_script_to_iso15924(GUnicodeScript(Int32(analysis.script)))
      let script = String(
        decoding: [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: tag >> $0) }.filter { $0 != 0 }, as: UTF8.self)
      let language = analysis.language.map { String(cString: pango_language_to_string($0)) } ?? ""
      var fontFile = ""
      var family = ""
      var style = SetRun.Style.upright
      var synthetic = false
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
          // A shear is a synthetic oblique; a plain scale (fontconfig's for bitmap faces such as
          // Noto Color Emoji) is not.
          var matrix: UnsafeMutablePointer<FcMatrix>?
          if FcPatternGetMatrix(pattern, FC_MATRIX, 0, &matrix) == FcResultMatch, let matrix {
            synthetic = matrix.pointee.xy != 0 || matrix.pointee.yx != 0
          }
          if slant == Int32(FC_SLANT_ITALIC) {
            style = .italic
          } else if slant == Int32(FC_SLANT_OBLIQUE) || synthetic || family.hasSuffix(" Slanted") {
            style = .slanted
          }
        }
        if let hbFont = pango_font_get_hb_font(font) {
          var glyph: hb_codepoint_t = 0
          if hb_font_get_nominal_glyph(hbFont, 0x25CC, &glyph) != 0 { dottedGlyph = glyph }
        }
      }
      let glyphs = run.pointee.glyphs.pointee
      var missing = 0
      var dotted = 0
      for index in 0..<Int(glyphs.num_glyphs) {
        let glyph = glyphs.glyphs[index].glyph
        if glyph & Self.unknownGlyphFlag != 0 {
          missing += 1
        } else if let dottedGlyph, glyph == dottedGlyph {
          // A dotted circle of the text starts its own cluster; one HarfBuzz inserts belongs to
          // the cluster of the mark it carries.
          let at = start + Int(glyphs.log_clusters[index])
          let written = at + 2 < end && bytes[at] == 0xE2 && bytes[at + 1] == 0x97 && bytes[at + 2] == 0x8C
          if !written { dotted += 1 }
        }
      }
      runs.append(
        SetRun(
          text: text, range: start..<end, script: script, language: language, fontFile: fontFile, family: family,
          style: style,
          synthetic: synthetic, missingGlyphs: missing, dottedCircles: dotted))
    } while pango_layout_iter_next_run(iterator) != 0
    return runs
  }
}
