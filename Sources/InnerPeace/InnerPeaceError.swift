/// Everything that can go wrong between a request and its bytes (loading the catalog, checking
/// the request, rendering, encoding), each with a one-line description meant for the person who
/// made the request. The CLI maps these to exit codes, and the server to HTTP statuses, each in
/// one place. A batch's plan and a schedule have errors of their own (``BatchPlanError``,
/// ``ScheduleError``), which no render throws. `Codable` (synthesized) so that a render's error
/// crosses the render worker wire as it is.
public enum InnerPeaceError: Error, Equatable, Sendable, Codable, CustomStringConvertible {
  /// A catalog file could not be read at all.
  case catalogUnreadable(file: String, reason: String)
  /// A catalog JSON file is not valid JSON.
  case catalogMalformed(file: String, line: Int, column: Int, reason: String)
  /// A catalog JSON file is valid JSON of the wrong shape or with bad values.
  case catalogInvalid(file: String, reason: String)
  /// A picture named in the catalog is missing, or is not a plain file name.
  case pictureMissing(name: String)
  /// A picture name that could escape the catalog folder.
  case pictureNameInvalid(name: String)
  /// A picture that was asked for by name but is not in the catalog.
  case pictureUnknown(name: String)
  /// A catalog picture whose file cannot be read or decoded as JPEG or PNG.
  case pictureUndecodable(name: String, reason: String)
  /// A catalog picture whose file has been replaced or written since the catalog was loaded: its
  /// bytes are not the ones the catalog stands for, until the catalog is loaded again.
  case pictureChanged(name: String)
  /// Image bytes that cannot be decoded as JPEG or PNG (the decoder's own error; the renderer
  /// reports a catalog picture's as ``pictureUndecodable(name:reason:)``).
  case decodingFailed(reason: String)
  /// A quote index outside the catalog.
  case quoteIndexOutOfRange(index: Int, count: Int)
  /// Text that is empty, too long, or holds characters a card cannot show.
  case textInvalid(reason: String)
  /// An author name that is too long or holds control characters.
  case authorInvalid(reason: String)
  /// A preset name that is neither known nor `WxH`.
  case presetUnknown(String)
  /// A canvas size outside the documented limits.
  case sizeInvalid(reason: String)
  /// An output format that is not png, jpeg, webp or avif.
  case formatUnknown(String)
  /// A transparent card asked for in a format without an alpha channel (JPEG).
  case transparencyUnsupported(format: ImageFormat)
  /// The bundled fonts could not be found or registered.
  case fontsUnavailable(reason: String)
  /// Cairo or Pango failed while drawing.
  case renderFailed(reason: String)
  /// An encoder (libdeflate, libturbojpeg, libwebp, libavif) failed to write the card.
  case encodingFailed(format: ImageFormat, reason: String)

  public var description: String {
    switch self {
    case .catalogUnreadable(let file, let reason):
      return "\(file): cannot read: \(reason)"
    case .catalogMalformed(let file, let line, let column, let reason):
      return "\(file): malformed JSON at line \(line), column \(column): \(reason)"
    case .catalogInvalid(let file, let reason):
      return "\(file): \(reason)"
    case .pictureMissing(let name):
      return "picture '\(name)' is listed in pictures.json but the file is missing"
    case .pictureNameInvalid(let name):
      return "picture name '\(name)' is not a plain file name (no '/', no '..', no leading '.')"
    case .pictureUnknown(let name):
      return "no picture named '\(name)' in the catalog"
    case .pictureUndecodable(let name, let reason):
      return "picture '\(name)' cannot be decoded: \(reason)"
    case .pictureChanged(let name):
      return "picture '\(name)' has changed since the catalog was loaded; load the catalog again"
    case .decodingFailed(let reason):
      return "the image cannot be decoded: \(reason)"
    case .quoteIndexOutOfRange(let index, let count):
      return "quote index \(index) is out of range: the catalog has \(count) quotes (0...\(count - 1))"
    case .textInvalid(let reason):
      return "invalid text: \(reason)"
    case .authorInvalid(let reason):
      return "invalid author: \(reason)"
    case .presetUnknown(let name):
      return "unknown preset '\(name)': use classic, og, square, story or WxH (e.g. 1600x900)"
    case .sizeInvalid(let reason):
      return "invalid size: \(reason)"
    case .formatUnknown(let name):
      return "unknown format '\(name)': use png, jpeg, webp or avif"
    case .transparencyUnsupported(let format):
      return "\(format.rawValue.uppercased()) has no alpha channel: a transparent card needs png, webp or avif"
    case .fontsUnavailable(let reason):
      return "fonts unavailable: \(reason)"
    case .renderFailed(let reason):
      return "render failed: \(reason)"
    case .encodingFailed(let format, let reason):
      return "the card cannot be encoded as \(format.rawValue): \(reason)"
    }
  }
}
