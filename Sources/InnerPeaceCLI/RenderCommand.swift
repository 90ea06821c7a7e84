import ArgumentParser
import Foundation
import InnerPeace

/// `innerpeace render`: one card to a file or stdout.
struct RenderCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "render",
    abstract: "Render one quote card.",
    discussion: """
      With no choice given, a random quote and picture are picked. The same --seed and options
      give the same bytes on the same machine. Presets: classic (2048x1536, the app's iPad card),
      og (1200x630, the default), square (1080x1080), story (1080x1920), or any WxH from \
      \(Limits.minimumSide) to \(Limits.maximumSide) px a side.
      """
  )

  @Option(
    name: [.short, .long], help: ArgumentHelp("Where to write the card; '-' writes to stdout.", valueName: "path"))
  var out: String

  @Option(
    parsing: .unconditional, help: ArgumentHelp("classic, og, square, story, or WxH. (default: og)", valueName: "name"))
  var preset: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Any canvas size, e.g. 1600x900 (instead of --preset).", valueName: "WxH"))
  var size: String?

  @Option(
    parsing: .unconditional, help: ArgumentHelp("The catalog quote to use (0-based index).", valueName: "index"))
  var quote: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Your own quote text instead of a catalog quote (at most \(Limits.maximumTextCharacters) characters).",
      valueName: "text"))
  var text: String?

  @Option(
    parsing: .unconditional, help: ArgumentHelp("The author of --text.", valueName: "name"))
  var author: String?

  @Option(
    parsing: .unconditional, help: ArgumentHelp("The catalog picture to use, by file name.", valueName: "name"))
  var picture: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Seed for the random choices; the same seed gives the same card.", valueName: "n"))
  var seed: String?

  @Option(help: ArgumentHelp("A folder with your own quotes.json, pictures.json and photos.", valueName: "dir"))
  var catalog: String?

  @Option(help: ArgumentHelp("png, jpeg or webp. (default: from --out's extension, else png)", valueName: "format"))
  var format: String?

  @Flag(help: "Leave out the '— Author' line (the app's text-only card).")
  var noAuthor = false

  @Option(
    help: ArgumentHelp(
      "natural (left, or right for right-to-left scripts) or center. (default: natural)", valueName: "alignment"))
  var align: String?

  @Flag(help: "Render only the text and its halo, on a transparent background (png or webp).")
  var transparent = false

  @Flag(
    help: """
      Draw --text and --author as typed. By default their straight quotes, apostrophes, '--' and \
      '...' become typographic ones (“ ” ‘ ’, —, …); catalog quotes are always drawn as written.
      """)
  var straightQuotes = false

  @Flag(name: [.short, .long], help: "Describe the card on stderr: quote, picture, size and font size.")
  var verbose = false

  func run() throws {
    let request = try makeRequest()
    let output = try OutputTarget(path: out)
    let catalog = try RenderCommand.loadCatalog(catalog)
    let renderer = try CardRenderer(catalog: catalog, backgroundCacheBytes: 0)
    let card = try renderer.render(request)
    try output.write(card.bytes)
    if card.missingGlyphs > 0 {
      warn(
        "warning: \(card.missingGlyphs) glyph(s) of the text have no font installed that can draw them "
          + "and are drawn as boxes")
    }
    if card.truncated {
      warn("warning: the text does not fit even at \(card.fontSize) px and was shortened with an ellipsis")
    }
    if verbose {
      let quoteLabel =
        card.quoteIndex.map { "quote \($0)" }
        ?? "custom text \(card.shareMessage.split(separator: "\n").joined(separator: " / "))"
      warn(
        "\(out == "-" ? "stdout" : out): \(request.preset) \(card.size) \(card.format.rawValue), \(card.bytes.count) bytes, "
          + "\(quoteLabel), picture \(card.picture ?? "none"), \(card.fontSize) px, seed \(request.seed)")
    }
  }

  /// Turns the options into a request, checking each before any work is done.
  func makeRequest() throws -> CardRequest {
    if preset != nil && size != nil { throw CommandLineError.usage("use either --preset or --size, not both") }
    let chosenPreset: Preset
    if let size {
      chosenPreset = .custom(try CanvasSize(parsing: size))
    } else {
      chosenPreset = try Preset(parsing: preset ?? "og")
    }
    if quote != nil && text != nil { throw CommandLineError.usage("use either --quote or --text, not both") }
    if author != nil && text == nil { throw CommandLineError.usage("--author goes with --text") }
    let quoteChoice: QuoteChoice
    if let quote {
      guard let index = Int(quote.trimmingCharacters(in: .whitespaces)) else {
        throw CommandLineError.usage("--quote '\(quote)' is not a whole number")
      }
      quoteChoice = .index(index)
    } else if let text {
      quoteChoice = .text(text, author: author)
    } else {
      quoteChoice = .random
    }
    let chosenSeed: UInt64
    if let seed {
      guard let value = UInt64(seed) else {
        throw CommandLineError.usage("--seed '\(seed)' is not a whole number from 0 to \(UInt64.max)")
      }
      chosenSeed = value
    } else {
      var system = SystemRandomNumberGenerator()
      chosenSeed = system.next()
    }
    let chosenFormat: ImageFormat
    if let format {
      chosenFormat = try ImageFormat(parsing: format)
    } else {
      let ext = (out as NSString).pathExtension
      if out == "-" || ext.isEmpty {
        chosenFormat = .png
      } else {
        guard let inferred = try? ImageFormat(parsing: ext) else {
          throw CommandLineError.usage(
            "cannot tell the format from '.\(ext)': name the file .png, .jpg or .webp, or pass --format")
        }
        chosenFormat = inferred
      }
    }
    let alignment: TextAlignment
    switch align?.lowercased() {
    case nil, "natural": alignment = .natural
    case "center", "centre": alignment = .center
    case let other?: throw CommandLineError.usage("unknown alignment '\(other)': use natural or center")
    }
    if transparent && chosenFormat == .jpeg {
      throw InnerPeaceError.optionsConflict(reason: "JPEG has no alpha channel: use png or webp with --transparent")
    }
    return CardRequest(
      preset: chosenPreset, quote: quoteChoice, picture: picture.map { .named($0) } ?? .random, seed: chosenSeed,
      format: chosenFormat, showsAuthor: !noAuthor, alignment: alignment, transparent: transparent,
      typographicPunctuation: !straightQuotes)
  }

  /// The catalog in `folder`, or the bundled one.
  static func loadCatalog(_ folder: String?) throws -> Catalog {
    guard let folder else { return try Catalog.bundled() }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else {
      throw InnerPeaceError.catalogUnreadable(file: folder, reason: "no such folder")
    }
    return try Catalog(directory: URL(fileURLWithPath: folder, isDirectory: true))
  }
}

func warn(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}
