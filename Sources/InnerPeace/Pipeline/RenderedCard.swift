/// A finished card: its bytes and what was chosen to make them.
public struct RenderedCard: Sendable {
  /// The encoded image.
  public let bytes: [UInt8]
  public let format: ImageFormat
  public let size: CanvasSize
  /// The catalog index of the quote, or `nil` for custom text.
  public let quoteIndex: Int?
  public let quote: Quote
  /// The picture behind the text, or `nil` for a transparent card.
  public let picture: String?
  /// `"<text>" — <author>`, the app's share message.
  public let shareMessage: String
  /// The fitted quote size in pixels.
  public let fontSize: Int
  /// The text did not fit at the minimum legible size and was ellipsized.
  public let truncated: Bool
  /// How many text layouts the fitter made.
  public let layoutPasses: Int
  /// How many glyphs of the quote and author line no installed font could draw: each is drawn
  /// as a box ("tofu"). Zero for text every character of which has a face.
  public let missingGlyphs: Int
  /// What was set, and how: only when the request asked for it (``CardRequest/includesReport``).
  public let report: TypesetReport?
  /// Time spent in each stage of this render.
  public let timings: StageTimings

  /// A card made elsewhere: the server rebuilds the cards its render worker processes send back.
  public init(
    bytes: [UInt8], format: ImageFormat, size: CanvasSize, quoteIndex: Int?, quote: Quote, picture: String?,
    shareMessage: String, fontSize: Int, truncated: Bool, layoutPasses: Int, timings: StageTimings,
    missingGlyphs: Int = 0, report: TypesetReport? = nil
  ) {
    self.bytes = bytes
    self.format = format
    self.size = size
    self.quoteIndex = quoteIndex
    self.quote = quote
    self.picture = picture
    self.shareMessage = shareMessage
    self.fontSize = fontSize
    self.truncated = truncated
    self.layoutPasses = layoutPasses
    self.timings = timings
    self.missingGlyphs = missingGlyphs
    self.report = report
  }

  /// A copy of `card` with other bytes, everything else the same: for tests that fake a faulty
  /// renderer (no bytes, damaged bytes).
  public init(_ card: RenderedCard, bytes: [UInt8]) {
    self.init(
      bytes: bytes, format: card.format, size: card.size, quoteIndex: card.quoteIndex, quote: card.quote,
      picture: card.picture, shareMessage: card.shareMessage, fontSize: card.fontSize, truncated: card.truncated,
      layoutPasses: card.layoutPasses, timings: card.timings, missingGlyphs: card.missingGlyphs,
      report: card.report)
  }
}

/// Time spent in each stage of one render, in seconds. `decode` and `scale` are zero when the
/// background came from the cache.
public struct StageTimings: Sendable {
  public var decode: Double = 0
  public var scale: Double = 0
  public var fit: Double = 0
  public var blur: Double = 0
  public var draw: Double = 0
  public var encode: Double = 0

  public init() {}

  public var total: Double { decode + scale + fit + blur + draw + encode }
}
