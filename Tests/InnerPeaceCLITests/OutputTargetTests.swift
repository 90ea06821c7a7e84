import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `render --out` and `schedule -o` never clobber what a path names: a symbolic link's target is
/// written (the link stays), a device or FIFO is written in place (never replaced), and `batch`
/// never writes through a link planted among its own files.
@Suite(.tags(.process, .binary)) struct OutputTargetTests {
  typealias Reader = BatchFolderReader

  static func fileType(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
  }

  static let small = ["--size", "200x200", "--seed", "3", "--format", "jpeg"]

  /// The card `render` writes to stdout with the same options.
  static func expectedCard() throws -> [UInt8] {
    let result = try CLI.run(["render", "--out", "-"] + small)
    #expect(result.status == 0, "\(result.stderr)")
    return result.stdout
  }

  @Test(arguments: ["render", "schedule"])
  func aSymbolicLinksTargetIsWrittenAndTheLinkStays(command: String) throws {
    try withTemporaryFolder("innerpeace-out-link") { root in
      let targets = root.appendingPathComponent("targets")
      let links = root.appendingPathComponent("links")
      try FileManager.default.createDirectory(at: targets, withIntermediateDirectories: true)
      try FileManager.default.createDirectory(at: links, withIntermediateDirectories: true)
      let target = targets.appendingPathComponent("real.out")
      try Data("old".utf8).write(to: target)
      chmod(target.path, 0o640)
      let link = links.appendingPathComponent("card.out")
      try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "../targets/real.out")
      let arguments =
        command == "render"
        ? ["render", "--out", link.path] + Self.small : ["schedule", "-o", link.path, "--days", "2", "--seed", "1"]
      let result = try CLI.run(arguments)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(Self.fileType(link.path) == S_IFLNK, "the link was replaced")
      #expect(
        try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == "../targets/real.out")
      let written = try Reader.bytes(target)
      if command == "render" {
        #expect(written == (try Self.expectedCard()), "the target does not hold the card")
      } else {
        #expect(String(decoding: written, as: UTF8.self).hasPrefix("BEGIN:VCALENDAR"))
      }
      var info = stat()
      #expect(stat(target.path, &info) == 0 && info.st_mode & 0o777 == 0o640, "the target's mode changed")
      #expect(listing(targets) == ["real.out"], "left beside the target: \(listing(targets))")
      #expect(listing(links) == ["card.out"], "left beside the link: \(listing(links))")
    }
  }

  /// A link to a name that does not exist yet: the card is made there.
  @Test func aDanglingLinksTargetIsCreated() throws {
    try withTemporaryFolder("innerpeace-out-dangling") { root in
      let link = root.appendingPathComponent("card.jpg")
      try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "made.jpg")
      let result = try CLI.run(["render", "--out", link.path] + Self.small)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(Self.fileType(link.path) == S_IFLNK)
      #expect(try Reader.bytes(root.appendingPathComponent("made.jpg")) == (try Self.expectedCard()))
      #expect(listing(root) == ["card.jpg", "made.jpg"])
    }
  }

  /// A character device is written in place, never replaced. As root (the test may replace a
  /// node by mistake), a private copy of /dev/null made with mknod; else /dev/null itself.
  @Test(arguments: ["render", "schedule"])
  func aDeviceIsWrittenInPlace(command: String) throws {
    try withTemporaryFolder("innerpeace-out-device") { root in
      var device = "/dev/null"
      if runningAsRoot {
        let own = root.appendingPathComponent("null").path
        var null = stat()
        if stat("/dev/null", &null) == 0, mknod(own, S_IFCHR | 0o666, null.st_rdev) == 0 { device = own }
      }
      var before = stat()
      try #require(stat(device, &before) == 0 && before.st_mode & S_IFMT == S_IFCHR)
      // As root without mknod, never let a build that might replace device nodes loose on the
      // machine's own /dev/null: nothing to test safely here.
      if device == "/dev/null" && runningAsRoot { return }
      let arguments =
        command == "render"
        ? ["render", "--out", device] + Self.small : ["schedule", "-o", device, "--days", "2", "--seed", "1"]
      let result = try CLI.run(arguments)
      #expect(result.status == 0, "\(result.stderr)")
      var after = stat()
      #expect(lstat(device, &after) == 0 && after.st_mode & S_IFMT == S_IFCHR, "\(device) is no longer a device")
      #expect(after.st_rdev == before.st_rdev && after.st_ino == before.st_ino)
      #expect(listing(root).allSatisfy { !$0.contains(".tmp-") }, "\(listing(root))")
    }
  }

  /// A FIFO is written in place: its reader gets the card, and it stays a FIFO. The card is small
  /// enough for the pipe's buffer, so the reader reads once the render has ended.
  @Test func aFIFOIsWrittenInPlace() throws {
    try withTemporaryFolder("innerpeace-out-fifo") { root in
      let fifo = root.appendingPathComponent("cards.fifo").path
      try #require(mkfifo(fifo, 0o600) == 0)
      let reader = open(fifo, O_RDONLY | O_NONBLOCK)
      try #require(reader >= 0)
      defer { close(reader) }
      let result = try CLI.run(["render", "--out", fifo] + Self.small)
      #expect(result.status == 0, "\(result.stderr)")
      #expect(Self.fileType(fifo) == S_IFIFO, "the FIFO was replaced")
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let count = read(reader, &buffer, buffer.count)
        guard count > 0 else { break }
        received += buffer[..<count]
      }
      #expect(received == (try Self.expectedCard()), "the reader got \(received.count) bytes")
      #expect(listing(root) == ["cards.fifo"])
    }
  }

  /// A symbolic link planted under one of batch's own names (its journal, its record of options,
  /// its manifest) is refused with one line, before anything is written, and not followed.
  @Test(arguments: [".innerpeace-journal", ".innerpeace-batch", "manifest.json", "index.html"])
  func batchRefusesAPlantedLink(name: String) throws {
    try withTemporaryFolder("innerpeace-batch-planted") { root in
      let folder = root.appendingPathComponent("cards")
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      let precious = root.appendingPathComponent("precious")
      try Data("precious\n".utf8).write(to: precious)
      try FileManager.default.createSymbolicLink(
        atPath: folder.appendingPathComponent(name).path, withDestinationPath: precious.path)
      for resume in [true, false] {
        let result = try CLI.run(
          ["batch", "--out-dir", folder.path, "--count", "2", "--preset", "200x200", "--quiet"]
            + (resume ? ["--resume"] : []))
        #expect(result.status == 73, "\(name), resume \(resume): status \(result.status): \(result.stderr)")
        #expect(result.stderrLines.count == 1, "\(result.stderr)")
        #expect(result.stderr.contains(name) && result.stderr.contains("symbolic link"), "\(result.stderr)")
        #expect(try Reader.bytes(precious) == Array("precious\n".utf8), "the link's target was written")
        #expect(Self.fileType(folder.appendingPathComponent(name).path) == S_IFLNK, "the link was replaced")
        #expect(listing(folder) == [name], "\(listing(folder))")
      }
    }
  }

  /// A link under a card's name is replaced by the card (a rename never follows it); its target
  /// is not written, and `--resume` does not read it as a kept card.
  @Test func aLinkUnderACardsNameIsNotFollowed() throws {
    try withTemporaryFolder("innerpeace-batch-card-link") { root in
      let folder = root.appendingPathComponent("cards")
      let first = try CLI.run(["batch", "--out-dir", folder.path, "--count", "1", "--preset", "200x200", "--quiet"])
      #expect(first.status == 0, "\(first.stderr)")
      let card = try #require(Reader.images(folder).first)
      let copy = root.appendingPathComponent("copy.png")
      try FileManager.default.moveItem(at: folder.appendingPathComponent(card), to: copy)
      let original = try Reader.bytes(copy)
      try FileManager.default.createSymbolicLink(
        atPath: folder.appendingPathComponent(card).path, withDestinationPath: copy.path)
      let resumed = try CLI.run([
        "batch", "--out-dir", folder.path, "--count", "1", "--preset", "200x200", "--quiet", "--resume",
      ])
      #expect(resumed.status == 0, "\(resumed.stderr)")
      #expect(Reader.summaries(resumed.stderr) == [.init(rendered: 1, skipped: 0, failed: 0)], "\(resumed.stderr)")
      #expect(Self.fileType(folder.appendingPathComponent(card).path) == S_IFREG)
      #expect(try Reader.bytes(copy) == original)
    }
  }
}
