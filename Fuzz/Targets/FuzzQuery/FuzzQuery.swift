import FuzzSupport
import InnerPeaceQuery

/// The HTTP query parser: any bytes as the raw query after `?` (as Hummingbird hands it over,
/// bytes repaired to UTF-8). A parse either fails naming a parameter or gives values that are
/// valid UTF-8 without NUL; anything else is a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQuery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let raw = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  do {
    let query = try QueryString(raw: Substring(raw))
    for (name, value) in query.values {
      precondition(query[name] == value, "a parsed value cannot be looked up by its name")
      precondition(!value.unicodeScalars.contains("\0"), "a parsed value holds NUL")
    }
  } catch {
    precondition(!error.reason.isEmpty, "a refusal without a reason")
  }
  return 0
}

@main
enum FuzzQuery {
  static func main() { FuzzDriver.main(fuzzQuery) }
}
