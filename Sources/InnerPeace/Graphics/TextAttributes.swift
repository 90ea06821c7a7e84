internal import CInnerPeace

/// The per-run Pango attributes a text needs to be set well in every script, computed from the
/// text alone in one scan (``TextAttributes/list(for:)``):
///
/// - **Companion faces.** Every script Noto has a serif for is set in it instead of the bundled
///   italic (which lacks them, so fontconfig would fall back to a sans with a synthetic oblique):
///   Han, kana and Hangul in Noto Serif CJK SC / JP / KR, Arabic in Noto Naskh Arabic (Noto
///   Nastaliq Urdu in a text with Urdu letters or when the caller says `ur`), Hebrew, Devanagari,
///   Bengali, Gurmukhi, Gujarati, Tamil, Telugu, Kannada, Malayalam, Sinhala, Thai, Lao, Khmer,
///   Myanmar, Tibetan, Georgian, Armenian and Ethiopic in their Noto Serif. The slant rule: the
///   quote is an italic, so a companion with a true slanted or italic design is set in it (Noto
///   Serif Tamil Slanted, which beside EB Garamond reads as the same voice; Noto Serif Italic for
///   the letters EB Garamond draws empty); every other companion is upright, as designed, and no
///   face is ever slanted synthetically. Spaces, digits and punctuation between two runs of one
///   such script (or at the text's edge) join the run, in faces that have them (CJK, Arabic, the
///   Indic scripts), so a line of one script is set in one face; inside the others digits and
///   punctuation are set in Noto Serif, upright.
/// - **Whole grapheme clusters.** A scalar that extends a cluster (a combining mark or vowel
///   sign, a joiner, an emoji modifier) joins the run of the scalar before it, so a cluster is
///   never split across fonts (no vowel sign on a dotted circle).
/// - **A language per run**: `zh-hans` for Han, `ja` for Han and kana when the text has kana,
///   `ko` for Hangul (and for Han in a text with Hangul and no kana), and each companion's own
///   (`ar`, `ur`, `he`, `hi`, `bn`, `ta`, ..., see ``Face/language``).
/// - **Korean breaks only at spaces**: no break inside a run of non-space characters that holds
///   Hangul, in Pango's own log attributes.
/// - **No break before a dash, none inside a CJK phrase** (``BreakRules``).
/// - **No hyphens inserted by Pango**, anywhere (``LineBreaker`` adds a visible hyphen itself
///   where it hyphenates a word).
/// - **A fixed line height**: every run gets an absolute line height, a multiple of the size set
///   by the text's main script (``lineHeight(of:vietnamese:)``). Pango centres each run's line box on its
///   own font's ascent and descent, and a line's box is the union of its runs' boxes; a run in
///   another face than the main one therefore gets a line height shortened by twice the distance
///   between the two faces' box centres, so its box lies inside the main face's box and never
///   makes its line taller (a line made only of such runs comes out shorter instead).
/// - **Lining figures in right-to-left paragraphs** (`lnum`), so 1207 never reads "I207".
/// - **Characters the bundled font maps to an empty glyph** (ѵ Ә ᴂ ẝ ∆ among them) are set in
///   Noto Serif Italic, scaled to EB Garamond's x-height (capitals to its capital height), so
///   they never vanish. (Polytonic Greek ᾳ ῃ ῳ ᾼ is not among them: the bundled file draws it,
///   composed from its own letter and ypogegrammeni by `scripts/compose-greek-iota.py`, so a
///   Greek word keeps one face.)
///
/// Apply with ``TextLayout/applyTextAttributes(for:)`` whenever a layout's text is set.
enum TextAttributes {
  /// What a character asks of the face. `neutral` is anything that is not a letter (spaces,
  /// digits, punctuation, symbols).
  enum Script: UInt8, CaseIterable {
    case neutral, bundled, han, kana, hangul, arabic, hebrew, devanagari, thai, emptyOutline, emptyOutlineCapital
    case bengali, gurmukhi, gujarati, tamil, telugu, kannada, malayalam, sinhala, lao, tibetan, myanmar, georgian
    case armenian, ethiopic, khmer, emoji
  }

  /// How many scripts there are (computed once: `allCases` builds an array).
  private static let scriptCount = Script.allCases.count

  /// A face a run is set in.
  enum Face: Equatable, CaseIterable {
    case bundled, cjkSC, cjkJP, cjkKR, arabic, hebrew, devanagari, thai
    /// Noto Serif Italic, scaled to EB Garamond's x-height: lower-case letters EB Garamond draws
    /// no outline for (ѵ ᴂ ẝ), and symbols.
    case serifItalic
    /// Noto Serif Italic, scaled to EB Garamond's capital height: capitals it draws no outline for.
    case serifItalicCapital
    /// Noto Serif upright: digits and punctuation inside a script whose face lacks them.
    case serifUpright
    /// Noto Nastaliq Urdu: Arabic script in a text with Urdu letters, or when the caller says `ur`.
    case urdu
    case bengali, gurmukhi, gujarati, tamil, telugu, kannada, malayalam, sinhala, lao, tibetan, myanmar, georgian
    case armenian, ethiopic, khmer
    /// Noto Color Emoji, upright: fallback from the italic would slant it with a matrix.
    case emoji

    /// The fontconfig family asked for (`nil`: the layout's own, the bundled italic).
    var family: String? {
      switch self {
      case .bundled: nil
      case .cjkSC: "Noto Serif CJK SC"
      case .cjkJP: "Noto Serif CJK JP"
      case .cjkKR: "Noto Serif CJK KR"
      case .arabic: "Noto Naskh Arabic"
      case .urdu: "Noto Nastaliq Urdu"
      case .hebrew: "Noto Serif Hebrew"
      case .devanagari: "Noto Serif Devanagari"
      case .thai: "Noto Serif Thai"
      case .serifItalic, .serifItalicCapital, .serifUpright: "Noto Serif"
      case .bengali: "Noto Serif Bengali"
      case .gurmukhi: "Noto Serif Gurmukhi"
      case .gujarati: "Noto Serif Gujarati"
      case .tamil: "Noto Serif Tamil Slanted"
      case .telugu: "Noto Serif Telugu"
      case .kannada: "Noto Serif Kannada"
      case .malayalam: "Noto Serif Malayalam"
      case .sinhala: "Noto Serif Sinhala"
      case .lao: "Noto Serif Lao"
      case .tibetan: "Noto Serif Tibetan"
      case .myanmar: "Noto Serif Myanmar"
      case .georgian: "Noto Serif Georgian"
      case .armenian: "Noto Serif Armenian"
      case .ethiopic: "Noto Serif Ethiopic"
      case .khmer: "Noto Serif Khmer"
      case .emoji: "Noto Color Emoji"
      }
    }

    /// The families handed to Pango: the face's own, then the upright design where the face is
    /// a slanted one that may not be installed, then the stand-in for characters Noto lacks.
    var families: String? {
      switch self {
      case .serifItalic, .serifItalicCapital: "Noto Serif, DejaVu Serif"
      case .tamil: "Noto Serif Tamil Slanted, Noto Serif Tamil"
      default: family
      }
    }

    /// The language given to Pango for the run (`nil`: none).
    var language: String? {
      switch self {
      case .bundled, .serifItalic, .serifItalicCapital, .serifUpright, .emoji: nil
      case .cjkSC: "zh-hans"
      case .cjkJP: "ja"
      case .cjkKR: "ko"
      case .arabic: "ar"
      case .urdu: "ur"
      case .hebrew: "he"
      case .devanagari: "hi"
      case .thai: "th"
      case .bengali: "bn"
      case .gurmukhi: "pa"
      case .gujarati: "gu"
      case .tamil: "ta"
      case .telugu: "te"
      case .kannada: "kn"
      case .malayalam: "ml"
      case .sinhala: "si"
      case .lao: "lo"
      case .tibetan: "bo"
      case .myanmar: "my"
      case .georgian: "ka"
      case .armenian: "hy"
      case .ethiopic: "am"
      case .khmer: "km"
      }
    }

    /// Whether the face is asked for with a roman slant (every companion but the Greek stand-in;
    /// Noto Serif Tamil Slanted is a roman-slant face of its own family, slanted by design).
    var isUpright: Bool { self != .bundled && self != .serifItalic && self != .serifItalicCapital }

    /// The size of the face relative to the card's: Noto Serif Italic's x-height (0.546 em) and
    /// capitals (0.714 em) are larger than EB Garamond's (0.418 and 0.65), so its stand-ins are
    /// scaled to match the letters beside them.
    var scale: Double {
      switch self {
      case .serifItalic: 0.766
      case .serifItalicCapital: 0.91
      default: 1
      }
    }

    /// Whether the face draws digits and Latin punctuation, so they may join its runs.
    var takesNeutrals: Bool {
      switch self {
      case .cjkSC, .cjkJP, .cjkKR, .arabic, .urdu, .devanagari, .bengali, .gurmukhi, .gujarati, .tamil, .telugu,
        .kannada, .malayalam, .sinhala:
        true
      default: false
      }
    }

    /// The centre of the face's line box below the baseline, in ems: (descent − ascent) / 2 from
    /// the metrics Pango reads (HarfBuzz's ascender and descender). Measured once with Pango 1.50
    /// on the Debian faces; ``ScriptTests`` checks that line heights come out equal.
    var boxCentre: Double {
      switch self {
      case .bundled: -0.210
      case .cjkSC, .cjkJP, .cjkKR: -0.4325
      case .arabic: -0.2175
      case .urdu: -0.654
      case .hebrew: -0.303
      case .devanagari: -0.1525
      case .thai: -0.265
      case .serifUpright, .georgian, .armenian, .ethiopic, .khmer: -0.388
      // Noto Serif's, at the face's scale.
      case .serifItalic: -0.388 * 0.766
      case .serifItalicCapital: -0.388 * 0.91
      case .bengali: -0.295
      case .gurmukhi: -0.289
      case .gujarati: -0.2735
      case .tamil: -0.2885
      case .telugu: -0.193
      case .kannada: -0.100
      case .malayalam: -0.2405
      case .sinhala: -0.345
      case .lao: -0.346
      case .tibetan: -0.0585
      case .myanmar: 0.0105
      case .emoji: -0.3418
      }
    }
  }

  /// The line height, in ems, of a text whose main face is `face`. The bundled italic's own
  /// (ascender 0.71 + descender 0.29, with metric hinting off) is exactly one em, so Latin cards
  /// keep their leading and their line boxes to the unit; scripts with tall marks, stacks or a
  /// square em get more room, so marks never touch the line above or below: Vietnamese (a
  /// capital with two diacritics reaches 0.94 em above the baseline) 1.25, Georgian, Armenian,
  /// Ethiopic and Hebrew 1.15, CJK 1.3, North Indian scripts and Malayalam 1.4, Bengali, Tamil,
  /// Arabic and Thai 1.45, Sinhala and Lao 1.5, Telugu and Kannada 1.55, Khmer 1.6, Myanmar 1.8,
  /// Tibetan 2, Nastaliq 2.2; a text of emoji 1.25.
  static func lineHeight(of face: Face, vietnamese: Bool = false) -> Double {
    switch face {
    case .bundled, .serifItalic, .serifItalicCapital, .serifUpright: vietnamese ? 1.25 : 1
    case .hebrew, .georgian, .armenian, .ethiopic: 1.15
    case .emoji: 1.25
    case .cjkSC, .cjkJP, .cjkKR: 1.3
    case .devanagari, .gurmukhi, .gujarati, .malayalam: 1.4
    case .arabic, .thai, .bengali, .tamil: 1.45
    case .sinhala, .lao: 1.5
    case .telugu, .kannada: 1.55
    case .khmer: 1.6
    case .myanmar: 1.8
    case .tibetan: 2
    case .urdu: 2.2
    }
  }

  /// Code points the bundled EB Garamond 12 Italic maps to a glyph with no outline
  /// (`scripts/empty-glyphs.py` lists them); Pango would draw nothing for them.
  static let emptyOutlines: Set<UInt32> = [
    0x0475, 0x04D8, 0x1D02, 0x1E9C, 0x1E9D, 0x1E9F, 0x1EFB, 0x2206, 0xA726, 0xA727, 0xA731,
  ]

  /// The script a code point asks for.
  static func script(of scalar: Unicode.Scalar) -> Script {
    let value = scalar.value
    if value < 0x80 {
      return (value | 0x20) >= 0x61 && (value | 0x20) <= 0x7A ? .bundled : .neutral
    }
    switch value {
    // The dandas are shared by the Indic scripts: they join the run around them.
    case 0x0964, 0x0965: return .neutral
    case 0x0530...0x058F, 0xFB13...0xFB17: return .armenian
    case 0x0590...0x05FF, 0xFB1D...0xFB4F: return .hebrew
    case 0x0600...0x06FF, 0x0750...0x077F, 0x0870...0x08FF, 0xFB50...0xFDFF, 0xFE70...0xFEFF: return .arabic
    case 0x0900...0x097F, 0xA8E0...0xA8FF: return .devanagari
    case 0x0980...0x09FF: return .bengali
    case 0x0A00...0x0A7F: return .gurmukhi
    case 0x0A80...0x0AFF: return .gujarati
    case 0x0B80...0x0BFF, 0x11FC0...0x11FFF: return .tamil
    case 0x0C00...0x0C7F: return .telugu
    case 0x0C80...0x0CFF: return .kannada
    case 0x0D00...0x0D7F: return .malayalam
    case 0x0D80...0x0DFF, 0x111E0...0x111FF: return .sinhala
    case 0x0E00...0x0E7F: return .thai
    case 0x0E80...0x0EFF: return .lao
    case 0x0F00...0x0FFF: return .tibetan
    case 0x1000...0x109F, 0xA9E0...0xA9FF, 0xAA60...0xAA7F: return .myanmar
    case 0x10A0...0x10FF, 0x1C90...0x1CBF, 0x2D00...0x2D2F: return .georgian
    case 0x1200...0x139F, 0x2D80...0x2DDF, 0xAB00...0xAB2F: return .ethiopic
    // Pictographs, emoji and regional indicators (modifiers and joiners extend their cluster).
    case 0x1F000...0x1FAFF: return .emoji
    case 0x1780...0x17FF, 0x19E0...0x19FF: return .khmer
    case 0x1100...0x11FF, 0x3130...0x318F, 0xA960...0xA97F, 0xAC00...0xD7FF: return .hangul
    case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0x1B000...0x1B16F: return .kana
    case 0x2E80...0x2FDF, 0x3000...0x303F, 0x3190...0x31EF, 0x3200...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF65, 0xFFE0...0xFFEF, 0x20000...0x3FFFF:
      return .han
    default:
      if emptyOutlines.contains(value) { return scalar.properties.isUppercase ? .emptyOutlineCapital : .emptyOutline }
      return scalar.properties.isAlphabetic ? .bundled : .neutral
    }
  }

  /// Whether `scalar` extends the grapheme cluster before it (a combining mark or vowel sign, a
  /// joiner, an emoji modifier or tag), so it is set in the face of its base. Only scalars from
  /// U+0300 up can: the caller skips the test below that.
  static func extendsCluster(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x200C, 0x200D, 0x1F3FB...0x1F3FF, 0xE0020...0xE007F: return true
    default:
      switch scalar.properties.generalCategory {
      case .nonspacingMark, .spacingMark, .enclosingMark: return true
      default: return false
      }
    }
  }

  /// Letters only Urdu (among the languages written in Arabic script that Noto Naskh Arabic
  /// serves) uses: ٹ ڈ ڑ ں ھ ہ ۂ ے ۓ. A text with one is set in Noto Nastaliq Urdu.
  static func isUrduLetter(_ value: UInt32) -> Bool {
    switch value {
    case 0x0679, 0x0688, 0x0691, 0x06BA, 0x06BE, 0x06C1, 0x06C2, 0x06D2, 0x06D3: true
    default: false
    }
  }

  /// A stretch of text in one script: UTF-8 byte offsets, end excluded.
  private struct Segment {
    var start: Int
    var end: Int
    var script: Script
    /// For a neutral segment: whether it holds only white space.
    var whiteSpaceOnly: Bool
    var face: Face? = nil
  }

  /// The attribute list for `text`, laid out at `size` pixels (``TextLayout`` always lays out at
  /// its reference size); the caller owns the returned `PangoAttrList`. `language` is the text's
  /// language where the caller knows it (BCP 47; `ur` sets Arabic script in Nastaliq).
  static func list(
    for text: String, size: Double = TextLayout.referenceSize, language: LanguageTag? = nil
  ) -> OpaquePointer {
    let list = pango_attr_list_new()!
    func insert(_ attribute: UnsafeMutablePointer<PangoAttribute>, _ start: Int, _ end: Int) {
      attribute.pointee.start_index = UInt32(start)
      attribute.pointee.end_index = UInt32(end)
      pango_attr_list_insert(list, attribute)
    }
    let length = text.utf8.count
    insert(pango_attr_insert_hyphens_new(0), 0, length)

    // The one scan: segments by script, Korean words, paragraph directions, letter counts.
    var segments: [Segment] = []
    var letters: [Int] = Array(repeating: 0, count: scriptCount)
    var offset = 0
    // Scalars that extend a grapheme cluster join their base's segment, so no cluster is ever
    // split across faces; after a zero-width joiner the next scalar joins too (emoji sequences).
    var afterJoiner = false
    var hasUrduLetters = false
    var hasVietnamese = false
    var wordStart = 0
    var wordHasHangul = false
    var paragraphStart = 0
    var paragraphDirection: Bool? = nil  // true: right to left
    var rightToLeftParagraphs: [(Int, Int)] = []
    for scalar in text.unicodeScalars {
      let width = UTF8.width(scalar)
      if scalar.value >= 0x300, !segments.isEmpty, segments[segments.count - 1].end == offset,
        afterJoiner || extendsCluster(scalar)
      {
        segments[segments.count - 1].end = offset + width
        segments[segments.count - 1].whiteSpaceOnly = false
        afterJoiner = scalar.value == 0x200D
        offset += width
        continue
      }
      afterJoiner = false
      let script = script(of: scalar)
      if scalar.value >= 0x600 {
        if script == .arabic && isUrduLetter(scalar.value) { hasUrduLetters = true }
        // Vietnamese letters with a tone mark (Ắ, Ọ, Ễ): stacked marks need taller lines.
        if scalar.value >= 0x1EA0 && scalar.value <= 0x1EF9 { hasVietnamese = true }
      }
      let isWhiteSpace = script == .neutral && scalar.properties.isWhitespace
      letters[Int(script.rawValue)] += 1
      if let last = segments.last, last.script == script, last.end == offset {
        segments[segments.count - 1].end = offset + width
        if !isWhiteSpace { segments[segments.count - 1].whiteSpaceOnly = false }
      } else {
        segments.append(Segment(start: offset, end: offset + width, script: script, whiteSpaceOnly: isWhiteSpace))
      }
      // Korean: no break inside a run of non-space characters that holds Hangul.
      if isWhiteSpace {
        if wordHasHangul && wordStart < offset { insert(pango_attr_allow_breaks_new(0), wordStart, offset) }
        wordStart = offset + width
        wordHasHangul = false
      } else if script == .hangul {
        wordHasHangul = true
      }
      // Paragraph direction: its first strong character (directional marks count).
      if scalar == "\n" || scalar == "\r" || scalar == "\u{2029}" || scalar == "\u{85}" {
        if paragraphDirection == true { rightToLeftParagraphs.append((paragraphStart, offset)) }
        paragraphStart = offset + width
        paragraphDirection = nil
      } else if paragraphDirection == nil {
        if script == .arabic || script == .hebrew || scalar == "\u{200F}" {
          paragraphDirection = true
        } else if script != .neutral || scalar == "\u{200E}" {
          paragraphDirection = false
        }
      }
      offset += width
    }
    if wordHasHangul && wordStart < length { insert(pango_attr_allow_breaks_new(0), wordStart, length) }
    // No line starts with a dash; Japanese and Chinese break between phrases (BreakRules).
    for range in BreakRules.noBreakRanges(in: text, language: language) {
      insert(pango_attr_allow_breaks_new(0), range.lowerBound, range.upperBound)
    }
    if paragraphDirection == true { rightToLeftParagraphs.append((paragraphStart, length)) }
    for (start, end) in rightToLeftParagraphs where start < end {
      insert(pango_attr_font_features_new("lnum"), start, end)
    }

    // Faces: Han follows the text's kana or Hangul; neutrals join a companion run around them.
    let hasKana = letters[Int(Script.kana.rawValue)] > 0
    let hasHangul = letters[Int(Script.hangul.rawValue)] > 0
    func face(_ script: Script) -> Face? {
      switch script {
      case .neutral: nil
      case .bundled: .bundled
      case .han:
        switch language?.language {
        case "ja": .cjkJP
        case "ko": .cjkKR
        case "zh": .cjkSC
        default: hasKana ? .cjkJP : hasHangul ? .cjkKR : .cjkSC
        }
      case .kana: .cjkJP
      case .hangul: .cjkKR
      case .arabic: hasUrduLetters || language?.language == "ur" ? .urdu : .arabic
      case .hebrew: .hebrew
      case .devanagari: .devanagari
      case .thai: .thai
      case .emptyOutline: .serifItalic
      case .emptyOutlineCapital: .serifItalicCapital
      case .bengali: .bengali
      case .gurmukhi: .gurmukhi
      case .gujarati: .gujarati
      case .tamil: .tamil
      case .telugu: .telugu
      case .kannada: .kannada
      case .malayalam: .malayalam
      case .sinhala: .sinhala
      case .lao: .lao
      case .tibetan: .tibetan
      case .myanmar: .myanmar
      case .georgian: .georgian
      case .armenian: .armenian
      case .ethiopic: .ethiopic
      case .khmer: .khmer
      case .emoji: .emoji
      }
    }
    for index in segments.indices { segments[index].face = face(segments[index].script) }
    for index in segments.indices where segments[index].script == .neutral {
      let before = index > 0 ? segments[index - 1].face : nil
      let after = index + 1 < segments.count ? segments[index + 1].face : nil
      guard let joined = before ?? after, before == nil || after == nil || before == after, joined.isUpright,
        joined != .emoji
      else { continue }
      // Faces without digits or Latin punctuation (Hebrew, Thai, Lao, Tibetan, Myanmar, Georgian,
      // Armenian, Ethiopic, Khmer): those are set in Noto Serif, upright too.
      segments[index].face = joined.takesNeutrals || segments[index].whiteSpaceOnly ? joined : .serifUpright
    }

    // The main face sets the line height; the others get boxes inside its box.
    var counts: [(Face, Int)] = []
    for segment in segments where segment.script != .neutral {
      let face = segment.face ?? .bundled
      let count = segment.end - segment.start
      if let at = counts.firstIndex(where: { $0.0 == face }) {
        counts[at].1 += count
      } else {
        counts.append((face, count))
      }
    }
    let main = counts.max { $0.1 < $1.1 }?.0 ?? .bundled
    let reference = size * Double(innerpeace_pango_scale)
    let height = lineHeight(of: main, vietnamese: hasVietnamese)

    // One set of attributes per stretch of one face.
    var start = 0
    while start < segments.count {
      let face = segments[start].face ?? .bundled
      var end = start
      while end + 1 < segments.count, (segments[end + 1].face ?? .bundled) == face { end += 1 }
      let (from, to) = (segments[start].start, segments[end].end)
      // A hundredth of an em more keeps the box inside despite rounding.
      let shortening = face == main ? 0 : 2 * abs(face.boxCentre - main.boxCentre) + 0.01
      insert(pango_attr_line_height_new_absolute(Int32((height - shortening) * reference)), from, to)
      if let family = face.family {
        insert(pango_attr_family_new(face.families ?? family), from, to)
        insert(pango_attr_style_new(face.isUpright ? PANGO_STYLE_NORMAL : PANGO_STYLE_ITALIC), from, to)
      }
      if face.scale != 1 { insert(pango_attr_scale_new(face.scale), from, to) }
      // The bundled face's runs take the caller's language, where given (Pango's localized forms).
      if let language = face.language ?? (face == .bundled ? language?.description : nil) {
        insert(pango_attr_language_new(pango_language_from_string(language)), from, to)
      }
      start = end + 1
    }
    return list
  }
}

extension TextLayout {
  /// Sets the attributes ``TextAttributes`` computes for `text`, which must be the layout's text.
  func applyTextAttributes(for text: String) {
    let list = TextAttributes.list(for: text, language: language)
    pango_layout_set_attributes(handle, list)
    pango_attr_list_unref(list)
  }

  /// Replaces the layout's text (plain text, never markup) and sets its attributes and wrap mode
  /// for the new text. Text with U+2028 LINE SEPARATOR at chosen breaks comes out with the same
  /// faces, languages and line heights as the text without them.
  func setText(_ text: String) {
    pango_layout_set_text(handle, text, Int32(text.utf8.count))
    applyTextAttributes(for: text)
    pango_layout_set_wrap(
      handle, TextLayout.breaksSafelyInsideWords(handle) ? PANGO_WRAP_WORD_CHAR : PANGO_WRAP_WORD)
  }

  /// How many glyphs Pango found no font for (drawn as boxes: tofu).
  var unknownGlyphCount: Int { FontLock.withLock { Int(pango_layout_get_unknown_glyphs_count(handle)) } }

  /// A font Pango picked for a run: its file and face index, and whether fontconfig slanted an
  /// upright face (a synthetic oblique: a matrix on the pattern, or an italic request that the
  /// face does not meet).
  struct PickedFont: Equatable {
    let file: String
    let index: Int
    /// The face's (first) family name.
    let family: String
    /// fontconfig's slant of the face (0 roman, 100 italic, 110 oblique).
    let slant: Int
    /// fontconfig added a transformation matrix (synthetic oblique or emboldening).
    let hasMatrix: Bool
    /// The language Pango gave the run (`nil`: none; see ``TextLayout/languageTag(_:)``).
    let language: String?
  }

  /// The fonts Pango picked for the runs of this layout, in order of use, each once.
  var pickedFonts: [PickedFont] {
    FontLock.withLock { unlockedPickedFonts }
  }

  private var unlockedPickedFonts: [PickedFont] {
    var fonts: [PickedFont] = []
    guard let iterator = pango_layout_get_iter(handle) else { return fonts }
    defer { pango_layout_iter_free(iterator) }
    repeat {
      guard let run = pango_layout_iter_get_run_readonly(iterator) else { continue }
      let analysis = run.pointee.item.pointee.analysis
      guard let font = analysis.font, let pattern = innerpeace_font_pattern(font) else { continue }
      var file: UnsafeMutablePointer<FcChar8>?
      guard FcPatternGetString(pattern, FC_FILE, 0, &file) == FcResultMatch, let file else { continue }
      var family: UnsafeMutablePointer<FcChar8>?
      _ = FcPatternGetString(pattern, FC_FAMILY, 0, &family)
      var index: Int32 = 0
      _ = FcPatternGetInteger(pattern, FC_INDEX, 0, &index)
      var slant: Int32 = 0
      _ = FcPatternGetInteger(pattern, FC_SLANT, 0, &slant)
      var matrix: UnsafeMutablePointer<FcMatrix>?
      let hasMatrix = FcPatternGetMatrix(pattern, FC_MATRIX, 0, &matrix) == FcResultMatch
      let language = TextLayout.languageTag(analysis.language)
      let picked = PickedFont(
        file: String(cString: file), index: Int(index), family: family.map { String(cString: $0) } ?? "",
        slant: Int(slant), hasMatrix: hasMatrix, language: language)
      if !fonts.contains(picked) { fonts.append(picked) }
    } while pango_layout_iter_next_run(iterator) != 0
    return fonts
  }
}

extension FittedText {
  /// How many glyphs of the quote and author line, as fitted, no font could draw (tofu).
  var missingGlyphs: Int { quote.unknownGlyphCount + (author?.unknownGlyphCount ?? 0) }
}
