/// A URL query decoded strictly: percent-escapes must decode to valid UTF-8, and no value may
/// contain NUL. Hummingbird's own decoding replaces invalid bytes silently; a card must not.
///
/// Pure Swift with no dependency, so the server uses it and the query fuzz target
/// (`Fuzz/Targets/FuzzQuery`) builds it with libFuzzer's instrumentation without building
/// Hummingbird and SwiftNIO a second time.
public struct QueryString: Sendable {
  /// Why a query was refused: the parameter (its name, cut to 64 bytes if the name itself is bad)
  /// and a one-line reason.
  public struct Failure: Error, Sendable, Equatable {
    public let parameter: String
    public let reason: String
  }

  public private(set) var values: [String: String] = [:]
  /// The first name the query gives more than once, if any.
  public private(set) var repeatedName: String?

  /// Parses a raw query (the part after `?`, without it). The first occurrence of a name wins,
  /// as in most frameworks.
  /// - Throws: ``Failure`` naming the parameter whose name or value is not valid UTF-8, or whose
  ///   value holds NUL.
  public init(raw: Substring) throws(Failure) {
    for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = QueryString.decode(parts[0]) else {
        throw Failure(
          parameter: String(decoding: Array(parts[0].utf8.prefix(64)), as: UTF8.self),
          reason: "parameter name is not valid UTF-8")
      }
      let rawValue = parts.count > 1 ? parts[1] : ""
      guard let value = QueryString.decode(rawValue) else {
        throw Failure(parameter: name, reason: "the value is not valid UTF-8")
      }
      guard !value.unicodeScalars.contains("\0") else {
        throw Failure(parameter: name, reason: "the value contains a NUL character")
      }
      if values[name] == nil {
        values[name] = value
      } else if repeatedName == nil {
        repeatedName = name
      }
    }
  }

  public subscript(name: String) -> String? { values[name] }

  /// `+` is a space; `%XX` a byte; the bytes must be UTF-8.
  public static func decode(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      switch byte {
      case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
      case UInt8(ascii: "%"):
        guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
          return nil
        }
        bytes.append(high << 4 | low)
      default: bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
