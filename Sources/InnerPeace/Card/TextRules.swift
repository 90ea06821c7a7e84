/// Checks and tidies text before it reaches Pango. Text is always drawn as written: nothing here
/// parses markup.
enum TextRules {
  /// The quote as it will be laid out: CRLF and CR become LF, tabs become spaces, surrounding
  /// white space is trimmed.
  /// - Throws: ``InnerPeaceError/textInvalid(reason:)`` when the text is empty or has nothing
  ///   visible (``hasVisibleCharacter(_:)``), is over the limits in ``Limits``, holds control
  ///   characters, or nests bidi controls too deep.
  static func quote(_ text: String) throws(InnerPeaceError) -> String {
    let tidied = try tidy(text, maximumCharacters: Limits.maximumTextCharacters) { reason in
      .textInvalid(reason: reason)
    }
    guard hasVisibleCharacter(tidied) else { throw .textInvalid(reason: emptyText) }
    return tidied
  }

  /// Why a text with nothing to draw is refused, in every place that checks one.
  static let emptyText = "the text is empty or has nothing visible"

  /// The author as it will be drawn; empty means no author line, and so does an author with
  /// nothing visible (only white space or invisible characters).
  static func author(_ text: String) throws(InnerPeaceError) -> String {
    let tidied = try tidy(text, maximumCharacters: Limits.maximumAuthorCharacters) { reason in
      .authorInvalid(reason: reason)
    }
    guard !tidied.utf8.contains(0x0A) else { throw .authorInvalid(reason: "an author name is one line") }
    return hasVisibleCharacter(tidied) ? tidied : ""
  }

  /// Whether `text` holds something that draws: a letter, number, symbol, punctuation mark,
  /// combining mark or emoji, or a private-use or unassigned code point (drawn as a box when no
  /// font has it). White space, format characters (zero-width space and joiners, word joiner,
  /// byte order mark, soft hyphen, bidi controls, tag characters), variation selectors and the
  /// other default-ignorable code points (the Hangul fillers U+115F, U+1160, U+3164, U+FFA0
  /// among them), and the blank U+2800 BRAILLE PATTERN BLANK draw nothing.
  static func hasVisibleCharacter(_ text: String) -> Bool {
    text.unicodeScalars.contains(where: isVisible)
  }

  /// Whether one code point draws something (see ``hasVisibleCharacter(_:)``).
  static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
    let properties = scalar.properties
    if properties.isWhitespace || properties.isDefaultIgnorableCodePoint { return false }
    switch properties.generalCategory {
    case .control, .format, .surrogate, .lineSeparator, .paragraphSeparator, .spaceSeparator: return false
    default: break
    }
    return !blankSymbols.contains(scalar.value)
  }

  /// Symbols that are blank by design.
  private static let blankSymbols: Set<UInt32> = [0x2800]

  /// The text tidied and checked: ``isPlain(_:)`` text takes the short way, which gives what
  /// ``tidyAnyText(_:maximumCharacters:error:)`` gives it, and every other text the long one.
  static func tidy(
    _ text: String, maximumCharacters: Int, error: (String) -> InnerPeaceError
  ) throws(InnerPeaceError) -> String {
    // The byte limit first, as the long way does: a text over it is refused before any scan.
    try checkBytes(text, error: error)
    guard isPlain(text) else { return try tidyAnyText(text, maximumCharacters: maximumCharacters, error: error) }
    let tidied = text.trimmingWhiteSpace()
    try checkCharacters(tidied.unicodeScalars.count, maximumCharacters: maximumCharacters, error: error)
    return tidied
  }

  /// Whether tidying has nothing to change or check in `text` but its surrounding white space and
  /// its length, and each code point is a character of its own: every code point is a line feed,
  /// printable ASCII, printable Latin-1 (U+00A0-U+00FF) or one of the dashes, quotation marks,
  /// bullets and leaders of U+2010-U+2027 (as in every quote of the bundled catalog). Such a text
  /// holds no CR, tab, control character, line or paragraph separator, bidi control or combining
  /// mark, and nothing that joins code points into one character.
  static func isPlain(_ text: String) -> Bool {
    text.unicodeScalars.allSatisfy { scalar in
      switch scalar.value {
      case 0x0A, 0x20...0x7E, 0xA0...0xFF, 0x2010...0x2027: true
      default: false
      }
    }
  }

  private static func checkBytes(_ text: String, error: (String) -> InnerPeaceError) throws(InnerPeaceError) {
    guard text.utf8.count <= Limits.maximumTextBytes else {
      throw error("\(text.utf8.count) bytes is more than the limit of \(Limits.maximumTextBytes)")
    }
  }

  private static func checkCharacters(
    _ characters: Int, maximumCharacters: Int, error: (String) -> InnerPeaceError
  ) throws(InnerPeaceError) {
    guard characters <= maximumCharacters else {
      throw error("\(characters) characters is more than the limit of \(maximumCharacters)")
    }
  }

  /// Tidies and checks any text, code point by code point and character by character.
  static func tidyAnyText(
    _ text: String, maximumCharacters: Int, error: (String) -> InnerPeaceError
  ) throws(InnerPeaceError) -> String {
    try checkBytes(text, error: error)
    var scalars = String.UnicodeScalarView()
    var previousWasCR = false
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x0D:
        scalars.append("\n")
        previousWasCR = true
        continue
      case 0x0A:
        if !previousWasCR { scalars.append(scalar) }
      case 0x09:
        scalars.append(" ")
      case 0x00:
        throw error("it contains a NUL character")
      case 0x01...0x1F, 0x7F...0x9F:
        throw error(
          "it contains the control character U+\(String(scalar.value, radix: 16, uppercase: true).leftPadded(4))")
      case 0x2028, 0x2029:
        scalars.append("\n")
      default:
        scalars.append(scalar)
      }
      previousWasCR = false
    }
    let tidied = String(scalars).trimmingWhiteSpace()
    try checkCharacters(tidied.count, maximumCharacters: maximumCharacters, error: error)
    try checkBidiControls(tidied, error: error)
    for character in tidied {
      let marks = character.unicodeScalars.count { scalar in
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .spacingMark: true
        default: false
        }
      }
      guard marks <= Limits.maximumCombiningMarksPerCharacter else {
        throw error(
          "a character carries \(marks) combining marks; the limit is \(Limits.maximumCombiningMarksPerCharacter)")
      }
    }
    return tidied
  }

  /// Bounds the bidi controls a text hands to Pango and FriBidi: at most
  /// ``Limits/maximumBidiControls`` in all (embeddings, overrides, isolates, their terminators and
  /// the marks LRM, RLM and ALM), nested at most ``Limits/maximumBidiNesting`` deep in any
  /// paragraph. The nesting is counted as the Unicode Bidirectional Algorithm (UAX #9, rules
  /// X1-X8) counts it: an embedding or override (U+202A, U+202B, U+202D, U+202E) or an isolate
  /// (U+2066-U+2068) opens a level, U+202C closes the innermost embedding that is not outside an
  /// isolate, U+2069 closes the innermost isolate and every embedding inside it, and a paragraph
  /// break closes them all. Closing controls with nothing to close are ignored there, as UAX #9
  /// ignores them (they still count in the total).
  private static func checkBidiControls(_ text: String, error: (String) -> InnerPeaceError)
    throws(InnerPeaceError)
  {
    var total = 0
    // The open levels of the current paragraph: true for an isolate, false for an embedding.
    var open: [Bool] = []
    var isolates = 0
    var deepest = 0
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x202A, 0x202B, 0x202D, 0x202E:
        open.append(false)
      case 0x2066, 0x2067, 0x2068:
        open.append(true)
        isolates += 1
      case 0x202C:
        if open.last == false { open.removeLast() }
      case 0x2069:
        guard isolates > 0 else { break }
        while open.removeLast() == false {}
        isolates -= 1
      case 0x200E, 0x200F, 0x061C:
        break
      case 0x0A:
        open.removeAll()
        isolates = 0
        continue
      default:
        continue
      }
      total += 1
      deepest = max(deepest, open.count)
      guard total <= Limits.maximumBidiControls else {
        throw error("it holds more than \(Limits.maximumBidiControls) bidi control characters")
      }
      guard deepest <= Limits.maximumBidiNesting else {
        throw error("it nests bidi embeddings or isolates more than \(Limits.maximumBidiNesting) deep")
      }
    }
  }
}

extension String {
  func trimmingWhiteSpace() -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
    let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
    return String(scalars[first...last])
  }

  fileprivate func leftPadded(_ width: Int) -> String {
    count >= width ? self : String(repeating: "0", count: width - count) + self
  }
}
