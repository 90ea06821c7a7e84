/// Where renders run.
public enum RenderIsolation: Sendable {
  /// On the render pool's threads, in the server process: a render that traps stops the server.
  case threads
  /// In worker processes started with this launch, one per render thread: a render that traps
  /// costs its own request a 500, and the worker is replaced.
  case processes(WorkerLaunch)
}

extension RenderIsolation {
  var isThreads: Bool {
    if case .threads = self { return true }
    return false
  }
}
