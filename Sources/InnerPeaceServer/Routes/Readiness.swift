import ServiceLifecycle

/// `/readyz`: whether the service should be sent traffic now, and if not, why.
struct Readiness: Codable, Sendable {
  /// `ready`, or `unavailable` (then ``reason`` says why).
  let status: String
  /// Why the service is not ready: ``starting``, ``noWorker`` or ``draining``; `nil` when ready.
  let reason: String?
  /// Render workers ready now (worker processes running, or render threads).
  let workers: Int
  let quotes: Int
  /// The catalog's content version (the `v=` of image URLs).
  let contentVersion: String

  static let starting = "starting"
  static let noWorker = "no render worker is running"
  static let draining = "draining"

  var isReady: Bool { reason == nil }

  /// The readiness of a service whose render pool has `readyWorkers` ready (`nil`: not started
  /// yet), asked from a request's task: during graceful shutdown (SIGTERM, SIGINT) that task is
  /// shutting down gracefully, as the server that runs it drains.
  init(readyWorkers: Int?, quotes: Int, contentVersion: String) {
    let reason: String? =
      if Task.isShuttingDownGracefully {
        Self.draining
      } else if let readyWorkers {
        readyWorkers > 0 ? nil : Self.noWorker
      } else {
        Self.starting
      }
    self.status = reason == nil ? "ready" : "unavailable"
    self.reason = reason
    self.workers = readyWorkers ?? 0
    self.quotes = quotes
    self.contentVersion = contentVersion
  }
}
