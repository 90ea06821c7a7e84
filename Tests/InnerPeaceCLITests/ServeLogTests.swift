import Foundation
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Glibc)
  import Glibc
#endif

/// `serve` never dies because its log cannot be written: lines that cannot be written are dropped
/// and counted in `innerpeace_log_lines_dropped_total`, the start-up line too.
@Suite(.tags(.live, .process, .binary)) struct ServeLogTests {
  static func get(_ url: String) async throws -> (Int, String) {
    let (data, response) = try await URLSession.shared.data(from: try #require(URL(string: url)))
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
  }

  /// An address that cannot be listened on is one line in the system's words, not NIO's
  /// `bind(descriptor:ptr:bytes:): … (errno: 98)`, and exit status 70.
  @Test func anAddressInUseIsOnePlainLine() throws {
    let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(holder >= 0)
    defer { close(holder) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
        bind(holder, generic, length) == 0 && listen(holder, 1) == 0 && getsockname(holder, generic, &length) == 0
      }
    }
    try #require(bound)
    let port = Int(UInt16(bigEndian: address.sin_port))
    let result = try CLI.run(["serve", "--port", String(port), "--in-process", "--concurrency", "1"])
    #expect(result.status == 70, "\(result.stderr)")
    #expect(
      result.stderrLines.last
        == "innerpeace: error: cannot listen on --host 127.0.0.1 --port \(port): Address already in use",
      "\(result.stderr)")
  }

  static func droppedLines(_ metrics: String) -> Double? {
    for line in metrics.split(separator: "\n") where line.hasPrefix("innerpeace_log_lines_dropped_total ") {
      return Double(line.split(separator: " ").last ?? "")
    }
    return nil
  }

  /// stderr is a pipe whose reader goes away once the server has said where it listens: every
  /// later log line fails (EPIPE). The server keeps answering, counts the lost lines, and stops
  /// cleanly on SIGTERM.
  @Test(.timeLimit(.minutes(3)), arguments: ["text", "json"])
  func logLinesThatCannotBeWrittenAreCounted(format: String) async throws {
    let binary = try #require(innerpeaceBinary, "run swift build first")
    let process = Process()
    process.executableURL = binary
    process.arguments = ["serve", "--port", "0", "--in-process", "--concurrency", "1", "--log-format", format]
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    defer {
      if process.isRunning { process.terminate() }
      process.waitUntilExit()
    }
    // Read until the start-up line (or the end of stderr, if the server died).
    var text = ""
    var base: String?
    while base == nil {
      let chunk = errors.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      text += String(decoding: chunk, as: UTF8.self)
      if let range = text.range(of: #"listening on (http://[0-9.:]+)"#, options: .regularExpression) {
        base = String(text[range].dropFirst("listening on ".count))
      }
    }
    let url = try #require(base, "the server did not start: \(text)")
    try errors.fileHandleForReading.close()

    var dropped: Double = 0
    for _ in 0..<50 where dropped < 1 {
      #expect(try await Self.get(url + "/healthz").0 == 200)
      let (status, metrics) = try await Self.get(url + "/metrics")
      #expect(status == 200)
      dropped = Self.droppedLines(metrics) ?? -1
      #expect(dropped >= 0, "no innerpeace_log_lines_dropped_total in /metrics")
    }
    #expect(dropped >= 1, "no dropped line was counted")
    #expect(process.isRunning, "the server died of its log")
    process.terminate()
    process.waitUntilExit()
    #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
    #expect(process.terminationStatus == 0)
  }

  /// stderr on /dev/full from the start: the start-up line is dropped (and counted), and the
  /// server starts and answers. The port is picked beforehand (the start-up line cannot say it).
  @Test(.timeLimit(.minutes(3)), .enabled(if: FileManager.default.fileExists(atPath: "/dev/full")))
  func aFullStderrAtStartUpIsNotFatal() async throws {
    let binary = try #require(innerpeaceBinary, "run swift build first")
    let port = try Self.freePort()
    let process = Process()
    process.executableURL = binary
    process.arguments = ["serve", "--port", String(port), "--in-process", "--concurrency", "1"]
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()
    defer {
      if process.isRunning { process.terminate() }
      process.waitUntilExit()
    }
    var metrics: String?
    // Until it answers (each attempt is refused at once before it listens), a bounded number of
    // attempts; between two, the wait is for the server's exit (at most 100 ms), which ends it.
    for _ in 0..<1_200 where metrics == nil {
      if let (status, body) = try? await Self.get("http://127.0.0.1:\(port)/metrics"), status == 200 {
        metrics = body
      } else if Self.exits(exited, within: .milliseconds(100)) {
        break
      }
    }
    #expect(process.isRunning, "the server died at start-up: status \(process.terminationStatus)")
    let body = try #require(metrics, "the server never answered")
    #expect((Self.droppedLines(body) ?? 0) >= 1, "the start-up line was not counted")
  }

  /// Whether the process whose exit signals `exited` exits within `interval`.
  static func exits(_ exited: DispatchSemaphore, within interval: DispatchTimeInterval) -> Bool {
    exited.wait(timeout: .now() + interval) == .success
  }

  /// A port free now on 127.0.0.1 (bound, read back, released).
  static func freePort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    try #require(socket >= 0)
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) }
    }
    try #require(bound == 0)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) }
    }
    try #require(named == 0)
    return Int(UInt16(bigEndian: address.sin_port))
  }
}
