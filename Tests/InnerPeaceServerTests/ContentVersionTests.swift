import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import InnerPeace
import InnerPeaceServer
import Testing

/// The content version that immutable card URLs carry, and the absolute URLs the service gives.
@Suite struct ContentVersionTests {
  /// A copy of the bundled catalog in a folder of its own, changed by `change`.
  static func catalogCopy(_ change: (URL) throws -> Void = { _ in }) throws -> Catalog {
    let bundled = try Catalog.bundled()
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-version-\(UUID())")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for name in ["quotes.json", "pictures.json"] + bundled.pictures {
      try FileManager.default.copyItem(
        at: bundled.directory.appendingPathComponent(name), to: folder.appendingPathComponent(name))
    }
    try change(folder)
    return try Catalog(directory: folder)
  }

  static func version(of catalog: Catalog) async throws -> String {
    let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
    let service = CardService(renderer: renderer, configuration: testConfiguration(concurrency: 1))
    let version = service.contentVersion
    try await service.shutdown()
    return version
  }

  /// The same content gives the same version in every run; editing a quote, reordering the
  /// quotes or changing one byte of a photo (same name) gives another.
  @Test func versionFollowsQuotesAndPhotoBytes() async throws {
    let base = try await Self.version(of: try Self.catalogCopy())
    #expect(base.count == 12 && base.allSatisfy(\.isHexDigit), "\(base)")
    #expect(try await Self.version(of: try Self.catalogCopy()) == base, "same content, same version")
    #expect(try await Self.version(of: try Catalog.bundled()) == base, "the folder does not count, the content does")

    let edited = try await Self.version(
      of: try Self.catalogCopy { folder in
        let file = folder.appendingPathComponent("quotes.json")
        let text = try String(contentsOf: file, encoding: .utf8)
        let first = try #require(text.range(of: "\"text\": \""))
        try text.replacingCharacters(in: first, with: "\"text\": \"Yes. ").write(
          to: file, atomically: true, encoding: .utf8)
      })
    #expect(edited != base, "an edited quote")

    let reordered = try await Self.version(
      of: try Self.catalogCopy { folder in
        let file = folder.appendingPathComponent("quotes.json")
        var quotes = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [Any] ?? []
        quotes.swapAt(0, 1)
        try JSONSerialization.data(withJSONObject: quotes).write(to: file)
      })
    #expect(reordered != base, "reordered quotes: /cards/0 is another quote")

    let catalog = try Catalog.bundled()
    let photo = catalog.pictures[0]
    let retouched = try await Self.version(
      of: try Self.catalogCopy { folder in
        let file = folder.appendingPathComponent(photo)
        var bytes = try Data(contentsOf: file)
        // A byte inside the JPEG's entropy-coded data: still decodable, other pixels.
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: file)
      })
    #expect(retouched != base, "a photo's bytes changed under the same name")
  }

  /// A photo's focus decides its crop, so it counts: moving one focus, or dropping it so that it
  /// is estimated, gives another version; the plain-name spelling with the focus estimated is
  /// stable.
  @Test func versionFollowsTheFoci() async throws {
    let base = try await Self.version(of: try Self.catalogCopy())
    func rewritten(_ edit: @escaping ([Any]) -> [Any]) throws -> Catalog {
      try Self.catalogCopy { folder in
        let file = folder.appendingPathComponent("pictures.json")
        let entries = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [Any] ?? []
        try JSONSerialization.data(withJSONObject: edit(entries)).write(to: file)
      }
    }
    let moved = try await Self.version(
      of: try rewritten { entries in
        var entries = entries
        entries[0] = ["file": Catalog.bundledPictureName(entries[0]), "focus": [0.1, 0.1]]
        return entries
      })
    #expect(moved != base, "a focus moved")
    let estimated = try rewritten { entries in entries.map { Catalog.bundledPictureName($0) } }
    #expect(estimated.pictures.allSatisfy { estimated.focus(ofPicture: $0)?.estimated == true })
    let plain = try await Self.version(of: estimated)
    #expect(plain != base, "estimated foci in place of the given ones")
    #expect(
      try await Self.version(of: try rewritten { entries in entries.map { Catalog.bundledPictureName($0) } }) == plain)
  }

  /// The same build, catalog and fonts installed in two folders give one version: no path
  /// counts, and a font registered with fontconfig that no face of a card resolves to (here, the
  /// other folder's copy of the bundled font, which adds no character) does not change it.
  @Test func versionIsTheSameInAnyFolder() async throws {
    let fonts = URL(fileURLWithPath: try realRenderer().bundledFontPath).deletingLastPathComponent()
    func install() throws -> (catalog: Catalog, fonts: URL) {
      let catalog = try Self.catalogCopy()
      let folder = catalog.directory.appendingPathComponent("Fonts")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      for name in try FileManager.default.contentsOfDirectory(atPath: fonts.path) {
        try FileManager.default.copyItem(
          at: fonts.appendingPathComponent(name), to: folder.appendingPathComponent(name))
      }
      return (catalog, folder)
    }
    func version(_ installed: (catalog: Catalog, fonts: URL)) async throws -> String {
      let renderer = try CardRenderer(
        catalog: installed.catalog, fontsDirectory: installed.fonts, backgroundCacheBytes: 0)
      #expect(renderer.bundledFontPath.hasPrefix(installed.fonts.path))
      let service = CardService(renderer: renderer, configuration: testConfiguration(concurrency: 1))
      let version = service.contentVersion
      try await service.shutdown()
      return version
    }
    let first = try install()
    let before = try await version(first)
    let second = try install()
    #expect(first.catalog.directory != second.catalog.directory)
    #expect(try await version(second) == before, "two install folders, one version")
    #expect(try await version(first) == before, "a font installed since that no face reaches changes nothing")
    #expect(try await Self.version(of: try Catalog.bundled()) == before, "the package's own folder too")
  }

  /// `publicURL` makes every absolute URL start with it; without it the request decides, and
  /// `X-Forwarded-*` only count when trusted.
  @Test func absoluteURLsFollowTheOrigin() async throws {
    var configuration = testConfiguration()
    configuration.publicURL = "https://cards.example.com/"
    try await withRouter(configuration: configuration) { client, service in
      let reply = try await client.get("/random.png?seed=1&w=200&h=200")
      let location = try #require(reply.header("Content-Location"))
      #expect(location.hasPrefix("https://cards.example.com/cards/"), "\(location)")
      #expect(queryItems(of: location)["v"] == service.contentVersion)
      let quotes = try await client.get("/quotes/0")
      let imageURL = try #require((quotes.json as? [String: Any])?["imageURL"] as? String)
      #expect(imageURL.hasPrefix("https://cards.example.com/cards/0.png?"), "\(imageURL)")
      #expect(queryItems(of: imageURL)["v"] == service.contentVersion)
    }
    let forwarded: HTTPFields = [
      HTTPField.Name("X-Forwarded-Proto")!: "https", HTTPField.Name("X-Forwarded-Host")!: "evil.example",
    ]
    try await withRouter { client, _ in
      let reply = try await client.request("/random.png?seed=1&w=200&h=200", headers: forwarded)
      let location = try #require(reply.header("Content-Location"))
      #expect(!location.contains("evil.example"), "untrusted forwarded headers were used: \(location)")
    }
    var trusting = testConfiguration()
    trusting.trustsForwardedHeaders = true
    try await withRouter(configuration: trusting) { client, _ in
      let reply = try await client.request("/random.png?seed=1&w=200&h=200", headers: forwarded)
      let location = try #require(reply.header("Content-Location"))
      #expect(location.hasPrefix("https://evil.example/cards/"), "\(location)")
      // A forwarded host that could break out of a URL or an attribute is not used.
      var hostile = forwarded
      hostile[HTTPField.Name("X-Forwarded-Host")!] = "a\"b.example/<x>"
      let refused = try await client.request("/random.png?seed=1&w=200&h=200", headers: hostile)
      #expect(refused.header("Content-Location").map { !$0.contains("\"") && !$0.contains("<") } == true)
    }
  }

  /// A public URL is an origin: scheme, host, optional port, nothing after.
  @Test(arguments: [
    ("https://cards.example.com", true), ("http://127.0.0.1:8080/", true), ("https://[::1]:8443", true),
    ("cards.example.com", false), ("ftp://cards.example.com", false), ("https://cards.example.com/app", false),
    ("https://", false), ("https://a b", false), ("https://x\"y", false),
  ])
  func publicURLIsChecked(url: String, valid: Bool) {
    var configuration = ServerConfiguration()
    configuration.publicURL = url
    #expect(((try? configuration.validate()) != nil) == valid, "\(url)")
  }
}

extension Catalog {
  /// The file name of a `pictures.json` entry as JSONSerialization reads it (a string or an
  /// object with "file").
  fileprivate static func bundledPictureName(_ entry: Any) -> String {
    (entry as? String) ?? ((entry as? [String: Any])?["file"] as? String) ?? ""
  }
}
