import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// Scripts without an italic tradition in upright companion serifs, a language per run, Korean
/// breaks at spaces, a fixed line height, lining figures in right-to-left text, polytonic Greek
/// with ink, and tofu counted (issue 8, item 3).
@Suite struct ScriptTests {
  /// A layout of `text` on this thread's font map, at 48 px, unwrapped.
  static func layout(_ text: String) -> TextLayout {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    let layout = TextLayout(context: context, text: text, family: FontSetup.family)
    layout.setPixelSize(48)
    return layout
  }

  /// Each line's logical height, in Pango units at the reference size.
  static func lineHeights(_ layout: TextLayout) -> [Int] {
    FontLock.withLock { unlockedLineHeights(layout) }
  }

  private static func unlockedLineHeights(_ layout: TextLayout) -> [Int] {
    var heights: [Int] = []
    guard let iterator = pango_layout_get_iter(layout.handle) else { return heights }
    defer { pango_layout_iter_free(iterator) }
    repeat {
      var logical = PangoRectangle()
      pango_layout_iter_get_line_extents(iterator, nil, &logical)
      heights.append(Int(logical.height))
    } while pango_layout_iter_next_line(iterator) != 0
    return heights
  }

  /// The glyph ids of the runs set in the file at `path`.
  static func glyphs(_ layout: TextLayout, inFile path: String) -> [UInt32] {
    FontLock.withLock { unlockedGlyphs(layout, inFile: path) }
  }

  private static func unlockedGlyphs(_ layout: TextLayout, inFile path: String) -> [UInt32] {
    var ids: [UInt32] = []
    guard let iterator = pango_layout_get_iter(layout.handle) else { return ids }
    defer { pango_layout_iter_free(iterator) }
    repeat {
      guard let run = pango_layout_iter_get_run_readonly(iterator), let font = run.pointee.item.pointee.analysis.font,
        let pattern = innerpeace_font_pattern(font)
      else { continue }
      var file: UnsafeMutablePointer<FcChar8>?
      guard FcPatternGetString(pattern, FC_FILE, 0, &file) == FcResultMatch, let file, String(cString: file) == path
      else { continue }
      let glyphs = run.pointee.glyphs.pointee
      for index in 0..<Int(glyphs.num_glyphs) { ids.append(glyphs.glyphs[index].glyph) }
    } while pango_layout_iter_next_run(iterator) != 0
    return ids
  }

  struct Companion: Sendable, CustomStringConvertible {
    let text: String
    let file: String
    let family: String
    let language: String
    var description: String { language }
  }

  static let companions: [Companion] = [
    Companion(text: "静水流深，宁静致远。", file: "NotoSerifCJK-Regular.ttc", family: "Noto Serif CJK SC", language: "zh-hans"),
    Companion(text: "静かな心で生きる。", file: "NotoSerifCJK-Regular.ttc", family: "Noto Serif CJK JP", language: "ja"),
    Companion(text: "마음의 평화를 찾아라.", file: "NotoSerifCJK-Regular.ttc", family: "Noto Serif CJK KR", language: "ko"),
    Companion(
      text: "السلام عليكم ورحمة الله", file: "NotoNaskhArabic-Regular.ttf", family: "Noto Naskh Arabic", language: "ar"),
    Companion(
      text: "שלום עולם ומלואו", file: "NotoSerifHebrew-Regular.ttf", family: "Noto Serif Hebrew", language: "he"),
    Companion(
      text: "मन की शांति ही सुख है।", file: "NotoSerifDevanagari-Regular.ttf", family: "Noto Serif Devanagari", language: "hi"),
    Companion(
      text: "ความสงบในใจคือความสุข", file: "NotoSerifThai-Regular.ttf", family: "Noto Serif Thai", language: "th"),
  ]

  /// Each script is set in its companion face, upright (roman slant, no synthetic-oblique
  /// matrix), with its language; the quote's own italic sets none of it.
  @Test(arguments: companions)
  func companionFaceIsUpright(_ companion: Companion) {
    for text in [companion.text, "Peace: \(companion.text)"] {
      let fonts = Self.layout(text).pickedFonts
      let own = fonts.filter { $0.file.hasSuffix("/" + companion.file) }
      #expect(own.count == 1, "\(text): \(fonts)")
      guard let font = own.first else { continue }
      #expect(font.family == companion.family, "\(fonts)")
      #expect(font.language == companion.language, "\(fonts)")
      #expect(font.slant == Int(FC_SLANT_ROMAN) && !font.hasMatrix, "synthetic oblique: \(fonts)")
      // Nothing else in a text of one script but the quote's own face (for Latin and marks).
      #expect(
        fonts.allSatisfy { $0 == font || $0.file == Fixtures.renderer.bundledFontPath }, "\(text): \(fonts)")
    }
  }

  /// Han in a text with kana is Japanese, with Hangul Korean, otherwise Simplified Chinese. (Pango
  /// gives a Han run tagged `ko` the language "xx", fontconfig's Korean covering Hangul only; the
  /// KR face's own default forms are the Korean ones.)
  @Test func hanFollowsTheText() {
    let cases = [
      ("心", "Noto Serif CJK SC", "zh-hans"), ("心のこと", "Noto Serif CJK JP", "ja"), ("心 마음", "Noto Serif CJK KR", nil),
      ("心 peace", "Noto Serif CJK SC", "zh-hans"),
    ]
    for (text, family, language) in cases {
      let fonts = Self.layout(text).pickedFonts.filter { $0.file.hasSuffix("NotoSerifCJK-Regular.ttc") }
      #expect(!fonts.isEmpty && fonts.allSatisfy { $0.family == family }, "\(text): \(fonts)")
      if let language { #expect(fonts.allSatisfy { $0.language == language }, "\(text): \(fonts)") }
    }
  }

  /// Korean wraps only at spaces, at any width, and Pango's own break attributes (which the line
  /// breaker reads) have no break inside a word.
  @Test func koreanBreaksOnlyAtSpaces() {
    let text = "마음의 평화를 찾아라, 오늘도 내일도 행복하게 살자. 사랑합니다 여러분"
    let layout = Self.layout(text)
    let bytes = Array(text.utf8)
    var count: Int32 = 0
    let attributes = pango_layout_get_log_attrs_readonly(layout.handle, &count)!
    var offset = 0
    for (index, scalar) in text.unicodeScalars.enumerated() {
      if index > 0 && attributes[index].is_line_break != 0 {
        #expect(bytes[offset - 1] == 0x20, "break inside a word at character \(index)")
      }
      offset += UTF8.width(scalar)
    }
    var wrapped = 0
    // From the width of the longest word up: a word wider than the line must break inside.
    for width in stride(from: 300.0, through: 1200, by: 20) {
      layout.setWidth(width)
      for line in 1..<max(1, layout.lineCount) {
        let start = Int(pango_layout_get_line_readonly(layout.handle, Int32(line))!.pointee.start_index)
        #expect(bytes[start - 1] == 0x20, "width \(width): line \(line) starts inside a word")
        wrapped += 1
      }
    }
    #expect(wrapped > 20, "\(wrapped) wrapped lines")
  }

  /// A line holding a glyph from another face is exactly as tall as a Latin line, and every line
  /// is the fixed multiple of the size.
  @Test func fallbackGlyphsKeepTheLineHeight() {
    let latin = Self.lineHeights(Self.layout("Peace comes from within"))
    #expect(latin == [128 * 1024])
    let mixed = Self.layout(
      "Peace comes from within\nPeace 静 comes\nPeace मन comes\nPeace סלאם comes\nPeace سلام comes\nPeace สงบ\nᾳ ῃ ῳ \u{0475} \u{2206}"
    )
    #expect(Self.lineHeights(mixed) == Array(repeating: 128 * 1024, count: 7))
    // A text of one companion script: every line the same, its own multiple.
    let chinese = Self.layout("静水流深\n静水流深，peace\n宁静致远。")
    #expect(Self.lineHeights(chinese) == Array(repeating: Int(1.3 * 128 * 1024), count: 3))
    let arabic = Self.layout("السلام عليكم\nسلام 1207 peace\nورحمة الله")
    #expect(Self.lineHeights(arabic) == Array(repeating: Int(1.45 * 128 * 1024), count: 3))
    let hebrew = Self.layout("שלום עולם\nשלום 1207, עולם.\nשלום")
    #expect(Self.lineHeights(hebrew) == Array(repeating: Int(1.15 * 128 * 1024), count: 3))
    // Every companion of issue 18 inside a Latin text keeps the Latin line height.
    let companions = Self.layout(
      [
        "Peace যেখানে comes", "Peace ਜਿਥੇ comes", "Peace જ્યાં comes", "Peace யாதும் comes", "Peace కృషితో comes",
        "Peace ಕೈ ಕೆಸರಾದರೆ", "Peace ഒരുമ comes", "Peace ශ්‍රේෂ්ඨ comes", "Peace ຄວາມ comes", "Peace བཀྲ་ཤིས comes",
        "Peace ကြိုးစား comes", "Peace ვინც comes", "Peace Կամաց comes", "Peace ቀስ በቀስ", "Peace ស្ត្រី comes",
        "Peace ہمت کرے comes", "Peace ᾼ Ә comes",
      ].joined(separator: "\n"))
    #expect(Self.lineHeights(companions) == Array(repeating: 128 * 1024, count: 17))
    // A text of one of them: every line the same, its own multiple, with Latin and digits.
    let scripts: [(String, Double)] = [
      ("யாதும் ஊரே\nயாதும் 1207, peace\nகேளிர்", 1.45), ("కృషితో\nకృషితో 12 peace\nనాస్తి", 1.55),
      ("བཀྲ་ཤིས\nབཀྲ་ཤིས 12 peace\nབདེ་ལེགས", 2), ("ကြိုးစား\nကြိုးစား 12 peace\nမည်။", 1.8),
      ("ვინც არ\nვინც 12, peace\nეძებს", 1.15), ("ہمت کرے\nہمت 12 peace\nنہیں سکتا", 2.2),
      ("ẮT HỌC\nPeace, ỄNH\nmore", 1.25),
    ]
    for (text, multiple) in scripts {
      let heights = Self.lineHeights(Self.layout(text))
      #expect(heights == Array(repeating: Int(multiple * 128 * 1024), count: 3), "\(text): \(heights)")
    }
    // Wrapped, not only at hard breaks.
    let thai = Self.layout("ความสงบในใจคือความสุข ความสงบในใจคือความสุข ความสงบในใจคือความสุข")
    thai.setWidth(200)
    let heights = Self.lineHeights(thai)
    #expect(heights.count > 2 && Set(heights).count == 1, "\(heights)")
  }

  /// In a right-to-left paragraph the figures are lining: 1207 never reads "I207".
  @Test func rightToLeftFiguresAreLining() {
    let bundled = Fixtures.renderer.bundledFontPath
    let oldStyleOne = Self.glyphs(Self.layout("1"), inFile: bundled)
    #expect(oldStyleOne.count == 1)
    // Latin words in a Hebrew paragraph: the italic, with lining figures.
    let hebrew = Self.layout("בשנת Peace 1")
    #expect(hebrew.isRightToLeft)
    let hebrewGlyphs = Self.glyphs(hebrew, inFile: bundled)
    #expect(!hebrewGlyphs.isEmpty && !hebrewGlyphs.contains(oldStyleOne[0]), "\(hebrewGlyphs) \(oldStyleOne)")
    // A left-to-right paragraph keeps the italic's old-style figures.
    #expect(Self.glyphs(Self.layout("In 1"), inFile: bundled).contains(oldStyleOne[0]))
    // Arabic digits are set in the Arabic face, whose figures are lining; Hebrew ones in Noto
    // Serif, upright.
    let arabic = Self.layout("في عام 1207")
    #expect(Self.glyphs(arabic, inFile: bundled).isEmpty)
    let digits = Self.layout("בשנת 1207.").pickedFonts
    #expect(digits.map(\.file).contains("/usr/share/fonts/truetype/noto/NotoSerif-Regular.ttf"), "\(digits)")
    #expect(digits.allSatisfy { $0.slant == Int(FC_SLANT_ROMAN) && !$0.hasMatrix }, "\(digits)")
  }

  /// The bundled EB Garamond draws ᾳ ῃ ῳ ᾼ ῌ ῼ itself (composed by
  /// `scripts/compose-greek-iota.py` from its own letter and ypogegrammeni), so a polytonic
  /// Greek word keeps one face: each letter, and the letter followed by a combining U+0345, is
  /// set in the bundled file, and draws its base letter plus ink below the baseline, under the
  /// letter.
  @Test func polytonicGreekKeepsOneFace() {
    let bundled = Fixtures.renderer.bundledFontPath
    let letters: [(text: String, base: String)] = [
      ("\u{1FB3}", "α"), ("\u{1FC3}", "η"), ("\u{1FF3}", "ω"), ("\u{1FBC}", "Α"), ("\u{1FCC}", "Η"),
      ("\u{1FFC}", "Ω"), ("α\u{0345}", "α"), ("ω\u{0345}", "ω"),
    ]
    for (text, base) in letters {
      let layout = Self.layout(text)
      #expect(layout.pickedFonts.map(\.file) == [bundled], "\(text)")
      #expect(layout.setRuns.allSatisfy { $0.fontFile == bundled && $0.style != .syntheticOblique }, "\(text)")
      #expect(layout.unknownGlyphCount == 0 && layout.dottedCircleCount == 0, "\(text)")
      // The iota: ink the base letter alone does not have, below the baseline and within the
      // base letter's columns; above the baseline the letter is the base letter.
      let (with, without) = (Self.mask(layout), Self.mask(Self.layout(base)))
      let columns = without.inkColumns
      var below = 0
      var above = 0
      for y in 0..<Self.maskSize {
        for x in 0..<Self.maskSize where with.pixels[y * Self.maskSize + x] > 128 {
          guard without.pixels[y * Self.maskSize + x] < 64 else { continue }
          if y > with.baseline + 1 && columns.contains(x) { below += 1 } else if y < with.baseline { above += 1 }
        }
      }
      #expect(below > 20, "\(text): \(below) pixels of iota under \(base)")
      #expect(above == 0, "\(text): \(above) pixels above the baseline that \(base) lacks")
    }
    let phrase = Self.layout("ἐν τῇ ἀρχῇ ἦν ὁ λόγος, ᾠδὴ τῷ θεῷ καὶ ᾳ ῃ ῳ ᾼ")
    #expect(Set(phrase.pickedFonts.map(\.file)) == [bundled], "\(phrase.pickedFonts)")
    #expect(phrase.setRuns.allSatisfy { $0.fontFile == bundled }, "\(phrase.setRuns)")
  }

  /// The side, in pixels, of the canvas ``mask(_:)`` draws a letter on.
  static let maskSize = 300

  /// A one-letter layout (at the reference size) drawn in 8-bit alpha at (40, 40) on a
  /// ``maskSize`` square, with the row of its baseline and the columns its ink covers.
  static func mask(_ layout: TextLayout) -> (pixels: [UInt8], baseline: Int, inkColumns: Set<Int>) {
    FontLock.withLock {
      let surface = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(maskSize), Int32(maskSize))!
      defer { cairo_surface_destroy(surface) }
      let context = cairo_create(surface)!
      cairo_move_to(context, 40, 40)
      pango_cairo_show_layout(context, layout.handle)
      cairo_destroy(context)
      cairo_surface_flush(surface)
      let stride = Int(cairo_image_surface_get_stride(surface))
      let data = cairo_image_surface_get_data(surface)!
      var pixels = [UInt8](repeating: 0, count: maskSize * maskSize)
      var columns: Set<Int> = []
      for y in 0..<maskSize {
        for x in 0..<maskSize {
          pixels[y * maskSize + x] = data[y * stride + x]
          if data[y * stride + x] > 64 { columns.insert(x) }
        }
      }
      let baseline = 40 + Int(pango_layout_get_baseline(layout.handle)) / Int(innerpeace_pango_scale)
      return (pixels, baseline, columns)
    }
  }

  /// A combining mark, vowel sign or joiner is set in the face of its base, whatever follows:
  /// every run starts and ends on a grapheme cluster boundary, and no dotted circle is drawn.
  @Test func clustersAreNeverSplit() {
    // (A mark the base's face lacks, such as U+0301 after Devanagari, still falls back to
    // another font: Pango takes a font per character.)
    for text in [
      "பி peace", "ᾳ\u{0301} peace", "Peace ശ്‍ and", "ශ්‍රේෂ්ඨ peace", "क्षि\u{0951} peace", "👍🏽 peace", "a\u{200D}b",
      "Ж\u{0301} peace", "ᾼ\u{0301} peace",
    ] {
      let layout = Self.layout(text)
      let boundaries = AllScriptsTests.clusterBoundaries(text)
      for run in layout.setRuns {
        #expect(
          boundaries.contains(run.range.lowerBound) && boundaries.contains(run.range.upperBound),
          "\(text.debugDescription): \(layout.setRuns)")
      }
      #expect(layout.dottedCircleCount == 0, "\(text.debugDescription): \(layout.setRuns)")
    }
  }

  /// Arabic script is set in Nastaliq when the text has an Urdu letter or the caller says `ur`,
  /// in Naskh otherwise.
  @Test func urduIsNastaliq() {
    #expect(Self.layout("ہمت کرے انسان").pickedFonts.map(\.family).contains("Noto Nastaliq Urdu"))
    #expect(Self.layout("الصبر مفتاح الفرج").pickedFonts.map(\.family) == ["Noto Naskh Arabic"])
    let layout = Self.layout("الصبر مفتاح الفرج")
    let list = TextAttributes.list(for: "الصبر مفتاح الفرج", language: LanguageTag("ur"))
    pango_layout_set_attributes(layout.handle, list)
    pango_attr_list_unref(list)
    #expect(layout.pickedFonts.map(\.family) == ["Noto Nastaliq Urdu"], "\(layout.pickedFonts)")
    #expect(layout.pickedFonts.allSatisfy { $0.language == "ur" })
  }

  /// Dotted circles that are in the text are not counted; ones HarfBuzz inserts are.
  @Test func dottedCirclesInTheTextAreNotCounted() {
    #expect(Self.layout("\u{25CC} peace \u{25CC}").dottedCircleCount == 0)
    #expect(Self.layout("க\u{25CC} பி").dottedCircleCount == 0)
    // A Tamil vowel sign with no base: HarfBuzz draws it on a dotted circle.
    let broken = Self.layout("peace \u{0BBF}")
    #expect(broken.dottedCircleCount == 1, "\(broken.setRuns)")
    #expect(broken.setRuns.contains { $0.dottedCircles == 1 && $0.script == "Taml" }, "\(broken.setRuns)")
  }

  /// No hyphen is ever inserted where Pango breaks inside a word.
  @Test func noInsertedHyphens() {
    let text = String(repeating: "x", count: 40)
    let layout = Self.layout(text)
    layout.setWidth(100)
    #expect(layout.lineCount > 3)
    let glyphs = Self.glyphs(layout, inFile: Fixtures.renderer.bundledFontPath)
    #expect(glyphs.count == 40, "\(glyphs.count) glyphs for 40 characters")
  }

  /// Text the line breaker marks with U+2028 at its breaks keeps its faces and languages.
  @Test func lineSeparatorsKeepTheAttributes() {
    let layout = Self.layout("静かな心 peace, 마음")
    let before = layout.pickedFonts
    layout.setText("静かな心\u{2028}peace,\u{2028}마음")
    #expect(layout.lineCount == 3)
    #expect(Set(layout.pickedFonts.map(\.family)) == Set(before.map(\.family)), "\(layout.pickedFonts)")
    #expect(Set(layout.pickedFonts.map(\.language)) == Set(before.map(\.language)))
  }

  /// Glyphs no font can draw are counted, never silent. The tofu is made of code points no font
  /// of this machine covers, asked of fontconfig at run time (the bundled font included), so
  /// the test does not depend on which fonts are installed: an unassigned code point or a
  /// private-use one may be in some font (LibreOffice's OpenSymbol and Glyphicons map U+E010).
  @Test func unknownGlyphsAreCounted() throws {
    #expect(Self.layout("Peace 静 שלום ᾳ").unknownGlyphCount == 0)
    let tofu = FontCoverage.codePointsNoFontCovers(3)
    try #require(tofu.count == 3, "every candidate code point is in some installed font")
    let none = tofu.map(String.init).joined()
    #expect(Self.layout("Peace \(none.prefix(1))").unknownGlyphCount == 1)
    // U+E001 is not tofu: the bundled font has a glyph there (a private-use ligature).
    #expect(Self.layout("\(none.prefix(2))\u{E001}\(none.suffix(1))").unknownGlyphCount == 3)
    let card = try Fixtures.renderer.render(
      CardRequest(
        preset: .custom(try CanvasSize(width: 300, height: 200)),
        quote: .text("Calm \(none.prefix(1))", author: "A \(none.suffix(1))"), seed: 1))
    #expect(card.missingGlyphs == 2)
    let clean = try Fixtures.renderer.render(
      CardRequest(preset: .custom(try CanvasSize(width: 300, height: 200)), quote: .text("Calm", author: "A"), seed: 1))
    #expect(clean.missingGlyphs == 0)
  }
}
