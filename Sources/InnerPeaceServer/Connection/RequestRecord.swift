import NIOConcurrencyHelpers

/// What the request log knows of a request before its response goes out: filled in by the
/// router's middleware (through ``RequestRecord/current``), read by the connection once the
/// last byte of the response is in the socket.
final class RequestRecord: Sendable {
  @TaskLocal static var current: RequestRecord?
  private let state = NIOLockedValueBox<String?>(nil)
  /// The route that answered, once the router has matched one.
  var route: String? {
    get { state.withLockedValue { $0 } }
    set { state.withLockedValue { $0 = newValue } }
  }
}
