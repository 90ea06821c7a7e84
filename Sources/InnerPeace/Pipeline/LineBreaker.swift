/// Chooses the line breaks for a whole paragraph at once, in the spirit of Knuth and Plass's
/// total-fit algorithm, over Pango's own break opportunities (``BreakModel``).
///
/// Each paragraph (verse line) is set in the fewest lines that hold it at the width, as a greedy
/// wrap would, so the fitted size still fits; among the ways to break it into that many lines,
/// the breaker takes the one of least cost:
/// - every line is measured against the paragraph's mean line width, and the square of its
///   difference is paid, so lines come out even (a last line shorter than the mean pays twice that,
///   so it comes out nearly full);
/// - a last line of one word pays ``Cost/strandedLastWord``, a last line under a third of the
///   mean ``Cost/shortLastLine``, a one-word line inside the paragraph ``Cost/oneWordInnerLine``,
///   a break after the first word (a paragraph, or a verse line before its turnover, starting
///   with a one-word line) ``Cost/breakAfterFirstWord``, and a line other than the last ending
///   on a one-letter word ("a", "I") ``Cost/oneLetterLineEnd``.
///
/// Dynamic programming over the break positions finds the exact minimum; it costs no layout, only
/// arithmetic over the advances, so trying a few sizes is cheap.
///
/// A word wider than the line (a URL, say) may break inside: after `/ ? & = -` where that is
/// enough, else between any two characters.
///
/// **Hyphenation** (``Hyphenation``): where a paragraph set without it cuts a word between letters
/// (a word wider than the line) or cannot be set at all, it is set again with the dictionary's
/// hyphen points of its long words as extra break opportunities; a line ending at one pays
/// ``Cost/hyphen`` and is drawn with a hyphen (its width counted). The hyphenated setting is taken
/// when it cuts no word between letters, and counts as a defect (so ``TextFitter`` first looks
/// for a size a little smaller that needs no hyphen). A paragraph that sets without cutting a
/// word never gets a hyphen, and code-like words (URLs, addresses) are never hyphenated.
struct LineBreaker {
  /// What the breaker pays, in units of a line off the mean by its whole width.
  enum Cost {
    static let strandedLastWord = 10.0
    static let shortLastLine = 6.0
    static let oneWordInnerLine = 6.0
    /// A paragraph's first line of one word: as bad as a stranded last word, and a word flaw.
    static let breakAfterFirstWord = 10.0
    /// A line that ends on a one-letter word ("a", "I"), other than a paragraph's last: a
    /// preference, not a rule (a line off the mean by half its width pays as much).
    static let oneLetterLineEnd = 0.25
    /// Weight of a last line's shortfall against the mean (others pay 1): a last line nearly as
    /// long as the others (the median last line is 0.95 of the longest over the catalog, against
    /// 0.93 with Chromium's `text-wrap: balance`).
    static let lastLineShortfall = 2.0
    /// A line that ends in a hyphenated word: more than any uneven rag, less than a one-word line.
    static let hyphen = 2.0
  }

  /// The breaks for a text at one width: positions (character indexes) where a line starts.
  struct Result {
    /// Character positions before which a new line starts (paragraph starts are not listed).
    var breaks: [Int]
    /// Lines in all.
    var lineCount: Int
    /// The total cost.
    var cost: Double
    /// Whether some paragraph starts or ends on a one-word line, has a one-word line inside, or
    /// cuts a word between two letters (a word wider than the line, where no separator helps).
    var hasWordFlaw: Bool
    /// Whether some paragraph has a word flaw or a last line under a third of the mean.
    var hasDefect: Bool
    /// Whether some paragraph (verse line) wraps.
    var wrapsAParagraph: Bool
    /// The breaks (among ``breaks``) that cut a word at a hyphen point: the line before gets a
    /// hyphen.
    var hyphens: [Int] = []
    /// How many times a line's cost was computed (for tests of the search's bound: at most
    /// ``LineBreaker/maximumLookBack`` + 1 per break opportunity).
    var evaluations = 0
  }

  let model: BreakModel
  /// The text's hyphen points, found the first time a paragraph needs them (see
  /// ``hyphenPoints()``); shared by the copies of this breaker.
  let hyphenation = HyphenPoints()

  /// Where the text may be broken with a hyphen, once known.
  final class HyphenPoints {
    /// For each position `0...count`: a hyphenated break may go before that character (`[]`:
    /// nowhere).
    var before: [Bool]?
  }

  /// Characters after which a word too wide for its line may break.
  static let wordInnerBreaks: Set<Unicode.Scalar> = ["/", "?", "&", "=", "-", "\u{2010}", "\u{2013}", "\u{2014}"]

  /// The best breaks at `width` (pixels at the reference size), with turnover lines `indent`
  /// narrower (a negative indent counts as none); `nil` when some unit cannot be made to fit the
  /// width.
  ///
  /// The search runs in time linear in the text's length: each break opportunity is tried as a
  /// line's end against at most ``maximumLookBack`` earlier ones.
  func breaks(width: Double, indent: Double = 0) -> Result? {
    var result = Result(
      breaks: [], lineCount: 0, cost: 0, hasWordFlaw: false, hasDefect: false, wrapsAParagraph: false)
    for paragraph in paragraphs() {
      let turnoverWidth = width - max(0, indent)
      var set = breakParagraph(paragraph, width: width, turnoverWidth: turnoverWidth, hyphens: nil)
      // Hyphenation only where the paragraph needs it: a word wider than the line.
      if set?.cutsAWord ?? true, let hyphens = hyphenPoints(),
        hyphens[paragraph].contains(true),
        let hyphenated = breakParagraph(paragraph, width: width, turnoverWidth: turnoverWidth, hyphens: hyphens),
        set == nil || !hyphenated.cutsAWord
      {
        set = hyphenated
      }
      guard let set else { return nil }
      result.breaks += set.breaks
      result.hyphens += set.hyphens
      result.lineCount += set.breaks.count + 1
      result.cost += set.cost
      result.evaluations += set.evaluations
      result.hasDefect = result.hasDefect || set.hasDefect
      result.hasWordFlaw = result.hasWordFlaw || set.hasWordFlaw
      result.wrapsAParagraph = result.wrapsAParagraph || !set.breaks.isEmpty
    }
    return result
  }

  /// Where the text may be broken with a hyphen (``BreakModel/hyphenAdvance`` measured, patterns
  /// installed for its language, long words that are not code-like), found once per breaker;
  /// `nil` where nowhere. Points inside a grapheme cluster or a ligature (a character of no
  /// advance) are left out.
  func hyphenPoints() -> [Bool]? {
    if let known = hyphenation.before { return known.isEmpty ? nil : known }
    var before: [Bool] = []
    if model.hyphenAdvance > 0 {
      var text = String.UnicodeScalarView()
      text.append(contentsOf: model.scalars)
      let points = Hyphenation.points(in: model.scalars, languages: .detect(in: String(text), given: model.language))
      if !points.isEmpty {
        before = [Bool](repeating: false, count: model.scalars.count + 1)
        for point in points where model.allowsCharacterBreak[point] && model.advances[point] > 0 {
          before[point] = true
        }
      }
    }
    hyphenation.before = before
    return before.isEmpty ? nil : before
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

  /// Whether the text before `end` (a line's end without its trailing white space) ends on a
  /// word of one letter ("a", "I"; not a digit, a mark or an ideograph), in the paragraph that
  /// starts at `start`.
  func endsOnOneLetterWord(trimmedEnd end: Int, from start: Int) -> Bool {
    guard end > start else { return false }
    let last = model.scalars[end - 1]
    guard last.properties.isAlphabetic, !Self.breaksBetweenLetters(last) else { return false }
    return end - 1 == start || model.isWhite[end - 2]
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

  /// What a scalar counts for in a line's length: 2 for an ideograph, kana or Hangul, 0 for a
  /// combining mark, vowel sign or format character (a joiner), 1 otherwise.
  static func measureWeight(_ scalar: Unicode.Scalar) -> Int {
    if scalar.value < 0x300 { return 1 }
    switch scalar.properties.generalCategory {
    case .nonspacingMark, .spacingMark, .enclosingMark, .format: return 0
    default: return breaksBetweenLetters(scalar) ? 2 : 1
    }
  }

  /// The length of each line, in characters, when the text breaks before `breaks` (and at its
  /// paragraph ends): white space at either end of a line left out, an ideograph, kana or Hangul
  /// syllable (about twice a Latin letter's width) counted twice, and a mark, vowel sign or joiner
  /// not at all (a letter and its marks are one character to the reader: a Malayalam or Devanagari
  /// line holds nearly twice as many scalars as it shows characters).
  func lineLengths(breakingBefore breaks: [Int]) -> [Int] {
    var lengths: [Int] = []
    var pending = breaks[...]
    for paragraph in paragraphs() {
      var start = paragraph.lowerBound
      while start <= paragraph.upperBound {
        var end = paragraph.upperBound
        if let next = pending.first, next < paragraph.upperBound {
          end = next
          pending = pending.dropFirst()
        }
        var from = start
        var to = end
        while from < to && model.isWhite[from] { from += 1 }
        while to > from && model.isWhite[to - 1] { to -= 1 }
        lengths.append(model.scalars[from..<to].reduce(0) { $0 + Self.measureWeight($1) })
        if end == paragraph.upperBound { break }
        start = end
      }
    }
    return lengths
  }

  /// The median of ``lineLengths(breakingBefore:)`` (the mean of the middle two for an even
  /// count).
  func medianLineLength(breakingBefore breaks: [Int]) -> Double {
    let sorted = lineLengths(breakingBefore: breaks).sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? Double(sorted[middle]) : Double(sorted[middle - 1] + sorted[middle]) / 2
  }

  // MARK: One paragraph

  private struct ParagraphBreaks {
    var breaks: [Int]
    var cost: Double
    var evaluations = 0
    var hasDefect: Bool = false
    var hasWordFlaw: Bool = false
    var cutsAWord = false
    var hyphens: [Int] = []
  }

  /// The best breaks of one paragraph; `hyphens` (when given) adds hyphenated breaks.
  private func breakParagraph(
    _ range: Range<Int>, width: Double, turnoverWidth: Double, hyphens: [Bool]?
  ) -> ParagraphBreaks? {
    guard !range.isEmpty else { return ParagraphBreaks(breaks: [], cost: 0) }
    let lower = range.lowerBound
    // Prefix sums of the advances, so a line's width is two lookups; and for each end, where the
    // text before it ends without its trailing white space.
    var prefix = [Double](repeating: 0, count: range.count + 1)
    var trimmedEnd = [Int](repeating: 0, count: range.count + 1)
    for (offset, index) in range.enumerated() {
      prefix[offset + 1] = prefix[offset] + model.advances[index]
      trimmedEnd[offset + 1] = model.isWhite[index] ? trimmedEnd[offset] : offset + 1
    }
    /// The width of the characters `from..<to` (absolute indexes), without trailing white space,
    /// with a hyphen where the line ends at a hyphen point.
    func lineWidth(_ from: Int, _ to: Int) -> Double {
      let width = prefix[max(from - lower, trimmedEnd[to - lower])] - prefix[from - lower]
      guard let hyphens, hyphens[to] else { return width }
      return width + model.hyphenAdvance
    }
    let narrowest = min(width, turnoverWidth)
    let positions = breakPositions(in: range, narrowest: narrowest, lineWidth: lineWidth, hyphens: hyphens)
    // The paragraph start, the allowed breaks, the end. Pango's own opportunities are marked so
    // lines can count their words.
    let points = [range.lowerBound] + positions.map(\.position) + [range.upperBound]
    let total = points.count
    // wordStarts[i]: how many of points[0..<i] start a word (the paragraph start counts).
    var wordStarts = [Int](repeating: 0, count: total + 1)
    wordStarts[1] = 1
    for (index, position) in positions.enumerated() {
      wordStarts[index + 2] = wordStarts[index + 1] + (position.startsWord ? 1 : 0)
    }
    wordStarts[total] = wordStarts[total - 1] + 1
    let cuts = Set(positions.filter(\.cutsWord).map(\.position))
    // oneLetterEnd[i]: whether a line ending at points[i] ends on a one-letter word.
    let oneLetterEnd = points.map { endsOnOneLetterWord(trimmedEnd: lower + trimmedEnd[$0 - lower], from: lower) }

    // The fewest lines: a greedy pass (it is optimal for the count, and for every prefix:
    // fewestTo[point] is the fewest lines that end one at that point).
    var fewestTo = [Int](repeating: 1, count: total)
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
      fewestTo[index] = lines
    }
    if lines == 1 { return ParagraphBreaks(breaks: [], cost: 0) }
    // The fewest turnover lines that set the rest of the paragraph after a break at each point
    // (greedy again, each line as far as it goes; `Int.max` where a piece is wider than a line).
    var fewestFrom = [Int](repeating: Int.max, count: total)
    fewestFrom[total - 1] = 0
    var farthest = [Int](repeating: 0, count: total)
    var reach = 1
    for point in 0..<(total - 1) {
      reach = max(reach, point + 1)
      while reach + 1 < total && lineWidth(points[point], points[reach + 1]) <= turnoverWidth { reach += 1 }
      farthest[point] = reach
    }
    for point in stride(from: total - 2, through: 1, by: -1)
    where lineWidth(points[point], points[farthest[point]]) <= turnoverWidth && fewestFrom[farthest[point]] < Int.max {
      fewestFrom[point] = fewestFrom[farthest[point]] + 1
    }

    let mean = lineWidth(points[0], points[total - 1]) / Double(lines)
    /// Words on the line `points[from]..<points[to]`.
    func words(_ from: Int, _ to: Int) -> Int { 1 + wordStarts[to] - wordStarts[from + 1] }
    var evaluations = 0
    func cost(_ from: Int, _ to: Int, line: Int) -> Double? {
      evaluations += 1
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
      if !isLast && oneLetterEnd[to] { value += Cost.oneLetterLineEnd }
      if let hyphens, hyphens[points[to]] { value += Cost.hyphen }
      return value
    }

    // A paragraph of exactly `lines` lines can end its line `line` at a point only when the
    // fewest lines to that point are line + 1 and the fewest after it are the rest (the two add
    // up to at least `lines`, so any other line would need fewer than the fewest on one side).
    // So each point ends at most one line, `members[line]` lists the points that can end it, in
    // order, and the search below is exact: it visits every state the full table over lines and
    // points could use, in the same order, and the same ties win.
    var members = [[Int]](repeating: [], count: lines)
    for point in 1..<total where fewestFrom[point] < Int.max && fewestTo[point] + fewestFrom[point] == lines {
      members[fewestTo[point] - 1].append(point)
    }
    // best[point]: least cost of setting points[0]..<points[point] in the lines up to the one
    // that point ends.
    var best = [Double](repeating: .infinity, count: total)
    var previous = [Int](repeating: -1, count: total)
    for point in members[0] { if let value = cost(0, point, line: 0) { best[point] = value } }
    for line in 1..<lines {
      let candidates = members[line - 1]
      var below = 0  // candidates[..<below] lie before the point
      for point in members[line] {
        while below < candidates.count && candidates[below] < point { below += 1 }
        // Nearest first; lines only get wider going back, so stop once one is too wide, and
        // look back over at most `maximumLookBack` candidates.
        var index = below - 1
        while index >= 0 && below - index <= Self.maximumLookBack {
          let from = candidates[index]
          guard best[from] < .infinity, let value = cost(from, point, line: line) else { break }
          let candidate = best[from] + value
          if candidate < best[point] {
            best[point] = candidate
            previous[point] = from
          }
          index -= 1
        }
      }
    }
    guard best[total - 1] < .infinity else { return nil }
    var chosen: [Int] = []
    var point = total - 1
    for _ in 1..<lines {
      point = previous[point]
      chosen.append(point)
    }
    chosen.reverse()
    // The flaws a reader notices, line by line.
    var result = ParagraphBreaks(
      breaks: chosen.map { points[$0] }, cost: best[total - 1], evaluations: evaluations)
    var from = 0
    for (line, to) in (chosen + [total - 1]).enumerated() {
      let isLast = to == total - 1
      if line > 0 && words(from, to) == 1 { result.hasWordFlaw = true }
      if isLast && lineWidth(points[from], points[to]) < mean / 3 { result.hasDefect = true }
      if line == 0 && !isLast && words(from, to) == 1 { result.hasWordFlaw = true }
      from = to
    }
    if result.breaks.contains(where: cuts.contains) {
      result.hasWordFlaw = true
      result.cutsAWord = true
    }
    if let hyphens { result.hyphens = result.breaks.filter { hyphens[$0] } }
    // A hyphen is a small flaw: a size a little smaller that needs none is better.
    if !result.hyphens.isEmpty { result.hasDefect = true }
    result.hasDefect = result.hasDefect || result.hasWordFlaw
    return result
  }

  /// The most earlier breaks a line's end is tried against: a line holds fewer break
  /// opportunities than this in any ordinary text, so only lines of hundreds of one-letter words
  /// or characters (where every choice looks alike) see fewer than all their candidates, and the
  /// search stays linear in the text's length.
  static let maximumLookBack = 128

  /// The positions inside `range` where a line may break: Pango's break opportunities, plus,
  /// inside a unit wider than `narrowest`, breaks after `/ ? & = -` and then between
  /// characters. `startsWord` marks where a new word starts (see ``startsWord(at:)``), `cutsWord`
  /// a break between two letters of a word. With `hyphens`, the hyphen points of a unit wider
  /// than `narrowest` come first (and characters only inside a piece between them still wider).
  func breakPositions(
    in range: Range<Int>, narrowest: Double, lineWidth: (Int, Int) -> Double, hyphens: [Bool]? = nil
  ) -> [(position: Int, startsWord: Bool, cutsWord: Bool)] {
    var result: [(position: Int, startsWord: Bool, cutsWord: Bool)] = []
    var unitStart = range.lowerBound
    func addInner(_ from: Int, _ to: Int) {
      guard lineWidth(from, to) > narrowest else { return }
      // Only a word wider than the line is hyphenated.
      if let hyphens, to - from > 1, hyphens[(from + 1)..<to].contains(true) {
        let pieces = [from] + ((from + 1)..<to).filter { hyphens[$0] } + [to]
        for (a, b) in zip(pieces, pieces.dropFirst()) {
          if a != from { result.append((a, false, false)) }
          guard lineWidth(a, b) > narrowest, b - a > 1 else { continue }
          for index in (a + 1)..<b where model.allowsCharacterBreak[index] { result.append((index, false, true)) }
        }
        return
      }
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
