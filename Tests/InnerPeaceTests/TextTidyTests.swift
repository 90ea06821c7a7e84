import Testing

@testable import InnerPeace

/// `TextRules.tidy` takes a short way for plain text (`TextRules.isPlain`). It must give what the
/// long way (`TextRules.tidyAnyText`) gives, text or error, for every text.
@Suite struct TextTidyTests {
  /// Code points on both sides of every edge of the plain set, and the ones the long way changes,
  /// refuses or joins into one character.
  static let alphabet: [String] = [
    "a", "Z", " ", "\n", "~", "\u{1F}", "\u{7F}", "\u{80}", "\u{9F}", "\u{A0}", "\u{AD}", "é", "\u{FF}",
    "\u{100}", "\u{300}", "\u{36F}", "\u{200B}", "\u{200D}", "\u{200F}", "\u{2010}", "\u{2014}", "\u{2019}",
    "\u{2026}", "\u{2027}", "\u{2028}", "\u{2029}", "\u{202A}", "\u{202C}", "\u{2066}", "\u{2069}", "\u{2800}",
    "\r", "\t", "\u{0}", "\u{FE0F}", "\u{1F33F}", "\u{1F3FB}", "\u{1100}", "\u{1161}", "\u{3000}", "\u{85}",
  ]

  /// Plain code points only (`TextRules.isPlain`), with white space to trim.
  static let plainAlphabet: [String] = [
    "a", "Z", " ", "\n", "~", "\u{A0}", "\u{AD}", "é", "\u{FF}", "\u{2010}", "\u{2014}", "\u{2019}", "\u{2026}",
    "\u{2027}",
  ]

  /// The outcome of one way: the tidied text, or the error's message.
  static func outcome(_ tidy: () throws(InnerPeaceError) -> String) -> String {
    do { return "text: " + (try tidy()) } catch { return "error: \(error)" }
  }

  static func compare(_ text: String, maximumCharacters: Int, sourceLocation: SourceLocation = #_sourceLocation) {
    let error: (String) -> InnerPeaceError = { .textInvalid(reason: $0) }
    let short = outcome { () throws(InnerPeaceError) in
      try TextRules.tidy(text, maximumCharacters: maximumCharacters, error: error)
    }
    let long = outcome { () throws(InnerPeaceError) in
      try TextRules.tidyAnyText(text, maximumCharacters: maximumCharacters, error: error)
    }
    #expect(short == long, "\(text.unicodeScalars.map { String($0.value, radix: 16) })", sourceLocation: sourceLocation)
  }

  /// Texts of 0 to 11 code points, each tidied with every limit from 0 to 12 characters: a third
  /// from plain code points only, a third plain but for one code point from the whole alphabet, and
  /// a third from the whole alphabet.
  @Test func randomTextsTidyAlikeBothWays() {
    var generator = SplitMix(state: 21)
    func pick(_ pool: [String]) -> String { pool[Int(generator.next() % UInt64(pool.count))] }
    var plain = 0
    for round in 0..<3_000 {
      let length = Int(generator.next() % 12)
      var text = ""
      for _ in 0..<length { text += pick(round % 3 == 2 ? Self.alphabet : Self.plainAlphabet) }
      if round % 3 == 1 {
        let scalars = Array(text.unicodeScalars)
        let place = Int(generator.next() % UInt64(scalars.count + 1))
        text =
          String(String.UnicodeScalarView(scalars[..<place])) + pick(Self.alphabet)
          + String(String.UnicodeScalarView(scalars[place...]))
      }
      if TextRules.isPlain(text) { plain += 1 }
      for limit in 0...12 { Self.compare(text, maximumCharacters: limit) }
    }
    #expect(plain >= 1_000, "the short way was taken \(plain) times")
  }

  @Test func theLimitsAreTheSameBothWays() {
    for count in [199, 200, 201] {
      Self.compare(String(repeating: "’", count: count), maximumCharacters: 200)
      Self.compare("  " + String(repeating: "a", count: count) + " \n", maximumCharacters: 200)
    }
    Self.compare(String(repeating: "é", count: Limits.maximumTextBytes / 2 + 1), maximumCharacters: 1 << 20)
  }

  @Test func plainIsWhatTheCatalogsQuotesAre() {
    #expect(TextRules.isPlain("It’s not what you look at that matters — it’s what you see.\n"))
    #expect(!TextRules.isPlain("e\u{301}"))
    #expect(!TextRules.isPlain("a\r\nb"))
    #expect(!TextRules.isPlain("a\u{2028}b"))
  }
}
