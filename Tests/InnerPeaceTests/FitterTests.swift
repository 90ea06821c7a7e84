import CInnerPeace
import Foundation
import Testing

@testable import InnerPeace

/// A text the fitter must place inside the draw bounds.
struct FitCase: Sendable, CustomTestStringConvertible {
  let name: String
  let text: String
  var author: String = "Someone Calm"
  /// `true` or `false` when the outcome is known for every preset; `nil` when it depends on it.
  var truncated: Bool? = nil

  var testDescription: String { name }

  static let short = FitCase(name: "short quote", text: "Peace comes from within.", truncated: false)

  static let all: [FitCase] = [
    short,
    FitCase(
      name: "long unbreakable words",
      text: "Pneumonoultramicroscopicsilicovolcanoconiosis "
        + String(repeating: "Supercalifragilisticexpialidocious", count: 6)
        + " and " + String(repeating: "W", count: 120), truncated: false),
    FitCase(
      name: "300-character URL",
      text: "https://example.org/" + String(repeating: "calm-quiet_path/", count: 18) + "end", truncated: nil),
    FitCase(name: "5,000 characters", text: String(repeating: "calm ", count: 999) + "calm!", truncated: true),
    FitCase(name: "emoji", text: "🌿 Breathe in 🌊, breathe out 🌬️. ☀️🕊️ 👨‍👩‍👧‍👦 🏳️‍🌈 👍🏽", truncated: false),
    FitCase(name: "CJK", text: "静かな心は、すべての答えを知っている。千里之行，始於足下。마음의 평화는 안에서 온다.", truncated: false),
    FitCase(
      name: "Arabic", text: "السلام الداخلي يبدأ من الداخل، فلا تبحث عنه في الخارج.", author: "حكمة", truncated: false),
    FitCase(
      name: "Hebrew/English bidi", text: "שלום means peace, and שלווה means serenity (2024).", author: "Anon אנונימי",
      truncated: false),
    FitCase(
      name: "combining marks, Devanagari, Thai",
      text: String(repeating: "e\u{301}", count: 30) + " शांति ॐ नमः शिवाय क्षत्रिय " + "ความสงบภายในใจ ที่นี่ ",
      truncated: false),
    FitCase(name: "40 short lines", text: (1...40).map { "Line \($0)" }.joined(separator: "\n")),
    FitCase(
      name: "4,998 characters in 1,666 lines", text: String(repeating: "ok\n", count: 1_666), truncated: true),
    FitCase(name: "no author", text: "Still water runs deep, and the deep is still.", author: "", truncated: false),
  ]
}

/// Presets the fitter is exercised on (fitting only lays text out, so all are cheap).
let fitPresets: [Preset] = [.og, .classic, .square, .story, .custom(try! CanvasSize(width: 1600, height: 900))]

@Suite("Text fitter")
struct FitterTests {
  let renderer = Fixtures.renderer

  // MARK: Geometry

  @Test func classicReproducesTheAppGeometry() throws {
    let geometry = Preset.classic.geometry
    #expect(geometry.canvas.width == 2048 && geometry.canvas.height == 1536)
    let bounds = geometry.drawBounds
    #expect(bounds.x == 500 && bounds.y == 500 && bounds.width == 1048 && bounds.height == 536)
    let sizes = geometry.candidateSizes
    #expect(sizes.first == 240)
    #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 - $1 == 8 }, "the app shrank by 4 pt = 8 px: \(sizes)")
    #expect(sizes.last == geometry.minimumSize)
    #expect(geometry.shadowSigmas == [2, 4, 6, 8, 10])
    #expect(geometry.haloMargin == 60)
    #expect(geometry.pixelsPerPoint == 2)
    #expect(!geometry.adjustsSizeForParagraph, "classic keeps the app's line breaks")
  }

  @Test(arguments: [
    (Preset.classic, 2048, 1536), (Preset.og, 1200, 630), (Preset.square, 1080, 1080), (Preset.story, 1080, 1920),
  ])
  func namedPresetSizes(preset: Preset, width: Int, height: Int) {
    #expect(preset.size.width == width && preset.size.height == height)
    let geometry = preset.geometry
    let bounds = geometry.drawBounds
    #expect(bounds.x > 0 && bounds.y > 0 && bounds.width > 0 && bounds.height > 0)
    #expect(bounds.x + bounds.width <= width && bounds.y + bounds.height <= height)
    // Bounds are centred on the canvas.
    #expect(bounds.x * 2 + bounds.width == width && bounds.y * 2 + bounds.height == height)
    let sizes = geometry.candidateSizes
    #expect(!sizes.isEmpty)
    #expect(zip(sizes, sizes.dropFirst()).allSatisfy { $0 > $1 }, "candidate sizes must be strictly decreasing")
    #expect(sizes.last == geometry.minimumSize)
    #expect(geometry.shadowSigmas.count == 5)
  }

  // MARK: Inside the bounds

  @Test(arguments: fitPresets, FitCase.all)
  func blockStaysInsideDrawBounds(preset: Preset, fitCase: FitCase) throws {
    let fit = try renderer.fitText(fitCase.text, author: fitCase.author, preset: preset)
    let bounds = preset.geometry.drawBounds
    let tolerance = 0.01
    let block = fit.block
    #expect(block.width > 0 && block.height > 0)
    #expect(block.x >= Double(bounds.x) - tolerance, "left edge \(block.x) < \(bounds.x)")
    #expect(block.y >= Double(bounds.y) - tolerance, "top edge \(block.y) < \(bounds.y)")
    #expect(
      block.x + block.width <= Double(bounds.x + bounds.width) + tolerance,
      "right edge \(block.x + block.width) > \(bounds.x + bounds.width)")
    #expect(
      block.y + block.height <= Double(bounds.y + bounds.height) + tolerance,
      "bottom edge \(block.y + block.height) > \(bounds.y + bounds.height) (height \(block.height), fontSize \(fit.fontSize), truncated \(fit.truncated))"
    )

    let sizes = preset.geometry.candidateSizes
    #expect(sizes.contains(fit.fontSize), "font size \(fit.fontSize) is not a candidate")
    if let truncated = fitCase.truncated {
      #expect(fit.truncated == truncated)
    }
    if fit.truncated {
      #expect(fit.fontSize == preset.geometry.minimumSize, "truncation happens at the minimum legible size")
    } else {
      #expect(fit.passes <= maximumPasses(preset), "\(fit.passes) layout passes for \(sizes.count) candidate sizes")
    }
  }

  @Test(arguments: [Preset.og, .classic])
  func centredAlignmentStaysInside(preset: Preset) throws {
    for fitCase in FitCase.all {
      let fit = try renderer.fitText(fitCase.text, author: fitCase.author, preset: preset, alignment: .center)
      let bounds = preset.geometry.drawBounds
      #expect(fit.block.x >= Double(bounds.x) - 0.01 && fit.block.y >= Double(bounds.y) - 0.01, "\(fitCase.name)")
      #expect(fit.block.x + fit.block.width <= Double(bounds.x + bounds.width) + 0.01, "\(fitCase.name)")
      #expect(fit.block.y + fit.block.height <= Double(bounds.y + bounds.height) + 0.01, "\(fitCase.name)")
    }
  }

  @Test(arguments: [Preset.og, .classic])
  func blockIsCentredInTheBounds(preset: Preset) throws {
    let fit = try renderer.fitText("A calm mind is a quiet sea.", author: "Anonymous", preset: preset)
    let bounds = preset.geometry.drawBounds
    let centreX = fit.block.x + fit.block.width / 2
    let centreY = fit.block.y + fit.block.height / 2
    #expect(abs(centreX - (Double(bounds.x) + Double(bounds.width) / 2)) < 0.5)
    #expect(abs(centreY - (Double(bounds.y) + Double(bounds.height) / 2)) < 0.5)
  }

  // MARK: The largest size that fits

  @Test(arguments: fitPresets)
  func shortQuoteGetsTheStartSize(preset: Preset) throws {
    let fit = try renderer.fitText("Peace.", author: "", preset: preset)
    #expect(fit.fontSize == preset.geometry.candidateSizes[0])
    #expect(!fit.truncated)
    #expect(fit.passes <= 2, "a text that fits at the start size needs no search")
  }

  @Test(arguments: fitPresets)
  func longerTextGetsAStrictlySmallerSize(preset: Preset) throws {
    let short = try renderer.fitText("Peace.", author: "", preset: preset)
    let long = try renderer.fitText(
      String(repeating: "The quiet mind hears what the busy mind cannot. ", count: 6), author: "Anonymous",
      preset: preset)
    #expect(long.fontSize < short.fontSize)
    #expect(!long.truncated)
    #expect(long.passes <= maximumPasses(preset), "\(long.passes) layout passes")
  }

  @Test(arguments: [Preset.og, .classic])
  func addingTextNeverGrowsTheSize(preset: Preset) throws {
    let words = "Breathe and let be; the river knows the way to the sea without hurry or doubt".split(separator: " ")
    var previous = Int.max
    for count in stride(from: 2, through: words.count, by: 2) {
      let text = words.prefix(count).joined(separator: " ")
      let fit = try renderer.fitText(text, author: "Anonymous", preset: preset)
      #expect(fit.fontSize <= previous, "'\(text)' got \(fit.fontSize) px after \(previous) px for a shorter text")
      previous = fit.fontSize
    }
  }

  /// An independent oracle: lays the text out with Pango exactly as `TextFitter` documents it
  /// (italic bundled family, word-char wrapping to the bounds less a 0.12 em overhang allowance,
  /// an author line at 0.48 em (at least min(0.8 em, the minimum size), and at least the author
  /// floor: min(0.8 em, max(0.3 em, 3.5 % of the canvas's shorter side))) after a 0.6 author-em
  /// gap; block = ink ∪ logical) and checks that
  /// the chosen size fits and that *every* larger candidate does not, i.e. the bisection found
  /// the largest size, as a linear scan would.
  @Test(
    arguments: [Preset.og, .classic],
    [
      FitCase(
        name: "medium",
        text: "Nothing can bring you peace but yourself. Nothing can bring you peace but the triumph of principles."),
      FitCase(
        name: "long",
        text: String(
          repeating:
            "Do not dwell in the past, do not dream of the future, concentrate the mind on the present moment. ",
          count: 4)),
      FitCase(
        name: "no author", text: "You cannot find peace by avoiding life, but you can find it by living fully.",
        author: ""),
      FitCase(name: "CJK", text: String(repeating: "静かな心は、すべての答えを知っている。", count: 5)),
    ])
  func chosenSizeIsTheLargestThatFits(preset: Preset, fitCase: FitCase) throws {
    let fit = try renderer.fitText(fitCase.text, author: fitCase.author, preset: preset)
    #expect(!fit.truncated)
    let oracle = LayoutOracle(preset: preset)
    let atChosen = oracle.block(text: fitCase.text, author: fitCase.author, size: fit.fontSize)
    // The oracle must agree with the fitter at the chosen size, or its verdicts mean nothing. The
    // line breaker chooses other breaks than the oracle's greedy wrap, in as many lines, so the
    // widths differ and the heights agree up to the ink of the letters that end up on the last
    // line.
    #expect(
      abs(atChosen.height - fit.block.height) < Double(fit.fontSize) * 0.25, "oracle \(atChosen) vs fitter \(fit.block)"
    )
    #expect(oracle.fits(atChosen), "the chosen size does not fit at full width: \(atChosen)")
    for size in preset.geometry.candidateSizes where size > fit.fontSize {
      let block = oracle.block(text: fitCase.text, author: fitCase.author, size: size)
      #expect(
        !oracle.fits(block), "\(size) px fits too (\(block.width) x \(block.height)), but \(fit.fontSize) px was chosen"
      )
    }
  }

  // MARK: Text rules

  @Test func textRulesRejectBadText() throws {
    let preset = Preset.og
    let cases: [(String, String)] = [
      ("   \n\t  ", "empty"),
      (String(repeating: "a", count: Limits.maximumTextCharacters + 1), "limit"),
      ("a\u{0}b", "NUL"),
      ("bell\u{7}", "control"),
      ("z" + String(repeating: "\u{301}", count: Limits.maximumCombiningMarksPerCharacter + 1), "combining"),
    ]
    for (text, fragment) in cases {
      let error = innerPeaceError { try renderer.fitText(text, author: "", preset: preset) }
      guard case .textInvalid(let reason)? = error else {
        Issue.record("\(text.prefix(20).debugDescription): expected textInvalid, got \(String(describing: error))")
        continue
      }
      #expect(reason.localizedCaseInsensitiveContains(fragment), "\(reason)")
      #expect(!error!.description.contains("\n"))
    }
    // Exactly at the limits is fine.
    _ = try renderer.fitText(String(repeating: "a", count: Limits.maximumTextCharacters), author: "", preset: preset)
    _ = try renderer.fitText(
      "z" + String(repeating: "\u{301}", count: Limits.maximumCombiningMarksPerCharacter), author: "", preset: preset)
  }

  @Test func authorRulesRejectBadAuthors() {
    for author in [String(repeating: "b", count: Limits.maximumAuthorCharacters + 1), "two\nlines", "tab\u{1B}esc"] {
      let error = innerPeaceError { try renderer.fitText("Peace.", author: author, preset: .og) }
      guard case .authorInvalid? = error else {
        Issue.record("\(author.prefix(20).debugDescription): expected authorInvalid, got \(String(describing: error))")
        continue
      }
    }
  }
}

/// The most layout passes a fit may take: a bisection over the candidate sizes with the monotonic
/// bound (the first size, the last, about log2(n) between), then the candidates measured from there
/// down (one or two), plus, where the preset balances lines, a bisection over the wrap width in steps
/// of at least 2 px (about log2(width) layouts and two more). Logarithmic either way: never one
/// layout per candidate size, as the app's loop was.
func maximumPasses(_ preset: Preset) -> Int {
  let geometry = preset.geometry
  // Bisection over the candidates with the bound, a measure or two (each up to three re-layouts
  // when italic overhang makes a block wider than the bounds), and the final layout; then the line
  // breaker: one unwrapped layout for its model, and at most two broken layouts measured (each up
  // to four layouts), or the greedy layout again; verse may first try one size kept whole.
  let sizes = Int(Double(geometry.candidateSizes.count).log2Ceiling) + 8
  return sizes + 2 + 16 * 3 + 4 + (geometry.adjustsSizeForParagraph ? 4 : 0)
}

extension Double {
  var log2Ceiling: Double { Foundation.log2(self).rounded(.up) }
}

/// Lays text out with Pango independently of the renderer, with the settings `TextFitter`
/// documents. Must be used on the thread that called the renderer (Pango font maps are per thread).
struct LayoutOracle {
  let preset: Preset

  struct Block: CustomStringConvertible {
    var x, y, width, height: Double
    var description: String { "(\(x), \(y), \(width) x \(height))" }
  }

  func fits(_ block: Block) -> Bool {
    let bounds = preset.geometry.drawBounds
    return block.width <= Double(bounds.width) && block.height <= Double(bounds.height)
  }

  func block(text: String, author: String, size: Int) -> Block {
    // Installs the renderer's bundled-file preference on this thread's font map.
    _ = Fixtures.renderer.fontFiles(for: "x")
    let geometry = preset.geometry
    let fontMap = pango_cairo_font_map_get_default()!
    let context = pango_font_map_create_context(fontMap)!
    defer { g_object_unref(UnsafeMutableRawPointer(context)) }
    let options = cairo_font_options_create()!
    cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
    cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
    cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
    pango_cairo_context_set_font_options(context, options)
    cairo_font_options_destroy(options)
    pango_context_set_round_glyph_positions(context, 0)

    let width = Double(geometry.drawBounds.width) - (Double(size) * 0.12).rounded(.up)
    // Under the renderer's font lock, as every Pango call that can load a font must be.
    func layout(_ string: String, pixels: Double) -> (ink: Block, logical: Block, bounds: Block) {
      FontLock.withLock { unlockedLayout(string, pixels: pixels) }
    }
    func unlockedLayout(_ string: String, pixels: Double) -> (ink: Block, logical: Block, bounds: Block) {
      let layout = pango_layout_new(context)!
      defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
      pango_layout_set_text(layout, string, Int32(string.utf8.count))
      // The faces, languages, breaks and line heights every layout of the text gets.
      let attributes = TextAttributes.list(for: string, size: pixels)
      pango_layout_set_attributes(layout, attributes)
      pango_attr_list_unref(attributes)
      pango_layout_set_wrap(layout, PANGO_WRAP_WORD_CHAR)
      pango_layout_set_auto_dir(layout, 1)
      pango_layout_set_alignment(layout, PANGO_ALIGN_LEFT)
      let font = pango_font_description_new()!
      defer { pango_font_description_free(font) }
      pango_font_description_set_family(font, "EB Garamond")
      pango_font_description_set_style(font, PANGO_STYLE_ITALIC)
      pango_font_description_set_absolute_size(font, pixels * Double(innerpeace_pango_scale))
      pango_layout_set_font_description(layout, font)
      pango_layout_set_width(layout, Int32((width * Double(innerpeace_pango_scale)).rounded(.down)))
      var ink = PangoRectangle()
      var logical = PangoRectangle()
      pango_layout_get_extents(layout, &ink, &logical)
      let scale = Double(innerpeace_pango_scale)
      let i = Block(
        x: Double(ink.x) / scale, y: Double(ink.y) / scale, width: Double(ink.width) / scale,
        height: Double(ink.height) / scale)
      let l = Block(
        x: Double(logical.x) / scale, y: Double(logical.y) / scale, width: Double(logical.width) / scale,
        height: Double(logical.height) / scale)
      return (i, l, i.width > 0 && i.height > 0 ? union(i, l) : l)
    }
    let quote = layout(text, pixels: Double(size))
    guard !author.isEmpty else { return quote.bounds }
    let authorSize = max(
      Double(size) * 0.48, min(Double(size) * 0.8, Double(geometry.minimumSize)),
      min(
        0.8 * Double(size), max(0.3 * Double(size), 0.035 * Double(min(geometry.canvas.width, geometry.canvas.height))))
    )
    // The oracle's texts all read left to right, so the author line gets a left-to-right mark.
    let authorLayout = layout("\u{200E}\u{2014} \(author)", pixels: authorSize)
    let top = quote.logical.y + quote.logical.height + authorSize * 0.6
    var shifted = authorLayout.bounds
    shifted.y += top
    return union(quote.bounds, shifted)
  }

  private func union(_ a: Block, _ b: Block) -> Block {
    let x = min(a.x, b.x)
    let y = min(a.y, b.y)
    return Block(
      x: x, y: y, width: max(a.x + a.width, b.x + b.width) - x, height: max(a.y + a.height, b.y + b.height) - y)
  }
}
