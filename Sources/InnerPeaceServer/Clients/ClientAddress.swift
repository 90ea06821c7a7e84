import HTTPTypes
import InnerPeaceQuery
import NIOConcurrencyHelpers

/// Who a request comes from, for the per-client limits (connections and renders): the peer's IP
/// address; behind `--trust-forwarded-headers`, the address the nearest proxy added: the last
/// value of `X-Forwarded-For`, or when there is none the last `for=` of `Forwarded` (RFC 7239).
/// A client can put anything in these headers, but a proxy appends its own value after what it
/// received, so the last value is the proxy's.
enum ClientAddress {
  /// The client of the request being served, set by the connection around the router
  /// (``GuardedHTTP1Channel``); `nil` outside a live connection (tests that call the router
  /// directly), where no per-client limit applies.
  @TaskLocal static var current: String?

  /// Longest address kept as a key: an IPv6 address with a zone fits; a longer forwarded value
  /// is cut, so a hostile header cannot make the per-client tables large.
  static let maximumLength = 64

  private static let forwardedForField = HTTPField.Name("X-Forwarded-For")!
  private static let forwardedField = HTTPField.Name("Forwarded")!

  /// The client address of a request from `peer`.
  static func of(peer: String, headers: HTTPFields, trustsForwardedHeaders: Bool) -> String {
    guard trustsForwardedHeaders else { return peer }
    if let forwardedFor = lastForwardedFor(headers[values: forwardedForField]) { return forwardedFor }
    if let forwarded = lastForwarded(headers[values: forwardedField]) { return forwarded }
    return peer
  }

  /// The last element of `X-Forwarded-For` (its fields, comma-separated, in order), without a
  /// port; `nil` when there is none.
  static func lastForwardedFor(_ fields: [String]) -> String? {
    ForwardedHeader.lastValue(fields).flatMap { normalized(Substring($0)) }
  }

  /// The `for=` of the last element of `Forwarded` (RFC 7239 §4), without a port; `nil` when that
  /// element has none.
  static func lastForwarded(_ fields: [String]) -> String? {
    ForwardedHeader.lastElement(fields)["for"].flatMap { normalized(Substring($0)) }
  }

  /// An address without its port (`1.2.3.4:80`, `[2001:db8::1]:80`) or brackets, at most
  /// ``maximumLength`` characters; `nil` when empty.
  static func normalized(_ raw: Substring) -> String? {
    var value = raw.trimmingASCIISpaces()
    if value.hasPrefix("["), let close = value.firstIndex(of: "]") {
      value = value[value.index(after: value.startIndex)..<close]
    } else if value.count(where: { $0 == ":" }) == 1, let colon = value.firstIndex(of: ":") {
      value = value[..<colon]
    }
    guard !value.isEmpty else { return nil }
    return String(value.prefix(maximumLength))
  }
}

extension Substring {
  fileprivate func trimmingASCIISpaces() -> Substring {
    var value = self
    while let first = value.first, first == " " || first == "\t" { value.removeFirst() }
    while let last = value.last, last == " " || last == "\t" { value.removeLast() }
    return value
  }
}
