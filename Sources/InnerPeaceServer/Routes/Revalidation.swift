import Foundation
import HTTPTypes
import Hummingbird

/// Conditional requests: `If-None-Match` as RFC 9110 (13.1.2) reads it, for every route that
/// sends an ETag.
enum Revalidation {
  /// Whether an `If-None-Match` value matches `etag`: it is `*`, or it lists the tag, compared
  /// weakly (`W/"x"` matches `"x"`).
  static func matches(_ header: String, etag: String) -> Bool {
    header.split(separator: ",").contains { part in
      let tag = part.trimmingCharacters(in: .whitespaces)
      return tag == "*" || (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == etag
    }
  }

  /// A 304 with the tag and caching of the response it stands for, when the request's
  /// `If-None-Match` matches `etag`; `nil` otherwise.
  static func notModified(_ request: Request, etag: String, cacheControl: String) -> Response? {
    guard let header = request.headers[.ifNoneMatch], matches(header, etag: etag) else { return nil }
    return Response(status: .notModified, headers: [.eTag: etag, .cacheControl: cacheControl])
  }
}
