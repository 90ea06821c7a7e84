import Foundation
internal import InnerPeaceResources

/// Splits Japanese and Chinese text into phrases, the units a line may break between, in the
/// manner of BudouX (https://github.com/google/budoux): a small AdaBoost model scores each
/// position from the characters around it (one, two and three at a time), and a phrase starts
/// wherever the score is positive. The models are BudouX's own (`ja`, `zh-hans`, `zh-hant`,
/// Apache-2.0), shipped in `Resources/budoux/`; the scoring is the same as BudouX's Python
/// `Parser.parse`, so the phrases are the same.
///
/// Only runs of Han, kana and CJK punctuation are segmented: a text without them never loads a
/// model or scores a character. The phrases of a run (up to 256 characters) are remembered, for a
/// few hundred runs, so
/// the layouts of one text at several sizes segment it once.
struct PhraseSegmenter: Sendable {
  /// A BudouX model: the score of each feature (`UW1`...`TW4`) for each string of one to three
  /// characters.
  struct Model: Sendable {
    /// The features' scores, in BudouX's order: UW1...UW6, BW1...BW3, TW1...TW4.
    let features: [[String: Int]]
    /// Minus half the sum of every score.
    let baseScore: Double

    static let featureNames = [
      "UW1", "UW2", "UW3", "UW4", "UW5", "UW6", "BW1", "BW2", "BW3", "TW1", "TW2", "TW3", "TW4",
    ]

    /// Reads a model from BudouX's JSON (an object of features, each an object of strings to
    /// integer scores); `nil` when it is not one.
    init?(json: Data) {
      guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any] else { return nil }
      var features: [[String: Int]] = []
      var total = 0
      for name in Self.featureNames {
        var scores: [String: Int] = [:]
        if let group = object[name] as? [String: Any] {
          for (key, value) in group {
            guard let number = value as? NSNumber else { return nil }
            scores[key] = number.intValue
          }
        }
        features.append(scores)
      }
      for (_, group) in object {
        guard let group = group as? [String: Any] else { return nil }
        for value in group.values { total += (value as? NSNumber)?.intValue ?? 0 }
      }
      self.features = features
      baseScore = -Double(total) * 0.5
    }
  }

  /// The models BudouX publishes.
  enum Language: String, Sendable, CaseIterable {
    case japanese = "ja"
    case simplifiedChinese = "zh-hans"
    case traditionalChinese = "zh-hant"

    /// The model a caller's language asks for (`nil`: none of these; guess from the text).
    init?(tag: LanguageTag) {
      switch tag.language {
      case "ja": self = .japanese
      case "zh": self = tag.isTraditionalChinese ? .traditionalChinese : .simplifiedChinese
      default: return nil
      }
    }
  }

  let model: Model

  init(model: Model) { self.model = model }

  /// The phrases of `text`, as BudouX's `Parser.parse` gives them: every character in one
  /// phrase, in order.
  func phrases(_ text: String) -> [String] {
    let scalars = Array(text.unicodeScalars)
    return phraseLengths(scalars).reduce(into: ([String](), 0)) { state, length in
      var phrase = String.UnicodeScalarView()
      phrase.append(contentsOf: scalars[state.1..<(state.1 + length)])
      state.0.append(String(phrase))
      state.1 += length
    }.0
  }

  /// The length in characters (scalars) of each phrase of `scalars`.
  func phraseLengths(_ scalars: [Unicode.Scalar]) -> [Int] {
    guard !scalars.isEmpty else { return [] }
    let count = scalars.count
    func slice(_ from: Int, _ to: Int) -> String {
      var view = String.UnicodeScalarView()
      view.append(contentsOf: scalars[from..<to])
      return String(view)
    }
    let f = model.features
    var lengths: [Int] = [1]
    for i in 1..<count {
      var score = model.baseScore
      func add(_ feature: Int, _ from: Int, _ to: Int) { score += Double(f[feature][slice(from, to)] ?? 0) }
      if i > 2 { add(0, i - 3, i - 2) }
      if i > 1 { add(1, i - 2, i - 1) }
      add(2, i - 1, i)
      add(3, i, i + 1)
      if i + 1 < count { add(4, i + 1, i + 2) }
      if i + 2 < count { add(5, i + 2, i + 3) }
      if i > 1 { add(6, i - 2, i) }
      add(7, i - 1, i + 1)
      if i + 1 < count { add(8, i, i + 2) }
      if i > 2 { add(9, i - 3, i) }
      if i > 1 { add(10, i - 2, i + 1) }
      if i + 1 < count { add(11, i - 1, i + 2) }
      if i + 2 < count { add(12, i, i + 3) }
      if score > 0 { lengths.append(1) } else { lengths[lengths.count - 1] += 1 }
    }
    return lengths
  }

  // MARK: The bundled models

  /// The bundled model for `language`, read once; `nil` when its file cannot be found or read
  /// (then texts are broken by Pango's own rules, between any two ideographs).
  static func bundled(_ language: Language) -> PhraseSegmenter? {
    bundledModels.withLock { models in
      if let known = models[language] { return known.map(PhraseSegmenter.init(model:)) }
      let model = BundledResources.resourceFile(named: "budoux/\(language.rawValue).json")
        .flatMap { try? Data(contentsOf: $0) }
        .flatMap(Model.init(json:))
      models[language] = .some(model)
      return model.map(PhraseSegmenter.init(model:))
    }
  }

  private static let bundledModels = Locked<[Language: Model?]>([:])

  /// Remembered phrase lengths per run and model, so a text laid out at several sizes (and again
  /// with its chosen line breaks) is segmented once; cleared when it holds ``cacheLimit`` runs.
  private static let remembered = Locked<[RunKey: [Int]]>([:])
  private static let cacheLimit = 512
  private static let longestRemembered = 256

  private struct RunKey: Hashable {
    let language: Language
    let run: [Unicode.Scalar]
  }

  /// The phrase lengths of a run of CJK text, in `language`'s bundled model; `nil` without one.
  static func phraseLengths(of run: [Unicode.Scalar], in language: Language) -> [Int]? {
    guard let segmenter = bundled(language) else { return nil }
    // Runs longer than a few lines' worth are segmented again rather than kept (bounded memory).
    guard run.count <= longestRemembered else { return segmenter.phraseLengths(run) }
    let key = RunKey(language: language, run: run)
    if let known = remembered.withLock({ $0[key] }) { return known }
    let lengths = segmenter.phraseLengths(run)
    remembered.withLock { cache in
      if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
      cache[key] = lengths
    }
    return lengths
  }

  // MARK: Which model

  /// Characters written only in Traditional Chinese, and their Simplified forms (common ones).
  private static let traditionalOnly: Set<Unicode.Scalar> = Set(
    "們這個來時會說學國為與對開過還無見長問題點經發現當實體樣麼歲愛氣將從關電車門書買賣聽讀寫話語幾錢後裡華東讓認識風雲飛鳥龍馬魚"
      .unicodeScalars)
  private static let simplifiedOnly: Set<Unicode.Scalar> = Set(
    "们这个来时会说学国为与对开过还无见长问题点经发现当实体样么岁爱气将从关电车门书买卖听读写话语几钱后里华东让认识风云飞鸟龙马鱼"
      .unicodeScalars)

  /// The model for a text: Japanese when it holds kana, Traditional Chinese when it holds more
  /// characters written only in Traditional than only in Simplified Chinese, else Simplified.
  static func language(of scalars: some Sequence<Unicode.Scalar>) -> Language {
    var traditional = 0
    var simplified = 0
    for scalar in scalars {
      if isKana(scalar) { return .japanese }
      if traditionalOnly.contains(scalar) { traditional += 1 }
      if simplifiedOnly.contains(scalar) { simplified += 1 }
    }
    return traditional > simplified ? .traditionalChinese : .simplifiedChinese
  }

  static func isKana(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0x1B000...0x1B16F: true
    default: false
    }
  }

  /// Whether a character belongs to a run the segmenter reads: Han, kana, and CJK punctuation
  /// and full-width forms (Hangul is not: Korean breaks at spaces).
  static func isSegmented(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x3040...0x30FF, 0x31F0...0x31FF, 0xFF66...0xFF9F, 0x1B000...0x1B16F: true
    case 0x2E80...0x2FDF, 0x3000...0x303F, 0x3190...0x31EF, 0x3200...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
      0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF65, 0x20000...0x3FFFF:
      scalar.value != 0x3000  // an ideographic space separates runs
    default: false
    }
  }

  /// The longest phrase kept whole: a longer one (a run of one repeated character, which the
  /// models never split) may break inside by Pango's rules, so it cannot make a text unsettable.
  static let maximumPhraseLength = 16

  /// The phrases of every CJK run in `text` that hold two to ``maximumPhraseLength`` characters,
  /// as UTF-8 byte ranges (end excluded): a line may break between phrases, never inside one. A
  /// text with no Han or kana costs one scan and nothing else.
  static func phraseRanges(in text: String, language given: LanguageTag? = nil) -> [Range<Int>] {
    var runs: [(start: Int, scalars: [Unicode.Scalar], widths: [Int])] = []
    var current: (start: Int, scalars: [Unicode.Scalar], widths: [Int])? = nil
    var offset = 0
    var all: [Unicode.Scalar] = []
    for scalar in text.unicodeScalars {
      let width = UTF8.width(scalar)
      if isSegmented(scalar) {
        if current == nil { current = (offset, [], []) }
        current!.scalars.append(scalar)
        current!.widths.append(width)
        all.append(scalar)
      } else if let run = current {
        runs.append(run)
        current = nil
      }
      offset += width
    }
    if let run = current { runs.append(run) }
    guard !runs.isEmpty else { return [] }
    let language = given.flatMap(Language.init(tag:)) ?? language(of: all)
    var ranges: [Range<Int>] = []
    for run in runs where run.scalars.count > 1 {
      guard let lengths = phraseLengths(of: run.scalars, in: language) else { return [] }
      var start = run.start
      var index = 0
      for length in lengths {
        let bytes = run.widths[index..<(index + length)].reduce(0, +)
        if length > 1 && length <= maximumPhraseLength { ranges.append(start..<(start + bytes)) }
        start += bytes
        index += length
      }
    }
    return ranges
  }
}
