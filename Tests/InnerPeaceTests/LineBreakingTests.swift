import Foundation
import Testing

@testable import InnerPeace

/// The line breaker, on the cards it sets: the catalog's prose at every named preset ends on no
/// stranded word and has no one-word line inside, URLs break at their own separators with no
/// hyphen added, verse turnovers hang, and the author line never wraps.
@Suite("Line breaking")
struct LineBreakingTests {
  let renderer = Fixtures.renderer

  /// The lines of a fitted quote, as drawn.
  static func lines(of layout: TextLayout) -> [String] { layout.lineTexts }

  /// Words on a line: runs between spaces (a hyphenated word, or two joined by a dash, is one).
  static func words(_ line: String) -> Int { line.split(whereSeparator: { $0 == " " }).count }

  /// The flaws a reader notices, in one paragraph's lines.
  static func flaws(_ lines: [String]) -> [String] {
    guard lines.count > 1 else { return [] }
    var flaws: [String] = []
    if words(lines[lines.count - 1]) == 1 { flaws.append("ends on one word \"\(lines[lines.count - 1])\"") }
    for line in lines.dropFirst().dropLast() where words(line) == 1 { flaws.append("one-word line \"\(line)\"") }
    return flaws
  }

  @Test(arguments: [Preset.og, .square, .story, .classic])
  func catalogProseHasNoStrandedWords(preset: Preset) throws {
    var found: [String] = []
    var prose = 0
    for (index, quote) in Fixtures.catalog.quotes.enumerated() where !quote.text.contains("\n") {
      prose += 1
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: quote.author, preset: preset, scan: false)
      for flaw in Self.flaws(Self.lines(of: fitted.quote)) { found.append("quote \(index): \(flaw)") }
    }
    #expect(prose > 90)
    #expect(found.isEmpty, "\(found.count) flaws at \(preset):\n\(found.joined(separator: "\n"))")
  }
}

extension LineBreakingTests {
  @Test(arguments: [Preset.og, .square, .story, .classic])
  func authorLineNeverWraps(preset: Preset) throws {
    for author in ["Henry Wadsworth Longfellow", "Marcus Aurelius Antoninus Augustus, Emperor of Rome and Stoic"] {
      let (fitted, _) = try renderer.fitAndScan(
        "Be still, and the earth will speak to you.", author: author, preset: preset, scan: false)
      let layout = try #require(fitted.author)
      #expect(layout.lineCount == 1, "\(author) at \(preset): \(layout.lineCount) lines")
      #expect(fitted.authorSize >= max(12, Double(preset.geometry.minimumSize) * 0.75) - 0.001)
    }
    let long = String(repeating: "Name ", count: 39) + "End"
    let (fitted, _) = try renderer.fitAndScan("Quiet.", author: long, preset: preset, scan: false)
    #expect(fitted.author?.lineCount == 1)
    #expect(fitted.author?.isEllipsized == true, "a 200-character author is ellipsized")
    #expect(fitted.truncated, "an ellipsized author line is reported as truncation")
  }
}
