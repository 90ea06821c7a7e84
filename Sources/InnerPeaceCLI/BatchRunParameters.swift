import Foundation

/// What a batch run was asked to make, recorded in its folder as JSON so that a later `--resume`
/// can refuse a folder whose cards were made with other options.
struct BatchRunParameters: Codable, Equatable, Sendable {
  var seed: UInt64
  /// The image format's name (``ImageFormat/rawValue``).
  var format: String
  /// Each preset's name, in the order given.
  var presets: [String]
  /// The text alignment's name (``TextAlignment/rawValue``).
  var alignment: String
  /// Whether the cards carry the `— Author` line.
  var showsAuthor: Bool
  /// The content version of the run's cards (``InnerPeace/ContentSources/version()``: the look,
  /// the quotes and their pictures, the photos' bytes, the fonts); absent from records of runs
  /// made before it was recorded, which a `--resume` cannot trust.
  var contentVersion: String?
  /// How many quotes the run covers.
  var count: Int
  /// The shard, `I/N` (`1/1` for a whole run).
  var shard: String
  /// The language given with `--lang` (``LanguageTag/description``), if any; absent from records
  /// of runs made before the option existed, which had none.
  var language: String?

  /// The record as written into the folder: sorted, indented JSON and a final line feed.
  func json() throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    return [UInt8](try encoder.encode(self)) + [0x0A]
  }

  /// A record read back, or `nil` if `data` is not one (such as a file of an older version).
  init?(json data: Data) {
    guard let decoded = try? JSONDecoder().decode(Self.self, from: data) else { return nil }
    self = decoded
  }

  init(
    seed: UInt64, format: String, presets: [String], alignment: String, showsAuthor: Bool, contentVersion: String,
    count: Int, shard: String, language: String? = nil
  ) {
    self.seed = seed
    self.format = format
    self.presets = presets
    self.alignment = alignment
    self.showsAuthor = showsAuthor
    self.contentVersion = contentVersion
    self.count = count
    self.shard = shard
    self.language = language
  }

  /// What decides a card's bytes (seed, format, presets, alignment, author, language, content
  /// version) where `earlier` differs from this, each as "name: earlier value there, this value
  /// now". Count and shard only choose which cards, so they may differ.
  func cardDefiningDifferences(from earlier: BatchRunParameters) -> [String] {
    var differences: [String] = []
    func compare(_ name: String, _ there: String, _ now: String) {
      if there != now { differences.append("\(name): \(there) there, \(now) now") }
    }
    compare("seed", String(earlier.seed), String(seed))
    compare("format", earlier.format, format)
    compare("presets", earlier.presets.joined(separator: ","), presets.joined(separator: ","))
    compare("align", earlier.alignment, alignment)
    compare("lang", earlier.language ?? "guessed", language ?? "guessed")
    compare("author line", earlier.showsAuthor ? "shown" : "left out", showsAuthor ? "shown" : "left out")
    if earlier.contentVersion != contentVersion {
      differences.append(
        "content version: \(earlier.contentVersion ?? "none") there, \(contentVersion ?? "none") now "
          + "(the look, fonts, quotes or photos have changed)")
    }
    return differences
  }
}
