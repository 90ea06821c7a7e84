import Foundation
import InnerPeace

/// `innerpeace-bench report [--runs N]`: a warm og PNG card with and without its typeset report
/// (the same medium quote and picture as `stages`), interleaved so that both see the same machine,
/// and the fit-only report alone.
func reportBench(runs: Int) throws {
  let catalog = try Catalog.bundled()
  let warm = try CardRenderer(catalog: catalog)
  let medium = catalog.quotes.indices.min(by: {
    abs(catalog.quotes[$0].text.count - 160) < abs(catalog.quotes[$1].text.count - 160)
  })!
  let plain = CardRequest(preset: .og, quote: .index(medium), picture: .named(catalog.pictures[0]), seed: 1)
  var reported = plain
  reported.includesReport = true
  _ = try warm.render(plain)
  _ = try warm.render(reported)
  let clock = ContinuousClock()
  func time(_ work: () throws -> Void) rethrows -> Double {
    let start = clock.now
    try work()
    return (clock.now - start) / .seconds(1)
  }
  var without: [Double] = []
  var with: [Double] = []
  var fitOnly: [Double] = []
  var size = 0
  for _ in 0..<runs {
    without.append(try time { _ = try warm.render(plain) })
    with.append(try time { size = try warm.render(reported).report?.json.count ?? 0 })
    fitOnly.append(time { _ = warm.typesetReport(quote: catalog.quotes[medium], preset: .og) })
  }
  print("Warm og PNG, quote \(medium), picture \(catalog.pictures[0]); medians over \(runs) interleaved runs (ms).")
  print("")
  print("| without report | with report | difference | fit-only report | report JSON bytes |")
  print("|---:|---:|---:|---:|---:|")
  let difference = median(with) - median(without)
  print(
    "| \(milliseconds(median(without))) | \(milliseconds(median(with))) | \(milliseconds(difference)) "
      + "| \(milliseconds(median(fitOnly))) | \(size) |")
}
