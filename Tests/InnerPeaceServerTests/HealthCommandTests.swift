import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `innerpeace health`, the container's HEALTHCHECK, against a real `serve` process.
@Suite(.tags(.live, .process, .binary)) struct HealthCommandTests {
  /// What one `innerpeace health` run did.
  struct Run: Sendable {
    let status: Int32
    let output: String
    let error: String
  }

  /// Runs `innerpeace health` with `arguments` (and `environment` in place of this process's
  /// port variables) to its exit; the command itself gives up after 2 s.
  func health(_ arguments: [String], environment: [String: String] = [:]) async throws -> Run {
    let binary = try ServerProcess.binary()
    return try await onOwnThread {
      let process = Process()
      process.executableURL = binary
      process.arguments = ["health"] + arguments
      var inherited = ProcessInfo.processInfo.environment
      inherited["PORT"] = nil
      inherited["INNERPEACE_PORT"] = nil
      process.environment = inherited.merging(environment) { $1 }
      let output = Pipe()
      let error = Pipe()
      process.standardOutput = output
      process.standardError = error
      process.standardInput = FileHandle.nullDevice
      try process.run()
      let outputBytes = output.fileHandleForReading.readDataToEndOfFile()
      let errorBytes = error.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      return Run(
        status: process.terminationStatus, output: String(decoding: outputBytes, as: UTF8.self),
        error: String(decoding: errorBytes, as: UTF8.self))
    }
  }

  /// A loopback port nothing listens on: bound, then closed, so the kernel refuses connections.
  func portNobodyListensOn() throws -> Int {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
      }
    }
    try #require(bound)
    return Int(UInt16(bigEndian: address.sin_port))
  }

  /// 200 from `/healthz`: exit 0, the body on stdout, nothing on stderr; the port from `--port`,
  /// from `PORT`, and from `INNERPEACE_PORT` over `PORT` (as serve takes them).
  @Test(.timeLimit(.minutes(5)))
  func healthyServiceExitsZero() async throws {
    let server = try await ServerProcess.start(arguments: ["serve", "--port", "0", "--concurrency", "1"])
    defer { server.stop() }
    let port = try #require(server.port, "\(server.stderr)")
    let unused = try portNobodyListensOn()

    let byFlag = try await health(["--port", "\(port)"])
    #expect(byFlag.status == 0, "\(byFlag.error)")
    #expect(byFlag.output.contains(#""status":"ok""#), "\(byFlag.output)")
    #expect(byFlag.error.isEmpty)

    let byPort = try await health([], environment: ["PORT": "\(port)"])
    #expect(byPort.status == 0, "\(byPort.error)")
    let byOwnVariable = try await health([], environment: ["PORT": "\(unused)", "INNERPEACE_PORT": "\(port)"])
    #expect(byOwnVariable.status == 0, "\(byOwnVariable.error)")
  }

  /// Nothing listening: exit 1 and one line saying so, naming the address.
  @Test(.timeLimit(.minutes(5)))
  func nothingListeningExitsOneWithOneLine() async throws {
    let port = try portNobodyListensOn()
    let run = try await health(["--port", "\(port)"])
    #expect(run.status == 1)
    #expect(run.error == "innerpeace: cannot connect to 127.0.0.1:\(port): connection refused\n")
    #expect(run.output.isEmpty)

    let badVariable = try await health([], environment: ["PORT": "http"])
    #expect(badVariable.status != 0)
    #expect(badVariable.error.contains("PORT=http is not a port"), "\(badVariable.error)")
  }

  /// A 503 (the service past `--max-connections`, its one connection held): exit 1 and one line
  /// with the status and the body.
  @Test(.timeLimit(.minutes(5)))
  func serviceUnavailableExitsOne() async throws {
    let server = try await ServerProcess.start(arguments: [
      "serve", "--port", "0", "--concurrency", "1", "--max-connections", "1",
    ])
    defer { server.stop() }
    let port = try #require(server.port, "\(server.stderr)")
    // The one connection, held open once the server has answered on it (so it has accepted it).
    let held = try loopbackSocket(port: port)
    defer { close(held) }
    let request = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
    #expect(request.withUnsafeBytes { send(held, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == request.count)
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while !String(decoding: answer, as: UTF8.self).hasSuffix("}") {
      let count = buffer.withUnsafeMutableBytes { recv(held, $0.baseAddress, $0.count, 0) }
      try #require(count > 0, "the held connection closed: \(String(decoding: answer, as: UTF8.self))")
      answer += buffer[0..<count]
    }

    let run = try await health(["--port", "\(port)"])
    #expect(run.status == 1)
    #expect(run.error.hasPrefix("innerpeace: not healthy: 503 {"), "\(run.error)")
    #expect(run.error.filter { $0 == "\n" }.count == 1, "\(run.error)")
  }

  /// `--ready` asks `/readyz`: exit 0 once the service is ready. `/readyz` comes with issue 20's
  /// readiness item (another branch); until it is merged this test is skipped, since the route
  /// table answers 404.
  @Test(
    .timeLimit(.minutes(5)),
    .enabled(
      if: (try? String(contentsOf: packageRoot.appendingPathComponent("Resources/openapi.yaml"), encoding: .utf8))?
        .contains("/readyz:") == true,
      "needs /readyz (issue 20's readiness, merged separately)"))
  func readyServiceExitsZero() async throws {
    let server = try await ServerProcess.start(arguments: ["serve", "--port", "0", "--concurrency", "1"])
    defer { server.stop() }
    let port = try #require(server.port, "\(server.stderr)")
    var run = try await health(["--ready", "--port", "\(port)"])
    // Ready within a bounded number of tries (the worker may still be starting: a 503).
    for _ in 0..<200 where run.status != 0 {
      #expect(run.error.hasPrefix("innerpeace: not ready: 503 {"), "\(run.error)")
      run = try await health(["--ready", "--port", "\(port)"])
    }
    #expect(run.status == 0, "\(run.error)")
    #expect(run.output.contains(#""status":"ready""#), "\(run.output)")
  }
}
