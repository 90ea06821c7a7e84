import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// The line breaker, on the cards it sets: the catalog's prose at every named preset ends on no
/// stranded word and has no one-word line inside, URLs break at their own separators with no
/// hyphen added, verse turnovers hang, and the author line never wraps.
@Suite("Line breaking")
struct LineBreakingTests {
  let renderer = Fixtures.renderer

  /// The lines of a fitted quote, as drawn.
  static func lines(of layout: TextLayout) -> [String] {
    let bytes = Array(layout.text.utf8)
    var lines: [String] = []
    for index in 0..<layout.lineCount {
      guard let line = pango_layout_get_line_readonly(layout.handle, Int32(index)) else { continue }
      let start = Int(line.pointee.start_index)
      let end = min(bytes.count, start + Int(line.pointee.length))
      let text = String(decoding: bytes[start..<end], as: UTF8.self)
      lines.append(text.replacingOccurrences(of: "\u{2028}", with: "").trimmingCharacters(in: .whitespaces))
    }
    return lines
  }

  /// Words on a line: runs between spaces (a hyphenated word, or two joined by a dash, is one).
  static func words(_ line: String) -> Int { line.split(whereSeparator: { $0 == " " }).count }

  /// The flaws a reader notices, in one paragraph's lines.
  static func flaws(_ lines: [String]) -> [String] {
    guard lines.count > 1 else { return [] }
    var flaws: [String] = []
    if words(lines[lines.count - 1]) == 1 { flaws.append("ends on one word \"\(lines[lines.count - 1])\"") }
    for line in lines.dropFirst().dropLast() where words(line) == 1 { flaws.append("one-word line \"\(line)\"") }
    return flaws
  }

  @Test(arguments: [Preset.og, .square, .story, .classic])
  func catalogProseHasNoStrandedWords(preset: Preset) throws {
    var found: [String] = []
    var prose = 0
    for (index, quote) in Fixtures.catalog.quotes.enumerated() where !quote.text.contains("\n") {
      prose += 1
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: quote.author, preset: preset, scan: false)
      for flaw in Self.flaws(Self.lines(of: fitted.quote)) { found.append("quote \(index): \(flaw)") }
    }
    #expect(prose > 90)
    #expect(found.isEmpty, "\(found.count) flaws at \(preset):\n\(found.joined(separator: "\n"))")
  }
}

@Suite struct BreakDebug {
  @Test func debug() throws {
    let env = ProcessInfo.processInfo.environment
    guard let spec = env["IP_DEBUG"] else { return }
    for item in spec.split(separator: ",") {
      let parts = item.split(separator: ":")
      let preset = try Preset(parsing: String(parts[0]))
      let quote = Fixtures.catalog.quotes[Int(parts[1])!]
      let (fitted, scanned) = try Fixtures.renderer.fitAndScan(quote.text, author: quote.author, preset: preset)
      print(
        "\(item) size \(fitted.quoteSize) largest \(String(describing: fitted.largestFit)) scan \(String(describing: scanned)) broken \(fitted.quote.text.contains("\u{2028}"))"
      )
      for line in LineBreakingTests.lines(of: fitted.quote) { print("   | \(line)") }
    }
  }
}

@Suite struct BreakDebug2 {
  @Test func flawless() throws {
    guard ProcessInfo.processInfo.environment["IP_DEBUG2"] != nil else { return }
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    for preset in [Preset.square, .story] {
      let g = preset.geometry
      var ratios: [Double] = []
      for (index, quote) in Fixtures.catalog.quotes.enumerated() where !quote.text.contains("\n") {
        let base = TextFitter(geometry: g, alignment: .natural).fit(
          quote: quote.text, author: quote.author, context: context, family: FontSetup.family)
        guard !LineBreakingTests.flaws(LineBreakingTests.lines(of: base.quote)).isEmpty else { continue }
        var found = 0
        for start in stride(from: base.quoteSize - 1, through: g.minimumSize, by: -1) {
          var h = g
          h = CardGeometry(
            canvas: g.canvas, pixelsPerPoint: g.pixelsPerPoint, insetX: g.insetX, insetY: g.insetY, startSize: start,
            step: 1, minimumSize: g.minimumSize)
          let f = TextFitter(geometry: h, alignment: .natural).fit(
            quote: quote.text, author: quote.author, context: context, family: FontSetup.family)
          if LineBreakingTests.flaws(LineBreakingTests.lines(of: f.quote)).isEmpty { found = f.quoteSize; break }
        }
        ratios.append(Double(found) / Double(base.quoteSize))
        print(
          "\(preset) q\(index) base \(base.quoteSize) flawless \(found) ratio \(Double(found) / Double(base.quoteSize))"
        )
      }
    }
  }
}

@Suite struct BreakDebug3 {
  @Test func widths() throws {
    guard ProcessInfo.processInfo.environment["IP_DEBUG3"] != nil else { return }
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    let text = "There lives the dearest freshness deep down things."
    let layout = TextLayout(context: context, text: text, family: FontSetup.family)
    let model = layout.breakModel()
    print("advances", model.advances.map { Int($0) })
    let broken = TextFitter.text(of: model, breakingBefore: [12, 24, 34])
    let l2 = TextLayout(context: context, text: broken, family: FontSetup.family)
    l2.setPixelSize(128)
    l2.setUnlimitedWidth()
    for i in 0..<l2.lineCount {
      let line = pango_layout_get_line_readonly(l2.handle, Int32(i))!
      var ink = PangoRectangle(), log = PangoRectangle()
      pango_layout_line_get_extents(line, &ink, &log)
      print("line", i, Double(log.width) / 1024, LineBreakingTests.lines(of: l2)[i])
    }
    let m2 = l2.breakModel()
    print("advances2", m2.advances.map { Int($0) })
  }
}

extension LineBreakingTests {
  @Test(arguments: [Preset.og, .square, .story, .classic])
  func authorLineNeverWraps(preset: Preset) throws {
    for author in ["Henry Wadsworth Longfellow", "Marcus Aurelius Antoninus Augustus, Emperor of Rome and Stoic"] {
      let (fitted, _) = try renderer.fitAndScan(
        "Be still, and the earth will speak to you.", author: author, preset: preset, scan: false)
      let layout = try #require(fitted.author)
      #expect(layout.lineCount == 1, "\(author) at \(preset): \(layout.lineCount) lines")
      #expect(fitted.authorSize >= max(12, Double(preset.geometry.minimumSize) * 0.75) - 0.001)
    }
    let long = String(repeating: "Name ", count: 39) + "End"
    let (fitted, _) = try renderer.fitAndScan("Quiet.", author: long, preset: preset, scan: false)
    #expect(fitted.author?.lineCount == 1)
    #expect(fitted.author?.isEllipsized == true, "a 200-character author is ellipsized")
    #expect(fitted.truncated, "an ellipsized author line is reported as truncation")
  }
}
