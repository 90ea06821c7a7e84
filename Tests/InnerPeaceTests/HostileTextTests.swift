import Foundation
import Testing

@testable import InnerPeace

/// Texts that crashed the renderer (issue 7), each with the canvas it crashed on.
struct HostileText: Sendable, CustomTestStringConvertible {
  let name: String
  let text: String
  var author: String = ""
  var preset: Preset = .og

  var testDescription: String { name }

  /// One grapheme cluster of 121 emoji (ZWJ joins them), far wider than any bounds: the
  /// overhang narrowing drove the wrap width below zero and the Int32 conversion trapped.
  static let joinedEmoji = HostileText(
    name: "121 joined emoji", text: "\u{1F468}" + String(repeating: "\u{200D}\u{1F468}", count: 120))

  /// One Hangul syllable of 200 leading consonants: the same trap, through another script.
  static let hangulJamo = HostileText(
    name: "200 Hangul leading jamo", text: String(repeating: "\u{1100}", count: 200) + "\u{1161}\u{11A8}")

  /// A word break (before U+1F3FB, a skin-tone modifier, after the combining mark U+05BF) where
  /// there is no character break: Pango 1.50 aborted in `process_line` at wrap widths that end a
  /// line there.
  static let breakInsideGrapheme = HostileText(
    name: "word break inside a grapheme",
    text: "\u{5D1}\u{1AE0}\u{1322}\u{1219}\u{5BF}\u{1F3FB}\u{20E3}\u{1326}\u{12BB}", author: "\u{1AB1}",
    preset: .custom(try! CanvasSize(width: 1000, height: 1000)))

  static let all = [joinedEmoji, hangulJamo, breakInsideGrapheme]
}

/// Text that once crashed fitting or drawing: each is fitted and rendered, and the wrap width
/// handed to Pango is checked to be bounded.
@Suite("Hostile text")
struct HostileTextTests {
  let renderer = Fixtures.renderer

  /// Each text, fitted on the canvas it crashed on and on every preset: a candidate size is
  /// chosen (truncated at the minimum if nothing fits) and the block stays inside the bounds.
  @Test(arguments: HostileText.all)
  func fitsInsideTheBounds(hostile: HostileText) throws {
    for preset in [hostile.preset] + fitPresets {
      let fit = try renderer.fitText(hostile.text, author: hostile.author, preset: preset)
      let bounds = preset.geometry.drawBounds
      #expect(preset.geometry.candidateSizes.contains(fit.fontSize), "\(preset): \(fit.fontSize) px")
      #expect(fit.block.width > 0 && fit.block.height > 0, "\(preset): \(fit.block)")
      #expect(
        fit.block.x >= Double(bounds.x) - 0.01
          && fit.block.x + fit.block.width <= Double(bounds.x + bounds.width) + 0.01,
        "\(preset): block \(fit.block) is wider than the bounds \(bounds)")
      #expect(
        fit.block.y >= Double(bounds.y) - 0.01
          && fit.block.y + fit.block.height <= Double(bounds.y + bounds.height) + 0.01,
        "\(preset): block \(fit.block) is taller than the bounds \(bounds)")
    }
  }

  /// Each text, rendered to pixels on the canvas it crashed on.
  @Test(arguments: HostileText.all)
  func renders(hostile: HostileText) throws {
    let card = try renderer.render(
      CardRequest(preset: hostile.preset, quote: .text(hostile.text, author: hostile.author), seed: 1, format: .png))
    #expect(card.size == hostile.preset.size)
    #expect(Array(card.bytes.prefix(8)) == pngSignature)
  }

  /// Random short texts mixing scripts, marks, joiners and emoji (the kind of which about 1 in
  /// 90 crashed `render` in the fuzz run of issue 7), from a fixed seed so a failure repeats:
  /// each fits on two canvases, inside the bounds.
  @Test func randomMultiScriptTextsFit() throws {
    let ranges: [ClosedRange<UInt32>] = [
      0x41...0x7A, 0x5D0...0x5EA, 0x591...0x5C7, 0x600...0x6FF, 0x900...0x97F, 0xE00...0xE5B, 0x1100...0x11FF,
      0x1200...0x137F, 0x1AB0...0x1AFF, 0x1B00...0x1B7F, 0x20D0...0x20FF, 0x3040...0x30FF, 0x4E00...0x4E80,
      0xAC00...0xAC80, 0x1F300...0x1F64F, 0x1F3FB...0x1F3FF, 0x200B...0x200F, 0x20...0x20, 0x300...0x36F,
      0xFE00...0xFE0F, 0x1780...0x17FF, 0xF00...0xFFF, 0x1000...0x109F,
    ]
    var generator = SplitMix(state: 7)
    let presets: [Preset] = [.og, .square, .custom(try CanvasSize(width: 1000, height: 1000))]
    var fitted = 0
    for _ in 0..<800 {
      var scalars = String.UnicodeScalarView()
      for _ in 0...(generator.next() % 14) {
        let range = ranges[Int(generator.next() % UInt64(ranges.count))]
        let value = range.lowerBound + UInt32(generator.next() % UInt64(range.count))
        if let scalar = Unicode.Scalar(value) { scalars.append(scalar) }
      }
      let text = String(scalars)
      for preset in presets {
        // Texts the rules refuse (only white space, too many marks on one character) are fine.
        guard let fit = try? renderer.fitText(text, author: "\u{1AB1}", preset: preset) else { continue }
        fitted += 1
        let bounds = preset.geometry.drawBounds
        let inside =
          fit.block.x >= Double(bounds.x) - 0.01 && fit.block.y >= Double(bounds.y) - 0.01
          && fit.block.x + fit.block.width <= Double(bounds.x + bounds.width) + 0.01
          && fit.block.y + fit.block.height <= Double(bounds.y + bounds.height) + 0.01
        #expect(inside, "\(text.unicodeScalars.map { String($0.value, radix: 16) }) on \(preset): \(fit.block)")
      }
    }
    #expect(fitted > 1_500, "most random texts pass the text rules")
  }

  /// The Pango assertion needs a wrap width that ends a line at the word break Pango cannot
  /// honour: lay the text out at every width from 1 px to past its natural width (before the
  /// fix, 269 of these widths aborted the process).
  @Test func noWrapWidthMakesPangoAbort() throws {
    let layout = try Self.layout(HostileText.breakInsideGrapheme.text)
    layout.setPixelSize(TextLayout.referenceSize)
    layout.setUnlimitedWidth()
    let natural = Int(layout.bounds.width.rounded(.up))
    #expect(natural > 100)
    for width in 1...(natural + 20) {
      layout.setWidth(Double(width))
      #expect(layout.lineCount >= 1)
    }
  }

  /// Ordinary text keeps breaking inside a word too wide for the line; only text with a word
  /// break that is not a character break falls back to word breaks alone.
  @Test func longWordsStillBreakInsideTheWord() throws {
    let layout = try Self.layout(String(repeating: "W", count: 40))
    layout.setPixelSize(TextLayout.referenceSize)
    layout.setWidth(400)
    #expect(layout.lineCount > 1, "a word wider than the line is broken between characters")
    #expect(layout.bounds.width <= 400 + 64)
  }

  /// Whatever the fitter computes, the width and height handed to Pango stay in 1 px ...
  /// `maximumPangoLength`: negative, zero, huge, infinite and not-a-number widths all lay out.
  @Test(arguments: [-1e12, -5, 0, 0.25, 1e12, .infinity, -.infinity, .nan])
  func anyWrapWidthIsBounded(width: Double) throws {
    let layout = try Self.layout("Peace comes from within.")
    for size in [12.0, 128, 0, -3, .nan, .infinity] {
      layout.setPixelSize(size)
      layout.setWidth(width)
      layout.limitHeight(width)
      let bounds = layout.bounds
      #expect(bounds.width.isFinite && bounds.height.isFinite && bounds.height > 0, "size \(size), width \(width)")
    }
  }

  private static func layout(_ text: String) throws -> TextLayout {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    return TextLayout(context: context, text: text, family: FontSetup.family)
  }
}

/// SplitMix64: a tiny seeded generator, so random texts and images repeat from run to run.
struct SplitMix: RandomNumberGenerator {
  var state: UInt64

  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// What the text rules hand to Pango and FriBidi (issue 17): bidi controls bounded in number and
/// nesting, and text with nothing visible refused like empty text.
@Suite("Bidi and invisible text")
struct BidiAndInvisibleTextTests {
  let renderer = Fixtures.renderer

  /// The bidi control characters: embeddings, overrides, their terminator, isolates, their
  /// terminator, and the marks LRM, RLM, ALM.
  static let bidiControls: [Unicode.Scalar] = [
    "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
    "\u{200E}", "\u{200F}", "\u{061C}",
  ]

  /// About a thousand bidi controls and one letter: each crashed the renderer with a segfault
  /// inside libfribidi 1.0.8 (issue 17). Each is now refused with one line naming the rule,
  /// for the quote and for the author.
  @Test(arguments: 0..<6)
  func manyBidiControlsAreRefused(seed: Int) throws {
    var generator = SplitMix(state: UInt64(seed))
    var scalars = String.UnicodeScalarView()
    for _ in 0..<1_000 {
      scalars.append(seed == 0 ? "\u{202B}" : Self.bidiControls[Int(generator.next() % 12)])
    }
    scalars.append("a")
    let text = String(scalars)
    let error = innerPeaceError { try renderer.fitText(text, author: "", preset: .og) }
    guard case .textInvalid(let reason)? = error else {
      Issue.record("expected textInvalid, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("bidi"), "\(reason)")
    #expect(!reason.contains("\n"))
    // An author is at most 200 characters, under the total: its controls nest too deep.
    let author = String(repeating: "\u{2067}\u{202E}", count: 90) + "a"
    let authorError = innerPeaceError { try renderer.fitText("Peace.", author: author, preset: .og) }
    guard case .authorInvalid(let authorReason)? = authorError else {
      Issue.record("expected authorInvalid, got \(String(describing: authorError))")
      return
    }
    #expect(authorReason.contains("bidi"), "\(authorReason)")
  }

  /// Nesting is counted as UAX #9 counts it: a terminator closes only what it may close, a
  /// paragraph break closes everything, and unpaired terminators change nothing.
  @Test func nestingLimit() throws {
    let limit = Limits.maximumBidiNesting
    let open = String(repeating: "\u{2067}", count: limit)
    let close = String(repeating: "\u{2069}", count: limit)
    // At the limit, nested and closed: set and drawn.
    let atLimit = open + "\u{5E9}\u{5DC}\u{5D5}\u{5DD} peace" + close
    _ = try renderer.fitText(atLimit, author: "", preset: .og)
    // One deeper: refused.
    for deeper in [
      "\u{202B}" + atLimit, open + "\u{202E}x" + close,
      // A PDF does not close an isolate, so the embedding inside stays open.
      open + "\u{202C}\u{202A}x",
    ] {
      let error = innerPeaceError { try renderer.fitText(deeper, author: "", preset: .og) }
      guard case .textInvalid(let reason)? = error else {
        Issue.record("expected textInvalid for nesting \(limit + 1), got \(String(describing: error))")
        continue
      }
      #expect(reason.contains("deep"), "\(reason)")
    }
    // Closed, then opened again, and across paragraphs: never deeper than the limit.
    let twice = atLimit + " " + atLimit
    let verse = open + "a\n" + open + "b"
    // A PDI closes its isolate and the embeddings left open inside it.
    let pdiClosesEmbeddings = String(repeating: "\u{2066}\u{202B}\u{202B}x\u{2069}", count: 20)
    let unpaired = String(repeating: "\u{202C}\u{2069}", count: 40) + "x"
    for text in [twice, verse, pdiClosesEmbeddings, unpaired] {
      _ = try renderer.fitText(text, author: "", preset: .og)
    }
  }

  /// The total is bounded too, with marks counted: at the limit is fine, one more is refused.
  @Test func countLimit() throws {
    let limit = Limits.maximumBidiControls
    let marks = String(repeating: "\u{200F}a ", count: limit)
    _ = try renderer.fitText(marks, author: "", preset: .og)
    let error = innerPeaceError { try renderer.fitText(marks + "\u{200E}", author: "", preset: .og) }
    guard case .textInvalid(let reason)? = error else {
      Issue.record("expected textInvalid, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("\(limit)") && reason.contains("bidi"), "\(reason)")
  }

  /// Texts of invisible characters only: refused with the empty text's message, everywhere the
  /// text rules run (fit, render, the custom card's check).
  static let invisibleTexts: [String] = [
    "\u{200B}", "\u{2060}\u{2060}", "\u{FEFF}", "\u{3164}\u{3164}", "\u{115F}\u{1160}",
    "\u{E0001}\u{E0020}\u{E0041}\u{E007F}", "\u{2800}\u{2800}", "\u{AD}\u{AD}", "\u{FE0F}\u{FE0E}\u{E0100}",
    "\u{200E}\u{202B}\u{202C}\u{2067}\u{2069}\u{061C}", "\u{200C}\u{200D}\u{034F}", "\u{FFA0}", "\u{180E}",
    " \u{200B} \u{3000}\u{2060} ",
  ]

  @Test(arguments: invisibleTexts)
  func invisibleTextIsRefusedLikeEmptyText(text: String) throws {
    let empty = innerPeaceError { try renderer.fitText("   ", author: "", preset: .og) }
    let invisible = innerPeaceError { try renderer.fitText(text, author: "", preset: .og) }
    #expect(invisible != nil && invisible == empty, "\(String(describing: invisible))")
    #expect(invisible == .textInvalid(reason: "the text is empty or has nothing visible"))
    let request = CardRequest(quote: .text(text, author: "Someone"), seed: 1)
    #expect(innerPeaceError { try request.validate() } == empty)
    #expect(innerPeaceError { try renderer.render(request) } == empty)
  }

  /// An author of invisible characters only is no author, as an empty one: no author line.
  @Test(arguments: invisibleTexts)
  func invisibleAuthorIsNoAuthor(author: String) throws {
    let fit = try renderer.fitText("Peace begins with a smile.", author: author, preset: .og)
    #expect(fit.authorLines.isEmpty)
    let card = try renderer.render(CardRequest(quote: .text("Peace.", author: author), seed: 1))
    #expect(card.quote.author == "")
  }

  /// Visible text around invisible characters is kept as written, and each visible kind counts:
  /// a letter, digit, punctuation mark, symbol, emoji, combining mark, private-use character.
  @Test(arguments: [
    "\u{200B}a\u{200B}", "\u{2060}7", "\u{FEFF}.", "\u{2800}\u{2665}", "\u{1F600}", "\u{301}", "\u{E000}",
    "\u{3164}\u{AC00}",
  ])
  func visibleCharacterIsEnough(text: String) throws {
    let fit = try renderer.fitText(text, author: "\u{200B}Me", preset: .og)
    #expect(fit.lines.joined() == text.trimmingWhiteSpace())
    #expect(fit.authorLines.count == 1)
  }
}
