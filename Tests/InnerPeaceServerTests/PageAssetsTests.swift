import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

@testable import InnerPeaceServer

/// The web page's files (`Resources/page/`): the page inlines the style sheet and script as the
/// files hold them, its Content-Security-Policy allows exactly those by hash, the icons are the
/// files' bytes, and a broken file is refused when the page is loaded, naming the file.
@Suite struct PageAssetsTests {
  static let folder = packageRoot.appendingPathComponent("Resources/page", isDirectory: true)

  static func file(_ name: String) throws -> Data { try Data(contentsOf: folder.appendingPathComponent(name)) }

  /// `sha256-` and the base64 SHA-256 of `bytes`, as CSP writes a hash source.
  static func hashSource(_ bytes: Data) -> String {
    "sha256-" + Data(SHA256.hash(data: bytes)).base64EncodedString()
  }

  /// The text between `<tag>` and `</tag>`, once.
  static func element(_ tag: String, in html: String) -> String? {
    guard let open = html.range(of: "<\(tag)>"),
      let close = html.range(of: "</\(tag)>", range: open.upperBound..<html.endIndex)
    else { return nil }
    return String(html[open.upperBound..<close.lowerBound])
  }

  /// The source list of one CSP directive.
  static func directive(_ name: String, in policy: String) -> String? {
    policy.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      .first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
  }

  @Test(arguments: ["/", "/q/3", "/q/today"])
  func pageInlinesTheFilesItsPolicyAllows(path: String) async throws {
    let style = try Self.file("page.css")
    let script = try Self.file("page.js")
    try await withRouter { client, _ in
      let reply = try await client.get(path)
      #expect(reply.status == 200)
      let html = reply.text
      #expect(Self.element("style", in: html).map { Data($0.utf8) } == style, "the inline style is page.css")
      #expect(Self.element("script", in: html).map { Data($0.utf8) } == script, "the inline script is page.js")
      let policy = try #require(reply.header("Content-Security-Policy"))
      #expect(Self.directive("style-src", in: policy) == "'\(Self.hashSource(style))'", "\(policy)")
      #expect(Self.directive("script-src", in: policy) == "'\(Self.hashSource(script))'", "\(policy)")
      #expect(Self.directive("default-src", in: policy) == "'none'")
      #expect(!html.contains("{{"), "a slot left unfilled")
    }
  }

  @Test(arguments: [("/favicon.svg", "favicon.svg", "image/svg+xml"), ("/favicon.ico", "favicon.ico", "image/x-icon")])
  func iconsAreTheFiles(path: String, name: String, type: String) async throws {
    let bytes = try Self.file(name)
    try await withRouter { client, _ in
      let reply = try await client.get(path)
      #expect(reply.status == 200)
      #expect(Data(reply.body) == bytes)
      #expect(reply.header("Content-Type") == type)
      #expect(reply.header("Cache-Control") == "public, max-age=86400")
    }
  }

  /// A page folder of the test's own: its files are what the page is made of, and every value
  /// is escaped in every slot.
  @Test func anotherFolderMakesAnotherPage() throws {
    try withPageFolder(
      [
        "index.html": "<title>{{title}}</title><p>{{description}}|{{url}}|{{image}}|{{imageAlt}}</p>"
          + "<b data-a=\"{{firstCard}}\" data-b=\"{{firstPage}}\">{{cardImage}}</b>"
          + "<style>{{style}}</style><script>{{script}}</script>{{title}}"
      ]
    ) { folder in
      let assets = try PageAssets(folder: folder)
      let content = WebPage.Content(
        title: "<T&>", description: "\"d\"", url: "u'", image: "i<", imageAlt: "a>", firstCard: "/c?x=1&y=2",
        firstPage: "/q/1")
      let html = WebPage.html(content, assets: assets)
      #expect(html.hasPrefix("<title>&lt;T&amp;&gt;</title><p>&quot;d&quot;|u&#39;|i&lt;|a&gt;</p>"), "\(html)")
      #expect(html.contains(#"data-a="/c?x=1&amp;y=2" data-b="/q/1"><img id="quote" alt="a&gt;">"#), "\(html)")
      #expect(html.contains("<style>p { color: red; }\n</style><script>var x = 1;\n</script>&lt;T&amp;&gt;"))
      #expect(assets.styleHash == Self.hashSource(Data("p { color: red; }\n".utf8)))
      #expect(assets.scriptHash == Self.hashSource(Data("var x = 1;\n".utf8)))
      #expect(assets.faviconICO == Data([0, 0, 1, 0]))
    }
  }

  @Test(
    arguments: [
      ("index.html", "<p>{{title}</p>", "never closed"),
      ("index.html", "{{title}} {{subtitle}}", "{{subtitle}}"),
      ("index.html", "<p>{{title}}</p>", "{{description}} is missing"),
      ("page.js", "var a = '</script>';", "</script"),
      ("page.css", "p { content: '</STYLE>' }", "</style"),
      ("page.css", nil, "unreadable"),
      ("favicon.ico", nil, "unreadable"),
    ] as [(String, String?, String)])
  func brokenFilesAreRefusedByName(name: String, contents: String?, reason: String) throws {
    try withPageFolder([name: contents]) { folder in
      #expect {
        try PageAssets(folder: folder)
      } throws: { error in
        guard let error = error as? PageAssets.LoadError else { return false }
        return error.file == name && error.description.contains(reason)
      }
    }
  }

  /// A complete page folder of small files, `changes` applied (nil: the file is left out).
  func withPageFolder(_ changes: [String: String?], _ body: (URL) throws -> Void) throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("page-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let slots = WebPage.Slot.allCases.map { "{{\($0.rawValue)}}" }.joined(separator: " ")
    var files: [String: Data] = [
      "index.html": Data(slots.utf8), "page.css": Data("p { color: red; }\n".utf8),
      "page.js": Data("var x = 1;\n".utf8), "favicon.svg": Data("<svg/>".utf8), "favicon.ico": Data([0, 0, 1, 0]),
    ]
    for (name, contents) in changes { files[name] = contents.map { Data($0.utf8) } }
    for (name, data) in files { try data.write(to: folder.appendingPathComponent(name)) }
    try body(folder)
  }
}
