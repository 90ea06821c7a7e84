import Foundation
import Testing

@testable import InnerPeace

/// A language the caller gives (`render --lang`, `batch --lang`, `lang=` on /card): the tag's
/// form, and what it decides where the text alone would be guessed otherwise (issue 18: "for the
/// language detected or given").
@Suite struct LanguageTests {
  @Test(arguments: [
    ("de", "de"), ("de-CH", "de-CH"), ("zh_hant_tw", "zh-Hant-TW"), ("sr-Cyrl-RS", "sr-Cyrl-RS"), ("es-419", "es-419"),
    ("EN", "en"), ("ur", "ur"), ("yue-HK", "yue-HK"),
  ])
  func tagsAreNormalised(_ text: String, _ normalised: String) throws {
    #expect(try #require(LanguageTag(text)).description == normalised)
  }

  @Test(arguments: [
    "", "d", "deutsch", "de-", "-de", "de--CH", "en-US-x", "1a", "de CH", "ü", "de-Latn-CH-1", "abcdefghijklmnopq",
    "en-U5", "zh-Hant-Hans", "de\u{0}",
  ])
  func malformedTagsAreRefused(_ text: String) {
    #expect(LanguageTag(text) == nil, "\(text.debugDescription)")
  }

  /// A given language picks its script's hyphenation patterns over the guess; one without
  /// installed patterns leaves its script unhyphenated (never another language's patterns).
  @Test func givenLanguagePicksTheHyphenationPatterns() throws {
    // No German letter or word: the guess is English.
    let text = "Bundesverfassungsgericht"
    let guessed = Hyphenation.Languages.detect(in: text)
    if Hyphenation.hasPatterns("en_US") { #expect(guessed.latin == "en_US") }
    try #require(Hyphenation.hasPatterns("de_DE"), "hyphen-de is not installed")
    #expect(Hyphenation.Languages.detect(in: text, given: LanguageTag("de")).latin == "de_DE")
    #expect(Hyphenation.Languages.detect(in: text, given: LanguageTag("de-DE")).latin == "de_DE")
    // "qq" is a well-formed tag no pattern file answers to.
    #expect(Hyphenation.Languages.detect(in: text, given: LanguageTag("qq")).latin == nil)
    // A Cyrillic language decides Cyrillic, and leaves the Latin guess alone.
    if Hyphenation.hasPatterns("uk_UA") {
      #expect(Hyphenation.Languages.detect(in: "мир", given: LanguageTag("uk")).cyrillic == "uk_UA")
    }
  }

  /// Han characters alone are Simplified Chinese by default; `ja` sets them in the Japanese face
  /// with the Japanese language, `ko` in the Korean one.
  @Test func givenLanguagePicksTheHanFace() throws {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    func families(_ tag: String?) -> [String] {
      let layout = TextLayout(
        context: context, text: "平和な心", family: FontSetup.family, language: tag.flatMap(LanguageTag.init))
      layout.setPixelSize(48)
      return layout.pickedFonts.map { "\($0.family)|\($0.language ?? "-")" }
    }
    let guessed = families(nil)
    try #require(guessed.contains { $0.hasPrefix("Noto Serif CJK") }, "fonts-noto-cjk is not installed: \(guessed)")
    #expect(families(nil).contains { $0.hasSuffix("|ja") }, "kana makes the text Japanese: \(guessed)")
    // Kana is Japanese whatever the caller says; the Han beside it follows the given language.
    #expect(families("zh").contains { $0 == "Noto Serif CJK SC|zh-hans" }, "\(families("zh"))")
    let han = "平和"
    let layout = TextLayout(context: context, text: han, family: FontSetup.family, language: nil)
    layout.setPixelSize(48)
    #expect(layout.pickedFonts.map(\.language) == ["zh-hans"])
    let japanese = TextLayout(context: context, text: han, family: FontSetup.family, language: LanguageTag("ja"))
    japanese.setPixelSize(48)
    #expect(japanese.pickedFonts.map(\.language) == ["ja"])
    #expect(japanese.pickedFonts.map(\.family) == ["Noto Serif CJK JP"])
  }

  /// The phrase model follows the given language: `zh-Hant` and `zh-TW` are Traditional Chinese,
  /// other `zh` Simplified, `ja` Japanese; any other language leaves the guess to the text.
  @Test func givenLanguagePicksThePhraseModel() {
    #expect(PhraseSegmenter.Language(tag: LanguageTag("ja")!) == .japanese)
    #expect(PhraseSegmenter.Language(tag: LanguageTag("zh")!) == .simplifiedChinese)
    #expect(PhraseSegmenter.Language(tag: LanguageTag("zh-Hans")!) == .simplifiedChinese)
    #expect(PhraseSegmenter.Language(tag: LanguageTag("zh-Hant")!) == .traditionalChinese)
    #expect(PhraseSegmenter.Language(tag: LanguageTag("zh-TW")!) == .traditionalChinese)
    #expect(PhraseSegmenter.Language(tag: LanguageTag("en")!) == nil)
  }

  /// The card: a given language reaches every run of the bundled face, and the same text with and
  /// without it is set the same where the language changes nothing.
  @Test func givenLanguageReachesTheCard() throws {
    let request = CardRequest(
      preset: .og, quote: .text("Ruhe ist die erste Bürgerpflicht.", author: "Anon"), picture: .named("aqua.jpg"),
      seed: 1, includesReport: true, language: LanguageTag("de"))
    let card = try Fixtures.renderer.render(request)
    let report = try #require(card.report)
    let latin = report.runs.filter { $0.script == "Latn" }
    #expect(!latin.isEmpty && latin.allSatisfy { $0.language == "de" }, "\(latin)")
  }
}
