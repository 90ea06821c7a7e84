/// An output image format.
public enum ImageFormat: String, CaseIterable, Hashable, Sendable, Codable {
  case png
  case jpeg
  case webp
  case avif

  /// Parses `png`, `jpeg` (or `jpg`), `webp` and `avif`.
  /// - Throws: ``InnerPeaceError/formatUnknown(_:)`` for anything else.
  public init(parsing text: String) throws(InnerPeaceError) {
    switch text.lowercased() {
    case "png": self = .png
    case "jpeg", "jpg": self = .jpeg
    case "webp": self = .webp
    case "avif": self = .avif
    default: throw .formatUnknown(text)
    }
  }

  /// The usual file extension.
  public var fileExtension: String { self == .jpeg ? "jpg" : rawValue }

  /// Every extension a file or URL may name the format by, the usual one first (`jpg` and
  /// `jpeg` for JPEG), lowercase.
  public var fileExtensions: [String] { self == .jpeg ? ["jpg", "jpeg"] : [rawValue] }

  /// The HTTP media type.
  public var mediaType: String { "image/\(rawValue)" }

  /// Whether the format keeps an alpha channel, as a transparent card needs (JPEG has none).
  public var carriesAlpha: Bool { self != .jpeg }

  /// The one check of the rule that a transparent card cannot be a JPEG; the renderer and the
  /// encoder both make it.
  /// - Parameter transparent: whether the card has transparent pixels.
  /// - Throws: ``InnerPeaceError/transparencyUnsupported(format:)`` for a transparent card in a
  ///   format without alpha.
  public func validate(transparent: Bool) throws(InnerPeaceError) {
    guard transparent && !carriesAlpha else { return }
    throw .transparencyUnsupported(format: self)
  }
}

/// How the lines of the quote sit inside the text block.
public enum TextAlignment: String, CaseIterable, Hashable, Sendable, Codable {
  /// Left for left-to-right scripts, right for right-to-left ones, as the app did.
  case natural
  /// Every line centred.
  case center
}

/// Which quote goes on the card.
public enum QuoteChoice: Hashable, Sendable, Codable {
  /// A quote picked by the request's seed.
  case random
  /// The catalog quote at this index (0-based).
  case index(Int)
  /// Any text, with an optional author.
  case text(String, author: String?)
}

/// Which photo goes behind the quote.
public enum PictureChoice: Hashable, Sendable, Codable {
  /// A picture picked by the request's seed.
  case random
  /// The catalog picture with this file name.
  case named(String)
}

/// Everything that decides a card's bytes. Equal requests (with a seed) give equal bytes.
/// `Codable` (synthesized, every part typed) so that it crosses the render worker wire as it is.
public struct CardRequest: Hashable, Sendable, Codable {
  public var preset: Preset
  public var quote: QuoteChoice
  public var picture: PictureChoice
  /// Decides the random choices; the same seed picks the same quote and picture.
  public var seed: UInt64
  public var format: ImageFormat
  /// Draw the `— Author` line under the quote.
  public var showsAuthor: Bool
  public var alignment: TextAlignment
  /// Render only the text layer, with alpha, and no photo.
  public var transparent: Bool
  /// Give custom text (``QuoteChoice/text(_:author:)``) typographic quotes, apostrophes, dashes
  /// and ellipses (`it's` becomes `it’s`, `"…"` becomes `“…”`, `--` an em dash, `...` an
  /// ellipsis). Catalog quotes are always drawn as written.
  public var typographicPunctuation: Bool
  /// JPEG, WebP or AVIF quality, 1 (smallest) to 100; `nil` is the encoder's default
  /// (``ImageEncoding``: 90 for JPEG and WebP, 81 for AVIF, which matches WebP's 90 on SSIM).
  /// PNG is lossless and ignores it.
  public var quality: Int?
  /// Also make the card's ``TypesetReport`` (``RenderedCard/report``). It never changes the
  /// image; a render without it spends nothing on the report.
  public var includesReport: Bool
  /// The text's language, where the caller knows it (``LanguageTag``); `nil` guesses it from the
  /// text.
  public var language: LanguageTag?

  public init(
    preset: Preset = .og, quote: QuoteChoice = .random, picture: PictureChoice = .random, seed: UInt64,
    format: ImageFormat = .png, showsAuthor: Bool = true, alignment: TextAlignment = .natural,
    transparent: Bool = false, typographicPunctuation: Bool = true, quality: Int? = nil,
    includesReport: Bool = false, language: LanguageTag? = nil
  ) {
    self.preset = preset
    self.quote = quote
    self.picture = picture
    self.seed = seed
    self.format = format
    self.showsAuthor = showsAuthor
    self.alignment = alignment
    self.transparent = transparent
    self.typographicPunctuation = typographicPunctuation
    self.quality = quality
    self.includesReport = includesReport
    self.language = language
  }

  /// Makes the checks that need no catalog, as the renderer makes them: custom text and author
  /// within ``Limits`` and free of control characters, and no transparent JPEG. A caller that may
  /// answer without rendering (a 304 from a cache's tag) makes them first.
  /// - Throws: ``InnerPeaceError/textInvalid(reason:)``, ``InnerPeaceError/authorInvalid(reason:)``
  ///   or ``InnerPeaceError/transparencyUnsupported(format:)``.
  public func validate() throws(InnerPeaceError) {
    if case .text(let text, let author) = quote {
      _ = try TextRules.quote(text)
      _ = try TextRules.author(author ?? "")
    }
    try format.validate(transparent: transparent)
  }
}
