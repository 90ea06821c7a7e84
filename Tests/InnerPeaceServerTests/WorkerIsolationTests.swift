import Foundation
import InnerPeace
import NIOConcurrencyHelpers
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The frames between the server and its render worker processes.
@Suite struct WorkerWireTests {
  @Test(arguments: [
    CardRequest(seed: 7),
    CardRequest(
      preset: .story, quote: .index(12), picture: .named("aqua.jpg"), seed: .max, format: .webp, showsAuthor: false,
      alignment: .center, transparent: true),
    CardRequest(
      preset: .custom(try! CanvasSize(width: 1600, height: 900)), quote: .text("Breathe — ünïcödé 🌿", author: nil),
      seed: 0, format: .jpeg),
    CardRequest(preset: .classic, quote: .text("x", author: ""), seed: 1 << 63),
    CardRequest(quote: .text("it's \"x\" -- y...", author: "O'Brien"), seed: 2, typographicPunctuation: false),
    CardRequest(quote: .text("平和", author: nil), seed: 3, includesReport: true, language: LanguageTag("zh-Hant-TW")),
  ])
  func requestsRoundTrip(_ request: CardRequest) throws {
    #expect(try WorkerWire.decodeRequest(WorkerWire.encode(request)) == request)
  }

  @Test func everyErrorRoundTrips() throws {
    let errors: [InnerPeaceError] = [
      .catalogUnreadable(file: "q.json", reason: "r"), .catalogMalformed(file: "q", line: 3, column: 9, reason: "r"),
      .catalogInvalid(file: "p", reason: "r"), .pictureMissing(name: "a"), .pictureNameInvalid(name: "../a"),
      .pictureUnknown(name: "b"), .pictureUndecodable(name: "c", reason: "r"),
      .quoteIndexOutOfRange(index: -4, count: 50), .textInvalid(reason: "t"), .authorInvalid(reason: "a"),
      .presetUnknown("p"), .sizeInvalid(reason: "s"), .formatUnknown("gif"), .transparencyUnsupported(format: .jpeg),
      .fontsUnavailable(reason: "f"), .renderFailed(reason: "x"), .decodingFailed(reason: "d"),
      .encodingFailed(format: .jpeg, reason: "e"), .pictureChanged(name: "d"),
    ]
    for error in errors {
      #expect(try WorkerWire.decodeError(WorkerWire.encode(error)) == error)
    }
  }

  @Test func cardFactsRoundTrip() throws {
    var timings = StageTimings()
    timings.fit = 0.012
    timings.encode = 0.5
    let card = RenderedCard(
      bytes: [1, 2, 3], format: .png, size: try CanvasSize(width: 1200, height: 630), quoteIndex: 4,
      quote: Quote(text: "Calm", author: "Anon"), picture: nil, shareMessage: "\"Calm\" — Anon", fontSize: 88,
      truncated: true, layoutPasses: 9, timings: timings, missingGlyphs: 3)
    let back = try WorkerWire.decodeCard(facts: WorkerWire.encodeFacts(card), bytes: card.bytes)
    #expect(back.bytes == card.bytes)
    #expect(back.size == card.size && back.quoteIndex == 4 && back.quote == card.quote && back.picture == nil)
    #expect(back.fontSize == 88 && back.truncated && back.layoutPasses == 9 && back.shareMessage == card.shareMessage)
    #expect(back.timings.fit == 0.012 && back.timings.encode == 0.5)
    #expect(back.missingGlyphs == 3)
  }

  @Test func badFramesAreRefused() {
    let good = WorkerWire.encode(CardRequest(seed: 1))
    #expect(throws: WireError.self) { try WorkerWire.decodeRequest(Array(good.dropLast())) }
    #expect(throws: WireError.self) { try WorkerWire.decodeRequest(good + [0]) }
    let prefix = WorkerWire.prefix(.card, headerLength: 10, bodyLength: 10)
    #expect(throws: Never.self) { try WorkerWire.parsePrefix(prefix) }
    var otherVersion = prefix
    otherVersion[3] = 2
    let refused = otherVersion
    #expect(throws: WireError.self) { try WorkerWire.parsePrefix(refused) }
    let huge = WorkerWire.prefix(.card, headerLength: 10, bodyLength: WorkerWire.maximumBodyLength + 1)
    #expect(throws: WireError.self) { try WorkerWire.parsePrefix(huge) }
  }

  /// A card frame of about 1 MB crosses a socket pair whole (header and body in order), with the
  /// reader on another thread.
  @Test func largeCardCrossesASocketPair() async throws {
    var pair: [Int32] = [-1, -1]
    #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
    defer {
      close(pair[0])
      close(pair[1])
    }
    let body = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let header = WorkerWire.encode(.renderFailed(reason: "just a header"))
    let writer = FrameChannel(descriptor: pair[0], usesSend: true)
    let reader = FrameChannel(descriptor: pair[1], usesSend: false)
    // The writer blocks until the reader has taken most of the megabyte: it runs on a thread of its
    // own, started here (an `async let` child may wait for a busy cooperative pool until the
    // reader's deadline has passed, and then block in `send` for ever). If reading fails, the
    // reader's end is shut down, so the writer's `send` fails instead of blocking.
    let writerDone = DispatchSemaphore(value: 0)
    let sendFailure = NIOLockedValueBox<String?>(nil)
    let thread = Thread {
      do throws(FrameChannel.Failure) {
        try writer.sendFrame(.card, header: header, body: body)
      } catch {
        sendFailure.withLockedValue { $0 = error.description }
      }
      writerDone.signal()
    }
    thread.start()
    let received = Result { () throws(FrameChannel.Failure) in
      try reader.receiveFrame(deadline: .now + .seconds(60))
    }
    if case .failure = received { shutdown(pair[1], Int32(SHUT_RDWR)) }
    writerDone.wait()
    let frame = try received.get()
    #expect(sendFailure.withLockedValue { $0 } == nil)
    #expect(frame.kind == .card)
    #expect(frame.header == header)
    #expect(frame.body == body)
  }
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
    let before = try await server.waitForWorkers(2)
    #expect(before.count == 2, "two workers at start: \(before)")
    for worker in before {
      let leaked = descriptorLeaks(in: worker)
      #expect(leaked.isEmpty, "descriptors of worker \(worker) beyond its channel and stderr: \(leaked)")
    }

    let slow = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=\(Self.slow) HTTP/1.1")
    }
    try await Task.sleep(for: .milliseconds(300))
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

    let after = try await server.waitForWorkers(2)
    #expect(after.count == 2, "the worker count recovers: \(after)")
    #expect(Set(after) != Set(before), "the trapped worker was replaced")
    #expect(server.zombieChildren().isEmpty, "zombies: \(server.zombieChildren())")
    #expect(server.stderr.contains("killed by signal 4 (SIGILL)"), "the cause is logged: \(server.stderr)")
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
      let started = ContinuousClock.now
      let response = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=\(text) HTTP/1.1").response(timeout: 20)
      }
      #expect(response.status == 500, "\(text)")
      #expect(ContinuousClock.now - started < .seconds(10), "\(text)")
      let next = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=after-\(text) HTTP/1.1").response(timeout: 20)
      }
      #expect(next.status == 200, "after \(text)")
    }
    #expect(server.stderr.contains("killed by signal 6 (SIGABRT)"), "\(server.stderr)")
    #expect(server.stderr.contains("gave no answer before the deadline"), "\(server.stderr)")
    #expect(try await server.waitForWorkers(1).count == 1)
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
    try await Task.sleep(for: .milliseconds(500))
    let refused = try await onOwnThread {
      try RawHTTPConnection(port: port, request: "GET /card.png?text=while-down HTTP/1.1").response(timeout: 20)
    }
    #expect(refused.status == 503, "\(refused.status) \(refused.text)")
    #expect(refused.header("retry-after").flatMap(Int.init).map { $0 >= 1 } == true)
    #expect(refused.header("content-type")?.hasPrefix("application/json") == true)

    try FileManager.default.removeItem(at: flag)
    var recovered = false
    let deadline = ContinuousClock.now + .seconds(20)
    while !recovered, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(250))
      let response = try await onOwnThread {
        try RawHTTPConnection(port: port, request: "GET /card.png?text=recovered HTTP/1.1").response(timeout: 20)
      }
      recovered = response.status == 200
    }
    #expect(recovered, "renders answer 200 once workers start again")
    #expect(server.stderr.contains("failed to start"), "\(server.stderr)")
  }

  /// A worker that cannot start at all stops `serve` at start-up: exit 70, one line naming the
  /// cause, never a "listening" line.
  @Test(.timeLimit(.minutes(1)))
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
  @Test(.timeLimit(.minutes(1)))
  func workersDieWithAKilledServer() async throws {
    let server = try await WorkerServer.start(arguments: ["--concurrency", "2"], environment: Self.faults)
    defer { server.stop() }
    _ = try #require(server.port, "no 'listening on' line; stderr: \(server.stderr)")
    let workers = try await server.waitForWorkers(2)
    #expect(workers.count == 2)
    server.signal(SIGKILL)
    _ = try await server.waitForExit(timeout: .seconds(10))
    let deadline = ContinuousClock.now + .seconds(10)
    while workers.contains(where: processIsRunning), ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(!workers.contains(where: processIsRunning), "workers outlived a killed server")
  }

  /// The control: with --in-process the same trapping request takes the whole server down. It
  /// proves the trigger really traps, so the tests above pass because of the worker processes.
  @Test(.timeLimit(.minutes(1)))
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

  /// The fault triggers exist in the debug binary and in no release binary.
  @Test func faultTriggersAreDebugOnly() throws {
    let debug = packageRoot.appendingPathComponent(".build/debug/innerpeace")
    let release = packageRoot.appendingPathComponent(".build/release/innerpeace")
    let marker = Array("INNERPEACE_FAULT_TRAP_TEXT".utf8)
    if FileManager.default.fileExists(atPath: debug.path) {
      #expect(try [UInt8](Data(contentsOf: debug)).firstRange(of: marker) != nil, "the debug build has the trigger")
    }
    if FileManager.default.fileExists(atPath: release.path) {
      #expect(try [UInt8](Data(contentsOf: release)).firstRange(of: marker) == nil, "a release build has a trigger")
    }
  }
}

// MARK: The server process and its workers

/// `innerpeace serve --port 0` (a ``ServerProcess``) with extra environment variables, and what
/// the tests need to see of its worker processes.
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
        environment: extra, listenTimeout: .seconds(30)))
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

  /// Waits (up to 20 s) until `count` children run, and returns them.
  func waitForWorkers(_ count: Int) async throws -> [pid_t] {
    let deadline = ContinuousClock.now + .seconds(20)
    var running = runningChildren()
    while running.count != count, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
      running = runningChildren()
    }
    return running
  }

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

/// Whether a process exists and is not a zombie.
func processIsRunning(_ pid: pid_t) -> Bool { processStat(pid).map { $0.state != "Z" } ?? false }

/// The descriptors of a worker that are neither its channel to the server (fd 0, and its private
/// copy of it) nor its stderr (fd 2, and fd 1 pointed at it): each as "fd -> target".
func descriptorLeaks(in pid: pid_t) -> [String] {
  let folder = "/proc/\(pid)/fd"
  let target = { (fd: String) in (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(fd)")) ?? "?"
  }
  let allowed: Set<String> = [target("0"), target("2")]
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
  return entries.filter { !allowed.contains(target($0)) }.map { "\($0) -> \(target($0))" }
}
