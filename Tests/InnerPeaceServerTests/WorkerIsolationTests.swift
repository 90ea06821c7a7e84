import CInnerPeaceProcess
import Foundation
import InnerPeace
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOExtras
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A request through the worker wire's bytes and back.
func wireRoundTrip(_ request: CardRequest) throws -> CardRequest? {
  let back = try WorkerFrame(decoding: WorkerFrame(.render(request)).encoded())
  guard case .render(let decoded) = back.header.message else { return nil }
  return decoded
}

/// A card's facts and bytes through the worker wire's bytes and back.
func wireRoundTrip(_ card: RenderedCard) throws -> (facts: CardFacts, bytes: [UInt8])? {
  let frame = WorkerFrame(.card(CardFacts(card), restingBytes: 0), body: ByteBuffer(bytes: card.bytes))
  let back = try WorkerFrame(decoding: frame.encoded())
  guard case .card(let facts, _) = back.header.message else { return nil }
  return (facts, Array(back.body.readableBytesView))
}

/// `innerpeace serve` with render worker processes: a render that traps, aborts or hangs costs
/// its own request a 500 and nothing else. The faults are injected by the debug build's
/// `INNERPEACE_FAULT_*` variables (compiled out of release builds).
@Suite(.serialized, .tags(.live, .process, .binary)) struct WorkerIsolationTests {
  static let trap = "isolation-test-trap"
  static let abort = "isolation-test-abort"
  static let slow = "isolation-test-slow"
  static let hang = "isolation-test-hang"

  static let faults = [
    "INNERPEACE_FAULT_TRAP_TEXT": trap, "INNERPEACE_FAULT_ABORT_TEXT": abort, "INNERPEACE_FAULT_SLOW_TEXT": slow,
    "INNERPEACE_FAULT_HANG_TEXT": hang,
  ]

  /// A trapping render (SIGILL) while a slow one runs on the other worker: the trap gets the JSON
  /// 500, the slow one its whole card, later requests 200, the worker is replaced, no zombie is
  /// left, no descriptor of the server leaks into a worker, and SIGTERM stops the workers.
  @Test(.timeLimit(.minutes(2)))
  func trappingRenderCostsOneRequest() async throws {
    let server = try await WorkerServer.start(arguments: ["--concurrency", "2"], environment: Self.faults)
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    // Both workers are ready before the server listens.
    let before = server.runningChildren()
    #expect(before.count == 2, "two workers at start: \(before)")
    for worker in before {
      let leaked = descriptorLeaks(in: worker)
      #expect(leaked.isEmpty, "descriptors of worker \(worker) beyond its channel and stderr: \(leaked)")
    }

    let slow = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=\(Self.slow) HTTP/1.1")
    }
    // The slow render is on a worker (it says so on stderr) before the trap is asked for.
    #expect(await server.waitForLine(containing: "render worker: slow fault") != nil, "\(server.stderr)")
    let trapped = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=\(Self.trap) HTTP/1.1").response(timeout: 20)
    }
    #expect(trapped.status == 500)
    #expect(trapped.header("content-type")?.hasPrefix("application/json") == true)
    #expect(trapped.text == #"{"error":{"message":"the card could not be rendered"}}"#)

    let slowResponse = try await onOwnThread { try slow.response(timeout: 20) }
    #expect(slowResponse.status == 200, "the render in flight on the other worker: \(slowResponse.status)")
    #expect(imageKind(slowResponse.body) == "png")
    #expect(imageDimensions(slowResponse.body).map { $0.width == 1200 && $0.height == 630 } == true)

    for index in 0..<3 {
      let response = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=after-\(index) HTTP/1.1").response(timeout: 20)
      }
      #expect(response.status == 200)
      #expect(imageKind(response.body) == "png")
    }
    let health = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /healthz HTTP/1.1").response(timeout: 10)
    }
    #expect(health.status == 200 && health.text.contains("\"ok\""))

    // The two at start and the trapped one's replacement.
    let after = try await server.waitForWorkerStarts(3)
    #expect(after.count == 2, "the worker count recovers: \(after)")
    #expect(Set(after) != Set(before), "the trapped worker was replaced")
    #expect(server.zombieChildren().isEmpty, "zombies: \(server.zombieChildren())")
    #expect(
      await server.waitForLine(containing: "killed by signal 4 (SIGILL)") != nil,
      "the cause is logged: \(server.stderr)")
    let metrics = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /metrics HTTP/1.1").response(timeout: 10)
    }
    #expect(metricValue(metrics.text, "innerpeace_render_workers") == 2)
    #expect(metricValue(metrics.text, "innerpeace_render_worker_failures_total") == 1)

    server.signal(SIGTERM)
    let status = try await server.waitForExit(timeout: .seconds(10))
    #expect(status == 0, "exit status after SIGTERM; stderr: \(server.stderr)")
    for worker in after { #expect(!processIsRunning(worker), "worker \(worker) outlived the server") }
  }

  /// An abort (SIGABRT, as from a C library's assertion) and a render that never ends (killed at
  /// --render-timeout) each cost one 500; the single worker is replaced each time.
  @Test(.timeLimit(.minutes(2)))
  func abortAndHangCostOneRequestEach() async throws {
    let server = try await WorkerServer.start(
      arguments: ["--concurrency", "1", "--render-timeout", "2"], environment: Self.faults)
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    for text in [Self.abort, Self.hang] {
      let response = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=\(text) HTTP/1.1").response(timeout: 20)
      }
      #expect(response.status == 500, "\(text)")
      let next = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=after-\(text) HTTP/1.1").response(timeout: 20)
      }
      #expect(next.status == 200, "after \(text)")
    }
    #expect(await server.waitForLine(containing: "killed by signal 6 (SIGABRT)") != nil, "\(server.stderr)")
    #expect(await server.waitForLine(containing: "gave no answer before the deadline") != nil, "\(server.stderr)")
    // The one at start and the replacements of the aborted and the hung one.
    #expect(try await server.waitForWorkerStarts(3).count == 1, "\(server.stderr)")
    #expect(server.zombieChildren().isEmpty)
  }

  /// Workers that cannot start (here: while a file exists) are retried with back-off, and renders
  /// meanwhile get 503 with Retry-After; once they start again, renders get 200.
  @Test(.timeLimit(.minutes(2)))
  func crashLoopAnswers503ThenRecovers() async throws {
    let flag = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-no-start-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: flag) }
    var environment = Self.faults
    environment["INNERPEACE_FAULT_START_FILE"] = flag.path
    let server = try await WorkerServer.start(arguments: ["--concurrency", "1"], environment: environment)
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")

    _ = FileManager.default.createFile(atPath: flag.path, contents: Data())
    let trapped = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=\(Self.trap) HTTP/1.1").response(timeout: 20)
    }
    #expect(trapped.status == 500)
    // The trapped worker and its replacement, which cannot start: no worker runs (the pool logs
    // the failed start once it has counted it).
    #expect(await server.waitForLine(containing: "failed to start") != nil, "\(server.stderr)")
    let down = try await server.metrics()
    #expect((metricValue(down, "innerpeace_render_worker_failures_total") ?? 0) >= 2, "\(down)")
    #expect(metricValue(down, "innerpeace_render_workers") == 0, "\(down)")
    let refused = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=while-down HTTP/1.1").response(timeout: 20)
    }
    #expect(refused.status == 503, "\(refused.status) \(refused.text)")
    #expect(refused.header("retry-after").flatMap(Int.init).map { $0 >= 1 } == true)
    #expect(refused.header("content-type")?.hasPrefix("application/json") == true)

    try FileManager.default.removeItem(at: flag)
    // The back-off ends within a few seconds and a worker starts: the one at start, then this.
    _ = try await server.waitForWorkerStarts(2)
    #expect(metricValue(try await server.metrics(), "innerpeace_render_workers") == 1)
    let recovered = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=recovered HTTP/1.1").response(timeout: 20)
    }
    #expect(recovered.status == 200, "renders answer 200 once workers start again")
  }

  /// A worker that cannot start at all stops `serve` at start-up: exit 70, one line naming the
  /// cause, never a "listening" line.
  @Test(.timeLimit(.minutes(5)))
  func workerThatCannotStartFailsStartUp() async throws {
    let flag = FileManager.default.temporaryDirectory.appendingPathComponent("innerpeace-no-start-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: flag.path, contents: Data())
    defer { try? FileManager.default.removeItem(at: flag) }
    let server = try await WorkerServer.start(
      arguments: ["--concurrency", "1"], environment: ["INNERPEACE_FAULT_START_FILE": flag.path])
    defer { server.stop() }
    #expect(server.port == nil)
    let status = try await server.waitForExit(timeout: .seconds(20))
    #expect(status == 70, "\(server.stderr)")
    #expect(server.stderr.contains("render worker: did not start"), "\(server.stderr)")
    #expect(!server.stderr.contains("listening"))
  }

  /// Workers die with the server even when it is killed outright (no drain, no closing).
  @Test(.timeLimit(.minutes(5)))
  func workersDieWithAKilledServer() async throws {
    let server = try await WorkerServer.start(arguments: ["--concurrency", "2"], environment: Self.faults)
    defer { server.stop() }
    _ = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let workers = server.runningChildren()
    #expect(workers.count == 2)
    // Watched from before the kill, so a worker's pid cannot be reused unseen.
    let exits = workers.map(ProcessExit.init)
    server.signal(SIGKILL)
    _ = try await server.waitForExit(timeout: .seconds(10))
    // PR_SET_PDEATHSIG kills them as the server's threads end.
    for exit in exits {
      #expect(try await exit.wait(timeout: .seconds(10)), "worker \(exit.pid) outlived a killed server")
    }
  }

  /// A worker sent a hello of another wire version refuses it: it exits with status 1 and says
  /// why on stderr (the server's log), instead of misreading the requests that would follow.
  @Test(.timeLimit(.minutes(5)))
  func workerRefusesAnotherWireVersion() async throws {
    let binary = try ServerProcess.binary()
    var pair: [Int32] = [-1, -1]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    defer { close(pair[0]) }
    let process = Process()
    process.executableURL = binary
    process.arguments = ["render-worker", "--background-cache-mb", "0"]
    let childEnd = FileHandle(fileDescriptor: pair[1], closeOnDealloc: true)
    process.standardInput = childEnd
    process.standardOutput = childEnd
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    try childEnd.close()
    let frame = WorkerFrame(header: WorkerWireHeader(.hello, version: 99), body: ByteBuffer()).encoded()
    let bytes =
      [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: frame.readableBytes >> $0) } + Array(frame.readableBytesView)
    #expect(bytes.withUnsafeBytes { send(pair[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
    try await onOwnThread { process.waitUntilExit() }
    #expect(process.terminationStatus == 1)
    let stderr = String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self)
    #expect(stderr.contains("wire version 99 where this build speaks"), "\(stderr)")
  }

  /// A worker killed while idle is seen at once, with no request: the workers gauge drops and
  /// comes back to two with a new worker, the failure is counted and logged, and the dead worker
  /// is reaped (no `<defunct>` left).
  @Test(.timeLimit(.minutes(5)))
  func idleWorkerDeathIsSeenAndReplaced() async throws {
    let server = try await WorkerServer.start(arguments: ["--concurrency", "2"], environment: Self.faults)
    defer { server.stop() }
    _ = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let before = server.runningChildren()
    try #require(before.count == 2, "two workers at start: \(before)")
    let victim = before[0]
    #expect(kill(victim, SIGKILL) == 0)
    // Seen without any request: logged (once counted), then replaced.
    let line = await server.waitForLine(containing: "ended while idle")
    #expect(line?.contains("killed by signal 9 (SIGKILL)") == true, "\(server.stderr)")
    let after = try await server.waitForWorkerStarts(3)
    let metrics = try await server.metrics()
    #expect(metricValue(metrics, "innerpeace_render_worker_failures_total") == 1, "\(metrics)")
    #expect(metricValue(metrics, "innerpeace_render_workers") == 2, "\(metrics)")
    #expect(after.count == 2 && !after.contains(victim) && after.contains(before[1]), "\(before) -> \(after)")
    #expect(processStat(victim) == nil, "the killed worker is reaped: \(String(describing: processStat(victim)))")
    #expect(server.zombieChildren().isEmpty, "zombies: \(server.zombieChildren())")
  }

  /// The control: with --in-process the same trapping request takes the whole server down. It
  /// proves the trigger really traps, so the tests above pass because of the worker processes.
  @Test(.timeLimit(.minutes(5)))
  func inProcessTrapStopsTheServer() async throws {
    let server = try await WorkerServer.start(arguments: ["--in-process"], environment: Self.faults)
    defer { server.stop() }
    let port = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let connection = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=\(Self.trap) HTTP/1.1")
    }
    _ = try? await onOwnThread { try connection.response(timeout: 20) }
    let status = try await server.waitForExit(timeout: .seconds(10))
    #expect(status != nil && status != 0, "the in-process server died of the trap")
  }

  /// The fault triggers exist in the debug binary (which these tests run: it must be there) and
  /// in no release binary.
  @Test func faultTriggersAreDebugOnly() throws {
    let debug = packageRoot.appendingPathComponent(".build/debug/innerpeace")
    let release = packageRoot.appendingPathComponent(".build/release/innerpeace")
    let marker = Array("INNERPEACE_FAULT_TRAP_TEXT".utf8)
    try #require(FileManager.default.fileExists(atPath: debug.path), "no debug binary at \(debug.path)")
    #expect(try [UInt8](Data(contentsOf: debug)).firstRange(of: marker) != nil, "the debug build has the trigger")
    if FileManager.default.fileExists(atPath: release.path) {
      #expect(try [UInt8](Data(contentsOf: release)).firstRange(of: marker) == nil, "a release build has a trigger")
    }
  }
}

// MARK: The server process and its workers

/// `innerpeace serve --port 0` (a ``ServerProcess``, logging at `debug` so that every worker's
/// start is a line on stderr) with extra environment variables, and what the tests need to see
/// of its worker processes.
final class WorkerServer: Sendable {
  let server: ServerProcess

  private init(server: ServerProcess) { self.server = server }

  var port: Int? { server.port }
  var stderr: String { server.stderr }
  var pid: pid_t { server.process.processIdentifier }

  static func start(arguments: [String], environment extra: [String: String]) async throws -> WorkerServer {
    WorkerServer(
      server: try await ServerProcess.start(
        arguments: ["serve", "--port", "0", "--host", "127.0.0.1", "--cache-mb", "0"] + arguments,
        environment: ["LOG_LEVEL": "debug"].merging(extra) { $1 }))
  }

  /// The server's child processes that are running (not zombies).
  func runningChildren() -> [pid_t] { children().filter { $0.state != "Z" }.map(\.pid) }

  func zombieChildren() -> [pid_t] { children().filter { $0.state == "Z" }.map(\.pid) }

  private func children() -> [(pid: pid_t, state: Character)] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { name -> (pid_t, Character)? in
      guard let child = pid_t(name), let stat = processStat(child), stat.parent == pid else { return nil }
      return (child, stat.state)
    }
  }

  /// Waits until the pool has logged `count` worker starts in all (the ones at start-up included:
  /// a replacement is a start too), then returns the workers running.
  func waitForWorkerStarts(_ count: Int) async throws -> [pid_t] {
    let starts = await server.waitForLines(containing: "render worker started", count: count)
    try #require(starts != nil, "fewer than \(count) worker starts: \(stderr)")
    return runningChildren()
  }

  /// The server's metrics, once.
  func metrics() async throws -> String {
    let port = try #require(port)
    return try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /metrics HTTP/1.1").response(timeout: 10)
    }.text
  }

  func waitForLine(containing text: String) async -> String? { await server.waitForLine(containing: text) }

  func signal(_ number: Int32) { server.signal(number) }

  func waitForExit(timeout: Duration) async throws -> Int32? { try await server.waitForExit(timeout: timeout) }

  /// Ends the server and any worker it left running, and removes the stderr file.
  func stop() {
    let workers = runningChildren()
    server.stop()
    for worker in workers where processIsRunning(worker) { kill(worker, SIGKILL) }
  }
}

/// The state letter and parent pid from /proc/PID/stat.
func processStat(_ pid: pid_t) -> (state: Character, parent: pid_t)? {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
    let close = text.lastIndex(of: ")")
  else { return nil }
  let fields = text[text.index(after: close)...].split(separator: " ")
  guard fields.count >= 2, let state = fields[0].first, let parent = pid_t(fields[1]) else { return nil }
  return (state, parent)
}

/// This process's children, one line each ("pid state wchan: command line"), for a test that
/// timed out waiting on one of them to say where each was.
func childProcessReport() -> String {
  let me = getpid()
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  let lines = entries.compactMap(pid_t.init).filter { processStat($0)?.parent == me }.sorted().map { pid in
    let read = { (name: String) in (try? String(contentsOfFile: "/proc/\(pid)/\(name)", encoding: .utf8)) ?? "?" }
    let command = read("cmdline").split(separator: "\0").joined(separator: " ")
    return "\(pid) \(processStat(pid).map { String($0.state) } ?? "?") \(read("wchan")): \(command)"
  }
  return lines.isEmpty ? "no child processes" : lines.joined(separator: "; ")
}

/// Whether a process exists and is not a zombie.
func processIsRunning(_ pid: pid_t) -> Bool { processStat(pid).map { $0.state != "Z" } ?? false }

/// The descriptors of a worker that are neither its channel to the server (fd 0, and its private
/// copy of it), its stderr (fd 2, and fd 1 pointed at it) nor its memory file for cards (fd 3):
/// each as "fd -> target".
func descriptorLeaks(in pid: pid_t) -> [String] {
  let folder = "/proc/\(pid)/fd"
  let target = { (fd: String) in (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)")) ?? "?"
  }
  let allowed: Set<String> = [target("0"), target("2")]
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
  // Descriptor 3 is the worker's own memory file for its cards (WorkerBodyFile), made for it.
  let bodyFile = { (fd: String) in fd == "3" && target(fd).hasPrefix("/memfd:innerpeace-card") }
  return entries.filter { !allowed.contains(target($0)) && !bodyFile($0) }.map { "\($0) -> \(target($0))" }
}

/// A process's exit, watched through a pidfd (it works for a process that is not our child, and
/// a pid reused after the exit is not mistaken for it).
struct ProcessExit: Sendable {
  let pid: pid_t
  private let descriptor: Int32

  init(_ pid: pid_t) {
    self.pid = pid
    descriptor = innerpeace_pidfd_open(pid)
  }

  /// Whether the process has ended: blocks (on a thread of its own) until it does, or until
  /// `timeout` (a hang guard) passes. Closes the pidfd.
  func wait(timeout: Duration) async throws -> Bool {
    // No pidfd: the process had already ended when it was asked for (ESRCH).
    guard descriptor >= 0 else { return !processIsRunning(pid) }
    let milliseconds = Int32(timeout / .milliseconds(1))
    return try await onOwnThread { [descriptor] in
      defer { close(descriptor) }
      var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
      while true {
        let ready = poll(&poller, 1, milliseconds)
        if ready < 0 && errno == EINTR { continue }
        return ready > 0
      }
    }
  }
}
