/// Request limits of the HTTP API (the card limits are ``InnerPeace/Limits``).
public enum HTTPLimits {
  /// Longest request target (path and query), in bytes; longer gets 414.
  public static let maximumURILength = 32_768
  /// Largest request head (request line and header fields), in bytes; NIO's decoder stops there
  /// and the answer is 414 when the request line alone is that long, 431 otherwise.
  public static let maximumHeadBytes = 65_536
  /// Most header fields in one request; more gets 431.
  public static let maximumHeaderFields = 100
  /// Connections past ``ServerConfiguration/maxConnections`` that still get their 503; past that
  /// many more the server stops accepting until some close (they wait in the listen backlog).
  public static let refusalAllowance = 128
  /// Refusals past one client's connection share that wait (up to the linger) for the client to
  /// read them and close; past that many more the client's new connections are closed as soon
  /// as the 503 is written, so its refusals hold few slots of the global cap.
  public static let lingeringRefusalsPerClient = 16
}
