import Testing

@testable import InnerPeace

/// The fitted size against an exhaustive scan: for every text, the fitter must choose the largest
/// candidate size whose block fits the draw bounds, exactly as the app's shrink-until-it-fits loop
/// over the same candidates (with the same measure, one layout per size) would.
@Suite("Fit against an exhaustive scan")
struct FitScanTests {
  let renderer = Fixtures.renderer

  /// One disagreement between the fitter and the scan.
  struct Mismatch: CustomStringConvertible {
    let label: String
    let preset: Preset
    let fitted: Int
    let scanned: Int?
    var description: String {
      "\(label) at \(preset): fitted \(fitted) px, scan \(scanned.map { "\($0) px" } ?? "none fits")"
    }
  }

  /// Fits `text` and scans for it; returns the disagreement, if any. The search must find exactly
  /// the scan's size (``FittedText/largestFit``). The quote may then be set smaller, on presets
  /// that adjust the size for the paragraph, but never below
  /// ``TextFitter/lowestSize(largestFit:geometry:)``: for a better paragraph, for a readable
  /// measure on a narrow card, or for verse kept whole (`LineBreakingTests` and `MeasureTests`
  /// check the paragraphs themselves). Whatever size is chosen, its block fits the draw bounds.
  func check(_ label: String, text: String, author: String, preset: Preset) throws -> Mismatch? {
    let (fitted, scanned) = try renderer.fitAndScan(text, author: author, preset: preset)
    if !fitted.truncated {
      // A handful of layouts, not one per candidate size.
      #expect(fitted.passes <= maximumPasses(preset), "\(label) at \(preset): \(fitted.passes) layouts")
    }
    if scanned == nil && fitted.truncated && fitted.quoteSize == preset.geometry.minimumSize { return nil }
    guard let scanned, fitted.largestFit == scanned, !fitted.truncated else {
      return Mismatch(label: label, preset: preset, fitted: fitted.largestFit ?? fitted.quoteSize, scanned: scanned)
    }
    // The chosen size never overflows: the block set there is inside the draw bounds.
    let bounds = preset.geometry.drawBounds
    let block = fitted.block
    let inside =
      block.x >= Double(bounds.x) - 0.01 && block.y >= Double(bounds.y) - 0.01
      && block.x + block.width <= Double(bounds.x + bounds.width) + 0.01
      && block.y + block.height <= Double(bounds.y + bounds.height) + 0.01
    if !inside {
      return Mismatch(label: label + " (overflows)", preset: preset, fitted: fitted.quoteSize, scanned: scanned)
    }
    if fitted.quoteSize == scanned { return nil }
    let lowest = TextFitter.lowestSize(largestFit: scanned, geometry: preset.geometry, verse: text.contains("\n"))
    if fitted.quoteSize >= lowest, fitted.quoteSize < scanned { return nil }
    return Mismatch(label: label, preset: preset, fitted: fitted.quoteSize, scanned: scanned)
  }

  @Test func everyCatalogQuoteAtEveryPreset() throws {
    var mismatches: [Mismatch] = []
    var total = 0
    for preset in [Preset.og, .classic, .square, .story] {
      for (index, quote) in Fixtures.catalog.quotes.enumerated() {
        total += 1
        if let mismatch = try check("quote \(index)", text: quote.text, author: quote.author, preset: preset) {
          mismatches.append(mismatch)
        }
      }
    }
    #expect(
      mismatches.isEmpty,
      "\(mismatches.count) of \(total) fits are not the largest that fits:\n\(mismatches.map(\.description).joined(separator: "\n"))"
    )
  }

  @Test func hostileTexts() throws {
    var mismatches: [Mismatch] = []
    var total = 0
    let texts =
      FitCase.all.map { ($0.name, $0.text, $0.author, [Preset]()) }
      + HostileText.all.map { ($0.name, $0.text, $0.author, [$0.preset]) }
    for (name, text, author, extra) in texts {
      for preset in extra + fitPresets {
        total += 1
        if let mismatch = try check(name, text: text, author: author, preset: preset) { mismatches.append(mismatch) }
      }
    }
    #expect(
      mismatches.isEmpty,
      "\(mismatches.count) of \(total) fits are not the largest that fits:\n\(mismatches.map(\.description).joined(separator: "\n"))"
    )
  }
}
