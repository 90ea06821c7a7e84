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
}
