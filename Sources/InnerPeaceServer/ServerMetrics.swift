import Prometheus

/// The service's Prometheus metrics, in its own registry (no process-wide metrics state).
final class ServerMetrics: Sendable {
  let registry = PrometheusCollectorRegistry()
  let renderDuration: DurationHistogram
  let cacheHits: Counter
  let cacheMisses: Counter
  let rendersInFlight: Gauge
  let rejected: Counter
  let cacheBytes: Gauge

  init() {
    renderDuration = registry.makeDurationHistogram(
      name: "innerpeace_render_duration_seconds",
      buckets: [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
      ],
      help: "Time to render and encode one card, on a render thread.")
    cacheHits = registry.makeCounter(name: "innerpeace_card_cache_hits_total", help: "Cards served from memory.")
    cacheMisses = registry.makeCounter(
      name: "innerpeace_card_cache_misses_total", help: "Cards that had to be rendered.")
    rendersInFlight = registry.makeGauge(
      name: "innerpeace_renders_in_flight", help: "Renders admitted and not finished.")
    rejected = registry.makeCounter(
      name: "innerpeace_requests_rejected_total", help: "Requests answered 503 because the render pool was full.")
    cacheBytes = registry.makeGauge(name: "innerpeace_card_cache_bytes", help: "Bytes of cards held in memory.")
  }

  /// Counts one finished request by route pattern and status.
  func countRequest(route: String, status: Int) {
    registry.makeCounter(
      name: "innerpeace_http_requests_total", labels: [("route", route), ("status", String(status))],
      help: "HTTP requests by route and status."
    ).increment()
  }

  func exposition() -> [UInt8] { registry.emitToBuffer() }
}
