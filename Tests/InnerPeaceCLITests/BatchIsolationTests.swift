import Foundation
import InnerPeace
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `batch` renders in worker processes, as `serve` does: a card that crashes its renderer is one
/// failed card, reported in the manifest, and the rest go on. The crash is the debug build's fault
/// trigger (`INNERPEACE_FAULT_TRAP_TEXT`, compiled out of release builds), a catalog quote with
/// that text.
@Suite(.tags(.process, .binary)) struct BatchIsolationTests {
  typealias Reader = BatchFolderReader

  static let trapText = "batch-isolation-test-trap"
  static let abortText = "batch-isolation-test-abort"

  /// Whether the binary under test is a debug build (the fault triggers exist only there).
  static var faultsCompiledIn: Bool {
    guard let binary = innerpeaceBinary, let bytes = try? Data(contentsOf: binary) else { return false }
    return bytes.range(of: Data("INNERPEACE_FAULT_TRAP_TEXT".utf8)) != nil
  }

  /// A catalog of six quotes, two of which crash their renders, and the bundled aqua photo.
  static func makeCatalog(in root: URL) throws -> URL {
    let folder = root.appendingPathComponent("catalog")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    try Data(contentsOf: packageRoot.appendingPathComponent("Resources/aqua.jpg"))
      .write(to: folder.appendingPathComponent("aqua.jpg"))
    try Data(#"["aqua.jpg"]"#.utf8).write(to: folder.appendingPathComponent("pictures.json"))
    let texts = ["Calm one.", trapText, "Calm three.", "Calm four.", abortText, "Calm six."]
    let quotes = texts.map { #"{"text": "\#($0)", "author": "Someone"}"# }
    try Data(("[" + quotes.joined(separator: ",") + "]").utf8).write(to: folder.appendingPathComponent("quotes.json"))
    return folder
  }

  @Test(.enabled(if: faultsCompiledIn, "needs the debug build's fault triggers"))
  func aCardThatCrashesItsRendererIsOneFailure() throws {
    try withTemporaryFolder("innerpeace-batch-crash") { root in
      let catalogFolder = try Self.makeCatalog(in: root)
      let folder = root.appendingPathComponent("cards")
      let result = try CLI.run(
        [
          "batch", "--out-dir", folder.path, "--catalog", catalogFolder.path, "--preset", "320x200", "--jobs", "2",
          "--quiet",
        ],
        environment: ["INNERPEACE_FAULT_TRAP_TEXT": Self.trapText, "INNERPEACE_FAULT_ABORT_TEXT": Self.abortText])
      #expect(result.status == 1, "exit status \(result.status) (1: some cards failed): \(result.stderr)")
      #expect(Reader.summaries(result.stderr) == [.init(rendered: 4, skipped: 0, failed: 2)], "\(result.stderr)")
      #expect(
        Reader.images(folder) == ["0000-320x200.png", "0002-320x200.png", "0003-320x200.png", "0005-320x200.png"])
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      let failures = try #require(manifest["failures"] as? [[String: Any]], "\(manifest)")
      #expect(failures.compactMap { $0["file"] as? String }.sorted() == ["0001-320x200.png", "0004-320x200.png"])
      for failure in failures {
        let error = failure["error"] as? String ?? ""
        #expect(error.contains("signal"), "the failure does not say how the render ended: \(error)")
      }
      #expect((manifest["images"] as? [Any])?.count == 4)
      #expect(!listing(folder).contains { $0.contains(".tmp-") }, "temporary files left: \(listing(folder))")
    }
  }

  /// `--jobs` has a documented maximum (64), and `--render-megapixels` the service's range.
  @Test(arguments: [
    ["--jobs", "65"], ["--jobs", "256"], ["--render-megapixels", "0"], ["--render-megapixels", "1001"],
    ["--render-timeout", "0"],
  ])
  func limitsAreUsageErrors(options: [String]) throws {
    try withTemporaryFolder("innerpeace-batch-limits") { root in
      let folder = root.appendingPathComponent("cards")
      let result = try CLI.run(["batch", "--out-dir", folder.path, "--count", "1", "--preset", "200x200"] + options)
      #expect(result.status == 64, "\(options): status \(result.status), stderr: \(result.stderr)")
      #expect(result.stderrLines.count == 1, "\(options): \(result.stderr)")
      #expect(result.stderr.hasPrefix("innerpeace: error: \(options[0]) \(options[1]) must be"), "\(result.stderr)")
      #expect(!FileManager.default.fileExists(atPath: folder.path))
    }
  }

  /// The help names the maximum of --jobs and the pixel budget.
  @Test func helpDocumentsTheLimits() throws {
    let result = try CLI.run(["batch", "--help"])
    #expect(result.status == 0)
    let help = String(decoding: result.stdout, as: UTF8.self)
    #expect(help.contains("1 to 64"), "\(help)")
    #expect(help.contains("--render-megapixels"), "\(help)")
  }

  /// A card larger than the pixel budget still renders (alone), and a small budget changes no
  /// byte: the cards are the ones `render` makes.
  @Test func aSmallPixelBudgetStillRendersEveryCard() throws {
    try withTemporaryFolder("innerpeace-batch-budget") { root in
      let folder = root.appendingPathComponent("cards")
      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "3", "--preset", "1200x1200", "--jobs", "3",
        "--render-megapixels", "1", "--format", "jpeg", "--quiet",
      ])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(Reader.images(folder).count == 3)
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      let images = try #require(manifest["images"] as? [[String: Any]])
      let first = try #require(images.first)
      let render = try CLI.run([
        "render", "--out", "-", "--quote", "\(first["quoteIndex"] as? Int ?? -1)", "--picture",
        first["picture"] as? String ?? "", "--size", "1200x1200", "--seed", "0", "--format", "jpeg",
      ])
      #expect(render.status == 0, "\(render.stderr)")
      #expect(
        try Reader.bytes(folder.appendingPathComponent(first["file"] as? String ?? "")) == render.stdout,
        "a batch card differs from render's")
    }
  }
}
