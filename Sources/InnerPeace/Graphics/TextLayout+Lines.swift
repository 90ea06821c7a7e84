internal import CInnerPeace

extension TextLayout {
  /// The text of each line as Pango set it, top to bottom, at the layout's current wrap width.
  ///
  /// Each line is the layout's UTF-8 text between the line's start index and its length (byte
  /// offsets), with U+2028 LINE SEPARATOR (which a line breaker may insert at the breaks it
  /// chooses) removed and trailing whitespace trimmed. A paragraph break in the text gives a line
  /// of its own; an empty paragraph gives an empty line.
  var lineTexts: [String] {
    FontLock.withLock { unlockedLineTexts }
  }

  private var unlockedLineTexts: [String] {
    guard let text = pango_layout_get_text(handle) else { return [] }
    // Pango holds valid UTF-8 (set_text validates it), so this is the text byte for byte.
    let bytes = Array(String(cString: text).utf8)
    var lines: [String] = []
    for index in 0..<pango_layout_get_line_count(handle) {
      guard let line = pango_layout_get_line_readonly(handle, index) else { continue }
      let start = max(0, min(Int(line.pointee.start_index), bytes.count))
      let end = max(start, min(start + Int(line.pointee.length), bytes.count))
      lines.append(TextLayout.cleanLine(String(decoding: bytes[start..<end], as: UTF8.self)))
    }
    return lines
  }

  /// The line's text without U+2028 LINE SEPARATOR, paragraph separators, or trailing whitespace.
  static func cleanLine(_ line: String) -> String {
    var scalars = String.UnicodeScalarView(line.unicodeScalars.filter { $0 != "\u{2028}" && $0 != "\u{2029}" })
    while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
    return String(scalars)
  }

  /// The wrap width in pixels at the current size, or `nil` when the layout does not wrap.
  var wrapWidth: Double? {
    let width = pango_layout_get_width(handle)
    guard width >= 0 else { return nil }
    return Double(width) / Double(innerpeace_pango_scale) * scale
  }
}
