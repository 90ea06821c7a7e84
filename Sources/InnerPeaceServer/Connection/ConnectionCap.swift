import HummingbirdCore
import Logging
import Synchronization

/// Hummingbird's hook on the listening socket: counts connections, and stops accepting (new ones
/// wait in the listen backlog) once even the 503 allowance past the limit is used up. Each close
/// is a `trace` line with the connections still open (a test waits for it to make room).
struct ConnectionCap: AvailableConnectionsDelegate {
  let counter: ConnectionCounter
  let hardLimit: Int
  let logger: Logger
  mutating func connectionOpened() { counter.open.add(1, ordering: .relaxed) }
  mutating func connectionClosed() {
    let open = counter.open.subtract(1, ordering: .relaxed).newValue
    logger.trace("connection closed", metadata: ["open_connections": .stringConvertible(open)])
  }
  func isAcceptingNewConnections() -> Bool { counter.open.load(ordering: .relaxed) < hardLimit }
}
