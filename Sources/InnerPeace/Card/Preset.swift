/// A named card shape, or any `WxH` within ``Limits``.
public enum Preset: Hashable, Sendable, Codable, CustomStringConvertible {
  /// The app's iPad card: 2048 x 1536, the app's geometry exactly.
  case classic
  /// Open Graph / link previews: 1200 x 630. The default.
  case og
  /// 1080 x 1080.
  case square
  /// Stories: 1080 x 1920.
  case story
  /// Any size within ``Limits``.
  case custom(CanvasSize)

  /// The named presets, in the order the documentation lists them.
  public static let named: [Preset] = [.classic, .og, .square, .story]

  /// Parses `classic`, `og`, `square`, `story` or `WxH` (``CanvasSize/init(parsing:)``), as
  /// written: lowercase names, a lowercase `x`, plain decimal sides. The one grammar of the
  /// command line's `--preset` and the service's `preset=`.
  /// - Throws: ``InnerPeaceError/presetUnknown(_:)`` for an unknown name, or
  ///   ``InnerPeaceError/sizeInvalid(reason:)`` for a `WxH` out of limits or not plain decimals.
  public init(parsing text: String) throws(InnerPeaceError) {
    switch text {
    case "classic": self = .classic
    case "og": self = .og
    case "square": self = .square
    case "story": self = .story
    default:
      guard text.contains("x"), let first = text.utf8.first, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first)
      else {
        throw .presetUnknown(text)
      }
      self = .custom(try CanvasSize(parsing: text))
    }
  }

  public var description: String {
    switch self {
    case .classic: "classic"
    case .og: "og"
    case .square: "square"
    case .story: "story"
    case .custom(let size): size.description
    }
  }

  /// The canvas size in pixels.
  public var size: CanvasSize { geometry.canvas }

  /// Where and how big the text goes on this preset.
  public var geometry: CardGeometry {
    switch self {
    case .classic:
      // The app: 1024 x 768 pt at 2x, 250 pt insets, 120 pt start, 4 pt steps, blur 2...10 pt,
      // a text image 30 pt larger than the text on every side.
      CardGeometry(
        canvas: try! CanvasSize(width: 2048, height: 1536), pixelsPerPoint: 2, insetX: 500, insetY: 500,
        startSize: 240, step: 8, minimumSize: 32, adjustsSizeForParagraph: false, keepsAppHalo: true)
    case .og:
      CardGeometry(
        canvas: try! CanvasSize(width: 1200, height: 630), pixelsPerPoint: 1, insetX: 110, insetY: 72,
        startSize: 100, step: 1, minimumSize: 18)
    case .square:
      CardGeometry(
        canvas: try! CanvasSize(width: 1080, height: 1080), pixelsPerPoint: 1.25, insetX: 120, insetY: 150,
        startSize: 120, step: 1, minimumSize: 22)
    case .story:
      CardGeometry(
        canvas: try! CanvasSize(width: 1080, height: 1920), pixelsPerPoint: 1.5, insetX: 110, insetY: 360,
        startSize: 170, step: 1, minimumSize: 26)
    case .custom(let size):
      CardGeometry.generic(for: size)
    }
  }
}

/// The geometry of a card: canvas, draw bounds, and the font sizes the fitter may choose from.
/// All lengths are in pixels.
public struct CardGeometry: Hashable, Sendable {
  public let canvas: CanvasSize
  /// Pixels per design point: 2 for `classic` (the iPad's 2x), about 1 for `og`.
  public let pixelsPerPoint: Double
  /// Horizontal inset of the draw bounds on each side.
  public let insetX: Int
  /// Vertical inset of the draw bounds on each side.
  public let insetY: Int
  /// The largest quote size tried.
  public let startSize: Int
  /// The step between sizes tried (the app shrank by 4 pt, 8 px at 2x).
  public let step: Int
  /// The smallest legible size: text that does not fit here is ellipsized.
  public let minimumSize: Int
  /// Whether the quote may be set smaller than the largest fit for a paragraph without flaws, or
  /// for verse lines kept whole (`classic` keeps the app's size; the line breaker still chooses
  /// its breaks).
  public var adjustsSizeForParagraph: Bool = true
  /// Whether the halo keeps the app's fixed blur whatever the quote's size (`classic`).
  public var keepsAppHalo: Bool = false

  /// Whether prose aims for a readable measure (about 20 to 35 characters a line) by coming down
  /// from the largest size that fits: on narrow canvases, those at least as tall as they are wide
  /// (`square`, `story`, a portrait or square `WxH`), where the largest fit sets short quotes a few
  /// words a line. Wide canvases (`og`, a landscape `WxH`) give long lines at any size; `classic`
  /// keeps the app's size.
  public var aimsForMeasure: Bool { adjustsSizeForParagraph && canvas.height >= canvas.width }

  /// The rectangle the text (quote and author line) must stay inside.
  public var drawBounds: (x: Int, y: Int, width: Int, height: Int) {
    (insetX, insetY, canvas.width - 2 * insetX, canvas.height - 2 * insetY)
  }

  /// The halo's room around the text: 30 pt, as in the app.
  public var haloMargin: Int { Int((30 * pixelsPerPoint).rounded()) }

  /// The five shadow blurs at the start size: for `classic`, the app's 2...10 pt at 2x.
  public var shadowSigmas: [Double] { shadowSigmas(forQuoteSize: Double(startSize)) }

  /// The five shadow blurs for a quote set at `size` pixels, as Gaussian sigmas in pixels.
  ///
  /// The halo carries letters, so it scales with them, not with the canvas: the app blurred its
  /// 240 px (120 pt at 2x) start size by 2, 4, 6, 8 and 10 pt, sigmas of 2...10 px (sigma = blur
  /// / 2), and every other size keeps that ratio to the letters. Below 120 px the ratio stops
  /// shrinking (half the app's, sigmas of 1...5 px), so the halo still carries thin strokes.
  ///
  /// `classic` keeps the app's blur exactly, 2...10 px at every size: the app's card is reproduced,
  /// and only deepening over bright photos (``HaloContrast``) is added to it.
  public func shadowSigmas(forQuoteSize size: Double) -> [Double] {
    let scale = keepsAppHalo ? 1 : max(size / 240, 0.5)
    return [2.0, 4, 6, 8, 10].map { $0 * scale }
  }

  /// The sizes the fitter may choose from, largest first, ending at ``minimumSize``.
  public var candidateSizes: [Int] {
    var sizes = Array(stride(from: startSize, through: minimumSize, by: -step))
    if sizes.last != minimumSize { sizes.append(minimumSize) }
    return sizes
  }

  /// Geometry for any size: 9 % side insets, 12 % top and bottom (more for tall canvases), and a
  /// start size and minimum in proportion to the shorter side. (`pixelsPerPoint`, from the area,
  /// sets only the halo's largest margin; its blur follows the fitted font size.)
  static func generic(for size: CanvasSize) -> CardGeometry {
    let shorter = Double(min(size.width, size.height))
    let aspect = Double(size.height) / Double(size.width)
    let verticalShare = aspect > 1.3 ? 0.18 : 0.12
    let scale = max(0.5, (Double(size.width * size.height) / (1024 * 768)).squareRoot())
    return CardGeometry(
      canvas: size, pixelsPerPoint: scale, insetX: Int((Double(size.width) * 0.09).rounded()),
      insetY: Int((Double(size.height) * verticalShare).rounded()),
      startSize: max(24, Int((shorter * 0.16).rounded())), step: 1,
      minimumSize: max(12, Int((shorter * 0.028).rounded())))
  }
}
