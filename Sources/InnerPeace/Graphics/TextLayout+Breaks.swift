internal import CInnerPeace

/// What a line breaker needs to know about a text, read from one unwrapped layout at the
/// reference size: each character's advance, and where Pango's own rules allow a break.
///
/// Characters are Unicode scalars, as in Pango's log attributes. Widths are in pixels at
/// ``TextLayout/referenceSize``; a layout at another size is this one scaled.
struct BreakModel {
  /// The text, one scalar per character.
  let scalars: [Unicode.Scalar]
  /// The advance of each character (a cluster's width is given to its first character).
  let advances: [Double]
  /// For each position `0...scalars.count`: Pango allows a line break before that character.
  let allowsBreak: [Bool]
  /// ...and a break there is mandatory (after a paragraph separator, and at the end).
  let mustBreak: [Bool]
  /// ...and a break inside a word (between grapheme clusters) is possible there.
  let allowsCharacterBreak: [Bool]
  /// For each character: it is white space.
  let isWhite: [Bool]
  /// The advance of the hyphen ``LineBreaker`` adds where it breaks a word (pixels at the
  /// reference size; 0: not measured, so no word is hyphenated).
  var hyphenAdvance: Double = 0
  /// The text's language where the caller gave it (``TextLayout/language``): it picks the
  /// hyphenation patterns.
  var language: LanguageTag? = nil
}

extension TextLayout {
  /// The break model of this layout's text. Leaves the layout unwrapped (callers set a width
  /// again before measuring).
  func breakModel() -> BreakModel {
    FontLock.withLock { unlockedBreakModel() }
  }

  private func unlockedBreakModel() -> BreakModel {
    setUnlimitedWidth()
    let text = self.text
    let scalars = Array(text.unicodeScalars)
    // Byte offset of each character, to map Pango's byte indexes back to characters.
    var characterAtByte: [Int: Int] = [:]
    characterAtByte.reserveCapacity(scalars.count)
    var offset = 0
    for (index, scalar) in scalars.enumerated() {
      characterAtByte[offset] = index
      offset += UTF8.width(scalar)
    }
    var advances = [Double](repeating: 0, count: scalars.count)
    if let iterator = pango_layout_get_iter(handle) {
      defer { pango_layout_iter_free(iterator) }
      let unit = Double(innerpeace_pango_scale)
      repeat {
        guard pango_layout_iter_get_run_readonly(iterator) != nil else { continue }
        var logical = PangoRectangle()
        pango_layout_iter_get_cluster_extents(iterator, nil, &logical)
        if let character = characterAtByte[Int(pango_layout_iter_get_index(iterator))] {
          advances[character] += abs(Double(logical.width)) / unit
        }
      } while pango_layout_iter_next_cluster(iterator) != 0
    }
    var count: Int32 = 0
    var allowsBreak = [Bool](repeating: false, count: scalars.count + 1)
    var mustBreak = allowsBreak
    var allowsCharacterBreak = allowsBreak
    var isWhite = [Bool](repeating: false, count: scalars.count)
    if let attributes = pango_layout_get_log_attrs_readonly(handle, &count) {
      for index in 0..<min(Int(count), scalars.count + 1) {
        let attribute = attributes[index]
        allowsBreak[index] = attribute.is_line_break != 0
        mustBreak[index] = attribute.is_mandatory_break != 0
        allowsCharacterBreak[index] = attribute.is_char_break != 0
        if index < scalars.count { isWhite[index] = attribute.is_white != 0 }
      }
    }
    mustBreak[scalars.count] = true
    return BreakModel(
      scalars: scalars, advances: advances, allowsBreak: allowsBreak, mustBreak: mustBreak,
      allowsCharacterBreak: allowsCharacterBreak, isWhite: isWhite, hyphenAdvance: unlockedHyphenAdvance(),
      language: language)
  }

  /// Hyphen advances measured so far, by font description: one small layout per face and process.
  private static let hyphenAdvances = Locked<[String: Double]>([:])

  /// The advance of ``Hyphenation/hyphen`` in this layout's font, at the reference size.
  private func unlockedHyphenAdvance() -> Double {
    guard let context = pango_layout_get_context(handle) else { return 0 }
    let description = pango_layout_get_font_description(handle)
    let key =
      description.flatMap { pango_font_description_to_string($0) }.map { owned in
        defer { g_free(owned) }
        return String(cString: owned)
      } ?? ""
    if let known = TextLayout.hyphenAdvances.withLock({ $0[key] }) { return known }
    guard let layout = pango_layout_new(context) else { return 0 }
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    if let description { pango_layout_set_font_description(layout, description) }
    let hyphen = String(Character(Hyphenation.hyphen))
    pango_layout_set_text(layout, hyphen, Int32(hyphen.utf8.count))
    var logical = PangoRectangle()
    pango_layout_get_extents(layout, nil, &logical)
    let advance = Double(logical.width) / Double(innerpeace_pango_scale)
    TextLayout.hyphenAdvances.withLock { $0[key] = advance }
    return advance
  }

  /// The layout's text.
  var text: String {
    guard let text = pango_layout_get_text(handle) else { return "" }
    return String(cString: text)
  }

  /// Sets each paragraph on one line, ellipsized at the end where it is wider than the width.
  func ellipsizeEachLine() {
    pango_layout_set_ellipsize(handle, PANGO_ELLIPSIZE_END)
    pango_layout_set_height(handle, -1)
  }

  /// Indents every line but the first of each paragraph by `ems` of the layout's size (a hanging
  /// indent for verse turnovers); 0 removes it.
  func setHangingIndent(ems: Double) {
    let units = -ems * TextLayout.referenceSize * Double(innerpeace_pango_scale)
    pango_layout_set_indent(handle, Int32(max(-TextLayout.maximumPangoLength, min(0, units.rounded()))))
  }
}

extension TextLayout {
  /// Where line `index` starts (its logical left edge), in pixels at the current size.
  func lineStart(_ index: Int) -> Double {
    FontLock.withLock { unlockedLineStart(index) }
  }

  private func unlockedLineStart(_ index: Int) -> Double {
    guard let iterator = pango_layout_get_iter(handle) else { return 0 }
    defer { pango_layout_iter_free(iterator) }
    var line = 0
    while line < index && pango_layout_iter_next_line(iterator) != 0 { line += 1 }
    var logical = PangoRectangle()
    pango_layout_iter_get_line_extents(iterator, nil, &logical)
    return Double(logical.x) / Double(innerpeace_pango_scale) * scale
  }
}
