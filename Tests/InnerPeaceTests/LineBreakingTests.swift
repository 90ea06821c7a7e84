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
      let lines = Self.lines(of: fitted.quote)
      for flaw in Self.flaws(lines) { found.append("quote \(index): \(flaw)") }
      // No word is cut between two letters: each word is whole on a line, or broken after a
      // hyphen, dash or slash of its own.
      let whole = Set(lines.flatMap { $0.split(separator: " ").map(String.init) })
      for word in quote.text.split(separator: " ").map(String.init) where !whole.contains(word) {
        if !word.contains(where: { "-\u{2010}\u{2013}\u{2014}/".contains($0) }) {
          found.append("quote \(index): \"\(word)\" is cut: \(lines)")
        }
      }
    }
    #expect(prose > 90)
    #expect(found.isEmpty, "\(found.count) flaws at \(preset):\n\(found.joined(separator: "\n"))")
  }
}

extension LineBreakingTests {
  /// The author line shrinks to fit one line down to its floor, then wraps to a second line at
  /// the floor; only what a second line cannot hold is ellipsized.
  @Test(arguments: [Preset.og, .square, .story, .classic])
  func authorLineWrapsOnlyPastItsFloor(preset: Preset) throws {
    for author in ["Henry Wadsworth Longfellow", "Marcus Aurelius Antoninus Augustus, Emperor of Rome and Stoic"] {
      let (fitted, _) = try renderer.fitAndScan(
        "Be still, and the earth will speak to you.", author: author, preset: preset, scan: false)
      let layout = try #require(fitted.author)
      let floor = preset.geometry.authorFloor(forQuoteSize: fitted.quoteSize)
      #expect(layout.lineCount <= 2, "\(author) at \(preset): \(layout.lineCount) lines")
      #expect(fitted.authorSize >= floor - 0.001)
      if layout.lineCount == 2 { #expect(abs(fitted.authorSize - floor) < 0.001, "wrapped above the floor") }
      #expect(!layout.isEllipsized)
    }
    let long = String(repeating: "Name ", count: 39) + "End"
    let (fitted, _) = try renderer.fitAndScan("Quiet.", author: long, preset: preset, scan: false)
    #expect(fitted.author?.lineCount == 2)
    #expect(fitted.author?.isEllipsized == true, "a 200-character author is ellipsized")
    #expect(fitted.truncated, "an ellipsized author line is reported as truncation")
  }
}

extension LineBreakingTests {
  /// A long URL breaks only after its own separators, never with an inserted hyphen: the lines
  /// put back together are the text.
  @Test(arguments: [Preset.og, .square, .story])
  func urlBreaksAtItsSeparators(preset: Preset) throws {
    let url = "https://example.org/calm/quiet-mind/articles?utm_source=newsletter&utm_medium=email&utm_campaign=autumn"
    let (fitted, _) = try renderer.fitAndScan("Read more at \(url)", author: "A Calm Site", preset: preset, scan: false)
    let lines = Self.lines(of: fitted.quote)
    #expect(lines.count > 1)
    #expect(lines.joined(separator: " ").replacingOccurrences(of: " ", with: "") == "Readmoreat\(url)")
    for line in lines.dropLast() where line.contains("/") || line.contains("=") {
      #expect(
        "/?&=-".contains(line.last!), "\(preset): a URL line ends inside a part: \(lines), size \(fitted.quoteSize)")
    }
  }

  /// A verse line too long for the width wraps with a hanging indent on its turnover.
  @Test func verseTurnoversHang() throws {
    let text =
      "The woods are lovely, dark and deep, but I have promises to keep, and miles to go before I sleep,\n"
      + "And miles to go before I sleep."
    let (fitted, _) = try renderer.fitAndScan(text, author: "Robert Frost", preset: .og, scan: false)
    let layout = fitted.quote
    #expect(layout.lineCount > 2)
    var starts: [Double] = []
    for index in 0..<layout.lineCount {
      starts.append(layout.lineStart(index))
    }
    #expect(starts[1] > starts[0] + Double(fitted.quoteSize) * 0.5, "turnover starts at \(starts)")
    #expect(abs(starts[layout.lineCount - 1] - starts[0]) < 1, "a new verse line starts flush: \(starts)")
  }
}
