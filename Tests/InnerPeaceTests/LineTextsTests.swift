import Testing

@testable import InnerPeace

/// The text of each line as innerpeace sets it (``TextLayout/lineTexts``), and the wrap width
/// ``CardRenderer/fitText(_:author:preset:alignment:)`` reports with it: what
/// `innerpeace-bench lines` and `scripts/wrap-compare.py` compare with Chromium.
@Suite("Line texts")
struct LineTextsTests {
  let renderer = Fixtures.renderer

  func layout(_ text: String) -> TextLayout {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: renderer.bundledFontPath))
    let layout = TextLayout(context: context, text: text, family: FontSetup.family)
    layout.setPixelSize(48)
    layout.setUnlimitedWidth()
    return layout
  }

  @Test("A line separator ends a line and is left out of it, with the whitespace before it")
  func lineSeparator() {
    #expect(layout("Peace is \u{2028}within.").lineTexts == ["Peace is", "within."])
  }

  @Test("Byte offsets are UTF-8: lines of Greek, emoji and a dash come out whole")
  func multibyte() {
    #expect(
      layout("Ἐν ἡσυχίᾳ\u{2028}καὶ — ἐν 🌿\u{2028}λόγῳ.").lineTexts == ["Ἐν ἡσυχίᾳ", "καὶ — ἐν 🌿", "λόγῳ."])
  }

  @Test("Each paragraph of verse is a line; an empty one is an empty line")
  func verse() {
    #expect(
      layout("The woods are lovely,\n\ndark and deep.").lineTexts == ["The woods are lovely,", "", "dark and deep."])
  }

  @Test("Cleaning a line drops line and paragraph separators and trailing whitespace only")
  func clean() {
    #expect(TextLayout.cleanLine(" calm \u{2028}\u{2029} ") == " calm")
    #expect(TextLayout.cleanLine("a\u{2028}b") == "ab")
  }

  @Test("The author line's lines come back too, and none without an author")
  func author() throws {
    let fit = try renderer.fitText("Peace comes from within.", author: "Anonymous", preset: .og)
    #expect(fit.authorLines.count == 1)
    #expect(fit.authorLines.first?.hasSuffix("\u{2014} Anonymous") == true)
    #expect(try renderer.fitText("Peace comes from within.", author: "", preset: .og).authorLines.isEmpty)
  }

  @Test(
    "Catalog prose: the lines hold the whole text in order, within the reported wrap width",
    arguments: [
      Preset.og, .square, .story, .classic,
    ])
  func catalog(preset: Preset) throws {
    let bounds = preset.geometry.drawBounds
    for (index, quote) in Fixtures.catalog.quotes.enumerated() where !quote.text.contains("\n") {
      let fit = try renderer.fitText(quote.text, author: quote.author, preset: preset)
      guard !fit.truncated else { continue }
      #expect(fit.lines.count >= 1, "quote \(index) at \(preset)")
      #expect(fit.lines.allSatisfy { !$0.isEmpty && $0.last?.isWhitespace == false }, "quote \(index) at \(preset)")
      // Pango breaks at spaces and after dashes; either way no character is lost or added.
      let squeezed = { (text: String) in text.unicodeScalars.filter { !$0.properties.isWhitespace }.map(String.init) }
      #expect(squeezed(fit.lines.joined()) == squeezed(quote.text), "quote \(index) at \(preset)")
      #expect(fit.wrapWidth > 0 && fit.wrapWidth <= Double(bounds.width), "quote \(index) at \(preset)")
    }
  }
}
