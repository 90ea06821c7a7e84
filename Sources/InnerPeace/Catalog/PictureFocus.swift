/// Where a photo's subject is: a point in fractions of the photo as it is seen (after its EXIF
/// orientation), `x` from the left and `y` from the top, each in 0...1. The crop that covers a
/// card keeps it inside the card and away from the text (``FocusCrop``).
public struct PictureFocus: Hashable, Sendable {
  public let x: Double
  public let y: Double
  /// Whether the point was estimated at load (``FocusEstimator``) rather than given in
  /// `pictures.json`.
  public let estimated: Bool

  public init(x: Double, y: Double, estimated: Bool = false) {
    self.x = x
    self.y = y
    self.estimated = estimated
  }
}

/// What the catalog knows of one picture besides its name: its size as seen and its focus.
struct PictureDetail: Sendable {
  let width: Int
  let height: Int
  let focus: PictureFocus
}

/// One entry of `pictures.json`: a file name, or an object `{"file": "x.jpg", "focus": [fx, fy]}`
/// (`focus` optional). Decoding fails with a `DecodingError` whose description says what is
/// wrong, so the loader can name the entry and the problem.
struct PictureListing: Decodable {
  let file: String
  let focus: PictureFocus?

  private struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// The keys an object entry may have.
  static let keys: Set<String> = ["file", "focus"]

  init(file: String, focus: PictureFocus?) {
    self.file = file
    self.focus = focus
  }

  init(from decoder: any Decoder) throws {
    if let single = try? decoder.singleValueContainer(), let name = try? single.decode(String.self) {
      self.init(file: name, focus: nil)
      return
    }
    func problem(_ reason: String) -> DecodingError {
      .dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath, debugDescription: reason))
    }
    guard let object = try? decoder.container(keyedBy: Key.self) else {
      throw problem("is neither a file name (a string) nor a {\"file\", \"focus\"} object")
    }
    if let unknown = object.allKeys.map(\.stringValue).sorted().first(where: { !Self.keys.contains($0) }) {
      throw problem("has an unknown key \"\(unknown)\" (allowed: \"file\", \"focus\")")
    }
    guard object.contains(Key(stringValue: "file")) else { throw problem("has no \"file\" field") }
    guard let file = try? object.decode(String.self, forKey: Key(stringValue: "file")) else {
      throw problem("\"file\" is not a string")
    }
    guard object.contains(Key(stringValue: "focus")) else {
      self.init(file: file, focus: nil)
      return
    }
    let bad = "\"focus\" is not two numbers from 0 to 1 ([x, y], fractions of the photo)"
    guard let values = try? object.decode([Double].self, forKey: Key(stringValue: "focus")), values.count == 2,
      values.allSatisfy({ $0.isFinite && (0...1).contains($0) })
    else { throw problem(bad) }
    self.init(file: file, focus: PictureFocus(x: values[0], y: values[1]))
  }
}
