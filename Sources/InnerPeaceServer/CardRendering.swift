public import InnerPeace

/// What the service needs from a renderer. ``InnerPeace/CardRenderer`` is the real one; tests can
/// pass another (one that fails on purpose, say).
public protocol CardRendering: Sendable {
  var catalog: Catalog { get }
  /// Renders one card, synchronously, on the calling thread.
  func render(_ request: CardRequest) throws(InnerPeaceError) -> RenderedCard
}

extension CardRenderer: CardRendering {}
