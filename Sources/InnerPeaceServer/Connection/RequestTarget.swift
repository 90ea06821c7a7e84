import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1

/// The host a request names, as RFC 9112 §3.2 reads it, fixed before the request becomes
/// Hummingbird's: the conversion to HTTP types takes the first `Host` field as the authority and
/// drops an absolute-form target's own, so here, on NIO's request head,
///
/// - an absolute-form target's authority (`GET http://a.example/ HTTP/1.1`) replaces `Host`;
/// - an HTTP/1.1 request without `Host`, with several, or with one (or a target authority) that
///   is not a host is marked, and ``HostMiddleware`` answers it 400 with the JSON body.
///
/// The mark is a header no client can send: every one a request carries is removed first.
enum RequestTarget {
  /// The field that carries the reason a request's host is refused, from here to the router.
  static let problemField = "X-InnerPeace-Host-Problem"

  /// Rewrites `head` as described above.
  static func normalize(_ head: inout HTTPRequestHead) {
    head.headers.remove(name: problemField)
    let hosts = head.headers["Host"]
    var problem: String?
    if hosts.count > 1 {
      problem = "a request has one Host field, not \(hosts.count)"
    } else if hosts.isEmpty && (head.version.major > 1 || (head.version.major == 1 && head.version.minor >= 1)) {
      problem = "an HTTP/1.1 request needs a Host field"
    }
    if let authority = absoluteFormAuthority(head.uri) {
      if problem == nil && !CardLinks.isValidHost(authority) { problem = "the request target's host is not valid" }
      head.headers.replaceOrAdd(name: "Host", value: authority)
    } else if problem == nil, let host = hosts.first, !host.isEmpty, !CardLinks.isValidHost(host) {
      problem = "the Host field is not a valid host"
    }
    if let problem { head.headers.add(name: problemField, value: problem) }
  }

  /// The authority of an absolute-form `http` or `https` target (`nil` for origin form and the
  /// others).
  static func absoluteFormAuthority(_ uri: String) -> String? {
    let lowered = uri.prefix(8).lowercased()
    let schemeLength: Int
    if lowered.hasPrefix("http://") {
      schemeLength = 7
    } else if lowered.hasPrefix("https://") {
      schemeLength = 8
    } else {
      return nil
    }
    let rest = uri.dropFirst(schemeLength)
    return String(rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" })
  }
}
