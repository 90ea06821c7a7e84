import NIOConcurrencyHelpers

/// Admission and turns of the render pool, fair between clients (``ClientAddress``).
///
/// Admission: at most `workers + queueDepth` renders at once, and at most
/// `min(rendersPerClient, workers) + min(queuedPerClient, queueDepth)` of one client; past either,
/// ``admit(client:)`` says no at once (the service answers 503 with Retry-After).
///
/// Turns: an admitted render waits for one of the `workers` slots, and a client may hold at most
/// `rendersPerClient` of them. When a slot frees, the oldest waiting render whose client is under
/// its share takes it, so a client flooding the pool with slow cards keeps at most its share of
/// the workers busy, and another client's render is not stuck behind its queue.
///
/// A render without a client (`nil`: outside a live connection) counts towards the totals only.
final class RenderGate: Sendable {
  let workers: Int
  let queueDepth: Int
  let rendersPerClient: Int
  let queuedPerClient: Int

  private struct Waiter {
    let client: String?
    let continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var admitted = 0
    var admittedBy: [String: Int] = [:]
    var running = 0
    var runningBy: [String: Int] = [:]
    /// Renders waiting for a slot, oldest first.
    var waiting: [Waiter] = []
  }

  private let state = NIOLockedValueBox(State())

  init(workers: Int, queueDepth: Int, rendersPerClient: Int = .max, queuedPerClient: Int = .max) {
    self.workers = workers
    self.queueDepth = queueDepth
    self.rendersPerClient = max(1, rendersPerClient)
    self.queuedPerClient = max(0, queuedPerClient)
  }

  /// The most renders one client may have admitted (running and waiting).
  var admittedPerClient: Int { min(rendersPerClient, workers) + min(queuedPerClient, queueDepth) }

  /// Why a render was not admitted.
  enum Refusal: Error { case poolFull, clientShareTaken }

  /// Admits one render of `client` if there is room in the pool and in the client's share;
  /// otherwise says which was full.
  func tryAdmit(client: String?) -> Refusal? {
    state.withLockedValue { state in
      guard state.admitted < workers + queueDepth else { return .poolFull }
      if let client {
        let count = state.admittedBy[client, default: 0]
        guard count < admittedPerClient else { return .clientShareTaken }
        state.admittedBy[client] = count + 1
      }
      state.admitted += 1
      return nil
    }
  }

  /// Whether one render of `client` was admitted (see ``tryAdmit(client:)``).
  func admit(client: String?) -> Bool { tryAdmit(client: client) == nil }

  /// An admitted render of `client` is over (rendered or not).
  func leave(client: String?) {
    state.withLockedValue { state in
      state.admitted -= 1
      if let client { state.admittedBy[client] = Self.decremented(state.admittedBy[client]) }
    }
  }

  /// Waits until a slot is free for a render of `client` and the client is under its share;
  /// the slot is then this render's until ``stopRendering(client:)``.
  func startRendering(client: String?) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let now = state.withLockedValue { state -> Bool in
        if mayStart(client, in: state) {
          Self.start(client, in: &state)
          return true
        }
        state.waiting.append(Waiter(client: client, continuation: continuation))
        return false
      }
      if now { continuation.resume() }
    }
  }

  /// Frees the slot of a render of `client`, and hands the free slots to the oldest waiting
  /// renders whose clients are under their share.
  func stopRendering(client: String?) {
    let woken = state.withLockedValue { state -> [Waiter] in
      state.running -= 1
      if let client { state.runningBy[client] = Self.decremented(state.runningBy[client]) }
      var woken: [Waiter] = []
      var index = 0
      while index < state.waiting.count && state.running < workers {
        let waiter = state.waiting[index]
        if mayStart(waiter.client, in: state) {
          Self.start(waiter.client, in: &state)
          woken.append(state.waiting.remove(at: index))
        } else {
          index += 1
        }
      }
      return woken
    }
    for waiter in woken { waiter.continuation.resume() }
  }

  /// Renders running now, in all and for `client`; renders admitted for `client`; and renders
  /// waiting for a slot (for tests and metrics).
  func counts(client: String? = nil) -> (running: Int, runningForClient: Int, admittedForClient: Int, waiting: Int) {
    state.withLockedValue { state in
      (
        state.running, client.map { state.runningBy[$0, default: 0] } ?? 0,
        client.map { state.admittedBy[$0, default: 0] } ?? 0, state.waiting.count
      )
    }
  }

  private func mayStart(_ client: String?, in state: State) -> Bool {
    guard state.running < workers else { return false }
    guard let client else { return true }
    return state.runningBy[client, default: 0] < rendersPerClient
  }

  private static func start(_ client: String?, in state: inout State) {
    state.running += 1
    if let client { state.runningBy[client, default: 0] += 1 }
  }

  private static func decremented(_ count: Int?) -> Int? {
    guard let count, count > 1 else { return nil }
    return count - 1
  }
}
