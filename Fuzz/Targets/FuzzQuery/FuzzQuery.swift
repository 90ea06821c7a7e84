import FuzzSupport
import InnerPeaceQuery

/// The HTTP query parser: any bytes as the raw query after `?` (as Hummingbird hands it over,
/// bytes repaired to UTF-8). A parse either fails with a reason, or gives values without NUL
/// that survive a round trip: every name and value percent-encoded byte by byte parses back to
/// the same values. The same bytes, as header fields split at line feeds, go through the
/// forwarding-header parsers (`X-Forwarded-*`, `Forwarded`): the last value is trimmed and holds
/// no comma, and every parameter name is lowercase and not empty. Anything else is a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQuery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let raw = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  checkForwardedHeaders(raw.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
  let query: QueryString
  do {
    query = try QueryString(raw: Substring(raw))
  } catch {
    precondition(!error.reason.isEmpty, "a refusal without a reason")
    return 0
  }
  for value in query.values.values {
    precondition(!value.unicodeScalars.contains("\0"), "a parsed value holds NUL")
  }
  let encoded = query.values.map { "\(percentEncoded($0.key))=\(percentEncoded($0.value))" }.joined(separator: "&")
  guard let again = try? QueryString(raw: Substring(encoded)) else {
    preconditionFailure("the re-encoded query does not parse: \(encoded)")
  }
  precondition(again.values == query.values, "the re-encoded query parses to other values: \(encoded)")
  return 0
}

/// The forwarding-header parsers' promises on any fields.
func checkForwardedHeaders(_ fields: [String]) {
  if let value = ForwardedHeader.lastValue(fields) {
    precondition(!value.isEmpty && !value.contains(","), "a last value that is empty or holds a comma: \(value)")
    precondition(value.first != " " && value.last != " ", "an untrimmed last value: \(value)")
  }
  for name in ForwardedHeader.lastElement(fields).keys {
    precondition(!name.isEmpty && name == name.lowercased(), "a parameter name that is empty or not lowercase: \(name)")
  }
}

/// Every byte as `%XX`.
func percentEncoded(_ text: String) -> String {
  let digits = Array("0123456789ABCDEF")
  return String(text.utf8.flatMap { ["%", digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
}

@main
enum FuzzQuery {
  static func main() { FuzzDriver.main(fuzzQuery) }
}
