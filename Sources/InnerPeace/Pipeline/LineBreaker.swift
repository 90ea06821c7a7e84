/// Chooses the line breaks for a whole paragraph at once, in the spirit of Knuth and Plass's
/// total-fit algorithm, over Pango's own break opportunities (``BreakModel``).
///
/// Each paragraph (verse line) is set in the fewest lines that hold it at the width, as a greedy
/// wrap would, so the fitted size still fits; among the ways to break it into that many lines,
/// the breaker takes the one of least cost:
/// - every line is measured against the paragraph's mean line width, and the square of its
///   difference is paid, so lines come out even (a last line shorter than the mean pays less);
/// - a last line of one word pays ``Cost/strandedLastWord``, a last line under a third of the
///   mean ``Cost/shortLastLine``, a one-word line inside the paragraph ``Cost/oneWordInnerLine``,
///   and a break after the first word ``Cost/breakAfterFirstWord``.
///
/// Dynamic programming over the break positions finds the exact minimum; it costs no layout, only
/// arithmetic over the advances, so trying a few sizes is cheap.
///
/// A word wider than the line (a URL, say) may break inside: after `/ ? & = -` where that is
/// enough, else between any two characters. No hyphen is ever added.
struct LineBreaker {
  /// What the breaker pays, in units of a line off the mean by its whole width.
  enum Cost {
    static let strandedLastWord = 10.0
    static let shortLastLine = 6.0
    static let oneWordInnerLine = 6.0
    static let breakAfterFirstWord = 3.0
    /// Weight of a last line's shortfall against the mean (others pay 1).
    static let lastLineShortfall = 0.25
  }

  /// The breaks for a text at one width: positions (character indexes) where a line starts.
  struct Result {
    /// Character positions before which a new line starts (paragraph starts are not listed).
    var breaks: [Int]
    /// Lines in all.
    var lineCount: Int
    /// The total cost.
    var cost: Double
    /// Whether some paragraph ends on one word, has a one-word line inside, or cuts a word
    /// between two letters (a word wider than the line, where no separator helps).
    var hasWordFlaw: Bool
    /// Whether some paragraph has a word flaw, a last line under a third of the mean, or a
    /// break after its first word.
    var hasDefect: Bool
    /// Whether some paragraph (verse line) wraps.
    var wrapsAParagraph: Bool
  }

  let model: BreakModel

  /// Characters after which a word too wide for its line may break.
  static let wordInnerBreaks: Set<Unicode.Scalar> = ["/", "?", "&", "=", "-", "\u{2010}", "\u{2013}", "\u{2014}"]

  /// The best breaks at `width` (pixels at the reference size), with turnover lines `indent`
  /// narrower; `nil` when some unit cannot be made to fit the width.
  func breaks(width: Double, indent: Double = 0) -> Result? {
    var result = Result(
      breaks: [], lineCount: 0, cost: 0, hasWordFlaw: false, hasDefect: false, wrapsAParagraph: false)
    for paragraph in paragraphs() {
      guard let set = breakParagraph(paragraph, width: width, turnoverWidth: width - indent) else { return nil }
      result.breaks += set.breaks
      result.lineCount += set.breaks.count + 1
      result.cost += set.cost
      result.hasDefect = result.hasDefect || set.hasDefect
      result.hasWordFlaw = result.hasWordFlaw || set.hasWordFlaw
      result.wrapsAParagraph = result.wrapsAParagraph || !set.breaks.isEmpty
    }
    return result
  }

  /// Each paragraph's characters, without its separator.
  func paragraphs() -> [Range<Int>] {
    let count = model.scalars.count
    var ranges: [Range<Int>] = []
    var start = 0
    for position in 1...max(1, count) where position <= count && model.mustBreak[position] {
      var end = position
      while end > start && isParagraphSeparator(model.scalars[end - 1]) { end -= 1 }
      ranges.append(start..<end)
      start = position
    }
    if ranges.isEmpty { ranges.append(0..<count) }
    return ranges
  }

  private func isParagraphSeparator(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\n" || scalar == "\r" || scalar == "\u{2029}" || scalar == "\u{2028}" || scalar == "\u{85}"
  }

  /// Whether a break before `position` starts a new word: after white space, or beside an
  /// ideograph, kana or Hangul (scripts that break between letters). A break after a hyphen or
  /// a dash does not: "long-lived." alone on a line is one word.
  func startsWord(at position: Int) -> Bool {
    guard position > 0, position < model.scalars.count else { return true }
    if model.isWhite[position - 1] { return true }
    return Self.breaksBetweenLetters(model.scalars[position - 1]) || Self.breaksBetweenLetters(model.scalars[position])
  }

  static func breaksBetweenLetters(_ scalar: Unicode.Scalar) -> Bool {
    if scalar.properties.isIdeographic { return true }
    switch scalar.value {
    case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F: return true  // kana
    case 0x3000...0x303F, 0xFF00...0xFF65: return true  // CJK punctuation, full-width forms
    case 0x1100...0x11FF, 0x3130...0x318F, 0xAC00...0xD7AF: return true  // Hangul
    default: return false
    }
  }

  // MARK: One paragraph

  private struct ParagraphBreaks {
    var breaks: [Int]
    var cost: Double
    var hasDefect: Bool = false
    var hasWordFlaw: Bool = false
  }

  private func breakParagraph(_ range: Range<Int>, width: Double, turnoverWidth: Double) -> ParagraphBreaks? {
    guard !range.isEmpty else { return ParagraphBreaks(breaks: [], cost: 0) }
    // Prefix sums of the advances, so a line's width is two lookups.
    var prefix = [Double](repeating: 0, count: range.count + 1)
    for (offset, index) in range.enumerated() { prefix[offset + 1] = prefix[offset] + model.advances[index] }
    /// The width of the characters `from..<to` (absolute indexes), without trailing white space.
    func lineWidth(_ from: Int, _ to: Int) -> Double {
      var end = to
      while end > from && model.isWhite[end - 1] { end -= 1 }
      return prefix[end - range.lowerBound] - prefix[from - range.lowerBound]
    }
    let narrowest = min(width, turnoverWidth)
    let positions = breakPositions(in: range, narrowest: narrowest, lineWidth: lineWidth)
    // The paragraph start, the allowed breaks, the end. Pango's own opportunities are marked so
    // lines can count their words.
    let points = [range.lowerBound] + positions.map(\.position) + [range.upperBound]
    let startsWord = [true] + positions.map(\.startsWord) + [true]
    let cuts = Set(positions.filter(\.cutsWord).map(\.position))
    let total = points.count

    // The fewest lines: a greedy pass (it is optimal for the count).
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
    if lines == 1 { return ParagraphBreaks(breaks: [], cost: 0) }

    let mean = lineWidth(points[0], points[total - 1]) / Double(lines)
    /// Words on the line `points[from]..<points[to]`.
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
      return value
    }

    // best[line][point]: least cost of setting points[0]..<points[point] in line + 1 lines.
    let infinity = Double.infinity
    var best = [[Double]](repeating: [Double](repeating: infinity, count: total), count: lines)
    var previous = [[Int]](repeating: [Int](repeating: -1, count: total), count: lines)
    for point in 1..<total { if let value = cost(0, point, line: 0) { best[0][point] = value } }
    for line in 1..<lines {
      for point in (line + 1)..<total {
        var from = point - 1
        while from >= line {
          if best[line - 1][from] < infinity {
            // Lines only get wider going back; stop once this one is too wide.
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
    // The flaws a reader notices, line by line.
    var result = ParagraphBreaks(breaks: breaks, cost: best[lines - 1][total - 1])
    var from = 0
    for (line, position) in (breaks + [range.upperBound]).enumerated() {
      let to = points.firstIndex(of: position) ?? total - 1
      let isLast = to == total - 1
      if line > 0 && words(from, to) == 1 { result.hasWordFlaw = true }
      if isLast && lineWidth(points[from], points[to]) < mean / 3 { result.hasDefect = true }
      if line == 0 && !isLast && words(from, to) == 1 { result.hasDefect = true }
      from = to
    }
    if breaks.contains(where: cuts.contains) { result.hasWordFlaw = true }
    result.hasDefect = result.hasDefect || result.hasWordFlaw
    return result
  }

  /// The positions inside `range` where a line may break: Pango's break opportunities, plus,
  /// inside a unit wider than `narrowest`, breaks after `/ ? & = -` and then between
  /// characters. `startsWord` marks where a new word starts (see ``startsWord(at:)``), `cutsWord`
  /// a break between two letters of a word.
  private func breakPositions(
    in range: Range<Int>, narrowest: Double, lineWidth: (Int, Int) -> Double
  ) -> [(position: Int, startsWord: Bool, cutsWord: Bool)] {
    var result: [(position: Int, startsWord: Bool, cutsWord: Bool)] = []
    var unitStart = range.lowerBound
    func addInner(_ from: Int, _ to: Int) {
      guard lineWidth(from, to) > narrowest else { return }
      // After the URL-like separators first.
      var pieces: [Int] = [from]
      for index in (from + 1)..<to where Self.wordInnerBreaks.contains(model.scalars[index - 1]) {
        if model.allowsCharacterBreak[index] && !model.isWhite[index] { pieces.append(index) }
      }
      pieces.append(to)
      for (a, b) in zip(pieces, pieces.dropFirst()) {
        if a != from { result.append((a, false, false)) }
        guard lineWidth(a, b) > narrowest, b - a > 1 else { continue }
        for index in (a + 1)..<b where model.allowsCharacterBreak[index] { result.append((index, false, true)) }
      }
    }
    for position in (range.lowerBound + 1)..<max(range.lowerBound + 1, range.upperBound)
    where model.allowsBreak[position] {
      addInner(unitStart, position)
      result.append((position, startsWord(at: position), false))
      unitStart = position
    }
    addInner(unitStart, range.upperBound)
    return result
  }
}
