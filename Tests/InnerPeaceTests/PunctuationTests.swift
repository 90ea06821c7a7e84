import Foundation
import Testing

@testable import InnerPeace

/// Custom text gets typographic quotes, apostrophes, dashes and ellipses; catalog text is drawn as
/// written; `typographicPunctuation: false` keeps what was typed.
@Suite("Punctuation")
struct PunctuationTests {
  @Test(arguments: [
    // Apostrophes, inside and at the end of words, and before a year.
    ("it's", "it’s"),
    ("don't stop", "don’t stop"),
    ("the dogs' bowls", "the dogs’ bowls"),
    ("back in the '90s", "back in the ’90s"),
    ("'Tis the season", "’Tis the season"),
    ("rock 'n' roll", "rock ’n’ roll"),
    // Double quotes: opening after the start, a space, a bracket or a dash; closing otherwise.
    (#""Be still.""#, "“Be still.”"),
    (#"He said "yes", then left."#, "He said “yes”, then left."),
    (#"("quoted")"#, "(“quoted”)"),
    (#"wait--"now""#, "wait—“now”"),
    (#"["a"]"#, "[“a”]"),
    // Single quotes likewise.
    ("'single'", "‘single’"),
    ("a 'word' here", "a ‘word’ here"),
    // Nested quotes.
    (#""She said 'hi' to me.""#, "“She said ‘hi’ to me.”"),
    (#"'He said "go."'"#, "‘He said “go.”’"),
    (#""'Tis so," she said."#, "“’Tis so,” she said."),
    // Dashes and ellipses.
    ("peace--and quiet", "peace—and quiet"),
    ("peace -- and quiet", "peace — and quiet"),
    ("peace---and quiet", "peace—and quiet"),
    ("a ---- rule", "a ---- rule"),
    ("well-being", "well-being"),
    ("and so...", "and so…"),
    ("wait.... what", "wait…. what"),
    ("two.. dots", "two.. dots"),
    // Line breaks are openings too.
    ("first\n\"second\"", "first\n“second”"),
    // Stray quotes close.
    (#"a " b"#, "a ” b"),
  ])
  func converts(input: String, expected: String) {
    #expect(Punctuation.typographic(input) == expected)
  }

  /// Code in backticks and web addresses stay as typed; the prose around them does not.
  @Test(arguments: [
    ("run `ls --all` now", "run `ls --all` now"),
    (#"type `echo "hi"` -- it's easy"#, #"type `echo "hi"` — it’s easy"#),
    ("see https://example.com/a--b...c it's there", "see https://example.com/a--b...c it’s there"),
    (#"go to "www.example.com/x--y"..."#, "go to “www.example.com/x--y”…"),
    ("x = y--", "x = y—"),
  ])
  func codeLikeText(input: String, expected: String) {
    #expect(Punctuation.typographic(input) == expected)
  }

  /// Right-to-left and CJK text is untouched apart from its ASCII quotes.
  @Test(arguments: [
    ("שלום עולם", "שלום עולם"),
    (#""שלום""#, "“שלום”"),
    (#"צה"ל"#, "צה״ל"),
    ("ג'ירפה", "ג׳ירפה"),
    ("السلام عليكم", "السلام عليكم"),
    (#""السلام""#, "“السلام”"),
    ("静かに「心」を", "静かに「心」を"),
    (#"他说"你好""#, "他说“你好”"),
    (#"他说"你好"，我说"再见"。"#, "他说“你好”，我说“再见”。"),
    ("日本の'心'", "日本の‘心’"),
    ("平和……です", "平和……です"),
    ("नमस्ते", "नमस्ते"),
  ])
  func otherScripts(input: String, expected: String) {
    #expect(Punctuation.typographic(input) == expected)
  }

  @Test(arguments: [
    #""It's a 'test'" -- she said... "isn't it?""#, "rock 'n' roll in the '90s", "`a--b` and \"c\"",
    "see http://x.y/a--b... \"ok\"", "a ---- b -- c ... d .... e", #"צה"ל 'x'"#, "'''\"\"\"---...",
  ])
  func isIdempotent(input: String) {
    let once = Punctuation.typographic(input)
    #expect(Punctuation.typographic(once) == once)
  }

  @Test func typographicTextHasNoStraightPunctuationLeft() {
    let once = Punctuation.typographic(#""It's" 'a' -- b... '90s "c""#)
    #expect(!once.contains("\"") && !once.contains("'") && !once.contains("--") && !once.contains("..."))
  }

  // MARK: On the card

  @Test func customTextIsTypographicByDefault() throws {
    let card = try Fixtures.renderer.render(
      CardRequest(
        preset: .custom(try CanvasSize(width: 400, height: 300)),
        quote: .text(#""It's time" -- now..."#, author: "O'Brien"),
        seed: 1))
    #expect(card.quote.text == "“It’s time” — now…")
    #expect(card.quote.author == "O’Brien")
    #expect(card.shareMessage.contains("“It’s time” — now…"))
    #expect(card.shareMessage.contains("O’Brien"))
  }

  @Test func straightQuotesKeepWhatWasTyped() throws {
    let request = CardRequest(
      preset: .custom(try CanvasSize(width: 400, height: 300)),
      quote: .text(#""It's time" -- now..."#, author: "O'Brien"),
      seed: 1, typographicPunctuation: false)
    let card = try Fixtures.renderer.render(request)
    #expect(card.quote.text == #""It's time" -- now..."#)
    #expect(card.quote.author == "O'Brien")
    var typographic = request
    typographic.typographicPunctuation = true
    #expect(try Fixtures.renderer.render(typographic).bytes != card.bytes, "the drawn text differs")
  }

  /// The catalog's own text is drawn as written, whatever the switch.
  @Test func catalogTextIsUsedAsWritten() throws {
    try withTemporaryFolder("innerpeace-straight") { folder in
      try folder.writeBytes(try PNGCodec.solidPNG(width: 320, height: 180, grey: 90), to: "grey.png")
      let written = Quote(text: #"He said "it's fine" -- really..."#, author: "O'Brien")
      let catalog = try Catalog(quotes: [written], pictures: ["grey.png"], directory: folder)
      let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
      for typographic in [true, false] {
        let card = try renderer.render(
          CardRequest(
            preset: .custom(try CanvasSize(width: 400, height: 300)), quote: .index(0), seed: 1,
            typographicPunctuation: typographic))
        #expect(card.quote == written)
        #expect(card.shareMessage == written.shareMessage)
      }
    }
  }
}
