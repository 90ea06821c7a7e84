import ArgumentParser
import Foundation
import InnerPeace
import InnerPeaceServer

#if canImport(Glibc)
  import Glibc
#endif

/// `innerpeace batch`: share images for a whole collection, safely.
struct BatchCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "batch",
    abstract: "Render share images for the whole catalog (or --count quotes) into a folder.",
    usage: "innerpeace batch --out-dir <dir> [<options>]",
    discussion: """
      Files are named 0042-og.png (quote index, preset). Each is written to a temporary file in \
      the folder, flushed to disk and renamed, so a file under its final name is always whole. A \
      manifest (manifest.json) lists every image with its quote, share message, picture, preset, \
      size and SHA-256 (with --report also what was set, as render --report writes it), and \
      index.html shows them as a gallery.

      After an interruption, run the same command with --resume: files already there are kept \
      (not rendered again) and the manifest is written complete. --resume refuses a folder whose \
      cards were made with other options or other content (another content version: the look, \
      fonts, quotes or photos changed since); render those into another folder.

      --shard I/N renders every N-th image starting at the I-th, so N machines (Kubernetes \
      indexed Jobs, Slurm arrays, GNU parallel) split a run exactly; each shard writes \
      manifest-I-of-N.json and index-I-of-N.html.

      Cards render in --jobs worker processes, as `serve` renders them: a card whose render \
      crashes or exceeds --render-timeout is one failed card, its worker is replaced and the rest \
      go on. The cards rendering at once total at most --render-megapixels (a larger card renders \
      alone), so memory stays bounded whatever --jobs and the size.

      Quote N is on the picture the service shows it on: the catalog's pictures in turn, picture \
      N mod their number. --seed S moves every quote S pictures further along the list (default \
      0), so the same command makes the same batch. \
      Exit status 0 when every card was written, 1 when some failed (they are listed in the \
      manifest).
      """,
  )

  @Option(
    name: .customLong("out-dir"), help: ArgumentHelp("The folder to write into (created if missing).", valueName: "dir")
  )
  var outDir: String

  @Option(
    name: .customLong("preset"),
    help: ArgumentHelp(
      "classic, og, square, story or WxH; repeat or separate with commas. (default: og)", valueName: "name"),
    completion: Parse.presetCompletion, transform: Parse.presets)
  var presets: [[Preset]] = []

  @Option(help: "Only the first N quotes. (default: the whole catalog)")
  var count: Int?

  @Option(
    help: ArgumentHelp(
      "Render worker processes, 1 to \(BatchCommand.maximumJobs). (default: one per core)", valueName: "n"))
  var jobs: Int?

  /// The most `--jobs`: more processes than this only add memory (the pixel budget and the cores
  /// bound what renders at once anyway).
  static let maximumJobs = 64

  @Option(
    name: .customLong("render-megapixels"),
    help: ArgumentHelp(
      "Megapixels of cards rendered at once; a card that would pass it waits its turn.", valueName: "n"))
  var renderMegapixels = ServerConfiguration().renderMegapixels

  @Option(
    name: .customLong("render-timeout"),
    help: ArgumentHelp("Seconds one card may take before its worker is killed.", valueName: "seconds"))
  var renderTimeout = ServerConfiguration().renderTimeoutSeconds

  @Option(help: ArgumentHelp("Render only shard I of N (1 <= I <= N).", valueName: "I/N"), transform: Parse.shard)
  var shard: Shard = .all

  @Flag(help: "Keep the valid files already in the folder and render only the missing ones.")
  var resume = false

  @OptionGroup var card: CardOptions

  @OptionGroup var seed: SeedOptions

  @OptionGroup var catalog: CatalogOptions

  @Flag(name: [.short, .long], help: "No progress output; only errors and the summary line.")
  var quiet = false

  @Flag(
    help: """
      Give each manifest entry its card's report: lines as set, and per run script, language, font \
      file, style, missing glyphs and dotted circles (as render --report writes it).
      """)
  var report = false

  func validate() throws {
    if let jobs, !(1...Self.maximumJobs).contains(jobs) {
      throw ValidationError("--jobs \(jobs) must be from 1 to \(Self.maximumJobs)")
    }
    if !(1...1_000).contains(renderMegapixels) {
      throw ValidationError("--render-megapixels \(renderMegapixels) must be from 1 to 1000")
    }
    if !(1...3_600).contains(renderTimeout) {
      throw ValidationError("--render-timeout \(renderTimeout) must be from 1 to 3600 seconds")
    }
  }

  func run() throws {
    let chosenFormat = card.format ?? .png
    let chosenPresets = presets.isEmpty ? [.og] : presets.flatMap { $0 }
    let runSeed = seed.value(fallback: 0)
    let catalog = try catalog.load()
    let plan = try BatchPlan(
      catalog: catalog, presets: chosenPresets, quoteCount: count, format: chosenFormat, seed: runSeed, shard: shard,
      showsAuthor: !card.noAuthor, alignment: card.align, language: card.language)
    let folder = try BatchFolder(path: outDir, shard: shard)
    try folder.refuseLinks()
    // This renderer only answers which glyphs a kept card lacks (and its report) and what decides
    // the cards (the content version); the workers render.
    let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
    let parameters = BatchRunParameters(
      seed: runSeed, format: chosenFormat.rawValue, presets: chosenPresets.map(\.description),
      alignment: card.align.rawValue, showsAuthor: !card.noAuthor, contentVersion: renderer.contentSources.version(),
      count: count ?? catalog.quotes.count, shard: shard.description, language: card.language?.description)
    try folder.checkRunParameters(parameters, resume: resume)
    folder.removeStaleTemporaries(of: plan.items)
    if !resume {
      // A new run replaces this plan's files; remove them first, so that an interruption can
      // never leave an older run's card under a name this run's manifest describes.
      folder.remove(plan.items)
      folder.removeJournal()
    }
    do {
      try folder.recordRunParameters(parameters)
    } catch {
      // A full disk: every card will fail too, and the summary will say so.
      warn("innerpeace: error: \(InnerPeaceCommand.wording(forSystemError: error))")
    }
    let recorded = resume ? try folder.recordedChecksums() : [:]
    let workers = min(jobs ?? min(Self.maximumJobs, ProcessInfo.processInfo.activeProcessorCount), plan.items.count)
    let defaults = ServerConfiguration()
    let isolated = IsolatedRenderer(
      workers: max(1, workers),
      launch: RenderWorkerCommand.launch(
        catalog: self.catalog.catalog, backgroundCacheMegabytes: ServeCommand.defaults.backgroundCacheMegabytes),
      renderTimeout: .seconds(renderTimeout), restingLimitBytes: defaults.workerMemoryMegabytes << 20,
      pixelBudget: renderMegapixels * 1_000_000)
    defer { isolated.shutdown() }
    do throws(IsolatedRenderer.StartFailure) {
      try isolated.waitUntilReady()
    } catch {
      throw CommandLineError(description: error.description, exitCode: ExitStatus.software)
    }
    let progress = BatchProgress(total: plan.items.count, quiet: quiet)
    let runner = BatchRunner(
      plan: plan, renderer: renderer, isolated: isolated, folder: folder, recorded: recorded, resume: resume,
      jobs: max(1, workers), progress: progress, reports: report)
    let outcome = runner.run()
    progress.finish(outcome)
    for failure in outcome.failures.prefix(10) { warn("innerpeace: error: \(failure.file): \(failure.reason)") }
    if outcome.failures.count > 10 {
      warn("innerpeace: ... and \(outcome.failures.count - 10) more (see the manifest)")
    }
    let withTofu = outcome.entries.filter { $0.missingGlyphs > 0 }
    if let first = withTofu.first {
      warn(
        "warning: \(withTofu.count) card(s) have glyphs no installed font can draw, drawn as boxes "
          + "(first: \(first.item.fileName); see missingGlyphs in the manifest)")
    }
    try folder.writeManifest(outcome: outcome, plan: plan, catalog: catalog, seed: runSeed)
    if outcome.failures.count > 0 { throw ExitCode(1) }
  }
}
