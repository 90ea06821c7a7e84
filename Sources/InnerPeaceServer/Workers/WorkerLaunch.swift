/// How the server starts a render worker: its own executable with the hidden `render-worker`
/// subcommand, say. The worker speaks the worker wire (``WorkerWireHeader``) on stdin and stdout
/// (see ``RenderWorker``).
public struct WorkerLaunch: Sendable {
  /// The file to execute; `/proc/self/exe` runs the very binary the server runs, even if the file
  /// on disk has been replaced since.
  public var executable: String
  /// `argv`, `argv[0]` included.
  public var arguments: [String]
  /// Extra environment variables, on top of the server's own.
  public var environment: [String: String] = [:]
  /// The log format the worker writes its own lines in, when its stderr is to be read by the
  /// server and relayed to the server's log (``WorkerOutputRelay``), so that whatever the worker
  /// prints (a crash report from the Swift runtime too) comes out as records of that format; `nil`:
  /// the worker writes straight to the server's stderr.
  public var relayedLogFormat: LogFormat?
  /// The option of `arguments` whose value is the time (nanoseconds since 1970) taken before the
  /// server loaded its catalog, if any: a reload takes it anew (``stamped(nanosecondsSince1970:)``).
  public var loadTimeOption: String?

  public init(
    executable: String, arguments: [String], environment: [String: String] = [:], relayedLogFormat: LogFormat? = nil,
    loadTimeOption: String? = nil
  ) {
    self.executable = executable
    self.arguments = arguments
    self.environment = environment
    self.relayedLogFormat = relayedLogFormat
    self.loadTimeOption = loadTimeOption
  }

  /// This launch with the value of ``loadTimeOption`` set to `nanoseconds` (for a catalog about to
  /// be loaded again); unchanged without that option.
  package func stamped(nanosecondsSince1970 nanoseconds: Int64) -> WorkerLaunch {
    guard let loadTimeOption, let index = arguments.firstIndex(of: loadTimeOption), index + 1 < arguments.count
    else { return self }
    var stamped = self
    stamped.arguments[index + 1] = String(nanoseconds)
    return stamped
  }

  /// The environment variable that tells a worker its parent's pid, to check it at start-up.
  static let parentVariable = "INNERPEACE_WORKER_PARENT"
}
