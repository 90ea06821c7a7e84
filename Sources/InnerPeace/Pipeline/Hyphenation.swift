internal import CInnerPeace
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Dictionary hyphenation for long words in Latin, Greek and Cyrillic script, through libhyphen and
/// the TeX-derived patterns of Debian's `hyphen-*` packages (`/usr/share/hyphen/hyph_*.dic`).
///
/// - **Language**, one per script, from the text itself (``Languages/detect(in:)``): Latin text is
///   German, French, Spanish, Italian, Dutch, Portuguese, Polish or Hungarian where its letters
///   and common words say so (ä ö ü ß and "der", "und"...; é è ç and "le", "et"...), else
///   American English; Cyrillic is Ukrainian where it has і ї є ґ, else Russian; Greek is Greek.
/// - **Patterns at run time**: a language whose pattern file is not installed is not hyphenated
///   (nor guessed with another language's patterns); a machine with no `hyphen-*` package sets
///   every text as before, unhyphenated. The files found count in the content version
///   (``patternFiles``), so cards that differ between machines have different URLs.
/// - **Words**: only runs of six or more letters of one script, at least two letters before a
///   point and three after (the patterns' own minimums where larger). Words that look like code
///   or an address (holding `/ @ _ .`, a digit, or a lower-case letter followed by a capital) are
///   never hyphenated; they keep ``LineBreaker``'s inner breaks.
enum Hyphenation {
  /// The folders searched for pattern files, in order.
  static let directories = ["/usr/share/hyphen", "/usr/local/share/hyphen", "/opt/homebrew/share/hyphen"]

  /// The hyphen added at the end of a line that breaks a word (U+2010 HYPHEN, in the bundled font).
  static let hyphen: Unicode.Scalar = "\u{2010}"

  /// The shortest word (in letters) that is ever hyphenated.
  static let minimumWordLength = 6
  /// Letters kept before the first and after the last hyphen of a word, at least.
  static let minimumBefore = 2
  static let minimumAfter = 3

  /// The scripts hyphenated, each with its own dictionary.
  enum Script: Hashable { case latin, cyrillic, greek }

  /// A language's pattern file name stem (`hyph_<stem>.dic`).
  typealias Language = String

  /// The languages a text is hyphenated in, one per script (`nil`: that script is not).
  struct Languages: Equatable {
    var latin: Language?
    var cyrillic: Language?
    var greek: Language?

    func language(for script: Script) -> Language? {
      switch script {
      case .latin: latin
      case .cyrillic: cyrillic
      case .greek: greek
      }
    }

    /// Cues per Latin-script language: letters found only (or mostly) in it, and its most common
    /// short words. English has no letters of its own and wins ties.
    private static let latinCues: [(Language, letters: Set<Character>, words: Set<String>)] = [
      ("en_US", [], ["the", "and", "of", "to", "is", "in", "that", "it", "you", "be", "are", "with", "not", "for"]),
      (
        "de_DE", ["ä", "ö", "ü", "ß"],
        ["der", "die", "das", "und", "ist", "nicht", "ich", "ein", "eine", "mit", "sich", "auf", "für", "zu", "den"]
      ),
      (
        "fr", ["é", "è", "ê", "à", "ç", "œ", "ë", "î", "ô", "û", "ù"],
        [
          "le", "la", "les", "et", "est", "une", "des", "du", "que", "qui", "pas", "dans", "pour", "nous", "vous", "je",
          "il",
        ]
      ),
      (
        "es_ES", ["ñ", "¿", "¡", "á", "í", "ó", "ú"],
        ["el", "los", "las", "y", "es", "una", "por", "con", "para", "del", "se", "lo", "como"]
      ),
      ("it_IT", ["ì", "ò"], ["il", "di", "che", "è", "della", "per", "non", "sono", "gli", "una", "un", "nel"]),
      ("nl_NL", ["ĳ"], ["de", "het", "een", "en", "van", "niet", "dat", "ik", "zijn", "op", "wij"]),
      ("pt_PT", ["ã", "õ"], ["o", "os", "não", "uma", "do", "da", "em", "com", "para", "mais", "ao"]),
      ("pl_PL", ["ą", "ę", "ł", "ń", "ś", "ź", "ż"], ["i", "w", "nie", "się", "na", "jest", "że", "to", "jak"]),
      ("hu_HU", ["ő", "ű"], ["az", "és", "hogy", "nem", "egy", "van", "meg", "ez"]),
    ]

    /// The languages of `text`: each script's language whose patterns are installed. A language
    /// the caller `given` decides its own script: Latin for a language written in Latin letters
    /// (`de`, `fr`, any other), Cyrillic for `ru` and `uk`, Greek for `el`; that script is then
    /// hyphenated with its patterns, or not at all where they are not installed.
    static func detect(in text: String, given: LanguageTag? = nil) -> Languages {
      var detected = guess(in: text)
      guard let given else { return detected }
      let installed = { (stems: [Language]) in stems.first(where: Hyphenation.hasPatterns) }
      switch given.language {
      case "ru": detected.cyrillic = installed(["ru_RU"])
      case "uk": detected.cyrillic = installed(["uk_UA"])
      case "el": detected.greek = installed(["el_GR", "el"])
      default:
        let region = given.region.map { "\(given.language)_\($0)" }
        let cue = latinCues.first { $0.0 == given.language || $0.0.hasPrefix(given.language + "_") }
        detected.latin = installed([region, cue?.0, given.language].compactMap { $0 })
      }
      return detected
    }

    /// The languages of `text` guessed from its letters and words alone.
    private static func guess(in text: String) -> Languages {
      var scores = [Int](repeating: 0, count: latinCues.count)
      var hasCyrillic = false
      var isUkrainian = false
      var hasGreek = false
      for word in text.lowercased().split(whereSeparator: { !$0.isLetter }) {
        for (index, cue) in latinCues.enumerated() {
          if cue.words.contains(String(word)) { scores[index] += 1 }
          for letter in word where cue.letters.contains(letter) { scores[index] += 2 }
        }
        for scalar in word.unicodeScalars {
          switch script(of: scalar) {
          case .cyrillic?:
            hasCyrillic = true
            if "іїєґ".unicodeScalars.contains(scalar) { isUkrainian = true }
          case .greek?: hasGreek = true
          default: break
          }
        }
      }
      var best = 0
      for index in scores.indices where scores[index] > scores[best] { best = index }
      let latin = latinCues[best].0
      return Languages(
        latin: Hyphenation.hasPatterns(latin) ? latin : nil,
        cyrillic: hasCyrillic ? [isUkrainian ? "uk_UA" : "ru_RU"].first(where: Hyphenation.hasPatterns) : nil,
        greek: hasGreek ? ["el_GR", "el"].first(where: Hyphenation.hasPatterns) : nil)
    }
  }

  /// The script a letter is hyphenated in (`nil`: none of the three).
  static func script(of scalar: Unicode.Scalar) -> Script? {
    switch scalar.value {
    case 0x41...0x5A, 0x61...0x7A, 0xC0...0xD6, 0xD8...0xF6, 0xF8...0x24F, 0x1E00...0x1EFF: .latin
    case 0x0400...0x04FF, 0x0500...0x052F: .cyrillic
    case 0x0370...0x03FF, 0x1F00...0x1FFF: .greek
    default: nil
    }
  }

  // MARK: Words

  /// The positions in `scalars` before which a word may be broken with a hyphen: inside each
  /// run of letters of a word that is not code-like, where the language's patterns allow it.
  /// Sorted; empty when no language applies.
  static func points(in scalars: [Unicode.Scalar], languages: Languages) -> [Int] {
    var points: [Int] = []
    var start = 0
    let count = scalars.count
    while start < count {
      // A unit: the characters between white space.
      guard !scalars[start].properties.isWhitespace else {
        start += 1
        continue
      }
      var end = start
      while end < count && !scalars[end].properties.isWhitespace { end += 1 }
      if end - start >= minimumWordLength { points += unitPoints(scalars, start..<end, languages: languages) }
      start = end
    }
    return points
  }

  /// Whether a word (without its surrounding punctuation) looks like code, an address or a
  /// number: it holds `/ @ _ .`, a digit, or a lower-case letter followed by a capital.
  static func isCodeLike(_ word: ArraySlice<Unicode.Scalar>) -> Bool {
    var previousLower = false
    for scalar in word {
      if "/@_.:\\=?&#%".unicodeScalars.contains(scalar) || scalar.properties.numericType != nil { return true }
      if previousLower && scalar.properties.isUppercase { return true }
      previousLower = scalar.properties.isLowercase
    }
    return false
  }

  private static func isLetter(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.isAlphabetic || scalar.properties.generalCategory == .nonspacingMark
  }

  private static func unitPoints(
    _ scalars: [Unicode.Scalar], _ unit: Range<Int>, languages: Languages
  ) -> [Int] {
    // Without the punctuation around the word.
    var lower = unit.lowerBound
    var upper = unit.upperBound
    while lower < upper && !isLetter(scalars[lower]) { lower += 1 }
    while upper > lower && !isLetter(scalars[upper - 1]) { upper -= 1 }
    guard upper - lower >= minimumWordLength, !isCodeLike(scalars[lower..<upper]) else { return [] }
    // Each run of letters (a compound joined by a hyphen or an apostrophe is several).
    var points: [Int] = []
    var start = lower
    while start < upper {
      guard isLetter(scalars[start]) else {
        start += 1
        continue
      }
      var end = start
      while end < upper && isLetter(scalars[end]) { end += 1 }
      if end - start >= minimumWordLength, let script = script(of: scalars[start]),
        let language = languages.language(for: script),
        scalars[start..<end].allSatisfy({ Self.script(of: $0) == script || !$0.properties.isAlphabetic }),
        let dictionary = Dictionary.named(language)
      {
        points += dictionary.points(in: scalars[start..<end]).map { start + $0 }
      }
      start = end
    }
    return points
  }

  // MARK: Pattern files

  /// The pattern file for `language`, if one is installed.
  static func patternFile(_ language: Language) -> URL? {
    for directory in directories {
      let url = URL(fileURLWithPath: directory).appendingPathComponent("hyph_\(language).dic")
      if FileManager.default.isReadableFile(atPath: url.path) { return url.resolvingSymlinksInPath() }
    }
    return nil
  }

  static func hasPatterns(_ language: Language) -> Bool { Dictionary.named(language) != nil }

  /// Every language ``Languages/detect(in:)`` can choose.
  static let languages: [Language] = [
    "en_US", "de_DE", "fr", "es_ES", "it_IT", "nl_NL", "pt_PT", "pl_PL", "hu_HU", "ru_RU", "uk_UA", "el_GR", "el",
  ]

  /// The installed pattern files of every language the cards may be hyphenated in, by language
  /// (their bytes decide where words break, so they count in the content version).
  static var patternFiles: [(language: Language, file: URL)] {
    languages.compactMap { language in patternFile(language).map { (language, $0) } }
  }

  /// A loaded libhyphen dictionary, kept for the process's life (a handful at most).
  final class Dictionary: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<HyphenDict>
    /// The dictionary's character set (`UTF-8`, `ISO8859-1`, `KOI8-R`...).
    let characterSet: String
    private let minimumBefore: Int
    private let minimumAfter: Int

    private init?(file: URL) {
      guard let bytes = try? Data(contentsOf: file), let handle = Dictionary.load(Dictionary.patterns(bytes))
      else { return nil }
      self.handle = handle
      characterSet = withUnsafeBytes(of: handle.pointee.cset) { bytes in
        String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      minimumBefore = max(Hyphenation.minimumBefore, Int(handle.pointee.lhmin))
      minimumAfter = max(Hyphenation.minimumAfter, Int(handle.pointee.rhmin))
    }

    /// The patterns libhyphen is given for a pattern file: the file as it is, or, for a two-level
    /// file whose first level holds more than ``largestFirstLevel`` patterns (German's list of
    /// 69,000 words with their compound boundaries), its character set line and its second level
    /// only (the standard patterns, which find those boundaries too, as a rule). libhyphen 2.8.8
    /// takes about 3 s of CPU to load German's first level, and milliseconds for any other file
    /// here; a card must not pay that.
    static func patterns(_ file: Data) -> Data {
      guard let found = file.range(of: Data("\nNEXTLEVEL".utf8)) else { return file }
      let bytes = [UInt8](file)
      let at = found.lowerBound - file.startIndex
      guard let firstLineEnd = bytes.firstIndex(of: 0x0A), firstLineEnd < at else { return file }
      var patterns = 0
      for line in bytes[(firstLineEnd + 1)..<at].split(separator: 0x0A) {
        guard let first = line.first, first != UInt8(ascii: "#"), first != UInt8(ascii: "%") else { continue }
        patterns += 1
      }
      guard patterns > largestFirstLevel else { return file }
      let secondLevel = bytes[(at + 1)...].drop(while: { $0 != 0x0A })
      return Data(bytes[...firstLineEnd] + secondLevel.dropFirst())
    }

    /// The most patterns a first level may hold and be loaded.
    static let largestFirstLevel = 10_000

    /// Loads patterns from memory; `nil` when libhyphen cannot read them.
    private static func load(_ patterns: Data) -> UnsafeMutablePointer<HyphenDict>? {
      var bytes = [UInt8](patterns)
      guard !bytes.isEmpty else { return nil }
      return bytes.withUnsafeMutableBytes { buffer in
        guard let stream = fmemopen(buffer.baseAddress, buffer.count, "r") else { return nil }
        defer { fclose(stream) }
        return hnj_hyphen_load_file(stream)
      }
    }

    private static let loaded = Locked<[Language: Dictionary?]>([:])

    /// The dictionary for `language`, loaded on first use; `nil` when its patterns are not
    /// installed or cannot be read.
    static func named(_ language: Language) -> Dictionary? {
      loaded.withLock { loaded in
        if let known = loaded[language] { return known }
        let dictionary = patternFile(language).flatMap { Dictionary(file: $0) }
        loaded[language] = .some(dictionary)
        return dictionary
      }
    }

    private var isUTF8: Bool { characterSet.uppercased() == "UTF-8" }

    /// Positions inside `word` (0 is its first letter) before which a hyphenated break may go.
    /// The word is matched in lower case; standard points only (no spelling changes).
    func points(in word: ArraySlice<Unicode.Scalar>) -> [Int] {
      // Lower case, one scalar for one (a letter whose lower case is longer is not matched).
      guard word.count >= 2 else { return [] }
      var lowered: [Unicode.Scalar] = []
      lowered.reserveCapacity(word.count)
      for scalar in word {
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        guard lower.count == 1, let first = lower.first else { return [] }
        lowered.append(first)
      }
      guard let bytes = encode(lowered), isUTF8 || bytes.count == lowered.count else { return [] }
      var hyphens = [CChar](repeating: 0, count: bytes.count + 5)
      var replacements: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = nil
      var positions: UnsafeMutablePointer<Int32>? = nil
      var cuts: UnsafeMutablePointer<Int32>? = nil
      let status = bytes.withUnsafeBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { word in
          hnj_hyphen_hyphenate3(
            handle, word.baseAddress, Int32(word.count), &hyphens, nil, &replacements, &positions, &cuts,
            Int32(minimumBefore), Int32(minimumAfter), 2, 2)
        }
      }
      defer {
        // libhyphen moves the replacements of a UTF-8 word to its characters' indexes.
        if let replacements {
          for index in 0..<lowered.count { free(replacements[index]) }
          free(replacements)
        }
        free(positions)
        free(cuts)
      }
      guard status == 0 else { return [] }
      // libhyphen gives one digit per character (per byte for 8-bit sets; UTF-8 sets are
      // normalised to characters): odd means a hyphen may follow it.
      var points: [Int] = []
      for index in 0..<(lowered.count - 1) where hyphens[index] & 1 == 1 {
        if let replacements, replacements[index] != nil { continue }  // non-standard: skipped
        let point = index + 1
        if point >= minimumBefore && lowered.count - point >= minimumAfter { points.append(point) }
      }
      return points
    }

    /// The word in the dictionary's character set; `nil` when it has no such characters.
    private func encode(_ word: [Unicode.Scalar]) -> [UInt8]? {
      var text = String.UnicodeScalarView()
      text.append(contentsOf: word)
      let utf8 = Array(String(text).utf8)
      if isUTF8 { return utf8 }
      guard let converter = iconv_open(characterSet, "UTF-8"), Int(bitPattern: converter) != -1 else { return nil }
      defer { iconv_close(converter) }
      var input = utf8.map { CChar(bitPattern: $0) }
      var output = [CChar](repeating: 0, count: utf8.count * 2 + 4)
      let written: Int? = input.withUnsafeMutableBufferPointer { inBuffer in
        output.withUnsafeMutableBufferPointer { outBuffer in
          var inPointer: UnsafeMutablePointer<CChar>? = inBuffer.baseAddress
          var inLeft = inBuffer.count
          var outPointer: UnsafeMutablePointer<CChar>? = outBuffer.baseAddress
          var outLeft = outBuffer.count
          guard iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft) != -1, inLeft == 0 else { return nil }
          return outBuffer.count - outLeft
        }
      }
      guard let written else { return nil }
      return output.prefix(written).map { UInt8(bitPattern: $0) }
    }
  }
}
