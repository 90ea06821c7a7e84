/// A canvas size in pixels, always within ``Limits``.
public struct CanvasSize: Hashable, Sendable, CustomStringConvertible {
  public let width: Int
  public let height: Int

  /// Checks a size against ``Limits`` before anything is allocated for it.
  /// - Throws: ``InnerPeaceError/sizeInvalid(reason:)`` when a side or the area is out of limits.
  public init(width: Int, height: Int) throws(InnerPeaceError) {
    for (name, side) in [("width", width), ("height", height)] {
      guard side >= Limits.minimumSide else {
        throw .sizeInvalid(reason: "\(name) \(side) is below the minimum of \(Limits.minimumSide) px")
      }
      guard side <= Limits.maximumSide else {
        throw .sizeInvalid(reason: "\(name) \(side) is above the maximum of \(Limits.maximumSide) px")
      }
    }
    guard width * height <= Limits.maximumPixels else {
      throw .sizeInvalid(reason: "\(width)x\(height) is more than \(Limits.maximumPixels) pixels")
    }
    self.width = width
    self.height = height
  }

  /// Parses `WxH` (for example `1600x900`): two ``WholeNumber``s and a lowercase `x`, checked
  /// against ``Limits``.
  /// - Throws: ``InnerPeaceError/sizeInvalid(reason:)`` for anything else.
  public init(parsing text: String) throws(InnerPeaceError) {
    let parts = text.split(separator: "x", omittingEmptySubsequences: false)
    guard parts.count == 2 else {
      throw .sizeInvalid(reason: "'\(text)' is not of the form WxH (e.g. 1600x900)")
    }
    func side(_ part: Substring, _ name: String) throws(InnerPeaceError) -> Int {
      guard let number = WholeNumber(String(part)) else {
        throw .sizeInvalid(reason: "\(name) '\(part)' in '\(text)' is not a whole number")
      }
      return number.value
    }
    try self.init(width: side(parts[0], "width"), height: side(parts[1], "height"))
  }

  public var description: String { "\(width)x\(height)" }
}

extension CanvasSize: Codable {
  private enum CodingKeys: String, CodingKey { case width, height }

  /// Decodes a width and a height, checked against ``Limits`` as ``init(width:height:)`` checks
  /// them: out of limits is a `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let width = try container.decode(Int.self, forKey: .width)
    let height = try container.decode(Int.self, forKey: .height)
    do {
      try self.init(width: width, height: height)
    } catch {
      throw DecodingError.dataCorruptedError(
        forKey: .width, in: container, debugDescription: error.description)
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(width, forKey: .width)
    try container.encode(height, forKey: .height)
  }
}
