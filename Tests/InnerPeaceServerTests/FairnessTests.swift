import Dispatch
import Foundation
import HTTPTypes
import InnerPeace
import NIOConcurrencyHelpers
import Testing

@testable import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// No client can starve the others: a limit on connections per client address, and a share of
/// the render workers and queue per client. Unit tests of the pieces, then live servers where a
/// hostile client (127.0.0.2) and an honest one (127.0.0.3) meet.
@Suite(.serialized, .tags(.live)) struct FairnessTests {
  // MARK: Client address

  @Test func clientAddressIsThePeerUnlessForwardedHeadersAreTrusted() {
    let headers: HTTPFields = [
      HTTPField.Name("X-Forwarded-For")!: "6.6.6.6, 10.0.0.7", HTTPField.Name("Forwarded")!: "for=5.5.5.5",
    ]
    #expect(ClientAddress.of(peer: "127.0.0.9", headers: headers, trustsForwardedHeaders: false) == "127.0.0.9")
    // The last value is the one the nearest proxy added; what the client sent comes before it.
    #expect(ClientAddress.of(peer: "127.0.0.9", headers: headers, trustsForwardedHeaders: true) == "10.0.0.7")
    #expect(ClientAddress.of(peer: "127.0.0.9", headers: [:], trustsForwardedHeaders: true) == "127.0.0.9")
  }

  @Test func forwardedForTakesTheLastValueOfTheLastField() {
    #expect(ClientAddress.lastForwardedFor(["1.1.1.1", "2.2.2.2, 3.3.3.3"]) == "3.3.3.3")
    #expect(ClientAddress.lastForwardedFor(["1.1.1.1,4.4.4.4:8080"]) == "4.4.4.4")
    #expect(ClientAddress.lastForwardedFor(["[2001:db8::1]:443"]) == "2001:db8::1")
    #expect(ClientAddress.lastForwardedFor(["2001:db8::2"]) == "2001:db8::2")
    #expect(ClientAddress.lastForwardedFor(["1.1.1.1, "]) == nil)
    #expect(ClientAddress.lastForwardedFor([]) == nil)
    let long = String(repeating: "a", count: 500)
    #expect(ClientAddress.lastForwardedFor([long])?.count == ClientAddress.maximumLength)
  }

  /// RFC 7239: elements by commas, pairs by semicolons, quoted values (IPv6 with a port).
  @Test func forwardedIsReadPerRFC7239() {
    #expect(ClientAddress.lastForwarded(["for=1.1.1.1, for=2.2.2.2;proto=https"]) == "2.2.2.2")
    #expect(ClientAddress.lastForwarded(["for=1.1.1.1", "proto=http;For=\"[2001:db8::3]:4711\""]) == "2001:db8::3")
    #expect(ClientAddress.lastForwarded(["for=\"a,b\", by=9.9.9.9"]) == nil, "the last element has no for=")
    #expect(ClientAddress.lastForwarded(["for=\"x,y\""]) == "x,y")
    #expect(ClientAddress.lastForwarded(["for=_hidden"]) == "_hidden")
    #expect(ClientAddress.lastForwarded([]) == nil)
  }

  @Test func tallyCountsPerClientAndForgetsClientsAtZero() {
    let tally = ClientTally()
    #expect(tally.take("a", limit: 2))
    #expect(tally.take("a", limit: 2))
    #expect(!tally.take("a", limit: 2))
    #expect(tally.take("b", limit: 2))
    tally.release("a")
    #expect(tally.take("a", limit: 2))
    tally.release("a")
    tally.release("a")
    tally.release("b")
    #expect(tally.clients == 0)
    tally.release("nobody")
    #expect(tally.count("nobody") == 0)
  }

  // MARK: Render admission

  /// Two workers and a queue of four: one client gets one worker and two places in the queue;
  /// past that it is refused while another client is still admitted. Without a client (no live
  /// connection) only the totals count.
  @Test func admissionGivesOneClientHalfTheWorkersAndHalfTheQueue() {
    let gate = RenderGate(workers: 2, queueDepth: 4, rendersPerClient: 1, queuedPerClient: 2)
    #expect(gate.admittedPerClient == 3)
    for _ in 0..<3 { #expect(gate.admit(client: "flood")) }
    #expect(gate.tryAdmit(client: "flood") == .clientShareTaken, "a fourth render of one client is past its share")
    for _ in 0..<3 { #expect(gate.admit(client: "honest")) }
    #expect(gate.tryAdmit(client: "third") == .poolFull, "the pool as a whole is full")
    #expect(gate.tryAdmit(client: "flood") == .poolFull)
    gate.leave(client: "flood")
    #expect(gate.admit(client: "flood"))
    #expect(!gate.admit(client: nil))
    gate.leave(client: "honest")
    #expect(gate.admit(client: nil), "no client: only the total counts")
    #expect(gate.counts(client: "flood").admittedForClient == 3)
  }

  /// Shares never ask for more than there is: rendersPerClient above the workers is the workers.
  @Test func shareIsCappedByThePool() {
    #expect(RenderGate(workers: 2, queueDepth: 0, rendersPerClient: 256, queuedPerClient: 9).admittedPerClient == 2)
    #expect(RenderGate(workers: 4, queueDepth: 8).admittedPerClient == 12)
  }

  /// A client at its share of running renders waits while another client's render, which came
  /// later, takes the free worker; when the first client's render ends its next one starts.
  @Test(.timeLimit(.minutes(5)))
  func turnsSkipAClientAtItsShare() async throws {
    let gate = RenderGate(workers: 2, queueDepth: 4, rendersPerClient: 1, queuedPerClient: 2)
    await gate.startRendering(client: "flood")
    let order = NIOLockedValueBox<[String]>([])
    let second = Task {
      await gate.startRendering(client: "flood")
      order.withLockedValue { $0.append("flood-2") }
    }
    while gate.counts().waiting < 1 { await Task.yield() }
    // The flood's second render waits, though a worker is free: the honest one starts at once.
    await gate.startRendering(client: "honest")
    order.withLockedValue { $0.append("honest") }
    #expect(gate.counts(client: "flood").runningForClient == 1)
    #expect(gate.counts().running == 2)
    gate.stopRendering(client: "honest")
    #expect(gate.counts().waiting == 1, "a free worker still does not go past the flood's share")
    gate.stopRendering(client: "flood")
    await second.value
    #expect(order.withLockedValue { $0 } == ["honest", "flood-2"])
    #expect(gate.counts(client: "flood").runningForClient == 1)
    gate.stopRendering(client: "flood")
    #expect(gate.counts().running == 0)
  }

  /// Slots go to the oldest waiting render whose client is under its share.
  @Test(.timeLimit(.minutes(5)))
  func freeSlotsGoOldestFirst() async throws {
    let gate = RenderGate(workers: 1, queueDepth: 8)
    await gate.startRendering(client: nil)
    let order = NIOLockedValueBox<[Int]>([])
    var tasks: [Task<Void, Never>] = []
    for index in 0..<3 {
      tasks.append(
        Task {
          await gate.startRendering(client: "c\(index)")
          order.withLockedValue { $0.append(index) }
          gate.stopRendering(client: "c\(index)")
        })
      while gate.counts().waiting < index + 1 { await Task.yield() }
    }
    gate.stopRendering(client: nil)
    for task in tasks { await task.value }
    #expect(order.withLockedValue { $0 } == [0, 1, 2])
  }

  @Test func perClientLimitsAreValidatedWithOneLine() throws {
    let cases: [(String, (inout ServerConfiguration) -> Void)] = [
      ("--max-connections-per-client", { $0.maxConnectionsPerClient = 0 }),
      ("--max-renders-per-client", { $0.maxRendersPerClient = 0 }),
      ("--max-queued-per-client", { $0.maxQueuedPerClient = -1 }),
    ]
    for (flag, change) in cases {
      var configuration = ServerConfiguration()
      change(&configuration)
      do {
        try configuration.validate()
        Issue.record("\(flag) was accepted")
      } catch {
        #expect(error.description.hasPrefix(flag), "\(error)")
        #expect(!error.description.contains("\n"))
      }
    }
    var defaults = ServerConfiguration()
    defaults.concurrency = 2
    defaults.queueDepth = 4
    #expect(defaults.connectionsPerClient == 64)
    #expect(defaults.rendersPerClient == 1 && defaults.queuedPerClient == 2)
    defaults.trustsForwardedHeaders = true
    #expect(defaults.connectionsPerClient == defaults.maxConnections, "behind a proxy, every connection is its")
  }

  // MARK: Live: a hostile client beside an honest one

  /// A client holding more connections than the whole server allows (1,030 against the default
  /// 1,024, as in the issue) gets its share (64) and fast 503s past it, and another client's
  /// requests are still answered. Before the per-client limit, the hostile client held all 1,024
  /// and the honest one got only 503s.
  @Test(.timeLimit(.minutes(2)), .enabled(if: secondLoopbackAddressWorks))
  func idleConnectionsOfOneClientLeaveRoomForAnother() async throws {
    var configuration = testConfiguration()
    // No held connection may reach the idle timeout while the 1,030 are opened one by one (over
    // 30 s under ThreadSanitizer): its slot would go to a later one.
    configuration.idleTimeoutSeconds = 3600
    #expect(configuration.maxConnections == 1024 && configuration.connectionsPerClient == 64)
    try await withServer(renderer: CannedRenderer(base: try realRenderer()), configuration) { port in
      try await Self.idleFlood(port)
    }
  }

  private static func idleFlood(_ port: Int) async throws {
    let (held, statuses) = try await onOwnThread { () -> ([TestSocket], [Int]) in
      var held: [TestSocket] = []
      var statuses: [Int] = []
      for _ in 0..<1030 {
        let socket = try TestSocket(port: port, source: hostileAddress)
        // A refused connection is closed at once: the request may meet a reset, not the 503.
        try? socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        let status = (try? socket.readResponse(timeout: 10))?.status ?? 0
        statuses.append(status)
        if status == 200 { held.append(socket) }
      }
      return (held, statuses)
    }
    #expect(statuses.filter { $0 == 200 }.count == 64, "\(statuses.filter { $0 == 200 }.count) served")
    #expect(statuses.allSatisfy { $0 == 200 || $0 == 503 || $0 == 0 }, "\(Set(statuses))")
    #expect(statuses.contains(503), "a refusal is a 503 when the client reads it before the close")

    // The honest client: every request answered, on new connections and on one kept open.
    let honest = try await onOwnThread { () -> [Int] in
      var statuses: [Int] = []
      for _ in 0..<10 {
        let socket = try TestSocket(port: port, source: honestAddress)
        try socket.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        statuses.append(try replyOf(socket.readToEnd(timeout: 10)).status)
      }
      let kept = try TestSocket(port: port, source: honestAddress)
      for _ in 0..<5 {
        try kept.send("GET /quotes/1 HTTP/1.1\r\nHost: x\r\n\r\n")
        statuses.append(try kept.readResponse(timeout: 10).status)
      }
      return statuses
    }
    #expect(honest == Array(repeating: 200, count: 15), "\(honest)")
    #expect(held.count == 64)
  }

  /// `--concurrency 2 --queue 4`: a client sending six slow custom cards gets one worker and
  /// two places in the queue, and 503 with Retry-After for the other three, while another
  /// client's cards render on the second worker. Before, the six filled the pool and the honest
  /// client got 503 for every card.
  @Test(.timeLimit(.minutes(2)), .enabled(if: secondLoopbackAddressWorks))
  func slowCardsOfOneClientLeaveAWorkerForAnother() async throws {
    var configuration = testConfiguration(concurrency: 2, queueDepth: 4, cacheMegabytes: 0)
    configuration.retryAfterSeconds = 3
    let renderer = GatedRenderer(base: CannedRenderer(base: try realRenderer()))
    try await withServer(renderer: renderer, configuration) { port in
      defer { renderer.open() }
      try await Self.renderFlood(port, renderer)
    }
  }

  private static func renderFlood(_ port: Int, _ renderer: GatedRenderer) async throws {
    let flood = try await onOwnThread {
      try (0..<6).map { index -> TestSocket in
        let socket = try TestSocket(port: port, source: hostileAddress)
        try socket.send("GET /card.png?text=flood-\(index) HTTP/1.1\r\nHost: x\r\n\r\n")
        return socket
      }
    }
    // Each refusal is an answer; the admitted ones wait on the gate.
    let refused = try await onOwnThread { try responses(on: flood, count: 3, timeout: 20) }
    #expect(refused.count == 3, "the flood's fourth to sixth cards are past its share: \(refused)")
    for (_, reply) in refused {
      let error = expectError(reply, status: 503)
      #expect((error["message"] as? String)?.contains("this client has its share") == true, "\(reply)")
      #expect(reply.header("Retry-After") == "3")
    }
    #expect(try await onOwnThread { renderer.waitUntilEntered(1, timeout: 20) }, "one flood card is rendering")

    let honest = try await onOwnThread { () -> [Reply] in
      try (0..<4).map { index in
        let socket = try TestSocket(port: port, source: honestAddress)
        try socket.send("GET /card.png?text=honest-\(index) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        return try replyOf(socket.readToEnd(timeout: 20))
      }
    }
    for reply in honest { expectCard(reply, format: "png") }
    #expect(renderer.entered == 1, "the flood never had a second worker")

    // Once the slow cards end, the flood's admitted cards are answered too.
    renderer.open()
    let refusedSockets = Set(refused.map(\.0))
    let waiting = flood.indices.filter { !refusedSockets.contains($0) }.map { flood[$0] }
    let late = try await onOwnThread { try responses(on: waiting, count: waiting.count, timeout: 20) }
    #expect(late.map(\.1.status) == [200, 200, 200], "\(late.map(\.1))")
  }
}

private let hostileAddress = "127.0.0.2"

/// Runs `body` against a live server (``LiveServer``), stopping it also when `body` throws.
private func withServer<Renderer: CardRendering>(
  renderer: Renderer, _ configuration: ServerConfiguration, _ body: @Sendable (Int) async throws -> Void
) async throws {
  try await LiveServer.with(renderer: renderer, configuration: configuration) { port, _ in try await body(port) }
}
private let honestAddress = "127.0.0.3"

/// Whether a socket can be bound to 127.0.0.2 (Linux: all of 127/8 is loopback; macOS has only
/// 127.0.0.1 unless an alias is added).
private let secondLoopbackAddressWorks: Bool = {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(descriptor) }
  var local = sockaddr_in()
  local.sin_family = sa_family_t(AF_INET)
  local.sin_addr.s_addr = inet_addr(hostileAddress)
  return withUnsafePointer(to: &local) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
  }
}()

/// The first `count` whole responses on `sockets`, by index, as they become readable (poll);
/// fewer if `timeout` seconds pass first.
private func responses(on sockets: [TestSocket], count: Int, timeout: Double) throws -> [(Int, Reply)] {
  var answered: [(Int, Reply)] = []
  let deadline = Date().addingTimeInterval(timeout)
  while answered.count < count && Date() < deadline {
    var pollers = sockets.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    let ready = poll(&pollers, nfds_t(pollers.count), 100)
    guard ready > 0 else { continue }
    for (index, poller) in pollers.enumerated() where poller.revents != 0 {
      guard !answered.contains(where: { $0.0 == index }) else { continue }
      answered.append((index, try sockets[index].readResponse(timeout: 10)))
    }
  }
  return answered
}

/// Renders custom texts starting with `flood` only once the test opens the gate (each signals
/// that it has started); everything else at once.
final class GatedRenderer: CardRendering, @unchecked Sendable {
  let base: CannedRenderer
  private let condition = NSCondition()
  private var isOpen = false
  private var enteredCount = 0

  init(base: CannedRenderer) { self.base = base }
  var catalog: Catalog { base.catalog }

  var entered: Int {
    condition.lock()
    defer { condition.unlock() }
    return enteredCount
  }

  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard {
    if case .text(let text, _) = request.quote, text.hasPrefix("flood") {
      condition.lock()
      enteredCount += 1
      condition.broadcast()
      while !isOpen { condition.wait() }
      condition.unlock()
    }
    return try base.render(request)
  }

  func open() {
    condition.lock()
    isOpen = true
    condition.broadcast()
    condition.unlock()
  }

  /// Waits (on the calling thread) until `count` gated renders have started.
  func waitUntilEntered(_ count: Int, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    condition.lock()
    defer { condition.unlock() }
    while enteredCount < count {
      guard condition.wait(until: deadline) else { return enteredCount >= count }
    }
    return true
  }
}
