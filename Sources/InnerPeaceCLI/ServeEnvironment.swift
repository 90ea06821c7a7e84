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
      } else {
        additions.append(([flag, value], name, value))
      }
    }
    return additions
  }

  /// `serve`'s command line with the environment's options added, parsed; an environment value
  /// the command refuses is reported with the variable's name.
  static func parse(commandLine: [String], environment: [String: String]) throws -> any ParsableCommand {
    let additions = try additions(commandLine: commandLine, environment: environment)
    let added = additions.flatMap(\.arguments)
    do {
      return try InnerPeaceCommand.parseAsRoot(["serve"] + commandLine + added)
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
}
