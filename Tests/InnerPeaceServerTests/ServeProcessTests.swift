import Foundation
import NIOConcurrencyHelpers
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `innerpeace serve` as a process: the built binary on a loopback port, driven with plain sockets.
@Suite(.tags(.live, .process, .binary)) struct ServeProcessTests {
  /// A malformed catalog fails at start-up: a non-zero exit (the 60 s bound is a hang guard),
  /// one stderr line naming the file and the line and column, and never a "listening" line.
  @Test(.timeLimit(.minutes(5)))
  func malformedCatalogFailsBeforeListening() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("innerpeace-serve-catalog-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let quotes = "[\n  {\"text\": \"Breathe.\", \"author\": \"Anon\"},\n  {\"text\": \"Calm\" \"author\": \"X\"}\n]\n"
    try Data(quotes.utf8).write(to: folder.appendingPathComponent("quotes.json"))
    try Data("[\"aqua.jpg\"]".utf8).write(to: folder.appendingPathComponent("pictures.json"))

    let server = try await ServerProcess.start(
      arguments: ["serve", "--port", "0", "--catalog", folder.path], waitForListening: false)
    defer { server.stop() }
    let status = try #require(try await server.waitForExit(timeout: .seconds(60)), "still running: \(server.stderr)")
    #expect(status != 0)
    let lines = server.stderr.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    #expect(lines.count == 1, "one line on stderr: \(server.stderr)")
    let line = String(lines.first ?? "")
    #expect(line.contains("quotes.json"), "\(line)")
    #expect(line.contains("line 3"), "\(line)")
    #expect(line.contains("column"), "\(line)")
    #expect(!server.stderr.contains("listening"))
  }

  /// A photo that cannot be drawn fails `serve --catalog` at start-up, with one line naming
  /// it, instead of a healthy server that answers 500 for every card that uses it.
  @Test(.timeLimit(.minutes(5)))
  func undrawablePhotoFailsBeforeListening() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("innerpeace-serve-photo-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let photo = try Data(contentsOf: packageRoot.appendingPathComponent("Resources/aqua.jpg"))
    try Data(#"[{"text": "Breathe.", "author": "Anon"}]"#.utf8).write(to: folder.appendingPathComponent("quotes.json"))
    try Data(#"["aqua.jpg", "cut.jpg"]"#.utf8).write(to: folder.appendingPathComponent("pictures.json"))
    try photo.write(to: folder.appendingPathComponent("aqua.jpg"))
    try photo.prefix(photo.count * 3 / 10).write(to: folder.appendingPathComponent("cut.jpg"))

    let server = try await ServerProcess.start(
      arguments: ["serve", "--port", "0", "--host", "127.0.0.1", "--catalog", folder.path], waitForListening: false)
    defer { server.stop() }
    let status = try await server.waitForExit(timeout: .seconds(10))
    #expect(status == 65, "exit status \(String(describing: status)); stderr: \(server.stderr)")
    let lines = server.stderr.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
    #expect(lines.count == 1, "one line on stderr: \(server.stderr)")
    #expect(lines.first?.contains("cut.jpg") == true, "\(server.stderr)")
    #expect(!server.stderr.contains("listening"))
  }
}

// MARK: The server process

/// The package root, from this file's path (Tests/InnerPeaceServerTests/…).
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent()

/// One `innerpeace` process, its stderr read as it comes (on a thread of its own) so that a test
/// waits for the lines it expects, and its exit seen by its termination handler: every wait is
/// for the event, with a hang guard.
final class ServerProcess: @unchecked Sendable {
  struct Missing: Error, CustomStringConvertible {
    var description: String { "no innerpeace binary in \(packageRoot.path)/.build/debug: run `swift build` first" }
  }

  /// What the process has done so far.
  struct Output: Sendable {
    /// Everything read from stderr.
    var text = ""
    /// Whether stderr has ended (the server and every worker it started have closed it).
    var ended = false
    /// The exit status, once the process has exited.
    var status: Int32?
  }

  let process: Process
  let output = Watched(Output())
  private let listeningPort: NIOLockedValueBox<Int?> = NIOLockedValueBox(nil)

  private init(process: Process) { self.process = process }

  /// The port of the "listening on" line, if it came.
  var port: Int? { listeningPort.withLockedValue { $0 } }

  var stderr: String { output.value.text }

  static func binary() throws -> URL {
    for configuration in ["debug", "release"] {
      let url = packageRoot.appendingPathComponent(".build/\(configuration)/innerpeace")
      if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    throw Missing()
  }

  /// Starts the binary, with `environment` added to this process's own (and `LOG_LEVEL` at
  /// `warning` unless given); unless told not to, waits for its "listening on" line (or its exit;
  /// `listenTimeout` is a hang guard).
  static func start(
    arguments: [String], environment extra: [String: String] = [:], waitForListening: Bool = true,
    listenTimeout: Duration = .seconds(60)
  ) async throws -> ServerProcess {
    let process = Process()
    process.executableURL = try binary()
    process.arguments = arguments
    let errors = Pipe()
    process.standardError = errors
    process.standardOutput = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    var environment = ProcessInfo.processInfo.environment
    environment["LOG_LEVEL"] = "warning"
    for (name, value) in extra { environment[name] = value }
    process.environment = environment
    let server = ServerProcess(process: process)
    process.terminationHandler = { [output = server.output] ended in
      let status = ended.terminationStatus
      output.update { $0.status = status }
    }
    try process.run()
    let handle = errors.fileHandleForReading
    let reader = Thread { [output = server.output] in
      while true {
        let chunk = handle.availableData
        guard !chunk.isEmpty else { break }
        output.update { $0.text += String(decoding: chunk, as: UTF8.self) }
      }
      output.update { $0.ended = true }
    }
    reader.start()
    guard waitForListening else { return server }
    let port = await server.output.wait(timeout: listenTimeout) { output -> Int?? in
      if let match = output.text.firstMatch(of: #/listening on http://127\.0\.0\.1:(\d+)/#) { return Int(match.1) }
      return output.status != nil || output.ended ? .some(nil) : nil
    }
    server.listeningPort.withLockedValue { $0 = port ?? nil }
    return server
  }

  /// The first stderr line containing `text`, as soon as it is written; nil if stderr ends
  /// without one (or `timeout`, a hang guard, passes).
  @discardableResult
  func waitForLine(containing text: String, timeout: Duration = .seconds(60)) async -> String? {
    await waitForLines(containing: text, count: 1, timeout: timeout)?.first
  }

  /// The first `count` stderr lines containing `text`, once that many are written; nil if stderr
  /// ends with fewer (or `timeout`, a hang guard, passes).
  func waitForLines(containing text: String, count: Int, timeout: Duration = .seconds(60)) async -> [String]? {
    let lines = await output.wait(timeout: timeout) { output -> [String]?? in
      let whole =
        output.ended ? output.text[...] : output.text[..<(output.text.lastIndex(of: "\n") ?? output.text.startIndex)]
      let matching = whole.split(separator: "\n").filter { $0.contains(text) }.map(String.init)
      if matching.count >= count { return .some(Array(matching.prefix(count))) }
      return output.ended ? .some(nil) : nil
    }
    return lines ?? nil
  }

  func signal(_ number: Int32) {
    if process.isRunning { _ = kill(process.processIdentifier, number) }
  }

  /// The exit status once the process has exited and its stderr has ended (so ``stderr`` holds
  /// all of it); nil if that has not happened within `timeout` (a hang guard).
  func waitForExit(timeout: Duration) async throws -> Int32? {
    await output.wait(timeout: timeout) { output in output.ended ? output.status : nil }
  }

  /// Ends the process if it is still running.
  func stop() {
    if process.isRunning {
      _ = kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
    }
  }
}

// MARK: A minimal HTTP/1.1 client over a blocking loopback socket

/// Runs blocking work on its own thread, so it never holds a thread of the concurrency pool.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    let thread = Thread { continuation.resume(with: Result { try work() }) }
    thread.start()
  }
}

struct RawHTTPResponse: Sendable {
  let status: Int
  let headers: [(String, String)]
  let body: [UInt8]
  var text: String { String(decoding: body, as: UTF8.self) }
  func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

struct RawHTTPError: Error, CustomStringConvertible {
  let description: String
}

/// A TCP socket connected to 127.0.0.1:`port`. `receiveBuffer` makes the kernel's receive buffer
/// small (set before connecting, so the window is small too), for a reader slow on the wire.
/// `source` binds the local end to another loopback address (`127.0.0.2`; Linux routes all of
/// 127/8 to the loopback interface), so the server sees another client.
func loopbackSocket(port: Int, receiveBuffer: Int32? = nil, source: String? = nil) throws -> Int32 {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard descriptor >= 0 else { throw RawHTTPError(description: "socket() failed") }
  if var size = receiveBuffer {
    setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
  }
  if let source {
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = inet_addr(source)
    let bound = withUnsafePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      let number = errno
      close(descriptor)
      throw RawHTTPError(description: "bind to \(source) failed: errno \(number)")
    }
  }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = in_port_t(UInt16(port).bigEndian)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
    }
  }
  guard connected == 0 else {
    let number = errno
    close(descriptor)
    throw RawHTTPError(description: "connect to 127.0.0.1:\(port) failed: errno \(number)")
  }
  return descriptor
}

/// One request on one connection (`Connection: close`), sent at once; the response read later.
final class RawHTTPConnection: Sendable {
  let descriptor: Int32

  /// Connects to 127.0.0.1:`port` and sends `requestLine` with Host and Connection: close.
  init(port: Int, request requestLine: String) throws {
    descriptor = try loopbackSocket(port: port)
    let request = Array("\(requestLine)\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n".utf8)
    var sent = 0
    while sent < request.count {
      let count = request[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard count > 0 else {
        close(descriptor)
        throw RawHTTPError(description: "send failed: errno \(errno)")
      }
      sent += count
    }
  }

  deinit { close(descriptor) }

  /// Reads the whole response (until the server closes), for at most `timeout` seconds.
  func response(timeout: Double) throws -> RawHTTPResponse {
    let deadline = Date().addingTimeInterval(timeout)
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      let remaining = deadline.timeIntervalSinceNow
      guard remaining > 0 else { throw RawHTTPError(description: "no complete response within \(timeout) s") }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      let ready = poll(&poller, 1, Int32(min(remaining, 1) * 1000))
      if ready == 0 { continue }
      guard ready > 0 else { throw RawHTTPError(description: "poll failed: errno \(errno)") }
      let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
      if count == 0 { break }
      guard count > 0 else {
        if errno == EINTR { continue }
        if errno == ECONNRESET { break }
        throw RawHTTPError(description: "recv failed: errno \(errno)")
      }
      bytes += buffer[0..<count]
    }
    return try RawHTTPConnection.parse(bytes)
  }

  static func parse(_ bytes: [UInt8]) throws -> RawHTTPResponse {
    let separator: [UInt8] = [13, 10, 13, 10]
    guard let end = bytes.firstRange(of: separator) else {
      throw RawHTTPError(description: "no header block in \(bytes.count) bytes")
    }
    let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
    var lines = head.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst().split(separator: " ")
    guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
      throw RawHTTPError(description: "bad status line: \(head.prefix(80))")
    }
    let headers = lines.compactMap { line -> (String, String)? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    return RawHTTPResponse(status: status, headers: headers, body: Array(bytes[end.upperBound...]))
  }
}
