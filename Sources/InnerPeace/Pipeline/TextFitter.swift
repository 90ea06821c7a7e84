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

/// Finds the largest candidate size at which the quote (and its author line) fit the draw bounds,
/// by bisection over the preset's candidate sizes: about log2(n) layouts, not n.
///
/// The app shrank by 4 pt until the height fitted; bisection over the same candidate list gives the
/// same answer wherever a larger size never fits when a smaller one does not, which holds for
/// wrapped text in all but contrived cases, and the answer always fits.
struct TextFitter {
  let geometry: CardGeometry
  let alignment: TextAlignment

  /// The author line's size for a quote size: smaller, but never below legibility.
  func authorSize(forQuoteSize size: Int) -> Double {
    max(Double(size) * 0.48, min(Double(size) * 0.8, Double(geometry.minimumSize)))
  }

  /// Room between the quote's last line and the author line.
  func gap(forQuoteSize size: Int) -> Double { authorSize(forQuoteSize: size) * 0.6 }

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
    let bounds = geometry.drawBounds
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
    let authorShiftFactor: Double =
      alignment == .center ? 0.5 : (quote.isRightToLeft ? 1 : 0)

    var passes = 0
    /// Room left for italic overhang past the line box, in proportion to the size. Learnt from
    /// blocks wider than the bounds, but never more than half the size: wider than that is not
    /// overhang but a word too wide for the bounds.
    var overhang = 0.12
    let maximumOverhang = 0.5
    /// Lays both out at `size`, the quote wrapped to `quoteWidth` and the author to `authorWidth`;
    /// returns the block in layout space and the author line's offset.
    func layOut(_ size: Int, quoteWidth: Double, authorWidth: Double) -> (
      block: PixelRect, authorOffset: (x: Double, y: Double)
    ) {
      passes += 1
      quote.setPixelSize(Double(size))
      quote.setWidth(quoteWidth)
      var block = quote.bounds
      var offset = (x: 0.0, y: 0.0)
      if let authorLayout {
        authorLayout.setPixelSize(authorSize(forQuoteSize: size))
        authorLayout.setWidth(authorWidth)
        offset = (
          (quoteWidth - authorWidth) * authorShiftFactor, quote.extents.logical.maxY + gap(forQuoteSize: size)
        )
        block = block.union(authorLayout.bounds.offsetBy(dx: offset.x, dy: offset.y))
      }
      return (block, offset)
    }
    /// Lays both out at `size` (the quote at most `quoteWidth` wide). Glyphs that overhang their
    /// line box on both sides can make the block wider than the bounds: then the wrap width is
    /// narrowed by the excess and the text laid out again, so width never decides the size.
    /// A wrap width is never below one pixel: when narrowing would go below that, the text
    /// holds something wider than the bounds at this size, and the block is returned as it is
    /// (too wide, so the size does not fit).
    func measure(_ size: Int, quoteWidth: Double? = nil) -> (block: PixelRect, authorOffset: (x: Double, y: Double)) {
      var width = max(1, Double(bounds.width) - (Double(size) * overhang).rounded(.up))
      var narrowed = max(1, min(quoteWidth ?? width, width))
      var result = layOut(size, quoteWidth: narrowed, authorWidth: width)
      var attempts = 0
      while result.block.width > Double(bounds.width) && attempts < 3 {
        let excess = (result.block.width - Double(bounds.width)).rounded(.up) + 1
        guard excess.isFinite, narrowed - excess >= 1, width - excess >= 1 else { break }
        // Remember the overhang, in proportion to the size, for the sizes still to try.
        overhang = min(overhang + excess / Double(size), maximumOverhang)
        width -= excess
        narrowed -= excess
        result = layOut(size, quoteWidth: narrowed, authorWidth: width)
        attempts += 1
      }
      return result
    }
    func fits(_ block: PixelRect) -> Bool {
      block.width <= Double(bounds.width) && block.height <= Double(bounds.height)
    }

    let sizes = geometry.candidateSizes
    var chosen: Int? = nil
    if fits(measure(sizes[0]).block) {
      chosen = 0
    } else if fits(measure(sizes[sizes.count - 1]).block) {
      // Invariant: sizes[low] does not fit, sizes[high] does.
      var low = 0
      var high = sizes.count - 1
      while high - low > 1 {
        let middle = (low + high) / 2
        if fits(measure(sizes[middle]).block) { high = middle } else { low = middle }
      }
      chosen = high
    }

    // Lay out the chosen size for good (balanced where the preset wants it). The overhang learnt
    // during the search can narrow the wrap, so the result is checked again; in the rare case it
    // no longer fits, the next smaller size is taken.
    var final: (size: Int, measured: (block: PixelRect, authorOffset: (x: Double, y: Double)))? = nil
    var index = chosen ?? sizes.count
    // Verse (text with its own line breaks) reads best with each line whole: if a size not much
    // smaller than the fitted one keeps every line unwrapped, take it, and do not re-balance.
    let isVerse = text.contains("\n")
    if isVerse && geometry.balancesLines, let fitted = chosen,
      let whole = unwrappedSize(quote, below: sizes[fitted], sizes: sizes, overhang: overhang),
      sizes[whole] * 10 >= sizes[fitted] * 7
    {
      let measured = measure(sizes[whole])
      if fits(measured.block) && quote.lineCount == text.split(separator: "\n", omittingEmptySubsequences: false).count
      {
        index = sizes.count
        final = (sizes[whole], measured)
      }
    }
    while index < sizes.count {
      var measured = measure(sizes[index])
      if fits(measured.block) {
        if geometry.balancesLines && quote.lineCount > 1 && !isVerse {
          // The layouts must end in the state that `measured` describes.
          measured = balance(quote, size: sizes[index], measure: measure, fits: fits) ?? measure(sizes[index])
        }
        if fits(measured.block) {
          final = (sizes[index], measured)
          break
        }
      }
      index += 1
    }

    var truncated = false
    var measured: (block: PixelRect, authorOffset: (x: Double, y: Double))
    let size: Int
    if let final {
      size = final.size
      measured = final.measured
    } else {
      // Nothing fits, even at the minimum legible size: ellipsize the quote at that size.
      size = geometry.minimumSize
      truncated = true
      var available = Double(bounds.height)
      if let authorLayout {
        authorLayout.setPixelSize(authorSize(forQuoteSize: size))
        available -= authorLayout.bounds.height + gap(forQuoteSize: size)
      }
      quote.limitHeight(available)
      measured = measure(size)
      var attempts = 0
      while !fits(measured.block) && attempts < 64 {
        // A block still too wide holds a cluster wider than the bounds, which only ellipsizing
        // its line can shorten, and Pango ellipsizes only the last line the height allows: go
        // to one line. Once at one line, nothing more can be taken away.
        let next = measured.block.width > Double(bounds.width) ? 1 : max(1, available - Double(size) * 0.5)
        if next == available { break }
        available = next
        quote.limitHeight(available)
        measured = measure(size)
        attempts += 1
      }
    }

    let block = measured.block
    let dx = Double(bounds.x) + (Double(bounds.width) - block.width) / 2 - block.x
    let dy = Double(bounds.y) + (Double(bounds.height) - block.height) / 2 - block.y
    return FittedText(
      quote: quote, author: authorLayout, quoteSize: size, authorSize: authorSize(forQuoteSize: size),
      truncated: truncated || quote.isEllipsized, quoteOrigin: (dx, dy),
      authorOrigin: (dx + measured.authorOffset.x, dy + measured.authorOffset.y),
      block: block.offsetBy(dx: dx, dy: dy), passes: passes)
  }

  /// The index of the largest candidate, no larger than `limit`, at which the quote's widest
  /// line fits the bounds without wrapping; layouts scale linearly, so one unwrapped layout says.
  private func unwrappedSize(_ quote: TextLayout, below limit: Int, sizes: [Int], overhang: Double) -> Int? {
    quote.setPixelSize(TextLayout.referenceSize)
    quote.setUnlimitedWidth()
    let natural = quote.bounds.width / TextLayout.referenceSize
    guard natural > 0 else { return nil }
    // Leave the room `measure` leaves for italic overhang, and a pixel or so more.
    let widest = Double(geometry.drawBounds.width) / (natural + overhang + 0.02)
    return sizes.firstIndex { $0 <= limit && Double($0) <= widest }
  }

  /// Narrows the quote's wrap width as far as it goes without adding a line, so the lines come out
  /// even instead of long lines over a one-word last line. A bisection of about seven layouts.
  private func balance(
    _ quote: TextLayout, size: Int,
    measure: (Int, Double?) -> (block: PixelRect, authorOffset: (x: Double, y: Double)),
    fits: (PixelRect) -> Bool
  ) -> (block: PixelRect, authorOffset: (x: Double, y: Double))? {
    let full = Double(geometry.drawBounds.width)
    _ = measure(size, full)
    let lines = quote.lineCount
    var wide = full
    var narrow = full / 2
    while wide - narrow > max(2, Double(size) * 0.25) {
      let middle = (wide + narrow) / 2
      let result = measure(size, middle)
      if quote.lineCount == lines && fits(result.block) { wide = middle } else { narrow = middle }
    }
    let result = measure(size, wide)
    return fits(result.block) && quote.lineCount == lines ? result : nil
  }
}
