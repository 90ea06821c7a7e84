import ArgumentParser
import Foundation
import InnerPeace

#if canImport(Glibc)
  import Glibc
#endif

/// `innerpeace quotes`: list or search the catalog.
struct QuotesCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "quotes",
    abstract: "List or search the catalog's quotes.",
    discussion: """
      A table (index, author, text) on a terminal; tab-separated lines when piped; JSON with \
      --json. Exit status 1 when --search matches no quote (with --json, after printing []).
      """
  )

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Only quotes whose text or author contains this (any case or accents).", valueName: "text"))
  var search: String?

  @Flag(help: "JSON: index, text, author and share message of each quote.")
  var json = false

  @OptionGroup var catalog: CatalogOptions

  func validate() throws {
    if let search, search.trimmingCharacters(in: .whitespaces).isEmpty {
      throw ValidationError("--search is empty")
    }
  }

  func run() throws {
    let catalog = try catalog.load()
    var matches = Array(catalog.quotes.enumerated())
    if let search {
      let needle = search.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
      matches = matches.filter { _, quote in
        (quote.text + "\n" + quote.author).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
          .contains(needle)
      }
    }
    // As grep does: no match is exit status 1 with a line saying so; the JSON is then `[]` (still
    // JSON for whatever reads it), the text nothing.
    let noMatch = search.map { search in
      CommandLineError(description: "no quote matches '\(search)'", exitCode: 1)
    }
    if json {
      let objects: [[String: Any]] = matches.map { index, quote in
        ["index": index, "text": quote.text, "author": quote.author, "shareMessage": quote.shareMessage]
      }
      // Foundation pretty-prints an empty array over two lines.
      let data = try JSONSerialization.data(
        withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
      try StandardStreams.writeOutput(objects.isEmpty ? Array("[]\n".utf8) : [UInt8](data) + [0x0A])
      if matches.isEmpty, let noMatch { throw noMatch }
      return
    }
    if matches.isEmpty, let noMatch { throw noMatch }
    var output = ""
    if isatty(STDOUT_FILENO) != 0 {
      output = table(matches)
    } else {
      for (index, quote) in matches {
        output += "\(index)\t\(quote.author)\t\(quote.text.replacingOccurrences(of: "\n", with: " / "))\n"
      }
    }
    try StandardStreams.writeOutput(output)
  }

  /// Index, author and text in columns, the text cut to the terminal's width.
  private func table(_ rows: [(offset: Int, element: Quote)]) -> String {
    var size = winsize()
    let width = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0 && size.ws_col > 40 ? Int(size.ws_col) : 100
    let authorWidth = min(24, rows.map { $0.element.author.count }.max() ?? 6)
    let indexWidth = max(3, String(rows.last?.offset ?? 0).count)
    let textWidth = max(20, width - indexWidth - authorWidth - 4)
    func pad(_ text: String, _ count: Int) -> String {
      text.count >= count ? String(text.prefix(count)) : text + String(repeating: " ", count: count - text.count)
    }
    var output = pad("#", indexWidth) + "  " + pad("author", authorWidth) + "  text\n"
    for (index, quote) in rows {
      var text = quote.text.replacingOccurrences(of: "\n", with: " / ")
      if text.count > textWidth { text = String(text.prefix(textWidth - 1)) + "…" }
      let number = String(index)
      output +=
        String(repeating: " ", count: indexWidth - number.count) + number + "  " + pad(quote.author, authorWidth) + "  "
        + text + "\n"
    }
    return output
  }
}
