import NIOCore

/// An event loop's time (`EventLoop.now`) as a clock instant, for ``ConnectionDeadlines``: on an
/// `EmbeddedEventLoop` it moves only when a test advances it.
struct LoopInstant: InstantProtocol {
  let deadline: NIODeadline

  init(_ deadline: NIODeadline) { self.deadline = deadline }

  func advanced(by duration: Duration) -> LoopInstant { LoopInstant(deadline + TimeAmount(duration)) }
  func duration(to other: LoopInstant) -> Duration { Duration(other.deadline - deadline) }
  static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.deadline < rhs.deadline }
}
