import Crypto
import Foundation
import InnerPeace
import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// The batch's output folder: atomic file writes, the run's parameters, the manifest and gallery.
struct BatchFolder: Sendable {
  let url: URL
  let shard: Shard
  /// The permission bits new files get (0666 less the umask, read once).
  let fileMode: mode_t

  /// Creates the folder if needed and checks that it is writable.
  init(path: String, shard: Shard) throws {
    url = URL(fileURLWithPath: path, isDirectory: true)
    self.shard = shard
    do {
      try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    } catch {
      throw CommandLineError.cannotWrite(
        "cannot create the folder '\(path)': \(InnerPeaceCommand.wording(forSystemError: error))")
    }
    guard access(url.path, W_OK) == 0 else {
      throw CommandLineError.cannotWrite("cannot write into '\(path)': \(String(cString: strerror(errno)))")
    }
    fileMode = AtomicFile.defaultMode
  }

  var manifestName: String { shard == .all ? "manifest.json" : "manifest-\(shard.index)-of-\(shard.count).json" }
  var galleryName: String { shard == .all ? "index.html" : "index-\(shard.index)-of-\(shard.count).html" }
  private var parametersName: String {
    shard == .all ? ".innerpeace-batch" : ".innerpeace-batch-\(shard.index)-of-\(shard.count)"
  }
  /// The checksum of every card this run wrote, a line each, for `--resume` after an interruption
  /// (the manifest is written only at the end). Removed once the manifest holds them.
  private var journalName: String {
    shard == .all ? ".innerpeace-journal" : ".innerpeace-journal-\(shard.index)-of-\(shard.count)"
  }

  /// Refuses a folder where one of this shard's own files (its journal, its record of options, its
  /// manifest or gallery) is a symbolic link: the batch never writes through a link planted in
  /// its folder, and never replaces one either.
  func refuseLinks() throws {
    for name in [journalName, parametersName, manifestName, galleryName] where isLink(name) {
      throw Self.linkError(url.appendingPathComponent(name).path)
    }
  }

  private func isLink(_ name: String) -> Bool {
    var info = stat()
    return lstat(url.appendingPathComponent(name).path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
  }

  private static func linkError(_ path: String) -> CommandLineError {
    CommandLineError.cannotWrite(
      "'\(path)' is a symbolic link: batch does not follow links in its folder (remove it or use another folder)")
  }

  /// A file of the folder, read without following a symbolic link: `nil` if there is none (or it
  /// cannot be read); a link throws.
  private func contents(of name: String) throws -> Data? {
    let path = url.appendingPathComponent(name).path
    let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else {
      if errno == ELOOP { throw Self.linkError(path) }
      return nil
    }
    defer { close(descriptor) }
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { return data }
      data.append(contentsOf: buffer[..<count])
    }
  }

  /// With `resume`, refuses a folder where any run (this shard's or another's) had parameters
  /// that change a card's bytes (seed, format, presets, content version): its files would not be
  /// the ones this run would make. Shard and count only choose which cards, so they may differ.
  func checkRunParameters(_ parameters: BatchRunParameters, resume: Bool) throws {
    guard resume else { return }
    let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
    for name in names.sorted() where name.hasPrefix(".innerpeace-batch") && !name.contains(".tmp-") {
      guard let data = try contents(of: name) else { continue }
      guard let earlier = BatchRunParameters(json: data) else {
        throw CommandLineError.usage(
          "--resume: '\(url.path)' holds a record of options (\(name)) that this version cannot read; "
            + "use another folder")
      }
      let differences = parameters.cardDefiningDifferences(from: earlier)
      if !differences.isEmpty {
        throw CommandLineError.usage(
          "--resume: '\(url.path)' holds cards made with other options or content "
            + "(\(differences.joined(separator: "; "))); resume with the same options, or use another folder")
      }
    }
  }

  /// Records the run's parameters, for a later `--resume` to check. If they cannot be written,
  /// the previous run's record is removed, so that it cannot vouch for this run's files.
  func recordRunParameters(_ parameters: BatchRunParameters) throws {
    do {
      try write(try parameters.json(), named: parametersName)
    } catch {
      unlink(url.appendingPathComponent(parametersName).path)
      throw error
    }
  }

  /// Removes temporary files an interrupted run of this shard left behind: only those of its own
  /// cards and records, never another shard's, which may be writing into the same folder now.
  func removeStaleTemporaries(of items: [BatchItem]) {
    var own = Set(items.map(\.fileName))
    own.formUnion([manifestName, galleryName, parametersName])
    for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] where name.hasPrefix(".") {
      guard let marker = name.range(of: ".tmp-", options: .backwards) else { continue }
      let target = String(name[name.index(after: name.startIndex)..<marker.lowerBound])
      if own.contains(target) { unlink(url.appendingPathComponent(name).path) }
    }
  }

  /// Removes the files of these items, where they exist.
  func remove(_ items: [BatchItem]) {
    for item in items { unlink(url.appendingPathComponent(item.fileName).path) }
  }

  /// The SHA-256 of the item's file if it is there and holds exactly the bytes a run recorded for
  /// it (`recorded`, from ``recordedChecksums()``): a file damaged anywhere, or never recorded,
  /// gives `nil` and is made again.
  func verifiedChecksum(of item: BatchItem, recorded: [String: String]) -> String? {
    // A link planted under a card's name is not read; the card is made again (its rename
    // replaces the link, never what it points to).
    guard let expected = recorded[item.fileName], let data = try? contents(of: item.fileName) else { return nil }
    let checksum = SHA256.hash(data: data).hex
    return checksum == expected ? checksum : nil
  }

  /// The checksums that earlier runs recorded, by file name: every manifest's, then every
  /// journal's (newer: written as each card was), the last record of a file winning.
  func recordedChecksums() throws -> [String: String] {
    var checksums: [String: String] = [:]
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted()
    for name in names where name.hasPrefix("manifest") && name.hasSuffix(".json") {
      guard let data = try contents(of: name),
        let manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
        let images = manifest["images"] as? [[String: Any]]
      else { continue }
      for image in images {
        if let file = image["file"] as? String, let checksum = image["sha256"] as? String { checksums[file] = checksum }
      }
    }
    for name in names where name.hasPrefix(".innerpeace-journal") && !name.contains(".tmp-") {
      guard let data = try contents(of: name) else { continue }
      // "checksum file" lines; a line cut short by an interruption has no file name and is skipped.
      for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].count == 64 else { continue }
        checksums[String(parts[1])] = String(parts[0])
      }
    }
    return checksums
  }

  /// Records a card's checksum before its file is renamed into place, so that every card under a
  /// final name has a record a later `--resume` can check it against.
  func journal(checksum: String, file: String) throws(BatchWriteError) {
    let descriptor = open(
      url.appendingPathComponent(journalName).path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, fileMode)
    guard descriptor >= 0 else { throw BatchWriteError(file: journalName, reason: String(cString: strerror(errno))) }
    defer { close(descriptor) }
    do throws(AtomicFile.Failure) {
      // One write of one short line: appends from several threads do not interleave.
      try AtomicFile.writeAll(Array("\(checksum) \(file)\n".utf8), to: descriptor)
    } catch {
      throw BatchWriteError(file: journalName, reason: error.reason)
    }
  }

  /// Starts this shard's journal afresh (a new run: the plan's old files are gone).
  func removeJournal() { unlink(url.appendingPathComponent(journalName).path) }

  /// Writes a file of the batch atomically (``AtomicFile``: its temporary file is created
  /// exclusively, so never through a link). A symbolic link under a record's name is refused,
  /// not replaced; one under a card's name is replaced by the card.
  func write(_ bytes: [UInt8], named name: String) throws(BatchWriteError) {
    if [journalName, parametersName, manifestName, galleryName].contains(name) && isLink(name) {
      throw BatchWriteError(file: name, reason: "it is a symbolic link, which batch does not follow")
    }
    do throws(AtomicFile.Failure) {
      try AtomicFile.write(bytes, to: url.appendingPathComponent(name).path, mode: fileMode)
    } catch {
      throw BatchWriteError(file: name, reason: error.reason)
    }
  }

  /// Writes the manifest (every image present, in plan order, and every failure) and the gallery,
  /// each atomically, then flushes the folder itself so the renames are on disk.
  func writeManifest(outcome: BatchOutcome, plan: BatchPlan, catalog: Catalog, seed: UInt64) throws {
    let images: [[String: Any]] = outcome.entries.map { entry in
      var image: [String: Any] = [
        "quoteIndex": entry.item.quoteIndex, "text": entry.quote.text, "author": entry.quote.author,
        "shareMessage": entry.quote.shareMessage, "picture": entry.item.picture,
        "preset": entry.item.preset.description,
        "size": "\(entry.width)x\(entry.height)", "width": entry.width, "height": entry.height,
        "format": entry.item.format.rawValue, "file": entry.item.fileName, "sha256": entry.sha256,
        "missingGlyphs": entry.missingGlyphs,
      ]
      // The report's own JSON, read back as an object, so the manifest sorts and indents it too.
      if let report = entry.report, let object = try? JSONSerialization.jsonObject(with: Data(report.json)) {
        image["report"] = object
      }
      return image
    }
    let manifest: [String: Any] = [
      "generator": "innerpeace \(InnerPeaceVersion.current)", "seed": String(seed), "shard": shard.description,
      "totalInRun": plan.totalCount, "plannedInShard": plan.items.count, "images": images,
      "failures": outcome.failures.map { ["file": $0.file, "error": $0.reason] },
    ]
    let data = try JSONSerialization.data(
      withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
    try write([UInt8](data) + [0x0A], named: manifestName)
    try write(
      Array(
        Gallery.html(entries: outcome.entries, title: "Inner Peace — \(shard == .all ? "batch" : "shard \(shard)")")
          .utf8), named: galleryName)
    let folder = open(url.path, O_RDONLY | O_DIRECTORY)
    if folder >= 0 {
      fsync(folder)
      close(folder)
    }
    // The manifest on disk now records every checksum the journal held.
    removeJournal()
  }
}

/// A file of the batch that could not be written, and why (the system's words).
struct BatchWriteError: Error, CustomStringConvertible {
  let file: String
  let reason: String

  var description: String { "cannot write \(file): \(reason)" }
}

/// The batch's `index.html`: every image with its quote, to browse and check a run.
enum Gallery {
  static func html(entries: [ManifestEntry], title: String) -> String {
    var body = ""
    for entry in entries {
      let file = Markup.escaped(entry.item.fileName)
      body += """
          <figure><a href="\(file)"><img src="\(file)" loading="lazy" width="\(entry.width)" height="\(entry.height)" alt="\(Markup.escaped(entry.quote.shareMessage))"></a>
          <figcaption><span class="n">#\(entry.item.quoteIndex) · \(Markup.escaped(entry.item.preset.description)) · \(Markup.escaped(entry.item.picture))</span>\(Markup.escaped(entry.quote.shareMessage))</figcaption></figure>

        """
    }
    return """
      <!doctype html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>\(Markup.escaped(title))</title>
      <style>
      body { margin: 0; padding: 24px; background: #111; color: #ddd; font: 15px/1.4 system-ui, sans-serif; }
      h1 { font-weight: 400; font-size: 20px; margin: 0 0 16px; }
      main { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 20px; }
      figure { margin: 0; background: #1b1b1b; border-radius: 8px; overflow: hidden; }
      img { display: block; width: 100%; height: auto; background: #222; }
      figcaption { padding: 10px 12px 12px; font-size: 13px; color: #bbb; }
      .n { display: block; color: #888; font-size: 12px; margin-bottom: 4px; }
      </style>
      </head>
      <body>
      <h1>\(Markup.escaped(title)) · \(entries.count) images</h1>
      <main>
      \(body)</main>
      </body>
      </html>

      """
  }
}
