import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// The typeset report (issue 18, item 2): made only when asked, never changing the image, and
/// telling per run the script, language, font, style, missing glyphs and dotted circles.
@Suite struct TypesetReportTests {
  static let small = Preset.custom(try! CanvasSize(width: 480, height: 320))

  static func reported(_ text: String, author: String = "", preset: Preset = small) throws -> TypesetReport {
    let card = try Fixtures.renderer.render(
      CardRequest(preset: preset, quote: .text(text, author: author), seed: 1, includesReport: true))
    return try #require(card.report, "a request with includesReport has a report")
  }

  /// Latin, Hebrew and Japanese: each run in its own face, with its script and language; the
  /// runs together hold every visible character of the text; the lines are the fitter's.
  @Test func mixedScriptsAreReportedRunByRun() throws {
    let text = "Peace is here. שלום עולם 静かな心で生きる。"
    let report = try Self.reported(text, author: "Anon")
    #expect(report.width == 480 && report.height == 320 && report.preset == "480x320")
    let fitted = try Fixtures.renderer.fitText(text, author: "Anon", preset: Self.small)
    #expect(report.lines == fitted.lines)
    #expect(report.quoteSize == fitted.fontSize)
    #expect(report.authorLines == ["\u{2014} Anon"], "the author line without its directional mark")
    #expect(report.authorSize > 0)
    #expect(report.missingGlyphs == 0 && report.dottedCircles == 0, "\(report.runs)")

    let quoteRuns = report.runs.filter { $0.part == .quote }
    let joined = quoteRuns.map(\.text).joined().unicodeScalars.filter { !$0.properties.isWhitespace }
    #expect(String(String.UnicodeScalarView(joined)) == text.filter { !$0.isWhitespace }, "\(quoteRuns)")
    #expect(quoteRuns.allSatisfy { $0.line < report.lines.count })
    #expect(Set(quoteRuns.map(\.line)).count == report.lines.count, "every line has runs: \(quoteRuns)")
    for run in quoteRuns {
      let text = run.text.trimmingCharacters(in: .whitespaces)
      if text.isEmpty { continue }
      #expect(report.lines[run.line].contains(text), "\(run) on line \(report.lines[run.line])")
    }

    let latin = try #require(quoteRuns.first { $0.text.contains("Peace") })
    #expect(latin.script == "Latn")
    #expect(latin.fontFile == Fixtures.renderer.bundledFontPath)
    #expect(latin.style == .italic, "the bundled face is an italic")
    let hebrew = try #require(quoteRuns.first { $0.text.contains("שלום") })
    #expect(hebrew.script == "Hebr" && hebrew.language == "he" && hebrew.family == "Noto Serif Hebrew")
    #expect(hebrew.style == .upright)
    let japanese = quoteRuns.filter { $0.text.unicodeScalars.contains { (0x3040...0x9FFF).contains($0.value) } }
    #expect(!japanese.isEmpty)
    for run in japanese {
      #expect(["Hira", "Hani", "Jpan", "Kana"].contains(run.script), "\(run)")
      #expect(run.language == "ja" && run.family == "Noto Serif CJK JP" && run.style == .upright, "\(run)")
    }
    let author = report.runs.filter { $0.part == .author }
    #expect(author.map(\.text).joined() == "\u{2014} Anon", "the author's runs without the directional mark")
    #expect(!report.runs.contains { $0.language == "c" }, "Pango's C locale is no language")
  }

  /// The report is made only when asked, and never changes the image.
  @Test func reportIsOnlyMadeWhenAskedAndLeavesTheImageAlone() throws {
    let request = CardRequest(preset: Self.small, quote: .index(3), seed: 5)
    var asking = request
    asking.includesReport = true
    let plain = try Fixtures.renderer.render(request)
    let reported = try Fixtures.renderer.render(asking)
    #expect(plain.report == nil)
    #expect(reported.report != nil)
    #expect(plain.bytes == reported.bytes)
    // The fit alone (a batch's kept card) gives the same report.
    let quote = Fixtures.catalog.quotes[3]
    #expect(Fixtures.renderer.typesetReport(quote: quote, preset: Self.small) == reported.report)
  }

  /// Tofu is counted per run, with the characters that lack a font.
  @Test func missingGlyphsAreNamed() throws {
    // Two code points no installed font covers (U+0378 and U+E000 on most machines).
    let tofu = FontCoverage.codePointsNoFontCovers(2)
    try #require(tofu.count == 2, "every candidate code point is in some installed font")
    let report = try Self.reported("Calm \(tofu[0])", author: "A \(tofu[1])")
    #expect(report.missingGlyphs == 2, "\(report.runs)")
    func name(_ scalar: Unicode.Scalar) -> String { "U+" + String(format: "%04X", scalar.value) }
    let quote = report.runs.filter { $0.part == .quote && $0.missing.count > 0 }
    #expect(quote.map(\.missing.characters) == [[String(tofu[0])]])
    #expect(quote.map(\.missing.codePoints) == [[name(tofu[0])]])
    let author = report.runs.filter { $0.part == .author && $0.missing.count > 0 }
    #expect(author.map(\.missing.codePoints) == [[name(tofu[1])]])
  }

  /// A vowel sign with no consonant before it is drawn on a dotted circle the text does not
  /// hold; one the text does hold is not counted.
  @Test func insertedDottedCirclesAreCounted() throws {
    let broken = try Self.reported("Calm \u{0BBF}")
    #expect(broken.dottedCircles == 1, "\(broken.runs)")
    #expect(broken.runs.first { $0.text.contains("\u{0BBF}") }?.dottedCircles == 1)
    let written = try Self.reported("Calm \u{25CC} here")
    #expect(written.dottedCircles == 0, "\(written.runs)")
  }

  /// Style follows fontconfig's pattern: a shear matrix is a synthetic oblique, else the face's
  /// own slant. Checked against the picked fonts for a text whose scripts may fall back.
  @Test func styleMatchesThePickedFonts() throws {
    let text = "Peace \u{0475} শান্তি ಶಾಂತಿ யாதும் Мир 平和"
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    let layout = TextLayout(context: context, text: text, family: FontSetup.family)
    layout.setPixelSize(48)
    let picked = layout.pickedFonts
    let runs = TypesetReport.runs(of: layout, part: .quote)
    #expect(!runs.isEmpty)
    for run in runs {
      let font = try #require(
        picked.first { $0.file == run.fontFile && $0.language == run.language }, "\(run)")
      let expected: TypesetReport.Run.Style =
        font.hasMatrix
        ? .syntheticOblique
        : font.slant >= Int(FC_SLANT_OBLIQUE) || font.family.hasSuffix(" Slanted")
          ? .slanted : font.slant >= Int(FC_SLANT_ITALIC) ? .italic : .upright
      #expect(run.style == expected, "\(run) \(font)")
    }
  }

  /// Noto Serif Tamil Slanted is slanted by design though fontconfig gives it slant 0: the
  /// report calls its runs `slanted`, as the script tests do, not `upright`.
  @Test func tamilSlantedIsReportedSlanted() throws {
    guard !AllScriptsTests.installedFiles(family: "Noto Serif Tamil Slanted").isEmpty else {
      try Test.cancel("Noto Serif Tamil Slanted is not installed")
    }
    let report = try Self.reported("யாதும் ஊரே யாவரும் கேளிர்", author: "கணியன்")
    let tamil = report.runs.filter { $0.script == "Taml" }
    #expect(tamil.count >= 2 && tamil.contains { $0.part == .author }, "\(report.runs)")
    for run in tamil {
      #expect(run.family == "Noto Serif Tamil Slanted" && run.style == .slanted, "\(run)")
    }
  }

  /// ISO 15924 codes from Pango's scripts.
  @Test func scriptCodes() {
    #expect(TextLayout.isoCode(of: UInt8(G_UNICODE_SCRIPT_LATIN.rawValue)) == "Latn")
    #expect(TextLayout.isoCode(of: UInt8(G_UNICODE_SCRIPT_TAMIL.rawValue)) == "Taml")
    #expect(TextLayout.isoCode(of: UInt8(G_UNICODE_SCRIPT_COMMON.rawValue)) == "Zyyy")
  }

  /// The JSON: sorted keys, the style's hyphenated name, and it reads back equal.
  @Test func jsonRoundTrips() throws {
    let report = try Self.reported("Peace \u{E000}", author: "Me")
    let json = String(decoding: report.json, as: UTF8.self)
    #expect(json.hasSuffix("}\n"))
    #expect(json.contains("\"authorLines\" : [") && json.contains("\"fontFile\" : \"/"))
    #expect(try JSONDecoder().decode(TypesetReport.self, from: Data(report.json)) == report)
    let style = try JSONEncoder().encode([TypesetReport.Run.Style.syntheticOblique])
    #expect(String(decoding: style, as: UTF8.self) == "[\"synthetic-oblique\"]")
  }

  /// An ellipsized text reports its ellipsis as a run of its own, and `truncated`.
  @Test func truncatedTextReportsItsEllipsis() throws {
    let text = String(repeating: "Stillness speaks in every breath we take. ", count: 60)
    let report = try Self.reported(text, preset: .custom(try CanvasSize(width: 200, height: 200)))
    #expect(report.truncated)
    #expect(report.runs.contains { $0.text == "\u{2026}" }, "\(report.runs.suffix(3))")
  }
}
