import Foundation

/// Chooses a response's content coding from an `Accept-Encoding` header (RFC 9110 §12.5.3), for
/// the text and JSON endpoints that may be sent compressed (``RouteTable/Route/compresses``).
///
/// gzip (or its alias `x-gzip`) takes the weight its own entry gives, else that of `*`, else 0;
/// weight 0 refuses it. It is chosen when its weight is above 0 and not below that of
/// `identity` where the header names `identity` (`identity;q=1, gzip;q=0.5` keeps the body as it
/// is). No header, or one without gzip, is the body as it is.
enum EncodingNegotiation {
  /// Whether to send the body gzip-compressed.
  static func acceptsGzip(_ header: String?) -> Bool {
    guard let header else { return false }
    var gzip: Double? = nil
    var wildcard: Double? = nil
    var identity: Double? = nil
    for element in header.split(separator: ",") {
      let parameters = element.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
      guard let coding = parameters.first, !coding.isEmpty else { continue }
      let weight = FormatNegotiation.weight(parameters.dropFirst())
      switch coding {
      case "gzip", "x-gzip": gzip = max(gzip ?? 0, weight)
      case "*": wildcard = weight
      case "identity": identity = weight
      default: continue
      }
    }
    let chosen = gzip ?? wildcard ?? 0
    return chosen > 0 && chosen >= (identity ?? 0)
  }
}
