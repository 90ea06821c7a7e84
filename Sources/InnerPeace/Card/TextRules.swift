/// Checks and tidies text before it reaches Pango. Text is always drawn as written: nothing here
/// parses markup.
enum TextRules {
  /// The quote as it will be laid out: CRLF and CR become LF, tabs become spaces, surrounding
  /// white space is trimmed.
  /// - Throws: ``InnerPeaceError/textInvalid(reason:)`` when the text is empty, over the limits in
  ///   ``Limits``, or holds control characters.
  static func quote(_ text: String) throws(InnerPeaceError) -> String {
    let tidied = try tidy(text, maximumCharacters: Limits.maximumTextCharacters) { reason in
      .textInvalid(reason: reason)
    }
    guard !tidied.isEmpty else { throw .textInvalid(reason: "the text is empty or only white space") }
    return tidied
  }

  /// The author as it will be drawn; empty means no author line.
  static func author(_ text: String) throws(InnerPeaceError) -> String {
    let tidied = try tidy(text, maximumCharacters: Limits.maximumAuthorCharacters) { reason in
      .authorInvalid(reason: reason)
    }
    guard !tidied.contains("\n") else { throw .authorInvalid(reason: "an author name is one line") }
    return tidied
  }

  private static func tidy(
    _ text: String, maximumCharacters: Int, error: (String) -> InnerPeaceError
  ) throws(InnerPeaceError) -> String {
    guard text.utf8.count <= Limits.maximumTextBytes else {
      throw error("\(text.utf8.count) bytes is more than the limit of \(Limits.maximumTextBytes)")
    }
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
    let characters = tidied.count
    guard characters <= maximumCharacters else {
      throw error("\(characters) characters is more than the limit of \(maximumCharacters)")
    }
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
