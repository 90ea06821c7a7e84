import HTTPTypes
import InnerPeaceQuery
import NIOConcurrencyHelpers

/// Counts per client (open connections, admitted renders) against a limit, under one lock. A
/// client's entry goes when its count is back to zero, so the table holds only clients with
/// something open.
final class ClientTally: Sendable {
  private let counts = NIOLockedValueBox<[String: Int]>([:])

  init() {}

  /// Counts one more for `client` if it has fewer than `limit`; whether it did.
  func take(_ client: String, limit: Int) -> Bool {
    counts.withLockedValue { counts in
      let count = counts[client, default: 0]
      guard count < limit else { return false }
      counts[client] = count + 1
      return true
    }
  }

  /// Counts one less for `client`.
  func release(_ client: String) {
    counts.withLockedValue { counts in
      guard let count = counts[client] else { return }
      counts[client] = count > 1 ? count - 1 : nil
    }
  }

  /// The count of `client` now.
  func count(_ client: String) -> Int { counts.withLockedValue { $0[client, default: 0] } }

  /// Clients with a count above zero.
  var clients: Int { counts.withLockedValue { $0.count } }
}
