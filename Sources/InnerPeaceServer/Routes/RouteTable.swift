import Hummingbird
import InnerPeace

/// Every endpoint of the service, declared once. The controllers register these (each its own,
/// ``Hummingbird/RouterMethods/get(_:configuration:_:)``), the 405 handling asks
/// ``RouteTable/isKnownPath(_:)``, the metrics and logs label a request by its template
/// (``RouteTable/template(forEndpoint:)``), and the tests check `/openapi.yaml` (the resource
/// `Resources/openapi.yaml`) and their examples against this list.
enum RouteTable {
  /// The service's operations, named as the OpenAPI document's `operationId`s.
  enum Operation: String, CaseIterable, Sendable {
    case randomCard, randomCardNegotiated, catalogCard, catalogCardNegotiated, customCard, todayCard
    case todayCardNegotiated, listQuotes, getQuote, health, readiness, metrics, openAPI, page, todayPage, quotePage
    case faviconSVG, faviconICO, calendar, feed, customCardReport, catalogCardReport
  }

  /// What an endpoint answers.
  enum Kind: Sendable {
    /// A card in the format the path's `.{format}` names.
    case image
    /// A card in the format chosen from `Accept` (or `format=`), sent with `Vary: Accept`.
    case negotiatedImage
    /// JSON.
    case json
    /// Plain text, YAML or HTML.
    case text
  }

  /// One endpoint (a GET, and so a HEAD): OpenAPI path template, what it answers and the query it takes.
  struct Route: Sendable {
    let operation: Operation
    /// The OpenAPI path template, e.g. `/cards/{quote}.{format}`: the label of its metrics and logs.
    let path: String
    let kind: Kind
    /// One line: what the endpoint answers.
    let answers: String
    /// The query parameters it accepts; `nil` for any (the page ignores its query, so links
    /// carrying tracking parameters still open it).
    let query: Set<String>?
    /// A request target that answers 200 (with the bundled catalog).
    let example: String

    init(
      _ operation: Operation, _ path: String, _ kind: Kind, query: Set<String>?, example: String, answers: String
    ) {
      self.operation = operation
      self.path = path
      self.kind = kind
      self.answers = answers
      self.query = query
      self.example = example
    }

    /// Whether the body may be sent gzip-compressed (``CompressionMiddleware``): the text and JSON
    /// endpoints whose bodies run to kilobytes; never an image, and not the small answers (one
    /// quote, `/healthz`, the icons) nor `/metrics`.
    var compresses: Bool { RouteTable.compressed.contains(operation) }

    /// The paths the router registers, each with the format its extension names: one per
    /// format of ``RouteTable/pathFormats`` for a template ending in `.{format}` (Hummingbird
    /// matches `{quote}.png` as a capture before a literal suffix), else the template itself.
    var registrations: [(path: RouterPath, format: String?)] {
      guard path.hasSuffix(".{format}") else { return [(RouterPath(path), nil)] }
      let stem = path.dropLast("{format}".count)
      return RouteTable.pathFormats.map { (RouterPath(String(stem) + $0), $0) }
    }
  }

  /// The operations whose bodies may be sent compressed (``Route/compresses``).
  static let compressed: Set<Operation> = [
    .listQuotes, .openAPI, .page, .todayPage, .quotePage, .calendar, .feed, .customCardReport, .catalogCardReport,
  ]

  /// The formats a path's `.{format}` may name: every extension of every
  /// ``InnerPeace/ImageFormat``.
  static let pathFormats = ImageFormat.allCases.flatMap(\.fileExtensions)

  /// ``pathFormats`` as a message lists them: `png, jpg, jpeg or webp`.
  static var formatList: String {
    pathFormats.dropLast().joined(separator: ", ") + " or " + pathFormats[pathFormats.count - 1]
  }

  /// Query parameters every image endpoint takes: the card options, plus the names reserved
  /// across the service (`v`, the content version; `signature`, `kid` and `expires`, for signed
  /// URLs).
  static let imageQuery: Set<String> = [
    "preset", "w", "h", "format", "align", "quality", "v", "signature", "kid", "expires",
  ]

  /// Query parameters the report endpoints take: the image endpoints' but the format and quality,
  /// which change the image and not what is set.
  static let reportQuery: Set<String> = imageQuery.subtracting(["format", "quality"])

  /// The whole service.
  static let all: [Route] = [
    Route(
      .randomCard, "/random.{format}", .image, query: imageQuery.union(["author", "seed"]),
      example: "/random.png?seed=1", answers: "a random catalog card, uncacheable"),
    Route(
      .randomCardNegotiated, "/random", .negotiatedImage, query: imageQuery.union(["author", "seed"]),
      example: "/random?seed=1", answers: "a random catalog card in a format chosen from Accept"),
    Route(
      .catalogCard, "/cards/{quote}.{format}", .image, query: imageQuery.union(["author", "picture"]),
      example: "/cards/0.png", answers: "one catalog quote's card"),
    Route(
      .catalogCardNegotiated, "/cards/{quote}", .negotiatedImage, query: imageQuery.union(["author", "picture"]),
      example: "/cards/0", answers: "one catalog quote's card in a format chosen from Accept"),
    Route(
      .customCard, "/card.{format}", .image,
      query: imageQuery.union(["text", "author", "picture", "straightQuotes", "lang"]),
      example: "/card.png?text=hi", answers: "a card for any text"),
    Route(
      .todayCard, "/today.{format}", .image, query: imageQuery.union(["author"]),
      example: "/today.png", answers: "the quote of the day"),
    Route(
      .todayCardNegotiated, "/today", .negotiatedImage, query: imageQuery.union(["author"]),
      example: "/today", answers: "the quote of the day in a format chosen from Accept"),
    Route(
      .listQuotes, "/quotes", .json, query: ["limit", "offset"], example: "/quotes",
      answers: "the catalog as JSON, a page at a time"),
    Route(.getQuote, "/quotes/{index}", .json, query: [], example: "/quotes/0", answers: "one catalog quote as JSON"),
    Route(.health, "/healthz", .json, query: [], example: "/healthz", answers: "liveness"),
    Route(
      .readiness, "/readyz", .json, query: [], example: "/readyz",
      answers: "readiness: 200 once a render worker is ready, 503 while starting, without workers or draining"),
    Route(.metrics, "/metrics", .text, query: [], example: "/metrics", answers: "Prometheus metrics"),
    Route(.openAPI, "/openapi.yaml", .text, query: [], example: "/openapi.yaml", answers: "the OpenAPI 3.1 document"),
    Route(.page, "/", .text, query: nil, example: "/", answers: "the web page, on the quote of the day"),
    Route(
      .todayPage, "/q/today", .text, query: nil, example: "/q/today",
      answers: "the quote of the day's page, with link-preview tags"),
    Route(
      .quotePage, "/q/{quote}", .text, query: nil, example: "/q/0",
      answers: "a catalog quote's page, with link-preview tags"),
    Route(.faviconSVG, "/favicon.svg", .text, query: [], example: "/favicon.svg", answers: "the icon, SVG"),
    Route(.faviconICO, "/favicon.ico", .text, query: [], example: "/favicon.ico", answers: "the icon, ICO"),
    Route(
      .calendar, "/calendar.ics", .text, query: [], example: "/calendar.ics",
      answers: "the quote of the day as an iCalendar feed of daily reminders"),
    Route(.feed, "/feed.xml", .text, query: [], example: "/feed.xml", answers: "the quote of the day as an Atom feed"),
    Route(
      .catalogCardReport, "/cards/{quote}.json", .json, query: reportQuery.union(["author", "picture"]),
      example: "/cards/0.json", answers: "what one catalog quote's card sets: lines, runs, fonts (a debug report)"),
    Route(
      .customCardReport, "/card.json", .json,
      query: reportQuery.union(["text", "author", "picture", "straightQuotes", "lang"]),
      example: "/card.json?text=hi", answers: "what the card for any text sets: lines, runs, fonts (a debug report)"),
  ]

  /// The route of an operation.
  static func route(_ operation: Operation) -> Route { all.first { $0.operation == operation }! }

  /// The template of the route the router matched, by the path it registered (Hummingbird's
  /// `endpointPath`): `/cards/{quote}.{format}` for `/cards/{quote}.jpg`; `nil` for none.
  static func template(forEndpoint endpointPath: String) -> String? { routes[endpointPath]?.path }

  /// The route the router matched, by the path it registered; `nil` for none.
  static func route(forEndpoint endpointPath: String) -> Route? { routes[endpointPath] }

  private static let routes: [String: Route] = Dictionary(
    uniqueKeysWithValues: all.flatMap { route in route.registrations.map { ($0.path.description, route) } })

  /// Whether some route's registered path matches `path` (with another method, that is a 405, not
  /// a 404): each segment as Hummingbird's router compares it, and each parameter's value a
  /// ``InnerPeace/WholeNumber`` (every path parameter of the service is a catalog index), so
  /// `/cards/x.png` and `/cards/0.PNG` are no path of the service.
  /// Routes of `excluding` are left out (not served by this router).
  static func isKnownPath(_ path: String, excluding: Set<Operation> = []) -> Bool {
    knownRoute(path, excluding: excluding) != nil
  }

  /// The route whose registered path matches `path`, as ``isKnownPath(_:excluding:)`` matches.
  static func knownRoute(_ path: String, excluding: Set<Operation> = []) -> Route? {
    guard hasNoEmptySegment(path) else { return nil }
    let segments = path == "/" ? [] : path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    return all.first { route in
      !excluding.contains(route.operation)
        && route.registrations.contains { registration in
          let elements = registration.path.components
          return elements.count == segments.count
            && zip(elements, segments).allSatisfy { element, segment in
              element ~= segment && parameterValue(segment, of: element).map { WholeNumber(String($0)) != nil } ?? true
            }
        }
    }
  }

  /// The part of `segment` an element's parameter captures (`3` of `3.png` for `{quote}.png`), or
  /// `nil` for a literal element.
  private static func parameterValue(_ segment: Substring, of element: RouterPath.Element) -> Substring? {
    let pattern = element.description
    guard let open = pattern.firstIndex(of: "{"), let close = pattern.firstIndex(of: "}") else { return nil }
    let prefix = pattern.distance(from: pattern.startIndex, to: open)
    let suffix = pattern.distance(from: close, to: pattern.endIndex) - 1
    return segment.dropFirst(prefix).dropLast(suffix)
  }

  /// The extension of a path that names an image route but for its extension, which is no
  /// format of ``pathFormats`` (`gif` of `/cards/3.gif`, `bmp` of `/random.bmp`); `nil` for any
  /// other path, a known one included (`/cards/3.json` is the report).
  static func unknownFormat(inPath path: String) -> String? {
    guard hasNoEmptySegment(path), !isKnownPath(path) else { return nil }
    let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
    guard let last = segments.last, let dot = last.lastIndex(of: ".") else { return nil }
    let stem = last[..<dot]
    let format = last[last.index(after: dot)...]
    // An extension is a short word; anything else is no format named.
    guard (1...10).contains(format.count), format.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
      return nil
    }
    for route in all where route.kind == .image {
      let elements = route.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
      guard elements.count == segments.count, elements.dropLast().elementsEqual(segments.dropLast()),
        let templateStem = elements.last?.dropLast(".{format}".count)
      else { continue }
      let isParameter = templateStem.hasPrefix("{") && templateStem.hasSuffix("}")
      if isParameter ? WholeNumber(String(stem)) != nil : stem == templateStem { return String(format) }
    }
    return nil
  }

  /// Whether `path` is `/` or has no empty segment (`//`, a trailing `/`). Hummingbird's router
  /// skips empty segments; the service's paths have none, so such a path is a 404.
  static func hasNoEmptySegment(_ path: String) -> Bool {
    path == "/" || (!path.contains("//") && !path.hasSuffix("/"))
  }

  /// Whether the route needs a signature under `configuration`: custom text when there is a key,
  /// every image endpoint when all must be signed.
  static func needsSignature(_ route: Route, _ configuration: ServerConfiguration) -> Bool {
    guard configuration.urlSigner != nil else { return false }
    switch route.kind {
    case .image, .negotiatedImage: return route.operation == .customCard || configuration.signsAllImages
    // A report renders its card: signed as that card is.
    case .json where route.operation == .customCardReport: return true
    case .json where route.operation == .catalogCardReport: return configuration.signsAllImages
    case .json, .text: return false
    }
  }

  /// Refuses, before anything is rendered, a request for a route that needs a signature
  /// (``needsSignature(_:_:)``) without a valid, unexpired one (``SigningKeys/verify(path:parameters:now:)``).
  /// - Throws: ``ServiceError``: 403 naming `signature` (or `kid`, `expires`), 400 for a `kid` or
  ///   `expires` that cannot be one.
  static func checkSignature(
    _ query: QueryParameters, rawQuery: Substring, path: String, for route: Route,
    _ configuration: ServerConfiguration
  ) throws(ServiceError) {
    guard needsSignature(route, configuration), let keys = configuration.signingKeys else { return }
    guard let parameters = URLSigner.parameters(rawQuery) else {
      throw ServiceError(.forbidden, parameter: "signature", "the signature does not match this URL")
    }
    if let refusal = ServiceError(keys.verify(path: path, parameters: parameters, now: configuration.now())) {
      throw refusal
    }
  }

  /// Refuses a query naming a parameter the route does not take, or naming one twice.
  /// - Throws: ``ServiceError`` (400) naming the parameter.
  static func checkQuery(_ query: QueryParameters, for route: Route) throws(ServiceError) {
    if let repeated = query.repeatedName {
      throw .badParameter(repeated, "\(repeated) is given more than once")
    }
    guard let accepted = route.query else { return }
    for name in query.names.sorted() where !accepted.contains(name) {
      let list = accepted.sorted().joined(separator: ", ")
      throw .badParameter(
        name,
        accepted.isEmpty
          ? "unknown parameter '\(name)': \(route.path) takes none"
          : "unknown parameter '\(name)': \(route.path) takes \(list)")
    }
  }
}
