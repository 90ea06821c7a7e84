import Crypto
import Foundation
import InnerPeace
import InnerPeaceServer
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One image of the manifest.
struct ManifestEntry: Sendable {
  let item: BatchItem
  let quote: Quote
  let width: Int
  let height: Int
  let sha256: String
  /// Glyphs no font could draw (tofu).
  let missingGlyphs: Int
  /// What the card set, with `--report`.
  var report: TypesetReport? = nil
}

/// One image that could not be made.
struct BatchFailure: Sendable {
  let file: String
  let reason: String
}

/// What a run did.
struct BatchOutcome: Sendable {
  var entries: [ManifestEntry] = []
  var failures: [BatchFailure] = []
  var rendered = 0
  var skipped = 0
  var elapsed: Double = 0
}

/// Renders a plan's items on `jobs` threads. Each thread takes the next item, has a render worker
/// process render it (``IsolatedRenderer``: a card that crashes its worker is one failure) and
/// writes it atomically; nothing holds more than one card per thread, so memory stays bounded.
final class BatchRunner: Sendable {
  let plan: BatchPlan
  /// The catalog, and which glyphs a kept card lacks (it renders nothing).
  let renderer: CardRenderer
  let isolated: IsolatedRenderer
  let folder: BatchFolder
  let resume: Bool
  let jobs: Int
  let progress: BatchProgress
  /// Whether each entry carries its card's report.
  let reports: Bool
  private let next = Mutex(0)
  private let outcome = Mutex(BatchOutcome())
  /// With `resume`, the checksums earlier runs recorded, which a kept file must match.
  private let recorded: [String: String]

  init(
    plan: BatchPlan, renderer: CardRenderer, isolated: IsolatedRenderer, folder: BatchFolder,
    recorded: [String: String], resume: Bool, jobs: Int, progress: BatchProgress, reports: Bool = false
  ) {
    self.reports = reports
    self.plan = plan
    self.renderer = renderer
    self.isolated = isolated
    self.folder = folder
    self.recorded = recorded
    self.resume = resume
    self.jobs = jobs
    self.progress = progress
  }

  func run() -> BatchOutcome {
    let started = ContinuousClock.now
    let workers = min(jobs, max(1, plan.items.count))
    let done = DispatchSemaphore(value: 0)
    for _ in 0..<workers {
      let thread = Thread { [self] in
        work()
        done.signal()
      }
      thread.start()
    }
    // On a terminal the bar shows at once, not only after the first interval (a short batch
    // would end before it).
    if progress.drawsBar { progress.report() }
    var finished = 0
    while finished < workers {
      if done.wait(timeout: .now() + progress.interval) == .success {
        finished += 1
      } else {
        progress.report()
      }
    }
    var result = outcome.withLock { $0 }
    result.entries.sort { $0.item.position < $1.item.position }
    result.elapsed = seconds(since: started)
    return result
  }

  private func work() {
    while true {
      let index = next.withLock { value -> Int in
        defer { value += 1 }
        return value
      }
      guard index < plan.items.count else { return }
      let item = plan.items[index]
      let quote = renderer.catalog.quotes[item.quoteIndex]
      let size = item.preset.size
      if resume, let checksum = folder.verifiedChecksum(of: item, recorded: recorded) {
        record(
          ManifestEntry(
            item: item, quote: quote, width: size.width, height: size.height, sha256: checksum,
            missingGlyphs: renderer.missingGlyphs(text: quote.text, author: plan.showsAuthor ? quote.author : ""),
            // A kept card's report comes from the fit alone, which sets the text as its render did.
            report: reports
              ? renderer.typesetReport(
                quote: quote, showsAuthor: plan.showsAuthor, preset: item.preset, alignment: plan.alignment,
                language: plan.language) : nil),
          skipped: true)
        continue
      }
      do {
        let card = try isolated.render(
          CardRequest(
            preset: item.preset, quote: .index(item.quoteIndex), picture: .named(item.picture), seed: 0,
            format: item.format, showsAuthor: plan.showsAuthor, alignment: plan.alignment, includesReport: reports,
            language: plan.language)
        ).get()
        let bytes = card.bytes
        let checksum = SHA256.hash(data: bytes).hex
        try folder.journal(checksum: checksum, file: item.fileName)
        try folder.write(bytes, named: item.fileName)
        record(
          ManifestEntry(
            item: item, quote: quote, width: size.width, height: size.height, sha256: checksum,
            missingGlyphs: card.facts.missingGlyphs, report: card.facts.report),
          skipped: false)
      } catch let error as InnerPeaceError {
        fail(BatchFailure(file: item.fileName, reason: error.description))
      } catch let error as BatchWriteError {
        fail(BatchFailure(file: item.fileName, reason: "cannot write: \(error.reason)"))
      } catch {
        fail(BatchFailure(file: item.fileName, reason: InnerPeaceCommand.wording(forSystemError: error)))
      }
    }
  }

  private func record(_ entry: ManifestEntry, skipped: Bool) {
    outcome.withLock { outcome in
      outcome.entries.append(entry)
      if skipped { outcome.skipped += 1 } else { outcome.rendered += 1 }
    }
    progress.advance(skipped: skipped)
  }

  private func fail(_ failure: BatchFailure) {
    outcome.withLock { $0.failures.append(failure) }
    progress.advance(failed: true)
  }
}

func seconds(since start: ContinuousClock.Instant) -> Double { (ContinuousClock.now - start) / .seconds(1) }
