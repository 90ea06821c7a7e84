import Foundation
import Testing

@testable import InnerPeace

/// Breaks where a typesetter would (issue 18, item 4): no line starts with a dash, long words are
/// hyphenated at dictionary points only where a paragraph needs it, Japanese and Chinese break
/// between BudouX phrases, Thai between libthai's words.
@Suite("Break rules")
struct BreakRulesTests {
  let renderer = Fixtures.renderer

  static func model(_ text: String) -> BreakModel {
    let context = TextContext(fontMap: FontSetup.threadFontMap(bundledFontPath: Fixtures.renderer.bundledFontPath))
    return TextLayout(context: context, text: text, family: FontSetup.family).breakModel()
  }

  /// The character offsets (scalars) inside `word` where the model of `text` allows a break.
  static func breaksInside(_ word: String, of text: String) -> [Int] {
    let model = model(text)
    let scalars = Array(text.unicodeScalars)
    let needle = Array(word.unicodeScalars)
    var found: [Int] = []
    var start = 0
    while start + needle.count <= scalars.count {
      if Array(scalars[start..<(start + needle.count)]) == needle {
        for offset in 1..<needle.count
        where model.allowsBreak[start + offset] || model.allowsCharacterBreak[start + offset] {
          found.append(offset)
        }
        start += needle.count
      } else {
        start += 1
      }
    }
    return found
  }

  // MARK: Dashes

  /// Quote 117 ("these two—Time and Patience.") at og and classic, and every catalog quote at
  /// every named preset: no line starts with an em or en dash unless its paragraph does.
  @Test(arguments: [Preset.og, .classic, .square, .story])
  func noLineStartsWithADash(preset: Preset) throws {
    var found: [String] = []
    for (index, quote) in Fixtures.catalog.quotes.enumerated() {
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: quote.author, preset: preset, scan: false)
      let paragraphStarts = Set(quote.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
      for line in fitted.quote.lineTexts {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard let first = trimmed.unicodeScalars.first, BreakRules.isLeadingDashForbidden(first) else { continue }
        if !paragraphStarts.contains(where: { $0.hasPrefix(trimmed) }) {
          found.append("quote \(index): \(fitted.quote.lineTexts)")
        }
      }
    }
    #expect(found.isEmpty, "\(preset): \(found.joined(separator: "\n"))")
  }

  /// The break model: no break before a dash (even after a space), one after it.
  @Test func noBreakBeforeADash() {
    for (text, dash) in [("these two—Time", 9), ("two – three", 4), ("nothing—absolutely", 7), ("a —b", 2)] {
      let model = Self.model(text)
      #expect(!model.allowsBreak[dash], "\(text): a break before the dash")
      #expect(model.allowsBreak[dash + 1] || model.allowsBreak[dash + 2], "\(text): no break after the dash")
    }
    // A paragraph may start with a dash (dialogue), after a mandatory break.
    let model = Self.model("One.\n—Two.")
    #expect(model.mustBreak[5])
  }

  // MARK: Hyphenation

  static let compound = "Donaudampfschifffahrtsgesellschaftskapitän"

  @Test func languageIsDetectedFromTheText() {
    let hasGerman = Hyphenation.patternFile("de_DE") != nil
    let hasEnglish = Hyphenation.patternFile("en_US") != nil
    let hasRussian = Hyphenation.patternFile("ru_RU") != nil
    #expect(Hyphenation.Languages.detect(in: Self.compound).latin == (hasGerman ? "de_DE" : nil))
    #expect(
      Hyphenation.Languages.detect(in: "Was ist das für ein Leben, das nicht atmet?").latin
        == (hasGerman ? "de_DE" : nil))
    #expect(
      Hyphenation.Languages.detect(in: "The strongest of all warriors are these two.").latin
        == (hasEnglish ? "en_US" : nil))
    let russian = Hyphenation.Languages.detect(in: "Счастье не в том, чтобы делать всегда, что хочешь.")
    #expect(russian.cyrillic == (hasRussian ? "ru_RU" : nil))
  }

  /// The compound's points are libhyphen's German ones (do-nau-dampf-schiff-fahrts-ge-sell-
  /// schafts-ka-pi-tän); without the German patterns, none.
  @Test func dictionaryPoints() {
    let scalars = Array(Self.compound.unicodeScalars)
    let points = Hyphenation.points(in: scalars, languages: .detect(in: Self.compound))
    guard Hyphenation.patternFile("de_DE") != nil else {
      #expect(points.isEmpty)
      return
    }
    #expect(points == [2, 5, 10, 16, 22, 24, 28, 35, 37, 39])
    if Hyphenation.patternFile("en_US") != nil {
      let word = Array("hyphenation".unicodeScalars)
      #expect(Hyphenation.points(in: word, languages: .detect(in: "hyphenation")) == [2, 6])
    }
  }

  /// URLs, addresses, identifiers and numbers are never hyphenated.
  @Test func codeLikeWordsAreNeverHyphenated() {
    let languages = Hyphenation.Languages(latin: "en_US", cyrillic: nil, greek: nil)
    for word in [
      "https://example.org/understanding", "someone@understanding.org", "understanding_everything",
      "understandingEverything", "understanding2everything", "www.understanding.com",
    ] {
      #expect(Hyphenation.points(in: Array(word.unicodeScalars), languages: languages).isEmpty, "\(word)")
    }
  }

  /// The hyphenation patterns found count in the content version.
  @Test func patternsCountInTheContentVersion() {
    let files = renderer.contentSources.hyphenationFiles
    for language in ["en_US", "de_DE", "ru_RU"] {
      let installed = Hyphenation.patternFile(language)
      #expect(files.first { $0.language == language }?.file == installed, "\(language)")
    }
  }

  /// A paragraph that sets well without hyphens gets none: the catalog's prose on og.
  @Test func wellSetParagraphsGetNoHyphen() throws {
    var found: [String] = []
    for (index, quote) in Fixtures.catalog.quotes.enumerated() where !quote.text.contains("\n") {
      let (fitted, _) = try renderer.fitAndScan(quote.text, author: quote.author, preset: .og, scan: false)
      if fitted.quote.lineTexts.contains(where: { $0.hasSuffix("\u{2010}") }) {
        found.append("quote \(index): \(fitted.quote.lineTexts)")
      }
    }
    #expect(found.isEmpty, "\(found.joined(separator: "\n"))")
  }

  /// On story the compound is cut only at dictionary points, each with a hyphen; never between
  /// two letters without one.
  @Test func longCompoundIsHyphenatedAtDictionaryPoints() throws {
    let text = "Der \(Self.compound) grüßt."
    let (fitted, _) = try renderer.fitAndScan(text, author: "Test", preset: .story, scan: false)
    let lines = fitted.quote.lineTexts
    guard Hyphenation.patternFile("de_DE") != nil else { return }
    #expect(lines.count > 1)
    let allowed = Set(
      Hyphenation.points(in: Array(Self.compound.unicodeScalars), languages: .detect(in: text)).map {
        String(String.UnicodeScalarView(Array(Self.compound.unicodeScalars)[0..<$0]))
      })
    var joined = ""
    for line in lines.dropLast() {
      let trimmed = line.trimmingCharacters(in: .whitespaces)
      if trimmed.hasSuffix("\u{2010}") {
        joined += String(trimmed.dropLast())
        let part = joined.split(separator: " ").last.map(String.init) ?? ""
        #expect(allowed.contains(part), "cut at \"\(part)\", not a dictionary point: \(lines)")
      } else {
        // A line that ends inside the compound without a hyphen would be a cut between letters.
        #expect(trimmed.hasSuffix("Der") || trimmed.hasSuffix(Self.compound), "cut without a hyphen: \(lines)")
        joined += trimmed + " "
      }
    }
    joined += lines.last!.trimmingCharacters(in: .whitespaces)
    #expect(joined == text, "\(lines)")
  }

  /// The breaker itself: hyphen points only when the plain setting has a word flaw.
  @Test func hyphenationOnlyWhereNeeded() {
    guard Hyphenation.patternFile("en_US") != nil else { return }
    let text = "Understanding comes slowly to those who wait."
    let breaker = LineBreaker(model: Self.model(text))
    let wide = breaker.model.advances.reduce(0, +)
    // Wide enough for two even lines: no hyphen.
    let even = try? #require(breaker.breaks(width: wide * 0.6))
    #expect(even?.hyphens.isEmpty == true)
    // Narrower than "Understanding": it is hyphenated, not cut between letters.
    let word = breaker.model.advances[0..<13].reduce(0, +)
    let narrow = breaker.breaks(width: word * 0.75)
    #expect(narrow?.hyphens.isEmpty == false)
    #expect(narrow?.hyphens.allSatisfy { [2, 5, 10].contains($0) } == true, "\(String(describing: narrow?.hyphens))")
  }

  // MARK: Phrases

  /// BudouX 0.10.1's Python `Parser.parse`, recorded: the Swift segmenter gives the same phrases.
  static let recordedPhrases: [(PhraseSegmenter.Language, String, [String])] = [
    (.japanese, "今日は天気です。", ["今日は", "天気です。"]),
    (.japanese, "穏やかな心で、ゆっくり歩いていこう。", ["穏やかな", "心で、", "ゆっくり", "歩いていこう。"]),
    (.japanese, "静けさの中に生き甲斐がある。", ["静けさの", "中に", "生き甲斐が", "ある。"]),
    (.japanese, "七転び八起き。", ["七転び八起き。"]),
    (.japanese, "千里の道も一歩から。", ["千里の", "道も", "一歩から。"]),
    (.simplifiedChinese, "淡泊明志，宁静致远。", ["淡泊明志，", "宁静", "致远。"]),
    (.simplifiedChinese, "千里之行，始于足下。", ["千里", "之行，", "始于", "足下。"]),
    (.simplifiedChinese, "知之为知之，不知为不知，是知也。", ["知之", "为", "知之，", "不", "知", "为", "不知，", "是", "知", "也。"]),
    (.simplifiedChinese, "我们一起去看海吧。", ["我们", "一起", "去", "看海吧。"]),
    (.traditionalChinese, "千里之行，始於足下。", ["千里", "之行，", "始於", "足下。"]),
    (.traditionalChinese, "學而時習之，不亦說乎？", ["學而", "時習之，", "不亦", "說乎？"]),
    (.traditionalChinese, "我們一起去看海吧。", ["我們", "一起去", "看", "海吧。"]),
  ]

  @Test func phrasesMatchBudouX() throws {
    for (language, sentence, expected) in Self.recordedPhrases {
      let segmenter = try #require(PhraseSegmenter.bundled(language), "the \(language) model is bundled")
      #expect(segmenter.phrases(sentence) == expected, "\(language): \(sentence)")
    }
    #expect(PhraseSegmenter.language(of: "我們一起去看海吧。".unicodeScalars) == .traditionalChinese)
    #expect(PhraseSegmenter.language(of: "我们一起去看海吧。".unicodeScalars) == .simplifiedChinese)
    #expect(PhraseSegmenter.language(of: "静けさの中に".unicodeScalars) == .japanese)
  }

  /// `scripts/budoux-compare.sh` records Python BudouX's phrases of more sentences in a file and
  /// names it in `INNERPEACE_BUDOUX_EXPECTED`: the Swift segmenter must agree on every one.
  @Test func phrasesMatchLiveBudouX() throws {
    guard let path = ProcessInfo.processInfo.environment["INNERPEACE_BUDOUX_EXPECTED"], !path.isEmpty else { return }
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    let cases = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
    #expect(!cases.isEmpty)
    for item in cases {
      let language = try #require((item["model"] as? String).flatMap(PhraseSegmenter.Language.init(rawValue:)))
      let sentence = try #require(item["sentence"] as? String)
      let expected = try #require(item["phrases"] as? [String])
      let segmenter = try #require(PhraseSegmenter.bundled(language))
      #expect(segmenter.phrases(sentence) == expected, "\(language): \(sentence)")
    }
  }

  /// Words that must never be split, in Japanese and Chinese prose and inside English text.
  @Test func cjkWordsAreKeptWhole() {
    let cases: [(text: String, word: String)] = [
      ("穏やかな心で、ゆっくり歩いていこう。", "穏やか"),
      ("穏やかな心で、ゆっくり歩いていこう。", "ゆっくり"),
      ("淡泊明志，宁静致远。", "淡泊明志"),
      ("The Japanese call it 静けさ, the quiet of the mind.", "静けさ"),
      ("Find your 生き甲斐 and the days will follow.", "生き甲斐"),
    ]
    for (text, word) in cases {
      #expect(Self.breaksInside(word, of: text).isEmpty, "\"\(word)\" may break inside in \(text)")
    }
    // Between phrases a break stays: after "穏やかな".
    let model = Self.model("穏やかな心で、ゆっくり歩いていこう。")
    #expect(model.allowsBreak[4])
  }

  /// On square, the Chinese idiom and the Japanese words come out whole ("宁静致远" is two phrases
  /// for BudouX, "宁静" and "致远", so it may break between them).
  @Test(arguments: [Preset.square, .story, .og])
  func cjkWordsWholeOnCards(preset: Preset) throws {
    for (text, words) in [
      ("淡泊明志，宁静致远。非淡泊无以明志，非宁静无以致远。", ["淡泊明志"]),
      ("穏やかな心で、ゆっくり歩いていこう。急がば回れ、静けさの中に生き甲斐がある。", ["穏やか", "ゆっくり", "静けさ", "生き甲斐"]),
    ] {
      let (fitted, _) = try renderer.fitAndScan(text, author: "—", preset: preset, scan: false)
      let lines = fitted.quote.lineTexts
      for word in words where !lines.contains(where: { $0.contains(word) }) {
        Issue.record("\(preset): \"\(word)\" is split: \(lines)")
      }
    }
  }

  /// Thai keeps libthai's word breaks (Pango asks libthai): breaks fall between words only.
  @Test func thaiBreaksBetweenWords() {
    let text = "ภาษาไทยง่ายนิดเดียว"
    let model = Self.model(text)
    var breaks: [Int] = []
    for position in 1..<model.scalars.count where model.allowsBreak[position] { breaks.append(position) }
    // ภาษา | ไทย | ง่าย | นิดเดียว (libthai's dictionary has "นิดเดียว", "a little", as one word)
    #expect(breaks == [4, 7, 11], "\(breaks)")
  }

  /// A text without Han or kana never segments: the phrase ranges are computed from a scan only.
  @Test func latinTextPaysNoSegmentation() {
    #expect(BreakRules.noBreakRanges(in: "The quiet mind is rich enough.").isEmpty)
    #expect(PhraseSegmenter.phraseRanges(in: "Ünïcödé text — with dashes").isEmpty)
  }
}
