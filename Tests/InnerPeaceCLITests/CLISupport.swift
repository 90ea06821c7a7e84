import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The package root, from this file's path (Tests/InnerPeaceCLITests/CLISupport.swift).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// The built `innerpeace` binary, next to the test bundle or in the package's .build folder; or
/// `INNERPEACE_TEST_BINARY`, to run these tests against another build (an older one, to see a
/// test fail before its fix).
let innerpeaceBinary: URL? = {
  let fileManager = FileManager.default
  if let path = ProcessInfo.processInfo.environment["INNERPEACE_TEST_BINARY"], !path.isEmpty {
    return URL(fileURLWithPath: path)
  }
  var candidates: [URL] = []
  let bundle = Bundle.main.bundleURL
  candidates.append(bundle.appendingPathComponent("innerpeace"))
  candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("innerpeace"))
  for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
    candidates.append(bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("innerpeace"))
  }
  for configuration in ["debug", "release"] {
    candidates.append(packageRoot.appendingPathComponent(".build/\(configuration)/innerpeace"))
  }
  return candidates.first { fileManager.isExecutableFile(atPath: $0.path) }
}()

/// What a run of the binary did.
struct CommandResult {
  let status: Int32
  let stdout: [UInt8]
  let stderr: String

  var stderrLines: [Substring] {
    stderr.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
  }
}

enum CLI {
  struct Missing: Error, CustomStringConvertible {
    var description: String {
      "the innerpeace binary was not found next to the tests or in \(packageRoot.path)/.build/debug: run `swift build` first"
    }
  }

  /// Runs `innerpeace` with `arguments`, stdout and stderr captured in files (no pipe deadlocks),
  /// stdin the bytes of `stdin` from a file (else empty), killed after `timeout` seconds.
  static func run(
    _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil, stdin: [UInt8]? = nil,
    timeout: Double = 120
  ) throws -> CommandResult {
    guard let binary = innerpeaceBinary else { throw Missing() }
    let captureFolder = FileManager.default.temporaryDirectory
      .appendingPathComponent("innerpeace-cli-capture-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: captureFolder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: captureFolder) }
    let outURL = captureFolder.appendingPathComponent("stdout")
    let errURL = captureFolder.appendingPathComponent("stderr")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let outHandle = try FileHandle(forWritingTo: outURL)
    let errHandle = try FileHandle(forWritingTo: errURL)

    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardOutput = outHandle
    process.standardError = errHandle
    if let stdin {
      let inURL = captureFolder.appendingPathComponent("stdin")
      try Data(stdin).write(to: inURL)
      process.standardInput = try FileHandle(forReadingFrom: inURL)
    } else {
      process.standardInput = FileHandle.nullDevice
    }
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    // Waits for the exit itself; the timeout only bounds a run that hangs.
    if exited.wait(timeout: .now() + timeout) == .timedOut {
      process.terminate()
      process.waitUntilExit()
      try? outHandle.close()
      try? errHandle.close()
      Issue.record("innerpeace \(arguments.joined(separator: " ").prefix(200)) did not exit within \(timeout) s")
      return CommandResult(status: -1, stdout: [], stderr: "timed out")
    }
    process.waitUntilExit()
    try outHandle.close()
    try errHandle.close()
    return CommandResult(
      status: process.terminationStatus, stdout: [UInt8](try Data(contentsOf: outURL)),
      stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
  }
}

/// Runs `body` with a fresh, unique temporary folder, removed afterwards (made writable first, in
/// case a test took the write permission away).
func withTemporaryFolder<T>(_ label: String = "innerpeace-cli", _ body: (URL) throws -> T) throws -> T {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("\(label)-\(UUID().uuidString)", isDirectory: true)
  try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  defer {
    if let enumerator = FileManager.default.enumerator(atPath: url.path) {
      for case let path as String in enumerator {
        chmod(url.appendingPathComponent(path).path, 0o755)
      }
    }
    chmod(url.path, 0o755)
    try? FileManager.default.removeItem(at: url)
  }
  return try body(url)
}

/// The names in a folder, sorted (hidden ones included).
func listing(_ folder: URL) -> [String] {
  ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
}

let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

/// Width, height and colour type from a PNG's IHDR chunk.
func pngHeader(_ bytes: [UInt8]) -> (width: Int, height: Int, colourType: Int)? {
  guard bytes.count >= 33, Array(bytes.prefix(8)) == pngSignature, Array(bytes[12..<16]) == Array("IHDR".utf8) else {
    return nil
  }
  func be32(_ offset: Int) -> Int { bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) } }
  return (be32(16), be32(20), Int(bytes[25]))
}

var runningAsRoot: Bool { getuid() == 0 }

/// A running `innerpeace serve` whose stderr the test reads as it comes: start-up is the line
/// saying where it listens (a blocking read, no clock), and the rest of stderr is read to its end
/// once the server has stopped.
final class ServeProcess {
  let process = Process()
  private let errors = Pipe()
  private var text = ""

  /// Starts `innerpeace serve` with `arguments`, `environment` added to this process's.
  init(_ arguments: [String], environment: [String: String] = [:]) throws {
    guard let binary = innerpeaceBinary else { throw CLI.Missing() }
    process.executableURL = binary
    process.arguments = ["serve"] + arguments
    var env = ProcessInfo.processInfo.environment
    for (key, value) in environment { env[key] = value }
    process.environment = env
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
  }

  deinit {
    guard process.isRunning else { return }
    process.terminate()
    process.waitUntilExit()
  }

  /// Reads stderr until the start-up line and returns the base URL it names; nil when stderr
  /// ends first (the server stopped).
  func waitUntilListening() -> String? {
    while true {
      let chunk = errors.fileHandleForReading.availableData
      if chunk.isEmpty { return nil }
      text += String(decoding: chunk, as: UTF8.self)
      if let range = text.range(of: #"listening on (http://[0-9.:]+)"#, options: .regularExpression) {
        return String(text[range].dropFirst("listening on ".count))
      }
    }
  }

  /// Everything read from stderr so far.
  var stderr: String { text }

  /// Stops the server (SIGTERM), reads stderr to its end and returns all of it.
  func stop() -> String {
    if process.isRunning { process.terminate() }
    text += String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return text
  }
}

// MARK: Tags

/// What a suite needs beyond this process, so `bash scripts/test.sh --fast` can leave it out
/// (it skips every suite and test carrying one of these tags).
extension Tag {
  /// Real sockets: a server listening on loopback, talked to over TCP.
  @Tag static var live: Self
  /// Child processes: render workers, or the server or command run as processes.
  @Tag static var process: Self
  /// The built `innerpeace` binary (`swift build` first).
  @Tag static var binary: Self
}
