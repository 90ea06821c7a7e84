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

  /// The quote and author layouts, set up for this fitter, and the measure over them.
  func makeMeasure(quote text: String, author: String, context: TextContext, family: String) -> FitMeasure {
    let quote = TextLayout(context: context, text: text, family: family)
    quote.setAlignment(alignment == .center ? .center : .natural)
    var authorLayout: TextLayout? = nil
    if !author.isEmpty {
      // A directional mark gives the author line the quote's direction, so "natural" puts it
      // under the quote's starting edge in either script direction.
      let mark = quote.isRightToLeft ? "\u{200F}" : "\u{200E}"
      let layout = TextLayout(context: context, text: "\(mark)\u{2014} \(author)", family: family)
      layout.setAlignment(alignment == .center ? .center : .natural)
      authorLayout = layout
    }
    // Where the author line's edge goes relative to the quote's, when the quote is wrapped
    // narrower than the author line: 0 keeps left edges together, 1 right edges, 0.5 centres.
    let authorShiftFactor: Double = alignment == .center ? 0.5 : (quote.isRightToLeft ? 1 : 0)
    return FitMeasure(geometry: geometry, quote: quote, author: authorLayout, authorShiftFactor: authorShiftFactor)
  }

  func fit(quote text: String, author: String, context: TextContext, family: String) -> FittedText {
    let measure = makeMeasure(quote: text, author: author, context: context, family: family)
    let sizes = geometry.candidateSizes
    let placed: (size: Int, measured: MeasuredBlock, truncated: Bool)
    if let found = search(measure, sizes: sizes) {
      let (size, measured) = breakLines(measure, text: text, size: sizes[found.index], measured: found.measured)
      placed = (size, measured, false)
    } else {
      placed = (geometry.minimumSize, truncate(measure), true)
    }
    return place(measure, size: placed.size, measured: placed.measured, truncated: placed.truncated)
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
  /// measure (which the layouts are in). Verse (text with its own line breaks) reads best with
  /// each line whole: if a size not much smaller than the fitted one keeps every line unwrapped,
  /// it is taken as it is. Prose is balanced where the preset wants it.
  private func breakLines(_ measure: FitMeasure, text: String, size: Int, measured: MeasuredBlock) -> (
    size: Int, measured: MeasuredBlock
  ) {
    guard geometry.balancesLines else { return (size, measured) }
    let isVerse = text.contains("\n")
    if isVerse {
      let verseLines = text.split(separator: "\n", omittingEmptySubsequences: false).count
      if measure.quote.lineCount == verseLines { return (size, measured) }
      if let whole = unwrappedSize(measure.quote, below: size), whole * 10 >= size * 7 {
        let atWhole = measure.measure(whole)
        if measure.fits(atWhole.block) && measure.quote.lineCount == verseLines { return (whole, atWhole) }
      }
      return (size, measure.measure(size))
    }
    guard measure.quote.lineCount > 1 else { return (size, measured) }
    // The layouts must end in the state the result describes.
    return (size, balance(measure, size: size) ?? measure.measure(size))
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

  /// Narrows the quote's wrap width as far as it goes without adding a line, so the lines come out
  /// even instead of long lines over a one-word last line. A bisection of about seven layouts.
  private func balance(_ measure: FitMeasure, size: Int) -> MeasuredBlock? {
    let quote = measure.quote
    let full = Double(geometry.drawBounds.width)
    _ = measure.measure(size, quoteWidth: full)
    let lines = quote.lineCount
    var wide = full
    var narrow = full / 2
    while wide - narrow > max(2, Double(size) * 0.25) {
      let middle = (wide + narrow) / 2
      let result = measure.measure(size, quoteWidth: middle)
      if quote.lineCount == lines && measure.fits(result.block) { wide = middle } else { narrow = middle }
    }
    let result = measure.measure(size, quoteWidth: wide)
    return measure.fits(result.block) && quote.lineCount == lines ? result : nil
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
  private func place(_ measure: FitMeasure, size: Int, measured: MeasuredBlock, truncated: Bool) -> FittedText {
    let bounds = geometry.drawBounds
    let block = measured.block
    let dx = Double(bounds.x) + (Double(bounds.width) - block.width) / 2 - block.x
    let dy = Double(bounds.y) + (Double(bounds.height) - block.height) / 2 - block.y
    return FittedText(
      quote: measure.quote, author: measure.author, quoteSize: size,
      authorSize: measure.authorSize(forQuoteSize: size), truncated: truncated || measure.quote.isEllipsized,
      quoteOrigin: (dx, dy), authorOrigin: (dx + measured.authorOffset.x, dy + measured.authorOffset.y),
      block: block.offsetBy(dx: dx, dy: dy), passes: measure.passes)
  }
}
