import Foundation
import Testing

/// `--help` as a person at an 80-column terminal reads it.
@Suite(.tags(.process, .binary)) struct HelpTests {
  /// Every command, the hidden worker included.
  static let commands: [[String]] = [
    [], ["render"], ["batch"], ["serve"], ["quotes"], ["schedule"], ["sign"], ["health"], ["render-worker"],
  ]

  @Test(arguments: commands)
  func helpFitsEightyColumnsAndSaysEachDefaultOnce(_ command: [String]) throws {
    let result = try CLI.run(command + ["--help"], environment: ["COLUMNS": "80"])
    #expect(result.status == 0, "\(command): \(result.stderr)")
    let help = String(decoding: result.stdout, as: UTF8.self)
    let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
    #expect(lines.count > 5, "\(command): \(help)")
    for line in lines {
      #expect(line.count <= 80, "\(command): \(line.count) columns: \(line)")
    }
    // An option's help: its first line starts "  -", the lines after it are indented further.
    var entries: [String] = []
    for line in lines {
      if line.hasPrefix("  -") {
        entries.append(String(line))
      } else if line.hasPrefix("    "), !entries.isEmpty {
        entries[entries.count - 1] += " " + line.trimmingCharacters(in: .whitespaces)
      }
    }
    #expect(!command.isEmpty && command != ["sign"] ? entries.count > 3 : true, "\(command): \(help)")
    for entry in entries {
      #expect(entry.components(separatedBy: "default:").count <= 2, "\(command): default twice: \(entry)")
    }
    // The overview and discussion are wrapped by the parser, not by hand: a line ends early only
    // where its paragraph does (an early break leaves a short line before a longer one).
    let prose = lines.prefix { !$0.hasPrefix("USAGE:") }
    for (line, next) in zip(prose, prose.dropFirst()) where !next.isEmpty && !line.isEmpty {
      let nextWord = next.split(separator: " ").first?.count ?? 0
      #expect(
        line.count + 1 + nextWord >= 80, "\(command): a hand-made line break before '\(next)' after '\(line)'")
    }
  }

  @Test func everyCommandIsChecked() throws {
    let help = String(decoding: try CLI.run(["--help"]).stdout, as: UTF8.self)
    let listed = help.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n").compactMap { line in
      let name = line.split(separator: " ").first.map(String.init) ?? ""
      let isCommand = line.hasPrefix("  ") && !line.hasPrefix("   ") && name.allSatisfy { $0.isLowercase || $0 == "-" }
      return isCommand ? name : nil
    }
    let checked = Set(Self.commands.compactMap(\.first))
    #expect(listed?.isEmpty == false)
    for name in listed ?? [] { #expect(checked.contains(name), "\(name) --help is not checked") }
  }
  /// The committed man page (docs/man/innerpeace.1, made by `scripts/man-page.sh` with
  /// swift-argument-parser's GenerateManual plugin) names every subcommand and every option the
  /// binary has now: an option added without regenerating the page fails here, in the fast loop
  /// (`scripts/man-page.sh --check`, in the full test command, compares the whole page).
  @Test func theManPageNamesEveryOption() throws {
    let page = try String(contentsOf: packageRoot.appendingPathComponent("docs/man/innerpeace.1"), encoding: .utf8)
    let items = page.split(separator: "\n").filter { $0.hasPrefix(".It ") }
    let result = try CLI.run(["--experimental-dump-help"])
    #expect(result.status == 0, "\(result.stderr)")
    let dump = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    var missing: [String] = []
    func visit(_ command: [String: Any], path: String) {
      guard command["shouldDisplay"] as? Bool != false else { return }
      let name = command["commandName"] as? String ?? "?"
      if !path.isEmpty, !items.contains(".It Em \(name)") { missing.append("\(path) \(name)") }
      for argument in command["arguments"] as? [[String: Any]] ?? [] where argument["shouldDisplay"] as? Bool != false {
        for long in (argument["names"] as? [[String: String]] ?? []) where long["kind"] == "long" {
          let flag = "-\(long["name"] ?? "")"
          if !items.contains(where: { $0.contains("Fl \(flag)") || $0.contains(", \(flag)") }) {
            missing.append("\(path) \(name) -\(flag)")
          }
        }
      }
      for sub in command["subcommands"] as? [[String: Any]] ?? [] { visit(sub, path: path + " " + name) }
    }
    visit(try #require(dump["command"] as? [String: Any]), path: "")
    #expect(missing.isEmpty, "not in docs/man/innerpeace.1 (run bash scripts/man-page.sh): \(missing)")
  }
}
