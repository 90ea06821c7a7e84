/// A whole number written plainly: ASCII decimal digits, no sign, no spaces, no leading zero (but
/// `0` itself). The one grammar for every count, index, side and seed the command line and the
/// service read: `+5`, `05`, `-1`, ` 5` and `5.0` are not whole numbers.
public struct WholeNumber: Hashable, Sendable, LosslessStringConvertible {
  /// The number, `Int.max` when the digits say more.
  public let value: Int

  /// Parses `text`; `nil` when it is not a plain decimal. Too many digits for `Int` is simply
  /// `Int.max` (too large for any range that checks it).
  public init?(_ text: String) {
    guard Self.isPlainDecimal(text) else { return nil }
    value = Int(text) ?? Int.max
  }

  public var description: String { String(value) }

  /// Whether `text` is a plain decimal (see ``WholeNumber``).
  public static func isPlainDecimal(_ text: some StringProtocol) -> Bool {
    let digits = text.utf8
    guard let first = digits.first else { return false }
    return digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
      && (first != UInt8(ascii: "0") || digits.count == 1)
  }

  /// The exact value of a plain decimal as `T`; `nil` when it is not one or `T` cannot hold it.
  public static func exact<T: FixedWidthInteger>(_ text: some StringProtocol, as type: T.Type) -> T? {
    guard isPlainDecimal(text) else { return nil }
    return T(String(text))
  }
}
