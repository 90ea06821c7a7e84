import ArgumentParser
import Foundation

/// `serve`'s options from the environment, for containers: every option and flag `--some-name`
/// can come from `INNERPEACE_SOME_NAME`, and `PORT` and `LOG_LEVEL`, which platforms set, stand
/// for `--port` and `--log-level` when neither the flag nor its `INNERPEACE_` variable is given.
/// The command line wins over the environment. The options are read from the command's own
/// definition (ArgumentParser's tool description), so a new option has its variable at once.
enum ServeEnvironment {
  /// One `serve` option: its long name and whether it is a flag (no value).
  struct Option: Equatable {
    let name: String
    let isFlag: Bool
  }

  /// Every option and flag of `serve`, from ArgumentParser's description of the command.
  static let options: [Option] = {
    guard let data = ServeCommand._dumpHelp().data(using: .utf8),
      let root = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let command = root["command"] as? [String: Any],
      let arguments = command["arguments"] as? [[String: Any]]
    else { return [] }
    return arguments.compactMap { argument in
      guard let kind = argument["kind"] as? String, kind == "option" || kind == "flag",
        let names = argument["names"] as? [[String: Any]],
        let long = names.first(where: { $0["kind"] as? String == "long" })?["name"] as? String,
        long != "help", long != "version"
      else { return nil }
      return Option(name: long, isFlag: kind == "flag")
    }
  }()

  /// The variable that may hold `--name`.
  static func variable(for name: String) -> String {
    "INNERPEACE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
  }

  /// Repeatable options whose variable holds a comma-separated list, each item one use of the option.
  static let listOptions: Set = ["signing-key-file", "cors-origin"]

  /// Variables that stand for an option when its own variable is not set.
  static let aliases = ["port": "PORT", "log-level": "LOG_LEVEL"]

  /// The arguments the environment adds to `commandLine` (the arguments after `serve`), each
  /// with the variable it came from.
  /// - Throws: ``CommandLineError`` for a flag's variable that is not a boolean.
  static func additions(commandLine: [String], environment: [String: String]) throws -> [(
    arguments: [String], variable: String, value: String
  )] {
    var additions: [(arguments: [String], variable: String, value: String)] = []
    for option in options {
      let flag = "--" + option.name
      guard !commandLine.contains(where: { $0 == flag || $0.hasPrefix(flag + "=") }) else { continue }
      var name = variable(for: option.name)
      var value = environment[name]
      if value == nil, let alias = aliases[option.name], let aliased = environment[alias] {
        name = alias
        value = aliased
      }
      guard let value else { continue }
      if option.isFlag {
        switch value.lowercased() {
        case "true", "1", "yes", "on": additions.append(([flag], name, value))
        case "false", "0", "no", "off", "": break
        default: throw CommandLineError.usage("\(name)=\(value): \(flag) is a switch; use true or false")
        }
      } else if listOptions.contains(option.name) {
        let items = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if !items.isEmpty { additions.append((items.flatMap { [flag, $0] }, name, value)) }
      } else {
        additions.append(([flag, value], name, value))
      }
    }
    return additions
  }

  /// Where the environment set an option: its long name, the variable and the value.
  struct Source: Equatable {
    let option: String
    let variable: String
    let value: String
  }

  /// `serve`'s command line with the environment's options added, parsed, and the options the
  /// environment set; an environment value the command refuses is reported with the variable's
  /// name.
  static func parse(
    commandLine: [String], environment: [String: String]
  ) throws -> (command: any ParsableCommand, sources: [Source]) {
    let additions = try additions(commandLine: commandLine, environment: environment)
    let added = additions.flatMap(\.arguments)
    let sources = additions.map {
      Source(option: String($0.arguments[0].dropFirst(2)), variable: $0.variable, value: $0.value)
    }
    do {
      return (try InnerPeaceCommand.parseAsRoot(["serve"] + commandLine + added), sources)
    } catch {
      // Which variable? The first whose value, alone, makes the command line fail.
      if (try? InnerPeaceCommand.parseAsRoot(["serve"] + commandLine)) != nil {
        for addition in additions
        where (try? InnerPeaceCommand.parseAsRoot(["serve"] + commandLine + addition.arguments)) == nil {
          throw CommandLineError.usage(
            "\(addition.variable)=\(addition.value): not a valid value for --\(addition.arguments[0].dropFirst(2))")
        }
      }
      throw error
    }
  }

  /// `error` with the variables that set the options it names, so a value refused at start-up
  /// (out of range, unknown zone, unreadable key file) is traced to the environment:
  /// `INNERPEACE_PORT=70000: --port 70000 is not a port (0 to 65535)`.
  static func attributed(_ error: CommandLineError, sources: [Source]) -> CommandLineError {
    let named = sources.filter { mentions(error.description, option: $0.option) }
    guard !named.isEmpty else { return error }
    let prefix = named.map { "\($0.variable)=\($0.value)" }.joined(separator: ", ")
    return CommandLineError(description: prefix + ": " + error.description, exitCode: error.exitCode)
  }

  /// Whether `message` names `--option` (not merely a longer option that ends with its name).
  static func mentions(_ message: String, option: String) -> Bool {
    let flag = "--" + option
    var rest = Substring(message)
    while let range = rest.range(of: flag) {
      let before = range.lowerBound == message.startIndex ? nil : message[message.index(before: range.lowerBound)]
      let after = range.upperBound == message.endIndex ? nil : message[range.upperBound]
      let isWordBefore = before.map { $0.isLetter || $0.isNumber || $0 == "-" } ?? false
      let isWordAfter = after.map { $0.isLetter || $0.isNumber || $0 == "-" } ?? false
      if !isWordBefore && !isWordAfter { return true }
      rest = message[range.upperBound...]
    }
    return false
  }
}
