import Testing

@testable import InnerPeace

/// A readable measure on every shape (issue 18, item 3): on narrow cards prose comes down from the
/// largest fit to about 20-35 characters a line, verse keeps its lines whole down to half the
/// largest fit, no paragraph (or verse line before its turnover) starts with a one-word line,
/// turnovers hang the same with or without an author line, and lines avoid ending on a
/// one-letter word.
@Suite("Measure")
struct MeasureTests {
  let renderer = Fixtures.renderer

  /// The Frost stanza the issue names: four lines on `square`, not eight.
  static let frost =
    "Whose woods these are I think I know.\nHis house is in the village though;\n"
    + "He will not see me stopping here\nTo watch his woods fill up with snow."

  /// Characters on a line as set (what `scripts/measure.py` counts).
  static func length(_ line: String) -> Int { line.trimmingCharacters(in: .whitespaces).count }

  static func median(_ values: [Int]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? Double(sorted[middle]) : Double(sorted[middle - 1] + sorted[middle]) / 2
  }

  /// The fitted lines grouped by the paragraph (verse line) they set: each paragraph takes lines
  /// until they hold as many non-blank characters as it does.
  static func paragraphs(_ lines: [String], text: String) -> [[String]] {
    let squeezed = { (text: Substring) in text.unicodeScalars.filter { !$0.properties.isWhitespace }.count }
    var groups: [[String]] = []
    var remaining = lines[...]
    for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
      var group: [String] = []
      var held = 0
      let wanted = squeezed(paragraph)
      repeat {
        guard let line = remaining.popFirst() else { break }
        group.append(line)
        held += squeezed(Substring(line))
      } while held < wanted
      groups.append(group)
    }
    return groups
  }

  static func words(_ line: String) -> Int { line.split(whereSeparator: \.isWhitespace).count }

  /// The wrapped paragraphs whose first line holds one word.
  static func oneWordFirstLines(_ lines: [String], text: String) -> [[String]] {
    paragraphs(lines, text: text).filter { $0.count > 1 && words($0[0]) == 1 }
  }

  /// Whether a line ends on a one-letter word ("a", "I").
  static func endsOnOneLetterWord(_ line: String) -> Bool {
    guard let last = line.split(whereSeparator: \.isWhitespace).last,
      line.split(whereSeparator: \.isWhitespace).count > 1
    else { return false }
    return last.count == 1 && last.first!.isLetter
  }

  func fit(_ index: Int, _ preset: Preset, author: String? = nil) throws -> (
    fontSize: Int, lines: [String], text: String
  ) {
    let quote = Fixtures.catalog.quotes[index]
    let fit = try renderer.fitText(quote.text, author: author ?? quote.author, preset: preset)
    return (fit.fontSize, fit.lines, quote.text)
  }

  // MARK: Prose on narrow cards

  @Test("Quote 5 on story reaches the measure (was 'Write it on / your heart / that every / ...')")
  func quote5() throws {
    let fit = try fit(5, .story)
    #expect(Self.median(fit.lines.map(Self.length)) >= 20, "\(fit.lines) at \(fit.fontSize) px")
    #expect(fit.lines.count <= 4, "\(fit.lines)")
  }

  @Test("Quote 9 on story is two lines (was 'I love / a broad / margin to / my life.')")
  func quote9() throws {
    let fit = try fit(9, .story)
    #expect(fit.lines.count == 2, "\(fit.lines) at \(fit.fontSize) px")
  }

  @Test("Prose starts with no one-word line on story: quotes 18, 57, 12", arguments: [18, 57, 12])
  func proseFirstLine(index: Int) throws {
    let fit = try fit(index, .story)
    #expect(Self.words(fit.lines[0]) > 1, "\(fit.lines) at \(fit.fontSize) px")
  }

  /// The measure rule's bounds: never below `measureSizeShare` of the largest fit for prose (the
  /// smaller-size rule may go on from there), never below the minimum legible size.
  @Test("The measure rule stays within its bounds", arguments: [Preset.square, .story])
  func bounds(preset: Preset) throws {
    for (index, quote) in Fixtures.catalog.quotes.enumerated() {
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: quote.author, preset: preset, scan: false)
      let largest = try #require(fitted.largestFit, "quote \(index)")
      #expect(fitted.quoteSize <= largest, "quote \(index)")
      #expect(
        fitted.quoteSize
          >= TextFitter.lowestSize(largestFit: largest, geometry: preset.geometry, verse: quote.text.contains("\n")),
        "quote \(index): \(fitted.quoteSize) px, largest fit \(largest) px")
      #expect(fitted.quoteSize >= preset.geometry.minimumSize)
    }
  }

  @Test("Wide cards and classic do not aim for a measure; square, story and portrait WxH do")
  func whichShapes() throws {
    #expect(!Preset.og.geometry.aimsForMeasure)
    #expect(!Preset.classic.geometry.aimsForMeasure)
    #expect(!Preset.custom(try CanvasSize(width: 1600, height: 900)).geometry.aimsForMeasure)
    #expect(Preset.square.geometry.aimsForMeasure)
    #expect(Preset.story.geometry.aimsForMeasure)
    #expect(Preset.custom(try CanvasSize(width: 600, height: 1000)).geometry.aimsForMeasure)
  }

  // MARK: Verse

  @Test("Frost's four-line stanza on square is four lines")
  func frostStanza() throws {
    let fit = try renderer.fitText(Self.frost, author: "Robert Frost", preset: .square)
    #expect(fit.lines.count == 4, "\(fit.lines) at \(fit.fontSize) px")
  }

  @Test("Verse on story: no verse line leaves one word before its turnover (quotes 37, 8, 54)", arguments: [37, 8, 54])
  func verseTurnovers(index: Int) throws {
    let fit = try fit(index, .story)
    #expect(Self.oneWordFirstLines(fit.lines, text: fit.text).isEmpty, "\(fit.lines) at \(fit.fontSize) px")
  }

  /// Quote 76 on `classic` (the app's size, so its long verse line wraps): the turnover hangs by
  /// the same indent with the author line as without.
  @Test("Turnovers hang the same with or without the author line (quote 76 on classic)")
  func turnoverIndentWithAuthor() throws {
    let quote = Fixtures.catalog.quotes[76]
    var indents: [Double] = []
    for author in [quote.author, ""] {
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: author, preset: .classic, scan: false)
      let layout = fitted.quote
      try #require(layout.lineCount > 2, "\(layout.lineTexts)")
      let starts = (0..<layout.lineCount).map { layout.lineStart($0) }
      // The lines of the second verse line: the first flush, the rest hung.
      let groups = Self.paragraphs(layout.lineTexts, text: quote.text)
      let turnover = groups[0].count + 1
      try #require(turnover < layout.lineCount, "\(layout.lineTexts)")
      indents.append((starts[turnover] - starts[0]) / Double(fitted.quoteSize))
      #expect(starts[turnover] > starts[0] + Double(fitted.quoteSize) * 0.5, "author '\(author)': \(starts)")
    }
    // In ems: the two may be set at different sizes.
    #expect(abs(indents[0] - indents[1]) < 0.05, "indents (ems) \(indents)")
  }

  // MARK: The whole catalog

  /// On `story` and `square` the catalog's prose quotes hold a median of at least 20 characters
  /// a line (each quote's characters over its lines; 12.6 and 16.3 at the largest fit before the
  /// measure rule, as `scripts/measure.py` counts them), the lines pooled too, and no paragraph
  /// or verse line that wraps starts with a one-word line.
  @Test(
    "Catalog on narrow cards: median prose line >= 20 characters, no one-word first line",
    arguments: [Preset.story, .square])
  func catalog(preset: Preset) throws {
    var lengths: [Int] = []
    var perQuote: [Double] = []
    var found: [String] = []
    for (index, quote) in Fixtures.catalog.quotes.enumerated() {
      let fit = try renderer.fitText(quote.text, author: quote.author, preset: preset)
      guard !fit.truncated else { continue }
      if !quote.text.contains("\n") {
        lengths += fit.lines.map(Self.length)
        perQuote.append(Double(fit.lines.map(Self.length).reduce(0, +)) / Double(fit.lines.count))
      }
      for paragraph in Self.oneWordFirstLines(fit.lines, text: quote.text) {
        found.append("quote \(index): \(paragraph)")
      }
    }
    #expect(lengths.count > 200)
    let quoteMedian = perQuote.sorted()[perQuote.count / 2]
    #expect(quoteMedian >= 20, "median over quotes \(quoteMedian) at \(preset)")
    #expect(Self.median(lengths) >= 20, "median over lines \(Self.median(lengths)) at \(preset)")
    #expect(found.isEmpty, "\(found.count) one-word first lines at \(preset):\n\(found.joined(separator: "\n"))")
  }

  /// Lines ending on "a" or "I" (other than a paragraph's last): a cost, not a rule, so a few
  /// remain where the alternative is worse (9 with the cost); before it the catalog had 36 across
  /// og, square, story and classic.
  @Test("Catalog: lines rarely end on a one-letter word")
  func oneLetterEnds() throws {
    var found: [String] = []
    for preset in [Preset.og, .square, .story, .classic] {
      for (index, quote) in Fixtures.catalog.quotes.enumerated() {
        let fit = try renderer.fitText(quote.text, author: quote.author, preset: preset)
        for paragraph in Self.paragraphs(fit.lines, text: quote.text) {
          for line in paragraph.dropLast() where Self.endsOnOneLetterWord(line) {
            found.append("\(preset) quote \(index): \(paragraph)")
          }
        }
      }
    }
    #expect(found.count <= 12, "\(found.count) lines end on a one-letter word:\n\(found.joined(separator: "\n"))")
  }

  @Test("The measure counts what a reader sees: a mark or vowel sign adds nothing, an ideograph two")
  func measureCountsCharactersAsRead() {
    func length(_ text: String) -> Int { text.unicodeScalars.reduce(0) { $0 + LineBreaker.measureWeight($1) } }
    #expect(length("calm") == 4)
    #expect(length("静けさ") == 6)
    // "ക്ഷമ" (Malayalam): ക ് ഷ മ, the virama a mark: three characters, not four scalars.
    #expect(length("\u{0D15}\u{0D4D}\u{0D37}\u{0D2E}") == 3)
    // "कि" (Devanagari ka + vowel sign i), and e + combining acute: one each.
    #expect(length("\u{0915}\u{093F}") == 1)
    #expect(length("e\u{0301}") == 1)
    // A joiner is not a character.
    #expect(length("\u{0915}\u{094D}\u{200D}\u{0937}") == 2)
  }

  @Test("Verse on a wide card comes down to 70 % of its largest fit at most (quotes 8, 17, 24, 26 on og)")
  func verseOnAWideCardStaysLarge() throws {
    for index in [8, 17, 24, 26] {
      let quote = Fixtures.catalog.quotes[index]
      try #require(quote.text.contains("\n"), "quote \(index) is verse")
      let fitted = try Fixtures.renderer.fitAndScan(quote.text, author: quote.author, preset: .og, scan: false).fitted
      let largest = try #require(fitted.largestFit)
      #expect(Double(fitted.quoteSize) >= 0.7 * Double(largest), "quote \(index): \(fitted.quoteSize) of \(largest) px")
    }
  }
}
