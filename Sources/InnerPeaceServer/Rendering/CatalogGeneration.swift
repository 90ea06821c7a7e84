import InnerPeace
import NIOConcurrencyHelpers

/// One loaded catalog and everything made from it: the renderer, the service's links (whose
/// content version is in every ETag and `v=`), the cards rendered and the `/quotes` pages encoded
/// from it, and the pictures found changed on disk since it was loaded. Start-up makes the first;
/// each reload (SIGHUP) a new one, so that no cache can serve a card or page of the old catalog
/// under the new version. A request keeps the generation that was current when it started
/// (``CatalogPinMiddleware``): in-flight requests finish on the old catalog.
final class CatalogGeneration<Renderer: CardRendering>: Sendable {
  let renderer: Renderer
  let links: CardLinks
  let cache: CardCache
  let quoteLists = QuoteListCache()
  /// Pictures found changed on disk (``InnerPeace/InnerPeaceError/pictureChanged(name:)``), each
  /// logged once per generation.
  let changedPictures = NIOLockedValueBox<Set<String>>([])

  init(renderer: Renderer, configuration: ServerConfiguration) {
    self.renderer = renderer
    cache = CardCache(capacityBytes: configuration.cacheMegabytes << 20)
    links = CardLinks(
      version: renderer.contentSources.version(),
      publicURL: configuration.publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 },
      trustsForwardedHeaders: configuration.trustsForwardedHeaders, allowedHosts: configuration.allowedHosts,
      imageSigner: configuration.signsAllImages ? configuration.urlSigner : nil)
  }
}

/// The catalog generation a request started with, as a task-local value, so that everything the
/// request reads (and renders, in tasks it starts) comes from one catalog even if a reload makes
/// another current meanwhile. A value of any renderer type: task-local values cannot be generic.
enum PinnedCatalog {
  @TaskLocal static var generation: (any Sendable)?
}
