import ArgumentParser
import Foundation
import InnerPeace

#if canImport(Glibc)
  import Glibc
#endif

/// `innerpeace render`: one card to a file or stdout.
struct RenderCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "render",
    abstract: "Render one quote card.",
    usage: "innerpeace render --out <path> [<options>]",
    discussion: """
      With no choice given, a random quote and picture are picked. The same --seed and options \
      give the same bytes on the same machine. Presets: classic (2048x1536, the app's iPad card), \
      og (1200x630, the default), square (1080x1080), story (1080x1920), or any WxH from \
      \(Limits.minimumSide) to \(Limits.maximumSide) px a side.
      """,
  )

  @Option(
    name: [.short, .long], help: ArgumentHelp("Where to write the card; '-' writes to stdout.", valueName: "path"))
  var out: String

  @Option(
    parsing: .unconditional, help: ArgumentHelp("classic, og, square, story, or WxH. (default: og)", valueName: "name"),
    completion: Parse.presetCompletion, transform: Parse.preset)
  var preset: Preset?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Any canvas size, e.g. 1600x900 (instead of --preset).", valueName: "WxH"),
    transform: Parse.size)
  var size: CanvasSize?

  @Option(
    parsing: .unconditional, help: ArgumentHelp("The catalog quote to use (0-based index).", valueName: "index"),
    transform: Parse.wholeNumber)
  var quote: Int?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Your own quote text instead of a catalog quote (at most \(Limits.maximumTextCharacters) characters); "
        + "'-' reads it from stdin.",
      valueName: "text"))
  var text: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Read your own quote text from this file (UTF-8, the limit of --text; trailing line breaks dropped).",
      valueName: "path"),
    completion: .file())
  var textFile: String?

  @Option(parsing: .unconditional, help: ArgumentHelp("The author of --text or --text-file.", valueName: "name"))
  var author: String?

  @Option(
    parsing: .unconditional, help: ArgumentHelp("The catalog picture to use, by file name.", valueName: "name"))
  var picture: String?

  @OptionGroup var seed: SeedOptions

  @OptionGroup var catalog: CatalogOptions

  @OptionGroup var card: CardOptions

  @Flag(help: "Render only the text and its halo, on a transparent background (png, webp or avif).")
  var transparent = false

  @Flag(
    help: """
      Draw --text and --author as typed. By default their straight quotes, apostrophes, '--' and \
      '...' become typographic ones (“ ” ‘ ’, —, …); catalog quotes are always drawn as written.
      """)
  var straightQuotes = false

  @Flag(name: [.short, .long], help: "Describe the card on stderr: quote, picture, size and font size.")
  var verbose = false

  @Option(
    help: ArgumentHelp(
      "Also write what was set as JSON: size, lines, and per run script, language, font file, style, missing glyphs "
        + "and dotted circles; '-' writes it to stderr, after any warnings.",
      valueName: "path"))
  var report: String?

  /// The rules across options, checked before anything is read or written.
  func validate() throws {
    if preset != nil && size != nil { throw ValidationError("use either --preset or --size, not both") }
    if text != nil && textFile != nil { throw ValidationError("use either --text or --text-file, not both") }
    if quote != nil && text != nil { throw ValidationError("use either --quote or --text, not both") }
    if quote != nil && textFile != nil { throw ValidationError("use either --quote or --text-file, not both") }
    if author != nil && text == nil && textFile == nil {
      throw ValidationError("--author goes with --text or --text-file")
    }
    if textFile?.isEmpty == true { throw ValidationError("--text-file is empty") }
    if out == "-" && isatty(STDOUT_FILENO) != 0 {
      throw ValidationError("--out - would write the image to this terminal: redirect stdout or name a file")
    }
    do {
      try format.validate(transparent: transparent)
    } catch let error as InnerPeaceError {
      throw ValidationError(InnerPeaceCommand.wording(for: error))
    }
  }

  func run() throws {
    let request = try makeRequest()
    let output = try OutputTarget(path: out)
    // Checked with the image's path, before anything is rendered or written.
    var reportOutput: OutputTarget? = nil
    if let report, report != "-" { reportOutput = try OutputTarget(path: report, option: "--report") }
    if let reportOutput, reportOutput.isSameFile(as: output) {
      throw CommandLineError.usage("--report and --out name the same file '\(reportOutput.path)': give each its own")
    }
    // Only the photo the card draws is read and checked, when it is drawn.
    let catalog = try catalog.load(checking: .whenDrawn)
    // One card: the photo is read and decoded on a second core while the fonts load.
    let card = try CardRenderer.renderOne(request, catalog: catalog)
    try output.write(card.bytes)
    if let typeset = card.report, let reportOutput { try reportOutput.write(typeset.json) }
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
    // Last on stderr, after the warnings and the description.
    if report == "-", let typeset = card.report {
      StandardStreams.writeError(String(decoding: typeset.json, as: UTF8.self))
    }
  }

  /// The format asked for, else the one `--out`'s extension names, else PNG.
  var format: ImageFormat {
    get throws {
      if let format = card.format { return format }
      let ext = (out as NSString).pathExtension
      guard out != "-", !ext.isEmpty else { return .png }
      guard let inferred = try? ImageFormat(parsing: ext) else {
        throw ValidationError(
          "cannot tell the format from '.\(ext)': name the file .png, .jpg, .webp or .avif, or pass --format")
      }
      return inferred
    }
  }

  /// The custom text: `--text` as given (`-`: read from stdin), or the contents of `--text-file`.
  /// A quote that is just `-` comes from a file or stdin.
  func customText() throws(CommandLineError) -> String? {
    if let textFile { return try TextInput.read(textFile, option: "--text-file") }
    if text == "-" { return try TextInput.read("-", option: "--text") }
    return text
  }

  /// The options as a request.
  func makeRequest() throws -> CardRequest {
    let custom = try customText()
    let quoteChoice: QuoteChoice =
      if let quote { .index(quote) } else if let custom { .text(custom, author: author) } else { .random }
    return CardRequest(
      preset: size.map { .custom($0) } ?? preset ?? .og, quote: quoteChoice,
      picture: picture.map { .named($0) } ?? .random,
      seed: seed.value(), format: try format, showsAuthor: !card.noAuthor, alignment: card.align,
      transparent: transparent, typographicPunctuation: !straightQuotes, includesReport: report != nil,
      language: card.language)
  }
}
