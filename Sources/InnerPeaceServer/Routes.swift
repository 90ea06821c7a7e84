import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace

/// Every endpoint of the service, declared once. The router registers these (``ServiceRoutes``),
/// the 405 handling asks ``Routes/matches(_:)``, and the tests check `/openapi.yaml` (the
/// resource `Resources/openapi.yaml`) and their examples against this list.
enum Routes {
  /// The service's operations, named as the OpenAPI document's `operationId`s.
  enum Operation: String, CaseIterable, Sendable {
    case randomCard, randomCardNegotiated, catalogCard, catalogCardNegotiated, customCard, todayCard
    case todayCardNegotiated, listQuotes, getQuote, health, metrics, openAPI, page, todayPage, quotePage
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

  /// One endpoint: method, OpenAPI path template, what it answers and the query it takes.
  struct Route: Sendable {
    let operation: Operation
    let method: HTTPRequest.Method
    /// The OpenAPI path template, e.g. `/cards/{quote}.{format}`.
    let path: String
    let kind: Kind
    /// One line: what the endpoint answers.
    let answers: String
    /// The query parameters it accepts; `nil` for any (the page ignores its query, so links
    /// carrying tracking parameters still open it).
    let query: Set<String>?
    /// A request target that answers 200 (with the bundled catalog).
    let example: String

    /// The path's template split into segments, each a list of literal text and parameters.
    fileprivate let segments: [[Piece]]

    init(
      _ operation: Operation, _ path: String, _ kind: Kind, query: Set<String>?, example: String, answers: String
    ) {
      self.operation = operation
      method = .get
      self.path = path
      self.kind = kind
      self.answers = answers
      self.query = query
      self.example = example
      segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map(Piece.parse)
    }

    /// The path the Hummingbird router registers: a segment holding one parameter after a
    /// literal prefix keeps Hummingbird's `prefix.{name}` form; any other segment holding a
    /// parameter is captured whole (``Route/match(_:)`` then checks it).
    var routerPath: String {
      "/"
        + segments.map { pieces in
          switch (pieces.first, pieces.count) {
          case (.some(.literal(let text)), 2) where pieces.last.map(\.isParameter) == true: "\(text){\(pieces[1].name)}"
          case _ where pieces.contains(where: \.isParameter): "{\(pieces.first { $0.isParameter }!.name)}"
          default: pieces.map(\.name).joined()
          }
        }.joined(separator: "/")
    }

    /// The path parameters if `path` (as the request has it, still percent-encoded) is this
    /// route's, with every parameter's value well formed (see ``Routes/parameterAccepts(_:_:)``).
    func match(_ path: String) -> [String: String]? {
      let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
      guard parts.count == segments.count else { return nil }
      var values: [String: String] = [:]
      for (part, pieces) in zip(parts, segments) {
        var rest = Substring(part)
        for (index, piece) in pieces.enumerated() {
          switch piece {
          case .literal(let text):
            guard rest.hasPrefix(text) else { return nil }
            rest = rest.dropFirst(text.count)
          case .parameter(let name):
            // A parameter runs to the next literal (the last one of the segment), or to the end.
            let end: Substring.Index
            if index + 1 < pieces.count, case .literal(let next) = pieces[index + 1] {
              guard let found = rest.range(of: next, options: .backwards) else { return nil }
              end = found.lowerBound
            } else {
              end = rest.endIndex
            }
            let value = String(rest[..<end])
            guard Routes.parameterAccepts(name, value) else { return nil }
            values[name] = value
            rest = rest[end...]
          }
        }
        guard rest.isEmpty else { return nil }
      }
      return values
    }
  }

  /// A piece of a path segment.
  fileprivate enum Piece: Sendable {
    case literal(String)
    case parameter(String)

    var isParameter: Bool { if case .parameter = self { true } else { false } }
    var name: String {
      switch self {
      case .literal(let text), .parameter(let text): text
      }
    }

    static func parse(_ segment: Substring) -> [Piece] {
      var pieces: [Piece] = []
      var rest = segment
      while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
        if open > rest.startIndex { pieces.append(.literal(String(rest[..<open]))) }
        pieces.append(.parameter(String(rest[rest.index(after: open)..<close])))
        rest = rest[rest.index(after: close)...]
      }
      if !rest.isEmpty || pieces.isEmpty { pieces.append(.literal(String(rest))) }
      return pieces
    }
  }

  /// The formats a path's `.{format}` may name.
  static let pathFormats = ["png", "jpg", "jpeg", "webp"]

  /// Whether a path parameter's value is well formed: `format` one of ``pathFormats``, `quote`
  /// and `index` decimal digits (a number out of range is the handler's 404).
  static func parameterAccepts(_ name: String, _ value: String) -> Bool {
    switch name {
    case "format": pathFormats.contains(value)
    case "quote", "index":
      !value.isEmpty && value.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    default: !value.isEmpty
    }
  }

  /// Query parameters every image endpoint takes: the card options, plus the names reserved
  /// across the service (`v`, the content version; `signature`, for signed URLs).
  static let imageQuery: Set<String> = ["preset", "w", "h", "format", "align", "quality", "v", "signature"]

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

  /// The route serving `path` and its path parameters, if any.
  static func route(for path: String, among routes: [Route] = all) -> (Route, [String: String])? {
    for route in routes {
      if let values = route.match(path) { return (route, values) }
    }
    return nil
  }

  /// Whether some route serves `path` (with another method, that is a 405, not a 404).
  @Sendable static func matches(_ path: String) -> Bool { route(for: path) != nil }

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
  /// (``needsSignature(_:_:)``) without a valid one.
  /// - Throws: ``ServiceError`` (403) naming `signature`.
  static func checkSignature(
    _ query: QueryParameters, rawQuery: Substring, path: String, for route: Route,
    _ configuration: ServerConfiguration
  ) throws(ServiceError) {
    guard needsSignature(route, configuration), let signer = configuration.urlSigner else { return }
    guard let signature = query["signature"] else {
      throw ServiceError(.forbidden, parameter: "signature", "this URL must be signed: signature is missing")
    }
    guard let parameters = URLSigner.parameters(rawQuery),
      signer.isValid(signature: signature, path: path, parameters: parameters)
    else {
      throw ServiceError(.forbidden, parameter: "signature", "the signature does not match this URL")
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

/// Registers every route of ``Routes/all`` on a router, each answered by its handler.
struct ServiceRoutes<Renderer: CardRendering> {
  let service: CardService<Renderer>

  func add(to router: Router<BasicRequestContext>) {
    let cards = CardRoutes(service: service)
    let info = InfoRoutes(service: service)
    let feeds = FeedRoutes(service: service)
    let pages = PageRoutes(service: service)
    // Routes that share a router path (/cards/{quote}.{format} and /cards/{quote}) share one
    // registration, which picks the route whose template matches.
    var groups: [(String, [Routes.Route])] = []
    for route in Routes.all {
      if let index = groups.firstIndex(where: { $0.0 == route.routerPath }) {
        groups[index].1.append(route)
      } else {
        groups.append((route.routerPath, [route]))
      }
    }
    for (path, routes) in groups {
      router.on(RouterPath(path), method: .get) { request, context in
        guard let (route, parameters) = Routes.route(for: request.uri.path, among: routes) else {
          throw HTTPError(.notFound)
        }
        let rawQuery = request.uri.query.map { Substring($0) } ?? ""
        // A route that takes any query (the pages) ignores it: it is not even decoded, so a link
        // with a repeated tracking parameter or a stray `%` still opens the page.
        let query = try QueryParameters(raw: route.query == nil ? "" : rawQuery)
        try Routes.checkSignature(query, rawQuery: rawQuery, path: request.uri.path, for: route, service.configuration)
        try Routes.checkQuery(query, for: route)
        let format = parameters["format"]
        switch route.operation {
        case .randomCard, .randomCardNegotiated: return try await cards.random(request, query, pathFormat: format)
        case .catalogCard, .catalogCardNegotiated:
          return try await cards.stable(request, query, quote: parameters["quote"] ?? "", pathFormat: format)
        case .customCard: return try await cards.custom(request, query, pathFormat: format)
        case .customCardReport: return try await cards.customReport(request, query)
        case .catalogCardReport: return try await cards.stableReport(request, query, quote: parameters["quote"] ?? "")
        case .todayCard, .todayCardNegotiated: return try await cards.today(request, query, pathFormat: format)
        case .listQuotes: return try await info.quotes(request, query)
        case .getQuote: return try info.quote(parameters["index"] ?? "", request)
        case .health: return try info.health()
        case .metrics: return info.metrics()
        case .openAPI: return try info.openAPI()
        case .page:
          // The page asks for cards of any size: it cannot sign them.
          guard !service.configuration.signsAllImages else {
            throw ServiceError(.notFound, "no page: this server answers signed image URLs only")
          }
          return try pages.today(request, path: "/")
        case .todayPage: return try pages.today(request, path: "/q/today")
        case .quotePage: return try pages.quote(request, parameters["quote"] ?? "")
        case .faviconSVG: return try pages.faviconSVG()
        case .faviconICO: return try pages.faviconICO()
        case .calendar: return try feeds.calendar(request)
        case .feed: return try feeds.feed(request)
        }
      }
    }
  }
}
