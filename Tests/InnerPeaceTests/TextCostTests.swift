import Foundation
import Testing

@testable import InnerPeace

/// The cost of the text path is bounded by the text's length, whatever the text and canvas
/// (issue 17): the line breaker's search is linear in the break opportunities and chooses the
/// same breaks as the full search over lines and points, and a fit lays the text out a bounded
/// number of times. Counted in evaluations and layouts, never timed.
@Suite("Text cost")
struct TextCostTests {
  let renderer = Fixtures.renderer

  /// The texts that cost the text path most, at the limits (as `innerpeace-bench worst` has them).
  static let worstTexts: [(name: String, text: String)] = [
    ("long word of dots", String(repeating: ".", count: Limits.maximumTextCharacters - 1)),
    ("one-letter words", String(repeating: "a ", count: Limits.maximumTextCharacters / 2 - 1) + "a"),
    ("spaces", "a" + String(repeating: " ", count: Limits.maximumTextCharacters - 2) + "b"),
    ("break after every character", String(repeating: "\u{6C38}", count: Limits.maximumTextCharacters)),
    ("URL separators", String(repeating: "a/", count: Limits.maximumTextCharacters / 2 - 1) + "a"),
  ]

  /// The extreme canvases: the largest, the widest-shortest and tallest-narrowest allowed, the
  /// smallest, and the one of the report (4096x1000).
  static let extremeCanvases: [Preset] = [(4096, 4096), (4096, 200), (200, 4096), (200, 200), (4096, 1000)].map {
    .custom(try! CanvasSize(width: $0.0, height: $0.1))
  }

  static func model(_ text: String) -> BreakModel {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    return TextLayout(context: context, text: text, family: FontSetup.family).breakModel()
  }

  /// A 4,999-dot word (every character a break opportunity) at widths from one that holds a
  /// few dozen dots to one that holds hundreds: the search makes at most `maximumLookBack + 1`
  /// cost evaluations per break opportunity. The full search made lines x points x look-back
  /// (about 10^8 at 4096x1000, 12 CPU-seconds with its word count in every evaluation).
  @Test func searchIsLinearInTheBreakOpportunities() throws {
    for (name, text) in Self.worstTexts {
      let breaker = LineBreaker(model: Self.model(text))
      let points = breaker.model.scalars.count + 1
      for width in [300.0, 1_000, 3_000, 10_000, 40_000] {
        guard let result = breaker.breaks(width: width) else { continue }
        #expect(
          result.evaluations <= (LineBreaker.maximumLookBack + 1) * points,
          "\(name) at \(width): \(result.evaluations) evaluations for \(points) points")
      }
    }
  }

  /// The search over one state per point chooses exactly the breaks the full table over lines
  /// and points chooses (same lines, same cost, same ties), for every catalog quote at widths
  /// from narrow to wide, prose and verse (with and without a turnover indent), and for URLs,
  /// CJK and mixed texts.
  @Test func searchChoosesTheFullSearchsBreaks() throws {
    var texts = Fixtures.catalog.quotes.map(\.text)
    texts += [
      "See https://example.com/a/very/long/path?with=query&and=more-parts for the whole story of it.",
      "\u{4E0D}\u{8981}\u{56E0}\u{4E3A}\u{8D70}\u{5F97}\u{592A}\u{8FDC}\u{FF0C}\u{800C}\u{5FD8}\u{8BB0}\u{4E86}"
        + "\u{4E3A}\u{4EC0}\u{4E48}\u{800C}\u{51FA}\u{53D1}\u{3002}",
      "Peace \u{5E9}\u{5DC}\u{5D5}\u{5DD} and \u{633}\u{644}\u{627}\u{645} begin with a smile, every day, everywhere.",
      String(repeating: "Go on. ", count: 40),
    ]
    var compared = 0
    for text in texts {
      // The full search knows no hyphenation: compare the two without it (no hyphen advance).
      var model = Self.model(text)
      model.hyphenAdvance = 0
      let breaker = LineBreaker(model: model)
      let natural = breaker.model.advances.reduce(0, +)
      for share in stride(from: 0.08, through: 0.9, by: 0.035) {
        for indent in text.contains("\n") ? [0.0, 64] : [0] {
          let width = (natural * share).rounded()
          let fast = breaker.breaks(width: width, indent: indent)
          let full = breaker.fullSearchBreaks(width: width, indent: indent)
          #expect(fast?.breaks == full?.breaks, "\(text.prefix(40)) at \(width), indent \(indent)")
          #expect(fast?.cost == full?.cost && fast?.lineCount == full?.lineCount)
          #expect(fast?.hasDefect == full?.hasDefect && fast?.hasWordFlaw == full?.hasWordFlaw)
          compared += 1
        }
      }
    }
    #expect(compared > 2_000)
  }

  /// Every worst text at every extreme canvas fits in a bounded number of layouts (the bound the
  /// fit tests hold ordinary texts to), whether it is set, broken or truncated.
  @Test func worstTextsTakeBoundedLayouts() throws {
    for (name, text) in Self.worstTexts {
      for preset in Self.extremeCanvases {
        let fit = try renderer.fitText(text, author: "Worst Case", preset: preset)
        #expect(fit.passes <= maximumPasses(preset), "\(name) at \(preset): \(fit.passes) layouts")
      }
    }
  }
}

extension LineBreaker {
  /// The breaks the full search finds: a table over every line count and every point, each cell
  /// tried against every earlier point that fits a line, words counted line by line. It was the
  /// breaker's own search until issue 17; kept here as the reference the fast search must match.
  func fullSearchBreaks(width: Double, indent: Double = 0) -> Result? {
    var result = Result(
      breaks: [], lineCount: 0, cost: 0, hasWordFlaw: false, hasDefect: false, wrapsAParagraph: false)
    for paragraph in paragraphs() {
      guard let set = fullSearchParagraph(paragraph, width: width, turnoverWidth: width - indent) else { return nil }
      result.breaks += set.breaks
      result.lineCount += set.breaks.count + 1
      result.cost += set.cost
      result.hasDefect = result.hasDefect || set.hasDefect
      result.hasWordFlaw = result.hasWordFlaw || set.hasWordFlaw
      result.wrapsAParagraph = result.wrapsAParagraph || !set.breaks.isEmpty
    }
    return result
  }

  private func fullSearchParagraph(_ range: Range<Int>, width: Double, turnoverWidth: Double) -> (
    breaks: [Int], cost: Double, hasDefect: Bool, hasWordFlaw: Bool
  )? {
    guard !range.isEmpty else { return ([], 0, false, false) }
    var prefix = [Double](repeating: 0, count: range.count + 1)
    for (offset, index) in range.enumerated() { prefix[offset + 1] = prefix[offset] + model.advances[index] }
    func lineWidth(_ from: Int, _ to: Int) -> Double {
      var end = to
      while end > from && model.isWhite[end - 1] { end -= 1 }
      return prefix[end - range.lowerBound] - prefix[from - range.lowerBound]
    }
    let narrowest = min(width, turnoverWidth)
    let positions = breakPositions(in: range, narrowest: narrowest, lineWidth: lineWidth)
    let points = [range.lowerBound] + positions.map(\.position) + [range.upperBound]
    let startsWord = [true] + positions.map(\.startsWord) + [true]
    let cuts = Set(positions.filter(\.cutsWord).map(\.position))
    let total = points.count
    var lines = 1
    var lineStart = 0
    for index in 1..<total {
      let limit = lines == 1 ? width : turnoverWidth
      if lineWidth(points[lineStart], points[index]) > limit {
        guard index - 1 > lineStart else { return nil }
        lineStart = index - 1
        lines += 1
        guard lineWidth(points[lineStart], points[index]) <= turnoverWidth else { return nil }
      }
    }
    if lines == 1 { return ([], 0, false, false) }
    let mean = lineWidth(points[0], points[total - 1]) / Double(lines)
    func words(_ from: Int, _ to: Int) -> Int {
      var count = 1
      for index in (from + 1)..<to where startsWord[index] { count += 1 }
      return count
    }
    func cost(_ from: Int, _ to: Int, line: Int) -> Double? {
      let measured = lineWidth(points[from], points[to])
      guard measured <= (line == 0 ? width : turnoverWidth) else { return nil }
      let isLast = to == total - 1
      let off = (measured - mean) / max(mean, 1)
      var value = isLast && off < 0 ? off * off * Cost.lastLineShortfall : off * off
      let single = words(from, to) == 1
      if isLast {
        if single { value += Cost.strandedLastWord }
        if measured < mean / 3 { value += Cost.shortLastLine }
      } else if line == 0 {
        if single { value += Cost.breakAfterFirstWord }
      } else if single {
        value += Cost.oneWordInnerLine
      }
      if !isLast {
        var end = points[to]
        while end > points[from] && model.isWhite[end - 1] { end -= 1 }
        if endsOnOneLetterWord(trimmedEnd: end, from: range.lowerBound) { value += Cost.oneLetterLineEnd }
      }
      return value
    }
    let infinity = Double.infinity
    var best = [[Double]](repeating: [Double](repeating: infinity, count: total), count: lines)
    var previous = [[Int]](repeating: [Int](repeating: -1, count: total), count: lines)
    for point in 1..<total { if let value = cost(0, point, line: 0) { best[0][point] = value } }
    for line in 1..<lines {
      for point in (line + 1)..<total {
        var from = point - 1
        while from >= line {
          if best[line - 1][from] < infinity {
            guard let value = cost(from, point, line: line) else { break }
            let candidate = best[line - 1][from] + value
            if candidate < best[line][point] {
              best[line][point] = candidate
              previous[line][point] = from
            }
          } else if lineWidth(points[from], points[point]) > turnoverWidth {
            break
          }
          from -= 1
        }
      }
    }
    guard best[lines - 1][total - 1] < infinity else { return nil }
    var breaks: [Int] = []
    var point = total - 1
    for line in stride(from: lines - 1, to: 0, by: -1) {
      point = previous[line][point]
      breaks.append(points[point])
    }
    breaks.reverse()
    var hasDefect = false
    var hasWordFlaw = false
    var from = 0
    for (line, position) in (breaks + [range.upperBound]).enumerated() {
      let to = points.firstIndex(of: position) ?? total - 1
      let isLast = to == total - 1
      if line > 0 && words(from, to) == 1 { hasWordFlaw = true }
      if isLast && lineWidth(points[from], points[to]) < mean / 3 { hasDefect = true }
      if line == 0 && !isLast && words(from, to) == 1 { hasWordFlaw = true }
      from = to
    }
    if breaks.contains(where: cuts.contains) { hasWordFlaw = true }
    return (breaks, best[lines - 1][total - 1], hasDefect || hasWordFlaw, hasWordFlaw)
  }
}
