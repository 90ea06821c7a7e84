import Foundation
import Testing

@testable import InnerPeace

/// The `author` pattern that the API document (`Resources/openapi.yaml`) gives `/card.{format}`
/// says what the service accepts: `TextRules.author`. A client validating against the document,
/// and the API contract run (schemathesis, which sends values outside the pattern and expects a
/// 4xx), rely on it. Before this test the pattern refused every control character and line
/// break, while the service trims white space (line breaks there too) and turns a tab into a
/// space: the contract run sent an author with such white space, got a 200, and failed.
@Suite struct AuthorPatternTests {
  /// The pattern of `CustomQuery`'s `author` property, as written in the document.
  static func documentedPattern() throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let document = try String(contentsOf: root.appendingPathComponent("Resources/openapi.yaml"), encoding: .utf8)
    let query = try #require(document.range(of: "\n    CustomQuery:\n"), "CustomQuery in the document")
    let author = try #require(
      document.range(of: "\n        author:\n", range: query.upperBound..<document.endIndex), "its author")
    let line = try #require(
      document.range(of: "pattern: '", range: author.upperBound..<document.endIndex), "the author's pattern")
    let end = try #require(document.range(of: "'\n", range: line.upperBound..<document.endIndex))
    return String(document[line.upperBound..<end.lowerBound])
  }

  /// Whether the whole of `text` matches (JSON Schema's patterns are ECMA-262 regular expressions,
  /// where `$` is the end of the text; ICU's `$` also matches before a final line break, so the
  /// match must cover the whole text).
  static func matches(_ expression: NSRegularExpression, _ text: String) -> Bool {
    let whole = NSRange(text.startIndex..., in: text)
    return expression.firstMatch(in: text, range: whole).map { $0.range == whole } ?? false
  }

  /// Every control character, line break and white space character (and a few invisible ones
  /// beside them), alone, around a name, inside it, and doubled: the pattern accepts exactly the
  /// authors the service does.
  @Test func patternAcceptsWhatTheServiceAccepts() throws {
    let expression = try NSRegularExpression(pattern: try Self.documentedPattern())
    let codePoints: [UInt32] =
      Array(0x00...0x20) + Array(0x7F...0xA0)
      + [0xAD, 0x1680, 0x180E, 0x2060, 0x205F, 0x3000, 0xFEFF] + Array(0x2000...0x200F)
      + Array(0x2028...0x202F)
    var checked = 0
    for value in codePoints {
      let c = String(Character(Unicode.Scalar(value)!))
      for author in [c, "a" + c, c + "a", "a" + c + "b", c + c + "a", "a" + c + c, "\n" + c + "a", "a" + c + "\r\n"] {
        let accepted = (try? TextRules.author(author)) != nil
        #expect(
          Self.matches(expression, author) == accepted,
          "\(author.debugDescription): the service \(accepted ? "accepts" : "refuses") it, the pattern does not")
        checked += 1
      }
    }
    #expect(checked == codePoints.count * 8)
    // Both answers occur: a tab inside and line breaks around a name are accepted; a line break
    // inside, and the other control characters anywhere, are refused.
    for accepted in ["a\tb", "Rumi\n", "\r\nRumi", "\u{2028}", "Lao\u{3000}Tzu"] {
      #expect(Self.matches(expression, accepted), "\(accepted.debugDescription)")
    }
    for refused in ["a\nb", "a\rb", "a\u{2029}b", "\u{0B}a", "a\u{85}", "a\u{7F}", "\u{0}"] {
      #expect(!Self.matches(expression, refused), "\(refused.debugDescription)")
    }
  }
}
