import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
import InnerPeaceQuery

/// Where the service serves a quote's page, for whoever links to it (the feeds, `schedule`).
public enum QuotePage {
  /// `/q/{index}`.
  public static func path(_ quote: Int) -> String { "/q/\(quote)" }
}

/// The service's own URLs: versioned card URLs, quote pages, and their absolute forms.
///
/// A card URL carries `v=`, the content version. The service sends a card requested with the
/// current version as immutable, and any other request for it (no version, an old one) with a
/// short `max-age` and its ETag, so that caches revalidate.
struct CardLinks: Sendable {
  /// The content version (``InnerPeace/ContentSources/version()``).
  let version: String
  /// The configured public origin (`https://host[:port]`), if any.
  let publicURL: String?
  /// Whether the nearest proxy's `X-Forwarded-Proto`/`X-Forwarded-Host` (or `Forwarded`) decide
  /// the origin when no public URL is set.
  let trustsForwardedHeaders: Bool
  /// The hosts the service answers for (``ServerConfiguration/allowedHosts``); empty: any.
  var allowedHosts: [String] = []
  /// Signs the card URLs the service hands out, when every image URL must be signed.
  var imageSigner: URLSigner? = nil

  /// Whether the origin of absolute URLs is the operator's: a public URL, or a host checked
  /// against the allowed hosts. When it is not, a response that carries the request's host in a
  /// link may only be cached privately (``cacheControl(_:)``).
  var originIsChecked: Bool { publicURL != nil || !allowedHosts.isEmpty }

  /// The origin absolute URLs start with: the public URL if one is configured, else the scheme
  /// and host of the request (``requestedOrigin(of:)``).
  func origin(of request: Request) -> String {
    if let publicURL { return publicURL }
    let requested = requestedOrigin(of: request)
    guard let host = requested.host, Self.isValidHost(host) else { return "http://localhost" }
    return "\(requested.scheme)://\(host)"
  }

  /// The scheme and host a request names: its `Host` (the connection puts an absolute-form
  /// target's authority there, RFC 9112 §3.2.2), or, behind a trusted proxy, the value the nearest
  /// proxy added: the last `X-Forwarded-Host` and `X-Forwarded-Proto` values, else the `host=` and
  /// `proto=` of the last `Forwarded` element (RFC 7239); a forwarded host that is no host
  /// (``isValidHost(_:)``) is refused and the request's own stands. Not checked against the
  /// allowed hosts (``admits(host:)``).
  func requestedOrigin(of request: Request) -> (scheme: String, host: String?) {
    var scheme = "http"
    var host = request.head.authority
    guard trustsForwardedHeaders else { return (scheme, host) }
    let forwarded = ForwardedHeader.lastElement(request.headers[values: .forwarded])
    if let proto = ForwardedHeader.lastValue(request.headers[values: .xForwardedProto]) ?? forwarded["proto"] {
      let lowered = proto.lowercased()
      if lowered == "https" || lowered == "http" { scheme = lowered }
    }
    // A forwarded value that is no host is refused, and the request's own Host (checked on its
    // connection) stands, rather than no origin at all.
    if let forwardedHost = ForwardedHeader.lastValue(request.headers[values: .xForwardedHost]) ?? forwarded["host"],
      Self.isValidHost(forwardedHost)
    {
      host = forwardedHost
    }
    return (scheme, host)
  }

  /// Whether `host` (a name, with an optional port) is one the service answers for: with no
  /// allowed hosts, any; else one of them, compared without case. An allowed name without a port
  /// admits that name on any port; with a port, that port only.
  func admits(host: String?) -> Bool {
    guard !allowedHosts.isEmpty else { return true }
    guard let host, Self.isValidHost(host) else { return false }
    let lowered = host.lowercased()
    let name = Self.name(of: lowered)
    return allowedHosts.contains { allowed in
      let entry = allowed.lowercased()
      return entry == lowered || (Self.name(of: entry) == entry && entry == name)
    }
  }

  /// A host without its port: `[::1]:8080` → `[::1]`, `example.com:80` → `example.com`.
  static func name(of host: String) -> String {
    if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[...end]) }
    return String(host.prefix { $0 != ":" })
  }

  /// `policy` for a response whose links carry the request's origin: `private` in place of
  /// `public` unless that origin is checked (``originIsChecked``), so that no shared cache keeps
  /// links made from a client's `Host`.
  func cacheControl(_ policy: String) -> String {
    guard !originIsChecked, policy.hasPrefix("public") else { return policy }
    return "private" + policy.dropFirst("public".count)
  }

  /// The stable, versioned URL of a catalog card, relative to the origin.
  func cardPath(quote: Int, picture: String, options: CardOptions) -> String {
    var url = "/cards/\(quote).\(options.format.fileExtension)?picture=\(percentEncoded(picture))"
    url += "&preset=\(options.preset)"
    if options.alignment == .center { url += "&align=center" }
    if !options.showsAuthor { url += "&author=false" }
    if let quality = options.quality { url += "&quality=\(quality)" }
    url += "&v=\(version)"
    return imageSigner?.sign(url) ?? url
  }

  /// The HTML page of a catalog quote.
  func quotePagePath(_ quote: Int) -> String { QuotePage.path(quote) }

  /// `pathAndQuery` made absolute with the request's origin.
  func absolute(_ pathAndQuery: String, for request: Request) -> String { origin(of: request) + pathAndQuery }

  /// The cache policy of a card request that carried `v` (or none).
  func cacheControl(forVersion requested: String?) -> String {
    requested == version ? Self.immutable : Self.revalidate
  }

  /// The same, for a card response that carries a link (Content-Location) made from the origin.
  func linkedCacheControl(forVersion requested: String?) -> String {
    cacheControl(cacheControl(forVersion: requested))
  }

  /// For URLs that name their content.
  static let immutable = "public, max-age=31536000, immutable"
  /// For card URLs without the current version: five minutes, then revalidate with the ETag.
  static let revalidate = "public, max-age=300"

  /// A host, with an optional port: letters, digits, `.-_:[]` (IPv6), and nothing that could
  /// break out of an attribute or a URL.
  static func isValidHost(_ host: String) -> Bool {
    !host.isEmpty && host.utf8.count <= 255
      && host.utf8.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
          UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
          return true
        default: return false
        }
      }
  }
}

extension HTTPField.Name {
  static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
  static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
  static let forwarded = HTTPField.Name("Forwarded")!
}
