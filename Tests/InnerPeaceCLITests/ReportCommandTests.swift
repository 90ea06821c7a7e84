import Foundation
import InnerPeace
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `render --report` and `batch --report`: what was set, as JSON (issue 18, item 2).
@Suite("innerpeace --report", .tags(.process, .binary))
struct ReportCommandTests {
  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  static let mixed = ["--text", "Peace is here. שלום עולם 静かな心で生きる。", "--author", "Anon", "--size", "480x320"]

  static func report(_ bytes: [UInt8]) throws -> TypesetReport {
    try JSONDecoder().decode(TypesetReport.self, from: Data(bytes))
  }

  /// A mixed-script card's report: pretty JSON with sorted keys, every script in its face and
  /// language, the image written as without the option.
  @Test func writesTheReportOfAMixedScriptCard() throws {
    try withTemporaryFolder { folder in
      let card = folder.appendingPathComponent("card.png")
      let json = folder.appendingPathComponent("card.json")
      let result = try CLI.run(["render", "--out", card.path, "--report", json.path, "--seed", "2"] + Self.mixed)
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.stderr.isEmpty, "\(result.stderr)")
      let bytes = [UInt8](try Data(contentsOf: json))
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("{\n  \"authorLines\" : ["), "pretty, sorted keys: \(text.prefix(80))")
      let report = try Self.report(bytes)
      #expect(report.width == 480 && report.height == 320)
      #expect(!report.lines.isEmpty && report.authorLines == ["\u{2014} Anon"])
      let scripts = Set(report.runs.map(\.script))
      #expect(scripts.isSuperset(of: ["Latn", "Hebr"]), "\(scripts)")
      #expect(!scripts.isDisjoint(with: ["Hira", "Hani", "Jpan"]), "\(scripts)")
      let families = Dictionary(
        report.runs.filter { !$0.text.allSatisfy(\.isWhitespace) }.map { ($0.script, $0.family) },
        uniquingKeysWith: { first, _ in first })
      #expect(families["Hebr"] == "Noto Serif Hebrew", "\(families)")
      #expect(families["Hira"] == "Noto Serif CJK JP", "\(families)")
      #expect(families["Latn"] == "EB Garamond", "\(families)")
      // Runs holding letters (a space between two scripts takes one of theirs, in the quote's face).
      func holding(_ letters: ClosedRange<UInt32>) -> [TypesetReport.Run] {
        report.runs.filter { $0.text.unicodeScalars.contains { letters.contains($0.value) } }
      }
      let hebrew = holding(0x05D0...0x05EA)
      #expect(!hebrew.isEmpty && hebrew.allSatisfy { $0.language == "he" && $0.style == .upright }, "\(hebrew)")
      let japanese = holding(0x3040...0x9FFF)
      #expect(!japanese.isEmpty && japanese.allSatisfy { $0.language == "ja" && $0.style == .upright }, "\(japanese)")
      #expect(report.missingGlyphs == 0 && report.dottedCircles == 0)

      let plain = try CLI.run(["render", "--out", "-", "--seed", "2"] + Self.mixed)
      #expect(plain.stdout == [UInt8](try Data(contentsOf: card)), "the report changed the image")
      #expect(listing(folder) == ["card.json", "card.png"])
    }
  }

  /// `--report -` writes the JSON to stderr, last, and stdout may carry the image.
  @Test func dashWritesToStderr() throws {
    let result = try CLI.run(["render", "--out", "-", "--report", "-", "--seed", "2"] + Self.mixed)
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(pngHeader(result.stdout)?.width == 480, "stdout is the image")
    let report = try Self.report(Array(result.stderr.utf8))
    #expect(report.runs.contains { $0.script == "Hebr" })

    // After the warnings: tofu is warned about, then the report follows.
    let tofu = try CLI.run([
      "render", "--out", "/dev/null", "--report", "-", "--text", "Calm \u{0380}", "--size", "300x200",
    ])
    #expect(tofu.status == 0, "stderr: \(tofu.stderr)")
    let start = try #require(tofu.stderr.firstIndex(of: "{"))
    #expect(tofu.stderr[..<start].hasPrefix("warning: 1 glyph(s)"), "\(tofu.stderr)")
    let tail = try Self.report(Array(tofu.stderr[start...].utf8))
    #expect(tail.missingGlyphs == 1)
  }

  /// `--lang` gives the text's language: the bundled face's runs carry it; a tag of the wrong
  /// form is a one-line error and no image.
  @Test func languageOptionReachesTheRuns() throws {
    let result = try CLI.run([
      "render", "--out", "/dev/null", "--report", "-", "--text", "Ruhe ist die erste Bürgerpflicht.", "--lang",
      "de-CH", "--size", "480x320",
    ])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let report = try Self.report(Array(result.stderr.utf8))
    let latin = report.runs.filter { $0.script == "Latn" }
    #expect(!latin.isEmpty && latin.allSatisfy { $0.language == "de-ch" || $0.language == "de-CH" }, "\(latin)")

    try withTemporaryFolder { folder in
      let out = folder.appendingPathComponent("card.png").path
      let bad = try CLI.run(["render", "--out", out, "--text", "Calm", "--lang", "de CH"])
      #expect(bad.status != 0)
      #expect(bad.stderr.contains("--lang"), "\(bad.stderr)")
      #expect(!FileManager.default.fileExists(atPath: out))
    }
  }

  /// A report path that cannot be written is a one-line error before anything is rendered: no
  /// image, no temporary file; and the same path for both outputs is refused.
  @Test func badReportPathIsOneLineAndWritesNothing() throws {
    try withTemporaryFolder { folder in
      let card = folder.appendingPathComponent("card.png")
      let cases: [(String, String)] = [
        (folder.appendingPathComponent("missing/report.json").path, "does not exist"),
        (folder.path, "is a directory"),
        ("", "--report is empty"),
        (card.path, "--report and --out name the same file"),
      ]
      for (path, message) in cases {
        let result = try CLI.run(["render", "--out", card.path, "--report", path, "--size", "300x200", "--seed", "1"])
        #expect(result.status != 0, "\(path)")
        #expect(result.stderrLines.count == 1, "\(path): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(path): \(result.stderr)")
        #expect(listing(folder) == [], "\(path): \(listing(folder))")
      }
      // A link to the image is the same file too.
      FileManager.default.createFile(atPath: card.path, contents: Data("old".utf8))
      let link = folder.appendingPathComponent("link.json")
      try FileManager.default.createSymbolicLink(at: link, withDestinationURL: card)
      let linked = try CLI.run(["render", "--out", card.path, "--report", link.path, "--size", "300x200"])
      #expect(linked.status != 0 && linked.stderrLines.count == 1, "\(linked.stderr)")
      #expect(try Data(contentsOf: card) == Data("old".utf8), "the image was written")
    }
  }

  /// `batch --report`: each manifest entry carries its card's report (kept cards too, on
  /// `--resume`); without it the manifest has no report key.
  @Test func batchManifestCarriesTheReport() throws {
    try withTemporaryFolder("innerpeace-batch-report") { root in
      let folder = root.appendingPathComponent("cards")
      let arguments = ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "320x200", "--jobs", "1"]
      let result = try CLI.run(arguments + ["--report"])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      let manifest = try BatchFolderReader.json(folder.appendingPathComponent("manifest.json"))
      let images = try #require(manifest["images"] as? [[String: Any]])
      #expect(images.count == 2)
      var reports: [TypesetReport] = []
      let renderer = try CardRenderer(catalog: BatchFolderReader.bundledCatalog, backgroundCacheBytes: 0)
      for (index, image) in images.enumerated() {
        let object = try #require(image["report"], "entry \(index) has no report")
        let report = try JSONDecoder().decode(
          TypesetReport.self, from: try JSONSerialization.data(withJSONObject: object))
        let quote = BatchFolderReader.bundledCatalog.quotes[index]
        let fitted = try renderer.fitText(
          quote.text, author: quote.author, preset: .custom(try CanvasSize(width: 320, height: 200)))
        #expect(report.width == 320 && report.height == 200)
        #expect(report.lines == fitted.lines && report.quoteSize == fitted.fontSize, "entry \(index)")
        #expect(!report.runs.isEmpty && report.runs.allSatisfy { $0.script.count == 4 })
        reports.append(report)
      }

      // Kept on --resume: the report from the fit alone is the one the render made.
      let resumed = try CLI.run(arguments + ["--report", "--resume"])
      #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
      #expect(BatchFolderReader.summaries(resumed.stderr) == [.init(rendered: 0, skipped: 2, failed: 0)])
      let again = try BatchFolderReader.json(folder.appendingPathComponent("manifest.json"))
      let kept = try #require(again["images"] as? [[String: Any]]).map { image in
        try JSONDecoder().decode(
          TypesetReport.self, from: try JSONSerialization.data(withJSONObject: try #require(image["report"])))
      }
      #expect(kept == reports)

      let plain = try CLI.run(arguments)
      #expect(plain.status == 0, "stderr: \(plain.stderr)")
      let without = try BatchFolderReader.json(folder.appendingPathComponent("manifest.json"))
      #expect((without["images"] as? [[String: Any]])?.allSatisfy { $0["report"] == nil } == true)
    }
  }
}
