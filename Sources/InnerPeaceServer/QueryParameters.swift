/// Query parameters, decoded strictly: percent-escapes must decode to valid UTF-8, and no value
/// may contain NUL. Hummingbird's own decoding replaces invalid bytes silently; a card must not.
struct QueryParameters: Sendable {
  private(set) var values: [String: String] = [:]

  /// Parses a raw query (the part after `?`, without it).
  /// - Throws: ``ServiceError`` (400) naming the parameter whose value is not valid UTF-8 or holds NUL.
  init(raw: Substring) throws(ServiceError) {
    for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = QueryParameters.decode(parts[0]) else {
        throw .badParameter(
          String(decoding: Array(parts[0].utf8.prefix(64)), as: UTF8.self), "parameter name is not valid UTF-8")
      }
      let rawValue = parts.count > 1 ? parts[1] : ""
      guard let value = QueryParameters.decode(rawValue) else {
        throw .badParameter(name, "the value is not valid UTF-8")
      }
      guard !value.unicodeScalars.contains("\0") else {
        throw .badParameter(name, "the value contains a NUL character")
      }
      // The first occurrence wins, as in most frameworks.
      if values[name] == nil { values[name] = value }
    }
  }

  subscript(name: String) -> String? { values[name] }

  /// `+` is a space; `%XX` a byte; the bytes must be UTF-8.
  static func decode(_ text: Substring) -> String? {
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
