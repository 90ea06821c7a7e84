public import ArgumentParser
import Foundation
import InnerPeace
import InnerPeaceServer
import Logging

/// `--catalog`: the user's own quotes and photos instead of the bundled ones.
struct CatalogOptions: ParsableArguments {
  @Option(help: ArgumentHelp("A folder with your own quotes.json, pictures.json and photos.", valueName: "dir"))
  var catalog: String?

  /// The catalog in the folder, or the bundled one.
  /// - Parameter checking: when its photos are read and checked: all of them now (the default),
  ///   or each one as a card draws it (`render`, which draws one).
  /// - Throws: ``InnerPeaceError`` for a missing folder or a catalog that cannot be read.
  func load(checking: PictureChecking = .atLoad) throws(InnerPeaceError) -> Catalog {
    guard let catalog else { return try Catalog.bundled(checking: checking) }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: catalog, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw .catalogUnreadable(file: catalog, reason: "no such folder")
    }
    return try Catalog(directory: URL(fileURLWithPath: catalog, isDirectory: true), checking: checking)
  }
}

/// `--seed`: the random choices of `render`, `batch` and `schedule`, made repeatable.
struct SeedOptions: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Seed for the random choices; the same seed makes the same choices.", valueName: "n"),
    transform: Parse.seed)
  var seed: UInt64?

  /// The seed given, else `fallback`, else a random one.
  func value(fallback: UInt64? = nil) -> UInt64 {
    seed ?? fallback ?? UInt64.random(in: .min ... .max)
  }
}

/// How a card looks beyond its size: what `render` and `batch` share.
struct CardOptions: ParsableArguments {
  @Option(help: ArgumentHelp("The image format (default: png; render goes by --out's extension).", valueName: "format"))
  var format: ImageFormat?

  @Option(help: "How the lines sit: natural is left, or right for right-to-left scripts.")
  var align: TextAlignment = .natural

  @Flag(help: "Leave out the '— Author' line (the app's text-only card).")
  var noAuthor = false

  @Option(
    name: .customLong("lang"),
    help: ArgumentHelp(
      "The text's language as a BCP 47 tag (de, zh-Hant, ur): it picks the hyphenation patterns, the Han face and "
        + "phrase model, and Nastaliq for Urdu (default: guessed from the text).", valueName: "tag"))
  var language: LanguageTag?
}

/// Parsers for values whose rules live in the core, so that a refusal gives the core's reason.
enum Parse {
  /// `classic`, `og`, `square`, `story` or `WxH`.
  static func preset(_ text: String) throws(InnerPeaceError) -> Preset { try Preset(parsing: text) }
  /// One or more presets separated by commas.
  static func presets(_ text: String) throws(InnerPeaceError) -> [Preset] {
    try text.split(separator: ",", omittingEmptySubsequences: false).map { name throws(InnerPeaceError) in
      try Preset(parsing: name.trimmingCharacters(in: .whitespaces))
    }
  }
  /// `WxH` within the size limits.
  static func size(_ text: String) throws(InnerPeaceError) -> CanvasSize { try CanvasSize(parsing: text) }
  /// A ``InnerPeace/WholeNumber``, as the service reads its numbers: digits only, no sign, no
  /// leading zero (a number too large for `Int` is `Int.max`, out of any range).
  static func wholeNumber(_ text: String) throws(CommandLineError) -> Int {
    guard let number = WholeNumber(text) else { throw .usage(notWholeNumber(text)) }
    return number.value
  }
  /// A seed: a ``InnerPeace/WholeNumber`` from 0 to 2^64-1, as the service's `seed=`.
  static func seed(_ text: String) throws(CommandLineError) -> UInt64 {
    guard let seed = WholeNumber.exact(text, as: UInt64.self) else {
      throw .usage(notWholeNumber(text) + " from 0 to \(UInt64.max)")
    }
    return seed
  }
  private static func notWholeNumber(_ text: String) -> String {
    "'\(text)' is not a whole number (digits only, no sign, no leading zero)"
  }
  /// `I/N`.
  static func shard(_ text: String) throws(BatchPlanError) -> Shard { try Shard(parsing: text) }

  /// The names shells complete for a preset.
  static let presetCompletion = CompletionKind.list(Preset.named.map(\.description))
}

extension LanguageTag: ExpressibleByArgument {
  init?(argument: String) { self.init(argument) }
}

extension ImageFormat: ExpressibleByArgument {
  init?(argument: String) { try? self.init(parsing: argument) }
  static var allValueStrings: [String] { allCases.map(\.rawValue) }
}

extension TextAlignment: ExpressibleByArgument {
  init?(argument: String) {
    switch argument.lowercased() {
    case "natural": self = .natural
    case "center", "centre": self = .center
    default: return nil
    }
  }
}

extension TimeZone: @retroactive ExpressibleByArgument {
  /// An IANA name such as `Europe/Paris`.
  init?(argument: String) { self.init(identifier: argument) }
  var defaultValueDescription: String { identifier }
}

extension LogFormat: ExpressibleByArgument {
  init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}

extension Logger.Level: @retroactive ExpressibleByArgument {
  init?(argument: String) { self.init(rawValue: argument.lowercased()) }
}
