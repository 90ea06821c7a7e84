/// The quote and author laid out at the largest size that fits the draw bounds, and where they go.
struct FittedText {
  let quote: TextLayout
  let author: TextLayout?
  /// The quote's size in pixels.
  let quoteSize: Int
  /// The author line's size in pixels.
  let authorSize: Double
  /// The quote was ellipsized because it did not fit even at the minimum size.
  let truncated: Bool
  /// Where each layout's origin goes on the canvas.
  let quoteOrigin: (x: Double, y: Double)
  let authorOrigin: (x: Double, y: Double)
  /// Everything drawn (ink) or reserved (line boxes), on the canvas. Always inside the draw bounds.
  let block: PixelRect
  /// How many sizes were laid out to find this one.
  let passes: Int
  /// The largest candidate size that fits, as the search found it (`nil` when none does). The
  /// quote is set at this size or smaller, never below ``TextFitter/lowestSize(largestFit:geometry:)``:
  /// a little smaller for a better paragraph, smaller for a readable measure on a narrow card,
  /// or for verse kept whole (see ``TextFitter``'s break-lines phase). Whatever the size, the
  /// block set there was measured and fits the draw bounds.
  let largestFit: Int?
}

/// Finds the largest candidate size at which the quote (and its author line) fit the draw bounds:
/// the size the app's shrink-until-it-fits loop over the same candidates would find, for every
/// text, in a handful of layouts rather than one per size.
///
/// `fit` runs in four phases:
/// 1. **Measure** (``FitMeasure``): lay the text out at one size, on its own, and say whether
///    the block fits. Nothing carries over from one size to the next.
/// 2. **Search**: whether a size fits is not monotonic in the size (a larger size can fit where a
///    smaller one wraps into one more line), so bisection over the verdicts can land low. Instead
///    a bisection over a bound that *is* monotonic (``FitMeasure/mayFit(_:)``: the text wrapped as
///    wide as any measure wraps it) finds the largest candidate that might fit; every larger one
///    is proven not to. From there down, the first candidate that fits is the answer. The bound
///    differs from the measure only by the overhang allowance, so this is one layout or two.
/// 3. **Break lines**: verse keeps its lines whole where a size not much smaller allows it, and
///    prose is balanced (the wrap narrowed as far as it goes without adding a line).
/// 4. **Place**: centre the block in the draw bounds. Text that fits at no size is instead
///    ellipsized at the minimum legible size.
struct TextFitter {
  let geometry: CardGeometry
  let alignment: TextAlignment
  /// The text's language where the caller knows it: the layouts are set in it.
  var language: LanguageTag? = nil

  /// The quote and author layouts, set up for this fitter, and the measure over them.
  func makeMeasure(quote text: String, author: String, context: TextContext, family: String) -> FitMeasure {
    let quote = makeQuoteLayout(text, context: context, family: family)
    var authorLayout: TextLayout? = nil
    if !author.isEmpty {
      // A directional mark gives the author line the quote's direction, so "natural" puts it
      // under the quote's starting edge in either script direction.
      let mark = quote.isRightToLeft ? "\u{200F}" : "\u{200E}"
      let layout = TextLayout(
        context: context, text: "\(mark)\u{2014} \(author)", family: family, language: language)
      layout.setAlignment(alignment == .center ? .center : .natural)
      layout.limitLines(TextLayout.authorMaximumLines)
      // A second line starts under the name, not under the dash (centred lines have no edge).
      if alignment != .center { layout.hangTurnoverAfterLead(characters: 3) }
      authorLayout = layout
    }
    // Where the author line's edge goes relative to the quote's, when the quote is wrapped
    // narrower than the author line: 0 keeps left edges together, 1 right edges, 0.5 centres.
    let authorShiftFactor: Double = alignment == .center ? 0.5 : (quote.isRightToLeft ? 1 : 0)
    return FitMeasure(geometry: geometry, quote: quote, author: authorLayout, authorShiftFactor: authorShiftFactor)
  }

  /// A quote layout for `text`, aligned as this fitter aligns.
  func makeQuoteLayout(_ text: String, context: TextContext, family: String) -> TextLayout {
    let quote = TextLayout(context: context, text: text, family: family, language: language)
    quote.setAlignment(alignment == .center ? .center : .natural)
    // A flush edge hangs its opening marks; centred lines have no edge to align them to.
    quote.hangsPunctuation = alignment != .center && TextLayout.mayHang(text)
    return quote
  }

  func fit(quote text: String, author: String, context: TextContext, family: String) -> FittedText {
    let measure = makeMeasure(quote: text, author: author, context: context, family: family)
    let sizes = geometry.candidateSizes
    let placed: (size: Int, measured: MeasuredBlock, truncated: Bool)
    var largestFit: Int? = nil
    if let found = search(measure, sizes: sizes) {
      largestFit = sizes[found.index]
      let (size, measured) = breakLines(
        measure, text: text, size: sizes[found.index], measured: found.measured,
        makeLayout: { makeQuoteLayout($0, context: context, family: family) })
      placed = (size, measured, false)
    } else {
      placed = (geometry.minimumSize, truncate(measure), true)
    }
    return place(
      measure, size: placed.size, measured: placed.measured, truncated: placed.truncated, largestFit: largestFit)
  }

  // MARK: Search

  /// The index of the largest candidate that fits, with its measure (the layouts are left in that
  /// state), or `nil` when none does.
  ///
  /// ``FitMeasure/mayFit(_:)`` is monotonic: once it says no, it says no for every larger size.
  /// A bisection over it finds the largest candidate it does not exclude; the candidates are then
  /// measured from there down, and the first that fits is the largest that fits.
  func search(_ measure: FitMeasure, sizes: [Int]) -> (index: Int, measured: MeasuredBlock)? {
    var top = 0
    if !measure.mayFit(sizes[0]) {
      guard measure.mayFit(sizes[sizes.count - 1]) else { return nil }
      // Invariant: sizes[low] is excluded by the bound, sizes[high] is not.
      var low = 0
      var high = sizes.count - 1
      while high - low > 1 {
        let middle = (low + high) / 2
        if measure.mayFit(sizes[middle]) { high = middle } else { low = middle }
      }
      top = high
    }
    for index in top..<sizes.count {
      let measured = measure.measure(sizes[index])
      if measure.fits(measured.block) { return (index, measured) }
    }
    return nil
  }

  // MARK: Break lines

  /// The size and line breaks the text is set with, given the largest size that fits and its
  /// measure (which the layouts are in).
  ///
  /// 1. Verse (text with its own line breaks) reads best with each line whole: if a size down to
  ///    half the fitted one on a narrow card, 70 % on a wide one (``verseWholeShare(on:)``), keeps
  ///    every line unwrapped, it is taken as it is.
  /// 2. Otherwise ``LineBreaker`` chooses the breaks for each whole paragraph, in as many lines as
  ///    a greedy wrap needs. Verse lines that must wrap get a hanging indent on their turnovers.
  ///    **The measure rule** (``sizeForMeasure(_:largestFit:plan:mayFit:)``): on a narrow card,
  ///    prose starts from a smaller size where the fitted one gives lines shorter than a
  ///    readable measure; the rules below then work from that size.
  /// 3. **The smaller-size rule.** Where the best paragraph at the fitted size still has a flaw
  ///    (a stranded last word, a last line under a third of the others, a one-word inner line, a
  ///    word cut between letters, a break after the first word), smaller candidates are tried,
  ///    largest first: the first within 95 % of the size whose paragraph has no flaw is taken;
  ///    failing that, the first within 70 % (the verse rule's reach) that sets no word alone on a
  ///    line and cuts none. Narrow presets need the second rule for long words: on `story`
  ///    "Everything harmonizes" fits one line only well below the largest size. `classic` keeps
  ///    the app's size: only its breaks change.
  ///
  /// The breaks are applied as explicit line separators in a new quote layout, which is measured
  /// again; if it does not come out as planned (same line count, inside the bounds), the greedy
  /// wrap at the fitted size stays.
  private func breakLines(
    _ measure: FitMeasure, text: String, size: Int, measured: MeasuredBlock, makeLayout: (String) -> TextLayout
  ) -> (size: Int, measured: MeasuredBlock) {
    // How much narrower than usual the measure had to wrap at the fitted size (glyphs that
    // overhang their line boxes more than usual), in proportion to the size.
    let narrowing = max(0, measure.wrapWidth(size) - measure.quoteWidth) / Double(size)
    // The height a line takes at this size, and the rest of the block (author line, ink), to
    // predict whether a plan with more lines can fit at a smaller size before laying it out.
    let lineHeight = measure.quote.extents.logical.height / Double(max(1, measure.quote.lineCount)) / Double(size)
    let otherHeight = max(0, measured.block.height - measure.quote.extents.logical.height) / Double(size)
    func mayFit(_ candidate: Int, lines: Int) -> Bool {
      (lineHeight * Double(lines) + otherHeight) * Double(candidate) <= Double(geometry.drawBounds.height)
    }
    let isVerse = text.utf8.contains(0x0A)
    if isVerse && geometry.adjustsSizeForParagraph {
      let verseLines = text.split(separator: "\n", omittingEmptySubsequences: false).count
      if measure.quote.lineCount == verseLines { return (size, measured) }
      if let whole = unwrappedSize(measure.quote, below: size),
        Double(whole) >= Double(size) * TextFitter.verseWholeShare(on: geometry)
      {
        let atWhole = measure.measure(whole)
        if measure.fits(atWhole.block) && measure.quote.lineCount == verseLines { return (whole, atWhole) }
      }
    }
    guard measure.quote.lineCount > 1 || isVerse else { return (size, measured) }
    let breaker = LineBreaker(model: measure.breakModel())
    let indent = isVerse ? TextFitter.turnoverIndent * TextLayout.referenceSize : 0
    /// The breaks at one candidate size, at the width ``FitMeasure`` wraps to there.
    func plan(_ candidate: Int, narrowedBy extra: Double = 0) -> LineBreaker.Result? {
      let pixels = measure.wrapWidth(candidate) - narrowing * Double(candidate) - extra
      return breaker.breaks(width: pixels * TextLayout.referenceSize / Double(candidate), indent: indent)
    }
    let original = measure.quote
    /// Sets the planned breaks at `candidate` and measures them; `nil` when the block does not
    /// come out as planned, inside the bounds.
    func apply(_ candidate: Int, _ result: LineBreaker.Result) -> MeasuredBlock? {
      if result.breaks.isEmpty && !result.wrapsAParagraph {
        // Every paragraph fits one line: nothing to place by hand.
        measure.replaceQuote(original)
        let plain = measure.measure(candidate)
        return measure.fits(plain.block) && original.lineCount == result.lineCount ? plain : nil
      }
      // Letters that overhang their line box more than usual (an italic "p" starting a line, a
      // "d" ending one) can make the block too wide: then the paragraph is planned again, that
      // much narrower, if it gains no flaw (it may take a line more, if the height allows).
      var planned = result
      for attempt in 0..<3 {
        let layout = makeLayout(
          TextFitter.text(of: breaker.model, breakingBefore: planned.breaks, hyphenating: planned.hyphens))
        if isVerse && planned.wrapsAParagraph { layout.setHangingIndent(ems: TextFitter.turnoverIndent) }
        measure.replaceQuote(layout)
        let broken = measure.measureBroken(candidate)
        if measure.fits(broken.block) && layout.lineCount == planned.lineCount { return broken }
        let excess = broken.block.width - Double(geometry.drawBounds.width)
        guard attempt < 2, excess > 0, excess.isFinite, layout.lineCount == planned.lineCount,
          let again = plan(candidate, narrowedBy: excess.rounded(.up) + 1),
          again.hasWordFlaw == planned.hasWordFlaw || !again.hasWordFlaw,
          again.hasDefect == planned.hasDefect || !again.hasDefect
        else { return nil }
        planned = again
      }
      return nil
    }
    // The largest fit, where the greedy wrap is known to fit: the last resort.
    let largest = size
    let start =
      isVerse || !geometry.aimsForMeasure
      ? largest
      : sizeForMeasure(
        breaker, largestFit: largest, plan: { plan($0, narrowedBy: Double($0) * TextFitter.measureMargin) },
        mayFit: { mayFit($0, lines: $1) })
    guard let atSize = plan(start) else {
      measure.replaceQuote(original)
      return (largest, measure.measure(largest))
    }
    // Where the plan at the start size itself has no flaw but does not come out inside the
    // bounds, a smaller size is tried for a paragraph that at least strands and cuts no word.
    let failedAtSize = !atSize.hasDefect
    if !atSize.hasDefect, let measured = apply(start, atSize) { return (start, measured) }
    // How far the rules below may go: 70 % of the start size, or for verse as far as it may go
    // to keep its lines whole.
    let far = Int(
      (Double(start) * (isVerse ? TextFitter.verseWholeShare(on: geometry) : TextFitter.unstrandedSizeShare))
        .rounded(.up))
    if geometry.adjustsSizeForParagraph {
      // Largest first: a candidate with no flaw within a few percent, or one that strands and
      // cuts no word within 70 % (verse: 50 %) where the start size's own plan does; at most a
      // few are set and measured.
      let near = Int((Double(start) * TextFitter.smallerSizeShare).rounded(.up))
      var tries = 0
      for candidate in geometry.candidateSizes where candidate < start && candidate >= far && tries < 8 {
        guard let result = plan(candidate) else { continue }
        let better =
          (candidate >= near && !result.hasDefect)
          || (!result.hasWordFlaw && (atSize.hasWordFlaw || failedAtSize))
        guard better else { continue }
        tries += 1
        if let measured = apply(candidate, result) { return (candidate, measured) }
      }
    }
    if atSize.hasDefect, let measured = apply(start, atSize) { return (start, measured) }
    // The breaker's own breaks did not fit at the start size (a URL broken at its separators may
    // take more lines than Pango's greedy wrap, which cuts words anywhere; verse turnovers, a
    // hanging indent narrower, may take more than the greedy wrap without it): the largest
    // candidate within 70 % (verse: 50 %) where they do, before falling back to the greedy wrap.
    // `classic` keeps the app's size, but for verse, whose turnovers hang with or without an
    // author line.
    var tries = 0
    for candidate in geometry.candidateSizes
    where (geometry.adjustsSizeForParagraph || isVerse) && candidate < start && candidate >= far && tries < 6 {
      guard let result = plan(candidate), mayFit(candidate, lines: result.lineCount) else { continue }
      tries += 1
      if let measured = apply(candidate, result) { return (candidate, measured) }
    }
    measure.replaceQuote(original)
    return (largest, measure.measure(largest))
  }

  // MARK: Measure

  /// The size a prose paragraph starts from on a narrow card (``CardGeometry/aimsForMeasure``):
  /// the largest candidate, from the largest fit down to ``measureSizeShare`` of it, whose
  /// paragraph (as ``LineBreaker`` sets it there) has a median line of ``measure`` characters
  /// (its lower bound at least, and no more than its upper), where the predicted height fits.
  /// A size that would set the quote on one line is never taken ("Work is love made visible."
  /// stays two lines, large). Where no size in that range reaches the measure (a short quote, a
  /// long one whose largest fit is far too large), the largest size that sets it in as few lines
  /// as any size in the range: "I love a broad margin to my life." is set at the largest size
  /// that makes two lines, not at the range's floor.
  ///
  /// Each candidate costs one run of the breaker over the advances at the reference size, no
  /// layout; the size chosen is laid out and measured as any other.
  private func sizeForMeasure(
    _ breaker: LineBreaker, largestFit size: Int, plan: (Int) -> LineBreaker.Result?, mayFit: (Int, Int) -> Bool
  ) -> Int {
    let lowest = Int((Double(size) * TextFitter.measureSizeShare).rounded(.up))
    var fewest = (size: size, lines: Int.max)
    for candidate in geometry.candidateSizes where candidate <= size && candidate >= lowest {
      // A quote the largest fit sets in two lines or more is not brought down to one: a short
      // quote reads best large, on two lines, and the measure is a paragraph's.
      guard let result = plan(candidate), result.lineCount > 1, mayFit(candidate, result.lineCount) else { continue }
      let median = breaker.medianLineLength(breakingBefore: result.breaks)
      if median > TextFitter.measure.upperBound { continue }
      if median >= TextFitter.measure.lowerBound { return candidate }
      if result.lineCount < fewest.lines { fewest = (candidate, result.lineCount) }
    }
    return fewest.size
  }

  /// The measure a prose paragraph aims for on a narrow card, in characters a line (an
  /// ideograph, kana or Hangul syllable counts two, a mark or vowel sign nothing:
  /// ``LineBreaker/measureWeight(_:)``).
  static let measure = 20.0...35.0
  /// How much narrower (in ems) the measure rule judges a size's paragraph than it is set: the
  /// room letters that overhang their line box may take, so the paragraph still holds the
  /// measure where it must be planned again a little narrower.
  static let measureMargin = 0.05
  /// How far (a share of the largest fit) the measure rule may bring the size down.
  static let measureSizeShare = 0.5
  /// How far (a share of the largest fit) verse may come down to keep every line whole.
  /// How far (a share of the largest fit) verse may come down to keep every line whole, or to set
  /// its turnovers without a stranded word: half on a narrow card (``CardGeometry/aimsForMeasure``:
  /// Frost's stanza is four lines on `square`), 70 % on a wide one, where a verse line wider than
  /// the card at 70 % reads better with a turnover than whole at half the size (quote 26 on `og`).
  static func verseWholeShare(on geometry: CardGeometry) -> Double { geometry.aimsForMeasure ? 0.5 : 0.7 }

  /// The smallest size the fitter may choose for a text whose largest fit is `largestFit`.
  /// Prose: the smaller-size rule reaches ``unstrandedSizeShare`` of the size it starts from,
  /// which on a narrow card may be the measure rule's (down to ``measureSizeShare`` of the
  /// largest fit). Verse (`verse`): ``verseWholeShare(on:)``, to keep its lines whole or to set its
  /// turnovers without a stranded word; on `classic` only to fit its hanging turnovers. `classic`
  /// prose keeps the app's size. Never below the minimum legible size.
  static func lowestSize(largestFit: Int, geometry: CardGeometry, verse: Bool) -> Int {
    let share: Double
    if verse {
      share = verseWholeShare(on: geometry)
    } else if geometry.adjustsSizeForParagraph {
      share = (geometry.aimsForMeasure ? measureSizeShare : 1) * unstrandedSizeShare
    } else {
      return largestFit
    }
    return max(geometry.minimumSize, Int((Double(largestFit) * share).rounded(.up)))
  }

  /// How far (a share of the fitted size) the smaller-size rule may go for a better paragraph.
  static let smallerSizeShare = 0.95
  /// How far the smaller-size rule may go to set no word alone on a line (as far as verse may go
  /// to keep its lines whole).
  static let unstrandedSizeShare = 0.7
  /// A wrapped verse line's turnover indent, in ems.
  static let turnoverIndent = 1.0

  /// The text with a line separator (U+2028) before each break: it replaces the white space a
  /// break follows, or is inserted where there is none (inside a URL, between ideographs). Breaks
  /// in `hyphenating` (inside a word) get a hyphen (``Hyphenation/hyphen``) before the separator.
  static func text(of model: BreakModel, breakingBefore breaks: [Int], hyphenating: [Int] = []) -> String {
    var scalars = String.UnicodeScalarView()
    var start = 0
    let hyphenated = Set(hyphenating)
    for position in breaks + [model.scalars.count] {
      var end = position
      if position < model.scalars.count {
        while end > start && model.isWhite[end - 1] && model.scalars[end - 1] != "\n" { end -= 1 }
      }
      scalars.append(contentsOf: model.scalars[start..<end])
      if hyphenated.contains(position) { scalars.append(Hyphenation.hyphen) }
      if position < model.scalars.count { scalars.append("\u{2028}") }
      start = position
    }
    return String(scalars)
  }

  /// The largest candidate, no larger than `limit`, at which the quote's widest line fits the
  /// bounds without wrapping; layouts scale linearly, so one unwrapped layout says.
  private func unwrappedSize(_ quote: TextLayout, below limit: Int) -> Int? {
    quote.setPixelSize(TextLayout.referenceSize)
    quote.setUnlimitedWidth()
    let natural = quote.bounds.width / TextLayout.referenceSize
    guard natural > 0 else { return nil }
    // Leave the room `measure` leaves for italic overhang, and a pixel or so more.
    let widest = Double(geometry.drawBounds.width) / (natural + FitMeasure.overhang + 0.02)
    return geometry.candidateSizes.first { $0 <= limit && Double($0) <= widest }
  }

  // MARK: Truncate

  /// Nothing fits, even at the minimum legible size: the quote ellipsized at that size, as much
  /// of it as the bounds hold.
  private func truncate(_ measure: FitMeasure) -> MeasuredBlock {
    let size = geometry.minimumSize
    let bounds = geometry.drawBounds
    var available = Double(bounds.height)
    if let author = measure.author {
      author.setPixelSize(measure.authorSize(forQuoteSize: size))
      author.setWidth(Double(bounds.width) - (Double(size) * FitMeasure.overhang).rounded(.up))
      available -= author.bounds.height + measure.gap(forQuoteSize: size)
    }
    measure.quote.limitHeight(available)
    var measured = measure.measure(size)
    var attempts = 0
    while !measure.fits(measured.block) && attempts < 64 {
      // A block still too wide holds a cluster wider than the bounds, which only ellipsizing
      // its line can shorten, and Pango ellipsizes only the last line the height allows: go
      // to one line. Once at one line, nothing more can be taken away.
      let next = measured.block.width > Double(bounds.width) ? 1 : max(1, available - Double(size) * 0.5)
      if next == available { break }
      available = next
      measure.quote.limitHeight(available)
      measured = measure.measure(size)
      attempts += 1
    }
    return measured
  }

  // MARK: Place

  /// Centres the block in the draw bounds.
  private func place(
    _ measure: FitMeasure, size: Int, measured: MeasuredBlock, truncated: Bool, largestFit: Int?
  ) -> FittedText {
    let bounds = geometry.drawBounds
    let block = measured.block
    let dx = Double(bounds.x) + (Double(bounds.width) - block.width) / 2 - block.x
    let dy = Double(bounds.y) + (Double(bounds.height) - block.height) / 2 - block.y
    return FittedText(
      quote: measure.quote, author: measure.author, quoteSize: size,
      authorSize: measure.authorSize(forQuoteSize: size),
      truncated: truncated || measure.quote.isEllipsized || measure.author?.isEllipsized == true,
      quoteOrigin: (dx, dy), authorOrigin: (dx + measured.authorOffset.x, dy + measured.authorOffset.y),
      block: block.offsetBy(dx: dx, dy: dy), passes: measure.passes, largestFit: largestFit)
  }
}
