import ArgumentParser
import Foundation
import InnerPeace
import InnerPeaceServer
import Logging

/// `innerpeace render-worker`: one render worker process of `serve` (hidden from --help). It loads
/// the catalog and fonts once, then renders requests from stdin to stdout until stdin closes.
struct RenderWorkerCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "render-worker",
    abstract: "A render worker process of `serve`; not for use by hand.",
    shouldDisplay: false
  )

  @OptionGroup var catalog: CatalogOptions

  @Option(
    name: .customLong("background-cache-mb"),
    help: ArgumentHelp("Memory for decoded, scaled photos, in MiB.", valueName: "MiB"))
  var backgroundCacheMegabytes = ServeCommand.defaults.backgroundCacheMegabytes

  @Option(
    name: .customLong("catalog-fixed-since"),
    help: ArgumentHelp(
      "Nanoseconds since 1970 before the server loaded the catalog: a photo changed after is refused.",
      valueName: "ns", visibility: .hidden))
  var catalogFixedSince: Int64?

  @Option(
    name: .customLong("log-format"),
    help: ArgumentHelp("The server's log format, for the worker's own lines.", visibility: .hidden))
  var logFormat = ServeCommand.defaults.logFormat

  @Option(
    name: .customLong("log-level"),
    help: ArgumentHelp("The server's log level, for the worker's own lines.", visibility: .hidden))
  var logLevel = ServeCommand.defaults.logLevel

  /// This very binary (`/proc/self/exe`, even if the file has been replaced since) as a render
  /// worker: how `serve` and `batch` start theirs. The time is taken now, before the caller loads
  /// its catalog, so a worker (re)started after a photo changed still refuses it (see
  /// `Catalog.fixedSinceNanoseconds`); a catalog reload takes it anew (`WorkerLaunch.loadTimeOption`).
  /// The worker writes its lines (to the server's stderr) in the server's log format and level.
  static func launch(
    catalog: String?, backgroundCacheMegabytes: Int, logFormat: LogFormat = ServeCommand.defaults.logFormat,
    logLevel: Logger.Level = ServeCommand.defaults.logLevel
  ) -> WorkerLaunch {
    #if os(Linux)
      let executable = "/proc/self/exe"
    #else
      let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
    #endif
    var arguments = [CommandLine.arguments[0], "render-worker"]
    if let catalog { arguments += ["--catalog", catalog] }
    arguments += ["--background-cache-mb", String(backgroundCacheMegabytes)]
    arguments += ["--catalog-fixed-since", String(Int64(Date().timeIntervalSince1970 * 1_000_000_000))]
    arguments += ["--log-format", logFormat.rawValue, "--log-level", logLevel.rawValue]
    return WorkerLaunch(executable: executable, arguments: arguments, loadTimeOption: "--catalog-fixed-since")
  }

  func run() throws {
    var catalog = try catalog.load()
    catalog.fixedSinceNanoseconds = catalogFixedSince
    let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: max(0, backgroundCacheMegabytes) << 20)
    // The worker keeps its heap between cards itself (a reserve for the next card, the rest
    // given back: `WorkerHeap`).
    throw ExitCode(
      RenderWorker.serve(
        renderer: renderer, logger: makeLogger(format: logFormat, level: logLevel, label: "innerpeace.worker")))
  }
}
