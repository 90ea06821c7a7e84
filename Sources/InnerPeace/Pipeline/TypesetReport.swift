import Foundation

/// What a card set, and how: its size, the lines of the quote and of the author line as set, and
/// for each run of text on a line the script, language, font file, style, missing glyphs and dotted
/// circles. Computed only when asked (``CardRequest/includesReport``,
/// ``CardRenderer/typesetReport(quote:showsAuthor:preset:alignment:language:)``); the plain render never
/// makes one.
public struct TypesetReport: Codable, Sendable, Equatable {
  /// The canvas, in pixels.
  public var width: Int
  public var height: Int
  /// The preset's name (`og`, `story`, …, or `WxH`).
  public var preset: String
  /// The quote's size in pixels.
  public var quoteSize: Int
  /// The author line's size in pixels (0 when the card has no author line).
  public var authorSize: Double
  /// The quote did not fit even at the minimum size and was ellipsized.
  public var truncated: Bool
  /// The quote's lines as set, top to bottom (inserted line separators and trailing spaces removed).
  public var lines: [String]
  /// The author line's lines as set (`— Author`; empty without an author line).
  public var authorLines: [String]
  /// Every run of text of one font, script and language on one line, quote first, line by line,
  /// each line's runs in visual order (as Pango placed them).
  public var runs: [Run]
  /// The sum of the runs' missing glyphs.
  public var missingGlyphs: Int
  /// The sum of the runs' dotted circles.
  public var dottedCircles: Int

  /// One run: a stretch of text on one line that one font sets in one script and language.
  public struct Run: Codable, Sendable, Equatable {
    /// Which text the run belongs to.
    public enum Part: String, Codable, Sendable {
      case quote, author
    }

    /// How the face is slanted (the one model of a run's style: the script tests check the same
    /// value on ``TextLayout/SetRun``).
    public enum Style: String, Codable, Sendable {
      /// An upright (roman) face.
      case upright
      /// A face designed as an italic.
      case italic
      /// A face designed slanted: fontconfig's oblique slant, or a family slanted by design such
      /// as Noto Serif Tamil Slanted.
      case slanted
      /// A face slanted by fontconfig (a shear matrix): a synthetic oblique.
      case syntheticOblique = "synthetic-oblique"
    }

    /// Glyphs the font could not draw (drawn as boxes): how many, and for which characters.
    public struct Missing: Codable, Sendable, Equatable {
      public var count: Int
      /// Each character once, in order of appearance.
      public var characters: [String]
      /// The same characters as `U+XXXX`.
      public var codePoints: [String]

      public init(count: Int, characters: [String], codePoints: [String]) {
        self.count = count
        self.characters = characters
        self.codePoints = codePoints
      }
    }

    public var part: Part
    /// The line of its part the run is on, from 0.
    public var line: Int
    /// The run's text (an ellipsis run: `…`).
    public var text: String
    /// The ISO 15924 code of the run's script (`Latn`, `Taml`, `Zyyy` for common characters).
    public var script: String
    /// The BCP 47 language tag Pango shaped the run with (`nil`: none).
    public var language: String?
    /// The font file's path, and the face's family name.
    public var fontFile: String
    public var family: String
    public var style: Style
    public var missing: Missing
    /// U+25CC DOTTED CIRCLE glyphs drawn in the run beyond those in its text: the shaper's mark
    /// for a combining sign with no base in that font.
    public var dottedCircles: Int

    public init(
      part: Part, line: Int, text: String, script: String, language: String?, fontFile: String, family: String,
      style: Style, missing: Missing, dottedCircles: Int
    ) {
      self.part = part
      self.line = line
      self.text = text
      self.script = script
      self.language = language
      self.fontFile = fontFile
      self.family = family
      self.style = style
      self.missing = missing
      self.dottedCircles = dottedCircles
    }
  }

  public init(
    width: Int, height: Int, preset: String, quoteSize: Int, authorSize: Double, truncated: Bool, lines: [String],
    authorLines: [String], runs: [Run]
  ) {
    self.width = width
    self.height = height
    self.preset = preset
    self.quoteSize = quoteSize
    self.authorSize = authorSize
    self.truncated = truncated
    self.lines = lines
    self.authorLines = authorLines
    self.runs = runs
    missingGlyphs = runs.reduce(0) { $0 + $1.missing.count }
    dottedCircles = runs.reduce(0) { $0 + $1.dottedCircles }
  }
}

extension TypesetReport {
  /// The report as UTF-8 JSON, as every output writes it: pretty-printed, keys sorted, slashes
  /// as they are, ending in a newline.
  public var json: [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    // Strings, whole numbers, finite sizes and arrays of them always encode.
    return [UInt8]((try? encoder.encode(self)) ?? Data()) + [0x0A]
  }

  /// The report of a fitted text, read from its layouts as they were placed.
  init(_ fitted: FittedText, preset: Preset) {
    let canvas = preset.geometry.canvas
    let author = fitted.author
    self.init(
      width: canvas.width, height: canvas.height, preset: preset.description, quoteSize: fitted.quoteSize,
      authorSize: author == nil ? 0 : fitted.authorSize, truncated: fitted.truncated,
      lines: fitted.quote.lineTexts.map(Self.visible),
      authorLines: author?.lineTexts.map(Self.visible) ?? [],
      runs: Self.runs(of: fitted.quote, part: .quote) + (author.map { Self.runs(of: $0, part: .author) } ?? []))
  }

  /// The runs of a placed layout (``TextLayout/setRuns``) as the report lists them, leaving out
  /// runs that hold only invisible marks (the author line's directional mark, an inserted line
  /// separator).
  static func runs(of layout: TextLayout, part: Run.Part) -> [Run] {
    layout.setRuns.compactMap { Run($0, part: part) }
  }

  /// The text without the directional marks the card adds (the author line starts with one) and
  /// the line separators the line breaker inserts.
  static func visible(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { !invisible.contains($0) }))
  }

  private static let invisible: Set<Unicode.Scalar> = ["\u{200E}", "\u{200F}", "\u{2028}", "\u{2029}"]
}

extension TypesetReport.Run {
  /// The report's view of a run as set; `nil` for a run with nothing visible.
  init?(_ run: TextLayout.SetRun, part: Part) {
    let text = TypesetReport.visible(run.text)
    guard !text.isEmpty else { return nil }
    self.init(
      part: part, line: run.line, text: text, script: run.script, language: run.language, fontFile: run.fontFile,
      family: run.family, style: run.style,
      missing: Missing(
        count: run.missingGlyphs, characters: run.missingCharacters.map { String($0) },
        codePoints: run.missingCharacters.map { "U+" + Self.hexDigits($0.value) }),
      dottedCircles: run.dottedCircles)
  }

  /// A code point as at least four upper-case hexadecimal digits.
  private static func hexDigits(_ value: UInt32) -> String {
    let hex = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
  }
}

extension CardRenderer {
  /// The report of `quote` as a card would set it, without drawing: the fit alone. For a catalog
  /// quote this is the report of its card (``CardRequest/includesReport``); custom text must be
  /// given as the card draws it (tidied, with typographic punctuation where asked).
  public func typesetReport(
    quote: Quote, showsAuthor: Bool = true, preset: Preset, alignment: TextAlignment = .natural,
    language: LanguageTag? = nil
  ) -> TypesetReport {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: bundledFontPath))
    let fitted = TextFitter(geometry: preset.geometry, alignment: alignment, language: language).fit(
      quote: quote.text, author: showsAuthor ? quote.author : "", context: context, family: FontSetup.family)
    return TypesetReport(fitted, preset: preset)
  }
}
