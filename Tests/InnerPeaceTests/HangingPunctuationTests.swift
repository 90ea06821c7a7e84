import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// Opening quotation marks, dashes and brackets hang into the margin, so the letters after them
/// line up with the other lines' first letters: on the left in left-to-right text, on the right
/// in right-to-left text; centred text is set as it is (issue 18, item 5).
@Suite struct HangingPunctuationTests {
  /// The text fitted as a card's quote is (no author line), and its coverage drawn on a canvas
  /// of the preset's size.
  struct Drawn {
    let fitted: FittedText
    let geometry: CardGeometry
    let coverage: [UInt8]
    /// Each line's baseline on the canvas, top to bottom.
    let baselines: [Double]

    var width: Int { geometry.canvas.width }
    var height: Int { geometry.canvas.height }

    /// The leftmost and rightmost inked columns between rows `top` and `bottom`.
    func inkColumns(top: Double, bottom: Double) -> (left: Int, right: Int)? {
      var left = Int.max
      var right = Int.min
      for y in max(0, Int(top.rounded()))..<min(height, Int(bottom.rounded())) {
        for x in 0..<width where coverage[y * width + x] > 96 {
          left = min(left, x)
          right = max(right, x)
        }
      }
      return left <= right ? (left, right) : nil
    }

    /// Line `index`'s letters, clear of quotation marks: the lower part of the x-height.
    func letterColumns(line index: Int) -> (left: Int, right: Int)? {
      let size = Double(fitted.quoteSize)
      return inkColumns(top: baselines[index] - 0.25 * size, bottom: baselines[index] - 0.04 * size)
    }

    /// Line `index`'s whole ink, marks included.
    func lineColumns(line index: Int) -> (left: Int, right: Int)? {
      let size = Double(fitted.quoteSize)
      return inkColumns(top: baselines[index] - 0.9 * size, bottom: baselines[index] + 0.1 * size)
    }
  }

  static func draw(_ text: String, preset: Preset = .og, alignment: TextAlignment = .natural) throws -> Drawn {
    let geometry = preset.geometry
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    let fitted = TextFitter(geometry: geometry, alignment: alignment).fit(
      quote: text, author: "", context: context, family: FontSetup.family)
    let surface = try ImageSurface(format: .a8, width: geometry.canvas.width, height: geometry.canvas.height)
    let drawing = try DrawingContext(surface: surface)
    fitted.quote.draw(in: drawing, x: fitted.quoteOrigin.x, y: fitted.quoteOrigin.y)
    try drawing.check()
    let coverage = surface.packedRows(bytesPerRow: geometry.canvas.width)
    let scale = Double(fitted.quoteSize) / TextLayout.referenceSize
    let baselines = FontLock.withLock { () -> [Double] in
      var values: [Double] = []
      guard let iterator = pango_layout_get_iter(fitted.quote.handle) else { return values }
      defer { pango_layout_iter_free(iterator) }
      repeat {
        let baseline = Double(pango_layout_iter_get_baseline(iterator)) / Double(innerpeace_pango_scale)
        values.append(fitted.quoteOrigin.y + baseline * scale)
      } while pango_layout_iter_next_line(iterator) != 0
      return values
    }
    return Drawn(fitted: fitted, geometry: geometry, coverage: coverage, baselines: baselines)
  }

  /// Every inked pixel is inside the fitted block and the draw bounds.
  static func expectInkInsideBlock(_ drawn: Drawn) {
    let bounds = drawn.geometry.drawBounds
    let block = drawn.fitted.block
    guard let ink = drawn.inkColumns(top: 0, bottom: Double(drawn.height)) else {
      Issue.record("no ink")
      return
    }
    #expect(Double(ink.left) >= block.x.rounded(.down) - 1 && Double(ink.right) <= block.maxX.rounded(.up) + 1)
    #expect(ink.left >= bounds.x && ink.right < bounds.x + bounds.width, "ink \(ink) in bounds \(bounds)")
  }

  @Test func openingQuoteHangsLeft() throws {
    let drawn = try Self.draw("\u{201C}Now is the hour of peace,\nNow is the time to rest.\u{201D}")
    #expect(drawn.fitted.quote.lineCount == 2)
    let first = try #require(drawn.letterColumns(line: 0))
    let second = try #require(drawn.letterColumns(line: 1))
    // The N after the mark starts where the next line's N does.
    #expect(abs(first.left - second.left) <= 2, "letters start at \(first.left) and \(second.left)")
    // The mark itself is in the margin, left of the letters, and inside the block.
    let whole = try #require(drawn.lineColumns(line: 0))
    #expect(whole.left < first.left - Int(Double(drawn.fitted.quoteSize) * 0.2), "mark at \(whole.left)")
    Self.expectInkInsideBlock(drawn)
  }

  @Test func everyLineThatStartsWithAMarkHangs() throws {
    // After an explicit break, a dash and a bracket hang too; the white space after the dash
    // goes with it.
    let drawn = try Self.draw("Now is the hour of peace,\n\u{2018}Now is the time to rest,\n(Now the day is done.)")
    #expect(drawn.fitted.quote.lineCount == 3)
    // The bracket reaches down into the letters' rows, so only the quoted line is compared by
    // its pixels; the bracket's line must reach left of the letters by the bracket's width.
    let lefts = try (0..<2).map { try #require(drawn.letterColumns(line: $0)).left }
    #expect(abs(lefts[0] - lefts[1]) <= 2, "letters start at \(lefts)")
    let bracket = try #require(drawn.lineColumns(line: 2))
    #expect(bracket.left < lefts[0] - Int(Double(drawn.fitted.quoteSize) * 0.15), "bracket at \(bracket.left)")
    let shifts = FontLock.withLock { drawn.fitted.quote.unlockedHangingShifts() } ?? []
    #expect(shifts.count == 3 && shifts[0] == 0 && shifts[1] < 0 && shifts[2] < 0, "\(shifts)")
    Self.expectInkInsideBlock(drawn)
  }

  @Test func leadingDashHangsWithItsSpace() throws {
    let drawn = try Self.draw("Now is the hour of peace,\n\u{2014} now is the time to rest.")
    let shifts = FontLock.withLock { drawn.fitted.quote.unlockedHangingShifts() } ?? []
    #expect(shifts.count == 2 && shifts[0] == 0 && shifts[1] < 0, "\(shifts)")
    let first = try #require(drawn.lineColumns(line: 0))
    let second = try #require(drawn.lineColumns(line: 1))
    // The dash and its space are left of the first line's letters: the "n" lines up with "N".
    #expect(second.left < first.left - Int(Double(drawn.fitted.quoteSize) * 0.5), "dash at \(second.left)")
    Self.expectInkInsideBlock(drawn)
  }

  @Test func rightToLeftQuoteHangsRight() throws {
    // "Peace unto you and blessing, / peace to all the world." in Hebrew, in quotation marks.
    let peace = "\u{05E9}\u{05DC}\u{05D5}\u{05DD}"
    let drawn = try Self.draw(
      "\"\(peace) \u{05E2}\u{05DC}\u{05D9}\u{05DB}\u{05DD} \u{05D5}\u{05D1}\u{05E8}\u{05DB}\u{05D4},\n"
        + "\(peace) \u{05DC}\u{05DB}\u{05DC} \u{05D4}\u{05E2}\u{05D5}\u{05DC}\u{05DD}.\"")
    #expect(drawn.fitted.quote.isRightToLeft)
    #expect(drawn.fitted.quote.lineCount == 2)
    let first = try #require(drawn.letterColumns(line: 0))
    let second = try #require(drawn.letterColumns(line: 1))
    // The ש after the mark ends where the next line's ש does, on the right.
    #expect(abs(first.right - second.right) <= 2, "letters end at \(first.right) and \(second.right)")
    let whole = try #require(drawn.lineColumns(line: 0))
    #expect(whole.right > first.right + Int(Double(drawn.fitted.quoteSize) * 0.1), "mark at \(whole.right)")
    Self.expectInkInsideBlock(drawn)
  }

  @Test func centredTextDoesNotHang() throws {
    let text = "\u{201C}Now is the hour of peace,\nNow is the time to rest.\u{201D}"
    let drawn = try Self.draw(text, alignment: .center)
    #expect(!drawn.fitted.quote.hangsPunctuation)
    #expect(FontLock.withLock { drawn.fitted.quote.unlockedHangingShifts() } == nil)
    // Centred as Pango centres: the line with the marks is centred marks and all.
    let first = try #require(drawn.lineColumns(line: 0))
    let centre = Double(first.left + first.right) / 2
    #expect(abs(centre - Double(drawn.width) / 2) <= 6, "line centred at \(centre)")
  }

  @Test func onlyMarksOrMarksInsideALineDoNotHang() {
    let text = "it\u{2019}s \u{201C}here\u{201D}"
    #expect(TextLayout.hangingSpan(text, from: 0, to: text.utf8.count) == nil)
    let marks = "\u{2014} \u{201C}"
    #expect(TextLayout.hangingSpan(marks, from: 0, to: marks.utf8.count) == nil)
    let quoted = "\u{200E}\u{201C}\u{2018}Yes"
    let span = TextLayout.hangingSpan(quoted, from: 0, to: quoted.utf8.count)
    #expect(span?.0 == 3 && span?.1 == 9)
  }
}
