/// The limits of one connection (see ``ConnectionDeadlines``), from the configuration.
struct ConnectionLimits: Sendable {
  var idle: Duration
  var header: Duration
  var body: Duration
  var write: Duration
  var drain: Duration
  /// How long a connection closed by the server keeps reading (and dropping) what the peer
  /// still sends, so that closing does not reset the response the peer is reading.
  var linger: Duration = .seconds(2)
  /// Response bytes are handed to the socket in slices of this size, so that progress is seen
  /// (and the log can count what was written) while a large body goes out.
  var writeSliceBytes = 16_384

  init(_ configuration: ServerConfiguration) {
    idle = .seconds(configuration.idleTimeoutSeconds)
    header = .seconds(configuration.headerTimeoutSeconds)
    body = .seconds(configuration.bodyTimeoutSeconds)
    write = .seconds(configuration.writeTimeoutSeconds)
    drain = .seconds(configuration.drainTimeoutSeconds)
  }
}
