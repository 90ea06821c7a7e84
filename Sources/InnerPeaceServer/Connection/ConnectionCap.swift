import HummingbirdCore
import Synchronization

/// Hummingbird's hook on the listening socket: counts connections, and stops accepting (new ones
/// wait in the listen backlog) once even the 503 allowance past the limit is used up.
struct ConnectionCap: AvailableConnectionsDelegate {
  let counter: ConnectionCounter
  let hardLimit: Int
  mutating func connectionOpened() { counter.open.add(1, ordering: .relaxed) }
  mutating func connectionClosed() { counter.open.subtract(1, ordering: .relaxed) }
  func isAcceptingNewConnections() -> Bool { counter.open.load(ordering: .relaxed) < hardLimit }
}
