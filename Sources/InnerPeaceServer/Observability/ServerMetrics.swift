import Foundation
import InnerPeace
import NIOConcurrencyHelpers
import Prometheus

/// The service's Prometheus metrics, in its own registry (no process-wide metrics state).
final class ServerMetrics: Sendable {
  let registry = PrometheusCollectorRegistry()
  let cacheHits: Counter
  let cacheMisses: Counter
  let rendersInFlight: Gauge
  let rejected: Counter
  let cacheBytes: Gauge
  private let residentMemory: Gauge
  private let openFileDescriptors: Gauge
  private let cpuSeconds: Counter
  /// The CPU seconds already added to ``cpuSeconds``.
  private let cpuSecondsCounted = NIOLockedValueBox(0.0)
  private let logLinesDropped: Counter
  /// The dropped log lines already added to ``logLinesDropped``.
  private let logLinesDroppedCounted = NIOLockedValueBox(0)

  /// Buckets for a render: 5 ms (a small card) to 5 s (the largest).
  static let renderBuckets: [Duration] = [
    .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
    .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
  ]
  /// Buckets for a whole request: a cached card in well under a millisecond to a slow render.
  static let requestBuckets: [Duration] = [
    .microseconds(500), .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25),
    .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5),
    .seconds(5),
  ]

  init() {
    cacheHits = registry.counter("innerpeace_card_cache_hits", unit: "total", help: "Cards served from memory.")
    cacheMisses = registry.counter(
      "innerpeace_card_cache_misses", unit: "total", help: "Cards that had to be rendered.")
    rendersInFlight = registry.gauge(
      "innerpeace_renders_in_flight", unit: "", help: "Renders admitted and not finished.")
    rejected = registry.counter(
      "innerpeace_requests_rejected", unit: "total", help: "Requests answered 503 because the render pool was full.")
    cacheBytes = registry.gauge("innerpeace_card_cache", unit: "bytes", help: "Bytes of cards held in memory.")
    residentMemory = registry.gauge(
      "process_resident_memory", unit: "bytes",
      help: "Resident memory of the server process (render workers not included).")
    openFileDescriptors = registry.gauge(
      "process_open", unit: "fds", help: "Open file descriptors of the server process.")
    cpuSeconds = registry.counter(
      "process_cpu_seconds", unit: "total", help: "User and system CPU time of the server process, in seconds.")
    logLinesDropped = registry.counter(
      "innerpeace_log_lines_dropped", unit: "total",
      help: "Log lines that could not be written to stderr (a full disk, a closed stream) and were dropped.")
    registry.gauge(
      "process_start_time", unit: "seconds", help: "Start time of the server process since the Unix epoch, in seconds."
    ).set(ProcessFigures.startTime() ?? Date().timeIntervalSince1970)
    registry.makeGauge(
      descriptor: .init(metricName: "innerpeace_build", unitName: "info", helpText: "The running build: always 1."),
      labels: [("version", InnerPeaceVersion.current), ("swift", Self.swiftVersion)]
    ).set(1.0)
  }

  /// The Swift compiler the binary was built with.
  static var swiftVersion: String {
    #if compiler(>=6.3)
      "6.3"
    #elseif compiler(>=6.2)
      "6.2"
    #else
      "6"
    #endif
  }

  /// Records one render by preset (its name, or `custom` for a size: bounded labels) and format.
  func recordRender(_ duration: Duration, preset: Preset, format: ImageFormat) {
    let presetLabel: String
    switch preset {
    case .custom: presetLabel = "custom"
    default: presetLabel = preset.description
    }
    registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "innerpeace_render_duration", unitName: "seconds",
        helpText: "Time to render and encode one card, on a render thread or worker."),
      labels: [("preset", presetLabel), ("format", format.rawValue)], buckets: Self.renderBuckets
    ).record(duration)
  }

  /// Counts one finished request by route template (never the raw path) and status, and records
  /// its duration.
  func recordRequest(route: String, status: Int, duration: Duration) {
    let labels = [("route", route), ("status", String(status))]
    registry.makeCounter(
      descriptor: .init(
        metricName: "innerpeace_http_requests", unitName: "total", helpText: "HTTP requests by route and status."),
      labels: labels
    ).increment()
    registry.makeDurationHistogram(
      descriptor: .init(
        metricName: "http_request_duration", unitName: "seconds",
        helpText: "Time from a request's head to its response, by route and status."),
      labels: labels, buckets: Self.requestBuckets
    ).record(duration)
  }

  /// The exposition, with the process figures read now.
  func exposition() -> [UInt8] {
    if let process = ProcessFigures.current() {
      residentMemory.set(Double(process.residentBytes))
      openFileDescriptors.set(Double(process.openFileDescriptors))
      let added = cpuSecondsCounted.withLockedValue { counted -> Double in
        let delta = max(0, process.cpuSeconds - counted)
        counted += delta
        return delta
      }
      if added > 0 { cpuSeconds.increment(by: added) }
    }
    let dropped = logLinesDroppedCounted.withLockedValue { counted -> Int in
      let delta = max(0, LogOutput.droppedLines - counted)
      counted += delta
      return delta
    }
    if dropped > 0 { logLinesDropped.increment(by: Int64(dropped)) }
    return registry.emitToBuffer()
  }
}

/// The server process's own figures, from `/proc/self` (Linux).
struct ProcessFigures {
  let residentBytes: Int
  let openFileDescriptors: Int
  let cpuSeconds: Double

  static func current() -> ProcessFigures? {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
      let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)
    else { return nil }
    let pages = statm.split(separator: " ")
    guard pages.count > 1, let resident = Int(pages[1]) else { return nil }
    // Fields after the command name (which may hold spaces, inside parentheses): utime and
    // stime are fields 14 and 15 of the line, the 12th and 13th after the ')'.
    guard let close = stat.lastIndex(of: ")") else { return nil }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
    return ProcessFigures(
      residentBytes: resident * Int(sysconf(Int32(_SC_PAGESIZE))), openFileDescriptors: descriptors,
      cpuSeconds: ticks > 0 ? (user + system) / ticks : 0)
  }
}

extension ProcessFigures {
  /// When this process started, in Unix seconds, as Prometheus's own clients compute it: the boot
  /// time (`btime` of `/proc/stat`) plus the process's start in clock ticks after boot (field 22
  /// of `/proc/self/stat`). `nil` where `/proc` cannot tell.
  static func startTime() -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
      let system = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
      let bootLine = system.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
      let boot = Double(bootLine.dropFirst("btime ".count).trimmingCharacters(in: .whitespaces)),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    // Field 22 of the line is the 20th after the ')' (fields 3 onwards).
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    guard fields.count > 19, let started = Double(fields[19]), ticks > 0 else { return nil }
    return boot + started / ticks
  }
}

extension PrometheusCollectorRegistry {
  /// A counter named `name_unit`, with its help text.
  func counter(_ name: String, unit: String, help: String) -> Counter {
    makeCounter(descriptor: .init(metricName: name, unitName: unit, helpText: help))
  }

  /// A gauge named `name_unit` (or `name` with no unit), with its help text.
  func gauge(_ name: String, unit: String, help: String) -> Gauge {
    makeGauge(descriptor: .init(metricName: name, unitName: unit, helpText: help))
  }
}
