/// Where the quote and its author line land when laid out at one size: the block (ink and line
/// boxes) in layout space, and the author line's offset from the quote's origin.
typealias MeasuredBlock = (block: PixelRect, authorOffset: (x: Double, y: Double))

/// The first phase of fitting, measure: lays the quote and its author line out at one candidate
/// size and says whether the block fits the draw bounds.
///
/// Every size is measured on its own: nothing learnt at one size (such as how far an italic
/// letter overhangs its line box) is carried to the next, so the verdict for a size is the same
/// whatever was measured before it, and an exhaustive scan with ``measure(_:quoteWidth:)`` gives
/// exactly the answer the search in ``TextFitter`` must find.
///
/// The layouts are left in the state the last call describes.
final class FitMeasure {
  let geometry: CardGeometry
  /// The quote's layout; the break-lines phase may swap in one with its own line breaks.
  private(set) var quote: TextLayout
  let author: TextLayout?
  /// Where the author line's edge goes relative to the quote's, when the quote is wrapped
  /// narrower than the author line: 0 keeps left edges together, 1 right edges, 0.5 centres.
  let authorShiftFactor: Double
  /// The width the quote was last wrapped to, in pixels.
  private(set) var quoteWidth = 0.0
  /// How many times the text was laid out.
  private(set) var passes = 0

  /// Room left for italic overhang past the line box, in proportion to the size.
  static let overhang = 0.12

  init(geometry: CardGeometry, quote: TextLayout, author: TextLayout?, authorShiftFactor: Double) {
    self.geometry = geometry
    self.quote = quote
    self.author = author
    self.authorShiftFactor = authorShiftFactor
  }

  /// The author line's size for a quote size, before it is fitted to the width: smaller than the
  /// quote, but never below legibility nor below the floor
  /// (``CardGeometry/authorFloor(forQuoteSize:)``).
  func baseAuthorSize(forQuoteSize size: Int) -> Double {
    max(Double(size) * 0.48, min(Double(size) * 0.8, Double(geometry.minimumSize)), authorFloor(forQuoteSize: size))
  }

  /// The smallest size the author line shrinks to before it wraps to a second line instead.
  func authorFloor(forQuoteSize size: Int) -> Double { geometry.authorFloor(forQuoteSize: size) }

  /// The author line's width unwrapped, at the reference size (measured once).
  private lazy var authorNaturalWidth: Double = {
    guard let author else { return 0 }
    passes += 1
    author.setPixelSize(TextLayout.referenceSize)
    author.setUnlimitedWidth()
    return author.extents.logical.width
  }()

  /// The largest author size at which its line fits `width` unwrapped.
  private func authorSizeFitting(_ width: Double) -> Double {
    let natural = authorNaturalWidth
    return natural > 0 ? width / natural * TextLayout.referenceSize : .infinity
  }

  /// The author line's size for a quote size. Where the author line is wider than the quote's
  /// wrap width it shrinks to fit one line, down to ``authorFloor(forQuoteSize:)``; past that it
  /// keeps the floor and wraps to a second line (the author layout ellipsizes a third).
  func authorSize(forQuoteSize size: Int) -> Double {
    let base = baseAuthorSize(forQuoteSize: size)
    return max(authorFloor(forQuoteSize: size), min(base, authorSizeFitting(wrapWidth(size)) * 0.999))
  }

  /// A lower bound of ``authorSize(forQuoteSize:)`` for `size` and every larger candidate,
  /// nondecreasing in the size (the base size grows with the quote, the width only shrinks to
  /// its value at the start size).
  private func authorSizeLowerBound(forQuoteSize size: Int) -> Double {
    let base = baseAuthorSize(forQuoteSize: size)
    return max(authorFloor(forQuoteSize: size), min(base, authorSizeFitting(wrapWidth(geometry.startSize)) * 0.999))
  }

  /// Room between the quote's last line and the author line (from the base size, so it does
  /// not change when a long author line shrinks).
  func gap(forQuoteSize size: Int) -> Double { baseAuthorSize(forQuoteSize: size) * 0.6 }

  private var boundsWidth: Double { Double(geometry.drawBounds.width) }
  private var boundsHeight: Double { Double(geometry.drawBounds.height) }

  /// The quote's break model (one unwrapped layout, counted as a pass).
  func breakModel() -> BreakModel {
    passes += 1
    return quote.breakModel()
  }

  /// Measures `layout` from now on instead of the quote's current layout.
  func replaceQuote(_ layout: TextLayout) { quote = layout }

  /// The width the quote is wrapped to at `size`: the bounds less room for italic overhang.
  func wrapWidth(_ size: Int) -> Double { max(1, boundsWidth - (Double(size) * FitMeasure.overhang).rounded(.up)) }

  func fits(_ block: PixelRect) -> Bool {
    block.width <= boundsWidth && block.height <= boundsHeight
  }

  /// Lays both out at `size`, the quote wrapped to `quoteWidth` and the author to `authorWidth`.
  private func layOut(_ size: Int, quoteWidth: Double, authorWidth: Double) -> MeasuredBlock {
    passes += 1
    quote.setPixelSize(Double(size))
    quote.setWidth(quoteWidth)
    self.quoteWidth = quoteWidth
    var block = quote.bounds
    var offset = (x: 0.0, y: 0.0)
    if let author {
      author.setPixelSize(authorSize(forQuoteSize: size))
      author.setWidth(authorWidth)
      offset = ((quoteWidth - authorWidth) * authorShiftFactor, quote.extents.logical.maxY + gap(forQuoteSize: size))
      block = block.union(author.bounds.offsetBy(dx: offset.x, dy: offset.y))
    }
    return (block, offset)
  }

  /// Lays both out at `size` (the quote at most `quoteWidth` wide), leaving room for italic
  /// overhang. Glyphs that overhang their line box on both sides can make the block wider than
  /// the bounds: then the wrap width is narrowed by the excess and the text laid out again (at
  /// most three times), so width never decides the size. A wrap width is never below one pixel:
  /// when narrowing would go below that, the text holds something wider than the bounds at this
  /// size, and the block is returned as it is (too wide, so the size does not fit).
  func measure(_ size: Int, quoteWidth: Double? = nil) -> MeasuredBlock {
    var width = wrapWidth(size)
    var narrowed = max(1, min(quoteWidth ?? width, width))
    var result = layOut(size, quoteWidth: narrowed, authorWidth: width)
    var attempts = 0
    while result.block.width > boundsWidth && attempts < 3 {
      let excess = (result.block.width - boundsWidth).rounded(.up) + 1
      guard excess.isFinite, narrowed - excess >= 1, width - excess >= 1 else { break }
      width -= excess
      narrowed -= excess
      result = layOut(size, quoteWidth: narrowed, authorWidth: width)
      attempts += 1
    }
    return result
  }

  /// Lays out a quote whose lines are already broken (with line separators) at `size`: wrapped
  /// to the full bounds width only as a safety net, so Pango keeps the breaks as planned even
  /// where its measure of a line differs from the planner's by a pixel. Whether the block fits
  /// is for the caller to check, as always.
  func measureBroken(_ size: Int) -> MeasuredBlock {
    layOut(size, quoteWidth: boundsWidth, authorWidth: wrapWidth(size))
  }

  /// Whether `size` can fit at all, by a bound that is monotonic in the size: `false` here means
  /// neither this size nor any larger one fits, `true` only that it might.
  ///
  /// The bound lays the text out with the widest wrap any measure uses, the full bounds width,
  /// and counts only line boxes (the author line's at a size no larger than at any larger
  /// candidate). ``measure(_:quoteWidth:)`` wraps no wider, so its lines are no
  /// fewer and its block is no smaller than these line boxes. And a layout is made at a
  /// reference size and scaled, so a larger size is the same text wrapped to a narrower width
  /// (in reference units) and scaled up: no fewer lines, each taller. The same holds for a
  /// cluster wider than the bounds, which no wrap can break.
  func mayFit(_ size: Int) -> Bool {
    passes += 1
    quote.setPixelSize(Double(size))
    quote.setWidth(boundsWidth)
    let lines = quote.extents.logical
    let width = lines.width
    var bottom = lines.maxY
    if let author {
      // At least one line (it wraps to two only past its floor): one line's height is a bound.
      author.setPixelSize(authorSizeLowerBound(forQuoteSize: size))
      author.setWidth(boundsWidth)
      bottom += gap(forQuoteSize: size) + author.extents.logical.maxY
    }
    return width <= boundsWidth && bottom - lines.y <= boundsHeight
  }

  /// The exhaustive answer: the index of the first (largest) candidate whose block fits, as the
  /// app's shrink-until-it-fits loop would find it, one layout per size. For tests: the fitter's
  /// search must agree with it for every text.
  func scanForLargestFit(_ sizes: [Int]) -> Int? {
    sizes.indices.first { fits(measure(sizes[$0]).block) }
  }
}
