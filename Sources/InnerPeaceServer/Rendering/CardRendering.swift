public import InnerPeace

/// What the service needs from a renderer. ``InnerPeace/CardRenderer`` is the real one; tests can
/// pass another (one that fails on purpose, say).
package protocol CardRendering: Sendable {
  var catalog: Catalog { get }
  /// Renders one card, synchronously, on the calling thread.
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard
  /// What, besides a request, decides the cards: folded into the content version.
  var contentSources: ContentSources { get }
}

extension CardRendering {
  /// The catalog and the look version only (for renderers without fonts of their own).
  package var contentSources: ContentSources { ContentSources(catalog: catalog) }
}

extension CardRenderer: CardRendering {}
