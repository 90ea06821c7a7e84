extension CardRenderer {
  /// How many glyphs of `text` and its author line (as the card sets it, `— author`) no installed
  /// font can draw, without fitting or drawing: the count ``RenderedCard/missingGlyphs`` reports
  /// for a card whose text was not ellipsized. Lets a batch that keeps cards from an earlier run
  /// still report them.
  public func missingGlyphs(text: String, author: String) -> Int {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: bundledFontPath))
    var count = TextLayout(context: context, text: text, family: FontSetup.family).unknownGlyphCount
    if !author.isEmpty {
      count += TextLayout(context: context, text: "\u{2014} \(author)", family: FontSetup.family).unknownGlyphCount
    }
    return count
  }
}
