import Testing

@testable import InnerPeaceServer

/// The connection's deadlines as a pure state machine: every event at an instant the test picks,
/// no clock read, no wait.
@Suite struct ConnectionDeadlinesTests {
  typealias Deadlines = ConnectionDeadlines<ContinuousClock.Instant>

  /// Short limits, in milliseconds, all different so that each expiry is told apart.
  static var limits: ConnectionLimits {
    var limits = ConnectionLimits(ServerConfiguration())
    limits.idle = .milliseconds(300)
    limits.header = .milliseconds(200)
    limits.body = .milliseconds(250)
    limits.write = .milliseconds(100)
    limits.drain = .milliseconds(500)
    limits.linger = .milliseconds(50)
    return limits
  }

  let start = ContinuousClock.now
  func at(_ milliseconds: Int) -> ContinuousClock.Instant { start.advanced(by: .milliseconds(milliseconds)) }

  /// The idle timeout runs while no request is under way, and counts from the moment the last
  /// response's last byte is in the socket, not from when it was handed over.
  @Test func idleCountsFromTheLastByteOfTheLastResponse() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    #expect(deadlines.nextDeadline?.at == at(300))
    #expect(deadlines.nextDeadline?.expiry == .idle)
    deadlines.requestStarted(at: at(10))
    deadlines.requestEnded()
    // The router works: no limit of the connection runs meanwhile.
    #expect(deadlines.nextDeadline == nil)
    deadlines.writeStarted(at: at(1_000))
    deadlines.writeFinished(at: at(1_050), accepted: true)
    #expect(deadlines.expiry(at: at(2_000)) == nil, "the response is not finished")
    deadlines.responseFinished(at: at(2_000))
    #expect(deadlines.nextDeadline?.at == at(2_300))
    #expect(deadlines.expiry(at: at(2_299)) == nil)
    #expect(deadlines.expiry(at: at(2_300)) == .idle)
  }

  /// A head sent a byte at a time is cut at the header timeout from its first byte: more bytes do
  /// not move the deadline.
  @Test func slowHeadIsCutAtTheHeaderTimeoutFromItsFirstByte() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.bytesArrived(at: at(20))
    for step in 1..<20 { deadlines.bytesArrived(at: at(20 + step * 9)) }
    #expect(deadlines.nextDeadline?.expiry == .header)
    #expect(deadlines.expiry(at: at(219)) == nil)
    #expect(deadlines.expiry(at: at(220)) == .header)
  }

  /// A body is due within the body timeout from its head, however steadily its bytes arrive.
  @Test func slowBodyIsCutAtTheBodyTimeoutFromItsHead() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.bytesArrived(at: at(5))
    deadlines.requestStarted(at: at(40))
    for step in 1..<30 { deadlines.bytesArrived(at: at(40 + step * 10)) }
    #expect(deadlines.isReadingRequest)
    #expect(deadlines.expiry(at: at(289)) == nil)
    #expect(deadlines.expiry(at: at(290)) == .body)
    // Once the body has ended, the request is the router's.
    deadlines.requestEnded()
    #expect(deadlines.expiry(at: at(10_000)) == nil)
  }

  /// The write timeout is about progress: a reader that takes a slice before each write timeout
  /// is served for as long as it takes (here 40 slices, 39 times the limit); one that stops is cut a write
  /// timeout after the last slice it took.
  @Test func writeTimeoutCountsTimeWithoutProgress() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.requestStarted(at: at(0))
    deadlines.requestEnded()
    var now = 10
    for _ in 0..<8 { deadlines.writeStarted(at: at(now)) }
    for _ in 0..<8 {
      #expect(deadlines.expiry(at: at(now + 99)) == nil)
      now += 99
      deadlines.writeFinished(at: at(now), accepted: true)
    }
    for _ in 0..<32 {
      deadlines.writeStarted(at: at(now))
      #expect(deadlines.expiry(at: at(now + 99)) == nil)
      now += 99
      deadlines.writeFinished(at: at(now), accepted: true)
    }
    #expect(now - 10 > 39 * 100)
    deadlines.writeStarted(at: at(now))
    deadlines.writeStarted(at: at(now + 30))
    deadlines.writeFinished(at: at(now + 60), accepted: true)
    #expect(deadlines.nextDeadline?.expiry == .write)
    #expect(deadlines.expiry(at: at(now + 159)) == nil)
    #expect(deadlines.expiry(at: at(now + 160)) == .write)
  }

  /// A head that starts while a response is being written gets the whole header timeout once
  /// that response is finished.
  @Test func headDuringAResponseCountsFromItsEnd() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.requestStarted(at: at(0))
    deadlines.requestEnded()
    deadlines.bytesArrived(at: at(10))
    #expect(deadlines.expiry(at: at(5_000)) == nil)
    deadlines.responseFinished(at: at(5_000))
    #expect(deadlines.nextDeadline?.expiry == .header)
    #expect(deadlines.nextDeadline?.at == at(5_200))
  }

  /// The drain limit counts from the first notice only; it applies over any other limit.
  @Test func drainCountsFromTheFirstNotice() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.requestStarted(at: at(0))
    deadlines.requestEnded()
    let first = deadlines.drainStarted(at: at(100))
    let second = deadlines.drainStarted(at: at(400))
    #expect(first && !second)
    #expect(deadlines.expiry(at: at(599)) == nil)
    #expect(deadlines.expiry(at: at(600)) == .drain)
  }

  /// Closing: input is read for the linger only, and no idle or header limit applies then.
  @Test func lingerEndsTheClose() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.requestStarted(at: at(0))
    deadlines.requestEnded()
    deadlines.responseFinished(at: at(20))
    deadlines.lingerStarted(at: at(20))
    deadlines.lingerStarted(at: at(60))
    deadlines.bytesArrived(at: at(30))
    #expect(deadlines.nextDeadline?.expiry == .linger)
    #expect(deadlines.expiry(at: at(69)) == nil)
    #expect(deadlines.expiry(at: at(70)) == .linger)
  }

  /// A head the parser refused owes an answer: no idle limit until it is written.
  @Test func refusedHeadOwesItsAnswer() {
    var deadlines = Deadlines(limits: Self.limits, now: at(0))
    deadlines.bytesArrived(at: at(0))
    deadlines.requestRefused()
    #expect(deadlines.nextDeadline == nil)
    deadlines.writeStarted(at: at(1))
    #expect(deadlines.nextDeadline?.expiry == .write)
  }
}
