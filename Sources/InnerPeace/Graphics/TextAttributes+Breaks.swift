/// Where a line may not break, beyond Pango's own rules (UAX #14), as UTF-8 byte ranges inside
/// which ``TextAttributes/list(for:size:)`` forbids breaks (`pango_attr_allow_breaks_new(0)`:
/// Pango then allows no line or character break strictly inside the range). Both Pango's own wrap
/// and ``LineBreaker`` (through ``BreakModel``) follow them.
///
/// - **No line starts with a dash**: no break before an em dash (U+2014), an en dash (U+2013) or a
///   horizontal bar (U+2015), even after a space; the break after the dash stays, so "these
///   two—Time" breaks as "these two— / Time", as Chromium does. A dash that starts a paragraph
///   (dialogue) is left alone.
/// - **Japanese and Chinese break between phrases** (``PhraseSegmenter``, BudouX's models): no
///   break inside a phrase of two or more characters, in Japanese and Chinese prose and in CJK
///   words inside Latin text alike.
enum BreakRules {
  /// The dashes no line may start with.
  static func isLeadingDashForbidden(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\u{2014}" || scalar == "\u{2013}" || scalar == "\u{2015}"
  }

  /// Characters that end a paragraph or a line: a break after them is mandatory and stays so.
  static func isLineEnd(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\n" || scalar == "\r" || scalar == "\u{2028}" || scalar == "\u{2029}" || scalar == "\u{85}"
      || scalar == "\u{0B}" || scalar == "\u{0C}"
  }

  /// The byte ranges inside which no line may break: the character before each dash together with
  /// the dash, and each phrase of CJK text.
  static func noBreakRanges(in text: String, language: LanguageTag? = nil) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    var offset = 0
    var previous: (scalar: Unicode.Scalar, offset: Int)? = nil
    var mayHaveCJK = false
    for scalar in text.unicodeScalars {
      let width = UTF8.width(scalar)
      if isLeadingDashForbidden(scalar), let previous, !isLineEnd(previous.scalar) {
        ranges.append(previous.offset..<(offset + width))
      }
      if scalar.value >= 0x2E80 { mayHaveCJK = true }
      previous = (scalar, offset)
      offset += width
    }
    if mayHaveCJK { ranges += PhraseSegmenter.phraseRanges(in: text, language: language) }
    return ranges
  }
}
