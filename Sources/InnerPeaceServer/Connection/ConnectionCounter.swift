import Synchronization

/// Open connections, shared by the accept side (Hummingbird's `AvailableConnectionsDelegate`)
/// and the connection setup.
final class ConnectionCounter: Sendable {
  let open = Atomic<Int>(0)
  /// Connections served per client address (refused ones not counted).
  let perClient = ClientTally()
  /// Refusals past a client's share that are waiting for the peer to close, per client address.
  let lingeringRefusals = ClientTally()
  init() {}
}
