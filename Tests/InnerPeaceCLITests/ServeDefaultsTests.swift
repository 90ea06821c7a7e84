import Foundation
import InnerPeaceServer
import Testing

@testable import InnerPeaceCLI

/// The server's defaults are written once, in `ServerConfiguration`: `serve`'s options take
/// theirs from it, and the README's table of `serve` options states them.
@Suite struct ServeDefaultsTests {
  /// Each option with a value default, its value in a configuration, and the README's spelling of
  /// that value.
  static func values(_ configuration: ServerConfiguration) -> [(flag: String, value: String)] {
    [
      ("--host", configuration.host), ("--port", "\(configuration.port)"),
      ("--cache-mb", "\(configuration.cacheMegabytes)"),
      ("--background-cache-mb", "\(configuration.backgroundCacheMegabytes)"),
      ("--worker-memory-mb", "\(configuration.workerMemoryMegabytes)"),
      ("--render-megapixels", "\(configuration.renderMegapixels)"),
      ("--reminder-hour", "\(configuration.reminderHour)"),
      ("--idle-timeout", "\(configuration.idleTimeoutSeconds)"),
      ("--render-timeout", "\(configuration.renderTimeoutSeconds)"),
      ("--header-timeout", seconds(configuration.headerTimeoutSeconds)),
      ("--body-timeout", seconds(configuration.bodyTimeoutSeconds)),
      ("--write-timeout", seconds(configuration.writeTimeoutSeconds)),
      ("--max-connections", "\(configuration.maxConnections)"),
      ("--drain-timeout", seconds(configuration.drainTimeoutSeconds)),
      ("--log-level", configuration.logLevel.rawValue), ("--log-format", configuration.logFormat.rawValue),
    ]
  }

  /// `30` for 30 seconds, `2.5` for 2.5.
  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// `serve` without options configures exactly the configuration's defaults (threads or worker
  /// processes aside, which `--in-process` picks).
  @Test func commandDefaultsAreTheConfigurations() throws {
    let configured = try ServeCommand.parse(["--in-process"]).makeConfiguration()
    let defaults = ServerConfiguration()
    for ((flag, value), (_, expected)) in zip(Self.values(configured), Self.values(defaults)) {
      #expect(value == expected, "serve \(flag) defaults to \(value), the configuration to \(expected)")
    }
    #expect(configured.timeZone == defaults.timeZone)
    #expect(configured.concurrency == defaults.concurrency && configured.queueDepth == defaults.queueDepth)
    #expect(configured.maxConnectionsPerClient == nil && configured.maxRendersPerClient == nil)
    #expect(configured.maxQueuedPerClient == nil && configured.publicURL == nil && configured.allowedHosts.isEmpty)
    #expect(!configured.trustsForwardedHeaders && !configured.signsAllImages)
    #expect(configured.corsOrigins.isEmpty && configured.metricsAddress == nil)
  }

  /// The README's table of `serve` options gives each of these defaults as the configuration has it.
  @Test func readmeStatesTheConfigurationsDefaults() throws {
    let readme = try String(contentsOf: packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
    let start = try #require(readme.range(of: "## `innerpeace serve`"), "README.md has no serve section")
    let end = try #require(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
    let rows = readme[start.upperBound..<end.lowerBound].split(separator: "\n").filter { $0.hasPrefix("| `--") }
    /// The first backquoted word of the default column of `flag`'s row.
    func stated(_ flag: String) throws -> String {
      let row = rows.first { $0.hasPrefix("| `\(flag)`") || $0.hasPrefix("| `\(flag) ") }
      let columns = try #require(row, "README.md's serve options have no \(flag)").split(separator: "|")
      let column = columns.count >= 2 ? columns[1].trimmingCharacters(in: .whitespaces) : ""
      return column.hasPrefix("`") ? String(column.dropFirst().prefix { $0 != "`" }) : column
    }
    let defaults = ServerConfiguration()
    for (flag, value) in Self.values(defaults) {
      #expect(try stated(flag) == value, "README.md: \(flag)'s default is not `\(value)`")
    }
    // Foundation names UTC `GMT`: the README's zone is compared as a zone.
    #expect(TimeZone(identifier: try stated("--time-zone")) == defaults.timeZone, "README.md: --time-zone")
  }
}
