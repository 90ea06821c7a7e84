/// Typographic punctuation for text people type: the straight quotes, double hyphens and three
/// dots of a keyboard become the curly quotes, em dash and ellipsis the catalog is written with.
///
/// The rules, applied to ASCII characters only (every other character is kept as it is):
/// - `"` opens (`“`) at the start, after white space, an opening bracket, a dash or an opening
///   quote, when something follows it; otherwise it closes (`”`).
/// - `'` after a letter or digit is an apostrophe (`it’s`, `dogs’`); at an opening position it is
///   an apostrophe before a digit or a common elision (`’90s`, `’tis`), else an opening quote
///   (`‘`); anywhere else it closes (`’`, the same character as the apostrophe).
/// - Between two Hebrew letters `"` is a gershayim (`״`), and after a Hebrew letter `'` is a geresh (`׳`).
/// - `--` and `---` become an em dash (`—`); longer runs of hyphens stay as typed.
/// - `...` becomes `…`.
/// - Spans between backticks (code) and words holding `://` or starting `www.` (addresses) stay
///   as typed.
///
/// The conversion is idempotent: converted text has nothing left to convert.
enum Punctuation {
  /// `text` with typographic quotes, apostrophes, dashes and ellipses.
  static func typographic(_ text: String) -> String {
    let input = Array(text.unicodeScalars)
    let verbatim = verbatimRanges(input)
    var output = String.UnicodeScalarView()
    output.reserveCapacity(input.count)
    var index = 0
    var verbatimIndex = 0
    // Whether a double or single quote is open: after a CJK character, which is written without
    // spaces, a quote opens when none is open.
    var doubleOpen = false
    var singleOpen = false
    while index < input.count {
      while verbatimIndex < verbatim.count && verbatim[verbatimIndex].upperBound <= index { verbatimIndex += 1 }
      if verbatimIndex < verbatim.count && verbatim[verbatimIndex].contains(index) {
        output.append(contentsOf: input[verbatim[verbatimIndex]])
        index = verbatim[verbatimIndex].upperBound
        continue
      }
      let scalar = input[index]
      // What comes before, as already written (so a converted dash or quote counts).
      let previous = output.last
      let next = index + 1 < input.count ? input[index + 1] : nil
      switch scalar {
      case "\"":
        if let previous, isHebrewLetter(previous), let next, isHebrewLetter(next) {
          output.append("\u{05F4}")
        } else if let next, !next.properties.isWhitespace,
          opensAfter(previous) || (previous.map(isCJK) == true && !doubleOpen)
        {
          output.append("\u{201C}")
          doubleOpen = true
        } else {
          output.append("\u{201D}")
          doubleOpen = false
        }
        index += 1
      case "'":
        if let previous, isHebrewLetter(previous) {
          output.append("\u{05F3}")
        } else if let previous, isCJK(previous), let next, !next.properties.isWhitespace {
          output.append(singleOpen ? "\u{2019}" : "\u{2018}")
          singleOpen.toggle()
        } else if let previous, isWordCharacter(previous) {
          output.append("\u{2019}")
        } else if opensAfter(previous), let next, !next.properties.isWhitespace {
          let opens = !startsElision(input, at: index + 1)
          output.append(opens ? "\u{2018}" : "\u{2019}")
          if opens { singleOpen = true }
        } else {
          output.append("\u{2019}")
          singleOpen = false
        }
        index += 1
      case "-":
        var end = index
        while end < input.count && input[end] == "-" { end += 1 }
        let run = end - index
        if run == 2 || run == 3 {
          output.append("\u{2014}")
        } else {
          output.append(contentsOf: input[index..<end])
        }
        index = end
      case ".":
        if index + 2 < input.count && input[index + 1] == "." && input[index + 2] == "." {
          output.append("\u{2026}")
          index += 3
        } else {
          output.append(scalar)
          index += 1
        }
      default:
        output.append(scalar)
        index += 1
      }
    }
    return String(output)
  }

  /// Whether a quote after `previous` (nil at the start) opens rather than closes.
  private static func opensAfter(_ previous: Unicode.Scalar?) -> Bool {
    guard let previous else { return true }
    if previous.properties.isWhitespace { return true }
    switch previous {
    case "(", "[", "{", "<", "\u{2014}", "\u{2013}", "-", "/", "\u{201C}", "\u{2018}", "\u{00AB}", "\u{2039}":
      return true
    default:
      return previous.properties.generalCategory == .openPunctuation
    }
  }

  /// Letters, digits and combining marks: what an apostrophe follows inside or at the end of a word.
  private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.properties.generalCategory {
    case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter, .decimalNumber,
      .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
      true
    default: false
    }
  }

  /// Han, kana, Hangul, CJK punctuation and full-width forms: scripts written without spaces.
  private static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x2E80...0x9FFF, 0xAC00...0xD7AF, 0xF900...0xFAFF, 0xFF00...0xFFEF, 0x20000...0x3FFFF: true
    default: false
    }
  }

  private static func isHebrewLetter(_ scalar: Unicode.Scalar) -> Bool {
    (0x05D0...0x05EA).contains(scalar.value)
  }

  /// Words that begin with an apostrophe for a left-out letter, lowercased.
  private static let elisions: Set<String> = ["tis", "twas", "twere", "twill", "em", "cause", "n"]

  /// Whether the text at `start` (just after a `'`) is a digit or one of the ``elisions``.
  private static func startsElision(_ input: [Unicode.Scalar], at start: Int) -> Bool {
    guard start < input.count else { return false }
    if input[start].properties.numericType == .decimal && input[start].isASCII { return true }
    var end = start
    while end < input.count && input[end].properties.isAlphabetic { end += 1 }
    guard end > start else { return false }
    var word = String.UnicodeScalarView()
    word.append(contentsOf: input[start..<end])
    // `'n'` (rock 'n' roll) ends on the closing apostrophe; other elisions end the word.
    return elisions.contains(String(word).lowercased())
  }

  /// What may follow an address without being part of it.
  private static let trailingPunctuation: Set<Unicode.Scalar> = [
    ".", ",", ";", ":", "!", "?", "\"", "'", ")", "]", ">", "\u{201D}", "\u{2019}", "\u{2026}",
  ]

  /// The ranges kept as typed: backtick code spans (backticks included; an unclosed one runs to
  /// the end of its line) and words that look like addresses.
  private static func verbatimRanges(_ input: [Unicode.Scalar]) -> [Range<Int>] {
    var ranges: [Range<Int>] = []
    var index = 0
    while index < input.count {
      if input[index] == "`" {
        var end = index + 1
        while end < input.count && input[end] != "`" && input[end] != "\n" { end += 1 }
        if end < input.count && input[end] == "`" { end += 1 }
        ranges.append(index..<end)
        index = end
        continue
      }
      if input[index].properties.isWhitespace {
        index += 1
        continue
      }
      var end = index
      while end < input.count && !input[end].properties.isWhitespace && input[end] != "`" { end += 1 }
      // The address itself, without the quotes, brackets or sentence punctuation around it.
      var first = index
      while first < end && !isWordCharacter(input[first]) { first += 1 }
      var last = end
      while last > first && trailingPunctuation.contains(input[last - 1]) { last -= 1 }
      var word = String.UnicodeScalarView()
      word.append(contentsOf: input[first..<last])
      let text = String(word)
      if text.contains("://") || text.lowercased().hasPrefix("www.") {
        ranges.append(first..<last)
      }
      index = end
    }
    return ranges
  }
}
