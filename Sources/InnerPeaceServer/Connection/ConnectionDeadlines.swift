/// The deadlines of one HTTP/1 connection, as a pure state machine: every event says when it
/// happened, and ``nextDeadline`` says which limit runs out next and when. It reads no clock of
/// its own, so it is generic over the clock's instant: the connection's handler drives it with
/// its event loop's time (``LoopInstant``), tests with instants they choose.
///
///   waiting for a request   idle timeout from the end of the last response (or the accept)
///   receiving a head        header timeout from its first byte to its last
///   receiving a body        body timeout from the head to the end of the body
///   sending a response      write timeout: time without the socket accepting a byte
///   after a drain notice    drain timeout from the notice, then the connection is closed
///   closing                 linger timeout: how long input is still read after output closed
struct ConnectionDeadlines<Instant: InstantProtocol> where Instant.Duration == Duration {
  /// The limit that ran out; its raw value is the reason the log gives.
  enum Expiry: String {
    case idle = "idle"
    case header = "request head too slow"
    case body = "request body too slow"
    case write = "response not read"
    case drain = "drain limit reached"
    case linger = "linger over"
  }

  let limits: ConnectionLimits
  private var idleSince: Instant
  private var headStartedAt: Instant?
  private var requestStartedAt: Instant?
  /// Requests whose head has arrived (or that were refused) and whose response has not reached
  /// the socket.
  private(set) var openExchanges = 0
  private var pendingWrites = 0
  private var lastWriteProgress: Instant
  private(set) var drainStartedAt: Instant?
  private(set) var lingerUntil: Instant?

  /// A connection accepted at `now`: idle until a request starts.
  init(limits: ConnectionLimits, now: Instant) {
    self.limits = limits
    idleSince = now
    lastWriteProgress = now
  }

  /// Whether a request's head has arrived and its body has not ended.
  var isReadingRequest: Bool { requestStartedAt != nil }

  /// Raw bytes arrived: the first ones outside a request start a head.
  mutating func bytesArrived(at now: Instant) {
    if requestStartedAt == nil && headStartedAt == nil { headStartedAt = now }
  }

  /// A request's head was parsed: its body (if any) is now due within the body timeout.
  mutating func requestStarted(at now: Instant) {
    headStartedAt = nil
    requestStartedAt = now
    openExchanges += 1
  }

  /// The request's body ended (or the request will not be read further).
  mutating func requestEnded() { requestStartedAt = nil }

  /// A head the parser refused: no request is read any more, and its refusal is owed.
  mutating func requestRefused() {
    headStartedAt = nil
    requestStartedAt = nil
    openExchanges += 1
  }

  /// Bytes were handed to the socket: the write timeout runs while some are not accepted.
  mutating func writeStarted(at now: Instant) {
    if pendingWrites == 0 { lastWriteProgress = now }
    pendingWrites += 1
  }

  /// The socket accepted (or failed) one write.
  mutating func writeFinished(at now: Instant, accepted: Bool) {
    pendingWrites = max(0, pendingWrites - 1)
    if accepted { lastWriteProgress = now }
  }

  /// The oldest response is in the socket; once none is owed, the connection is idle (and a head
  /// that arrived meanwhile has the whole header timeout from now).
  mutating func responseFinished(at now: Instant) {
    openExchanges = max(0, openExchanges - 1)
    guard openExchanges == 0 else { return }
    idleSince = now
    if headStartedAt != nil { headStartedAt = now }
  }

  /// The server is draining: returns whether this is the first notice.
  mutating func drainStarted(at now: Instant) -> Bool {
    guard drainStartedAt == nil else { return false }
    drainStartedAt = now
    return true
  }

  /// Output is closed: input is read (and dropped) until the peer closes or the linger is over.
  mutating func lingerStarted(at now: Instant) {
    if lingerUntil == nil { lingerUntil = now.advanced(by: limits.linger) }
  }

  /// The limit that runs out first, and when; `nil` when none applies.
  var nextDeadline: (at: Instant, expiry: Expiry)? {
    var next: (at: Instant, expiry: Expiry)?
    func consider(_ at: Instant, _ expiry: Expiry) {
      if next.map({ at < $0.at }) ?? true { next = (at, expiry) }
    }
    if let lingerUntil { consider(lingerUntil, .linger) }
    if let drainStartedAt { consider(drainStartedAt.advanced(by: limits.drain), .drain) }
    if pendingWrites > 0 { consider(lastWriteProgress.advanced(by: limits.write), .write) }
    if let requestStartedAt { consider(requestStartedAt.advanced(by: limits.body), .body) }
    if openExchanges == 0 && requestStartedAt == nil && lingerUntil == nil {
      if let headStartedAt {
        consider(headStartedAt.advanced(by: limits.header), .header)
      } else if pendingWrites == 0 {
        consider(idleSince.advanced(by: limits.idle), .idle)
      }
    }
    return next
  }

  /// The limit that has run out at `now`, if any.
  func expiry(at now: Instant) -> Expiry? {
    guard let next = nextDeadline, next.at <= now else { return nil }
    return next.expiry
  }
}
