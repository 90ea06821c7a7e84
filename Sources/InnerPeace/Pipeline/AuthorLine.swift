internal import CInnerPeace

extension CardGeometry {
  /// The share of the canvas's shorter side below which the author line is never set: 3.5 %
  /// (14 px on a 400 x 400 card, 22 px on `og`, 38 px on `square` and `story`, 54 px on
  /// `classic`).
  static let authorFloorShareOfCanvas = 0.035

  /// The smallest size the author line is set at, for a quote set at `quoteSize` pixels: 3.5 %
  /// of the canvas's shorter side, and at least 0.3 of the quote's size, but never more than
  /// 0.8 of it (the author line stays smaller than the quote).
  ///
  /// An author line too long for one line at its size shrinks down to this floor, no further:
  /// past it, it wraps to a second line, and only a third line's worth is ellipsized.
  func authorFloor(forQuoteSize quoteSize: Int) -> Double {
    let quote = Double(quoteSize)
    let canvasFloor = Double(min(canvas.width, canvas.height)) * CardGeometry.authorFloorShareOfCanvas
    return min(0.8 * quote, max(0.3 * quote, canvasFloor))
  }
}

extension TextLayout {
  /// The most lines an author line wraps to before the rest is ellipsized.
  static let authorMaximumLines = 2

  /// Wraps each paragraph to at most `lines` lines, ellipsizing the end of the last one where the
  /// text needs more.
  func limitLines(_ lines: Int) {
    pango_layout_set_ellipsize(handle, PANGO_ELLIPSIZE_END)
    pango_layout_set_height(handle, Int32(-max(1, lines)))
  }

  /// Sets the author line's turnover under the name rather than under the dash: a hanging indent
  /// as wide as the text's first `characters` (the direction mark, the dash and the space), as
  /// set in this layout's own faces. Call before any width is set (it lays the text out unwrapped).
  func hangTurnoverAfterLead(characters: Int) {
    let lead = breakModel().advances.prefix(characters).reduce(0, +)
    setHangingIndent(ems: lead / TextLayout.referenceSize)
  }
}
