import InnerPeace

/// The card options every image endpoint takes: preset (or w and h), format, align, author,
/// quality. Parsed strictly: every value is one the OpenAPI document allows, or a 400 naming it.
struct CardOptions {
  var preset: Preset = .og
  var format: ImageFormat = .png
  var alignment: TextAlignment = .natural
  var showsAuthor = true
  /// JPEG, WebP or AVIF quality, 1...100; `nil` is the encoder's default (90; AVIF's 81).
  var quality: Int? = nil
  /// Whether the format was chosen from `Accept` (the response then varies by it).
  var negotiated = false

  /// The range `quality` takes.
  static let qualityRange = 1...100

  /// The defaults: og, PNG, natural alignment, with the author.
  init() {}

  /// The part of a cache key these options decide.
  var key: String {
    "\(preset)|\(format.rawValue)|\(alignment.rawValue)|\(showsAuthor)|\(quality.map(String.init) ?? "-")"
  }

  /// - Parameters:
  ///   - pathFormat: the path's extension, or `nil` for a URL without one (the format then comes
  ///     from `format=`, or else from `accept`).
  ///   - authorIsSwitch: whether `author` is the true/false switch (not on `/card`, where it is
  ///     the author's name).
  init(query: QueryParameters, pathFormat: String?, accept: String?, authorIsSwitch: Bool = true)
    throws(ServiceError)
  {
    let width = query["w"]
    let height = query["h"]
    if width != nil || height != nil {
      guard query["preset"] == nil else {
        throw .badParameter("preset", "use either preset or w and h, not both")
      }
      guard let width, let height else {
        throw .badParameter(width == nil ? "w" : "h", "w and h go together")
      }
      var sides: [Int] = []
      for (name, value) in [("w", width), ("h", height)] {
        guard let number = WholeNumber(value)?.value else {
          throw .badParameter(name, "\(name) must be a whole number of pixels")
        }
        guard (Limits.minimumSide...Limits.maximumSide).contains(number) else {
          throw .badParameter(name, "\(name) must be from \(Limits.minimumSide) to \(Limits.maximumSide) pixels")
        }
        sides.append(number)
      }
      do {
        preset = .custom(try CanvasSize(width: sides[0], height: sides[1]))
      } catch {
        throw .badParameter("w", error.description)
      }
    } else if let name = query["preset"] {
      preset = try Self.preset(name)
    }
    quality = try query.wholeNumber("quality", in: Self.qualityRange)
    let named = try query["format"].map { name throws(ServiceError) in
      guard RouteTable.pathFormats.contains(name) else {
        throw .badParameter("format", "unknown format '\(name)': use \(RouteTable.formatList)")
      }
      return try! ImageFormat(parsing: name)
    }
    if let pathFormat {
      let fromPath = try! ImageFormat(parsing: pathFormat)
      if let named, named != fromPath {
        throw .badParameter(
          "format", "format=\(query["format"]!) contradicts the .\(pathFormat) in the path; leave format out")
      }
      format = fromPath
    } else if let named {
      format = named
    } else {
      // quality asks for a lossy format: PNG is then not a candidate.
      let candidates: [ImageFormat] = quality == nil ? ImageFormat.allCases : [.jpeg, .webp, .avif]
      guard let chosen = FormatNegotiation.choose(accept: accept, among: candidates) else {
        throw ServiceError(
          .notAcceptable,
          "Accept admits none of \(candidates.map(\.mediaType).joined(separator: ", ")); or use .png, .jpg, .webp or .avif"
        )
      }
      format = chosen
      negotiated = true
    }
    if quality != nil && format == .png {
      throw .badParameter("quality", "quality applies to jpeg, webp and avif; a png is lossless")
    }
    switch query["align"] {
    case nil, "natural": alignment = .natural
    case "center": alignment = .center
    case let other?: throw .badParameter("align", "unknown alignment '\(other)': use natural or center")
    }
    if authorIsSwitch {
      showsAuthor = try Self.boolean(query, "author") ?? true
    }
  }

  /// A boolean parameter: `true` or `false`, nothing else (`nil` when absent).
  /// - Throws: ``ServiceError`` (400) naming the parameter for any other value.
  static func boolean(_ query: QueryParameters, _ name: String) throws(ServiceError) -> Bool? {
    switch query[name] {
    case nil: nil
    case "true": true
    case "false": false
    case let other?: throw .badParameter(name, "\(name) is true or false, not '\(other)'")
    }
  }

  /// `classic`, `og`, `square`, `story`, or `WxH` (decimal sides within the limits, a lowercase
  /// x): the core's one grammar, ``InnerPeace/Preset/init(parsing:)``.
  /// - Throws: ``ServiceError`` (400) naming `preset`.
  static func preset(_ name: String) throws(ServiceError) -> Preset {
    do {
      return try Preset(parsing: name)
    } catch .presetUnknown {
      throw .badParameter(
        "preset", "unknown preset '\(name)': use classic, og, square, story or WxH (200x200 to 4096x4096)")
    } catch {
      throw .badParameter("preset", error.description)
    }
  }
}
