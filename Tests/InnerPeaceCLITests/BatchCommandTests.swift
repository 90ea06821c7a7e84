import Crypto
import Foundation
import InnerPeace
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Processes other than a plain `innerpeace` run: in the background (to kill), under a shell (to
/// limit file sizes), or another tool (Python, `script`). Output goes to files, never pipes.
enum ExternalTool {
  /// A started process whose output is captured in a private folder.
  final class Running {
    let process = Process()
    let captureFolder: URL
    let outHandle: FileHandle
    let errHandle: FileHandle
    let description: String
    /// Signalled when the process ends (its termination handler): ``finish(timeout:)`` waits on
    /// it, not on a polling loop.
    private let exited = DispatchSemaphore(value: 0)

    init(executable: URL, arguments: [String], environment: [String: String] = [:]) throws {
      captureFolder = FileManager.default.temporaryDirectory
        .appendingPathComponent("innerpeace-tool-\(UUID().uuidString)", isDirectory: true)
      try FileManager.default.createDirectory(at: captureFolder, withIntermediateDirectories: true)
      _ = FileManager.default.createFile(atPath: captureFolder.appendingPathComponent("stdout").path, contents: nil)
      _ = FileManager.default.createFile(atPath: captureFolder.appendingPathComponent("stderr").path, contents: nil)
      outHandle = try FileHandle(forWritingTo: captureFolder.appendingPathComponent("stdout"))
      errHandle = try FileHandle(forWritingTo: captureFolder.appendingPathComponent("stderr"))
      description = ([executable.lastPathComponent] + arguments).joined(separator: " ")
      process.executableURL = executable
      process.arguments = arguments
      var env = ProcessInfo.processInfo.environment
      for (key, value) in environment { env[key] = value }
      process.environment = env
      process.standardOutput = outHandle
      process.standardError = errHandle
      process.standardInput = FileHandle.nullDevice
      process.terminationHandler = { [exited] _ in exited.signal() }
      try process.run()
    }

    deinit { try? FileManager.default.removeItem(at: captureFolder) }

    var pid: pid_t { process.processIdentifier }

    func kill(_ signal: Int32 = SIGKILL) {
      #if canImport(Glibc)
        _ = Glibc.kill(process.processIdentifier, signal)
      #else
        _ = Darwin.kill(process.processIdentifier, signal)
      #endif
    }

    /// Waits for the end (killing the process if it has not ended after `timeout` seconds, a
    /// bound for a hung process, never a measure) and collects its output.
    func finish(timeout: Double = 60) throws -> CommandResult {
      if exited.wait(timeout: .now() + timeout) == .timedOut {
        kill()
        Issue.record("\(description.prefix(200)) did not end within \(timeout) s")
      }
      process.waitUntilExit()
      try? outHandle.close()
      try? errHandle.close()
      return CommandResult(
        status: process.terminationStatus,
        stdout: [UInt8](try Data(contentsOf: captureFolder.appendingPathComponent("stdout"))),
        stderr: String(decoding: try Data(contentsOf: captureFolder.appendingPathComponent("stderr")), as: UTF8.self))
    }
  }

  static func run(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], timeout: Double = 60
  ) throws -> CommandResult {
    try Running(executable: URL(fileURLWithPath: executable), arguments: arguments, environment: environment)
      .finish(timeout: timeout)
  }

  static func binary() throws -> URL { try #require(innerpeaceBinary, "\(CLI.Missing().description)") }

  /// `innerpeace` started in the background.
  static func start(_ arguments: [String]) throws -> Running {
    try Running(executable: try binary(), arguments: arguments)
  }

  /// `innerpeace` under `/bin/sh` with SIGXFSZ ignored and `ulimit -f blocks`: every write past
  /// the limit fails (EFBIG), as on a full disk.
  static func runWithFileSizeLimit(blocks: Int, _ arguments: [String]) throws -> CommandResult {
    try run(
      "/bin/sh", ["-c", "trap '' XFSZ; ulimit -f \(blocks) && exec \"$0\" \"$@\"", try binary().path] + arguments)
  }

  static var scriptAvailable: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/script") }

  /// Runs `innerpeace` with a pseudo-terminal for stdout and stderr (util-linux `script`).
  static func runOnTerminal(_ arguments: [String], timeout: Double = 60) throws -> String {
    let (status, output) = try runOnTerminalWithStatus(arguments, timeout: timeout)
    #expect(status == 0, "script \(arguments): \(output)")
    return output
  }

  /// What `innerpeace` wrote to a pseudo-terminal (stdout and stderr together), and its status.
  static func runOnTerminalWithStatus(
    _ arguments: [String], environment: [String: String] = ["COLUMNS": "100", "TERM": "xterm"], timeout: Double = 60
  ) throws -> (Int32, String) {
    let command = ([try binary().path] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
      .joined(separator: " ")
    let result = try run(
      "/usr/bin/script", ["-qec", command, "/dev/null"], environment: environment, timeout: timeout)
    return (result.status, String(decoding: result.stdout, as: UTF8.self))
  }
}

/// Reading what a batch left in its folder.
enum BatchFolderReader {
  static let bundledCatalog: Catalog = {
    do { return try Catalog(directory: packageRoot.appendingPathComponent("Resources")) } catch {
      fatalError("the package's Resources/ catalog does not load: \(error)")
    }
  }()

  /// `batch: N rendered, M skipped, K failed in X s (Y cards/s)`.
  struct Summary: Equatable {
    let rendered: Int
    let skipped: Int
    let failed: Int
  }

  static func summaries(_ stderr: String) -> [Summary] {
    stderr.split(separator: "\n").compactMap { line in
      guard
        let match = line.wholeMatch(
          of: #/batch: (\d+) rendered, (\d+) skipped, (\d+) failed in (\d+\.\d) s \((\d+\.\d) cards/s\)/#)
      else { return nil }
      return Summary(rendered: Int(match.1)!, skipped: Int(match.2)!, failed: Int(match.3)!)
    }
  }

  static func isProgressLine(_ line: Substring) -> Bool {
    line.wholeMatch(
      of: #/batch: \d+/\d+ done \(\d+ rendered, \d+ skipped, \d+ failed\), \d+\.\d cards/s, ETA [0-9:-]+/#) != nil
  }

  /// The image files (final names only) in a folder.
  static func images(_ folder: URL) -> [String] {
    listing(folder).filter { $0.wholeMatch(of: #/\d{4,}-[0-9a-z]+\.(png|jpg|webp|avif)/#) != nil }
  }

  static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

  static func json(_ url: URL) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: try Data(contentsOf: url))
    return try #require(object as? [String: Any], "\(url.lastPathComponent) is not a JSON object")
  }

  /// Inode and modification time: a file rewritten through a temporary file and a rename gets a
  /// new inode, so equal identities mean the file was not touched.
  struct Identity: Equatable, CustomStringConvertible {
    let inode: UInt64
    let seconds: Int
    let nanoseconds: Int
    var description: String { "inode \(inode), mtime \(seconds).\(nanoseconds)" }
  }

  static func identity(_ url: URL) throws -> Identity {
    var info = stat()
    guard stat(url.path, &info) == 0 else { throw CocoaError(.fileNoSuchFile) }
    #if canImport(Darwin)
      return Identity(
        inode: UInt64(info.st_ino), seconds: Int(info.st_mtimespec.tv_sec), nanoseconds: Int(info.st_mtimespec.tv_nsec))
    #else
      return Identity(
        inode: UInt64(info.st_ino), seconds: Int(info.st_mtim.tv_sec), nanoseconds: Int(info.st_mtim.tv_nsec))
    #endif
  }

  /// A whole PNG, checked independently of `ImageFileCheck`: signature, IHDR first, IEND last.
  static func isWholePNG(_ bytes: [UInt8]) -> Bool {
    let iend: [UInt8] = [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82]
    return pngHeader(bytes) != nil && bytes.count > 57 && Array(bytes.suffix(12)) == iend
  }

  /// A whole JPEG: SOI at the start, EOI at the end.
  static func isWholeJPEG(_ bytes: [UInt8]) -> Bool {
    bytes.count > 4 && Array(bytes.prefix(3)) == [0xFF, 0xD8, 0xFF] && Array(bytes.suffix(2)) == [0xFF, 0xD9]
  }

  /// Checks every manifest entry against the plan, the catalog and the file on disk; returns the
  /// entries.
  @discardableResult
  static func checkManifest(
    _ manifest: [String: Any], folder: URL, items: [BatchItem], catalog: Catalog,
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws -> [[String: Any]] {
    let images = try #require(manifest["images"] as? [[String: Any]], "no images array", sourceLocation: sourceLocation)
    #expect(
      images.compactMap { $0["file"] as? String } == items.map(\.fileName), "the manifest's files",
      sourceLocation: sourceLocation)
    for (entry, item) in zip(images, items) {
      let quote = catalog.quotes[item.quoteIndex]
      let size = item.preset.size
      let file = item.fileName
      #expect(entry["quoteIndex"] as? Int == item.quoteIndex, "\(file) quoteIndex", sourceLocation: sourceLocation)
      #expect(entry["text"] as? String == quote.text, "\(file) text", sourceLocation: sourceLocation)
      #expect(entry["author"] as? String == quote.author, "\(file) author", sourceLocation: sourceLocation)
      #expect(
        entry["shareMessage"] as? String == quote.shareMessage, "\(file) shareMessage", sourceLocation: sourceLocation)
      #expect(entry["picture"] as? String == item.picture, "\(file) picture", sourceLocation: sourceLocation)
      #expect(entry["preset"] as? String == item.preset.description, "\(file) preset", sourceLocation: sourceLocation)
      #expect(
        entry["size"] as? String == "\(size.width)x\(size.height)", "\(file) size", sourceLocation: sourceLocation)
      #expect(entry["width"] as? Int == size.width, "\(file) width", sourceLocation: sourceLocation)
      #expect(entry["height"] as? Int == size.height, "\(file) height", sourceLocation: sourceLocation)
      #expect(entry["format"] as? String == item.format.rawValue, "\(file) format", sourceLocation: sourceLocation)
      // The bundled catalog's quotes all have faces: no tofu.
      #expect(entry["missingGlyphs"] as? Int == 0, "\(file) missingGlyphs", sourceLocation: sourceLocation)
      let bytes = try Self.bytes(folder.appendingPathComponent(file))
      #expect(
        entry["sha256"] as? String == SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined(),
        "\(file): the sha256 is not the file's",
        sourceLocation: sourceLocation)
      #expect(
        ImageFileCheck.isComplete(bytes, format: item.format), "\(file) is not whole", sourceLocation: sourceLocation)
      if item.format == .png {
        let header = pngHeader(bytes)
        #expect(
          header?.width == size.width && header?.height == size.height, "\(file) has the wrong size",
          sourceLocation: sourceLocation)
      }
    }
    return images
  }

  /// A copy of a JPEG whose header is valid (so the catalog accepts it) but whose scan uses
  /// Huffman tables that were never defined, so decoding it fails.
  static func undecodableJPEG(from photo: [UInt8]) throws -> [UInt8] {
    var bytes = photo
    var index = 2
    while index + 4 < bytes.count {
      try #require(bytes[index] == 0xFF, "not a JPEG marker at \(index)")
      let marker = bytes[index + 1]
      let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
      if marker == 0xDA {
        let components = Int(bytes[index + 4])
        for component in 0..<components { bytes[index + 6 + 2 * component] = 0x33 }
        return bytes
      }
      index += 2 + length
    }
    throw CocoaError(.fileReadCorruptFile)
  }
}

/// `innerpeace batch`, end to end through the built binary (stderr is a file, not a terminal).
@Suite("innerpeace batch", .tags(.process, .binary))
struct BatchCommandTests {
  typealias Reader = BatchFolderReader

  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  static func plan(
    presets: [String], count: Int, format: ImageFormat = .png, seed: UInt64 = 0, shard: String? = nil,
    catalog: Catalog = BatchFolderReader.bundledCatalog
  ) throws -> BatchPlan {
    try BatchPlan(
      catalog: catalog, presets: try presets.map { try Preset(parsing: $0) }, quoteCount: count, format: format,
      seed: seed, shard: try shard.map { try Shard(parsing: $0) } ?? .all)
  }

  // MARK: A whole run

  @Test func writesFilesManifestAndGallery() throws {
    try withTemporaryFolder("innerpeace-batch") { root in
      let folder = root.appendingPathComponent("cards")
      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "3", "--preset", "320x200", "--preset", "200x320, 320x200",
        "--seed", "4", "--jobs", "2",
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.stdout.isEmpty)
      let plan = try Self.plan(presets: ["320x200", "200x320"], count: 3, seed: 4)
      #expect(plan.items.count == 6)

      // Progress lines (if the run took long enough for one) and the summary, nothing else.
      let lines = result.stderrLines
      #expect(Reader.summaries(result.stderr) == [.init(rendered: 6, skipped: 0, failed: 0)], "\(result.stderr)")
      #expect(lines.last.map { Reader.summaries(String($0)).count == 1 } == true, "the summary is not last")
      for line in lines.dropLast() {
        #expect(Reader.isProgressLine(line), "unexpected stderr line: \(line)")
      }

      let expected = plan.items.map(\.fileName)
      #expect(
        listing(folder) == (expected + [".innerpeace-batch", "index.html", "manifest.json"]).sorted(),
        "the folder holds \(listing(folder))")

      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      try Reader.checkManifest(manifest, folder: folder, items: plan.items, catalog: Reader.bundledCatalog)
      #expect(manifest["seed"] as? String == "4")
      #expect(manifest["shard"] as? String == "1/1")
      #expect(manifest["totalInRun"] as? Int == 6)
      #expect(manifest["plannedInShard"] as? Int == 6)
      #expect(
        (manifest["failures"] as? [Any])?.isEmpty == true, "failures: \(String(describing: manifest["failures"]))")

      let html = String(decoding: try Reader.bytes(folder.appendingPathComponent("index.html")), as: UTF8.self)
      #expect(html.hasPrefix("<!doctype html>"))
      for file in expected {
        #expect(html.contains("src=\"\(file)\""), "index.html does not show \(file)")
        #expect(html.contains("href=\"\(file)\""), "index.html does not link \(file)")
      }
      #expect(html.components(separatedBy: "<img ").count - 1 == expected.count)
    }
  }

  @Test func quietPrintsOnlyTheSummary() throws {
    try withTemporaryFolder("innerpeace-batch-quiet") { folder in
      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "2", "--preset", "200x200", "--format", "jpeg", "--quiet",
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(result.stderrLines.count == 1, "\(result.stderr)")
      #expect(Reader.summaries(result.stderr) == [.init(rendered: 2, skipped: 0, failed: 0)])
      #expect(Reader.images(folder) == ["0000-200x200.jpg", "0001-200x200.jpg"])
    }
  }

  /// `--format avif` writes whole AVIF files, named `.avif`, that libavif reads at the planned size.
  @Test func avifCards() throws {
    try withTemporaryFolder("innerpeace-batch-avif") { folder in
      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "2", "--preset", "240x200", "--format", "avif", "--quiet",
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(Reader.images(folder) == ["0000-240x200.avif", "0001-240x200.avif"])
      let plan = try Self.plan(presets: ["240x200"], count: 2, format: .avif)
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      try Reader.checkManifest(manifest, folder: folder, items: plan.items, catalog: Reader.bundledCatalog)
      for file in Reader.images(folder) {
        let image = DecodedAVIF(try Reader.bytes(folder.appendingPathComponent(file)))
        #expect(image?.width == 240 && image?.height == 200, "\(file)")
      }
    }
  }

  @Test(.enabled(if: ExternalTool.scriptAvailable, "needs util-linux script for a terminal"))
  func aProgressBarOnATerminal() throws {
    try withTemporaryFolder("innerpeace-batch-tty") { folder in
      let output = try ExternalTool.runOnTerminal([
        "batch", "--out-dir", folder.path, "--count", "4", "--preset", "640x360", "--jobs", "1",
      ])
      #expect(output.contains("cards/s  ETA"), "no progress bar: \(output.debugDescription)")
      #expect(output.contains("\r  "), "the bar does not redraw in place")
      #expect(output.contains("░") || output.contains("█"))
      #expect(output.contains("\u{1B}[K"), "the bar is not cleared before the summary")
      let lines = output.replacingOccurrences(of: "\u{1B}[K", with: "").replacingOccurrences(of: "\r", with: "\n")
      #expect(Reader.summaries(lines) == [.init(rendered: 4, skipped: 0, failed: 0)], "\(output.debugDescription)")
      #expect(!output.contains("done ("), "plain progress lines on a terminal")
    }
  }

  /// The card options `render` has, batch has too: a batch card with `--no-author --align center`
  /// is the very card `render` makes of the same quote, picture and size with those options, and
  /// `--resume` with other card options is refused.
  @Test func cardOptionsMatchRender() throws {
    try withTemporaryFolder("innerpeace-batch-card-options") { root in
      let folder = root.appendingPathComponent("cards")
      let options = ["--no-author", "--align", "center", "--format", "webp"]
      let result = try CLI.run(
        ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "400x300", "--quiet"] + options)
      #expect(result.status == 0, "stderr: \(result.stderr)")
      let plan = try Self.plan(presets: ["400x300"], count: 2, format: .webp)
      for item in plan.items {
        let card = root.appendingPathComponent("render-\(item.quoteIndex).webp")
        let render = try CLI.run(
          [
            "render", "--out", card.path, "--quote", "\(item.quoteIndex)", "--picture", item.picture, "--size",
            "400x300", "--seed", "0",
          ] + options)
        #expect(render.status == 0, "stderr: \(render.stderr)")
        #expect(
          try Reader.bytes(folder.appendingPathComponent(item.fileName)) == Reader.bytes(card),
          "\(item.fileName) differs from render's card")
      }
      let plain = try CLI.run([
        "render", "--out", "-", "--quote", "\(plan.items[0].quoteIndex)", "--picture", plan.items[0].picture, "--size",
        "400x300", "--seed", "0", "--format", "webp",
      ])
      #expect(try plain.stdout != Reader.bytes(folder.appendingPathComponent(plan.items[0].fileName)))
      let other = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "2", "--preset", "400x300", "--format", "webp", "--resume",
      ])
      #expect(other.status == 64, "resumed with the author line back: \(other.stderr)")
    }
  }

  // MARK: Shards

  @Test func twoShardsMakeExactlyTheUnshardedRun() throws {
    try withTemporaryFolder("innerpeace-batch-shards") { root in
      let whole = root.appendingPathComponent("whole")
      let one = root.appendingPathComponent("one")
      let two = root.appendingPathComponent("two")
      let common = ["--count", "3", "--preset", "320x200,200x320", "--format", "jpeg", "--seed", "8", "--jobs", "2"]
      for (folder, shard) in [(whole, nil), (one, "1/2"), (two, "2/2")] as [(URL, String?)] {
        let result = try CLI.run(["batch", "--out-dir", folder.path] + common + (shard.map { ["--shard", $0] } ?? []))
        #expect(result.status == 0, "shard \(shard ?? "-"): \(result.stderr)")
      }
      let all = Reader.images(whole)
      let first = Reader.images(one)
      let second = Reader.images(two)
      #expect(all.count == 6)
      #expect(Set(first).isDisjoint(with: second), "both shards made \(Set(first).intersection(second))")
      #expect(Set(first).union(second) == Set(all), "shards \(first) + \(second) != \(all)")
      #expect(first.count == 3 && second.count == 3)
      for name in first {
        #expect(
          try Reader.bytes(one.appendingPathComponent(name)) == Reader.bytes(whole.appendingPathComponent(name)),
          "\(name)")
      }
      for name in second {
        #expect(
          try Reader.bytes(two.appendingPathComponent(name)) == Reader.bytes(whole.appendingPathComponent(name)),
          "\(name)")
      }

      // Each shard has its own manifest and gallery, so shards can share a folder.
      #expect(
        listing(one) == (first + [".innerpeace-batch-1-of-2", "index-1-of-2.html", "manifest-1-of-2.json"]).sorted())
      #expect(
        listing(two) == (second + [".innerpeace-batch-2-of-2", "index-2-of-2.html", "manifest-2-of-2.json"]).sorted())
      let wholeManifest = try Reader.json(whole.appendingPathComponent("manifest.json"))
      var merged: [[String: Any]] = []
      for (folder, shard) in [(one, 1), (two, 2)] {
        let manifest = try Reader.json(folder.appendingPathComponent("manifest-\(shard)-of-2.json"))
        #expect(manifest["shard"] as? String == "\(shard)/2")
        #expect(manifest["totalInRun"] as? Int == 6)
        #expect(manifest["plannedInShard"] as? Int == 3)
        let plan = try Self.plan(
          presets: ["320x200", "200x320"], count: 3, format: .jpeg, seed: 8, shard: "\(shard)/2")
        merged += try Reader.checkManifest(manifest, folder: folder, items: plan.items, catalog: Reader.bundledCatalog)
        let html = String(
          decoding: try Reader.bytes(folder.appendingPathComponent("index-\(shard)-of-2.html")), as: UTF8.self)
        for item in plan.items { #expect(html.contains("src=\"\(item.fileName)\"")) }
      }
      let wholeImages = try #require(wholeManifest["images"] as? [[String: Any]])
      merged.sort { ($0["file"] as? String ?? "") < ($1["file"] as? String ?? "") }
      let sortedWhole = wholeImages.sorted { ($0["file"] as? String ?? "") < ($1["file"] as? String ?? "") }
      #expect(
        merged.map { NSDictionary(dictionary: $0) } == sortedWhole.map { NSDictionary(dictionary: $0) },
        "the shards' manifests together differ from the whole run's")
    }
  }

  /// Shards share a folder and run at the same time. A shard that starts must not delete the
  /// temporary file another shard is writing (its rename would fail and the card with it); it
  /// cleans only its own leftovers.
  @Test func aStartingShardLeavesOtherShardsTemporaryFilesAlone() throws {
    try withTemporaryFolder("innerpeace-batch-shared") { folder in
      // With 2 quotes and one preset, 0000 is shard 1's and 0001 shard 2's.
      let others = ".0001-240x200.jpg.tmp-Ab12Cd"
      let mine = ".0000-240x200.jpg.tmp-Ef34Gh"
      for name in [others, mine] { try Data([0xFF, 0xD8, 0xFF]).write(to: folder.appendingPathComponent(name)) }
      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "2", "--preset", "240x200", "--format", "jpeg", "--shard", "1/2",
      ])
      #expect(result.status == 0, "stderr: \(result.stderr)")
      #expect(!listing(folder).contains(mine), "shard 1's own leftover was not cleaned")
      #expect(
        listing(folder).contains(others),
        "shard 1/2 deleted \(others), a file shard 2/2 may be writing right now")
    }
  }

  // MARK: Resume

  @Test func resumeAfterACompleteRunRendersNothing() throws {
    try withTemporaryFolder("innerpeace-batch-resume") { folder in
      let arguments = ["batch", "--out-dir", folder.path, "--count", "3", "--preset", "240x200", "--format", "jpeg"]
      let first = try CLI.run(arguments)
      #expect(first.status == 0, "stderr: \(first.stderr)")
      let files = Reader.images(folder)
      #expect(files.count == 3)
      let before = try files.map { try Reader.identity(folder.appendingPathComponent($0)) }
      let manifestBefore = try Reader.json(folder.appendingPathComponent("manifest.json"))

      let again = try CLI.run(arguments + ["--resume", "--quiet"])
      #expect(again.status == 0, "stderr: \(again.stderr)")
      #expect(again.stderrLines.count == 1, "\(again.stderr)")
      #expect(Reader.summaries(again.stderr) == [.init(rendered: 0, skipped: 3, failed: 0)], "\(again.stderr)")
      let after = try files.map { try Reader.identity(folder.appendingPathComponent($0)) }
      #expect(before == after, "resume rewrote finished files")
      let manifestAfter = try Reader.json(folder.appendingPathComponent("manifest.json"))
      #expect(
        NSArray(array: manifestAfter["images"] as? [Any] ?? [])
          == NSArray(array: manifestBefore["images"] as? [Any] ?? []),
        "the manifest changed")

      // A missing file and a truncated one are made again; the others are kept.
      let truncated = folder.appendingPathComponent(files[1])
      let whole = try Reader.bytes(truncated)
      try Data(whole.dropLast(1)).write(to: truncated)
      try FileManager.default.removeItem(at: folder.appendingPathComponent(files[2]))
      let repair = try CLI.run(arguments + ["--resume"])
      #expect(repair.status == 0, "stderr: \(repair.stderr)")
      #expect(Reader.summaries(repair.stderr) == [.init(rendered: 2, skipped: 1, failed: 0)], "\(repair.stderr)")
      #expect(try Reader.identity(folder.appendingPathComponent(files[0])) == before[0])
      #expect(try Reader.bytes(truncated) == whole, "the truncated file was not rendered again")
      #expect(Reader.images(folder) == files)
      let plan = try Self.plan(presets: ["240x200"], count: 3, format: .jpeg)
      try Reader.checkManifest(
        Reader.json(folder.appendingPathComponent("manifest.json")), folder: folder, items: plan.items,
        catalog: Reader.bundledCatalog)
    }
  }

  /// A file whose signature and end marker are intact but whose middle was damaged (a flipped
  /// byte, a disk error) is not the card the manifest describes: `--resume` makes it again.
  @Test func resumeRemakesAFileDamagedInTheMiddle() throws {
    try withTemporaryFolder("innerpeace-batch-resume-damaged") { folder in
      let arguments = ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "240x200"]
      #expect(try CLI.run(arguments).status == 0)
      let files = Reader.images(folder)
      let damaged = folder.appendingPathComponent(files[0])
      let whole = try Reader.bytes(damaged)
      var bytes = whole
      bytes[bytes.count / 2] ^= 0xFF
      try Data(bytes).write(to: damaged)
      #expect(ImageFileCheck.isComplete(bytes, format: .png), "the damage should pass the cheap check")
      let kept = try Reader.identity(folder.appendingPathComponent(files[1]))

      let repair = try CLI.run(arguments + ["--resume"])
      #expect(repair.status == 0, "stderr: \(repair.stderr)")
      #expect(Reader.summaries(repair.stderr) == [.init(rendered: 1, skipped: 1, failed: 0)], "\(repair.stderr)")
      #expect(try Reader.bytes(damaged) == whole, "the damaged file was kept")
      #expect(try Reader.identity(folder.appendingPathComponent(files[1])) == kept)
      #expect(!listing(folder).contains(".innerpeace-journal"), "the journal outlived the manifest")
    }
  }

  @Test func resumeRefusesAFolderMadeWithOtherOptions() throws {
    try withTemporaryFolder("innerpeace-batch-resume-other") { folder in
      let arguments = ["batch", "--out-dir", folder.path, "--count", "1", "--preset", "200x200", "--format", "jpeg"]
      #expect(try CLI.run(arguments).status == 0)
      let file = folder.appendingPathComponent("0000-200x200.jpg")
      let before = try Reader.identity(file)
      let other = try CLI.run(arguments + ["--resume", "--seed", "5"])
      #expect(other.status == 64, "stderr: \(other.stderr)")
      #expect(other.stderrLines.count == 1 && other.stderr.hasPrefix("innerpeace: error: --resume"), "\(other.stderr)")
      #expect(other.stderr.contains("seed: 0 there, 5 now"), "the refusal does not name what differs: \(other.stderr)")
      #expect(try Reader.identity(file) == before)
    }
  }

  /// The record of a run's options is JSON; one that does not decode (an older version's
  /// `seed=… format=…` line, say) cannot vouch for the folder's cards, so `--resume` refuses.
  @Test func resumeRefusesARecordItCannotRead() throws {
    try withTemporaryFolder("innerpeace-batch-resume-record") { folder in
      let arguments = ["batch", "--out-dir", folder.path, "--count", "1", "--preset", "200x200", "--format", "jpeg"]
      #expect(try CLI.run(arguments).status == 0)
      let record = folder.appendingPathComponent(".innerpeace-batch")
      let options = try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any]
      #expect(
        options?["seed"] as? Int == 0 && options?["format"] as? String == "jpeg", "\(String(describing: options))")
      #expect(options?["presets"] as? [String] == ["200x200"] && options?["shard"] as? String == "1/1")
      try Data("seed=0 format=jpeg presets=200x200\n".utf8).write(to: record)
      let resumed = try CLI.run(arguments + ["--resume"])
      #expect(resumed.status == 64, "stderr: \(resumed.stderr)")
      #expect(resumed.stderr.contains("cannot read"), "\(resumed.stderr)")
    }
  }

  /// SIGKILL in the middle of a run, then `--resume`: no invalid file under a final name, the
  /// final set exactly the plan's, the manifest complete, and the surviving files untouched.
  @Test func killedAndResumed() throws {
    try withTemporaryFolder("innerpeace-batch-kill") { folder in
      let arguments = ["batch", "--out-dir", folder.path, "--count", "8", "--preset", "640x360", "--seed", "3"]
      let plan = try Self.plan(presets: ["640x360"], count: 8, seed: 3)
      let events = try FolderEvents(folder)
      let running = try ExternalTool.start(arguments + ["--jobs", "1"])
      // The first card under its final name, seen when the kernel reports it.
      _ = events.wait(until: { !Reader.images(folder).isEmpty || !running.process.isRunning })
      running.kill()
      let killed = try running.finish()
      #expect(
        running.process.terminationReason == .uncaughtSignal && killed.status == SIGKILL,
        "the batch was not killed (status \(killed.status)): \(killed.stderr)")

      let survivors = Reader.images(folder)
      #expect(!survivors.isEmpty, "no file appeared before the kill")
      #expect(survivors.count < 8, "the batch finished before it could be interrupted")
      #expect(!listing(folder).contains("manifest.json"), "a manifest before the run ended")
      var identities: [String: BatchFolderReader.Identity] = [:]
      for name in survivors {
        let bytes = try Reader.bytes(folder.appendingPathComponent(name))
        #expect(Reader.isWholePNG(bytes), "\(name) is under its final name but not a whole PNG (\(bytes.count) bytes)")
        #expect(ImageFileCheck.isComplete(bytes, format: .png), "\(name) fails ImageFileCheck")
        identities[name] = try Reader.identity(folder.appendingPathComponent(name))
      }
      // Anything else is a temporary file or the run's options.
      for name in listing(folder) where !survivors.contains(name) {
        #expect(
          name == ".innerpeace-batch" || name == ".innerpeace-journal" || name.contains(".tmp-"),
          "unexpected \(name) after the kill")
      }

      let resumed = try CLI.run(arguments + ["--jobs", "2", "--resume"])
      #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
      #expect(
        Reader.summaries(resumed.stderr)
          == [.init(rendered: 8 - survivors.count, skipped: survivors.count, failed: 0)], "\(resumed.stderr)")
      #expect(
        listing(folder)
          == (plan.items.map(\.fileName) + [".innerpeace-batch", "index.html", "manifest.json"]).sorted(),
        "after resume the folder holds \(listing(folder))")
      for (name, identity) in identities {
        #expect(try Reader.identity(folder.appendingPathComponent(name)) == identity, "\(name) was rewritten")
      }
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      try Reader.checkManifest(manifest, folder: folder, items: plan.items, catalog: Reader.bundledCatalog)
      #expect((manifest["failures"] as? [Any])?.isEmpty == true)
      for item in plan.items {
        #expect(Reader.isWholePNG(try Reader.bytes(folder.appendingPathComponent(item.fileName))), "\(item.fileName)")
      }
    }
  }

  /// A new run (other seed, no --resume) over a finished batch, interrupted, then resumed: the
  /// old run's files must not be kept as if this run had made them.
  @Test func anInterruptedNewRunOverAnOldBatchDoesNotKeepTheOldCards() throws {
    try withTemporaryFolder("innerpeace-batch-stale") { root in
      let folder = root.appendingPathComponent("cards")
      let reference = root.appendingPathComponent("reference")
      let common = ["--count", "6", "--preset", "320x200", "--format", "jpeg"]
      let old = try CLI.run(["batch", "--out-dir", folder.path, "--seed", "1", "--jobs", "2"] + common)
      #expect(old.status == 0, "stderr: \(old.stderr)")

      // The new run records its options first; kill it right then.
      let events = try FolderEvents(folder)
      let running = try ExternalTool.start(["batch", "--out-dir", folder.path, "--seed", "2", "--jobs", "1"] + common)
      let options = folder.appendingPathComponent(".innerpeace-batch")
      func recordedSeed() -> Int? {
        guard let data = try? Data(contentsOf: options) else { return nil }
        return ((try? JSONSerialization.jsonObject(with: data)) as? [String: Any])?["seed"] as? Int
      }
      // The record of the new run's options, seen when the kernel reports it.
      _ = events.wait(until: { recordedSeed() == 2 || !running.process.isRunning })
      running.kill()
      _ = try running.finish()
      try #require(running.process.terminationReason == .uncaughtSignal, "the new run finished before the kill")

      let resumed = try CLI.run(["batch", "--out-dir", folder.path, "--seed", "2", "--jobs", "2", "--resume"] + common)
      #expect(resumed.status == 0, "stderr: \(resumed.stderr)")
      let fresh = try CLI.run(["batch", "--out-dir", reference.path, "--seed", "2", "--jobs", "2"] + common)
      #expect(fresh.status == 0, "stderr: \(fresh.stderr)")

      let plan = try Self.plan(presets: ["320x200"], count: 6, format: .jpeg, seed: 2)
      let oldPlan = try Self.plan(presets: ["320x200"], count: 6, format: .jpeg, seed: 1)
      var stale: [String] = []
      for (item, oldItem) in zip(plan.items, oldPlan.items) {
        let bytes = try Reader.bytes(folder.appendingPathComponent(item.fileName))
        if bytes != (try Reader.bytes(reference.appendingPathComponent(item.fileName))) {
          stale.append("\(item.fileName) (made on \(oldItem.picture), manifest says \(item.picture))")
        }
      }
      #expect(
        stale.isEmpty,
        "after --resume, seed 1's cards are kept as seed 2's and the manifest misdescribes them: \(stale.joined(separator: ", "))"
      )
    }
  }

  /// `--resume` after the catalog changed (a typo fixed in quotes.json): the kept cards would show
  /// the old text while the manifest describes the new one, so `--resume` refuses the folder,
  /// naming the content version, and leaves its cards as they are.
  @Test func resumeAfterTheCatalogChangedDoesNotKeepCardsOfTheOldText() throws {
    try withTemporaryFolder("innerpeace-batch-catalog-edit") { root in
      let catalogFolder = root.appendingPathComponent("catalog")
      let folder = root.appendingPathComponent("cards")
      try FileManager.default.createDirectory(at: catalogFolder, withIntermediateDirectories: true)
      try FileManager.default.copyItem(
        at: packageRoot.appendingPathComponent("Resources/aqua.jpg"),
        to: catalogFolder.appendingPathComponent("aqua.jpg"))
      try Data(#"["aqua.jpg"]"#.utf8).write(to: catalogFolder.appendingPathComponent("pictures.json"))
      func writeQuotes(_ first: String) throws {
        try Data(#"[{"text": "\#(first)", "author": "A"}, {"text": "Breathe out.", "author": "B"}]"#.utf8)
          .write(to: catalogFolder.appendingPathComponent("quotes.json"))
      }
      let common = ["--catalog", catalogFolder.path, "--preset", "240x200", "--format", "jpeg", "--jobs", "2"]
      try writeQuotes("Breathe in, calm.")
      let first = try CLI.run(["batch", "--out-dir", folder.path] + common)
      #expect(first.status == 0, "stderr: \(first.stderr)")
      let card = folder.appendingPathComponent("0000-240x200.jpg")
      let before = try Reader.identity(card)
      let manifest = try Reader.bytes(folder.appendingPathComponent("manifest.json"))

      try writeQuotes("Breathe in, smile.")
      let resumed = try CLI.run(["batch", "--out-dir", folder.path, "--resume"] + common)
      Self.expectContentRefusal(resumed)
      #expect(try Reader.identity(card) == before, "the refused resume touched a card")
      #expect(
        try Reader.bytes(folder.appendingPathComponent("manifest.json")) == manifest,
        "the refused resume rewrote the manifest")
    }
  }

  /// A photo whose bytes changed while its name, size and modification time stayed (a tool that
  /// restores times, say): the cards made from the old bytes are not this content's cards, so
  /// `--resume` refuses the folder, naming the content version, and leaves its cards as they are.
  @Test func resumeRefusesAFolderMadeFromOtherPhotoBytes() throws {
    try withTemporaryFolder("innerpeace-batch-photo-bytes") { root in
      let catalogFolder = root.appendingPathComponent("catalog")
      let folder = root.appendingPathComponent("cards")
      try FileManager.default.createDirectory(at: catalogFolder, withIntermediateDirectories: true)
      let photo = catalogFolder.appendingPathComponent("aqua.jpg")
      try FileManager.default.copyItem(at: packageRoot.appendingPathComponent("Resources/aqua.jpg"), to: photo)
      // A given focus: the load does not decode the photo.
      try Data(#"[{"file": "aqua.jpg", "focus": [0.5, 0.5]}]"#.utf8).write(
        to: catalogFolder.appendingPathComponent("pictures.json"))
      try Data(#"[{"text": "Breathe in, calm.", "author": "A"}]"#.utf8).write(
        to: catalogFolder.appendingPathComponent("quotes.json"))
      let stamp = Date(timeIntervalSince1970: 1_700_000_000)
      try FileManager.default.setAttributes([.modificationDate: stamp], ofItemAtPath: photo.path)
      let arguments = [
        "batch", "--out-dir", folder.path, "--catalog", catalogFolder.path, "--preset", "240x200", "--format", "jpeg",
        "--jobs", "1",
      ]
      let first = try CLI.run(arguments)
      #expect(first.status == 0, "stderr: \(first.stderr)")
      let card = folder.appendingPathComponent("0000-240x200.jpg")
      let before = try Reader.identity(card)

      // One bit of the entropy-coded data, far from any marker: same size, other bytes.
      var bytes = try Reader.bytes(photo)
      let index = try #require(
        (bytes.count / 2..<bytes.count - 2).first { bytes[$0] < 0x80 && bytes[$0 - 1] != 0xFF })
      bytes[index] ^= 0x01
      try Data(bytes).write(to: photo)
      try FileManager.default.setAttributes([.modificationDate: stamp], ofItemAtPath: photo.path)
      let attributes = try FileManager.default.attributesOfItem(atPath: photo.path)
      #expect(attributes[.modificationDate] as? Date == stamp)

      let resumed = try CLI.run(arguments + ["--resume"])
      Self.expectContentRefusal(resumed)
      #expect(try Reader.identity(card) == before, "the refused resume touched a card")
    }
  }

  /// A `--resume` refused because the content version differs: exit 64, one line naming it.
  static func expectContentRefusal(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(result.status == 64, "--resume was not refused: \(result.stderr)", sourceLocation: sourceLocation)
    #expect(
      result.stderrLines.count == 1 && result.stderr.hasPrefix("innerpeace: error: --resume: "), "\(result.stderr)",
      sourceLocation: sourceLocation)
    #expect(
      result.stderr.contains("content version: ") && result.stderr.contains(" there, ")
        && !result.stderr.contains("seed:"),
      "the refusal does not name the content version alone: \(result.stderr)", sourceLocation: sourceLocation)
  }

  /// Shards share a folder. A shard made with seed 1, then a whole `--resume` run with seed 2 in
  /// the same folder: the seed-1 cards must not be kept as seed 2's, so `--resume` refuses,
  /// naming the seed, and leaves the shard's cards and the folder as they are.
  @Test func resumeDoesNotKeepAnotherShardsCardsMadeWithOtherOptions() throws {
    try withTemporaryFolder("innerpeace-batch-shard-resume") { root in
      let folder = root.appendingPathComponent("cards")
      let common = ["--count", "4", "--preset", "240x200", "--format", "jpeg", "--jobs", "2"]
      let shard = try CLI.run(["batch", "--out-dir", folder.path, "--seed", "1", "--shard", "1/2"] + common)
      #expect(shard.status == 0, "stderr: \(shard.stderr)")
      let files = listing(folder)
      let identities = try Reader.images(folder).map { try Reader.identity(folder.appendingPathComponent($0)) }
      #expect(identities.count == 2, "\(files)")

      let resumed = try CLI.run(["batch", "--out-dir", folder.path, "--seed", "2", "--resume"] + common)
      #expect(resumed.status == 64, "--resume --seed 2 kept shard 1/2's seed-1 cards: \(resumed.stderr)")
      #expect(
        resumed.stderrLines.count == 1 && resumed.stderr.hasPrefix("innerpeace: error: --resume: "),
        "\(resumed.stderr)")
      #expect(resumed.stderr.contains("seed: 1 there, 2 now"), "the refusal does not name the seed: \(resumed.stderr)")
      #expect(listing(folder) == files, "the refused resume changed the folder")
      #expect(
        try Reader.images(folder).map { try Reader.identity(folder.appendingPathComponent($0)) } == identities,
        "the refused resume touched a card")
    }
  }

  // MARK: Failures

  @Test func anUndecodablePictureFailsItsCardsOnly() throws {
    try withTemporaryFolder("innerpeace-batch-bad-picture") { root in
      let catalogFolder = root.appendingPathComponent("catalog")
      let folder = root.appendingPathComponent("cards")
      try FileManager.default.createDirectory(at: catalogFolder, withIntermediateDirectories: true)
      let photo = try Reader.bytes(packageRoot.appendingPathComponent("Resources/aqua.jpg"))
      try Data(photo).write(to: catalogFolder.appendingPathComponent("good.jpg"))
      try Data(try Reader.undecodableJPEG(from: photo)).write(to: catalogFolder.appendingPathComponent("bad.jpg"))
      try Data(#"["good.jpg", "bad.jpg"]"#.utf8).write(to: catalogFolder.appendingPathComponent("pictures.json"))
      let quotes = (1...6).map { #"{"text": "Quote number \#($0), calm.", "author": "Author \#($0)"}"# }
      try Data(("[" + quotes.joined(separator: ",") + "]").utf8).write(
        to: catalogFolder.appendingPathComponent("quotes.json"))
      let catalog = try Catalog(directory: catalogFolder)

      // A seed whose plan uses both pictures.
      let seed = try #require(
        try (UInt64(0)..<200).first { seed in
          Set(
            try Self.plan(presets: ["320x200"], count: 6, format: .jpeg, seed: seed, catalog: catalog).items.map(
              \.picture)
          )
          .count == 2
        })
      let plan = try Self.plan(presets: ["320x200"], count: 6, format: .jpeg, seed: seed, catalog: catalog)
      let good = plan.items.filter { $0.picture == "good.jpg" }
      let bad = plan.items.filter { $0.picture == "bad.jpg" }

      let result = try CLI.run([
        "batch", "--out-dir", folder.path, "--catalog", catalogFolder.path, "--count", "6", "--preset", "320x200",
        "--format", "jpeg", "--seed", String(seed), "--jobs", "2",
      ])
      #expect(result.status != 0, "a batch with failed cards exited 0")
      #expect(
        result.status == 1,
        "BatchCommand documents exit status 1 when some cards failed; got \(result.status): \(result.stderr)")
      #expect(
        !result.stderr.contains("invalid arguments"), "a failed card is reported as bad arguments: \(result.stderr)")
      #expect(
        Reader.summaries(result.stderr) == [.init(rendered: good.count, skipped: 0, failed: bad.count)],
        "\(result.stderr)")
      for item in bad {
        #expect(
          result.stderrLines.contains {
            $0.hasPrefix("innerpeace: error: \(item.fileName): ") && $0.contains("bad.jpg")
          },
          "\(item.fileName) is not reported: \(result.stderr)")
      }
      #expect(Reader.images(folder) == good.map(\.fileName), "the good cards are not all there")
      #expect(!listing(folder).contains { $0.contains(".tmp-") }, "temporary files left: \(listing(folder))")
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      try Reader.checkManifest(manifest, folder: folder, items: good, catalog: catalog)
      let failures = try #require(manifest["failures"] as? [[String: Any]])
      #expect(failures.compactMap { $0["file"] as? String }.sorted() == bad.map(\.fileName).sorted())
      #expect(failures.allSatisfy { ($0["error"] as? String)?.contains("bad.jpg") == true }, "\(failures)")
      #expect(manifest["plannedInShard"] as? Int == 6)
    }
  }

  /// A write limit (RLIMIT_FSIZE) makes every card's write fail, as on a full disk; the small
  /// manifest still fits.
  @Test func cardsThatCannotBeWrittenAreCountedAndLeaveNoFiles() throws {
    try withTemporaryFolder("innerpeace-batch-full") { folder in
      let result = try ExternalTool.runWithFileSizeLimit(
        blocks: 4, ["batch", "--out-dir", folder.path, "--count", "3", "--preset", "320x200", "--jobs", "2"])
      #expect(result.status != 0, "exit 0 with no card written")
      #expect(
        result.status == 1, "documented exit status is 1 when cards failed; got \(result.status): \(result.stderr)")
      #expect(Reader.summaries(result.stderr) == [.init(rendered: 0, skipped: 0, failed: 3)], "\(result.stderr)")
      #expect(Reader.images(folder).isEmpty, "final files: \(Reader.images(folder))")
      #expect(!listing(folder).contains { $0.contains(".tmp-") }, "temporary files left: \(listing(folder))")
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      #expect((manifest["failures"] as? [Any])?.count == 3)
      #expect((manifest["images"] as? [Any])?.isEmpty == true)
    }
  }

  /// A full disk: nothing fits, not even the manifest. The run must still end non-zero and say
  /// how many cards failed.
  @Test func aFullDiskStillReportsTheFailureCount() throws {
    try withTemporaryFolder("innerpeace-batch-full-manifest") { folder in
      let result = try ExternalTool.runWithFileSizeLimit(
        blocks: 1, ["batch", "--out-dir", folder.path, "--count", "8", "--preset", "200x200", "--jobs", "2"])
      #expect(result.status != 0, "exit 0 on a full disk")
      #expect(Reader.images(folder).isEmpty, "final files: \(Reader.images(folder))")
      #expect(!listing(folder).contains { $0.contains(".tmp-") }, "temporary files left: \(listing(folder))")
      #expect(!listing(folder).contains("manifest.json"))
      #expect(
        Reader.summaries(result.stderr) == [.init(rendered: 0, skipped: 0, failed: 8)],
        "no failure count when the manifest cannot be written either: \(result.stderr)")
    }
  }

  @Test(arguments: ["file", "file/cards"])
  func anUnwritableOutDirIsOneErrorAndNoFiles(below: String) throws {
    try withTemporaryFolder("innerpeace-batch-unwritable") { root in
      let file = root.appendingPathComponent("file")
      try Data("not a folder".utf8).write(to: file)
      let result = try CLI.run([
        "batch", "--out-dir", root.appendingPathComponent(below).path, "--count", "1", "--preset", "200x200",
      ])
      #expect(result.status != 0)
      #expect(result.status == 73, "expected EX_CANTCREAT (73), got \(result.status)")
      #expect(result.stderrLines.count == 1, "\(result.stderr)")
      #expect(result.stderr.hasPrefix("innerpeace: error: ") && result.stderr.contains(below), "\(result.stderr)")
      // In the system's words, not Foundation's `Error Domain=NSCocoaErrorDomain Code=…`.
      let reason = below == "file" ? "File exists" : "Not a directory"
      #expect(result.stderr.hasSuffix(": \(reason)\n"), "\(result.stderr)")
      #expect(!result.stderr.contains("Domain") && !result.stderr.contains("Code="), "\(result.stderr)")
      #expect(listing(root) == ["file"])
      #expect(try Reader.bytes(file) == Array("not a folder".utf8))
    }
  }

  /// A folder that cannot be made (procfs takes no new folder, even from root) is one plain line,
  /// `innerpeace: error: cannot create the folder '/proc/x': No such file or directory`, and
  /// exit status 73, never Foundation's `Error Domain=NSPOSIXErrorDomain Code=2 …`.
  @Test func aFolderThatCannotBeMadeIsOnePlainLine() throws {
    let folder = "/proc/innerpeace-\(UUID().uuidString)"
    let result = try CLI.run(["batch", "--out-dir", folder, "--count", "1", "--preset", "200x200"])
    #expect(result.status == 73, "\(result.status): \(result.stderr)")
    #expect(
      result.stderrLines == ["innerpeace: error: cannot create the folder '\(folder)': No such file or directory"],
      "\(result.stderr)")
    #expect(result.stdout.isEmpty)
  }

  @Test(arguments: [
    ["--jobs", "0"], ["--jobs", "65"], ["--shard", "3/2"], ["--shard", "0/2"], ["--shard", "a/b"],
    ["--preset", "nope"], ["--preset", "og,nope"], ["--preset", "100x100"], ["--format", "gif"], ["--count", "0"],
    ["--count", "100000"],
  ])
  func badOptionsAreUsageErrors(options: [String]) throws {
    try withTemporaryFolder("innerpeace-batch-usage") { root in
      let folder = root.appendingPathComponent("cards")
      let result = try CLI.run(["batch", "--out-dir", folder.path] + options)
      #expect(result.status == 64, "\(options): status \(result.status), stderr: \(result.stderr)")
      #expect(result.stderrLines.count == 1, "\(options): \(result.stderr)")
      #expect(result.stderr.hasPrefix("innerpeace: error: "), "\(options): \(result.stderr)")
      #expect(result.stdout.isEmpty)
      #expect(!FileManager.default.fileExists(atPath: folder.path), "\(options) created the out-dir")
    }
  }
}
