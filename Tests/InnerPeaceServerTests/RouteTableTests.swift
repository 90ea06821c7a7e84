import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import Testing

@testable import InnerPeaceServer

/// The route table (`RouteTable.all`) against the router, the 405 handling and `/openapi.yaml`; the
/// strict parameters; the `Accept`-chosen formats and `quality`.
@Suite struct RouteTableTests {
  // MARK: The document, read without a YAML library

  /// One path item of the OpenAPI document.
  struct DocumentedPath: Equatable {
    let path: String
    var operationId = ""
    /// The properties of the query object's schema; empty when the path takes no query.
    var query: Set<String> = []
    var pathParameters: Set<String> = []
  }

  /// The path items under `paths:` and, for each, its operationId, path parameters and the
  /// property names of its query schema (`components/schemas/<Name>/properties`).
  static func documentedPaths(_ yaml: String) -> [DocumentedPath] {
    let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var items: [DocumentedPath] = []
    var querySchemas: [Int: String] = [:]
    var section = ""
    var inQueryParameter = false
    for line in lines {
      if !line.hasPrefix(" "), line.hasSuffix(":") { section = String(line.dropLast()) }
      guard section == "paths" else { continue }
      if let match = line.wholeMatch(of: #/  (/\S*):\s*/#) {
        items.append(DocumentedPath(path: String(match.1)))
        inQueryParameter = false
      } else if let match = line.wholeMatch(of: #/\s+operationId: (\w+)\s*/#), !items.isEmpty {
        items[items.count - 1].operationId = String(match.1)
      } else if line.contains("in: query") {
        inQueryParameter = true
      } else if inQueryParameter, let match = line.firstMatch(of: #/\$ref: '#/components/schemas/(\w+)'/#) {
        querySchemas[items.count - 1] = String(match.1)
        inQueryParameter = false
      }
    }
    for (index, item) in items.enumerated() {
      for match in item.path.matches(of: #/\{(\w+)\}/#) { items[index].pathParameters.insert(String(match.1)) }
      if let schema = querySchemas[index] { items[index].query = schemaProperties(yaml, lines: lines, schema: schema) }
    }
    return items
  }

  /// The property names of `components/schemas/<schema>`.
  static func schemaProperties(_ yaml: String, lines: [String], schema: String) -> Set<String> {
    guard let start = lines.firstIndex(of: "    \(schema):") else { return [] }
    var names: Set<String> = []
    var inProperties = false
    for line in lines[(start + 1)...] {
      let indent = line.prefix { $0 == " " }.count
      if indent <= 4 && !line.isEmpty { break }
      if indent == 6 { inProperties = line.hasPrefix("      properties:") }
      if inProperties, indent == 8, let match = line.wholeMatch(of: #/\s+(\w+):.*/#) { names.insert(String(match.1)) }
    }
    return names
  }

  static var document: String {
    get throws { try #require(OpenAPIDocument.yaml, "Resources/openapi.yaml is not found") }
  }

  // MARK: Table against document and router

  /// Every route is a documented path with its operationId, path parameters and query
  /// parameters, and the document has no other path.
  @Test func documentIsTheRouteTable() throws {
    let documented = Self.documentedPaths(try Self.document)
    #expect(documented.map(\.path) == RouteTable.all.map(\.path), "the document's paths, in the table's order")
    for route in RouteTable.all {
      guard let item = documented.first(where: { $0.path == route.path }) else { continue }
      #expect(item.operationId == route.operation.rawValue, "\(route.path)")
      #expect(item.query == route.query ?? [], "\(route.path): documented query \(item.query.sorted())")
      let pathParameters = Set(route.path.matches(of: #/\{(\w+)\}/#).map { String($0.1) })
      #expect(item.pathParameters == pathParameters, "\(route.path)")
    }
    #expect(Set(RouteTable.all.map(\.operation)) == Set(RouteTable.Operation.allCases), "every operation has a route")
  }

  /// The document's `info.version` and licence are the package's: `InnerPeaceVersion.current`
  /// and the MIT licence of the `LICENSE` file.
  @Test func documentStatesTheReleaseAndLicence() throws {
    let lines = try Self.document.split(separator: "\n")
    let info = lines.drop { $0 != "info:" }.dropFirst().prefix { $0.hasPrefix(" ") }
    #expect(
      info.contains("  version: \(InnerPeaceVersion.current)"), "info.version is not \(InnerPeaceVersion.current)")
    #expect(info.contains { $0.hasPrefix("  license:") && $0.contains("MIT") }, "info.license is not MIT")
  }

  /// The descriptions of the document, each joined into one line (a folded `>-` block with its
  /// lines), in order.
  static func descriptions(_ yaml: String) -> [String] {
    let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    var found: [String] = []
    var index = 0
    while index < lines.count {
      let line = lines[index]
      index += 1
      guard let range = line.range(of: "description: ") else { continue }
      let indent = line.prefix { $0 == " " }.count
      var text = String(line[range.upperBound...])
      if text.hasPrefix(">") || text.hasPrefix("|") {
        var block: [String] = []
        while index < lines.count, lines[index].prefix(while: { $0 == " " }).count > indent {
          block.append(lines[index].trimmingCharacters(in: .whitespaces))
          index += 1
        }
        text = block.joined(separator: " ")
      }
      found.append(text)
    }
    return found
  }

  /// Catalog cards are immutable only with the current `v`: every description that says
  /// `immutable` says so, and what they are sent otherwise (``CardLinks/revalidate``).
  @Test func documentSaysWhenCardsAreImmutable() throws {
    let saying = Self.descriptions(try Self.document).filter { $0.contains("immutable") }
    #expect(saying.count >= 3, "\(saying)")
    for text in saying {
      #expect(text.contains(CardLinks.immutable), "\(text)")
      #expect(text.contains("current `v`") || text.contains("current content version in `v`"), "\(text)")
      #expect(text.contains(CardLinks.revalidate), "states what a card without the current v gets: \(text)")
    }
  }

  /// The document reader itself: a schema's properties, a path's operationId and query.
  @Test func documentReaderReads() {
    let yaml = """
      openapi: 3.1.0
      paths:
        /a.{format}:
          get:
            operationId: aCard
            parameters:
              - name: query
                in: query
                schema: { $ref: '#/components/schemas/AQuery' }
        /b:
          get:
            operationId: b
      components:
        schemas:
          AQuery:
            type: object
            properties:
              w: { $ref: '#/components/schemas/Side' }
              text:
                type: string
            not: { required: [w] }
          Side:
            type: integer
      """
    let items = Self.documentedPaths(yaml)
    #expect(items.map(\.path) == ["/a.{format}", "/b"])
    #expect(items.first?.operationId == "aCard")
    #expect(items.first?.query == ["w", "text"])
    #expect(items.first?.pathParameters == ["format"])
    #expect(items.last?.query == [])
  }

  /// Each route's example is served by that route (200, counted under the route's template, with
  /// one Content-Length), HEAD answers like GET, and another method is a 405 with `Allow`.
  @Test func everyRouteServesItsExample() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, service in
      for route in RouteTable.all {
        let reply = try await client.get(route.example)
        #expect(reply.status == 200, "GET \(route.example) → \(reply)")
        let exposition = String(decoding: service.metrics.exposition(), as: UTF8.self)
        let count = metricValue(
          exposition, "innerpeace_http_requests_total", labels: ["route": route.path, "status": "200"])
        #expect(count == 1, "GET \(route.example) is counted under \(route.path)")
        // One Content-Length, Hummingbird's, from the body (no route sets it by hand).
        #expect(reply.headerValues("Content-Length") == [String(reply.body.count)], "GET \(route.example)")
        let head = try await client.request(route.example, method: .head)
        #expect(head.status == 200 && head.body.isEmpty, "HEAD \(route.example) → \(head)")
        if route.operation != .metrics {
          #expect(head.headerValues("Content-Length") == [String(reply.body.count)], "HEAD \(route.example)")
        }
        let post = try await client.request(route.example, method: .post)
        expectError(post, status: 405)
        #expect(post.header("Allow") == "GET, HEAD", "POST \(route.example)")
      }
    }
  }

  /// Metrics (and log lines, which share the label) name the template the request matched, one
  /// per extension's registration: `/cards/1.jpg` is `/cards/{quote}.{format}`, not `/cards/{quote}`
  /// (issue 19); an unknown path is one fixed label, never the raw path.
  @Test func requestsAreLabelledByTheirTemplate() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, service in
      let cases: [(target: String, label: String, status: Int)] = [
        ("/cards/1.jpg", "/cards/{quote}.{format}", 200), ("/cards/1.jpeg", "/cards/{quote}.{format}", 200),
        ("/cards/1.webp", "/cards/{quote}.{format}", 200), ("/cards/1", "/cards/{quote}", 200),
        ("/cards/1.json", "/cards/{quote}.json", 200), ("/random.png?seed=1", "/random.{format}", 200),
        ("/random?seed=1", "/random", 200), ("/card.jpg?text=hi", "/card.{format}", 200),
        ("/card.json?text=hi", "/card.json", 200), ("/today.webp", "/today.{format}", 200),
        ("/q/today", "/q/today", 200), ("/q/2", "/q/{quote}", 200), ("/quotes/2", "/quotes/{index}", 200),
        ("/cards/x.png", "/cards/{quote}.{format}", 404), ("/quotes/x", "/quotes/{index}", 404),
        ("/no-such-route", RequestLogMiddleware.unmatchedLabel, 404),
        ("/random.gif", RequestLogMiddleware.unmatchedLabel, 400),
        ("/nope.gif", RequestLogMiddleware.unmatchedLabel, 404),
        ("/cards/1.png/x", RequestLogMiddleware.unmatchedLabel, 404), ("//", "/", 404), ("/healthz/", "/healthz", 404),
      ]
      for (target, label, status) in cases {
        let labels = ["route": label, "status": String(status)]
        let before =
          metricValue(
            String(decoding: service.metrics.exposition(), as: UTF8.self), "innerpeace_http_requests_total",
            labels: labels) ?? 0
        let reply = try await client.get(target)
        #expect(reply.status == status, "GET \(target) → \(reply)")
        let after = metricValue(
          String(decoding: service.metrics.exposition(), as: UTF8.self), "innerpeace_http_requests_total",
          labels: labels)
        #expect(after == before + 1, "GET \(target) is counted under \(label)")
      }
      let exposition = String(decoding: service.metrics.exposition(), as: UTF8.self)
      for raw in ["/no-such-route", "/random.gif", "/cards/x.png", "/quotes/x"] {
        #expect(!exposition.contains("route=\"\(raw)\""), "no label is a raw path: \(raw)")
      }
    }
  }

  /// Every path the router registers names its table template, and only paths of the table are
  /// known (POST to one is a 405, to anything else a 404).
  @Test func registrationsAndKnownPaths() {
    for route in RouteTable.all {
      for registration in route.registrations {
        #expect(RouteTable.template(forEndpoint: registration.path.description) == route.path, "\(registration)")
      }
    }
    #expect(RouteTable.template(forEndpoint: "NotFound") == nil)
    let known: [(String, Bool)] = [
      ("/random.png", true), ("/random.jpeg", true), ("/random", true), ("/random.gif", false), ("/random.", false),
      ("/cards/3.jpeg", true), ("/cards/3", true), ("/cards/3.png/x", false), ("/cards/", false),
      ("/cards/x.png", false), ("/cards/0.PNG", false), ("/cards/3.5.png", false), ("/quotes/x", false),
      ("/q/x", false), ("/card", false),
      ("/card.webp", true), ("/today", true), ("/quotes/7", true), ("/", true), ("//", false), ("/nope", false),
    ]
    for (path, isKnown) in known {
      #expect(RouteTable.isKnownPath(path) == isKnown, "\(path)")
    }
  }

  // MARK: Strict parameters

  /// A parameter a route does not take is a 400 naming it, on every route that checks its query.
  @Test func unknownParameterIs400NamingIt() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      for route in RouteTable.all where route.query != nil {
        let separator = route.example.contains("?") ? "&" : "?"
        expectError(try await client.get(route.example + separator + "bogus=1"), status: 400, parameter: "bogus")
      }
      // The issue's examples: transparent is no parameter of the service.
      expectError(try await client.get("/random.png?transparent=true"), status: 400, parameter: "transparent")
      // The page ignores its query.
      #expect(try await client.get("/?utm_source=x").status == 200)
    }
  }

  /// The pages ignore their query whatever it holds: a repeated tracking parameter or a stray `%`
  /// (a 400 before issue 17, though the README said the query is ignored).
  @Test func pagesIgnoreAnyQuery() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      for route in RouteTable.all where route.query == nil {
        for query in ["utm_source=a&utm_source=b", "q=100%", "x=%zz&x=%FF%FE", "=&&=", "a=%00"] {
          let path = route.example + "?" + query
          let response = try await client.get(path)
          #expect(response.status == 200, "\(path)")
        }
      }
    }
  }

  @Test func repeatedParameterIs400() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      expectError(try await client.get("/random.png?seed=1&seed=2"), status: 400, parameter: "seed")
      expectError(try await client.get("/cards/0.png?preset=og&preset=og"), status: 400, parameter: "preset")
    }
  }

  /// `v` and `signature` (and `quality`) are accepted on every image endpoint.
  @Test func reservedNamesAreAccepted() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      for route in RouteTable.all where route.kind == .image || route.kind == .negotiatedImage {
        let separator = route.example.contains("?") ? "&" : "?"
        let reply = try await client.get(route.example + separator + "v=0123456789ab&signature=abc")
        #expect(reply.status == 200, "\(route.example): \(reply)")
      }
    }
  }

  /// Booleans are `true` or `false`; every other spelling is a 400 naming the parameter.
  @Test func booleansAreTrueOrFalse() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      for value in ["maybe", "", "FALSE", "True", "no", "yes", "0", "1", "%20false"] {
        for endpoint in ["/random.png?seed=1&", "/cards/0.png?", "/today.png?", "/today?", "/cards/0?"] {
          expectError(try await client.get("\(endpoint)author=\(value)"), status: 400, parameter: "author")
        }
        expectError(
          try await client.get("/card.png?text=hi&straightQuotes=\(value)"), status: 400, parameter: "straightQuotes")
      }
      for value in ["true", "false"] {
        #expect(try await client.get("/cards/0.png?author=\(value)").status == 200)
        #expect(try await client.get("/card.png?text=hi&straightQuotes=\(value)").status == 200)
      }
    }
  }

  /// Numbers are plain decimals: no sign, no leading zeros, no spaces.
  @Test func numbersAreCanonical() async throws {
    try await withRouter(renderer: CannedRenderer(base: try realRenderer())) { client, _ in
      for (query, parameter) in [
        ("w=+300&h=300", "w"), ("w=0300&h=300", "w"), ("w=300&h=%20300", "h"), ("preset=0300x300", "preset"),
        ("preset=300X300", "preset"), ("preset=OG", "preset"), ("quality=+50", "quality"), ("seed=01", "seed"),
      ] {
        expectError(try await client.get("/random.jpg?\(query)"), status: 400, parameter: parameter)
      }
      #expect(try await client.get("/random.jpg?seed=0&preset=300x300").status == 200)
    }
  }

  /// `.jpeg` is a path format like `.jpg`, and serves the same JPEG.
  @Test func jpegExtensionServesTheJPEG() async throws {
    try await withRouter { client, _ in
      let jpeg = try await client.get("/cards/3.jpeg?w=240&h=200")
      expectCard(jpeg, format: "jpeg", size: (240, 200))
      let jpg = try await client.get("/cards/3.jpg?w=240&h=200")
      #expect(sameBytes(jpeg, jpg))
      #expect(try await client.get("/cards/3.jpeg?w=240&h=200&format=jpg").status == 200)
      #expect(try await client.get("/random.jpeg?seed=1&w=200&h=200").header("Content-Type") == "image/jpeg")
      #expect(try await client.get("/today.jpeg?w=200&h=200").header("Content-Type") == "image/jpeg")
    }
  }

  // MARK: Formats from Accept

  @Test(
    arguments: [
      (nil, "png"), ("", "png"), ("*/*", "png"), ("image/*", "png"), ("image/webp", "webp"), ("image/jpeg", "jpeg"),
      ("image/jpg", "jpeg"), ("image/png", "png"), ("image/avif", "avif"), ("image/avif;q=0.5, image/webp", "webp"),
      ("image/webp, image/avif", "avif"), ("image/*, image/avif;q=0", "png"), ("image/avif;q=0, image/webp", "webp"),
      // Browsers' image requests (Chromium and Firefox, Safari): AVIF, the smallest, where named.
      ("image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8", "avif"),
      ("image/avif,image/webp,*/*", "avif"),
      (
        "image/webp,image/avif,image/jxl,image/heic,image/heic-sequence,video/*;q=0.8,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5",
        "avif"
      ),
      // The page's own request, which leaves AVIF out.
      ("image/webp,image/jpeg;q=0.9,image/png;q=0.8", "webp"),
      ("image/png;q=0.9, image/jpeg", "jpeg"), ("image/png, image/jpeg", "jpeg"), ("image/png;q=0, */*", "jpeg"),
      ("image/*;q=0.5, image/png", "png"), ("IMAGE/WEBP", "webp"), ("image/webp;q=0.5, image/png;q=0.6", "png"),
      ("image/webp ; q=1.0", "webp"), ("*/*;q=0, image/webp;q=0.1", "webp"),
      ("text/html", nil), ("image/gif", nil), ("*/*;q=0", nil), ("image/*;q=0", nil), ("garbage", nil),
      ("image/webp;q=abc", nil), ("image/png;q=2", nil), ("*/png", nil),
    ] as [(String?, String?)])
  func acceptChoosesTheFormat(accept: String?, expected: String?) {
    #expect(FormatNegotiation.choose(accept: accept)?.rawValue == expected, "Accept: \(accept ?? "(none)")")
  }

  @Test func acceptWithQualityChoosesALossyFormat() {
    let lossy: [ImageFormat] = [.jpeg, .webp, .avif]
    #expect(FormatNegotiation.choose(accept: "*/*", among: lossy) == .jpeg)
    #expect(FormatNegotiation.choose(accept: "image/avif", among: lossy) == .avif)
    #expect(FormatNegotiation.choose(accept: "image/webp,*/*;q=0.8", among: lossy) == .webp)
    #expect(FormatNegotiation.choose(accept: "image/png", among: lossy) == nil)
  }

  /// `/random`, `/cards/{quote}` and `/today` follow Accept, say so with `Vary: Accept`, and name
  /// the chosen format's URL; URLs with an extension do not vary.
  @Test func extensionlessURLsFollowAccept() async throws {
    try await withRouter { client, _ in
      for uri in ["/random?seed=4&w=240&h=200", "/cards/2?w=240&h=200", "/today?w=240&h=200"] {
        for (accept, format) in [
          ("image/webp,*/*", "webp"), ("image/jpeg", "jpeg"), ("*/*", "png"), (nil, "png"), ("image/avif", "avif"),
        ] {
          var headers: HTTPFields = [:]
          if let accept { headers[.accept] = accept }
          let reply = try await client.request(uri, headers: headers)
          expectCard(reply, format: format, size: (240, 200))
          #expect(reply.header("Vary") == "Accept", "\(uri) Accept: \(accept ?? "-")")
          let location = try #require(reply.header("Content-Location"), "\(uri)")
          let fileExtension = format == "jpeg" ? "jpg" : format
          #expect(path(of: location).hasSuffix(".\(fileExtension)"), "\(uri): \(location)")
        }
        let refused = try await client.request(uri, headers: [.accept: "text/html"])
        expectError(refused, status: 406)
        // format= chooses instead of Accept.
        let named = try await client.request(uri + "&format=jpeg", headers: [.accept: "image/webp"])
        expectCard(named, format: "jpeg", size: (240, 200))
        // The URL then names its format, so the answer does not vary with Accept.
        #expect(named.header("Vary") == nil, "\(uri)&format=jpeg")
      }
      let withExtension = try await client.request("/cards/2.png?w=240&h=200", headers: [.accept: "image/webp"])
      expectCard(withExtension, format: "png", size: (240, 200))
      #expect(withExtension.header("Vary") == nil)
      // The negotiated card and its Content-Location serve the same bytes.
      let negotiated = try await client.request("/cards/2?w=240&h=200", headers: [.accept: "image/webp"])
      let stable = try await client.get(try #require(negotiated.header("Content-Location")))
      #expect(sameBytes(negotiated, stable))
      // A revalidation of a negotiated URL still says it varies.
      let etag = try #require(negotiated.header("ETag"))
      var headers: HTTPFields = [.accept: "image/webp"]
      headers[.ifNoneMatch] = etag
      let revalidated = try await client.request("/cards/2?w=240&h=200", headers: headers)
      #expect(revalidated.status == 304)
      #expect(revalidated.header("Vary") == "Accept")
    }
  }

  // MARK: quality

  @Test func qualityIsAParameterOfJPEGWebPAndAVIF() async throws {
    try await withRouter { client, _ in
      for format in ["jpg", "webp", "avif"] {
        let base = "/cards/1.\(format)?w=400&h=300"
        let standard = try await client.get(base)
        let low = try await client.get(base + "&quality=20")
        let high = try await client.get(base + "&quality=100")
        let ninety = try await client.get(base + "&quality=90")
        let media = format == "jpg" ? "jpeg" : format
        expectCard(low, format: media, size: (400, 300))
        expectCard(high, format: media, size: (400, 300))
        #expect(low.body.count < standard.body.count, "\(format): quality 20 is \(low.body.count) bytes")
        #expect(high.body.count > standard.body.count, "\(format): quality 100 is \(high.body.count) bytes")
        // The default quality is 90; AVIF's is 81 (the quantizer whose cards match WebP's 90).
        let byDefault = format == "avif" ? try await client.get(base + "&quality=81") : ninety
        #expect(sameBytes(byDefault, standard), "\(format): the default quality")
        #expect(low.header("ETag") != standard.header("ETag"))
      }
      for bad in ["0", "101", "abc", "", "50.5", "-1"] {
        expectError(try await client.get("/cards/1.jpg?quality=\(bad)"), status: 400, parameter: "quality")
      }
      for uri in ["/cards/1.png?quality=50", "/random.png?quality=50", "/random?format=png&quality=50"] {
        expectError(try await client.get(uri), status: 400, parameter: "quality")
      }
      // Without an extension, quality makes the choice a lossy format.
      let lossy = try await client.request("/cards/1?w=240&h=200&quality=50", headers: [.accept: "*/*"])
      expectCard(lossy, format: "jpeg", size: (240, 200))
      let location = try #require(lossy.header("Content-Location"))
      #expect(queryItems(of: location)["quality"] == "50", "\(location)")
      expectError(
        try await client.request("/cards/1?quality=50", headers: [.accept: "image/png"]), status: 406)
      // The random card's stable URL keeps the quality.
      let random = try await client.get("/random.webp?seed=2&w=240&h=200&quality=40")
      let randomLocation = try #require(random.header("Content-Location"))
      #expect(queryItems(of: randomLocation)["quality"] == "40")
      #expect(sameBytes(try await client.get(randomLocation), random))
    }
  }

  /// A render worker process gets the quality too.
  @Test func workerWireCarriesQuality() throws {
    for quality in [nil, 1, 37, 100] as [Int?] {
      let request = CardRequest(preset: .og, quote: .index(2), seed: 0, format: .webp, quality: quality)
      #expect(try wireRoundTrip(request) == request)
    }
  }
}
