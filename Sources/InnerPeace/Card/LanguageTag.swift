/// The language a card's text is in, when its caller knows it: a BCP 47 tag of a language, an
/// optional script and an optional region (`de`, `de-CH`, `zh-Hant`, `sr-Cyrl-RS`). Where the
/// text alone would be guessed otherwise, it chooses:
/// - the hyphenation patterns for its script (`de` hyphenates Latin text with German patterns;
///   a language without installed patterns leaves that script unhyphenated);
/// - the face of Han characters (`ja` Japanese, `ko` Korean, any other `zh` Simplified Chinese
///   forms) and the phrase model of Japanese and Chinese text (`ja`; `zh-Hant`, `zh-TW`, `zh-HK`
///   and `zh-MO` Traditional; other `zh` Simplified);
/// - Nastaliq for Arabic script in Urdu (`ur`).
///
/// Only the form is checked (2 or 3 letters, then 4 letters, then 2 letters or 3 digits, each
/// after a hyphen or underscore; at most 16 characters in all); a language innerpeace knows
/// nothing special about is accepted and changes nothing.
public struct LanguageTag: Sendable, Hashable, CustomStringConvertible {
  /// The language subtag, lower case (`de`).
  public let language: String
  /// The script subtag, title case (`Hant`), if given.
  public let script: String?
  /// The region subtag, upper case (`CH`, `419`), if given.
  public let region: String?

  /// The tag, normalised: `zh_hant_tw` is `zh-Hant-TW`.
  public var description: String { ([language] + [script, region].compactMap { $0 }).joined(separator: "-") }

  /// `nil` when `text` is not a language tag of the form described above.
  public init?(_ text: String) {
    guard !text.isEmpty, text.utf8.count <= 16 else { return nil }
    let parts = text.split(separator: "-", omittingEmptySubsequences: false).flatMap {
      $0.split(separator: "_", omittingEmptySubsequences: false)
    }
    func letters(_ part: Substring) -> Bool {
      part.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.isAlphabetic }
    }
    func digits(_ part: Substring) -> Bool {
      part.unicodeScalars.allSatisfy { $0.isASCII && $0.properties.numericType != nil }
    }
    guard let first = parts.first, (2...3).contains(first.count), letters(first) else { return nil }
    var script: String? = nil
    var region: String? = nil
    var index = 1
    if index < parts.count, parts[index].count == 4, letters(parts[index]) {
      script = parts[index].prefix(1).uppercased() + parts[index].dropFirst().lowercased()
      index += 1
    }
    if index < parts.count,
      (parts[index].count == 2 && letters(parts[index])) || (parts[index].count == 3 && digits(parts[index]))
    {
      region = parts[index].uppercased()
      index += 1
    }
    guard index == parts.count else { return nil }
    self.language = first.lowercased()
    self.script = script
    self.region = region
  }

  /// Whether the tag asks for Traditional Chinese forms (`zh-Hant`, or `zh` in Taiwan, Hong Kong
  /// or Macao without a script).
  var isTraditionalChinese: Bool {
    language == "zh" && (script == "Hant" || (script == nil && ["TW", "HK", "MO"].contains(region ?? "")))
  }
}

extension LanguageTag: Codable {
  /// Decodes the tag's text, in the strict form ``init(_:)`` accepts: any other text is a
  /// `DecodingError`.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let tag = LanguageTag(text) else {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "'\(text)' is not a language tag")
    }
    self = tag
  }

  /// Encodes the normalised tag (``description``).
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}
