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
  /// killed after `timeout` seconds.
  static func run(
    _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil, timeout: Double = 120
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
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
      if Date() > deadline {
        process.terminate()
        process.waitUntilExit()
        try? outHandle.close()
        try? errHandle.close()
        Issue.record("innerpeace \(arguments.joined(separator: " ").prefix(200)) timed out after \(timeout) s")
        return CommandResult(status: -1, stdout: [], stderr: "timed out")
      }
      usleep(10_000)
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
