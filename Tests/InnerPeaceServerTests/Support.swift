import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Logging
import NIOConcurrencyHelpers
import Testing

// Shared helpers for the server tests: one real renderer for the whole process (its decoded
// backgrounds are reused), a service per test, replies as plain values, image and JSON checks,
// and renderers that misbehave on purpose.

// MARK: Renderer and service

/// One real renderer for every test: `CardRenderer` is thread-safe, and sharing it shares its
/// cache of decoded photos.
private let sharedRendererResult: Result<CardRenderer, InnerPeaceError> = Result {
  () throws(InnerPeaceError) -> CardRenderer in
  try CardRenderer(catalog: try Catalog.bundled())
}

func realRenderer() throws -> CardRenderer { try sharedRendererResult.get() }

var bundledCatalog: Catalog { get throws { try realRenderer().catalog } }

/// Logs warnings and errors only, so a test run is not a wall of request lines.
let quietLogger: Logger = {
  var logger = Logger(label: "innerpeace-server-tests")
  logger.logLevel = .warning
  return logger
}()

/// Noon UTC of 2026-06-21: the day the tests' service lives in, whatever the machine's date.
let testNoon = Date(timeIntervalSince1970: 20_625 * 86_400 + 43_200)

/// A configuration for tests: small pools (the machine may have two cores and other tests run
/// at the same time), and the service's clock fixed at `testNoon`, so that no answer depends
/// on the day or hour the suite runs (today's quote, the seconds left in the day).
func testConfiguration(
  concurrency: Int = 2, queueDepth: Int = 16, cacheMegabytes: Int = 64
) -> ServerConfiguration {
  var configuration = ServerConfiguration()
  configuration.now = { testNoon }
  configuration.concurrency = concurrency
  configuration.queueDepth = queueDepth
  configuration.cacheMegabytes = cacheMegabytes
  return configuration
}

/// `configuration` for a deployment whose origin is checked (the router tests' host, `localhost`,
/// allowed), so that cards carrying links are cached publicly, as they are in production.
func checkedOrigin(_ configuration: ServerConfiguration = testConfiguration()) -> ServerConfiguration {
  var checked = configuration
  checked.allowedHosts = ["localhost"]
  return checked
}

/// Runs `body` against the router of a fresh, started service over `renderer`, then shuts the service down
/// (also when `body` throws).
func withRouter<Renderer: CardRendering>(
  renderer: Renderer, configuration: ServerConfiguration = testConfiguration(),
  _ body: @Sendable (any TestClientProtocol, CardService<Renderer>) async throws -> Void
) async throws {
  let service = CardService(renderer: renderer, configuration: configuration)
  // As `buildApplication(configuration:)` does before serving (on threads: nothing to wait for).
  try await service.startRenderers()
  let app = Application(router: buildRouter(service: service), logger: quietLogger)
  do {
    try await app.test(.router) { client in try await body(client, service) }
  } catch {
    try? await service.shutdown()
    throw error
  }
  try await service.shutdown()
}

/// The same, with the shared real renderer.
func withRouter(
  configuration: ServerConfiguration = testConfiguration(),
  _ body: @Sendable (any TestClientProtocol, CardService<CardRenderer>) async throws -> Void
) async throws {
  try await withRouter(renderer: try realRenderer(), configuration: configuration, body)
}

// MARK: Replies

/// A response as plain values.
struct Reply: Sendable, CustomStringConvertible {
  let status: Int
  let headers: HTTPFields
  let body: [UInt8]
  /// How long the request took, from send to the whole response.
  let elapsed: Duration

  var text: String { String(decoding: body, as: UTF8.self) }

  func header(_ name: String) -> String? { headers[HTTPField.Name(name)!] }
  func headerValues(_ name: String) -> [String] { headers[values: HTTPField.Name(name)!] }

  /// The names a list header (`Vary`) gives, across its fields and their commas.
  func headerList(_ name: String) -> [String] {
    headerValues(name).flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
  }

  var json: Any? { try? JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed]) }

  var description: String {
    let shown = body.count > 400 || imageKind(body) != nil ? "<\(body.count) bytes>" : text
    return "HTTP \(status) \(headers) \(shown)"
  }
}

extension TestClientProtocol {
  /// Sends a request; an absolute URL (as the service gives in Content-Location) is sent as its
  /// path and query.
  func request(_ uri: String, method: HTTPRequest.Method = .get, headers: HTTPFields = [:]) async throws -> Reply {
    let started = ContinuousClock.now
    return try await execute(uri: relativeURL(uri), method: method, headers: headers) { response in
      Reply(
        status: Int(response.status.code), headers: response.headers,
        body: Array(response.body.readableBytesView), elapsed: ContinuousClock.now - started)
    }
  }

  func get(_ uri: String, ifNoneMatch: String? = nil) async throws -> Reply {
    var headers: HTTPFields = [:]
    if let ifNoneMatch { headers[.ifNoneMatch] = ifNoneMatch }
    return try await request(uri, headers: headers)
  }
}

/// RFC 3986 query encoding: unreserved characters stay, everything else is %XX of its UTF-8.
func queryEncoded(_ text: String) -> String {
  var result = ""
  for byte in text.utf8 {
    if (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
      || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
    {
      result.unicodeScalars.append(Unicode.Scalar(byte))
    } else {
      result += String(format: "%%%02X", byte)
    }
  }
  return result
}

/// Decodes %XX escapes (not `+`), or nil if they do not make UTF-8.
func percentDecoded(_ text: String) -> String? {
  var bytes: [UInt8] = []
  var iterator = Array(text.utf8).makeIterator()
  while let byte = iterator.next() {
    if byte == UInt8(ascii: "%") {
      guard let high = iterator.next(), let low = iterator.next(),
        let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
      else { return nil }
      bytes.append(value)
    } else {
      bytes.append(byte)
    }
  }
  return String(validating: bytes, as: UTF8.self)
}

/// The query items of a relative URL such as a Content-Location, percent-decoded.
func queryItems(of url: String) -> [String: String] {
  guard let question = url.firstIndex(of: "?") else { return [:] }
  var items: [String: String] = [:]
  for pair in url[url.index(after: question)...].split(separator: "&") {
    let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
    items[String(parts[0])] = parts.count > 1 ? percentDecoded(String(parts[1])) : ""
  }
  return items
}

/// The path of a URL, relative or absolute.
func path(of url: String) -> String { String(relativeURL(url).prefix { $0 != "?" }) }

/// An absolute URL's path and query (`http://host/a?b` → `/a?b`); a relative one as it is.
func relativeURL(_ url: String) -> String {
  guard let scheme = url.range(of: "://") else { return url }
  let rest = url[scheme.upperBound...]
  return String(rest[(rest.firstIndex(of: "/") ?? rest.endIndex)...])
}

// MARK: Checks

/// Checks a card response: status 200, the media type matching the bytes, Content-Length equal
/// to the body, a structurally valid image (of `size` when given), and the card headers.
func expectCard(
  _ reply: Reply, format: String, size: (width: Int, height: Int)? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(reply.status == 200, "\(reply)", sourceLocation: sourceLocation)
  guard reply.status == 200 else { return }
  #expect(reply.body.count > 0, "a 200 card must have bytes", sourceLocation: sourceLocation)
  #expect(reply.header("Content-Type") == "image/\(format)", sourceLocation: sourceLocation)
  let kind = imageKind(reply.body)
  #expect(kind == format, "magic bytes say \(kind ?? "nothing")", sourceLocation: sourceLocation)
  #expect(reply.headerValues("Content-Length") == [String(reply.body.count)], sourceLocation: sourceLocation)
  let dimensions = imageDimensions(reply.body)
  #expect(dimensions != nil, "the \(format) bytes do not parse as a complete image", sourceLocation: sourceLocation)
  if let size, let dimensions {
    #expect(
      dimensions.width == size.width && dimensions.height == size.height,
      "image is \(dimensions.width)x\(dimensions.height), asked for \(size.width)x\(size.height)",
      sourceLocation: sourceLocation)
  }
  #expect(Int(reply.header("X-Font-Size") ?? "") ?? 0 > 0, sourceLocation: sourceLocation)
  #expect(["true", "false"].contains(reply.header("X-Text-Truncated") ?? "-"), sourceLocation: sourceLocation)
  // Sent only when short (at most 1,024 bytes encoded).
  let share = reply.header("X-Share-Message") ?? "%22%22"
  #expect(share.utf8.count <= 1_024, sourceLocation: sourceLocation)
  #expect(
    share.utf8.allSatisfy { $0 < 0x80 && $0 > 0x20 }, "header must be ASCII, percent-encoded",
    sourceLocation: sourceLocation)
  #expect(percentDecoded(share) != nil, sourceLocation: sourceLocation)
}

/// Checks an error response: the status, a JSON body `{"error": {"message", "parameter"?}}`, and
/// no internals in it. `parameter`: the name it must give; `anyOf` when either of several is fine.
@discardableResult
func expectError(
  _ reply: Reply, status: Int, parameter: String? = nil, parameterAnyOf: [String]? = nil,
  sourceLocation: SourceLocation = #_sourceLocation
) -> [String: Any] {
  #expect(reply.status == status, "\(reply)", sourceLocation: sourceLocation)
  expectCleanErrorBody(reply, sourceLocation: sourceLocation)
  guard let object = reply.json as? [String: Any], let error = object["error"] as? [String: Any] else { return [:] }
  if let parameter {
    #expect(error["parameter"] as? String == parameter, "\(reply)", sourceLocation: sourceLocation)
  }
  if let parameterAnyOf {
    #expect(parameterAnyOf.contains(error["parameter"] as? String ?? "-"), "\(reply)", sourceLocation: sourceLocation)
  }
  return error
}

/// Any 4xx or 5xx: JSON of the documented shape, application/json, and nothing private in it.
func expectCleanErrorBody(_ reply: Reply, sourceLocation: SourceLocation = #_sourceLocation) {
  #expect(reply.status >= 400, sourceLocation: sourceLocation)
  #expect(
    reply.header("Content-Type")?.hasPrefix("application/json") == true, "\(reply)",
    sourceLocation: sourceLocation)
  let object = reply.json as? [String: Any]
  let error = object?["error"] as? [String: Any]
  #expect(error != nil, "body is not {\"error\": {...}}: \(reply)", sourceLocation: sourceLocation)
  if let error {
    #expect((error["message"] as? String).map { !$0.isEmpty } == true, "\(reply)", sourceLocation: sourceLocation)
    #expect(Set(error.keys).isSubset(of: ["message", "parameter"]), "\(reply)", sourceLocation: sourceLocation)
    if let parameter = error["parameter"] { #expect(parameter is String, sourceLocation: sourceLocation) }
  }
  let text = reply.text
  for leak in privateMarkers where text.contains(leak) {
    Issue.record("error body leaks '\(leak)': \(text)", sourceLocation: sourceLocation)
  }
}

/// What an error body must never show: file paths and Swift type names.
let privateMarkers = [
  "/work", "/tmp", "/home", "/root", "/usr", ".swift", "Resources/", ".build",
  "InnerPeaceError", "ServiceError", "HTTPError", "DecodingError", "NIO", "Swift.", "Error(", "Foundation.",
]

// MARK: Images

/// "png", "jpeg" or "webp" from the magic bytes.
func imageKind(_ bytes: [UInt8]) -> String? {
  if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
  if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "jpeg" }
  if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
    return "webp"
  }
  if bytes.count >= 12, Array(bytes[4..<12]) == Array("ftypavif".utf8) { return "avif" }
  return nil
}

/// The pixel size of a complete PNG (IHDR, ending in IEND), JPEG (SOFn, ending in EOI), WebP
/// (RIFF size matching, VP8/VP8L/VP8X) or AVIF (whole boxes, decoded by libavif); nil when the bytes are not a whole image of that kind.
func imageDimensions(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
  func be32(_ at: Int) -> Int { bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
  func le(_ at: Int, _ count: Int) -> Int { bytes[at..<at + count].reversed().reduce(0) { $0 << 8 | Int($1) } }
  switch imageKind(bytes) {
  case "png":
    guard bytes.count > 45, Array(bytes[12..<16]) == Array("IHDR".utf8),
      Array(bytes[(bytes.count - 8)..<(bytes.count - 4)]) == Array("IEND".utf8)
    else { return nil }
    return (be32(16), be32(20))
  case "jpeg":
    guard bytes.count > 4, bytes[bytes.count - 2] == 0xFF, bytes[bytes.count - 1] == 0xD9 else { return nil }
    var at = 2
    while at + 9 < bytes.count {
      guard bytes[at] == 0xFF else { return nil }
      let marker = bytes[at + 1]
      let length = Int(bytes[at + 2]) << 8 | Int(bytes[at + 3])
      if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) {
        return (Int(bytes[at + 7]) << 8 | Int(bytes[at + 8]), Int(bytes[at + 5]) << 8 | Int(bytes[at + 6]))
      }
      at += 2 + length
    }
    return nil
  case "webp":
    guard bytes.count > 30, le(4, 4) == bytes.count - 8 else { return nil }
    switch String(decoding: bytes[12..<16], as: UTF8.self) {
    case "VP8 ": return (le(26, 2) & 0x3FFF, le(28, 2) & 0x3FFF)
    case "VP8L":
      let bits = le(21, 4)
      return ((bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1)
    case "VP8X": return (le(24, 3) + 1, le(27, 3) + 1)
    default: return nil
    }
  case "avif":
    guard ImageFileCheck.isComplete(bytes, format: .avif), let image = DecodedAVIF(bytes) else { return nil }
    return (image.width, image.height)
  default:
    return nil
  }
}

// MARK: Metrics

/// The value of one sample in Prometheus text: `name` with labels containing every pair of
/// `labels` (any order, others allowed).
func metricValue(_ exposition: String, _ name: String, labels: [String: String] = [:]) -> Double? {
  for line in exposition.split(separator: "\n") where !line.hasPrefix("#") {
    guard let space = line.lastIndex(of: " ") else { continue }
    let series = line[..<space]
    let sampleName = series.prefix { $0 != "{" }
    guard sampleName == name else { continue }
    let labelText = series.dropFirst(sampleName.count)
    guard labels.allSatisfy({ labelText.contains("\($0.key)=\"\($0.value)\"") }) else { continue }
    return Double(line[line.index(after: space)...])
  }
  return nil
}

func metrics(_ client: any TestClientProtocol) async throws -> String {
  let reply = try await client.get("/metrics")
  #expect(reply.status == 200)
  return reply.text
}

// MARK: Renderers that misbehave on purpose

/// Throws a render failure with private details on its first call only; then renders for real.
final class FailOnceRenderer: CardRendering {
  let base: CardRenderer
  private let failed = NIOLockedValueBox(false)
  init(base: CardRenderer) { self.base = base }
  var catalog: Catalog { base.catalog }
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    let first = failed.withLockedValue { failed in
      defer { failed = true }
      return !failed
    }
    if first { throw .renderFailed(reason: "cairo exploded at /secret/path") }
    return try base.render(request)
  }
}

/// Counts its calls, and can wait before each render so that requests pile up behind it.
final class CountingRenderer: CardRendering {
  let base: CardRenderer
  let delay: Double
  private let counter = NIOLockedValueBox(0)
  init(base: CardRenderer, delay: Double = 0) {
    self.base = base
    self.delay = delay
  }
  var catalog: Catalog { base.catalog }
  var calls: Int { counter.withLockedValue { $0 } }
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    counter.withLockedValue { $0 += 1 }
    // Simulated cost (a slower render, so identical requests are likely to overlap), not a wait
    // for anything: a request that comes after the render is a cache hit, which the test allows.
    if delay > 0 { Thread.sleep(forTimeInterval: delay) }
    return try base.render(request)
  }
}

/// Renders for real, then empties the bytes: a renderer bug the service must not pass on as a
/// 200.
final class EmptyBytesRenderer: CardRendering {
  let base: CardRenderer
  init(base: CardRenderer) { self.base = base }
  var catalog: Catalog { base.catalog }

  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    RenderedCard(try base.render(request), bytes: [])
  }
}

/// Returns one small real card (rendered once) for every request: for tests about routing, where
/// the pixels do not matter and real renders would only cost time.
final class CannedRenderer: CardRendering {
  let base: CardRenderer
  /// One card without a report and one with (for the report endpoints).
  private let canned = NIOLockedValueBox<[Bool: RenderedCard]>([:])
  init(base: CardRenderer) { self.base = base }
  var catalog: Catalog { base.catalog }
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    if let card = canned.withLockedValue({ $0[request.includesReport] }) { return card }
    let card = try base.render(
      CardRequest(
        preset: .custom(try CanvasSize(width: 200, height: 200)), quote: .index(0), picture: .random, seed: 1,
        includesReport: request.includesReport))
    canned.withLockedValue { $0[request.includesReport] = card }
    return card
  }
}

/// Whether two replies carry the same bytes (a Bool, so a failed expectation does not print
/// both images byte by byte).
func sameBytes(_ a: Reply, _ b: Reply) -> Bool {
  let equal = a.body == b.body
  return equal
}

// MARK: Tags

/// What a suite needs beyond this process, so `bash scripts/test.sh --fast` can leave it out
/// (it skips every suite and test carrying one of these tags).
extension Tag {
  /// Real sockets: a server listening on loopback, talked to over TCP.
  @Tag static var live: Self
  /// Child processes: render workers, or the server or command run as processes.
  @Tag static var process: Self
  /// The built `innerpeace` binary (`swift build` first).
  @Tag static var binary: Self
}
