import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

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
  /// The content version: 12 hex digits of SHA-256 over ``ContentSources``.
  let version: String
  /// The configured public origin (`https://host[:port]`), if any.
  let publicURL: String?
  /// Whether `X-Forwarded-Proto` and `X-Forwarded-Host` decide the origin when no public URL is set.
  let trustsForwardedHeaders: Bool
  /// Signs the card URLs the service hands out, when every image URL must be signed.
  var imageSigner: URLSigner? = nil

  /// The origin absolute URLs start with: the public URL if one is configured, else the scheme
  /// and `Host` of the request (`X-Forwarded-*` only when trusted).
  func origin(of request: Request) -> String {
    if let publicURL { return publicURL }
    var scheme = "http"
    var host = request.head.authority
    if trustsForwardedHeaders {
      if let proto = request.headers[.xForwardedProto]?.split(separator: ",").first?.trimmingCharacters(
        in: .whitespaces),
        proto == "https" || proto == "http"
      {
        scheme = proto
      }
      if let forwarded = request.headers[.xForwardedHost]?.split(separator: ",").first?.trimmingCharacters(
        in: .whitespaces)
      {
        host = forwarded
      }
    }
    guard let host, Self.isValidHost(host) else { return "http://localhost" }
    return "\(scheme)://\(host)"
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

extension ContentSources {
  /// SHA-256 over everything here, photo and bundled font bytes included, as 12 hex digits (48
  /// bits: a new version never collides with the few a cache has seen). A file that cannot be
  /// read (the catalog checked it at load, so it has gone since) counts as its path.
  func version() -> String {
    var hash = Crypto.SHA256()
    func add(_ text: String) {
      hash.update(data: Array(text.utf8))
      hash.update(data: [0])
    }
    func addBytes(of file: URL) {
      var count = 0
      if let handle = try? FileHandle(forReadingFrom: file) {
        defer { try? handle.close() }
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
          hash.update(data: chunk)
          count += chunk.count
        }
      }
      add("\(file.lastPathComponent) \(count) bytes")
    }
    add("innerpeace-look-\(lookVersion)")
    add("quotes \(quotes.count)")
    for quote in quotes {
      add(quote.text)
      add(quote.author)
    }
    add("pictures \(pictureFiles.count)")
    for (name, file) in pictureFiles {
      add(name)
      addBytes(of: file)
    }
    add("fonts \(bundledFontFiles.count)")
    for file in bundledFontFiles { addBytes(of: file) }
    add("known fonts \(knownFontFiles.count)")
    for line in knownFontFiles { add(line) }
    return hash.finalize().prefix(6).map { String(format: "%02x", $0) }.joined()
  }
}

extension HTTPField.Name {
  static let xForwardedProto = HTTPField.Name("X-Forwarded-Proto")!
  static let xForwardedHost = HTTPField.Name("X-Forwarded-Host")!
}
