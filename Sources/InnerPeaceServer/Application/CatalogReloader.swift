import Foundation
import InnerPeace
import Logging
import NIOPosix
import Prometheus
import ServiceLifecycle
import UnixSignals

/// Reloads the catalog on SIGHUP (and on nothing else: there is no admin endpoint), a `Service`
/// of the application's group.
///
/// A reload reads the catalog again with the start-up's checks (every quote, every photo, the
/// fonts' registration) and, if it is valid and its content version is new, starts a new set of
/// render workers on it beside the old ones (``RenderPool/replaceWorkers(with:)``), then makes it
/// the catalog new requests get (``CardService/replaceGeneration(_:)``): a new content version,
/// so new ETags and `v=` URLs, and new, empty caches. Requests in flight finish on the old one;
/// each old worker retires after its render. If anything fails, the old catalog and workers stay
/// and one error line names the problem. Every reload is counted in
/// `innerpeace_catalog_reloads_total{result="ok|failed"}`.
///
/// SIGHUPs that arrive during a reload are coalesced into one more reload after it (which reads
/// the files as they are then).
final class CatalogReloader: Service, Sendable {
  let service: CardService<CardRenderer>
  private let signals: UnixSignalsSequence?
  private let requests: AsyncStream<Void>
  private let requestSink: AsyncStream<Void>.Continuation
  private let succeeded: Counter
  private let failed: Counter

  /// - Parameter signals: SIGHUP, trapped before the server starts (`nil`: reloads only through
  ///   ``requestReload()``).
  init(service: CardService<CardRenderer>, signals: UnixSignalsSequence?) {
    self.service = service
    self.signals = signals
    // At most one reload waits while another runs: more requests meanwhile are one.
    (requests, requestSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let descriptor = MetricNameDescriptor(
      metricName: "innerpeace_catalog_reloads", unitName: "total",
      helpText: "Catalog reloads (SIGHUP) by result: ok (the new catalog is served) or failed (the old one stays).")
    succeeded = service.metrics.registry.makeCounter(descriptor: descriptor, labels: [("result", "ok")])
    failed = service.metrics.registry.makeCounter(descriptor: descriptor, labels: [("result", "failed")])
  }

  /// Waits for SIGHUPs and reloads, one at a time, until graceful shutdown.
  func run() async {
    await withDiscardingTaskGroup { group in
      if let signals {
        group.addTask {
          for await _ in signals { self.requestReload() }
        }
      }
      for await _ in requests.cancelOnGracefulShutdown() { await reload() }
      group.cancelAll()
    }
  }

  /// Asks for a reload (what SIGHUP does).
  func requestReload() { requestSink.yield() }

  /// Loads the catalog again and serves it if it is valid; returns whether it is served.
  @discardableResult
  func reload() async -> Bool {
    let logger = service.logger
    let configuration = service.configuration
    let old = service.generation
    // Taken before the files are read: a photo changed after it is refused by the new workers.
    let launch = service.pool.workerLaunchForReload()
    do {
      let renderer = try await NIOThreadPool.singleton.runIfActive { try Self.loadRenderer(configuration) }
      let generation = CatalogGeneration(renderer: renderer, configuration: configuration)
      let catalog = renderer.catalog
      let version = generation.links.version
      if version != old.links.version {
        do throws(WorkerFailure) { try await service.pool.replaceWorkers(with: launch) } catch {
          throw ServerConfigurationError("render worker: \(error.description)")
        }
        service.replaceGeneration(generation)
      }
      succeeded.increment()
      logger.info(
        """
        catalog reloaded: \(catalog.quotes.count) quotes, \(catalog.pictures.count) photos, content version \
        \(version)\(version == old.links.version ? " (unchanged)" : "")
        """)
      return true
    } catch {
      failed.increment()
      let reason = (error as? any CustomStringConvertible)?.description ?? "\(error)"
      logger.error("catalog not reloaded, still serving content version \(old.links.version): \(reason)")
      return false
    }
  }

  /// The configured catalog (its folder, or the bundled one) and a renderer on it, with the
  /// checks of start-up: the quotes, every photo, the fonts.
  /// - Throws: `InnerPeaceError` for a catalog or fonts that cannot load.
  static func loadRenderer(_ configuration: ServerConfiguration) throws -> CardRenderer {
    let catalog: Catalog
    if let folder = configuration.catalogDirectory {
      var isDirectory: ObjCBool = false
      guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
        throw InnerPeaceError.catalogUnreadable(file: folder, reason: "no such folder")
      }
      catalog = try Catalog(directory: URL(fileURLWithPath: folder, isDirectory: true))
    } else {
      catalog = try Catalog.bundled()
    }
    // With worker processes this renderer never renders (the workers have their own caches).
    return try CardRenderer(
      catalog: catalog,
      backgroundCacheBytes: configuration.renderIsolation.isThreads ? configuration.backgroundCacheMegabytes << 20 : 0)
  }
}
