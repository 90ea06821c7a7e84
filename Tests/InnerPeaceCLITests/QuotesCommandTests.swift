import Foundation
import InnerPeace
import Testing

/// `innerpeace quotes`, end to end through the built binary (stdout is a file unless noted).
@Suite("innerpeace quotes", .tags(.process, .binary))
struct QuotesCommandTests {
  static var catalog: Catalog { BatchFolderReader.bundledCatalog }

  init() throws {
    try #require(innerpeaceBinary != nil, "\(CLI.Missing().description)")
  }

  static func text(_ result: CommandResult) -> String { String(decoding: result.stdout, as: UTF8.self) }

  static func jsonArray(_ result: CommandResult) throws -> [[String: Any]] {
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout))
    return try #require(object as? [[String: Any]], "not a JSON array of objects: \(text(result))")
  }

  /// What `--search` should find: text or author containing the needle, any case or accents.
  static func expectedMatches(_ needle: String) -> [Int] {
    catalog.quotes.indices.filter { index in
      let quote = catalog.quotes[index]
      return [quote.text, quote.author].contains {
        $0.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
      }
    }
  }

  @Test func jsonListsTheWholeCatalog() throws {
    let result = try CLI.run(["quotes", "--json"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stderr.isEmpty)
    let entries = try Self.jsonArray(result)
    #expect(entries.count == Self.catalog.quotes.count)
    for (position, entry) in entries.enumerated() {
      #expect(Set(entry.keys) == ["index", "text", "author", "shareMessage"], "entry \(position): \(entry.keys)")
      let index = try #require(entry["index"] as? Int)
      #expect(index == position)
      let quote = Self.catalog.quotes[index]
      #expect(entry["text"] as? String == quote.text)
      #expect(entry["author"] as? String == quote.author)
      #expect(entry["shareMessage"] as? String == quote.shareMessage)
    }
  }

  @Test(arguments: ["muir", "MUIR", "Muir", "mUiR"])
  func searchIsCaseInsensitive(needle: String) throws {
    let expected = Self.expectedMatches("muir")
    #expect(!expected.isEmpty, "the catalog has no John Muir quote any more")
    let json = try CLI.run(["quotes", "--search", needle, "--json"])
    #expect(json.status == 0, "stderr: \(json.stderr)")
    let entries = try Self.jsonArray(json)
    #expect(entries.compactMap { $0["index"] as? Int } == expected)
    for entry in entries {
      let haystack = "\(entry["text"] as? String ?? "")\n\(entry["author"] as? String ?? "")".lowercased()
      #expect(haystack.contains("muir"), "\(entry) does not contain muir")
    }

    let plain = try CLI.run(["quotes", "--search", needle])
    #expect(plain.status == 0, "stderr: \(plain.stderr)")
    let indices = Self.text(plain).split(separator: "\n").compactMap {
      $0.split(separator: "\t").first.flatMap { Int($0) }
    }
    #expect(indices == expected)
  }

  @Test func searchIgnoresAccentsAndMatchesText() throws {
    // "Epictetus" written with accents and in capitals; and a word of a quote's text.
    let accents = try Self.jsonArray(try CLI.run(["quotes", "--search", "ÉPICTÈTUS", "--json"]))
    #expect(!accents.isEmpty)
    #expect(accents.allSatisfy { ($0["author"] as? String) == "Epictetus" }, "\(accents)")
    #expect(accents.compactMap { $0["index"] as? Int } == Self.expectedMatches("epictetus"))

    let word = try Self.jsonArray(try CLI.run(["quotes", "--search", "SUNSET", "--json"]))
    #expect(word.compactMap { $0["index"] as? Int } == Self.expectedMatches("sunset"))
    #expect(!word.isEmpty)
  }

  /// As grep: no match is exit status 1 and a line saying so; on stdout nothing, or with
  /// `--json` an empty array (still JSON for whatever reads it).
  @Test(arguments: [[], ["--json"]])
  func aSearchWithNoMatchExitsOne(_ options: [String]) throws {
    let result = try CLI.run(["quotes", "--search", "zzqqxx-no-such-quote"] + options)
    #expect(result.status == 1, "stderr: \(result.stderr)")
    #expect(Self.text(result) == (options.isEmpty ? "" : "[]\n"), "stdout: \(Self.text(result))")
    #expect(
      result.stderrLines == ["innerpeace: error: no quote matches 'zzqqxx-no-such-quote'"], "\(result.stderr)")
  }

  @Test func anEmptySearchIsAUsageError() throws {
    let result = try CLI.run(["quotes", "--search", "  "])
    #expect(result.status == 64, "stderr: \(result.stderr)")
    #expect(result.stderrLines.count == 1 && result.stderr.hasPrefix("innerpeace: error: "), "\(result.stderr)")
    #expect(result.stdout.isEmpty)
  }

  @Test func pipedOutputIsTabSeparated() throws {
    let result = try CLI.run(["quotes"])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let output = Self.text(result)
    #expect(output.hasSuffix("\n"))
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == Self.catalog.quotes.count)
    for (index, line) in lines.enumerated() {
      let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
      #expect(fields.count == 3, "line \(index) has \(fields.count) fields: \(line)")
      guard fields.count == 3 else { continue }
      let quote = Self.catalog.quotes[index]
      #expect(fields[0] == "\(index)")
      #expect(fields[1] == quote.author)
      #expect(fields[2] == quote.text.replacingOccurrences(of: "\n", with: " / "), "line \(index)")
    }
  }

  @Test(.enabled(if: ExternalTool.scriptAvailable, "needs util-linux script for a terminal"))
  func aTableOnATerminal() throws {
    let output = try ExternalTool.runOnTerminal(["quotes", "--search", "muir"])
    let lines = output.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n")
    let expected = Self.expectedMatches("muir")
    #expect(lines.count == expected.count + 1, "\(output)")
    let header = try #require(lines.first)
    #expect(header.hasPrefix("#") && header.contains("author") && header.hasSuffix("text"), "header: \(header)")
    #expect(!output.contains("\t"), "tabs in the table")
    for (line, index) in zip(lines.dropFirst(), expected) {
      #expect(line.trimmingCharacters(in: .whitespaces).hasPrefix("\(index)  John Muir  "), "\(line)")
      #expect(line.count <= 100, "a row wider than the terminal: \(line.count)")
    }
  }
}
