import Foundation
import HTTPTypes
import Hummingbird
import InnerPeace
public import Logging
import NIOConcurrencyHelpers

/// Renders cards for the HTTP layer: through the cache, the single-flight table and the bounded
/// render pool, with metrics. One per server.
package final class CardService<Renderer: CardRendering>: Sendable {
  let renderer: Renderer
  let configuration: ServerConfiguration
  let pool: RenderPool
  let cache: CardCache
  let metrics: ServerMetrics
  /// The service's own URLs, with the content version (part of every ETag and immutable URL).
  let links: CardLinks
  /// The encoded pages of `/quotes`.
  let quoteLists = QuoteListCache()
  /// Pictures found changed on disk (``InnerPeace/InnerPeaceError/pictureChanged(name:)``), each
  /// logged once.
  private let changedPictures = NIOLockedValueBox<Set<String>>([])
  /// The `Retry-After` of a card whose picture changed: it stays unavailable until a restart.
  static var changedPictureRetrySeconds: Int { 60 }

  let logger: Logger

  package init(renderer: Renderer, configuration: ServerConfiguration, logger: Logger = Logger(label: "innerpeace")) {
    self.renderer = renderer
    self.logger = logger
    self.configuration = configuration
    metrics = ServerMetrics()
    pool = RenderPool(
      workers: configuration.concurrency, queueDepth: configuration.queueDepth,
      rendersPerClient: configuration.rendersPerClient, queuedPerClient: configuration.queuedPerClient,
      isolation: configuration.renderIsolation, renderTimeout: .seconds(configuration.renderTimeoutSeconds),
      workerRestingLimitBytes: configuration.workerMemoryMegabytes << 20,
      pixelBudget: configuration.renderMegapixels * 1_000_000, registry: metrics.registry, logger: logger)
    cache = CardCache(capacityBytes: configuration.cacheMegabytes << 20)
    links = CardLinks(
      version: renderer.contentSources.version(),
      publicURL: configuration.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
      trustsForwardedHeaders: configuration.trustsForwardedHeaders, allowedHosts: configuration.allowedHosts,
      imageSigner: configuration.signsAllImages ? configuration.urlSigner : nil)
  }

  var catalog: Catalog { renderer.catalog }

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
        if changedPictures.withLockedValue({ $0.insert(name).inserted }) {
          logger.error(
            "a catalog picture changed on disk since the catalog was loaded; its cards answer 503 until a restart",
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
    hasher.combine(links.version)
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
