import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes to stdout and stderr that fail (a full disk, a closed stream, a reader gone) end every
/// command with exit status 74 (EX_IOERR), never a trap (SIGILL, 132), a SIGPIPE kill or a
/// silent 0; a card already written stays intact.
@Suite(.tags(.process, .binary)) struct StreamFailureTests {
  typealias Reader = BatchFolderReader

  /// How stdout or stderr is set up for a run.
  enum Stream {
    /// The stream captured in a file (to read it).
    case captured
    /// `/dev/full`: every write fails with ENOSPC.
    case full
    /// Closed: every write fails with EBADF.
    case closed
    /// A pipe whose reader is gone before the command starts: every write fails with EPIPE.
    case brokenPipe
  }

  struct Outcome {
    let status: Int32
    let killedBySignal: Bool
    let stdout: [UInt8]
    let stderr: String
  }

  /// Runs `innerpeace` with stdout and stderr as asked. A closed stream needs a shell (`Process`
  /// always gives the child its three streams): `sh -c 'exec "$0" "$@" >&-'`.
  static func run(
    _ arguments: [String], stdout: Stream, stderr: Stream, environment: [String: String] = [:]
  ) throws -> Outcome {
    let binary = try #require(innerpeaceBinary, "\(CLI.Missing().description)")
    let capture = FileManager.default.temporaryDirectory.appendingPathComponent(
      "innerpeace-streams-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: capture, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: capture) }
    var redirections = ""
    func handle(_ stream: Stream, _ name: String, _ descriptor: Int) throws -> FileHandle? {
      switch stream {
      case .captured:
        let url = capture.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        return try FileHandle(forWritingTo: url)
      case .full:
        return try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
      case .closed:
        redirections += " \(descriptor)>&-"
        return nil
      case .brokenPipe:
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        close(ends[0])
        return FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
      }
    }
    let process = Process()
    let out = try handle(stdout, "stdout", 1)
    let err = try handle(stderr, "stderr", 2)
    if !redirections.isEmpty {
      process.executableURL = URL(fileURLWithPath: "/bin/sh")
      process.arguments = ["-c", "exec \"$0\" \"$@\"\(redirections)", binary.path] + arguments
    } else {
      process.executableURL = binary
      process.arguments = arguments
    }
    process.standardOutput = out ?? FileHandle.nullDevice
    process.standardError = err ?? FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    var variables = ProcessInfo.processInfo.environment
    for (name, value) in environment { variables[name] = value }
    process.environment = variables
    try process.run()
    for handle in [out, err].compactMap({ $0 }) { try? handle.close() }
    process.waitUntilExit()
    let read = { (name: String) in (try? Data(contentsOf: capture.appendingPathComponent(name))) ?? Data() }
    return Outcome(
      status: process.terminationStatus, killedBySignal: process.terminationReason == .uncaughtSignal,
      stdout: [UInt8](read("stdout")), stderr: String(decoding: read("stderr"), as: UTF8.self))
  }

  static var devFullAvailable: Bool { FileManager.default.fileExists(atPath: "/dev/full") }

  /// stdout that cannot be written: exit 74 and one line on stderr saying so.
  @Test(
    .enabled(if: devFullAvailable, "needs /dev/full"),
    arguments: [
      (["quotes"], Stream.full), (["quotes", "--json"], .full), (["quotes"], .closed), (["quotes"], .brokenPipe),
      (["quotes", "--json"], .brokenPipe), (["render", "--out", "-", "--size", "200x200", "--seed", "1"], .full),
      (["render", "--out", "-", "--size", "200x200", "--seed", "1"], .closed),
      (["render", "--out", "-", "--size", "200x200", "--seed", "1"], .brokenPipe),
      (["schedule", "--days", "2"], .full), (["sign", "/card.png?text=Hi"], .full), (["--help"], .full),
      (["render", "--help"], .brokenPipe),
    ] as [([String], Stream)])
  func stdoutThatCannotBeWritten(arguments: [String], stream: Stream) throws {
    let outcome = try Self.run(
      arguments, stdout: stream, stderr: .captured,
      environment: ["INNERPEACE_SIGNING_KEY": "a signing key of at least thirty-two bytes"])
    #expect(!outcome.killedBySignal, "\(arguments) \(stream): killed by signal \(outcome.status)")
    #expect(outcome.status == 74, "\(arguments) \(stream): status \(outcome.status), stderr \(outcome.stderr)")
    let lines = outcome.stderr.split(separator: "\n")
    #expect(lines.count == 1, "\(outcome.stderr)")
    #expect(lines.first?.hasPrefix("innerpeace: error: cannot write to stdout: ") == true, "\(outcome.stderr)")
  }

  /// stderr that cannot be written while the command works: it does its work (the card is
  /// written whole), then exits 74.
  @Test(.enabled(if: devFullAvailable, "needs /dev/full"), arguments: [Stream.full, .closed, .brokenPipe])
  func renderWithAnUnwritableStderrWritesTheCardThenFails(stream: Stream) throws {
    try withTemporaryFolder("innerpeace-stderr-render") { folder in
      let card = folder.appendingPathComponent("card.png")
      let options = ["--size", "200x200", "--seed", "5"]
      let outcome = try Self.run(["render", "-v", "--out", card.path] + options, stdout: .captured, stderr: stream)
      #expect(!outcome.killedBySignal, "killed by signal \(outcome.status)")
      #expect(outcome.status == 74, "status \(outcome.status)")
      let expected = try CLI.run(["render", "--out", "-"] + options)
      #expect(try Reader.bytes(card) == expected.stdout, "the card is not whole")
      #expect(listing(folder) == ["card.png"])
    }
  }

  /// A batch with an unwritable stderr writes every card and its manifest, then exits 74.
  @Test(.enabled(if: devFullAvailable, "needs /dev/full"), arguments: [Stream.full, .closed])
  func batchWithAnUnwritableStderrFinishesThenFails(stream: Stream) throws {
    try withTemporaryFolder("innerpeace-stderr-batch") { folder in
      let outcome = try Self.run(
        ["batch", "--out-dir", folder.path, "--count", "3", "--preset", "200x200", "--jobs", "2"], stdout: .captured,
        stderr: stream)
      #expect(!outcome.killedBySignal, "killed by signal \(outcome.status)")
      #expect(outcome.status == 74, "status \(outcome.status)")
      #expect(Reader.images(folder).count == 3)
      let manifest = try Reader.json(folder.appendingPathComponent("manifest.json"))
      #expect((manifest["images"] as? [Any])?.count == 3)
    }
  }

  /// A usage error with stderr full keeps its own exit status (64) and is not a trap.
  @Test(.enabled(if: devFullAvailable, "needs /dev/full"))
  func aUsageErrorWithStderrFullIsStillAUsageError() throws {
    let outcome = try Self.run(["render", "--out", "-", "--preset", "nope"], stdout: .captured, stderr: .full)
    #expect(!outcome.killedBySignal)
    #expect(outcome.status == 64, "status \(outcome.status)")
  }
}
