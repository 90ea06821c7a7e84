import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
public import Logging
import NIOConcurrencyHelpers

/// Renders cards for the HTTP layer: through the cache, the single-flight table and the bounded
/// render pool, with metrics. One per server.
package final class CardService<Renderer: CardRendering>: Sendable {
  let configuration: ServerConfiguration
  let pool: RenderPool
  let metrics: ServerMetrics
  /// The catalog now served: replaced by a reload (``replaceGeneration(_:)``).
  private let current: NIOLockedValueBox<CatalogGeneration<Renderer>>
  /// The `Retry-After` of a card whose picture changed: it stays unavailable until the catalog is
  /// loaded again (a reload or a restart).
  static var changedPictureRetrySeconds: Int { 60 }

  let logger: Logger

  package init(renderer: Renderer, configuration: ServerConfiguration, logger: Logger = Logger(label: "innerpeace")) {
    self.logger = logger
    self.configuration = configuration
    metrics = ServerMetrics()
    pool = RenderPool(
      workers: configuration.concurrency, queueDepth: configuration.queueDepth,
      rendersPerClient: configuration.rendersPerClient, queuedPerClient: configuration.queuedPerClient,
      isolation: configuration.renderIsolation, renderTimeout: .seconds(configuration.renderTimeoutSeconds),
      workerRestingLimitBytes: configuration.workerMemoryMegabytes << 20,
      pixelBudget: configuration.renderMegapixels * 1_000_000, registry: metrics.registry, logger: logger)
    current = NIOLockedValueBox(CatalogGeneration(renderer: renderer, configuration: configuration))
  }

  /// The catalog generation of this request (the one current when it started), or the current
  /// one outside a request.
  var generation: CatalogGeneration<Renderer> {
    if let pinned = PinnedCatalog.generation as? CatalogGeneration<Renderer> { return pinned }
    return current.withLockedValue { $0 }
  }

  /// Runs `body` (a request) with the current catalog generation pinned for it and every task it
  /// starts.
  func withCurrentGeneration<T>(_ body: () async throws -> T) async rethrows -> T {
    try await PinnedCatalog.$generation.withValue(current.withLockedValue { $0 }) { try await body() }
  }

  /// Makes `generation` the one new requests get; requests in flight keep theirs.
  func replaceGeneration(_ generation: CatalogGeneration<Renderer>) {
    current.withLockedValue { $0 = generation }
  }

  var renderer: Renderer { generation.renderer }
  var catalog: Catalog { generation.renderer.catalog }
  /// The service's own URLs, with the content version (part of every ETag and immutable URL).
  var links: CardLinks { generation.links }
  var cache: CardCache { generation.cache }
  /// The encoded pages of `/quotes`.
  var quoteLists: QuoteListCache { generation.quoteLists }

  /// The content version that image URLs carry as `v=`.
  package var contentVersion: String { links.version }

  /// Starts the render worker processes (when renders run in them) and waits until they are
  /// ready, without blocking a thread.
  /// - Throws: a one-line description of why a worker could not start.
  package func startRenderers() async throws {
    do throws(WorkerFailure) { try await pool.start() } catch {
      throw ServerConfigurationError("render worker: \(error.description)")
    }
  }

  /// Stops the render threads of a service run outside an application (tests).
  package func shutdown() async throws { try await pool.shutdown() }

  /// The card for a request: from the cache, or joined to an identical render in flight, or
  /// rendered on the pool.
  /// - Throws: ``ServiceError``: 503 when the pool is full or the client (``ClientAddress``) has
  ///   its share of it, 4xx for a bad request, 500 (with a public message) when the render fails.
  func card(for request: CardRequest, key: String) async throws -> ServedCard {
    let client = ClientAddress.current
    let generation = self.generation
    let renderer = generation.renderer
    let cache = generation.cache
    let (card, source) = try await cache.card(for: key) { [self] in
      let admission: RenderPool.Admission
      switch pool.admit(client: client) {
      case .success(let granted): admission = granted
      case .failure(let refusal):
        metrics.rejected.increment()
        var error = ServiceError(
          .serviceUnavailable,
          refusal == .poolFull
            ? "the server is busy rendering; try again shortly"
            : "this client has its share of the renders in progress; try again shortly")
        error.headers[.retryAfter] = String(configuration.retryAfterSeconds)
        throw error
      }
      defer { admission.release() }
      metrics.rendersInFlight.increment()
      defer { metrics.rendersInFlight.decrement() }
      let started = ContinuousClock.now
      let result = try await pool.render(request, with: renderer, admission: admission)
      metrics.recordRender(ContinuousClock.now - started, preset: request.preset, format: request.format)
      switch result {
      case .card(let card):
        guard card.body.readableBytes > 0 else {
          throw ServiceError(.internalServerError, "the card could not be rendered")
        }
        return ServedCard(card)
      case .unavailable(let seconds):
        metrics.rejected.increment()
        logger.error("no render worker is running; answering 503")
        var error = ServiceError(.serviceUnavailable, "the server cannot render right now; try again shortly")
        error.headers[.retryAfter] = String(seconds)
        throw error
      case .failed(.pictureChanged(let name)):
        // Its cards would have new bytes under the old version: none until the catalog is
        // loaded again. Logged once per picture.
        if generation.changedPictures.withLockedValue({ $0.insert(name).inserted }) {
          logger.error(
            "a catalog picture changed on disk since the catalog was loaded; its cards answer 503 until a reload",
            metadata: ["picture": .string(name)])
        }
        var error = ServiceError.from(.pictureChanged(name: name))
        error.headers[.retryAfter] = String(Self.changedPictureRetrySeconds)
        throw error
      case .failed(let error):
        let publicError = ServiceError.from(error)
        if publicError.status == .internalServerError {
          // The cause stays here, in the log; the response says only that the render failed.
          logger.error("render failed", metadata: ["reason": .string(error.description), "key": .string(key)])
        }
        throw publicError
      }
    }
    // A request that joined an identical render in flight was served without rendering: a hit.
    if source == .render { metrics.cacheMisses.increment() } else { metrics.cacheHits.increment() }
    metrics.cacheBytes.set(Double(cache.byteCount))
    return card
  }

  /// A strong ETag for a card key.
  func etag(for key: String) -> String {
    var hasher = StableHash()
    hasher.combine(generation.links.version)
    hasher.combine(key)
    return "\"\(hasher.hex)\""
  }
}

/// A rendered card as the service keeps and sends it: the bytes already in a `ByteBuffer` (shared,
/// not copied, by every response that sends them) and the facts the headers need, read through
/// it (`card.fontSize`).
@dynamicMemberLookup
struct ServedCard: Sendable {
  let body: ByteBuffer
  /// The card's facts, without its report (kept once, below, as the bytes that are sent).
  let facts: CardFacts
  /// The card's report as the debug endpoints send it (pretty JSON, sorted keys): only for a
  /// request that asked for one, which keeps this and not the image.
  let report: ByteBuffer?

  init(_ card: FinishedCard) {
    var facts = card.facts
    if let report = facts.report {
      // A report's request wants the report, not the image: the cache holds only what is sent.
      body = ByteBuffer()
      self.report = ByteBuffer(bytes: report.json)
      facts.report = nil
    } else {
      body = card.body
      self.report = nil
    }
    self.facts = facts
  }

  subscript<Value>(dynamicMember fact: KeyPath<CardFacts, Value>) -> Value { facts[keyPath: fact] }

  var byteCount: Int { body.readableBytes + (report?.readableBytes ?? 0) }
}
