/// FNV-1a, 64-bit: stable across runs and machines (unlike `Hasher`), for ETags, the seed of a
/// custom card's picture and the quote of the day. Not a cryptographic hash.
public struct StableHash: Sendable {
  public private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

  public init() {}

  /// Adds a string's UTF-8 bytes and a terminator (so that "ab"+"c" and "a"+"bc" differ).
  public mutating func combine(_ text: String) {
    for byte in text.utf8 {
      value ^= UInt64(byte)
      value = value &* 0x100_0000_01b3
    }
    value ^= 0xFF
    value = value &* 0x100_0000_01b3
  }

  /// The value as 16 hex digits.
  public var hex: String {
    let digits = String(value, radix: 16)
    return String(repeating: "0", count: 16 - digits.count) + digits
  }

  /// The hash of one string.
  public static func of(_ text: String) -> UInt64 {
    var hash = StableHash()
    hash.combine(text)
    return hash.value
  }
}
